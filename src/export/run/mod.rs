//! A run's renderings: its terminal tables, the one-screen summary, the
//! phase tables, Markdown, the HTML report, JSON, CSV and Prometheus
//! metrics.

mod csv;
mod html;
mod json;
mod markdown;
pub mod openmetrics;
mod phases;
pub mod summary;
pub mod terminal;

pub use csv::CsvExporter;
pub use html::HtmlExporter;
pub use json::JsonExporter;
pub use markdown::MarkdownExporter;
pub use openmetrics::OpenMetricsExporter;
pub use terminal::{AnswerAt, TableExporter};
