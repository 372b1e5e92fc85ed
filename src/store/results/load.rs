//! Reading a run document back: from a `--json` file or the history. A
//! document of another schema is refused with what it is, never guessed at.

use super::{READS_SCHEMAS, RunDocument, SCHEMA_VERSION, upgrade};
use serde_json::Value;
use std::io::Read;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{what} is not JSON: {detail}")]
    NotJson { what: String, detail: String },
    #[error(
        "{what} is a mitbench run of schema {found}; this mitbench reads schemas {first} to \
         {SCHEMA_VERSION} (run it again with this version to compare)",
        first = READS_SCHEMAS[0]
    )]
    OtherSchema { what: String, found: String },
    #[error(
        "{what} is not a mitbench run document of schemas {first} to {SCHEMA_VERSION}: {detail}",
        first = READS_SCHEMAS[0]
    )]
    Malformed { what: String, detail: String },
    #[error("{path} is larger than {MAX_DOCUMENT_BYTES} bytes: not a mitbench run")]
    TooLarge { path: String },
}

/// The largest run document read. A full default run writes about 15 MB;
/// one with many more rounds stays well under this.
pub const MAX_DOCUMENT_BYTES: u64 = 256 << 20;

/// Reads the run document in `text`; `what` names it in errors.
pub fn document_from_str(text: &str, what: &str) -> Result<RunDocument, LoadError> {
    // A document of this schema parses straight into its type; only one
    // that does not is read as JSON first, to say what it is (a fleet of a
    // hundred runs spent half its time building JSON trees that way).
    if let Ok(doc) = serde_json::from_str::<RunDocument>(text)
        && READS_SCHEMAS.contains(&doc.schema)
    {
        return Ok(as_this_schema(doc));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| LoadError::NotJson {
        what: what.to_string(),
        detail: e.to_string(),
    })?;
    match value.get("schema").and_then(Value::as_u64) {
        Some(found) if READS_SCHEMAS.iter().any(|&s| u64::from(s) == found) => {}
        Some(found) => {
            return Err(LoadError::OtherSchema {
                what: what.to_string(),
                found: found.to_string(),
            });
        }
        None if value.get("results").is_some() => {
            return Err(LoadError::OtherSchema {
                what: what.to_string(),
                found: "1 (no schema field)".to_string(),
            });
        }
        None => {
            return Err(LoadError::Malformed {
                what: what.to_string(),
                detail: "no \"schema\" field".to_string(),
            });
        }
    }
    let mut value = value;
    upgrade::to_this_schema(&mut value);
    serde_json::from_value(value)
        .map(as_this_schema)
        .map_err(|e| LoadError::Malformed {
            what: what.to_string(),
            detail: e.to_string(),
        })
}

/// A document read as one of this schema: its figure objects made from
/// its fields (a schema 3 document has none).
fn as_this_schema(mut doc: RunDocument) -> RunDocument {
    super::with_figures(&mut doc.results);
    doc.schema = SCHEMA_VERSION;
    doc
}

pub fn document_from_file(path: &Path) -> Result<RunDocument, LoadError> {
    let io = |source| LoadError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(MAX_DOCUMENT_BYTES + 1).read_to_string(&mut text))
        .map_err(io)?;
    if text.len() as u64 > MAX_DOCUMENT_BYTES {
        return Err(LoadError::TooLarge {
            path: path.display().to_string(),
        });
    }
    document_from_str(&text, &path.display().to_string())
}
