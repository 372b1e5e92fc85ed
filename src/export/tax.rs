//! `mitbench tax` in the terminal: per kind of crossing, the count, its
//! rate, what one costs here, and the share of the workload's CPU time.

use crate::export::terminal::terminal_safe;
use crate::tax::Tax;
use comfy_table::{CellAlignment, ContentArrangement, Table, presets};
use std::fmt::Write as _;

pub fn render(tax: &Tax) -> String {
    let c = &tax.counted;
    let mut out = String::new();
    let ended = if c.timed_out {
        "stopped at --timeout".to_string()
    } else if let Some(code) = c.exit_code {
        format!("exit {code}")
    } else if let Some(signal) = c.exit_signal {
        format!("ended by signal {signal}")
    } else {
        "still running".to_string()
    };
    let interrupted = if c.interrupted { ", interrupted" } else { "" };
    let _ = writeln!(
        out,
        "workload: {} ({ended}{interrupted}); wall {:.3} s, CPU {:.3} s (user + system, whole process tree)",
        terminal_safe(&c.command.join(" "), false),
        c.wall_s,
        c.cpu_s
    );
    let _ = writeln!(out, "tolls from: {}", tax.tolls_from);
    let mut table = Table::new();
    table
        .load_style(presets::UTF8_BORDERS_ONLY)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header([
            "crossing",
            "count",
            "per CPU-s",
            "toll (ns)",
            "total (ms)",
            "share of CPU",
            "toll from",
        ]);
    for column in 1..6 {
        if let Some(col) = table.column_mut(column) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    let interval = |value: Option<f64>, ci: Option<[f64; 2]>, digits: usize| match (value, ci) {
        (Some(v), Some([lo, hi])) => format!("{v:.digits$} [{lo:.digits$}, {hi:.digits$}]"),
        (Some(v), None) => format!("{v:.digits$}"),
        _ => "-".into(),
    };
    let estimate = |e: crate::tax::check::Estimate, digits: usize| {
        interval(Some(e.value), Some(e.ci95), digits)
    };
    for r in &tax.rows {
        let count = match (&r.count, &r.unsupported) {
            (Some(n), _) => n.to_string(),
            (None, Some(_)) => "unsupported".into(),
            (None, None) => "-".into(),
        };
        table.add_row(vec![
            r.kind.to_string(),
            count,
            r.per_cpu_second.map_or("-".into(), |v| format!("{v:.0}")),
            interval(r.toll_ns, r.toll_ci95_ns, 0),
            interval(r.total_ms, r.total_ci95_ms, 2),
            r.share_pct.map_or("-".into(), |v| format!("{v:.1}%")),
            r.toll_from.clone(),
        ]);
    }
    let _ = writeln!(out, "{table}");
    for r in tax.rows.iter().filter(|r| r.unsupported.is_some()) {
        let _ = writeln!(
            out,
            "{}: unsupported: {}",
            r.kind,
            r.unsupported.as_deref().unwrap_or_default()
        );
    }
    if let Some(share) = tax.share_pct {
        let _ = writeln!(
            out,
            "priced crossings together: {share:.1}% of the workload's CPU time (an estimate: \
             count x the cost of one crossing measured in isolation; a crossing in a real \
             workload may cost more, with colder caches and predictors)"
        );
    }
    let _ = writeln!(out, "counts include {}", c.includes);
    if !tax.mitigations.is_empty() {
        let _ = writeln!(
            out,
            "named mitigations in force in these tolls (consistent with, from the attribution table):"
        );
    }
    for m in &tax.mitigations {
        let part = match m.part_ns {
            Some(ns) => format!("{ns:.1} ns of each crossing ({})", m.part_from),
            None => m.part_from.clone(),
        };
        let _ = writeln!(
            out,
            "  {} [{}]: {}; part: {part}",
            m.mitigation,
            m.kinds.join(", "),
            terminal_safe(&m.evidence, false)
        );
    }
    if let Some(why) = &tax.check_unsupported {
        let _ = writeln!(out, "check: unsupported: {why}");
    }
    if let Some(k) = &tax.check {
        let _ = writeln!(
            out,
            "check, everything on CPU {}: a {}-comparison argument-reading seccomp filter adds \
             {} ns per syscall on back-to-back getpids and {} ns in an eventfd ping-pong between \
             two processes (plain and filtered rounds alternating); this workload switches context \
             {:.2} times per syscall, so its toll is taken {:.0}% of the way to the ping-pong's: \
             {} ns; predicted extra CPU time {} syscalls x that = {} ms; measured over {} pairs of \
             runs (lower quartile of each side): {} ms CPU, {} ms wall; measured / predicted = {}",
            k.cpu,
            k.rules,
            estimate(k.hot_toll_ns, 1),
            estimate(k.switching_toll_ns, 1),
            if k.syscalls > 0 {
                k.switches as f64 / k.syscalls as f64
            } else {
                0.0
            },
            k.switching_weight * 100.0,
            estimate(k.toll_per_syscall_ns, 1),
            k.syscalls,
            estimate(k.predicted_ms, 2),
            k.pairs,
            estimate(k.measured_cpu_ms, 2),
            estimate(k.measured_wall_ms, 2),
            k.measured_over_predicted
                .map_or("-".into(), |r| format!("{r:.2}")),
        );
    }
    out
}
