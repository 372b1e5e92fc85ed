//! Reads files relative to a root directory, so the inventory of a fixture
//! tree is gathered by exactly the code that reads the live machine.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Text shown for anything that could not be read or parsed.
pub const UNKNOWN: &str = "unknown";

/// Sysfs and procfs files are small; anything larger than this is not the
/// file we expect and is not read whole.
const MAX_FILE_BYTES: u64 = 4 << 20;

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
        let file = std::fs::File::open(self.path(relative)).ok()?;
        let mut bytes = Vec::new();
        file.take(MAX_FILE_BYTES).read_to_end(&mut bytes).ok()?;
        Some(bytes)
    }

    /// The file as text (lossy), or None.
    pub fn read(&self, relative: &str) -> Option<String> {
        self.read_bytes(relative)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// The file's text trimmed, or None when missing or empty.
    pub fn read_trimmed(&self, relative: &str) -> Option<String> {
        self.read(relative)
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
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
