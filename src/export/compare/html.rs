//! A comparison of two runs as one self-contained page: the inventory
//! difference, each attributed group of changed rows with a plot of their
//! change and its interval, and per family the rows' table and a plot of
//! the rows that moved. Every figure comes from the comparison.

use super::signed;
use crate::compare::{InventoryChange, RowChange, RunComparison, RunLabel, Verdict};
use crate::export::ExportError;
use crate::export::page::render_page;
use crate::export::plots::{self, Plot};
use serde::Serialize;

#[derive(Serialize)]
struct Page<'a> {
    old: &'a RunLabel,
    new: &'a RunLabel,
    /// When each ran, local time for people.
    started: [String; 2],
    warnings: &'a [String],
    /// What the comparison found, first (`compare::summary`).
    summary: Vec<String>,
    canary: String,
    threshold_pct: f64,
    inventory: &'a [InventoryChange],
    explained: Vec<Group>,
    unexplained: Option<Plot>,
    families: Vec<FamilySection>,
    in_run: Vec<String>,
    gaps: Vec<String>,
    legend: String,
}

#[derive(Serialize)]
struct Group {
    mitigation: String,
    why: String,
    source: String,
    because: Vec<String>,
    rows: Vec<String>,
    plot: Plot,
}

#[derive(Serialize)]
struct FamilySection {
    name: &'static str,
    title: &'static str,
    plot: Option<Plot>,
    rows: Vec<Row>,
}

#[derive(Serialize)]
struct Row {
    id: String,
    variant: String,
    old: String,
    new: String,
    change: String,
    interval: String,
    verdict: &'static str,
    consistent_with: String,
    class: &'static str,
}

/// The rows named "probe variant" in `names`, in the comparison's order.
fn named<'a>(cmp: &'a RunComparison, names: &[String]) -> Vec<&'a RowChange> {
    cmp.rows
        .iter()
        .filter(|r| names.contains(&format!("{} {}", r.key.id, r.key.variant)))
        .collect()
}

pub fn render(cmp: &RunComparison) -> Result<Vec<u8>, ExportError> {
    let mut explained = Vec::new();
    for e in &cmp.explained {
        explained.push(Group {
            mitigation: e.mitigation.clone(),
            why: e.why.clone(),
            source: e.source.clone(),
            because: e.because.clone(),
            rows: e.rows.clone(),
            plot: plots::changes(&e.mitigation, &named(cmp, &e.rows))?,
        });
    }
    if let Some(shift) = cmp.level_shift.as_ref().filter(|s| !s.rows.is_empty()) {
        let title = format!("the level shift ({})", signed(shift.change_pct));
        explained.push(Group {
            plot: plots::changes(&title, &named(cmp, &shift.rows))?,
            mitigation: title,
            why: sentence(&shift.summary),
            source: "the canary: a raw getpid, read between rounds".to_string(),
            because: std::iter::once("the syscall path's level".to_string())
                .chain(super::beyond_shift(shift))
                .collect(),
            rows: shift.rows.clone(),
        });
    }
    let unexplained = match named(cmp, &cmp.unexplained) {
        rows if rows.is_empty() => None,
        rows => Some(plots::changes("unexplained", &rows)?),
    };
    let mut families = Vec::new();
    for (family, rows) in cmp.by_family() {
        let moved: Vec<&RowChange> = rows
            .iter()
            .copied()
            .filter(|r| r.verdict != Verdict::Same)
            .collect();
        let plot = if moved.is_empty() {
            None
        } else {
            Some(plots::changes(
                &format!("{}: the rows that moved", family.name),
                &moved,
            )?)
        };
        families.push(FamilySection {
            name: family.name,
            title: family.title,
            plot,
            rows: rows.iter().map(|r| row(r)).collect(),
        });
    }
    let page = Page {
        old: &cmp.old,
        new: &cmp.new,
        started: [&cmp.old, &cmp.new].map(|r| crate::export::number::local_time(&r.started_at)),
        warnings: &cmp.warnings,
        summary: cmp.summary.iter().map(|f| sentence(&f.line)).collect(),
        canary: std::iter::once(super::canary(cmp))
            .chain(super::level_shift(cmp))
            .chain(super::hook_toll(cmp))
            .chain(super::machine_speed(cmp))
            .chain(super::runs_own_noise_only(cmp))
            .map(|line| sentence(&line))
            .collect::<Vec<_>>()
            .join(" "),
        threshold_pct: cmp.threshold_pct,
        inventory: &cmp.inventory,
        explained,
        unexplained,
        families,
        in_run: cmp.in_run.iter().map(super::in_run).collect(),
        gaps: cmp.gaps.iter().map(super::gap).collect(),
        legend: format!(
            "{} Attribution names the mitigations an inventory change switched that tax the \
             row: consistent with, not proof.",
            sentence(&super::legend(cmp.threshold_pct))
        ),
    };
    render_page("compare.html", page)
}

/// Prose the terminal writes as a line, as a sentence on the page.
fn sentence(line: &str) -> String {
    let mut chars = line.chars();
    chars.next().map_or_else(String::new, |first| {
        format!("{}{}.", first.to_uppercase(), chars.as_str())
    })
}

fn row(r: &RowChange) -> Row {
    Row {
        id: r.key.id.clone(),
        variant: r.key.variant.clone(),
        old: format!("{:.1}", r.old_ticks),
        new: format!("{:.1}", r.new_ticks),
        change: signed(r.change_pct.value),
        interval: r.change_pct.ci95.map_or_else(
            || "no interval".into(),
            |[lo, hi]| format!("[{}, {}]", signed(lo), signed(hi)),
        ),
        verdict: r.verdict.symbol(),
        consistent_with: r.consistent_with.join(", "),
        class: match r.verdict {
            Verdict::Slower => "slower",
            Verdict::Faster => "faster",
            Verdict::Same => "",
        },
    }
}
