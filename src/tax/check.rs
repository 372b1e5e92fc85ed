//! `mitbench tax --check`: the estimate tested against a toll mitbench can
//! switch for the workload alone. The workload runs in pairs, once plain
//! and once under an argument-reading seccomp filter ([`super::inject`]),
//! in alternating order; the difference of the two sides' quiet CPU time,
//! with its bootstrap interval, is set beside the prediction: the
//! workload's syscalls times what the filter adds to one syscall.
//!
//! Every difference here is of the two sides' lower quartiles
//! ([`stats::quantile_difference`]), not a median of per-pair differences:
//! on a guest whose host switches it between a fast and a slow state, a
//! half-second run lands in either, and one pair's difference is then the
//! state's, not the filter's. Noise only ever adds time, so the lower
//! quarter of each side is where both were measured in the same, quiet,
//! state.
//!
//! That toll is measured here in two regimes, because one crossing prices
//! another: on back-to-back getpid calls, and in a ping-pong between two
//! processes over eventfds, a context switch every two syscalls, where the
//! same filter costs more per syscall (docs/tax.md says how much; measured
//! in C too, so not an artefact of the harness). A workload's toll
//! is taken between the two by its own context switches per syscall.

use super::count::children_usage;
use super::inject;
use super::workloads::Workload;
use crate::analysis::figure::Figure;
use crate::analysis::stats;
use crate::measure::harness::{Harness, Settings, affinity};
use crate::sys;
use serde::Serialize;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Instant;

/// Rounds of plain and filtered measurements for the filter's toll.
const TOLL_ROUNDS: usize = 12;
/// The quantile of each side compared: see the module comment.
const QUIET_QUANTILE: f64 = 0.25;

#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// Comparisons in the injected filter.
    pub rules: usize,
    /// The CPU every run and measurement of the check was pinned to.
    pub cpu: usize,
    pub pairs: usize,
    /// What the filter adds to one syscall, ns: on back-to-back getpid
    /// calls, and in a same-CPU eventfd ping-pong between two processes (a
    /// context switch every two syscalls).
    pub hot_toll_ns: Figure,
    pub switching_toll_ns: Figure,
    /// The counted run's context switches per syscall (0 without syscalls).
    pub switches_per_syscall: f64,
    /// Those over the ping-pong's (0.5), at most 1: how far the workload's
    /// toll is taken from the hot one towards the switching one.
    pub switching_weight: f64,
    /// The toll the prediction uses: hot + (switching - hot) x weight; its
    /// interval is the two intervals so combined (a conservative bound).
    pub toll_per_syscall_ns: Figure,
    /// The counted run's syscalls and context switches.
    pub syscalls: u64,
    pub switches: u64,
    /// syscalls x toll, ms.
    pub predicted_ms: Figure,
    /// Filtered minus plain, lower quartile of each side's runs, ms.
    pub measured_cpu_ms: Figure,
    pub measured_wall_ms: Figure,
    /// measured CPU difference / predicted.
    pub measured_over_predicted: Option<f64>,
}

/// One figure measured plain and with something added (the filter here,
/// the counters in [`super::observer`]), one value per run or round.
#[derive(Default)]
pub(super) struct Sides {
    plain: Vec<f64>,
    with: Vec<f64>,
}

impl Sides {
    pub(super) fn push(&mut self, plain: f64, with: f64) {
        self.plain.push(plain);
        self.with.push(with);
    }

    /// What the addition adds, in the quiet state (see the module
    /// comment), scaled by `scale`, with its 95% interval.
    pub(super) fn difference(&self, scale: f64) -> Result<Figure, String> {
        let added = stats::quantile_difference(
            &self.plain,
            &self.with,
            QUIET_QUANTILE,
            0.95,
            stats::Summary::RESAMPLES,
            0x7a5,
        )
        .ok_or("no runs to compare")?;
        Ok(added.map(|v| v * scale))
    }
}

/// Round trips per switching round, and the syscalls and context switches
/// in one (an eventfd write and read on each side).
const PINGPONG_TRIPS: u64 = 20_000;
const PINGPONG_SYSCALLS: f64 = 4.0;
const PINGPONG_SWITCHES_PER_SYSCALL: f64 = 0.5;

/// The reference switching workload, one run of it: an eventfd ping-pong
/// between two processes on one CPU, [`PINGPONG_TRIPS`] round trips.
pub(super) fn reference_pingpong() -> Result<Vec<String>, String> {
    Workload::EventfdPingpong.command(PINGPONG_TRIPS)
}

/// The filter's toll per syscall in both regimes, ns: (hot, switching).
type Tolls = (Figure, Figure);

fn filter_tolls(program: &[libc::sock_filter], tsc_mhz: f64) -> Result<Tolls, String> {
    let hot = getpid_ticks(program, tsc_mhz)?.difference(1000.0 / tsc_mhz)?;
    let pingpong = reference_pingpong()?;
    let mut cpu = Sides::default();
    for round in 0..TOLL_ROUNDS {
        let (plain, filtered) = in_alternating_order(round, &pingpong, program)?;
        if plain.cpu_s <= 0.0 || filtered.cpu_s <= 0.0 {
            return Err("the reference ping-pong used no CPU time: it did not run".into());
        }
        cpu.push(plain.cpu_s, filtered.cpu_s);
    }
    let switching = cpu.difference(1e9 / (PINGPONG_TRIPS as f64 * PINGPONG_SYSCALLS))?;
    Ok((hot, switching))
}

/// Ticks per getpid in alternating rounds: plain on this thread, filtered
/// on a thread of its own that installed the filter, which ends with it.
fn getpid_ticks(program: &[libc::sock_filter], tsc_mhz: f64) -> Result<Sides, String> {
    let settings = Settings {
        budget_s: 0.05,
        warmup_s: 0.005,
        round_s: 0.005,
        max_samples: 400,
        ..Settings::quick()
    };
    let harness = Harness::new(settings, tsc_mhz);
    let getpid = || {
        // SAFETY: getpid ignores its arguments; zeros match no rule.
        let pid = unsafe { sys::syscall2(libc::SYS_getpid, 0, 0) };
        std::hint::black_box(pid)
    };
    let ticks = |harness: &Harness| {
        harness
            .measure_each(getpid)
            .map(|m| m.per_item.median.value)
            .ok_or_else(|| "the getpid measurement was interrupted".to_string())
    };
    std::thread::scope(|scope| {
        let (ask, asked) = mpsc::channel::<()>();
        let (answer, answered) = mpsc::channel::<Result<f64, String>>();
        let harness = &harness;
        scope.spawn(move || {
            if let Err(e) = inject::install(program) {
                let _ = answer.send(Err(format!("installing the filter failed: {e}")));
                return;
            }
            for () in asked {
                if answer.send(ticks(harness)).is_err() {
                    return;
                }
            }
        });
        let mut sides = Sides::default();
        for _ in 0..TOLL_ROUNDS {
            let plain = ticks(harness)?;
            // A thread that ended has said why (a refused filter) before.
            let _ = ask.send(());
            let filtered = answered
                .recv()
                .map_err(|_| "the filtered thread ended".to_string())??;
            sides.push(plain, filtered);
        }
        Ok(sides)
    })
}

/// What one run of a workload took.
#[derive(Debug, Clone, Copy)]
pub(super) struct Spent {
    /// User + system, its whole tree.
    pub cpu_s: f64,
    pub wall_s: f64,
}

/// `a` and `b`, the first of them by turns so a trend over time cancels:
/// (a's result, b's).
pub(super) fn in_turn<A, B>(
    turn: usize,
    a: impl FnOnce() -> Result<A, String>,
    b: impl FnOnce() -> Result<B, String>,
) -> Result<(A, B), String> {
    if turn.is_multiple_of(2) {
        let a = a()?;
        Ok((a, b()?))
    } else {
        let b = b()?;
        Ok((a()?, b))
    }
}

/// One plain and one filtered run of `command`, by turns: (plain, filtered).
fn in_alternating_order(
    turn: usize,
    command: &[String],
    program: &[libc::sock_filter],
) -> Result<(Spent, Spent), String> {
    in_turn(
        turn,
        || run_once(command, None),
        || run_once(command, Some(program)),
    )
}

/// Pins the calling thread, and what it starts from then on, to the CPU it
/// is on: (that CPU, the guard that unpins). The two vCPUs of a guest can
/// run at different speeds, and two sides of a comparison on different
/// CPUs would time the CPUs.
pub(super) fn pin_here() -> Result<(usize, affinity::PinGuard), String> {
    let cpu = affinity::current_cpu().unwrap_or(0);
    let guard =
        affinity::pin_current_thread(cpu).map_err(|e| format!("pinning to CPU {cpu}: {e}"))?;
    Ok((cpu, guard))
}

/// A workload's context switches per syscall, 0 without syscalls.
fn switches_per_syscall(syscalls: u64, switches: u64) -> f64 {
    if syscalls == 0 {
        return 0.0;
    }
    switches as f64 / syscalls as f64
}

/// How far a workload is from back-to-back syscalls towards the
/// ping-pong's regime, 0 to 1: its context switches per syscall over the
/// ping-pong's.
fn switching_weight(switches_per_syscall: f64) -> f64 {
    (switches_per_syscall / PINGPONG_SWITCHES_PER_SYSCALL).min(1.0)
}

/// One run of the workload, its output dropped.
pub(super) fn run_once(
    command: &[String],
    program: Option<&[libc::sock_filter]>,
) -> Result<Spent, String> {
    let (name, args) = command.split_first().ok_or("no command")?;
    let mut run = Command::new(name);
    run.args(args).stdout(Stdio::null()).stderr(Stdio::null());
    if let Some(program) = program {
        let program = program.to_vec();
        // SAFETY: install makes prctl calls only, safe between fork and exec.
        unsafe {
            run.pre_exec(move || inject::install(&program));
        }
    }
    let before = children_usage().cpu_s;
    let started = Instant::now();
    let status = run
        .status()
        .map_err(|e| format!("cannot run {name}: {e}"))?;
    // The workload's own failure is its business; a signal means it did not
    // run to its end, and the pair would compare unlike work.
    if let Some(signal) = status.signal() {
        return Err(format!("{name} was ended by signal {signal}"));
    }
    Ok(Spent {
        cpu_s: children_usage().cpu_s - before,
        wall_s: started.elapsed().as_secs_f64(),
    })
}

/// Runs the check for a workload whose counted run made `syscalls` and
/// `switches` context switches.
pub fn check(
    command: &[String],
    (syscalls, switches): (u64, u64),
    rules: usize,
    pairs: usize,
    tsc_mhz: f64,
) -> Result<Check, String> {
    // The whole check on one CPU: the filtered thread, the ping-pong
    // processes and the workload's runs inherit this thread's affinity (dd's
    // measured/predicted moved 1.06-1.45 over five runs unpinned, 0.94-1.09
    // pinned, on this guest in a noisy hour).
    let (cpu, _pinned) = pin_here()?;
    let program = inject::every_syscall_filter(rules);
    let (hot, switching) = filter_tolls(&program, tsc_mhz)?;
    let per_syscall = switches_per_syscall(syscalls, switches);
    let weight = switching_weight(per_syscall);
    let toll = hot.towards(switching, weight);
    let (mut cpu_time, mut wall) = (Sides::default(), Sides::default());
    for pair in 0..pairs {
        let (plain, filtered) = in_alternating_order(pair, command, &program)?;
        cpu_time.push(plain.cpu_s, filtered.cpu_s);
        wall.push(plain.wall_s, filtered.wall_s);
    }
    let measured_cpu_ms = cpu_time.difference(1e3)?;
    let measured_wall_ms = wall.difference(1e3)?;
    let predicted_ms = toll.map(|ns| super::share::total_ms(syscalls as f64, ns));
    Ok(Check {
        rules,
        cpu,
        pairs,
        hot_toll_ns: hot,
        switching_toll_ns: switching,
        switches_per_syscall: per_syscall,
        switching_weight: weight,
        toll_per_syscall_ns: toll,
        syscalls,
        switches,
        predicted_ms,
        measured_cpu_ms,
        measured_wall_ms,
        measured_over_predicted: (predicted_ms.value > 0.0)
            .then(|| measured_cpu_ms.value / predicted_ms.value),
    })
}
