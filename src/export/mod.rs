//! Renderings of a run's results. Each exporter reads the results model
//! ([`crate::results`]) and computes nothing: every figure it shows was
//! computed once when the record was made (hyperfine's `Exporter` is the
//! model).

pub mod attribute;
mod attribute_html;
pub mod compare;
pub mod compare_html;
mod csv;
pub mod fleet;
mod html;
pub mod inventory;
mod json;
mod listing;
mod markdown;
mod number;
mod openmetrics;
mod phase_table;
pub mod plan;
mod plots;
pub mod summary;
pub mod table;
pub mod tax;
pub mod terminal;
pub mod text_table;

pub use csv::CsvExporter;
pub use html::HtmlExporter;
pub use json::JsonExporter;
pub use listing::{render_history, render_listing};
pub use markdown::MarkdownExporter;
pub use number::format_cost;
pub use openmetrics::{MAX_LABEL_CHARS, OpenMetricsExporter, escape_label};
pub use table::TableExporter;

use crate::results::RunDocument;
use std::io::Write;
use std::path::Path;

/// The files a run can be written to, as `--json`, `--html`,
/// `--export-csv`, `--export-markdown` and `--openmetrics` name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Json,
    Html,
    Csv,
    Markdown,
    /// The Prometheus text format node_exporter's textfile collector reads.
    #[value(name = "openmetrics")]
    OpenMetrics,
}

impl Format {
    pub fn exporter(self) -> &'static dyn Exporter {
        match self {
            Format::Json => &JsonExporter,
            Format::Html => &HtmlExporter,
            Format::Csv => &CsvExporter,
            Format::Markdown => &MarkdownExporter,
            Format::OpenMetrics => &OpenMetricsExporter,
        }
    }

    /// The option that asks for it, for messages.
    pub fn flag(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Html => "html",
            Format::Csv => "export-csv",
            Format::Markdown => "export-markdown",
            Format::OpenMetrics => "openmetrics",
        }
    }

    /// What the file holds, for "... written to FILE".
    pub fn what(self) -> &'static str {
        match self {
            Format::Json => "results",
            Format::Html => "report",
            Format::Csv => "CSV",
            Format::Markdown => "Markdown",
            Format::OpenMetrics => "metrics",
        }
    }
}

/// A rendering of a whole run.
pub trait Exporter {
    fn render(&self, doc: &RunDocument) -> Result<Vec<u8>, ExportError>;
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("serialising JSON failed: {0}")]
    Json(#[from] serde_json::Error),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Renders `doc` with `exporter` into a temporary file beside `path`
/// (created already, so an unwritable directory fails before any
/// measuring) and renames it into place: a reader sees the old file or the
/// whole new one, never half.
pub fn write_atomically(
    exporter: &dyn Exporter,
    doc: &RunDocument,
    temp: tempfile::NamedTempFile,
    path: &Path,
) -> Result<(), ExportError> {
    write_bytes_atomically(&exporter.render(doc)?, temp, path)
}

/// Writes `bytes` into `temp` and renames it onto `path`.
pub fn write_bytes_atomically(
    bytes: &[u8],
    temp: tempfile::NamedTempFile,
    path: &Path,
) -> Result<(), ExportError> {
    let mut file = temp;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}
