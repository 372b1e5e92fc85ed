//! TLB shootdown: a one-page mprotect, madvise(MADV_DONTNEED) or munmap,
//! with no other thread of this process running ("alone") and with one
//! spinning on the other CPU ("remote"). While a thread of the same mm runs
//! elsewhere, the kernel must interrupt that CPU to flush its TLB (whatever
//! the thread touches); the difference between the two is the cross-CPU
//! flush toll that XPFO paid on every page-ownership change.
//!
//! On a guest the remote figure has two host states: while the spinner's
//! vCPU runs, the flush waits for an IPI to reach it; while the host has
//! descheduled that vCPU, a paravirtual flush skips the IPI and leaves the
//! flush to the vCPU's return. The spinner times its own progress, and a
//! round says how much of it the spinner spent stalled
//! ([`crate::probes::Measured::partner_stalled`]).

use super::region::{discard, page_size, protect, touched, unmap};
use crate::harness::{Harness, Measurement};
use crate::probes::corunner::CoRunner;
use crate::probes::failures::Failures;
use crate::probes::{Config, Outcome, Placement, Probe, Role, Unsupported};
use serde::Serialize;
use serde_json::json;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

probe! {
    /// one-page mprotect, madvise, munmap with and without a thread of this process running on the
    /// other CPU
    pub struct Shootdown: "memory/shootdown", seed "003", item "call on one present page",
        requires ["a second allowed CPU for the remote variants"];
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Mprotect,
    Madvise,
    Munmap,
}

/// One call, with or without a thread of this process on the other CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flush {
    op: Op,
    remote: bool,
}

impl fmt::Display for Flush {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = match self.op {
            Op::Mprotect => "mprotect",
            Op::Madvise => "madvise",
            Op::Munmap => "munmap",
        };
        let with = if self.remote { "remote" } else { "alone" };
        write!(f, "{op}/{with}")
    }
}

impl Serialize for Flush {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let other = if self.remote {
            "spinning on the other CPU"
        } else {
            "none"
        };
        json!({ "other_thread": other }).serialize(s)
    }
}

impl Config for Flush {
    fn role(&self) -> Role {
        Role::baseline_if(*self == SHOOTDOWN_BASELINE)
    }

    fn needs_second_cpu(&self) -> bool {
        self.remote
    }
}

const SHOOTDOWN_BASELINE: Flush = Flush {
    op: Op::Mprotect,
    remote: false,
};

impl Probe for Shootdown {
    type Config = Flush;

    fn configs(&self) -> Vec<Flush> {
        [Op::Mprotect, Op::Madvise, Op::Munmap]
            .into_iter()
            .flat_map(|op| [false, true].map(|remote| Flush { op, remote }))
            .collect()
    }

    fn measure(&self, flush: &Flush, placement: &Placement, harness: &Harness) -> Outcome {
        let Flush { op, remote } = *flush;
        let failures = Failures::new();
        if !remote {
            return failures.outcome(measure_op(harness, op, &failures), vec![placement.cpu]);
        }
        let other = placement.other_cpu().unwrap_or(placement.cpu);
        let stalled_ns = Arc::new(AtomicU64::new(0));
        let body = {
            let stalled_ns = stalled_ns.clone();
            move |stop: &AtomicBool, rounds: &AtomicU64| spin(stop, rounds, &stalled_ns)
        };
        let spinner = match CoRunner::start("mitbench-spinner", other, body, || {}) {
            Ok(spinner) => spinner,
            Err(reason) => return Outcome::Unsupported(reason),
        };
        let before = spinner.rounds.load(Ordering::Relaxed);
        let stalled_before = stalled_ns.load(Ordering::Relaxed);
        let started = Instant::now();
        let measurement = measure_op(harness, op, &failures);
        let window_ns = started.elapsed().as_nanos() as f64;
        let stalled = stalled_ns.load(Ordering::Relaxed) - stalled_before;
        let progressed = spinner.rounds.load(Ordering::Relaxed) > before;
        let seen = spinner.cpu_seen;
        drop(spinner);
        if !progressed {
            return Outcome::Unsupported(Unsupported::probe_failed(
                "the thread on the other CPU made no progress while measuring",
            ));
        }
        let share = (stalled as f64 / window_ns).min(1.0);
        failures
            .outcome(measurement, vec![placement.cpu, seen])
            .with_partner_stalled(share)
    }
}

/// A gap in the spinner's progress at least this long is time its CPU was
/// taken from it: on the 2-vCPU AMD guest of 2026-12-02 the IPI a flush
/// sends it costs it 3-5 µs and the host's own exits up to about 90 µs,
/// while a descheduled vCPU is gone for milliseconds (up to 4 ms a gap).
const STALL: Duration = Duration::from_micros(100);

/// The other thread: keeps its own pages in its TLB and its CPU busy until
/// told to stop, counting rounds so the probe can see it ran, and adding
/// up the gaps in its progress of at least [`STALL`] into `stalled_ns`.
fn spin(stop: &AtomicBool, rounds: &AtomicU64, stalled_ns: &AtomicU64) {
    let buffer = vec![0u8; 16 * page_size()];
    let mut last = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        for offset in (0..buffer.len()).step_by(page_size()) {
            std::hint::black_box(buffer[offset]);
        }
        rounds.fetch_add(1, Ordering::Relaxed);
        let now = Instant::now();
        let gap = now - last;
        if gap >= STALL {
            stalled_ns.fetch_add(gap.as_nanos() as u64, Ordering::Relaxed);
        }
        last = now;
    }
}

fn measure_op(harness: &Harness, op: Op, failures: &Failures) -> Option<Measurement> {
    match op {
        Op::Mprotect => {
            let region = touched(1, failures)?;
            let mut read_only = false;
            harness.measure_each(|| {
                read_only = !read_only;
                let prot = if read_only {
                    libc::PROT_READ
                } else {
                    libc::PROT_READ | libc::PROT_WRITE
                };
                // SAFETY: our page; nothing writes it meanwhile.
                failures.check("mprotect", unsafe { protect(region.base(), 1, prot) });
            })
        }
        // SAFETY (both): pages of our region, not touched after the call.
        Op::Madvise => per_page(harness, failures, "madvise", |page| unsafe {
            discard(page, 1)
        }),
        Op::Munmap => per_page(harness, failures, "munmap", |page| unsafe {
            unmap(page, 1)
        }),
    }
}

/// `call` once per page over pages faulted in beforehand (untimed).
fn per_page(
    harness: &Harness,
    failures: &Failures,
    name: &'static str,
    call: impl Fn(*mut u8) -> bool,
) -> Option<Measurement> {
    let page = page_size();
    harness.measure_prepared(
        |n| touched(n, failures),
        |region, n| {
            if let Some(region) = region {
                for i in 0..n as usize {
                    failures.check(name, call(region.at(i * page)));
                }
            }
        },
    )
}
