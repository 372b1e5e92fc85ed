//! The terminal report as Markdown: one table per family with the
//! terminal's columns, the fits and the advice under it, for pasting into
//! an issue or a wiki (hyperfine's `--export-markdown`).

use super::terminal::{COLUMNS, LEGEND, cells, family_advice, fit_line, header_lines};
use crate::export::{ExportError, Exporter, RunView};
use std::fmt::Write as _;

pub struct MarkdownExporter;

impl Exporter for MarkdownExporter {
    fn render(&self, run: &RunView) -> Result<Vec<u8>, ExportError> {
        let doc = run.doc;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# mitbench: {}\n",
            cell(&doc.inventory.identity.hostname)
        );
        out.push_str(&super::summary::markdown(&run.summary));
        for line in header_lines(doc) {
            let _ = writeln!(out, "{}  ", cell(&line));
        }
        for (family, records) in doc.by_family() {
            let _ = writeln!(out, "\n## {} — {}\n", family.name, cell(family.title));
            let _ = writeln!(out, "| {} |", COLUMNS.join(" | "));
            let align: Vec<&str> = (0..COLUMNS.len())
                .map(|i| match i {
                    0 | 1 => ":--",
                    i if i == COLUMNS.len() - 1 => ":--",
                    _ => "--:",
                })
                .collect();
            let _ = writeln!(out, "| {} |", align.join(" | "));
            for r in &records {
                let row: Vec<String> = cells(r).iter().map(|c| cell(c)).collect();
                let _ = writeln!(out, "| {} |", row.join(" | "));
            }
            let fits: Vec<String> = doc.fits_among(&records).map(fit_line).collect();
            let advice: Vec<&str> = family_advice(doc, &records).collect();
            if !fits.is_empty() || !advice.is_empty() {
                out.push('\n');
            }
            for fit in fits {
                let _ = writeln!(out, "- {}", cell(&fit));
            }
            for a in advice {
                let _ = writeln!(out, "- advice: {}", cell(a));
            }
        }
        if doc.interrupted {
            let _ = writeln!(
                out,
                "\n**Interrupted**: the run stopped early; the rows above are what was measured."
            );
        }
        let _ = writeln!(out, "\n{}\n", cell(&doc.machine_states.summary));
        let _ = writeln!(out, "{}", cell(LEGEND));
        Ok(out.into_bytes())
    }
}

/// Text made safe for one Markdown table cell or line: a `|` would end
/// the cell, a line break the row, and `*`, `_` or a backquote from the
/// machine's text would start emphasis or code.
fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' | '*' | '_' | '`' | '\\' | '<' | '>' | '[' | ']' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}
