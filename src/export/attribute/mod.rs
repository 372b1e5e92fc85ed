//! An attribution across boots: for a terminal or a review ([`text`]),
//! and as an HTML page ([`html`]).

pub mod html;
pub mod text;

pub use html::render as render_html;
pub use text::render;
