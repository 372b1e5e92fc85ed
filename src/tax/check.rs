//! `mitbench tax --check`: the estimate tested against a toll mitbench can
//! switch for the workload alone. The workload runs in pairs, once plain
//! and once under an argument-reading seccomp filter ([`super::inject`]),
//! in alternating order; the median of the pairs' CPU-time differences,
//! with its bootstrap interval, is set beside the prediction: the
//! workload's syscalls times what the filter adds to one syscall.
//!
//! That toll is measured here in two regimes, because one crossing prices
//! another: on back-to-back getpid calls, and in a ping-pong between two
//! processes over eventfds, a context switch every two syscalls, where the
//! same filter costs this guest about 1.5-2 times as much per syscall
//! (measured in C too, so not an artefact of the harness). A workload's toll
//! is taken between the two by its own context switches per syscall.

use super::count::children_cpu_s;
use super::inject;
use crate::harness::{Harness, Settings, stats};
use crate::sys;
use serde::Serialize;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Instant;

/// Rounds of plain and filtered measurements for the filter's toll.
const TOLL_ROUNDS: usize = 12;
const RESAMPLES: usize = 2000;

#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// Comparisons in the injected filter.
    pub rules: usize,
    pub pairs: usize,
    /// What the filter adds to one syscall, ns, with 95% intervals over
    /// rounds: on back-to-back getpid calls, and on a same-CPU eventfd
    /// ping-pong (a context switch every two syscalls), where it runs with
    /// colder predictors and caches.
    pub hot_toll_ns: f64,
    pub hot_toll_ci95_ns: Option<[f64; 2]>,
    pub switching_toll_ns: f64,
    pub switching_toll_ci95_ns: Option<[f64; 2]>,
    /// The workload's context switches per syscall over the ping-pong's
    /// (0.5), at most 1: how far its toll is taken from the hot one
    /// towards the switching one.
    pub switching_weight: f64,
    /// The toll the prediction uses: hot + (switching - hot) x weight.
    pub toll_per_syscall_ns: f64,
    pub toll_ci95_ns: Option<[f64; 2]>,
    /// The counted run's syscalls and context switches.
    pub syscalls: u64,
    pub switches: u64,
    /// syscalls x toll, ms.
    pub predicted_ms: f64,
    pub predicted_ci95_ms: Option<[f64; 2]>,
    /// Median over pairs of filtered minus plain, ms, with 95% intervals.
    pub measured_cpu_ms: f64,
    pub measured_cpu_ci95_ms: Option<[f64; 2]>,
    pub measured_wall_ms: f64,
    pub measured_wall_ci95_ms: Option<[f64; 2]>,
    /// measured CPU difference / predicted.
    pub measured_over_predicted: Option<f64>,
}

fn median_with_ci(values: &[f64]) -> (f64, Option<[f64; 2]>) {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let ci = (values.len() >= 5).then(|| {
        let (lo, hi) = stats::bootstrap_median_ci(values, 0.95, RESAMPLES, 0x7a5);
        [lo, hi]
    });
    (stats::median(&sorted), ci)
}

/// What the filter adds to one syscall, ns, in one round of each regime.
struct TollRound {
    /// On back-to-back getpid calls: predictors and caches warm.
    hot: f64,
    /// In `mitbench workload eventfd-pingpong`: a context switch every two
    /// syscalls.
    switching: f64,
}

/// Round trips per switching round, and the syscalls and context switches
/// in one (an eventfd write and read on each side).
const PINGPONG_TRIPS: u64 = 20_000;
const PINGPONG_SYSCALLS: f64 = 4.0;
const PINGPONG_SWITCHES_PER_SYSCALL: f64 = 0.5;

/// The filter's toll in alternating plain and filtered rounds of both
/// regimes.
fn filter_tolls(program: &[libc::sock_filter], tsc_mhz: f64) -> Result<Vec<TollRound>, String> {
    let hot = hot_tolls_ns(program, tsc_mhz)?;
    let exe = std::env::current_exe().map_err(|e| format!("finding mitbench's own binary: {e}"))?;
    let pingpong = [
        exe.to_string_lossy().into_owned(),
        "workload".into(),
        "eventfd-pingpong".into(),
        PINGPONG_TRIPS.to_string(),
    ];
    let per_syscall_ns = |cpu_s: f64| cpu_s * 1e9 / (PINGPONG_TRIPS as f64 * PINGPONG_SYSCALLS);
    hot.into_iter()
        .enumerate()
        .map(|(round, hot)| {
            let (plain, filtered) = in_alternating_order(round, &pingpong, program)?;
            if plain.0 <= 0.0 || filtered.0 <= 0.0 {
                return Err("the reference ping-pong used no CPU time: it did not run".into());
            }
            Ok(TollRound {
                hot,
                switching: per_syscall_ns(filtered.0 - plain.0),
            })
        })
        .collect()
}

/// What the filter adds to one getpid, ns, per round: rounds alternate
/// between this thread (plain) and a thread of its own that installed the
/// filter, which ends with the thread.
fn hot_tolls_ns(program: &[libc::sock_filter], tsc_mhz: f64) -> Result<Vec<f64>, String> {
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
            .map(|m| m.per_item.median)
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
        let mut deltas = Vec::new();
        for _ in 0..TOLL_ROUNDS {
            let plain = ticks(harness)?;
            // A thread that ended has said why (a refused filter) before.
            let _ = ask.send(());
            let filtered = answered
                .recv()
                .map_err(|_| "the filtered thread ended".to_string())??;
            deltas.push((filtered - plain) * 1000.0 / tsc_mhz);
        }
        Ok(deltas)
    })
}

/// A run's CPU seconds (user + system, its whole tree) and wall seconds.
type Spent = (f64, f64);

/// One plain and one filtered run of `command`, the first of them by turns
/// so a trend over time cancels: (plain, filtered).
fn in_alternating_order(
    turn: usize,
    command: &[String],
    program: &[libc::sock_filter],
) -> Result<(Spent, Spent), String> {
    if turn.is_multiple_of(2) {
        let plain = run_once(command, None)?;
        Ok((plain, run_once(command, Some(program))?))
    } else {
        let filtered = run_once(command, Some(program))?;
        Ok((run_once(command, None)?, filtered))
    }
}

/// How far a workload is from back-to-back syscalls towards the
/// ping-pong's regime, 0 to 1: its context switches per syscall over the
/// ping-pong's.
fn switching_weight(syscalls: u64, switches: u64) -> f64 {
    if syscalls == 0 {
        return 0.0;
    }
    (switches as f64 / syscalls as f64 / PINGPONG_SWITCHES_PER_SYSCALL).min(1.0)
}

/// One run of the workload, its output dropped: (CPU s, wall s).
fn run_once(command: &[String], program: Option<&[libc::sock_filter]>) -> Result<Spent, String> {
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
    let before = children_cpu_s();
    let started = Instant::now();
    let status = run
        .status()
        .map_err(|e| format!("cannot run {name}: {e}"))?;
    // The workload's own failure is its business; a signal means it did not
    // run to its end, and the pair would compare unlike work.
    if let Some(signal) = status.signal() {
        return Err(format!("{name} was ended by signal {signal}"));
    }
    Ok((children_cpu_s() - before, started.elapsed().as_secs_f64()))
}

/// Runs the check for a workload whose counted run made `syscalls` and
/// `switches` context switches.
pub fn check(
    command: &[String],
    counted: Counted,
    rules: usize,
    pairs: usize,
    tsc_mhz: f64,
) -> Result<Check, String> {
    let Counted { syscalls, switches } = counted;
    let program = inject::every_syscall_filter(rules);
    let rounds = filter_tolls(&program, tsc_mhz)?;
    let weight = switching_weight(syscalls, switches);
    let per_round = |f: &dyn Fn(&TollRound) -> f64| -> Vec<f64> { rounds.iter().map(f).collect() };
    let (hot, hot_ci) = median_with_ci(&per_round(&|r| r.hot));
    let (switching, switching_ci) = median_with_ci(&per_round(&|r| r.switching));
    let (toll, toll_ci) = median_with_ci(&per_round(&|r| r.hot + (r.switching - r.hot) * weight));
    let mut cpu_ms = Vec::new();
    let mut wall_ms = Vec::new();
    for pair in 0..pairs {
        let (plain, filtered) = in_alternating_order(pair, command, &program)?;
        cpu_ms.push((filtered.0 - plain.0) * 1e3);
        wall_ms.push((filtered.1 - plain.1) * 1e3);
    }
    let (measured_cpu_ms, measured_cpu_ci95_ms) = median_with_ci(&cpu_ms);
    let (measured_wall_ms, measured_wall_ci95_ms) = median_with_ci(&wall_ms);
    let ms = |ns: f64| syscalls as f64 * ns / 1e6;
    let predicted_ms = ms(toll);
    Ok(Check {
        rules,
        pairs,
        hot_toll_ns: hot,
        hot_toll_ci95_ns: hot_ci,
        switching_toll_ns: switching,
        switching_toll_ci95_ns: switching_ci,
        switching_weight: weight,
        toll_per_syscall_ns: toll,
        toll_ci95_ns: toll_ci,
        syscalls,
        switches,
        predicted_ms,
        predicted_ci95_ms: toll_ci.map(|[lo, hi]| [ms(lo), ms(hi)]),
        measured_cpu_ms,
        measured_cpu_ci95_ms,
        measured_wall_ms,
        measured_wall_ci95_ms,
        measured_over_predicted: (predicted_ms > 0.0).then(|| measured_cpu_ms / predicted_ms),
    })
}

/// What the counted run gives the check.
#[derive(Debug, Clone, Copy)]
pub struct Counted {
    pub syscalls: u64,
    pub switches: u64,
}
