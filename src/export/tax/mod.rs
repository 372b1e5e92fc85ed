//! `mitbench tax` rendered: in the terminal, and as a self-contained page.
//! Both show per kind of crossing the count, its rate, what one costs here,
//! and the share of the workload's CPU time, then the mitigations named in
//! the tolls and the check; the wording of every figure is made once here.

use crate::analysis::figure::Figure;
use crate::export::ExportError;
use crate::export::page::render_page;
use crate::export::terminal::terminal_safe;
use crate::export::text_table::{self, Style, table};
use crate::tax::check::Check;
use crate::tax::named::Named;
use crate::tax::{Tax, TaxRow};
use comfy_table::ContentArrangement;
use serde::Serialize;
use std::fmt::Write as _;

const HEADER: [&str; 7] = [
    "crossing",
    "count",
    "per CPU-s",
    "toll (ns)",
    "total (ms)",
    "share of CPU",
    "toll from",
];

const ESTIMATE_CAVEAT: &str = "an estimate: count x the cost of one crossing measured in \
    isolation; a crossing in a real workload may cost more, with colder caches and predictors";

/// "12.3 [11.0, 14.1]", the value followed by `unit` ("%" for a share).
fn interval(figure: Option<Figure>, digits: usize, unit: &str) -> String {
    match figure {
        Some(Figure {
            value: v,
            ci95: Some([lo, hi]),
        }) => {
            format!("{v:.digits$}{unit} [{lo:.digits$}, {hi:.digits$}]")
        }
        Some(Figure { value: v, .. }) => format!("{v:.digits$}{unit}"),
        None => "-".into(),
    }
}

fn estimate(e: Figure, digits: usize) -> String {
    interval(Some(e), digits, "")
}

/// Each priced crossing's share of the CPU time with its mitigations'
/// parts stacked in it; None where nothing was attributed.
fn per_crossing_plot(tax: &Tax) -> Result<Option<crate::export::plots::Plot>, ExportError> {
    use crate::export::plots::{self, StackedRow};
    let Some(per) = tax
        .per_mitigation
        .as_ref()
        .filter(|p| !p.by_crossing.is_empty())
    else {
        return Ok(None);
    };
    let names: Vec<String> = per.parts.iter().map(|p| p.mitigation.clone()).collect();
    let rows: Vec<StackedRow> = per
        .by_crossing
        .iter()
        .filter_map(|c| {
            let whole = tax.rows.iter().find(|r| r.kind == c.kind)?;
            let mut parts: Vec<(Option<usize>, f64)> = c
                .shares_pct
                .iter()
                .enumerate()
                .filter_map(|(k, share)| Some((Some(k), (*share)?)))
                .collect();
            if let Some(left) = c.remainder_pct {
                parts.push((None, left));
            }
            Some(StackedRow {
                label: c.kind.to_string(),
                parts,
                whole: whole.share?,
            })
        })
        .collect();
    if rows.is_empty() {
        return Ok(None);
    }
    Ok(Some(plots::stacked_parts(
        "each mitigation's part of each crossing",
        &names,
        &rows,
        &plots::Reading {
            axis: "% of the workload's CPU time",
            caption: "each bar is a crossing's mitigation parts end to end (a part: the \
                      crossings counted times that mitigation's attributed part of one; grey: \
                      what the parts leave of the sets' whole toll); the black dot and line are \
                      the crossing's whole share (count times the toll of one) and its 95% \
                      interval.",
        },
    )?))
}

/// What each mitigation takes of the workload's CPU time, a line each.
fn per_mitigation_lines(per: &crate::tax::parts::PerMitigation) -> Vec<String> {
    let mut lines = vec![match &per.attributed_over {
        Some(sets) => format!(
            "what each mitigation takes of the workload's CPU time (its part of each \
             crossing's toll, attributed over run sets {sets}):"
        ),
        None => "what each mitigation takes of the workload's CPU time (the history holds no \
                 attributed run sets of this machine's boots):"
            .to_string(),
    }];
    for p in &per.parts {
        let what = match (&p.share, &p.needs_boot) {
            (Some(_), _) => format!("{} ({})", interval(p.share, 1, "%"), p.from),
            (None, Some(boot)) => format!("needs the boot {boot} of `mitbench plan`"),
            (None, None) => p.from.clone(),
        };
        lines.push(format!("  {}: {what}", p.mitigation));
    }
    if per.remainder.is_some() {
        lines.push(format!(
            "  left of the whole toll by the parts: {}",
            interval(per.remainder, 1, "%")
        ));
    }
    lines
}

/// A row's cells, in [`HEADER`]'s order.
/// "by attack vector, replayed: user_kernel ≥ 1.2% of CPU time (...)", a
/// line per enabled vector.
fn per_vector_lines(tax: &Tax) -> Vec<String> {
    tax.per_vector
        .iter()
        .map(|v| {
            let share = match &v.share_pct {
                // A floor, said as its one-sided 95% bound.
                Some(f) => format!(
                    "≥ {:.2}% of the workload's CPU time; {}",
                    f.lower_bound_95().unwrap_or(f.value).max(0.0),
                    v.from
                ),
                None => v.from.clone(),
            };
            format!("{}: {share}", v.vector.name())
        })
        .collect()
}

/// How much of the syscall row's price is the return after the crossing.
fn return_sentence(tax: &Tax) -> Option<String> {
    let Some(r) = tax.syscall_return.as_ref() else {
        let why = tax.syscall_return_unmeasured.as_ref()?;
        return Some(format!(
            "how much of each syscall's price is the return after the crossing is not known: {why}"
        ));
    };
    let refill = tax
        .syscall_return_refill
        .as_ref()
        .map_or_else(String::new, |w| {
            format!(
                "; refilling the return stack after each crossing ({} entries in the syscall \
             wrapper) would win back {} a syscall, {} of the CPU time",
                crate::answer::returns::ANSWERED_REFILL,
                interval(Some(w.per_syscall_ns), 1, " ns"),
                interval(w.share_pct, 2, "%")
            )
        });
    Some(format!(
        "of each syscall's price (through libc, as a program makes it), {} is the return after \
         the crossing (os/syscall-return): {} of the CPU time{refill}",
        interval(Some(r.per_syscall_ns), 1, " ns"),
        interval(r.share_pct, 2, "%")
    ))
}

/// The hooks every counted syscall paid for and their share, where any
/// was in force on the tolls' run.
fn hooks_sentence(tax: &Tax) -> Option<String> {
    let h = tax.hooks.as_ref()?;
    let named: Vec<&str> = h.hooks.iter().map(|o| o.hook.as_str()).collect();
    let priced = match &h.priced {
        Some(p) => format!(
            "{} a syscall, {} of the CPU time",
            interval(Some(p.per_syscall_ns), 1, " ns"),
            interval(p.share_pct, 2, "%")
        ),
        None => "not priced on the tolls' run (`mitbench run` prices them against a stored run \
                 of this boot without them)"
            .to_string(),
    };
    Some(format!(
        "of each syscall's price, the hooks' on the syscall path ({}): {priced}; what removes \
         each: `mitbench plan`",
        named.join(", ")
    ))
}

fn cells(r: &TaxRow) -> [String; 7] {
    let count = match (&r.count, &r.unsupported) {
        (Some(n), _) => n.to_string(),
        (None, Some(_)) => "unsupported".into(),
        (None, None) => "-".into(),
    };
    [
        r.kind.to_string(),
        count,
        r.per_cpu_second.map_or("-".into(), |v| format!("{v:.0}")),
        interval(r.toll, 0, ""),
        interval(r.total, 2, ""),
        interval(r.share, 1, "%"),
        r.toll_from.clone(),
    ]
}

/// How the workload's run ended, as a phrase.
fn ended(tax: &Tax) -> String {
    let c = &tax.counted;
    let how = if c.timed_out {
        "stopped at --timeout".to_string()
    } else if let Some(code) = c.exit_code {
        format!("exit {code}")
    } else if let Some(signal) = c.exit_signal {
        format!("ended by signal {signal}")
    } else {
        "still running".to_string()
    };
    if c.interrupted {
        format!("{how}, interrupted")
    } else {
        how
    }
}

/// What the kernel's sequences for `m` cost each time they run, where
/// the tolls' run priced them.
fn kernel_prices(m: &Named) -> String {
    let priced: Vec<String> = m
        .kernel_prices
        .iter()
        .filter_map(|p| Some(crate::export::run::summary::priced(p, p.price_ns?)))
        .collect();
    if priced.is_empty() {
        return String::new();
    }
    format!("; kernel price list: {}", priced.join(", "))
}

fn part(m: &Named) -> String {
    match m.part_ns {
        Some(f) => format!(
            "{} of each crossing ({})",
            crate::export::run::summary::ns(f),
            m.part_from
        ),
        None => m.part_from.clone(),
    }
}

/// What counting cost the counted run and what the shares are of.
fn observer_sentence(tax: &Tax) -> String {
    match (&tax.without_counters, &tax.without_counters_unsupported) {
        (Some(o), _) => format!(
            "rates and shares are of the workload's CPU time without the counters, {} s \
             (counting added {} ns to each syscall and {} ns to each context switch here, \
             measured on the shipped workloads plain and counted)",
            estimate(o.cpu_s, 3),
            estimate(o.per_syscall_ns, 0),
            estimate(o.per_switch_ns, 0),
        ),
        (None, why) => format!(
            "rates and shares are of the counted run's CPU time, which the counters slowed \
             (their cost: {})",
            why.as_deref().unwrap_or("not measured")
        ),
    }
}

fn check_sentence(k: &Check) -> String {
    format!(
        "everything on CPU {}: a {}-comparison argument-reading seccomp filter adds {} ns per \
         syscall on back-to-back getpids and {} ns in an eventfd ping-pong between two processes \
         (plain and filtered rounds alternating); this workload switches context {:.2} times per \
         syscall, so its toll is taken {:.0}% of the way to the ping-pong's: {} ns; predicted \
         extra CPU time {} syscalls x that = {} ms; measured over {} pairs of runs (lower \
         quartile of each side): {} ms CPU, {} ms wall; measured / predicted = {}",
        k.cpu,
        k.rules,
        estimate(k.hot_toll_ns, 1),
        estimate(k.switching_toll_ns, 1),
        k.switches_per_syscall,
        k.switching_weight * 100.0,
        estimate(k.toll_per_syscall_ns, 1),
        k.syscalls,
        estimate(k.predicted_ms, 2),
        k.pairs,
        estimate(k.measured_cpu_ms, 2),
        estimate(k.measured_wall_ms, 2),
        k.measured_over_predicted
            .map_or("-".into(), |r| format!("{r:.2}")),
    )
}

/// The estimate as text: a table in `style` among sentences.
pub fn render(tax: &Tax, style: Style, width: usize) -> String {
    let c = &tax.counted;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "workload: {} ({}); wall {:.3} s, CPU {:.3} s (user + system, whole process tree)",
        terminal_safe(&c.command.join(" "), false),
        ended(tax),
        c.wall_s,
        c.cpu_s
    );
    let _ = writeln!(out, "tolls from: {}", tax.tolls_from);
    // A terminal's table keeps to its width: where each toll comes from is
    // written under it, a line a kind, instead of in a column that wraps.
    let terminal = style == Style::Terminal;
    let columns = if terminal { &HEADER[..6] } else { &HEADER[..] };
    let mut table = table(style, ContentArrangement::Disabled, columns, 1..6);
    if terminal {
        text_table::fit(&mut table, Some(width));
    }
    for r in &tax.rows {
        let cells = cells(r);
        table.add_row(&cells[..columns.len()]);
    }
    let _ = writeln!(out, "{table}");
    for r in &tax.rows {
        let note = r.toll_note.map_or_else(String::new, |n| format!(" ({n})"));
        if terminal {
            let _ = writeln!(out, "toll of {}: {}{note}", r.kind, r.toll_from);
        } else if !note.is_empty() {
            let _ = writeln!(out, "toll of {}:{note}", r.kind);
        }
    }
    for r in tax.rows.iter().filter(|r| r.unsupported.is_some()) {
        let why = r.unsupported.as_deref().unwrap_or_default();
        let _ = writeln!(out, "{}: unsupported: {why}", r.kind);
    }
    if let Some(share) = tax.share_pct {
        let _ = writeln!(
            out,
            "priced crossings together: {share:.1}% of the workload's CPU time ({ESTIMATE_CAVEAT})"
        );
    }
    for line in [return_sentence(tax), hooks_sentence(tax)]
        .into_iter()
        .flatten()
    {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out, "counts include {}", c.includes);
    let _ = writeln!(out, "{}", observer_sentence(tax));
    if !tax.mitigations.is_empty() {
        let _ = writeln!(
            out,
            "named mitigations in force in these tolls (consistent with, from the attribution table):"
        );
    }
    for m in &tax.mitigations {
        let kinds = match crate::tax::crossing::list(&m.kinds) {
            none if none.is_empty() => "no crossing counted".to_string(),
            kinds => kinds,
        };
        let _ = writeln!(
            out,
            "  {} [{kinds}]: {}; part: {}{}",
            m.mitigation,
            terminal_safe(&m.evidence, false),
            part(m),
            kernel_prices(m)
        );
    }
    if let Some(per) = &tax.per_mitigation {
        for line in per_mitigation_lines(per) {
            let _ = writeln!(out, "{line}");
        }
    }
    let by_vector = per_vector_lines(tax);
    if !by_vector.is_empty() {
        let _ = writeln!(
            out,
            "by attack vector (what no_<vector> would turn off), replayed:"
        );
    }
    for line in by_vector {
        let _ = writeln!(out, "  {line}");
    }
    if let Some(why) = &tax.check_unsupported {
        let _ = writeln!(out, "check: unsupported: {why}");
    }
    if let Some(k) = &tax.check {
        let _ = writeln!(out, "check, {}", check_sentence(k));
    }
    match style {
        Style::Terminal => text_table::wrap_prose(&out, width),
        Style::Markdown => out,
    }
}

#[derive(Serialize)]
struct Page<'a> {
    workload: String,
    ended: String,
    wall: String,
    cpu: String,
    tolls_from: &'a str,
    rows: Vec<PageRow>,
    share: Option<String>,
    includes: &'a str,
    observer: String,
    hooks: Option<String>,
    mitigations: Vec<PageMitigation<'a>>,
    check: Option<String>,
    check_unsupported: Option<&'a str>,
    per_mitigation: Vec<String>,
    per_vector: Vec<String>,
    per_crossing_plot: Option<crate::export::plots::Plot>,
}

#[derive(Serialize)]
struct PageRow {
    kind: String,
    count: String,
    rate: String,
    toll: String,
    total: String,
    share: String,
    toll_from: String,
    /// How the kind was counted, from the workload's counts.
    source: String,
}

#[derive(Serialize)]
struct PageMitigation<'a> {
    mitigation: &'a str,
    kinds: &'a [crate::tax::crossing::Crossing],
    evidence: &'a str,
    part: String,
}

/// The estimate as one self-contained page (no script, no fetch).
pub fn render_html(tax: &Tax) -> Result<Vec<u8>, ExportError> {
    let c = &tax.counted;
    let rows = tax
        .rows
        .iter()
        .map(|r| {
            let [kind, count, rate, toll, total, share, mut toll_from] = cells(r);
            if let Some(note) = r.toll_note {
                toll_from.push_str(&format!(" ({note})"));
            }
            let source = c
                .counts
                .iter()
                .find(|count| count.kind == r.kind)
                .map_or_else(String::new, |count| count.source.clone());
            PageRow {
                kind,
                count,
                rate,
                toll,
                total,
                share,
                toll_from,
                source,
            }
        })
        .collect();
    let page = Page {
        workload: c.command.join(" "),
        ended: ended(tax),
        wall: format!("{:.3} s", c.wall_s),
        cpu: format!("{:.3} s", c.cpu_s),
        tolls_from: &tax.tolls_from,
        rows,
        share: tax.share_pct.map(|s| format!("{s:.1}%")),
        includes: &c.includes,
        observer: observer_sentence(tax),
        hooks: hooks_sentence(tax),
        mitigations: tax
            .mitigations
            .iter()
            .map(|m| PageMitigation {
                mitigation: m.mitigation,
                kinds: &m.kinds,
                evidence: &m.evidence,
                part: format!("{}{}", part(m), kernel_prices(m)),
            })
            .collect(),
        check: tax.check.as_ref().map(check_sentence),
        check_unsupported: tax.check_unsupported.as_deref(),
        per_mitigation: tax
            .per_mitigation
            .as_ref()
            .map(per_mitigation_lines)
            .unwrap_or_default(),
        per_vector: per_vector_lines(tax),
        per_crossing_plot: per_crossing_plot(tax)?,
    };
    render_page("tax.html", &page)
}
