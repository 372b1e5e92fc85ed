//! How mitbench's text tables look, in one place, so that every table on
//! the terminal, and every Markdown one, reads alike.

use comfy_table::{CellAlignment, ContentArrangement, Row, Table, presets};

/// Where a table is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Terminal,
    Markdown,
}

/// A table with `header` in `style`, figures in `right_aligned` columns;
/// `width` says whether long cells wrap to the terminal (`Dynamic`) or keep
/// their width (`Disabled`, for tables of figures read down a column).
pub fn table(
    style: Style,
    width: ContentArrangement,
    header: impl Into<Row>,
    right_aligned: impl IntoIterator<Item = usize>,
) -> Table {
    let mut table = Table::new();
    table
        .load_style(match style {
            Style::Terminal => presets::UTF8_BORDERS_ONLY,
            Style::Markdown => presets::ASCII_MARKDOWN,
        })
        .set_content_arrangement(width)
        .set_header(header);
    for column in right_aligned {
        if let Some(c) = table.column_mut(column) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}
