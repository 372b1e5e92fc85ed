//! `mitbench tax --check`: the estimate tested against a toll mitbench can
//! switch for the workload alone. The workload runs in pairs, once plain
//! and once under an argument-reading seccomp filter ([`super::inject`]),
//! in alternating order; the median of the pairs' CPU-time differences,
//! with its bootstrap interval, is set beside the prediction: the
//! workload's syscalls times what the filter adds to one syscall, measured
//! here on getpid in alternating rounds.

use super::count::children_cpu_s;
use super::inject;
use crate::harness::{Harness, Settings, stats};
use crate::sys;
use serde::Serialize;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Instant;

/// Pairs of getpid measurements, plain and filtered, for the filter's toll.
const TOLL_ROUNDS: usize = 12;
const RESAMPLES: usize = 2000;

#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// Comparisons in the injected filter.
    pub rules: usize,
    pub pairs: usize,
    /// What the filter adds to one syscall, ns: the median over rounds of
    /// filtered minus plain getpid, with its 95% interval.
    pub toll_per_syscall_ns: f64,
    pub toll_ci95_ns: Option<[f64; 2]>,
    /// The counted run's syscalls.
    pub syscalls: u64,
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

/// What `program` adds to one getpid, ns: rounds alternate between this
/// thread (plain) and a thread of its own that installed the filter, which
/// ends with the thread.
fn filter_toll_ns(program: &[libc::sock_filter], tsc_mhz: f64) -> Result<Vec<f64>, String> {
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

/// One run of the workload, its output dropped: (CPU s, wall s).
fn run_once(
    command: &[String],
    program: Option<&[libc::sock_filter]>,
) -> Result<(f64, f64), String> {
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
    run.status()
        .map_err(|e| format!("cannot run {name}: {e}"))?;
    Ok((children_cpu_s() - before, started.elapsed().as_secs_f64()))
}

/// Runs the check for a workload whose counted run made `syscalls`.
pub fn check(
    command: &[String],
    syscalls: u64,
    rules: usize,
    pairs: usize,
    tsc_mhz: f64,
) -> Result<Check, String> {
    let program = inject::every_syscall_filter(rules);
    let (toll, toll_ci) = median_with_ci(&filter_toll_ns(&program, tsc_mhz)?);
    let mut cpu = Vec::new();
    let mut wall = Vec::new();
    for pair in 0..pairs {
        // Alternate which goes first, so a trend over time cancels.
        let (plain, filtered) = if pair % 2 == 0 {
            let plain = run_once(command, None)?;
            (plain, run_once(command, Some(&program))?)
        } else {
            let filtered = run_once(command, Some(&program))?;
            (run_once(command, None)?, filtered)
        };
        cpu.push((filtered.0 - plain.0) * 1e3);
        wall.push((filtered.1 - plain.1) * 1e3);
    }
    let (measured_cpu_ms, measured_cpu_ci95_ms) = median_with_ci(&cpu);
    let (measured_wall_ms, measured_wall_ci95_ms) = median_with_ci(&wall);
    let ms = |ns: f64| syscalls as f64 * ns / 1e6;
    let predicted_ms = ms(toll);
    Ok(Check {
        rules,
        pairs,
        toll_per_syscall_ns: toll,
        toll_ci95_ns: toll_ci,
        syscalls,
        predicted_ms,
        predicted_ci95_ms: toll_ci.map(|[lo, hi]| [ms(lo), ms(hi)]),
        measured_cpu_ms,
        measured_cpu_ci95_ms,
        measured_wall_ms,
        measured_wall_ci95_ms,
        measured_over_predicted: (predicted_ms > 0.0).then(|| measured_cpu_ms / predicted_ms),
    })
}
