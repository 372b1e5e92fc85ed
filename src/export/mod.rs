//! Renderings, one folder per document: a run ([`run`]: its terminal
//! tables, Markdown, HTML report, JSON, CSV and Prometheus metrics), a
//! comparison ([`compare`]), an attribution ([`attribute`]), tax's
//! estimate ([`tax`]) and a fleet ([`fleet`]); each with its terminal,
//! Markdown and HTML renderers, and the prose two renderers of one
//! document share written once beside them. Shared by all: numbers,
//! text tables and prose kept to a width, the page renderer and its
//! templates, the plots. Each reads its model and computes nothing: every
//! figure it shows was computed once when the model was made (hyperfine's
//! `Exporter` is the model). A terminal's width is passed in, never read
//! by a renderer.

pub mod attribute;
pub mod compare;
pub mod destination;
pub mod fleet;
pub mod inventory;
mod listing;
pub(crate) mod number;
mod page;
pub mod plan;
mod plots;
pub mod run;
pub mod tax;
pub mod terminal;
pub mod text_table;
pub mod timeline;

pub use listing::{render_history, render_listing};

/// How many of the figures tested a comparison or an attribution marked,
/// and how many of the marked are expected to be false at most: one
/// sentence for both.
pub(crate) fn false_discoveries(marked: usize, tested: usize, expected: f64, what: &str) -> String {
    format!(
        "{marked} of {tested} {what} marked; at most {expected:.1} of them expected to have moved \
         less than the threshold (false discovery rate {:.0}%)",
        crate::analysis::verdict::FALSE_DISCOVERY_RATE * 100.0
    )
}
pub use number::format_cost;
pub use run::openmetrics::{MAX_LABEL_CHARS, escape_label};
pub use run::{
    CsvExporter, HtmlExporter, JsonExporter, MarkdownExporter, OpenMetricsExporter, TableExporter,
};

use crate::store::results::RunDocument;
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

/// A run and its summary (the answer, the price list, the tolls), made
/// once per document and laid out by every exporter: an exporter computes
/// nothing of its own.
pub struct RunView<'d> {
    pub doc: &'d RunDocument,
    pub summary: crate::answer::summary::Answer,
    /// The run's machine over the history, where one holds it: the
    /// report's timeline.
    pub timeline: Option<crate::compare::MachineTimeline>,
}

impl<'d> RunView<'d> {
    pub fn of(doc: &'d RunDocument) -> RunView<'d> {
        RunView {
            doc,
            summary: crate::answer::summary::of(doc),
            timeline: None,
        }
    }

    /// The view with its machine's timeline.
    pub fn with_timeline(self, timeline: Option<crate::compare::MachineTimeline>) -> RunView<'d> {
        RunView { timeline, ..self }
    }
}

/// A rendering of a whole run.
pub trait Exporter {
    fn render(&self, run: &RunView) -> Result<Vec<u8>, ExportError>;
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("serialising JSON failed: {0}")]
    Json(#[from] serde_json::Error),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Renders `run` with `exporter` and writes it to `path` through `target`
/// (made before any measuring, so an unwritable place fails first; see
/// [`target`]).
pub fn write_to(
    exporter: &dyn Exporter,
    run: &RunView,
    target: destination::Destination,
    path: &Path,
) -> Result<(), ExportError> {
    target.write(&exporter.render(run)?, path)
}
