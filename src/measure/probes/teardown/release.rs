//! Seed 000 in user space: release an index of M entries under its mutex
//! while two co-runners, one on the worker's CPU and one on the other,
//! keep taking the mutex for a short lookup. The policy says how often the
//! release unlocks, yields and relocks. One item is one entry released.
//!
//! The co-runners count lookups and record how long each waited for the
//! lock, only while a timed release runs; before sampling, a window with no
//! release (the worker busy without the lock) gives their reference rate.
//! All threads are SCHED_OTHER.

use super::index::{Index, Policy};
use crate::analysis::stats::{max_of, quantile_of};
use crate::measure::harness::{Harness, tsc};
use crate::measure::probes::corunner::CoRunner;
use crate::measure::probes::{
    Batched, Config, Declaration, LatencyStep, NamedFigure, Outcome, Placement, Probe, Role,
    StepUnit, Unsupported,
};
use serde::Serialize;
use serde_json::json;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub struct Release {
    /// log2 of the entries in the index.
    pub log2_entries: u32,
    declaration: Declaration,
}

const fn release(id: &'static str, log2_entries: u32) -> Release {
    Release {
        log2_entries,
        declaration: Declaration::new(id, "000", "entry released").summary("release an index under its mutex while a same-CPU and a cross-CPU co-runner take the mutex for lookups").requires(&[
                "a second CPU for the cross-CPU co-runner (else it is left out, noted)",
            ]),
    }
}

pub const RELEASES: [Release; 3] = [
    release("teardown/index-2^16", 16),
    release("teardown/index-2^19", 19),
    release("teardown/index-2^22", 22),
];

/// Batch sizes K; 4096 is the kernel's XA_CHECK_SCHED.
const KS: [usize; 5] = [1, 16, 256, 4096, 65536];
const XA_CHECK_SCHED: usize = 4096;
/// The share of the per-variant budget each of the eighteen variants takes.
const BUDGET_SHARE: f64 = 0.5;
/// Entries one sample releases at most: the whole of the smallest index;
/// from a larger one a slice, the index refilled (untimed) to between half
/// and all of M, so the co-runners always face a large index.
const SLICE: u32 = 1 << 16;
/// Times one sample lets go of the lock at most. Each let-go is a yield
/// to the same-CPU co-runner, microseconds where an entry alone is tens of
/// nanoseconds: a whole slice at K = 1 made one sample longer than a quick
/// run's budget for the whole variant (docs/why-the-code-is-so.md).
const LETS_GO: usize = 1 << 12;
/// The co-runners' reference window in every round, as a share of the
/// variant's budget: many scheduler time slices long, so the same-CPU
/// co-runner's rate beside a busy worker is its steady one. One round's
/// length was too short: it read the same-CPU co-runner well above its
/// reference under K = 1 and 16, and at times at no lookup (de18202).
const REFERENCE_SHARE: f64 = 1.0 / 30.0;
/// A co-runner sleeps this long between lookups: a task that needs the
/// lock now and then. One that never slept would be runnable at every
/// yield and take a whole time slice from each.
const THINK_NS: u64 = 20_000;
/// Lock waits recorded per co-runner at most.
const MAX_WAITS: usize = 1 << 20;

/// An index of `entries` released by `policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Releasing {
    policy: Policy,
    entries: u64,
}

impl fmt::Display for Releasing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.policy {
            Policy::Every(k) => write!(f, "K={k}"),
            Policy::WhenWaited => f.write_str("waiter"),
        }
    }
}

impl Serialize for Releasing {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let params = match self.policy {
            Policy::Every(k) => json!({
                "batch": k,
                "entries": self.entries,
                "policy": "unlock, sched_yield and relock after every K entries",
                "sample_entries": self.slice(),
                "xa_check_sched": k == XA_CHECK_SCHED,
            }),
            Policy::WhenWaited => json!({
                "entries": self.entries,
                "policy": "unlock, sched_yield and relock only when a lookup waits",
                "sample_entries": self.slice(),
            }),
        };
        params.serialize(s)
    }
}

impl Releasing {
    /// Entries one sample releases: [`SLICE`], or [`LETS_GO`] batches of K
    /// where that is fewer, and never more than the index holds.
    fn slice(&self) -> u32 {
        let most = match self.policy {
            Policy::Every(k) => {
                SLICE.min(u32::try_from(k.saturating_mul(LETS_GO)).unwrap_or(SLICE))
            }
            Policy::WhenWaited => SLICE,
        };
        most.min(u32::try_from(self.entries).unwrap_or(u32::MAX))
    }
}

impl Config for Releasing {
    fn role(&self) -> Role {
        Role::baseline_if(self.policy == Policy::Every(1))
    }

    fn batch(&self) -> Option<Batched> {
        match self.policy {
            Policy::Every(k) => Some(Batched {
                group: String::new(),
                size: k as u64,
            }),
            Policy::WhenWaited => None,
        }
    }

    fn latency_step(&self) -> Option<LatencyStep> {
        self.batch()
            .map(|b| LatencyStep::new(&b.group, b.size, StepUnit::Entries))
    }

    fn seed_choice(&self) -> Option<&'static str> {
        (self.policy == Policy::Every(XA_CHECK_SCHED)).then_some("XA_CHECK_SCHED, seed 000")
    }
}

/// What the worker and the co-runners share.
struct Shared {
    index: Index,
    /// Counts recorded windows' starts and ends: odd while one is open. A
    /// lookup is recorded when it began and ended in the same open window.
    window: AtomicU64,
}

impl Shared {
    fn open_window(&self) {
        self.window.fetch_add(1, Ordering::AcqRel);
    }

    fn close_window(&self) {
        self.window.fetch_add(1, Ordering::AcqRel);
    }
}

/// One co-runner's lookups over the recorded windows.
#[derive(Default)]
struct Lookups {
    lookups: AtomicU64,
    waits_ticks: Mutex<Vec<u64>>,
}

/// Starts a co-runner on `cpu` that looks up random keys of the index
/// until stopped, recording the lookups that fall within one timed release.
fn start_lookups(
    name: &str,
    cpu: usize,
    entries: u32,
    shared: &Arc<Shared>,
    record: &Arc<Lookups>,
) -> Result<CoRunner, Unsupported> {
    let (shared, record) = (shared.clone(), record.clone());
    let body = move |stop: &AtomicBool, rounds: &AtomicU64| {
        // Timer slack would stretch each sleep by up to the default 50 us.
        crate::sys::minimal_timer_slack();
        let mut rng = fastrand::Rng::with_seed(u64::from(entries) ^ cpu as u64);
        let mut waits = Vec::with_capacity(MAX_WAITS);
        while !stop.load(Ordering::Acquire) {
            let key = rng.u32(..entries);
            // A wait counts only if it began and ended within one timed
            // release, not behind the untimed refill or across windows.
            let window = shared.window.load(Ordering::Acquire);
            let asked = tsc::now();
            shared.index.lookup(key);
            let waited = tsc::now().saturating_sub(asked);
            if window % 2 == 1 && shared.window.load(Ordering::Acquire) == window {
                record.lookups.fetch_add(1, Ordering::Relaxed);
                if waits.len() < MAX_WAITS {
                    waits.push(waited);
                }
            }
            rounds.fetch_add(1, Ordering::Relaxed);
            crate::sys::sleep_until_ns(crate::sys::monotonic_ns() + THINK_NS);
        }
        if let Ok(mut kept) = record.waits_ticks.lock() {
            *kept = waits;
        }
    };
    CoRunner::start(name, cpu, body, || {})
}

/// The tail of a co-runner's lock waits, µs.
struct WaitTail {
    p99: f64,
    max: f64,
}

/// Lookups per second over `seconds`, and the lock waits' tail, None when
/// no lookup completed within a release.
fn summarise(record: &Lookups, seconds: f64, tsc_mhz: f64) -> (f64, Option<WaitTail>) {
    let rate = record.lookups.load(Ordering::Relaxed) as f64 / seconds.max(1e-9);
    let waits: Vec<f64> = record
        .waits_ticks
        .lock()
        .map(|w| w.iter().map(|&t| t as f64 / tsc_mhz).collect())
        .unwrap_or_default();
    let tail = quantile_of(&waits, 0.99)
        .zip(max_of(&waits))
        .map(|(p99, max)| WaitTail { p99, max });
    (rate, tail)
}

described_by_field!(Release);

impl Probe for Release {
    type Config = Releasing;

    fn configs(&self) -> Vec<Releasing> {
        let entries = 1u64 << self.log2_entries;
        KS.iter()
            .map(|&k| Policy::Every(k))
            .chain([Policy::WhenWaited])
            .map(|policy| Releasing { policy, entries })
            .collect()
    }

    fn measure(&self, config: &Releasing, placement: &Placement, harness: &Harness) -> Outcome {
        let policy = config.policy;
        let entries = 1u32 << self.log2_entries;
        let mhz = harness.tsc_mhz();
        let shared = Arc::new(Shared {
            index: Index::default(),
            window: AtomicU64::new(0),
        });
        shared.index.fill_to(entries);
        let same = Arc::new(Lookups::default());
        let other = Arc::new(Lookups::default());
        let mut runners = Vec::new();
        let mut notes = Vec::new();
        match start_lookups("mitbench-same", placement.cpu, entries, &shared, &same) {
            Ok(runner) => runners.push(runner),
            Err(e) => return Outcome::Unsupported(e),
        }
        let other_cpu = placement.other_cpu();
        match other_cpu {
            Some(cpu) => match start_lookups("mitbench-other", cpu, entries, &shared, &other) {
                Ok(runner) => runners.push(runner),
                Err(e) => return Outcome::Unsupported(e),
            },
            None => notes.push("no second CPU: the cross-CPU co-runner is left out".into()),
        }

        // The reference rate comes from the co-runners' own round counts
        // with the worker busy on its CPU without the lock (an idle worker
        // would let the CPU halt, and a halted vCPU wakes the co-runner
        // later than a busy one). No recording window is opened, so none of
        // its waits, all uncontended, can mix into the release's.
        let reference = reference_rates(&runners, harness);

        let slice = config.slice();
        let harness = harness
            .with_budget_share(BUDGET_SHARE)
            .for_long_items()
            .in_groups_of(u64::from(slice));
        let mut yields = 0u64;
        let mut released = 0u64;
        let mut recorded_ticks = 0u64;
        let measurement = harness.measure_prepared(
            |n| {
                if n > 0 && shared.index.len() < (entries / 2).max(slice) as usize {
                    shared.index.fill_to(entries);
                }
            },
            |_, n| {
                if n == 0 {
                    return;
                }
                let started = tsc::now();
                shared.open_window();
                yields += shared.index.release(n as usize, policy);
                shared.close_window();
                recorded_ticks += tsc::now() - started;
                released += n;
            },
        );
        // Stopping the co-runners hands over their recorded waits. Whatever
        // is left in the index goes with `shared`.
        drop(runners);
        let seconds = recorded_ticks as f64 / mhz / 1e6;
        let mut figures = vec![
            // The whole index's release, extrapolated from the cost per
            // entry of a slice: derived, and named so.
            NamedFigure::new(
                "estimated teardown of M",
                measurement.as_ref().map_or(0.0, |m| {
                    m.per_item.median.value * f64::from(entries) / mhz / 1000.0
                }),
                " ms",
            ),
            NamedFigure::new(
                "yields",
                yields as f64 / released.max(1) as f64 * f64::from(entries),
                "/teardown",
            ),
        ];
        co_runner_figures(
            [&same, &other],
            reference,
            seconds,
            mhz,
            &mut figures,
            &mut notes,
        );
        if policy == Policy::Every(XA_CHECK_SCHED) {
            notes.push("K = XA_CHECK_SCHED, the kernel's batch".into());
        }
        let mut outcome = Outcome::on_cpus(
            measurement,
            [placement.cpu].into_iter().chain(other_cpu).collect(),
        );
        if let Outcome::Measured(m) = &mut outcome {
            m.notes = notes;
            m.figures = figures;
        }
        outcome
    }
}

/// Each co-runner's lookups per second while the worker spins on its CPU
/// without the lock, over [`REFERENCE_SHARE`] of the `harness`'s budget:
/// the rate with no teardown.
fn reference_rates(runners: &[CoRunner], harness: &Harness) -> Vec<f64> {
    let window_s = harness.with_budget_share(REFERENCE_SHARE).settings.budget_s;
    let window = Duration::from_secs_f64(window_s);
    let rounds = |runner: &CoRunner| runner.rounds.load(Ordering::Relaxed);
    let before: Vec<u64> = runners.iter().map(rounds).collect();
    let started = std::time::Instant::now();
    while started.elapsed() < window {
        std::hint::spin_loop();
    }
    runners
        .iter()
        .zip(before)
        .map(|(runner, before)| (rounds(runner) - before) as f64 / started.elapsed().as_secs_f64())
        .collect()
}

/// The co-runners' figures over the release's recorded windows (`seconds`
/// of them, at `mhz`): each one's lookup rate against its rate with no
/// teardown, and its waits' tail; `records` are the same-CPU co-runner's
/// and the other CPU's.
fn co_runner_figures(
    records: [&Arc<Lookups>; 2],
    reference: Vec<f64>,
    seconds: f64,
    mhz: f64,
    figures: &mut Vec<NamedFigure>,
    notes: &mut Vec<String>,
) {
    // In the order the co-runners were started; the cross-CPU one only
    // where there is a second CPU.
    let names = [
        ["same-cpu lookups", "same-cpu wait p99", "same-cpu wait max"],
        [
            "other-cpu lookups",
            "other-cpu wait p99",
            "other-cpu wait max",
        ],
    ];
    let co_runners: Vec<_> = names
        .into_iter()
        .zip(records)
        .zip(reference)
        .map(|((names, record), rate)| (names, record, rate))
        .collect();
    for ([rate_name, p99_name, max_name], record, reference_rate) in co_runners {
        let (rate, waits) = summarise(record, seconds, mhz);
        if reference_rate > 0.0 {
            figures.push(NamedFigure::new(
                rate_name,
                rate / reference_rate * 100.0,
                "% of no-teardown",
            ));
        } else {
            notes.push(format!(
                "{rate_name}: unknown, no lookup in the no-teardown window"
            ));
        }
        match waits {
            Some(WaitTail { p99, max }) => {
                // The same-CPU co-runner's wait is the latency the
                // release's batch size buys; the other CPU's is the lock's.
                figures.push(if Arc::ptr_eq(record, records[0]) {
                    NamedFigure::co_runner_wait_p99(p99_name, p99)
                } else {
                    NamedFigure::new(p99_name, p99, " us")
                });
                figures.push(NamedFigure::new(max_name, max, " us"));
            }
            // Its waits spanned whole releases, which are not recorded.
            None => notes.push(format!(
                "{}: no lookup completed within a release",
                rate_name.trim_end_matches(" lookups")
            )),
        }
    }
}
