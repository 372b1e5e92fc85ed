//! A comparison of two runs, for a terminal or for pasting into a review
//! (Markdown). Both come from the same rows; nothing is computed here.

use super::{bullet, detectable, heading};
use crate::compare::RunComparison;
use crate::export::text_table;
use comfy_table::{ContentArrangement, Table};
use std::fmt::Write as _;

pub use crate::export::text_table::Style;

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
fn table(style: Style, width: usize) -> Table {
    match style {
        Style::Markdown => text_table::table(style, ContentArrangement::Disabled, HEADER, 2..6),
        Style::Terminal => {
            let mut table =
                text_table::table(style, ContentArrangement::Dynamic, &HEADER[1..], 1..5);
            text_table::fit(&mut table, Some(width));
            table
        }
    }
}

/// How much of a comparison to print: by default the summary, the marked
/// rows and the unchanged ones counted; `all` every row as measured,
/// `explain` how the figures and verdicts are read.
#[derive(Debug, Clone, Copy, Default)]
pub struct View {
    pub all: bool,
    pub explain: bool,
}

pub fn render(cmp: &RunComparison, style: Style, width: usize, view: View) -> String {
    let out = render_lines(cmp, style, width, view);
    match style {
        Style::Markdown => out,
        Style::Terminal => text_table::wrap_prose(&out, width),
    }
}

fn render_lines(cmp: &RunComparison, style: Style, width: usize, view: View) -> String {
    let mut out = String::new();
    sides(&mut out, cmp);
    for finding in &cmp.summary {
        let _ = writeln!(out, "{}{}", bullet(style), finding.line);
    }
    if view.explain {
        explanation(&mut out, cmp, style);
    }
    if view.all {
        machine(&mut out, cmp, style);
        rows(&mut out, cmp, style, width);
        attribution(&mut out, cmp, style);
    } else {
        // Changes the summary counted rather than listed.
        if cmp.inventory.len() > crate::compare::CHANGES_LISTED {
            machine(&mut out, cmp, style);
        }
        super::short::moved(&mut out, cmp, style, width);
        super::short::not_compared(&mut out, cmp, style);
        let _ = writeln!(
            out,
            "\n`--all` prints every row, `--explain` how the intervals and verdicts are read"
        );
    }
    out
}

/// Every change mitbench records on the machine.
fn machine(out: &mut String, cmp: &RunComparison, style: Style) {
    heading(style, out, "What changed on the machine");
    if cmp.inventory.is_empty() {
        let _ = writeln!(
            out,
            "nothing mitbench records (kernel, command line, vulnerabilities, microcode, CPU, kconfig, process controls)"
        );
    }
    for c in &cmp.inventory {
        let _ = writeln!(out, "{}{}: {} -> {}", bullet(style), c.key, c.old, c.new);
    }
}

/// The two sides and the warnings.
fn sides(out: &mut String, cmp: &RunComparison) {
    for (side, run) in [("old", &cmp.old), ("new", &cmp.new)] {
        let _ = writeln!(
            out,
            "{side}: {} ({}, {}, kernel {})",
            run.name,
            crate::export::number::local_time(&run.started_at),
            run.host,
            run.kernel
        );
    }
    for w in &cmp.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
}

/// What the noise is read from and what the figures mean: the long form
/// behind the summary's lines.
fn explanation(out: &mut String, cmp: &RunComparison, style: Style) {
    heading(style, out, "How this comparison reads its rows");
    let _ = writeln!(out, "{}", super::canary(cmp));
    if let Some(shift) = super::level_shift(cmp) {
        let _ = writeln!(out, "{shift}");
    }
    if let Some(speed) = super::machine_speed(cmp) {
        let _ = writeln!(out, "{speed}");
    }
    if let Some(toll) = super::hook_toll(cmp) {
        let _ = writeln!(out, "{toll}");
    }
    // A run's forks share whatever level the whole run settles at; only
    // runs apart show it, so say where it was read from.
    let _ = match (cmp.between_runs_pct, cmp.history_runs) {
        (Some(pct), Some(runs)) => writeln!(
            out,
            "between runs: the history holds {runs} earlier runs of the same host, boot, build and process controls; between them the median row moved ±{pct:.1}% (95%), counted beside each row's forks"
        ),
        _ => writeln!(
            out,
            "between runs: the history holds fewer than three earlier runs of the same host, boot, build and process controls, so a level a whole run settles at is read only where a side has two runs or more (store three runs of these conditions first: `mitbench run --runs 3`)"
        ),
    };
    if let Some(only) = super::runs_own_noise_only(cmp) {
        let _ = writeln!(out, "between runs: {only}");
    }
    let _ = writeln!(out, "between boots: {}", cmp.boots.summary);
    let _ = writeln!(out, "{}", super::legend(cmp.threshold_pct));
    if let Some(beyond) = cmp.level_shift.as_ref().and_then(super::beyond_shift) {
        let _ = writeln!(out, "{beyond}");
    }
}

/// A table per family, the marks and the rows' notes.
fn rows(out: &mut String, cmp: &RunComparison, style: Style, width: usize) {
    for (family, rows) in cmp.by_family() {
        heading(style, out, &format!("{} ({})", family.name, family.title));
        let mut t = table(style, width);
        let mut probe = "";
        for r in rows {
            let mut row = super::short::figure_cells(r, style);
            row.push(detectable(r, cmp.threshold_pct, style));
            row.push(match &r.note {
                Some(_) => format!("{} (note)", r.verdict.symbol()),
                None => r.verdict.symbol().to_string(),
            });
            if style == Style::Terminal {
                if r.key.id != probe {
                    probe = &r.key.id;
                    t.add_row([r.key.id.as_str()]);
                }
                row.remove(0);
                row[0] = format!("  {}", row[0]);
            }
            t.add_row(row);
        }
        let _ = writeln!(out, "{t}");
    }
    let _ = writeln!(out, "\n{}", super::marked(cmp));
    for r in cmp.rows.iter().filter(|r| r.note.is_some()) {
        let _ = writeln!(
            out,
            "{} {}: {}",
            r.key.id,
            r.key.variant,
            r.note.as_deref().unwrap_or_default()
        );
    }
}

/// What the changed rows are consistent with, the in-run A/B rows and the
/// rows not compared.
fn attribution(out: &mut String, cmp: &RunComparison, style: Style) {
    heading(style, out, "Attribution (consistent with, not proof)");
    let shifted = cmp.level_shift.as_ref().filter(|s| !s.rows.is_empty());
    if cmp.explained.is_empty() && cmp.unexplained.is_empty() && shifted.is_none() {
        let _ = writeln!(out, "no row changed beyond noise and the threshold");
    }
    if let Some(shift) = shifted {
        let _ = writeln!(
            out,
            "{}the level shift ({:+.1}% on the syscall path, above): {} row(s) moved with it. {}",
            bullet(style),
            shift.change_pct,
            shift.rows.len(),
            shift.rows.join("; ")
        );
        if let Some(beyond) = super::beyond_shift(shift) {
            let _ = writeln!(out, "{}{beyond}", bullet(style));
        }
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
    for r in cmp.broad_rows() {
        let _ = writeln!(
            out,
            "{}{} {}: consistent only with a change that can move any row ({})",
            bullet(style),
            r.key.id,
            r.key.variant,
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
        heading(
            style,
            out,
            "In-run A/B (attributed by construction, new run)",
        );
        for r in &cmp.in_run {
            let _ = writeln!(out, "{}{}", bullet(style), super::in_run(r));
        }
    }
    if !cmp.gaps.is_empty() {
        heading(style, out, "Rows not compared");
        for g in &cmp.gaps {
            let _ = writeln!(out, "{}{}", bullet(style), super::gap(g));
        }
    }
}
