//! What a comparison found, first and short: one sentence a finding, each
//! with its figure, read before any table (the rows marked of the rows
//! compared, the level shift, each change on the machine and its price,
//! the machine's speed, what could not be judged). The long explanation
//! behind each stays with `compare --explain` and the docs; the JSON holds
//! these lines as `summary`.

use super::{RunComparison, Verdict};
use serde::Serialize;

/// What a line of the summary is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// Rows marked of rows compared.
    Rows,
    /// The syscall path's level read apart on the two sides.
    LevelShift,
    /// A change mitbench records on the machine (kernel, hooks, ...).
    Machine,
    /// What the hook changes cost one syscall.
    HookPrice,
    /// The machine's own speed between the sides.
    Speed,
    /// What the comparison could not judge, and what would.
    NotJudged,
}

/// One line of the summary.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub kind: FindingKind,
    pub line: String,
}

/// More changes on the machine than this are counted, not listed, in the
/// summary (the section below lists them all).
pub const CHANGES_LISTED: usize = 3;

/// The summary of `cmp`, once its rows are held together and explained.
pub fn findings(cmp: &RunComparison) -> Vec<Finding> {
    let mut lines = vec![Finding {
        kind: FindingKind::Rows,
        line: rows_marked(cmp),
    }];
    let mut add = |kind, line: String| lines.push(Finding { kind, line });
    if let Some(shift) = &cmp.level_shift {
        add(FindingKind::LevelShift, shift.short(&cmp.inventory));
    }
    if cmp.inventory.len() > CHANGES_LISTED {
        add(
            FindingKind::Machine,
            format!(
                "{} changes on the machine (listed below), {} of them able to move any row",
                cmp.inventory.len(),
                cmp.inventory.iter().filter(|c| c.moves_any_row).count()
            ),
        );
    } else {
        for c in &cmp.inventory {
            add(
                FindingKind::Machine,
                format!("changed: {}: {} -> {}", c.key, c.old, c.new),
            );
        }
    }
    if let Some(toll) = &cmp.hook_toll {
        add(
            FindingKind::HookPrice,
            format!("the hook changes cost {}", toll.priced()),
        );
    }
    add(FindingKind::Speed, speed(cmp));
    if let Some(line) = not_judged(cmp) {
        add(FindingKind::NotJudged, line);
    }
    lines
}

fn rows_marked(cmp: &RunComparison) -> String {
    let count = |v: Verdict| cmp.rows.iter().filter(|r| r.verdict == v).count();
    let (slower, faster) = (count(Verdict::Slower), count(Verdict::Faster));
    if cmp.rows_marked == 0 {
        return format!(
            "0 of {} rows marked: none moved beyond its noise and the {}% threshold",
            cmp.rows_tested, cmp.threshold_pct
        );
    }
    format!(
        "{} of {} rows marked ({slower} slower, {faster} faster), at most {:.1} of them expected \
         false",
        cmp.rows_marked, cmp.rows_tested, cmp.false_rows_expected
    )
}

fn speed(cmp: &RunComparison) -> String {
    let canary = format!(
        "machine: the syscall canary {:.0} -> {:.0} ticks ({:+.1}%)",
        cmp.old.quiet_canary_ticks, cmp.new.quiet_canary_ticks, cmp.canary_change_pct
    );
    match cmp.reference_change_pct {
        Some(pct) => format!(
            "{canary}, its own speed {pct:+.1}% (rows are compared at one speed, without it)"
        ),
        None => canary,
    }
}

/// What could not be judged: rows whose run-level noise is unknown, rows
/// not compared, rows whose sides stand on different levels.
fn not_judged(cmp: &RunComparison) -> Option<String> {
    let unknown = cmp.rows_without_run_noise();
    let noted = cmp.rows.iter().filter(|r| r.note.is_some()).count();
    let mut parts = Vec::new();
    if unknown > 0 {
        parts.push(format!(
            "{unknown} of {} rows know only the runs' own noise (one run a side: `mitbench run \
             --runs 3` on each side measures how far a run moves)",
            cmp.rows.len()
        ));
    }
    if noted > 0 {
        parts.push(format!("{noted} rows with a note and no verdict"));
    }
    if !cmp.gaps.is_empty() {
        parts.push(format!("{} rows not compared (below)", cmp.gaps.len()));
    }
    (!parts.is_empty()).then(|| format!("not judged: {}", parts.join("; ")))
}
