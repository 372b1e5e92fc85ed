//! The seed-002 view of a phased probe: per variant, what each phase costs
//! per item and its share of the whole, and what the variant saves against
//! the probe's baseline.

use crate::export::number::format_cost;
use crate::export::text_table::{self, Style, table};
use crate::store::results::Record;
use comfy_table::{ContentArrangement, Table};

/// How to read every phase table.
const READING: &str = "  Phases are wall time on the measuring thread's clock, from one mark to the next: whatever else \
ran on its CPU meanwhile counts in that phase. Threads that share its CPU run when it blocks, so a new thread's \
start-up is paid in its creator's first wait (the signal, or the join where there is no signal).\n";

/// One table per probe of `records` that has phases, each under a caption,
/// and how to read them; empty when none has.
pub fn render(records: &[&Record], width: Option<usize>) -> String {
    let mut out = String::new();
    let mut ids: Vec<&str> = records
        .iter()
        .filter(|r| !r.phases.is_empty())
        .map(|r| r.id.as_str())
        .collect();
    ids.dedup();
    for id in ids {
        let rows: Vec<&Record> = records.iter().copied().filter(|r| r.id == id).collect();
        wrapped(&mut out, &caption(id, &rows), width);
        let mut table = probe_table(&rows);
        text_table::fit(&mut table, width);
        out.push_str(&table.to_string());
        out.push('\n');
    }
    if !out.is_empty() {
        wrapped(&mut out, READING, width);
    }
    out
}

/// `text` (an indented paragraph) wrapped to `width`, onto `out`.
fn wrapped(out: &mut String, text: &str, width: Option<usize>) {
    let width = width.unwrap_or(usize::MAX);
    text_table::write_wrapped(out, "  ", text.trim(), 4, width);
}

fn caption(id: &str, rows: &[&Record]) -> String {
    let item = rows.first().map_or("item", |r| r.item.as_str());
    let mut cpus: Vec<String> = rows
        .iter()
        .flat_map(|r| r.cpus.iter())
        .map(|c| c.to_string())
        .collect();
    cpus.sort();
    cpus.dedup();
    let marks: Vec<f64> = rows
        .iter()
        .filter_map(|r| r.estimated_phase_marks_ticks)
        .collect();
    let marks = if marks.is_empty() {
        String::new()
    } else {
        let (lo, hi) = marks
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &m| {
                (lo.min(m), hi.max(m))
            });
        format!(
            "; the phase marks themselves add an estimated {}-{} ticks per {item} to the total",
            format_cost(lo),
            format_cost(hi)
        )
    };
    format!(
        "  {id} by phase: ticks per {item}, and the phase's median share of it (±95% CI); ran on CPU {}{marks}\n",
        cpus.join(",")
    )
}

fn probe_table(rows: &[&Record]) -> Table {
    // Phases in the order the probe names them, each once: the variant
    // with the most phases sets the order.
    let mut by_phase_count: Vec<&Record> = rows.to_vec();
    by_phase_count.sort_by_key(|r| std::cmp::Reverse(r.phases.len()));
    let mut phases: Vec<&str> = Vec::new();
    for phase in by_phase_count.iter().flat_map(|r| r.phases.iter()) {
        if !phases.contains(&phase.name.as_str()) {
            phases.push(&phase.name);
        }
    }
    let baseline = rows
        .iter()
        .find_map(|r| r.baseline.as_deref())
        .unwrap_or("baseline");
    let mut header = vec!["variant".to_string()];
    header.extend(phases.iter().map(|p| p.to_string()));
    header.push("total".into());
    header.push(format!("saving vs {baseline}"));

    let right_aligned = 1..=phases.len() + 2;
    let mut table = table(
        Style::Terminal,
        ContentArrangement::Dynamic,
        header,
        right_aligned,
    );
    for r in rows.iter().filter(|r| r.cost.is_some()) {
        let mut cells = vec![r.variant.clone()];
        for &name in &phases {
            cells.push(match r.phases.iter().find(|p| p.name == name) {
                Some(p) => {
                    let half = p
                        .share_pct
                        .half_width()
                        .map_or("-".into(), |half| format!("{half:.1}"));
                    format!(
                        "{}\n{:.1}% ±{half}",
                        format_cost(p.ticks.value),
                        p.share_pct.value,
                    )
                }
                None => "-".into(),
            });
        }
        cells.push(r.cost_ticks().map_or("-".into(), format_cost));
        cells.push(saving(r));
        table.add_row(cells);
    }
    table
}

/// How much less than the baseline the variant costs, in percent, with the
/// interval the ratio's gives.
fn saving(r: &Record) -> String {
    if r.is_baseline() {
        return "(base)".into();
    }
    match r
        .vs_baseline
        .as_ref()
        .map(|c| (c.ratio.value, c.ratio.ci95))
    {
        Some((ratio, Some([lo, hi]))) => format!(
            "{:.1}%\n[{:.1}, {:.1}]",
            (1.0 - ratio) * 100.0,
            (1.0 - hi) * 100.0,
            (1.0 - lo) * 100.0
        ),
        _ => "-".into(),
    }
}
