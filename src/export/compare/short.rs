//! A comparison's default view below its summary: the marked rows, each
//! once, under the change they are consistent with; the unchanged rows
//! counted per family; the rows not compared, one line a reason.

use super::{bullet, detectable, heading};
use crate::compare::{RowChange, RunComparison, Verdict};
use crate::export::text_table;
use crate::export::text_table::Style;
use comfy_table::{ContentArrangement, Table};
use std::fmt::Write as _;

/// The marked rows under their causes, and the unchanged ones counted.
pub(super) fn moved(out: &mut String, cmp: &RunComparison, style: Style, width: usize) {
    let marked: Vec<&RowChange> = cmp
        .rows
        .iter()
        .filter(|r| r.verdict != Verdict::Same)
        .collect();
    // A column the same in every row it would print is said once.
    let cells: Vec<String> = marked.iter().map(|r| smallest(cmp, r, style)).collect();
    let shared = cells
        .first()
        .filter(|first| cells.iter().all(|c| c == *first));
    let mut causes: Vec<(String, Vec<&RowChange>)> = Vec::new();
    for r in &marked {
        let cause = cause(cmp, r);
        match causes.iter_mut().find(|(c, _)| *c == cause) {
            Some((_, rows)) => rows.push(r),
            None => causes.push((cause, vec![r])),
        }
    }
    for (cause, rows) in &causes {
        heading(style, out, &format!("{cause}: {} rows", rows.len()));
        if let Some(shared) = shared {
            let _ = writeln!(out, "detectable: {shared} (every row)");
        }
        let _ = writeln!(out, "{}", table(cmp, rows, shared.is_none(), style, width));
    }
    unchanged(out, cmp, style);
}

/// What a marked row's change is consistent with: the level shift, a
/// mitigation an inventory change switched, a change that can move any
/// row, or nothing mitbench records.
fn cause(cmp: &RunComparison, r: &RowChange) -> String {
    let name = format!("{} {}", r.key.id, r.key.variant);
    if let Some(shift) = cmp.level_shift.as_ref().filter(|s| s.rows.contains(&name)) {
        return format!(
            "moved with the level shift ({:+.0} ticks a syscall)",
            shift.canary_ticks.new - shift.canary_ticks.old
        );
    }
    if let Some(e) = cmp.explained.iter().find(|e| e.rows.contains(&name)) {
        return format!("{} ({} changed)", e.mitigation, e.because.join(", "));
    }
    if !r.consistent_with.is_empty() {
        return format!(
            "consistent only with a change that can move any row ({})",
            r.consistent_with.join(", ")
        );
    }
    "marked, and nothing mitbench records explains it".to_string()
}

/// The rows' table: a Markdown one has every column; a terminal one keeps
/// to its width, each probe's id heading its variants.
fn table(
    cmp: &RunComparison,
    rows: &[&RowChange],
    with_detectable: bool,
    style: Style,
    width: usize,
) -> Table {
    let mut header = vec!["probe", "variant", "old", "new", "change (95% CI)"];
    if with_detectable {
        header.push("detectable");
    }
    header.push("verdict");
    let mut t = match style {
        Style::Markdown => text_table::table(style, ContentArrangement::Disabled, header, 2..5),
        Style::Terminal => {
            let mut t = text_table::table(style, ContentArrangement::Dynamic, &header[1..], 1..4);
            text_table::fit(&mut t, Some(width));
            t
        }
    };
    let mut probe = "";
    for r in rows {
        let mut row = figure_cells(r, style);
        if with_detectable {
            row.push(smallest(cmp, r, style));
        }
        row.push(r.verdict.symbol().to_string());
        if style == Style::Terminal {
            if r.key.id != probe {
                probe = &r.key.id;
                t.add_row([probe]);
            }
            row.remove(0);
            row[0] = format!("  {}", row[0]);
        }
        t.add_row(row);
    }
    t
}

/// The smallest change the row could show; "unknown" where the summary's
/// line says why (one run a side).
fn smallest(cmp: &RunComparison, r: &RowChange, style: Style) -> String {
    match r.power_is_known() {
        true => detectable(r, cmp.threshold_pct, style),
        false => "unknown".to_string(),
    }
}

/// A row's probe, variant, old and new figures and its change: the cells
/// every table of a comparison starts with.
pub(super) fn figure_cells(r: &RowChange, style: Style) -> Vec<String> {
    vec![
        r.key.id.clone(),
        r.key.variant.clone(),
        format!("{:.1}", r.old_ticks),
        format!("{:.1}", r.new_ticks),
        change_cell(r, style),
    ]
}

/// Narrower than this (percent) an interval is not printed as one: at one
/// decimal it would read [-0.0, +0.0], an exactness no verdict relies on.
const NARROWEST_PRINTED_PCT: f64 = 0.1;

/// A row's change and its interval, or why the interval is not shown.
pub(super) fn change_cell(r: &RowChange, style: Style) -> String {
    let change = super::signed(r.change_pct.value);
    match r.change_pct.ci95 {
        None => format!("{change}, no interval"),
        Some([lo, hi]) if hi - lo < NARROWEST_PRINTED_PCT => {
            format!("{change} (interval under {NARROWEST_PRINTED_PCT}%)")
        }
        Some([lo, hi]) => match style {
            Style::Markdown => format!("{change} [{}, {}]", super::signed(lo), super::signed(hi)),
            Style::Terminal => format!("{change} [{lo:+.1}, {hi:+.1}]"),
        },
    }
}

/// The rows within noise, counted per family in one line.
fn unchanged(out: &mut String, cmp: &RunComparison, style: Style) {
    let counts: Vec<String> = cmp
        .by_family()
        .into_iter()
        .filter_map(|(family, rows)| {
            let same = rows
                .iter()
                .filter(|r| r.verdict == Verdict::Same && r.note.is_none())
                .count();
            (same > 0).then(|| format!("{} {same}", family.name))
        })
        .collect();
    if !counts.is_empty() {
        let _ = writeln!(
            out,
            "\n{}unchanged (~): {} rows",
            bullet(style),
            counts.join(", ")
        );
    }
}

/// The rows not compared, one line a reason.
pub(super) fn not_compared(out: &mut String, cmp: &RunComparison, style: Style) {
    let mut reasons: Vec<(String, Vec<String>)> = Vec::new();
    for g in &cmp.gaps {
        let reason = match (&g.old, &g.new) {
            (Some(old), Some(new)) if old == new => old.clone(),
            (old, new) => format!(
                "old {}, new {}",
                old.as_deref().unwrap_or("measured"),
                new.as_deref().unwrap_or("measured")
            ),
        };
        let row = format!("{} {}", g.key.id, g.key.variant);
        match reasons.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, rows)) => rows.push(row),
            None => reasons.push((reason, vec![row])),
        }
    }
    if reasons.is_empty() {
        return;
    }
    heading(style, out, "Rows not compared");
    for (reason, rows) in reasons {
        let named = match rows.len() {
            1 => rows[0].clone(),
            n => format!("{n} rows"),
        };
        let _ = writeln!(out, "{}{reason}: {named}", bullet(style));
    }
}
