//! How mitbench's text tables look, in one place, so that every table on
//! the terminal, and every Markdown one, reads alike.

use comfy_table::{CellAlignment, ContentArrangement, Row, Table, presets};

/// Columns a table and its text keep to where no terminal says: what a
/// pasted report, a log or a pager shows without scrolling.
pub const DEFAULT_WIDTH: usize = 100;

/// Where a table is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Terminal,
    Markdown,
}

/// Columns of the terminal stdout is, or [`DEFAULT_WIDTH`] where stdout
/// is a pipe or a file (or the terminal does not say).
pub fn terminal_width() -> usize {
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ writes one winsize into the struct it is given.
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    if ok && size.ws_col >= 40 {
        usize::from(size.ws_col)
    } else {
        DEFAULT_WIDTH
    }
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

/// `text` in lines of at most `width` columns, the first after `first`
/// and the rest indented by `indent`, broken at spaces.
pub fn wrap(first: &str, text: &str, indent: usize, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = first.to_string();
    let mut words_here = 0;
    for word in text.split_whitespace() {
        let space = usize::from(!line.is_empty() && !line.ends_with(' '));
        if words_here > 0 && line.chars().count() + space + word.chars().count() > width {
            lines.push(line);
            line = " ".repeat(indent);
            words_here = 0;
        }
        if !line.is_empty() && !line.ends_with(' ') {
            line.push(' ');
        }
        line.push_str(word);
        words_here += 1;
    }
    lines.push(line);
    lines
}

/// `text` wrapped as [`wrap`] does, each line onto `out`.
pub fn write_wrapped(out: &mut String, first: &str, text: &str, indent: usize, width: usize) {
    for line in wrap(first, text, indent, width) {
        out.push_str(&line);
        out.push('\n');
    }
}

/// `text` with its prose lines wrapped to `width` (a line's own indent
/// kept, its continuations indented by two more); table lines, already
/// laid out to the width, stay as they are.
pub fn wrap_prose(text: &str, width: usize) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let is_table = line.chars().next().is_some_and(|c| "│┌└╞├┆╭╰".contains(c));
        if is_table || line.chars().count() <= width {
            out.push_str(line);
            out.push('\n');
        } else {
            let text = line.trim_start();
            let indent = &line[..line.len() - text.len()];
            write_wrapped(&mut out, indent, text, indent.len() + 2, width);
        }
    }
    out
}

/// A table that keeps to `width` columns, wrapping long cells, or keeps
/// its natural width where `width` is None (`--wide`).
pub fn fit(table: &mut Table, width: Option<usize>) {
    if let Some(width) = width {
        table
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(u16::try_from(width).unwrap_or(u16::MAX));
    } else {
        table.set_content_arrangement(ContentArrangement::Disabled);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_lines_keep_to_the_width_and_indent() {
        let text = "one two three four five six seven eight nine ten eleven twelve";
        let lines = wrap("label:", text, 4, 20);
        assert!(lines.len() > 2, "{lines:?}");
        for l in &lines {
            assert!(l.chars().count() <= 20, "{l:?}");
        }
        assert!(lines[1].starts_with("    ") && !lines[1].starts_with("     "));
        let joined: Vec<&str> = lines.iter().flat_map(|l| l.split_whitespace()).collect();
        assert_eq!(joined[0], "label:");
        assert_eq!(joined[1..].join(" "), text);
    }
}
