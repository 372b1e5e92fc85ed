//! A comparison of two runs: for a terminal or a review ([`text`]), and as
//! an HTML page ([`html`]); the prose both say, written once here.

pub mod html;
mod short;
pub mod text;

use crate::compare::{InRun, LevelShift, RowGap, RunComparison};
use crate::export::text_table::Style;
use std::fmt::Write as _;

/// A change in percent with its sign, one decimal.
pub(crate) fn signed(pct: f64) -> String {
    format!("{pct:+.1}%")
}

/// How far the machine's own speed moved between the runs, by the canary.
pub(crate) fn canary(cmp: &RunComparison) -> String {
    format!(
        "the quiet null-syscall canary: {:.0} -> {:.0} ticks ({}); it moves with the machine's \
         speed and with anything on the syscall path",
        cmp.old.quiet_canary_ticks,
        cmp.new.quiet_canary_ticks,
        signed(cmp.canary_change_pct)
    )
}

/// The syscall path's level read apart on the two sides, where it was:
/// one finding above the rows (`compare::shift`).
pub(crate) fn level_shift(cmp: &RunComparison) -> Option<String> {
    Some(format!(
        "level shift: {}",
        cmp.level_shift.as_ref()?.summary
    ))
}

/// What the hooks that changed cost one syscall, where they are all that
/// changed (`compare::hook_toll`).
pub(crate) fn hook_toll(cmp: &RunComparison) -> Option<String> {
    let toll = cmp.hook_toll.as_ref()?;
    Some(format!(
        "what the hook changes cost: {} (read from {}; nothing else mitbench records changed)",
        toll.priced(),
        toll.row
    ))
}

/// Beyond a cost added on the syscall path, each row that moved with it
/// read in raw syscalls' worth of what it added (`compare::shift::Beyond`);
/// None where the shift was not the syscall path's alone.
pub(crate) fn beyond_shift(shift: &LevelShift) -> Option<String> {
    if shift.beyond.is_empty() {
        return None;
    }
    let counted: Vec<String> = shift
        .beyond
        .iter()
        .map(|b| match b.canary_calls.ci95 {
            Some([lo, hi]) => format!("{} {:.2} [{lo:.2}, {hi:.2}]", b.row, b.canary_calls.value),
            None => format!("{} {:.2}", b.row, b.canary_calls.value),
        })
        .collect();
    Some(format!(
        "beyond the shift, each row's change in raw syscalls' worth of what it added ({:+.0} \
         ticks a call; 1: one crossing an item and nothing else changed, more: more crossings \
         or a cost of the row's own): {}",
        shift.canary_ticks.new - shift.canary_ticks.old,
        counted.join("; ")
    ))
}

/// Where no row's between-run noise is known (one run a side and no
/// history), that its verdict counts the runs' own noise only: said where
/// a reader reads the verdicts, not in the JSON's `noise_from` alone.
pub(crate) fn runs_own_noise_only(cmp: &RunComparison) -> Option<String> {
    let unknown = cmp.rows_without_run_noise();
    (unknown > 0).then(|| {
        format!(
            "runs' own noise only in {unknown} of {} rows: one run a side and no history of these \
             conditions, so how far a whole run moves is not counted, those verdicts may be \
             bolder than they should, and no smallest detectable change is claimed for them \
             (`mitbench run --runs 3` on each side measures it)",
            cmp.rows.len()
        )
    })
}

/// How far the machine's own speed moved between the sides, where both
/// read the reference, and that the rows are compared at one speed.
pub(crate) fn machine_speed(cmp: &RunComparison) -> Option<String> {
    let (crate::compare::Sides { old, new }, pct) =
        cmp.reference_ticks.zip(cmp.reference_change_pct)?;
    Some(format!(
        "the machine's own speed (a reference no mitigation touches): {old:.3} -> {new:.3} ticks \
         a step ({}); rows are compared at one reference speed, so this change is not in them",
        signed(pct)
    ))
}

/// What the figures, intervals and verdicts of the rows' tables mean.
pub(crate) fn legend(threshold_pct: f64) -> String {
    format!(
        "costs in TSC ticks per item, the headline figure of each run (the geometric mean of a \
         side's runs); change = new/old - 1 with a 95% interval (in percent): the change plus \
         and minus how far the row moves between runs when nothing changed, from each run's own \
         interval, a run set's spread and the machine's drift between the runs, and from the \
         history's earlier runs of the same host, boot, build and process controls where it \
         holds three or more (the larger of the two decides); where every run read the \
         reference, each row is read at one reference speed, the machine's own speed taken \
         out (what the reference does not see of it, the canary over the reference, still \
         counted); a row is marked where Benjamini-Hochberg over all the compared rows finds its change \
         beyond the threshold (p-values against a true change of {threshold_pct}%, so at most 5% \
         of the marked rows are expected to have moved less); detectable: the smallest true \
         change found with 80% power, and where that is above {resolved_pct}% the runs a side \
         would need to find {resolved_pct}% so (N runs; out of reach: noise that more runs do \
         not average away, the walk the reference does not see, is as large); ~: within noise \
         or below {threshold_pct}%",
        resolved_pct = crate::analysis::noise::RESOLVED_THRESHOLDS * threshold_pct
    )
}

/// How many rows were tested and marked, and how many of the marked are
/// expected to be false at most.
pub(crate) fn marked(cmp: &RunComparison) -> String {
    crate::export::false_discoveries(
        cmp.rows_marked,
        cmp.rows_tested,
        cmp.false_rows_expected,
        "rows",
    )
}

/// A row one run lacks, or could not measure, and why.
pub(crate) fn gap(g: &RowGap) -> String {
    let side = |s: &Option<String>| s.clone().unwrap_or_else(|| "measured".to_string());
    format!(
        "{} {}: old {}, new {}",
        g.key.id,
        g.key.variant,
        side(&g.old),
        side(&g.new)
    )
}

/// An in-run A/B row of the new run.
pub(crate) fn in_run(r: &InRun) -> String {
    let ci = r
        .ratio
        .ci95
        .map_or_else(String::new, |[lo, hi]| format!(" [{lo:.3}, {hi:.3}]"));
    format!(
        "{} {}: {:.3}x{ci} of {}",
        r.key.id, r.key.variant, r.ratio.value, r.baseline
    )
}

/// The largest smallest-detectable change printed as a figure, percent.
const MOST_DETECTABLE_PCT: f64 = 100.0;

/// The smallest change the row could show, and the runs a side would need
/// to see a change of twice the threshold.
pub(super) fn detectable(
    r: &crate::compare::RowChange,
    threshold_pct: f64,
    style: Style,
) -> String {
    use crate::analysis::noise::{OUT_OF_REACH as out_of_reach, RESOLVED_THRESHOLDS};
    let resolved_pct = RESOLVED_THRESHOLDS * threshold_pct;
    // Past a doubling the figure says nothing a reader can use: a noisy
    // 1.6-tick row printed ±1271711651.2% (the JSON keeps the number).
    if r.smallest_detectable_pct
        .is_some_and(|pct| pct > MOST_DETECTABLE_PCT)
    {
        return format!("±>{MOST_DETECTABLE_PCT:.0}%");
    }
    match (r.smallest_detectable_pct, r.runs_to_resolve, style) {
        (Some(pct), Some(n), Style::Markdown) if n >= out_of_reach => {
            format!("±{pct:.1}% ({resolved_pct}%: out of reach of more runs)")
        }
        (Some(pct), Some(n), Style::Terminal) if n >= out_of_reach => {
            format!("±{pct:.1}%, out of reach")
        }
        (Some(pct), Some(n), Style::Markdown) if n > 1 => {
            format!("±{pct:.1}% ({resolved_pct}%: {n} runs a side)")
        }
        (Some(pct), Some(n), Style::Terminal) if n > 1 => format!("±{pct:.1}%, {n} runs"),
        (Some(pct), _, _) => format!("±{pct:.1}%"),
        (None, _, _) if !r.power_is_known() => "unknown, one run a side".to_string(),
        (None, _, _) => "-".to_string(),
    }
}

/// A section's heading.
pub(crate) fn heading(style: Style, out: &mut String, text: &str) {
    let _ = match style {
        Style::Terminal => writeln!(out, "\n{text}"),
        Style::Markdown => writeln!(out, "\n### {text}\n"),
    };
}

/// How a line of a list starts.
pub(crate) fn bullet(style: Style) -> &'static str {
    match style {
        Style::Terminal => "  ",
        Style::Markdown => "- ",
    }
}
