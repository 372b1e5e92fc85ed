//! Reads files relative to a root directory, so the inventory of a fixture
//! tree is gathered by exactly the code that reads the live machine.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Text shown for anything that could not be read or parsed.
pub const UNKNOWN: &str = "unknown";

/// Sysfs and procfs files are small; anything larger than this is not the
/// file we expect and is not read at all (cpuinfo of a few hundred CPUs
/// and a kernel's config are well under it).
pub const MAX_FILE_BYTES: u64 = 4 << 20;
/// A one-value file (a sysfs attribute, a sysctl, the command line): the
/// kernel serves at most one page of it, so more is not that file.
pub const MAX_VALUE_BYTES: u64 = 4096;

pub struct Root {
    path: PathBuf,
}

impl Root {
    pub fn new(path: impl Into<PathBuf>) -> Root {
        Root { path: path.into() }
    }

    /// Whether this root is the running system, so live-only checks
    /// (CPUID, syscalls, the kernel ring buffer) describe it too.
    pub fn is_live(&self) -> bool {
        self.path == Path::new("/")
    }

    pub fn display(&self) -> String {
        self.path.display().to_string()
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.path.join(relative.trim_start_matches('/'))
    }

    pub fn exists(&self, relative: &str) -> bool {
        self.path(relative).exists()
    }

    /// The file's bytes, or None when missing, unreadable or implausibly big.
    pub fn read_bytes(&self, relative: &str) -> Option<Vec<u8>> {
        self.read_at_most(relative, MAX_FILE_BYTES).ok()
    }

    /// At most `cap` bytes of the file; Err(true) when it holds more,
    /// Err(false) when it cannot be read. Never reads past `cap + 1`.
    fn read_at_most(&self, relative: &str, cap: u64) -> Result<Vec<u8>, bool> {
        let file = std::fs::File::open(self.path(relative)).map_err(|_| false)?;
        let mut bytes = Vec::new();
        file.take(cap + 1)
            .read_to_end(&mut bytes)
            .map_err(|_| false)?;
        if bytes.len() as u64 > cap {
            return Err(true);
        }
        Ok(bytes)
    }

    /// The file as text (lossy), or None.
    pub fn read(&self, relative: &str) -> Option<String> {
        self.read_bytes(relative)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// A one-value file's text trimmed; None when missing or empty, and
    /// "unreadable: larger than 4096 bytes" past [`MAX_VALUE_BYTES`].
    pub fn read_trimmed(&self, relative: &str) -> Option<String> {
        match self.read_at_most(relative, MAX_VALUE_BYTES) {
            Ok(bytes) => {
                Some(String::from_utf8_lossy(&bytes).trim().to_string()).filter(|s| !s.is_empty())
            }
            Err(true) => Some(format!("unreadable: larger than {MAX_VALUE_BYTES} bytes")),
            Err(false) => None,
        }
    }

    /// Entries of a directory with their trimmed contents, sorted by name.
    pub fn read_dir_files(&self, relative: &str) -> Vec<(String, String)> {
        let Ok(entries) = std::fs::read_dir(self.path(relative)) else {
            return Vec::new();
        };
        let mut files: Vec<(String, String)> = entries
            .filter_map(|entry| {
                let name = entry.ok()?.file_name().to_string_lossy().into_owned();
                let text = self
                    .read_trimmed(&format!("{relative}/{name}"))
                    .unwrap_or_else(|| UNKNOWN.into());
                Some((name, text))
            })
            .collect();
        files.sort();
        files
    }
}

pub fn or_unknown(value: Option<String>) -> String {
    value.unwrap_or_else(|| UNKNOWN.to_string())
}
