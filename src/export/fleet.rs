//! Many runs in one table, for a terminal or Markdown: a column per run
//! (grouped by identical inventory), a row per probe variant, each cell
//! the cost with its run-to-run interval and an arrow where the run
//! differs from the first column beyond noise.

use super::text_table::{self, Style};
use crate::compare::{Fleet, Verdict};
use comfy_table::ContentArrangement;
use std::fmt::Write as _;

pub fn render(fleet: &Fleet, style: Style, width: usize) -> String {
    let mut out = String::new();
    for (g, members) in fleet.groups.iter().enumerate() {
        let names: Vec<String> = members
            .iter()
            .map(|&c| {
                let l = &fleet.runs[c].label;
                format!("{} ({})", l.name, l.host)
            })
            .collect();
        let _ = writeln!(
            out,
            "{}group {}: {}",
            bullet(style),
            g + 1,
            names.join(", ")
        );
        let differences = &fleet.group_differences[g];
        if g > 0 {
            let what: Vec<String> = differences
                .iter()
                .map(|c| format!("{}: {} -> {}", c.key, c.old, c.new))
                .collect();
            let indent = match style {
                Style::Terminal => "  ",
                Style::Markdown => "  - ",
            };
            let _ = writeln!(out, "{indent}differs from group 1 in {}", what.join("; "));
        }
    }
    let mut header = vec!["probe".to_string(), "variant".to_string()];
    // A column is named by its host, and by the run's name too where one
    // host has several runs here.
    header.extend(fleet.runs.iter().map(|r| {
        let shared = fleet
            .runs
            .iter()
            .filter(|o| o.label.host == r.label.host)
            .count()
            > 1;
        if shared {
            format!("{} {} [g{}]", r.label.host, r.label.name, r.group + 1)
        } else {
            format!("{} [g{}]", r.label.host, r.group + 1)
        }
    }));
    header.push("differs".into());
    let mut table = text_table::table(
        style,
        ContentArrangement::Disabled,
        header,
        2..2 + fleet.runs.len(),
    );
    if style == Style::Terminal {
        text_table::fit(&mut table, Some(width));
    }
    for row in &fleet.rows {
        let mut cells = vec![row.id.clone(), row.variant.clone()];
        for (cell, verdict) in row.cells.iter().zip(&row.against_first) {
            cells.push(match cell {
                None => "-".into(),
                Some(c) => {
                    let interval = c
                        .half_width_pct
                        .map_or_else(String::new, |pct| format!(" ±{pct:.1}%"));
                    let mark = match verdict {
                        Some(Verdict::Slower) => " ↑",
                        Some(Verdict::Faster) => " ↓",
                        _ => "",
                    };
                    format!("{}{interval}{mark}", super::format_cost(c.ticks))
                }
            });
        }
        cells.push(if row.differs {
            "*".into()
        } else {
            String::new()
        });
        table.add_row(cells);
    }
    let _ = writeln!(out, "\n{table}");
    let _ = writeln!(
        out,
        "\nticks per item, the headline figure of each run ± its run-to-run 95% interval; ↑/↓: \
         slower/faster than the first column beyond noise and {}% (the verdict of `mitbench \
         compare` against it); *: some run differs so. [gN]: runs of identical inventory share N.",
        fleet.threshold_pct
    );
    out
}

fn bullet(style: Style) -> &'static str {
    match style {
        Style::Terminal => "",
        Style::Markdown => "- ",
    }
}
