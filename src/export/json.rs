//! The whole run document as pretty JSON: what `--json` writes.

use super::{ExportError, Exporter};
use crate::results::RunDocument;

pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn render(&self, doc: &RunDocument) -> Result<Vec<u8>, ExportError> {
        let mut bytes = serde_json::to_vec_pretty(doc)?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}
