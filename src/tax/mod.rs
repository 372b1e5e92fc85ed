//! `mitbench tax`: what share of a workload's time goes to crossings of
//! security boundaries. The workload's crossings are counted by kind while
//! it runs ([`count`]), and each count is multiplied by what one crossing
//! costs on this machine, from a run of this boot ([`estimate`]).

mod attach;
pub mod check;
pub mod count;
pub mod inject;
pub mod named;
pub mod observer;
pub mod parts;
mod procs;
mod share;
mod supervise;
pub mod vectors;
pub mod workloads;

use crate::analysis;
use crate::analysis::figure::{self, Figure};
pub use crate::mitigations::crossing::{self, Crossing, TOLLS, TollSource};
use crate::store::history::History;
use crate::store::results::RunDocument;
use count::Counted;
use serde::Serialize;
use std::time::Duration;

/// Whose crossings are counted.
pub enum Watched {
    /// A command mitbench starts and watches to its end, or to `timeout`.
    Command {
        command: Vec<String>,
        timeout: Option<Duration>,
    },
    /// A process already running, for `duration` or until it ends.
    Running { pid: i32, duration: Duration },
}

/// Counts `target`'s crossings.
pub fn count(target: &Watched) -> Result<Counted, String> {
    match target {
        Watched::Command { command, timeout } => count::run_counted(command, *timeout),
        Watched::Running { pid, duration } => attach::count_running(*pid, *duration),
    }
}

/// The probes `mitbench tax` measures when no run of this boot has them.
pub fn toll_probes() -> Vec<String> {
    let mut probes: Vec<String> = TOLLS
        .iter()
        .flat_map(|t| t.rows())
        .map(|(probe, _)| probe.to_string())
        .collect();
    // The kernel's price list, which splits the tolls by attack vector,
    // and the return after a crossing, which a program's syscalls pay.
    probes.push(crate::mitigations::sequences::PROBE.to_string());
    probes.push(crate::answer::returns::PROBE.to_string());
    probes.sort();
    probes.dedup();
    probes
}

/// The newest stored run of boot `boot_id` that measured every toll, and
/// how to name it; None when there is none or the history cannot say.
pub fn tolls_in(history: &History, boot_id: &str) -> Option<(RunDocument, String)> {
    let mut rows: Vec<(&str, &str)> = TOLLS.iter().flat_map(|t| t.rows()).collect();
    rows.sort_unstable();
    rows.dedup();
    let id = history.newest_measuring(boot_id, &rows).ok()??;
    let doc = history.load(id).ok()?;
    let name = format!("stored run {id} ({})", doc.started_at);
    Some((doc, name))
}

#[derive(Debug, Clone, Serialize)]
pub struct TaxRow {
    pub kind: Crossing,
    pub count: Option<u64>,
    pub per_cpu_second: Option<f64>,
    /// What one crossing costs here, ns, with its run-to-run interval.
    #[serde(flatten, with = "crate::store::results::fields::as_toll_ns")]
    pub toll: Option<Figure>,
    /// Where the toll comes from ("os/getpid syscall"), or why there is none.
    pub toll_from: String,
    /// Why those rows price the kind, where that is not plain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub toll_note: Option<&'static str>,
    /// count x toll, ms, with the toll's interval carried through.
    #[serde(flatten, with = "crate::store::results::fields::as_total_ms")]
    pub total: Option<Figure>,
    /// Of the workload's CPU time, percent, with the total's interval
    /// carried through. The JSON writes it as `figure`.
    #[serde(skip)]
    pub share: Option<Figure>,
    /// The share in the one shape every document writes a figure in:
    /// percent of the CPU time, `basis` `estimate`, standing on the rows
    /// the toll comes from. None where there is no share.
    pub figure: Option<figure::Reported>,
    pub unsupported: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Tax {
    pub counted: Counted,
    /// The run the tolls come from: a stored run of this boot, or one made
    /// for this estimate.
    pub tolls_from: String,
    pub rows: Vec<TaxRow>,
    /// Every priced crossing together, percent of the CPU time.
    pub share_pct: Option<f64>,
    /// What counting cost the counted run, and its CPU time without the
    /// counters, which rates and shares are of; or why it could not be
    /// measured (then they are of the counted run's CPU time).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub without_counters: Option<observer::Correction>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub without_counters_unsupported: Option<String>,
    /// The named mitigations in force in these tolls, and the part of a
    /// toll measured for each where this machine could.
    pub mitigations: Vec<named::Named>,
    /// Each enabled attack vector's part of the workload's CPU time, from
    /// the replayed prices of what turning it off would turn off.
    pub per_vector: Vec<vectors::VectorShare>,
    /// What the return after each crossing adds where the workload makes
    /// its syscalls from inside functions (libc's wrappers do), beyond the
    /// syscall row's raw instruction; None where the tolls' run did not
    /// measure it (`syscall_return_unmeasured` says so).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub syscall_return: Option<SyscallShare>,
    /// What refilling the return stack after each syscall
    /// (`answer::returns::ANSWERED_REFILL` entries, in the syscall
    /// wrapper) would win back of that, at the tolls' run's price; None
    /// where that run did not measure the refill.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub syscall_return_refill: Option<SyscallShare>,
    /// Why the return's share is not known, where the workload made
    /// syscalls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub syscall_return_unmeasured: Option<String>,
    /// The hooks on the syscall path in force on the tolls' run, and their
    /// share where it priced them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hooks: Option<HooksShare>,
    /// Each mitigation's part of the workload's CPU time (see `parts`);
    /// None until priced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_mitigation: Option<parts::PerMitigation>,
    /// With `--check`: the estimate against a toll injected and measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<check::Check>,
    /// Why `--check` could not run here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check_unsupported: Option<String>,
}

/// What one crossing of `t`'s kind costs by the rows of `tolls`, ns, with
/// its interval: the row's figure per crossing, less the row it takes off
/// (`analysis::combine::difference`); or why there is none.
fn price(t: &TollSource, tolls: &RunDocument) -> Result<Figure, String> {
    let figure = |probe: &str, variant: &str| -> Result<Figure, String> {
        // The figure the run's table prints: at its reference speed.
        let shown = tolls
            .record(probe, variant)
            .and_then(|r| r.shown_ns())
            .ok_or_else(|| format!("{probe} {variant} not measured"))?;
        Ok(shown.map(|ns| ns / t.crossings_per_item))
    };
    let mut toll = figure(t.probe, t.variant)?;
    if let Some((probe, variant)) = t.less {
        toll = analysis::combine::difference(toll, figure(probe, variant)?);
    }
    if toll.value <= 0.0 {
        return Err(format!(
            "{}: not above nothing on this run ({:.0} ns)",
            t.rows_named(),
            toll.value
        ));
    }
    // The wider side either way, as every "±" reads.
    Ok(Figure::within(toll.value, toll.half_width()))
}

/// The counts priced by the tolls in `tolls`, as shares of the workload's
/// CPU time without the counters where `observer` could measure their
/// cost (else of the counted run's, and `observer` says why).
pub fn estimate(
    counted: Counted,
    tolls: &RunDocument,
    tolls_from: String,
    observer: Result<observer::Correction, String>,
) -> Tax {
    let cpu_s = shares_of(&counted, observer.as_ref().ok());
    // The tolls' run's price list, made once for the named mitigations and
    // the attack vectors.
    let prices = crate::answer::prices::of(tolls);
    let rows: Vec<TaxRow> = counted
        .counts
        .iter()
        .map(|c| {
            let source = TOLLS.iter().find(|t| t.kind == c.kind);
            let (priced, toll_from) = match source.map(|t| (t, price(t, tolls))) {
                Some((t, Ok(priced))) => (Some(priced), t.rows_named()),
                Some((_, Err(why))) => (None, why),
                None => (None, "no toll measured for this kind yet".into()),
            };
            let count = c.count;
            let total = priced
                .zip(count)
                .map(|(p, n)| p.map(|ns| share::total_ms(n as f64, ns)));
            let share = total
                .filter(|_| cpu_s > 0.0)
                .map(|t| t.map(|ms| share::pct_of_cpu(ms, cpu_s)));
            let stands_on = toll_from.clone();
            TaxRow {
                kind: c.kind,
                count,
                per_cpu_second: count.filter(|_| cpu_s > 0.0).map(|n| n as f64 / cpu_s),
                toll: priced,
                toll_from,
                toll_note: source.filter(|_| priced.is_some()).and_then(|t| t.note),
                total,
                share,
                figure: share.map(|s| figure::Reported::of(s, "%", "estimate", stands_on.clone())),
                unsupported: c.unsupported.clone(),
            }
        })
        .collect();
    let priced: Vec<f64> = rows
        .iter()
        .filter_map(|r| r.share.map(|s| s.value))
        .collect();
    let (syscall_return, syscall_return_refill, syscall_return_unmeasured) =
        return_share(tolls, &counted, cpu_s);
    Tax {
        share_pct: (!priced.is_empty()).then(|| priced.iter().sum()),
        mitigations: named::in_force(tolls, &prices, &counted),
        per_vector: vectors::per_vector(tolls, &prices, &counted, cpu_s),
        syscall_return,
        syscall_return_refill,
        syscall_return_unmeasured,
        hooks: hooks_share(tolls, &counted, cpu_s),
        without_counters_unsupported: observer.as_ref().err().cloned(),
        without_counters: observer.ok(),
        counted,
        tolls_from,
        rows,
        per_mitigation: None,
        check: None,
        check_unsupported: None,
    }
}

/// A price every counted syscall pays and its share of the CPU time: the
/// return after the crossing where each is made from a function (glibc's
/// getpid()), the hooks on the syscall path.
#[derive(Debug, Clone, Serialize)]
pub struct SyscallShare {
    /// Per syscall, ns, with the interval another run's may land in: the
    /// return's is getpid's from `os/syscall-return` (the call from a
    /// function less the inline one), the hooks' read by compare.
    pub per_syscall_ns: crate::analysis::figure::Figure,
    /// Over the syscalls counted, percent of the CPU time, with interval.
    pub share_pct: Option<crate::analysis::figure::Figure>,
}

impl SyscallShare {
    fn of(per_syscall_ns: Figure, syscalls: u64, cpu_s: f64) -> SyscallShare {
        let pct = |ns: f64| share::share_pct(syscalls as f64, ns, cpu_s);
        SyscallShare {
            share_pct: (cpu_s > 0.0).then(|| per_syscall_ns.map(pct)),
            per_syscall_ns,
        }
    }
}

/// The hooks on the syscall path in force when the tolls' run was made,
/// and what they cost the workload's syscalls where that run priced them.
#[derive(Debug, Clone, Serialize)]
pub struct HooksShare {
    pub hooks: Vec<crate::inventory::hooks::OnPath>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priced: Option<SyscallShare>,
}

/// The hooks every counted syscall paid for, where any was in force; None
/// where none was.
fn hooks_share(tolls: &RunDocument, counted: &Counted, cpu_s: f64) -> Option<HooksShare> {
    let hooks = tolls.hooks_on_path();
    if hooks.is_empty() {
        return None;
    }
    let priced = tolls
        .hook_toll
        .as_ref()
        .zip(counted.count_of(Crossing::Syscall))
        .map(|(toll, syscalls)| SyscallShare::of(toll.ns, syscalls, cpu_s));
    Some(HooksShare { hooks, priced })
}

/// How much of each counted syscall is the return after the crossing; or,
/// where the workload made syscalls and the tolls' run did not measure
/// getpid's return toll, why not (neither where no syscall was counted).
fn return_share(
    tolls: &RunDocument,
    counted: &Counted,
    cpu_s: f64,
) -> (Option<SyscallShare>, Option<SyscallShare>, Option<String>) {
    let Some(syscalls) = counted.count_of(Crossing::Syscall) else {
        return (None, None, None);
    };
    let probe = crate::answer::returns::PROBE;
    let Some(toll) =
        crate::answer::returns::of_one(tolls, crate::mitigations::crossing::RETURN_TOLL_SYSCALL)
    else {
        let why = format!(
            "the tolls' run did not measure {probe} (`mitbench run --probe {probe}` on this boot \
             measures it)"
        );
        return (None, None, Some(why).filter(|_| syscalls > 0));
    };
    let Some(per) = toll.extra_ns else {
        return (None, None, toll.unmeasured.filter(|_| syscalls > 0));
    };
    let refill = toll.named_refill_win();
    (
        Some(SyscallShare::of(per, syscalls, cpu_s)),
        refill.map(|won| SyscallShare::of(won, syscalls, cpu_s)),
        None,
    )
}

/// The CPU time shares are of: the workload's without the counters where
/// that was measured, else the counted run's.
fn shares_of(counted: &Counted, correction: Option<&observer::Correction>) -> f64 {
    match correction {
        Some(correction) if correction.cpu_s.value > 0.0 => correction.cpu_s.value,
        _ => counted.cpu_s,
    }
}

impl Tax {
    /// The CPU time its shares are of (see `shares_of`).
    pub fn cpu_s(&self) -> f64 {
        shares_of(&self.counted, self.without_counters.as_ref())
    }
}
