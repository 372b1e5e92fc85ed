//! What changed, and when, over the stored runs (`mitbench history
//! changes`): per machine its events, each with the rows it moved and what
//! the inventory says changed; across machines the causes they share.

use super::compare::signed;
use super::number::format_cost;
use super::terminal::Prose;
use super::text_table::{self, Style};
use crate::compare::{Event, MachineTimeline, Timeline};
use comfy_table::ContentArrangement;
use std::fmt::Write as _;

pub fn render(timeline: &Timeline, style: Style, width: usize) -> String {
    let mut out = Prose::new(width);
    if timeline.machines.is_empty() {
        let _ = writeln!(out, "no runs stored yet: `mitbench run` stores each run");
        return out.text;
    }
    out.say(
        "",
        &format!(
            "Change points: E-divisive means, each split held to a Welch t-test at p < {}, at \
             least {} runs a side; a change under {}% is left out.",
            timeline.alpha, timeline.min_side, timeline.threshold_pct
        ),
        0,
    );
    for machine in &timeline.machines {
        let _ = writeln!(out);
        machine_part(&mut out, machine, timeline.min_side, style);
    }
    if !timeline.shared.is_empty() {
        let _ = writeln!(out, "\nCauses shared by machines:");
        for cause in &timeline.shared {
            let hosts: Vec<String> = cause
                .hosts
                .iter()
                .map(|h| {
                    format!(
                        "{} (run {}, {} rows, median {})",
                        h.host,
                        h.run,
                        h.rows,
                        signed(h.median_change_pct)
                    )
                })
                .collect();
            out.say(
                "- ",
                &format!("{}: {}", changed_line(&cause.changed), hosts.join(", ")),
                2,
            );
        }
    }
    out.text
}

fn machine_part(out: &mut Prose, machine: &MachineTimeline, min_side: usize, style: Style) {
    let m = &machine.machine;
    let (first, last) = (
        machine.runs.first().map_or("", |r| minute(&r.started_at)),
        machine.runs.last().map_or("", |r| minute(&r.started_at)),
    );
    out.heading(
        &format!(
            "{}: {} runs ({first} to {last}), {} rows",
            m.hostname,
            machine.runs.len(),
            machine.rows
        ),
        &format!(
            "{}quick: {}, process controls: {}",
            if m.machine_id.is_empty() {
                String::new()
            } else {
                format!("installation {}, ", m.machine_id)
            },
            if m.quick { "yes" } else { "no" },
            serde_json::from_str(&m.controls)
                .map(|controls| crate::mitigations::process::described(&controls))
                .unwrap_or_else(|_| m.controls.clone())
        ),
    );
    if machine.older_left_out > 0 {
        let _ = writeln!(
            out,
            "  the newest {} runs are read; {} older ones are left out",
            machine.runs.len(),
            machine.older_left_out
        );
    }
    if machine.runs.len() < 2 * min_side {
        let _ = writeln!(
            out,
            "  no change point can be found yet: a change needs {min_side} runs on each side"
        );
        return;
    }
    if machine.events.is_empty() {
        let _ = writeln!(out, "  no change point: every row held its level");
        return;
    }
    for event in &machine.events {
        event_part(out, event, machine.rows, style);
    }
}

fn event_part(out: &mut Prose, event: &Event, rows: usize, style: Style) {
    let mut lines = event_lines(event, rows).into_iter();
    if let Some(headline) = lines.next() {
        let _ = writeln!(out, "\n{headline}");
    }
    for line in lines {
        out.say("  ", &line, 4);
    }
    let mut table = text_table::table(
        style,
        ContentArrangement::Disabled,
        [
            "probe",
            "variant",
            "before (ticks)",
            "after (ticks)",
            "change",
            "95% CI",
            "runs a side",
        ],
        [2, 3, 4, 5, 6],
    );
    for row in &event.rows {
        let interval = row.change.ci95.map_or("-".to_string(), |[lo, hi]| {
            format!("[{}, {}]", signed(lo), signed(hi))
        });
        table.add_row([
            row.probe.clone(),
            row.variant.clone(),
            format_cost(row.before_ticks),
            format_cost(row.after_ticks),
            signed(row.change.value),
            interval,
            format!("{} | {}", row.runs_before, row.runs_after),
        ]);
    }
    let _ = writeln!(out, "{table}");
}

/// An event in lines: where it is and how many rows moved, each family's
/// changes, what changed, mitbench's build, the canary. The terminal and
/// the report say the same.
pub fn event_lines(event: &Event, rows: usize) -> Vec<String> {
    let mut lines = vec![format!(
        "run {} ({}), since run {}: {} of {rows} rows moved",
        event.run,
        minute(&event.started_at),
        event.since_run,
        event.rows.len()
    )];
    let mut families: Vec<&str> = event.rows.iter().map(|r| r.family.as_str()).collect();
    families.dedup();
    for family in families {
        let mut changes: Vec<f64> = event
            .rows
            .iter()
            .filter(|r| r.family == family)
            .map(|r| r.change.value)
            .collect();
        changes.sort_by(f64::total_cmp);
        lines.push(format!(
            "{family}: {} rows, median {} (from {} to {})",
            changes.len(),
            signed(crate::analysis::stats::median(&changes)),
            signed(changes[0]),
            signed(changes[changes.len() - 1])
        ));
    }
    lines.push(if event.changed.is_empty() {
        "changed: nothing mitbench records changed".to_string()
    } else {
        format!("changed: {}", changed_line(&event.changed))
    });
    if let Some((old, new)) = &event.build {
        lines.push(format!("mitbench's build: {old} -> {new}"));
    }
    if let Some(canary) = event.canary_change_pct {
        lines.push(format!(
            "the quiet canary: {} (it moves with the host's speed and with anything on the \
             syscall path)",
            signed(canary)
        ));
    }
    lines
}

/// An RFC 3339 time to the minute, as a heading reads it ("2026-11-29
/// 12:02"); the JSON keeps it whole.
fn minute(rfc3339: &str) -> &str {
    rfc3339.get(..16).unwrap_or(rfc3339)
}

/// What changed, in a line.
fn changed_line(changed: &[crate::compare::InventoryChange]) -> String {
    changed
        .iter()
        .map(|c| format!("{}: {} -> {}", c.key, c.old, c.new))
        .collect::<Vec<_>>()
        .join("; ")
}
