//! The whole run document as pretty JSON: what `--json` writes.

use crate::export::{ExportError, Exporter, RunView};
use crate::store::results::RunDocument;

pub struct JsonExporter;

/// The document with its summary first: what a reader wants is on top,
/// and a program reading it back as a run document skips it (the summary
/// is made from the records again wherever it is shown).
#[derive(serde::Serialize)]
struct WithSummary<'d> {
    summary: &'d crate::answer::summary::Answer,
    #[serde(flatten)]
    doc: &'d RunDocument,
}

impl Exporter for JsonExporter {
    fn render(&self, run: &RunView) -> Result<Vec<u8>, ExportError> {
        let with = WithSummary {
            summary: &run.summary,
            doc: run.doc,
        };
        let mut bytes = serde_json::to_vec_pretty(&with)?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}
