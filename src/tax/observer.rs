//! What counting costs the counted run, measured here, and the workload's
//! CPU time with it taken out. The counters are an observer that costs:
//! the `raw_syscalls` tracepoint adds to every syscall while it is counted,
//! and inherited counters are switched with every task. A share of CPU
//! time is only honest against the time the workload spends without them.
//!
//! Both costs are measured on the shipped workloads, each run plain and
//! counted in alternating order on one CPU: `workload syscalls` gives the
//! cost per counted syscall; `workload eventfd-pingpong`, after its
//! syscalls' part, the cost per counted context switch. Differences are of
//! each side's lower quartile, as in `--check`.

use super::check::{Sides, in_turn, pin_here, reference_pingpong, run_once};
use super::count::{self, Counted};
use super::workloads::Workload;
use crate::analysis::figure::Figure;
use serde::Serialize;

/// Rounds of each side, and the syscalls in one run of the syscalls
/// workload (the ping-pong is the check's reference run).
const ROUNDS: usize = 6;
const SYSCALLS: u64 = 200_000;

/// The counters' cost to a counted run, and the workload's CPU time
/// without them.
#[derive(Debug, Clone, Serialize)]
pub struct Correction {
    /// CPU ns that counting adds to one syscall and to one context switch.
    pub per_syscall_ns: Figure,
    pub per_switch_ns: Figure,
    /// The counted run's CPU time, less its syscalls and switches times
    /// those costs, s (the interval from the costs' intervals).
    pub cpu_s: Figure,
}

/// One workload run plain and counted: (plain CPU s, counted CPU s, the
/// counted run's syscalls and switches).
fn both(command: &[String], turn: usize) -> Result<(f64, f64, u64, u64), String> {
    let (plain, counted) = in_turn(
        turn,
        || run_once(command, None),
        || count::run_counted(command, None),
    )?;
    let (syscalls, switches) = counted
        .syscalls_and_switches()
        .ok_or("a reference workload's syscalls or switches went uncounted")?;
    Ok((plain.cpu_s, counted.cpu_s, syscalls, switches))
}

/// Measures the costs and takes them out of `counted`'s CPU time; an
/// error says why where it cannot (the counts it needs are unavailable,
/// or a reference run failed).
pub fn correct(counted: &Counted) -> Result<Correction, String> {
    let (syscalls, switches) = counted
        .syscalls_and_switches()
        .ok_or("it needs the syscall and context-switch counts")?;
    let _pinned = pin_here()?;
    let calls = Workload::Syscalls.command(SYSCALLS)?;
    let pingpong = reference_pingpong()?;
    // CPU ns per syscall of the syscalls workload; CPU ns of a ping-pong run.
    let (mut per_call, mut pp_run) = (Sides::default(), Sides::default());
    let (mut pp_calls, mut pp_switches) = (0, 0);
    for turn in 0..ROUNDS {
        let (p, c, n, _) = both(&calls, turn)?;
        per_call.push(p * 1e9 / n as f64, c * 1e9 / n as f64);
        let (p, c, n, s) = both(&pingpong, turn)?;
        pp_run.push(p * 1e9, c * 1e9);
        (pp_calls, pp_switches) = (pp_calls.max(n), pp_switches.max(s));
    }
    let per_syscall_ns = per_call.difference(1.0)?;
    if pp_switches == 0 {
        return Err("the reference ping-pong counted no switches".into());
    }
    // The ping-pong's added time, less its syscalls' part, per switch.
    let pp = pp_run.difference(1.0)?;
    let per_switch =
        |added: f64, per_call: f64| (added - pp_calls as f64 * per_call) / pp_switches as f64;
    let ([pp_lo, pp_hi], [call_lo, call_hi]) = (pp.ends(), per_syscall_ns.ends());
    let per_switch_ns = Figure::new(
        per_switch(pp.value, per_syscall_ns.value),
        Some([per_switch(pp_lo, call_hi), per_switch(pp_hi, call_lo)]),
    );
    let without = |per_call: f64, per_switch: f64| {
        counted.cpu_s - (syscalls as f64 * per_call + switches as f64 * per_switch) / 1e9
    };
    let [switch_lo, switch_hi] = per_switch_ns.ends();
    let cpu_s = Figure::new(
        without(per_syscall_ns.value, per_switch_ns.value),
        Some([without(call_hi, switch_hi), without(call_lo, switch_lo)]),
    );
    Ok(Correction {
        per_syscall_ns,
        per_switch_ns,
        cpu_s,
    })
}
