//! Where an output file goes, and writing it there so that every error
//! reaches the user.
//!
//! A regular file (or a name not there yet) is written through a temporary
//! sibling renamed onto it: a reader sees the old file or the whole new
//! one. A device, a pipe or a link (`/dev/stdout`, `/dev/full`, a FIFO) is
//! written in place instead: renaming onto it would have replaced the
//! device node or the link with a file of ours (as root, in /dev), and
//! reported "written" while the data never reached the device.

use super::ExportError;
use std::io::Write;
use std::path::Path;

pub enum Destination {
    /// A temporary file beside the target, renamed onto it once written.
    Atomic(tempfile::NamedTempFile),
    /// The target itself, opened for writing when the output is ready.
    InPlace,
}

impl Destination {
    /// The target for `path`, named by `--FLAG` in messages; a temporary
    /// sibling is made now, so an unwritable place fails before any work.
    pub fn of(path: &Path, flag: &str) -> Result<Destination, String> {
        if path.is_dir() {
            return Err(format!(
                "cannot write --{flag} {}: it is a directory",
                path.display()
            ));
        }
        let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        let special = std::fs::metadata(path).is_ok_and(|m| !m.is_file());
        if link || special {
            return Ok(Destination::InPlace);
        }
        let dir = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        tempfile::Builder::new()
            .prefix(".mitbench-")
            .suffix(&format!(".{flag}.tmp"))
            .tempfile_in(dir)
            .map(Destination::Atomic)
            .map_err(|e| {
                // tempfile appends ` at path "<its temporary file>"` to the
                // OS's reason (and keeps no errno to rebuild it from); the
                // user named the output, not that file.
                let text = e.to_string();
                let reason = text.split(" at path \"").next().unwrap_or(&text);
                format!("cannot write --{flag} {}: {reason}", path.display())
            })
    }

    /// The temporary file, where there is one (removed on Ctrl-C).
    pub fn temp_path(&self) -> Option<&Path> {
        match self {
            Destination::Atomic(temp) => Some(temp.path()),
            Destination::InPlace => None,
        }
    }

    /// Writes `bytes` to `path` through this target.
    pub fn write(self, bytes: &[u8], path: &Path) -> Result<(), ExportError> {
        match self {
            Destination::Atomic(mut temp) => {
                temp.write_all(bytes)?;
                temp.as_file().sync_all()?;
                temp.persist(path).map_err(|e| e.error)?;
            }
            Destination::InPlace => {
                let mut file = std::fs::OpenOptions::new()
                    .write(true)
                    .truncate(true)
                    .open(path)?;
                file.write_all(bytes)?;
                // A regular file behind a link reports a full disk only
                // here; a device or a pipe cannot be synced, and says so.
                match file.sync_all() {
                    Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
                    other => other?,
                }
            }
        }
        Ok(())
    }
}
