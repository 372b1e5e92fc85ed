//! The terminal report: one table per family, then what the columns mean.

use super::{Record, RunDocument};
use crate::harness::rounds::Basis;
use crate::probes::FAMILIES;
use crate::schedule::Stop;
use comfy_table::{CellAlignment, ContentArrangement, Table, presets};
use std::fmt::Write as _;

pub fn render(doc: &RunDocument) -> String {
    let mut out = String::new();
    let inv = &doc.inventory;
    let s = &doc.settings;
    let _ = writeln!(
        out,
        "mitbench {} · {} · kernel {} · preemption {} · TSC {}",
        doc.tool_version,
        inv.cpu.model_name,
        inv.kernel.release,
        inv.kernel.preemption.model,
        inv.tsc_mhz
            .map_or_else(|| "unknown".to_string(), |mhz| format!("{mhz:.1} MHz")),
    );
    let others: Vec<String> = s
        .allowed_cpus
        .iter()
        .filter(|&&c| c != s.cpu)
        .map(|c| c.to_string())
        .collect();
    let _ = writeln!(
        out,
        "measuring thread pinned to CPU {}; same-cpu co-runners share it, cross-cpu ones run on CPU {}",
        s.cpu,
        if others.is_empty() {
            "-".to_string()
        } else {
            others.join(",")
        },
    );
    for warning in &inv.clock_warnings {
        let _ = writeln!(out, "warning: {warning}; ns figures may be off");
    }
    for family in FAMILIES {
        let records: Vec<&Record> = doc
            .results
            .iter()
            .filter(|r| r.family == family.name)
            .collect();
        if records.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{} — {}", family.name, family.title);
        let _ = writeln!(out, "{}", family_table(&records));
        out.push_str(&super::phase_table::render(&records));
        for a in doc
            .amortization
            .iter()
            .filter(|a| records.iter().any(|r| r.id == a.id))
        {
            let f = &a.fit;
            let half = |(lo, hi): (f64, f64)| format_cost((hi - lo) / 2.0);
            let _ = writeln!(
                out,
                "  {} {}: cost(B) = {} ±{} per {} + {} ±{} per batch / B ticks (R² {:.3}, {} sizes)",
                a.id,
                if a.group.is_empty() { "" } else { &a.group },
                format_cost(f.per_item),
                half(f.per_item_ci95),
                a.item,
                format_cost(f.per_batch),
                half(f.per_batch_ci95),
                f.r2,
                f.points,
            );
        }
    }
    if doc.interrupted {
        let _ = writeln!(
            out,
            "\ninterrupted: the run stopped early; the rows above are what was measured."
        );
    }
    let _ = writeln!(out, "\n{}", doc.machine_states.summary);
    let _ = writeln!(
        out,
        "ns and ticks: the cost of one item in the machine's quiet state, the median of the rounds the \
         canary classed quiet (of all rounds when the machine showed one state). ticks: TSC reference \
         cycles, not core cycles. ±CI: half-width of its 95% interval over this run's rounds, as a \
         percentage of it; where the machine's speed drifts (the machine line), a next run may differ \
         by more. rounds: quiet rounds used / all rounds. × base and Δ ticks: the \
         median over pairs of rounds adjacent in time of the ratio and difference to the probe's baseline, \
         ± the half-width of their 95% interval."
    );
    out
}

fn family_table(records: &[&Record]) -> Table {
    let mut table = Table::new();
    table
        .load_style(presets::UTF8_BORDERS_ONLY)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header([
            "probe", "variant", "ns", "ticks", "±CI", "rounds", "× base", "Δ ticks", "note",
        ]);
    for r in records {
        let ci = match (r.cost_ci_half_width_pct, r.cost_ci95_ticks, r.cost_ticks) {
            (Some(pct), _, _) if pct < 0.005 => "<±0.01%".into(),
            (Some(pct), _, _) => format!("±{pct:.2}%"),
            (None, Some([lo, hi]), Some(m)) => format!("±{:.2}t", (m - lo).max(hi - m)),
            _ => "-".into(),
        };
        let base = match (
            r.ratio_to_baseline,
            r.baseline.as_deref() == Some(r.variant.as_str()),
        ) {
            (_, true) if r.cost_ticks.is_some() => "1.00 (base)".to_string(),
            (Some(ratio), _) => format_ratio(ratio),
            _ => "-".into(),
        };
        // Quiet rounds used of all, where the two differ.
        let rounds = match r.rounds_used {
            Some(used) if used != r.rounds_total => format!("{used}/{}", r.rounds_total),
            Some(used) => used.to_string(),
            None => "-".into(),
        };
        table.add_row([
            r.id.clone(),
            r.variant.clone(),
            r.cost_ns.map_or("-".into(), format_cost),
            r.cost_ticks.map_or("-".into(), format_cost),
            ci,
            rounds,
            base,
            delta(r),
            note(r),
        ]);
    }
    for column in 2..=7 {
        if let Some(c) = table.column_mut(column) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

/// The difference to the baseline with the half-width of its interval.
fn delta(r: &Record) -> String {
    match (r.delta_ticks, r.delta_ci95_ticks) {
        (Some(d), Some([lo, hi])) if r.baseline.as_deref() != Some(r.variant.as_str()) => {
            let sign = if d >= 0.0 { "+" } else { "" };
            format!("{sign}{} ±{}", format_cost(d), format_cost((hi - lo) / 2.0))
        }
        _ => String::new(),
    }
}

fn note(r: &Record) -> String {
    if let Some(reason) = &r.unsupported {
        return format!("unsupported: {reason}");
    }
    let mut notes = Vec::new();
    if let (Some(rate), Some(unit)) = (r.rate_millions_per_s, &r.rate_unit) {
        notes.push(format!("{rate:.1} {unit}"));
    }
    if let (Some(mib), Some(per_byte)) = (r.mib_per_s, r.ticks_per_byte) {
        notes.push(format!("{} MiB/s, {per_byte:.2} ticks/B", format_cost(mib)));
    }
    for f in &r.figures {
        notes.push(format!("{} {}{}", f.name, format_figure(f.value), f.unit));
    }
    match (r.within_layout_spread, r.layout_spread_pct) {
        (Some(true), Some(spread)) => notes.push(format!(
            "within the layout spread (±{spread:.1}%): not told apart from code placement"
        )),
        (None, Some(spread)) if r.is_layout_control() => {
            notes.push(format!("layout control; spread ±{spread:.1}%"))
        }
        _ => {}
    }
    if let Some(pct) = r.toll_recovered_pct {
        let interval = r
            .toll_recovered_ci95_pct
            .map_or(String::new(), |[lo, hi]| format!(" [{lo:.0}, {hi:.0}]"));
        notes.push(format!("{pct:.0}%{interval} of toll recovered"));
    }
    if r.interrupted {
        notes.push("interrupted".to_string());
    } else if !r.target_met && r.cost_ticks.is_some() {
        // A variant can stop on target by the state split known then and
        // miss it by the run's final one, which has seen every canary.
        let why = match r.stopped {
            Some(Stop::TargetMet) | None => "by the run's final state split",
            Some(stop) => stop.describe(),
        };
        notes.push(format!("CI target not met: {why}"));
    }
    if r.estimator == Some(Basis::NoQuietRound) {
        notes.push("no round in the quiet state: slow-state figure".to_string());
    }
    if r.cpus.len() > 1 && r.cpus.iter().any(|&c| c != r.cpus[0]) {
        let cpus: Vec<String> = r.cpus.iter().map(|c| c.to_string()).collect();
        notes.push(format!("CPUs {}", cpus.join("+")));
    }
    notes.extend(r.notes.iter().cloned());
    if let Some(dropped) = r.dropped_migrated.filter(|&d| d > 0) {
        notes.push(format!("{dropped} samples dropped (CPU changed)"));
    }
    if let Some(dropped) = r.dropped_backwards.filter(|&d| d > 0) {
        notes.push(format!("{dropped} samples dropped (clock went backwards)"));
    }
    notes.join("; ")
}

/// Enough digits to read, no false precision.
pub fn format_cost(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude >= 1000.0 {
        let whole = format!("{:.0}", value.abs());
        let mut grouped = String::new();
        for (i, ch) in whole.chars().enumerate() {
            if i > 0 && (whole.len() - i) % 3 == 0 {
                grouped.push(',');
            }
            grouped.push(ch);
        }
        if value < 0.0 {
            format!("-{grouped}")
        } else {
            grouped
        }
    } else if magnitude >= 100.0 {
        format!("{value:.0}")
    } else if magnitude >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

/// A count without decimals, other figures as costs.
fn format_figure(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format_cost(value).trim_end_matches(".00").to_string()
    } else {
        format_cost(value)
    }
}

fn format_ratio(ratio: f64) -> String {
    if ratio.abs() >= 100.0 {
        format!("{ratio:.0}")
    } else if ratio.abs() >= 0.01 {
        format!("{ratio:.2}")
    } else {
        format!("{ratio:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_get_digits_by_magnitude() {
        assert_eq!(format_cost(0.783), "0.78");
        assert_eq!(format_cost(33.66), "33.7");
        assert_eq!(format_cost(247.98), "248");
        assert_eq!(format_cost(5380.0), "5,380");
        assert_eq!(format_cost(397_321.4), "397,321");
        assert_eq!(format_cost(-1234.0), "-1,234");
    }

    #[test]
    fn ratios_keep_small_ones_readable() {
        assert_eq!(format_ratio(7.2048), "7.20");
        assert_eq!(format_ratio(0.0074), "0.0074");
        assert_eq!(format_ratio(123.4), "123");
    }
}
