//! Seed 004's trade in user space: hash a 16 MiB buffer in chunks, and
//! after each chunk yield never, always, or only when a co-runner on the
//! same CPU is waiting; the co-runner (cyclictest's method) records how
//! late it woke meanwhile. One item is one buffer.
//!
//! Worker and co-runner run at SCHED_FIFO 1 where the process may: a
//! waking co-runner then waits until the worker yields, as a task waits
//! for a non-preemptible kernel section. Under SCHED_OTHER the scheduler
//! preempts the worker for it, and yielding buys little. Either way the
//! worker sleeps briefly between buffers, untimed, as a kernel task waits
//! for its next request; that also keeps the two SCHED_FIFO threads under
//! the kernel's real-time limit (95% of each second by default), whose
//! stops for the rest of a second would otherwise be every policy's worst
//! latency. The
//! co-runner records every wake-up, those during that sleep too, once
//! each: a long stall is one late wake-up (the deadlines it spans are
//! skipped), so for never-yield the p99 and max tell, not the p50.

use super::algorithms::{self, Algorithm, Hasher, Output};
use crate::measure::harness::{Harness, tsc};
use crate::measure::probes::wake_latency::WakeLatency;
use crate::measure::probes::{
    Config, LatencyStep, NamedFigure, Outcome, Placement, Probe, Role, StepUnit, Unsupported,
    measure_in_own_thread,
};
use serde::Serialize;
use serde_json::json;
use std::fmt;
use std::hint::black_box;

pub const BUFFER_BYTES: usize = 16 << 20;
/// The chunk seed 004 settled on.
const SEED_CHUNK_BYTES: usize = 4 << 10;
pub const CHUNK_BYTES: [usize; 5] = [1 << 10, 4 << 10, 64 << 10, 1 << 20, 16 << 20];
const ALGORITHM: Algorithm = Algorithm::Sha256;
/// The co-runner's wake-up period.
const PERIOD_NS: u64 = 1_000_000;
const FIFO_PRIORITY: i32 = 1;
/// The share of the per-variant budget each of the fifteen variants takes.
const BUDGET_SHARE: f64 = 0.5;
/// The worker's untimed sleep between buffers.
const BETWEEN_BUFFERS_NS: u64 = 2_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Never,
    EveryChunk,
    WhenWaiting,
}

impl Policy {
    fn name(self) -> &'static str {
        match self {
            Policy::Never => "never",
            Policy::EveryChunk => "every",
            Policy::WhenWaiting => "waiting",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Policy::Never => "never yield within the buffer",
            Policy::EveryChunk => "sched_yield after every chunk",
            Policy::WhenWaiting => "sched_yield after a chunk only when the co-runner is waiting",
        }
    }
}

/// The buffer hashed `chunk` bytes at a time, yielding by `policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunking {
    policy: Policy,
    chunk: usize,
}

impl fmt::Display for Chunking {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.policy.name(), super::size_name(self.chunk))
    }
}

impl Serialize for Chunking {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        json!({
            "policy": self.policy.what(),
            "chunk_bytes": self.chunk,
            "bytes_per_item": BUFFER_BYTES,
            "algorithm": ALGORITHM.name(),
            "corunner_period_us": PERIOD_NS / 1000,
        })
        .serialize(s)
    }
}

impl Config for Chunking {
    fn role(&self) -> Role {
        Role::baseline_if(self.policy == Policy::Never && self.chunk == BUFFER_BYTES)
    }

    fn bytes_per_item(&self) -> Option<u64> {
        Some(BUFFER_BYTES as u64)
    }

    fn latency_step(&self) -> Option<LatencyStep> {
        Some(LatencyStep::new(
            self.policy.name(),
            self.chunk as u64,
            StepUnit::Bytes,
        ))
    }

    fn seed_choice(&self) -> Option<&'static str> {
        (self.chunk == SEED_CHUNK_BYTES).then_some("seed 004's 4 KiB chunks")
    }
}

/// Feeds `data` to `algorithm` `chunk` bytes at a time, calling
/// `between_chunks` after every chunk but the last.
pub fn hash_in_chunks(
    algorithm: Algorithm,
    data: &[u8],
    chunk: usize,
    mut between_chunks: impl FnMut(),
) -> Option<Output> {
    let mut hasher = Hasher::new(algorithm)?;
    let mut chunks = data.chunks(chunk.max(1)).peekable();
    while let Some(piece) = chunks.next() {
        hasher.update(piece);
        if chunks.peek().is_some() {
            between_chunks();
        }
    }
    Some(hasher.finish())
}

/// The worker's own account: yields taken and the longest run without one.
#[derive(Default)]
struct Stretches {
    buffers: u64,
    yields: u64,
    longest_ticks: u64,
    since: u64,
}

impl Stretches {
    fn start(&mut self) {
        self.since = tsc::now();
    }

    /// Ends the current stretch and yields the CPU.
    fn yield_now(&mut self) {
        self.end();
        std::thread::yield_now();
        self.yields += 1;
        self.start();
    }

    fn end(&mut self) {
        self.longest_ticks = self.longest_ticks.max(tsc::now() - self.since);
    }
}

probe! {
    /// hash 16 MiB in chunks, yielding never, after every chunk, or when a same-CPU co-runner
    /// waits
    pub struct Chunked: "section/chunked", seed "004", item "16 MiB buffer",
        requires ["SCHED_FIFO for the worker and co-runner threads (else SCHED_OTHER, noted)"];
}

impl Probe for Chunked {
    type Config = Chunking;

    fn configs(&self) -> Vec<Chunking> {
        [Policy::Never, Policy::EveryChunk, Policy::WhenWaiting]
            .into_iter()
            .flat_map(|policy| CHUNK_BYTES.map(|chunk| Chunking { policy, chunk }))
            .collect()
    }

    fn measure(&self, config: &Chunking, placement: &Placement, harness: &Harness) -> Outcome {
        let Chunking { policy, chunk } = *config;
        let harness = harness.with_budget_share(BUDGET_SHARE).for_long_items();
        let cpu = placement.cpu;
        let mut figures = Vec::new();
        let mut outcome = measure_in_own_thread(cpu, || {
            let (fifo, scheduling) = match crate::sys::set_fifo(FIFO_PRIORITY) {
                Ok(()) => (
                    Some(FIFO_PRIORITY),
                    format!("worker and co-runner SCHED_FIFO {FIFO_PRIORITY} on CPU {cpu}"),
                ),
                Err(e) => (
                    None,
                    format!(
                        "SCHED_FIFO refused ({e}): SCHED_OTHER on CPU {cpu}, which preempts the worker for the co-runner"
                    ),
                ),
            };
            let data = super::crypto::buffer(BUFFER_BYTES);
            let expected = algorithms::digest_once(ALGORITHM, &data)
                .ok_or_else(|| Unsupported::probe_failed("not a digest"))?;
            let corunner = WakeLatency::start(cpu, PERIOD_NS, fifo, harness.tsc_mhz())?;
            let mut stretches = Stretches::default();
            let mut wrong_digest = false;
            let measurement = harness.measure_prepared(
                |n| {
                    if n > 0 {
                        crate::sys::sleep_until_ns(crate::sys::monotonic_ns() + BETWEEN_BUFFERS_NS);
                    }
                },
                |_, n| {
                    for _ in 0..n {
                        stretches.start();
                        let digest = hash_in_chunks(ALGORITHM, black_box(&data), chunk, || {
                            let yield_now = match policy {
                                Policy::Never => false,
                                Policy::EveryChunk => true,
                                Policy::WhenWaiting => corunner.waiting(),
                            };
                            if yield_now {
                                stretches.yield_now();
                            }
                        });
                        stretches.end();
                        stretches.buffers += 1;
                        wrong_digest |= digest != Some(expected);
                    }
                },
            );
            let lateness = corunner.finish();
            if measurement.is_none() {
                // Interrupted before a sample was kept: nothing to judge.
                return Ok((None, Vec::new()));
            }
            if wrong_digest {
                return Err(Unsupported::probe_failed(
                    "the chunked digest differs from the one-shot digest",
                ));
            }
            let lateness =
                lateness.ok_or_else(|| Unsupported::probe_failed("the co-runner never woke"))?;
            let buffers = stretches.buffers.max(1) as f64;
            let mhz = harness.tsc_mhz();
            figures = vec![
                NamedFigure::new("yields", stretches.yields as f64 / buffers, "/buffer"),
                NamedFigure::new(
                    "longest stretch",
                    stretches.longest_ticks as f64 / mhz,
                    " us",
                ),
                NamedFigure::new("co-runner late p50", lateness.p50_us, " us"),
                NamedFigure::co_runner_wait_p99("p99", lateness.p99_us),
                NamedFigure::new("max", lateness.max_us, " us"),
                NamedFigure::new("wakes", lateness.wakes as f64, ""),
            ];
            Ok((measurement, vec![scheduling]))
        });
        if let Outcome::Measured(m) = &mut outcome {
            m.figures = figures;
        }
        outcome
    }
}
