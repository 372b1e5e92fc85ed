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
//! ([`crate::measure::probes::Measured::partner_stalled`]).
//!
//! Where the host placed the two vCPUs sets the figure too (two threads of
//! one core, two cores sharing a cache, or cores apart: see
//! docs/why-the-code-is-so.md). Before each remote round, untimed, the
//! measuring thread and the spinner pass a cache line back and forth, and
//! the round carries the median trip as a figure of its own.
//!
//! A remote round runs in a child process of its own: the spinner's CPU
//! stays in the address space's mask after the spinner is gone, and in
//! the worker's own the `alone` rounds' flushes would reach it too.

use super::region::{discard, page_size, protect, touched, unmap};
use crate::measure::harness::{Harness, Measurement};
use crate::measure::probes::corunner::CoRunner;
use crate::measure::probes::failures::Failures;
use crate::measure::probes::{
    Config, NamedFigure, Outcome, Placement, Probe, Role, Unsupported, measure_in_own_process,
};
use serde::Serialize;
use serde_json::json;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
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
        if !remote {
            let failures = Failures::new();
            return failures.outcome(measure_op(harness, op, &failures), vec![placement.cpu]);
        }
        measure_in_own_process(|| measure_remote(op, placement, harness))
    }
}

/// A remote round: the spinner started on the other CPU, the trips to it
/// timed, then the flushes.
fn measure_remote(op: Op, placement: &Placement, harness: &Harness) -> Outcome {
    let failures = Failures::new();
    let other = placement.other_cpu().unwrap_or(placement.cpu);
    let partner = Arc::new(Partner::default());
    let body = {
        let partner = partner.clone();
        move |stop: &AtomicBool, rounds: &AtomicU64| spin(stop, rounds, &partner)
    };
    let spinner = match CoRunner::start("mitbench-spinner", other, body, || {}) {
        Ok(spinner) => spinner,
        Err(reason) => return Outcome::Unsupported(reason),
    };
    let trip_ns = round_trip_ticks(&partner).map(|ticks| ticks / harness.tsc_mhz() * 1e3);
    let before = spinner.rounds.load(Ordering::Relaxed);
    let stalled_before = partner.stalled_ns.load(Ordering::Relaxed);
    let started = Instant::now();
    let measurement = measure_op(harness, op, &failures);
    let window_ns = started.elapsed().as_nanos() as f64;
    let stalled = partner.stalled_ns.load(Ordering::Relaxed) - stalled_before;
    let progressed = spinner.rounds.load(Ordering::Relaxed) > before;
    let seen = spinner.cpu_seen;
    drop(spinner);
    if !progressed {
        return Outcome::Unsupported(Unsupported::probe_failed(
            "the thread on the other CPU made no progress while measuring",
        ));
    }
    let share = (stalled as f64 / window_ns).min(1.0);
    let mut outcome = failures
        .outcome(measurement, vec![placement.cpu, seen])
        .with_partner_stalled(share);
    if let (Outcome::Measured(m), Some(ns)) = (&mut outcome, trip_ns) {
        m.figures
            .push(NamedFigure::new(PARTNER_ROUND_TRIP, ns, " ns"));
    }
    outcome
}

/// The figure a remote round carries beside its cost: where the host
/// placed the two vCPUs, as one cache line's trip there and back.
pub const PARTNER_ROUND_TRIP: &str = "cache-line round trip to the other CPU";

/// What the measuring thread and the spinner share: the spinner's stalled
/// time, and a flag the measuring thread raises and the spinner answers.
#[derive(Default)]
struct Partner {
    stalled_ns: AtomicU64,
    flag: AtomicU32,
}

/// The flag's states: at rest (all through a timed round), raised by the
/// measuring thread, answered by the spinner.
const IDLE: u32 = 0;
const ASKED: u32 = 1;
const ANSWERED: u32 = 2;

/// Trips timed before a round: their median is the round's figure.
const TRIPS: usize = 51;

/// The median of [`TRIPS`] cache-line round trips to the spinner, in TSC
/// ticks; None where the spinner has not answered within a few
/// milliseconds (it is not running, and the round's stall says so).
fn round_trip_ticks(partner: &Partner) -> Option<f64> {
    let deadline = Instant::now() + Duration::from_millis(20);
    let mut trips = Vec::with_capacity(TRIPS);
    for _ in 0..TRIPS {
        let start = crate::measure::harness::tsc::now();
        partner.flag.store(ASKED, Ordering::Release);
        let mut polls = 0u32;
        while partner.flag.load(Ordering::Acquire) != ANSWERED {
            polls = polls.wrapping_add(1);
            // The clock is read once in many polls: a read on every one
            // would be most of a trip.
            if polls.is_multiple_of(4096) && Instant::now() > deadline {
                partner.flag.store(IDLE, Ordering::Release);
                return None;
            }
            std::hint::spin_loop();
        }
        trips.push((crate::measure::harness::tsc::now() - start) as f64);
    }
    partner.flag.store(IDLE, Ordering::Release);
    Some(crate::analysis::stats::median_in_place(&mut trips))
}

/// A gap in the spinner's progress at least this long is time its CPU was
/// taken from it: on the 2-vCPU AMD guest of 2026-12-02 the IPI a flush
/// sends it costs it 3-5 µs and the host's own exits up to about 90 µs,
/// while a descheduled vCPU is gone for milliseconds (up to 4 ms a gap).
const STALL: Duration = Duration::from_micros(100);

/// The other thread: keeps its own pages in its TLB and its CPU busy until
/// told to stop, counting rounds so the probe can see it ran, adding up the
/// gaps in its progress of at least [`STALL`] into the partner's stalled
/// time, and answering the measuring thread's flag. While the round is
/// timed the flag rests: the line stays in both caches and the check costs
/// the spinner a load.
fn spin(stop: &AtomicBool, rounds: &AtomicU64, partner: &Partner) {
    let buffer = vec![0u8; 16 * page_size()];
    let mut last = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        if partner.flag.load(Ordering::Acquire) == ASKED {
            answer_trips(stop, &partner.flag);
            // The trips are no stall of the round after them.
            last = Instant::now();
            continue;
        }
        for offset in (0..buffer.len()).step_by(page_size()) {
            std::hint::black_box(buffer[offset]);
        }
        rounds.fetch_add(1, Ordering::Relaxed);
        let now = Instant::now();
        let gap = now - last;
        if gap >= STALL {
            partner
                .stalled_ns
                .fetch_add(gap.as_nanos() as u64, Ordering::Relaxed);
        }
        last = now;
    }
}

/// Answers the measuring thread's trips as they come, polling the flag
/// with nothing else in between (any other work would be part of the
/// trip), until it comes to rest. An answer to a flag the measuring
/// thread has meanwhile put to rest is not given.
fn answer_trips(stop: &AtomicBool, flag: &AtomicU32) {
    while !stop.load(Ordering::Relaxed) {
        match flag.load(Ordering::Acquire) {
            IDLE => return,
            ASKED => {
                let _ = flag.compare_exchange(ASKED, ANSWERED, Ordering::AcqRel, Ordering::Relaxed);
            }
            _ => std::hint::spin_loop(),
        }
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
