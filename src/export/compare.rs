//! A comparison of two runs, for a terminal or for pasting into a review
//! (Markdown). Both come from the same rows; nothing is computed here.

use super::text_table;
use crate::compare::{RunComparison, Verdict};
use comfy_table::{ContentArrangement, Table};
use std::fmt::Write as _;

pub use super::text_table::Style;

const HEADER: [&str; 7] = [
    "probe",
    "variant",
    "old",
    "new",
    "change (95% CI)",
    "detectable",
    "verdict",
];

/// A Markdown table has every column; a terminal one keeps to its width:
/// each probe's id heads its variants and the figures are written short.
fn table(style: Style) -> Table {
    match style {
        Style::Markdown => text_table::table(style, ContentArrangement::Disabled, HEADER, 2..6),
        Style::Terminal => {
            let mut table =
                text_table::table(style, ContentArrangement::Dynamic, &HEADER[1..], 1..5);
            text_table::fit(&mut table, Some(text_table::terminal_width()));
            table
        }
    }
}

/// The smallest change the row could show, and the runs a side would need
/// to see the threshold.
fn detectable(r: &crate::compare::RowChange, threshold_pct: f64, style: Style) -> String {
    match (r.smallest_detectable_pct, r.runs_to_resolve, style) {
        (Some(pct), Some(n), Style::Markdown) if n > 1 => {
            format!("±{pct:.1}% ({threshold_pct}%: {n} runs a side)")
        }
        (Some(pct), Some(n), Style::Terminal) if n > 1 => format!("±{pct:.1}%, {n} runs"),
        (Some(pct), _, _) => format!("±{pct:.1}%"),
        (None, _, _) => "-".to_string(),
    }
}

fn signed(pct: f64) -> String {
    format!("{pct:+.1}%")
}

pub fn render(cmp: &RunComparison, style: Style) -> String {
    let out = render_lines(cmp, style);
    match style {
        Style::Markdown => out,
        Style::Terminal => text_table::wrap_prose(&out, text_table::terminal_width()),
    }
}

fn render_lines(cmp: &RunComparison, style: Style) -> String {
    let mut out = String::new();
    let heading = |out: &mut String, text: &str| {
        let _ = match style {
            Style::Terminal => writeln!(out, "\n{text}"),
            Style::Markdown => writeln!(out, "\n### {text}\n"),
        };
    };
    let _ = writeln!(
        out,
        "old: {} ({}, {}, kernel {})\nnew: {} ({}, {}, kernel {})",
        cmp.old.name,
        cmp.old.started_at,
        cmp.old.host,
        cmp.old.kernel,
        cmp.new.name,
        cmp.new.started_at,
        cmp.new.host,
        cmp.new.kernel
    );
    for w in &cmp.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    let _ = writeln!(
        out,
        "the quiet null-syscall canary: {:.0} -> {:.0} ticks ({}); it moves with the machine's speed and with anything on the syscall path",
        cmp.old.quiet_canary_ticks,
        cmp.new.quiet_canary_ticks,
        signed(cmp.canary_change_pct)
    );

    let _ = match (cmp.between_runs_pct, cmp.history_runs) {
        (Some(pct), Some(runs)) => writeln!(
            out,
            "between runs: the history holds {runs} earlier runs of the same host, boot, build and process controls; between them the median row moved ±{pct:.1}% (95%)"
        ),
        _ => writeln!(
            out,
            "between runs: the history holds fewer than three earlier runs of the same host, boot, build and process controls, so each row's noise comes from the runs' own forks and drift"
        ),
    };

    heading(&mut out, "What changed on the machine");
    if cmp.inventory.is_empty() {
        let _ = writeln!(
            out,
            "nothing mitbench records (kernel, command line, vulnerabilities, microcode, CPU, kconfig, process controls)"
        );
    } else {
        for c in &cmp.inventory {
            let _ = writeln!(out, "{}{}: {} -> {}", bullet(style), c.key, c.old, c.new);
        }
    }

    for (family, rows) in cmp.by_family() {
        heading(&mut out, &format!("{} ({})", family.name, family.title));
        let mut t = table(style);
        let mut probe = "";
        for r in rows {
            let ci = r.change_ci95_pct.map_or_else(
                || "no interval".to_string(),
                |[lo, hi]| match style {
                    Style::Markdown => format!("[{}, {}]", signed(lo), signed(hi)),
                    Style::Terminal => format!("[{lo:+.1}, {hi:+.1}]"),
                },
            );
            let mut row = vec![
                r.id.clone(),
                r.variant.clone(),
                format!("{:.1}", r.old_ticks),
                format!("{:.1}", r.new_ticks),
                format!("{} {ci}", signed(r.change_pct)),
                detectable(r, cmp.threshold_pct, style),
                match &r.note {
                    Some(_) => format!("{} (note)", r.verdict.symbol()),
                    None => r.verdict.symbol().to_string(),
                },
            ];
            if style == Style::Terminal {
                if r.id != probe {
                    probe = &r.id;
                    t.add_row([r.id.as_str()]);
                }
                row.remove(0);
                row[0] = format!("  {}", row[0]);
            }
            t.add_row(row);
        }
        let _ = writeln!(out, "{t}");
    }
    let _ = writeln!(
        out,
        "\ncosts in TSC ticks per item, the headline figure of each run (the geometric mean of a side's runs); change = new/old - 1 with a 95% interval (in percent): the change plus and minus how far the row moves between runs when nothing changed, from each run's own interval, a run set's spread and the machine's drift between the runs, and from the history's earlier runs of the same host, boot, build and process controls where it holds three or more (the larger of the two decides), so a row that did not change is marked in at most about 5% of comparisons; detectable: the smallest change this comparison could mark, and where that is above the threshold the runs a side would need to see the threshold (N runs); ~: within noise or below {}%",
        cmp.threshold_pct
    );
    for r in cmp.rows.iter().filter(|r| r.note.is_some()) {
        let _ = writeln!(
            out,
            "{} {}: {}",
            r.id,
            r.variant,
            r.note.as_deref().unwrap_or_default()
        );
    }

    heading(&mut out, "Attribution (consistent with, not proof)");
    if cmp.explained.is_empty() && cmp.unexplained.is_empty() {
        let _ = writeln!(out, "no row changed beyond noise and the threshold");
    }
    for e in &cmp.explained {
        let _ = writeln!(
            out,
            "{}{}: {} row(s), because {} changed. {} ({})",
            bullet(style),
            e.mitigation,
            e.rows.len(),
            e.because.join(", "),
            e.why,
            e.source
        );
        for row in &e.rows {
            let _ = writeln!(out, "    {row}");
        }
    }
    let broad: Vec<_> = cmp
        .rows
        .iter()
        .filter(|r| r.verdict != Verdict::Same)
        .filter(|r| !r.consistent_with.is_empty())
        .filter(|r| {
            !cmp.explained.iter().any(|e| {
                e.rows
                    .iter()
                    .any(|x| *x == format!("{} {}", r.id, r.variant))
            })
        })
        .collect();
    for r in broad {
        let _ = writeln!(
            out,
            "{}{} {}: consistent only with a change that can move any row ({})",
            bullet(style),
            r.id,
            r.variant,
            r.consistent_with.join(", ")
        );
    }
    if !cmp.unexplained.is_empty() {
        let _ = writeln!(
            out,
            "{}unexplained (noise, firmware, the host, or a mitigation mitbench does not know): {}",
            bullet(style),
            cmp.unexplained.join("; ")
        );
    }

    if !cmp.in_run.is_empty() {
        heading(&mut out, "In-run A/B (attributed by construction, new run)");
        for r in &cmp.in_run {
            let ci = r
                .ratio_ci95
                .map_or_else(String::new, |[lo, hi]| format!(" [{lo:.3}, {hi:.3}]"));
            let _ = writeln!(
                out,
                "{}{} {}: {:.3}x{ci} of {}",
                bullet(style),
                r.id,
                r.variant,
                r.ratio,
                r.baseline
            );
        }
    }
    if !cmp.gaps.is_empty() {
        heading(&mut out, "Rows not compared");
        for g in &cmp.gaps {
            let side = |s: &Option<String>| s.clone().unwrap_or_else(|| "measured".to_string());
            let _ = writeln!(
                out,
                "{}{} {}: old {}, new {}",
                bullet(style),
                g.id,
                g.variant,
                side(&g.old),
                side(&g.new)
            );
        }
    }
    out
}

fn bullet(style: Style) -> &'static str {
    match style {
        Style::Terminal => "  ",
        Style::Markdown => "- ",
    }
}
