//! An attribution across boots: for a terminal or a review ([`text`]),
//! and as an HTML page ([`html`]).

pub mod html;
pub mod text;

pub use html::render as render_html;
pub use text::render;

use crate::attribute::Attribution;

/// How many of its figures the attribution marked, each column held to the
/// false discovery rate over its rows.
pub(crate) fn marked(a: &Attribution) -> String {
    let d = a.discoveries;
    crate::export::false_discoveries(d.marked, d.tested, d.false_expected, "figures")
}
