//! The measurement harness: every probe hands it a closure and gets back a
//! [`Measurement`] of one round. Probes never time themselves; the run
//! (`crate::measure::schedule`) asks for many short rounds per variant, interleaved
//! with the other variants' and bracketed by the machine's canary.
//!
//! Protocol, per round:
//! 1. The first round of a variant calibrates a base batch size `b` so one
//!    batch of `b` items takes about `sample_us` (items far below the
//!    timer's own cost are thus timed many at a time) and warms up for
//!    `warmup_s`; later rounds reuse `b` and warm up briefly, since what the
//!    probe prepared for the round (buffers, threads, filters) is new.
//! 2. Time batches of `0, b, 2b, ..., kb` items round-robin for `round_s`,
//!    so slow drift hits every batch size alike. A sample whose two TSC
//!    reads ran on different CPUs, or whose clock went backwards, is
//!    dropped and counted.
//! 3. Fit ticks against batch size through the per-size medians. The
//!    intercept is the fixed cost of a sample (the TSC reads, the call into
//!    the closure): the empty batches measure it directly, to about a tick,
//!    where fitting it from the long batches would leave it buried in their
//!    noise. The slope is fitted through that intercept, and the intercept
//!    is subtracted from every non-empty sample before dividing by its
//!    batch size. The round's figure is the median of those per-item costs.
//! 4. Perf counters are attached only to a round that asks for them (the
//!    counting round, whose timing is reported apart and never enters a
//!    figure): counting a context switch makes it dearer.

pub mod affinity;
pub mod canary;
pub mod counters;
pub mod interrupt;
pub mod machine;
pub mod phases;
pub mod reference;
pub mod steal;
pub mod tsc;

pub use crate::analysis::round::per_item_costs;

use crate::analysis::phases::{self as phase_costs, PhaseCost};
use crate::analysis::round::analyse;
use crate::analysis::stats::{LineFit, Summary};
use crate::unsupported::Unsupported;
use counters::{CounterReport, CounterSet};
use machine::{Live, Machine};
use phases::Laps;
use serde::{Deserialize, Serialize};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

/// How long and how precisely to measure each probe variant.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Settings {
    /// Stop adding rounds once the round-level 95% CI half-width is within
    /// this percentage of the headline figure.
    pub target_ci_pct: f64,
    /// ... or within this many ticks: a figure near zero (a derived part,
    /// thunked less plain) makes a relative target moot.
    pub abs_tolerance_ticks: f64,
    /// Wall-time budget per variant, all its rounds together.
    pub budget_s: f64,
    /// Warm-up of a variant's first round; later rounds warm up for a
    /// tenth of `round_s`.
    pub warmup_s: f64,
    /// Sampling time of one round.
    pub round_s: f64,
    /// Rounds every variant gets before the interval is judged.
    pub min_rounds: usize,
    pub max_rounds: usize,
    /// A probe's rounds are spread over at least this much wall time, so
    /// the machine's states land on all its variants.
    pub min_span_s: f64,
    /// Samples in one round at the most.
    pub max_samples: usize,
    /// Target duration of the smallest batch.
    pub sample_us: f64,
    /// Batch sizes are 1..=this multiples of the base batch.
    pub batch_multiples: u64,
    /// Whether a round waits for the canary to read the quiet level
    /// (`crate::measure::schedule::gate`); documents before it did not.
    #[serde(default)]
    pub wait_for_quiet: bool,
}

/// The most of a variant's budget its first round in a process warms up
/// for, one rule wherever a budget is set or shared out (the run's, a
/// fork's share, a probe's share): a small budget goes to rounds rather
/// than to warming up. Two rules (a fifth of the run's, a tenth of a
/// probe's share) had left a fork's first rounds warming up for 40% of a
/// quick run's budget a variant (docs/why-the-code-is-so.md).
pub const WARMUP_SHARE: f64 = 0.1;

impl Settings {
    /// These settings with `budget_s` seconds a variant, and the first
    /// round's warm-up at most [`WARMUP_SHARE`] of it.
    pub fn with_budget_s(&self, budget_s: f64) -> Settings {
        Settings {
            budget_s,
            warmup_s: self.warmup_s.min(budget_s * WARMUP_SHARE),
            ..self.clone()
        }
    }

    pub fn standard() -> Settings {
        Settings {
            target_ci_pct: 1.0,
            abs_tolerance_ticks: 0.1,
            budget_s: 3.0,
            warmup_s: 0.05,
            round_s: 0.012,
            min_rounds: 10,
            max_rounds: 200,
            min_span_s: 1.0,
            max_samples: 10_000,
            sample_us: 10.0,
            batch_multiples: 8,
            wait_for_quiet: true,
        }
    }

    /// Less precision for a faster run.
    pub fn quick() -> Settings {
        Settings {
            target_ci_pct: 2.0,
            budget_s: 0.5,
            warmup_s: 0.02,
            round_s: 0.005,
            min_rounds: 5,
            min_span_s: 0.3,
            ..Settings::standard()
        }
    }

    /// Largest tolerated CI half-width, in ticks, for a given figure.
    pub fn tolerance(&self, figure: f64) -> f64 {
        (self.target_ci_pct / 100.0 * figure.abs()).max(self.abs_tolerance_ticks)
    }
}

/// The outcome of one round of one probe variant. Costs are TSC ticks per
/// item.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measurement {
    pub per_item: Summary,
    /// Ticks per sample against items per sample, through per-size medians.
    pub fit: LineFit,
    /// Those medians: (items per batch, median ticks of its samples), to
    /// re-fit from.
    pub size_medians: Vec<(u64, f64)>,
    pub base_batch: u64,
    /// Items timed in kept samples.
    pub items: u64,
    /// Samples dropped because the thread changed CPU between its TSC reads.
    pub dropped_migrated: usize,
    /// Samples dropped because the TSC read lower at the end than at the
    /// start: a clock that is not monotonic on this machine.
    pub dropped_backwards: usize,
    pub elapsed_s: f64,
    /// The wall-time budget of the variant this round belongs to, all its
    /// rounds together.
    pub budget_s: f64,
    pub interrupted: bool,
    /// Counts over the round's sampling, or why there are none; None when
    /// the round was not a counting round.
    pub counters: Option<Result<CounterReport, Unsupported>>,
    /// Cost per item of each phase a phased batch marked (see
    /// [`Harness::measure_phased`]); empty for other measurements.
    pub phases: Vec<PhaseCost>,
    /// What the phase marks themselves cost, for phased measurements: the
    /// figure includes it.
    pub phase_marks: Option<phases::MarkCost>,
}

/// What the run tells the harness about the round it measures.
#[derive(Debug, Clone, Copy, Default)]
struct RoundSetup {
    /// The base batch an earlier round of the variant settled on.
    base: Option<u64>,
    /// Attach perf counters: a counting round.
    count_events: bool,
}

#[derive(Clone)]
pub struct Harness {
    pub settings: Settings,
    /// Time, canary and stop requests: the live machine in a run.
    pub machine: Arc<dyn Machine>,
    ticks_per_us: f64,
    /// Every batch size is a multiple of this (see `in_groups_of`).
    group: u64,
    round: RoundSetup,
}

/// Batch sizes stop growing here even if a batch is still shorter than the
/// target (an empty closure never gets longer).
const MAX_BASE_BATCH: u64 = 1 << 24;

/// A round's first sweep over the batch sizes ends early once it has taken
/// this many rounds' time: a sweep of batches of a hundred threads, each
/// with a TLS handshake, is cut; one of single such threads is not.
const LONG_SWEEP_ROUNDS: u32 = 4;

impl Harness {
    pub fn new(settings: Settings, tsc_mhz: f64) -> Harness {
        Harness::on(Arc::new(Live), settings, tsc_mhz)
    }

    /// A harness that reads time, the canary and stop requests from
    /// `machine`: a synthetic one in tests of the harness's logic.
    pub fn on(machine: Arc<dyn Machine>, settings: Settings, tsc_mhz: f64) -> Harness {
        Harness {
            settings,
            machine,
            ticks_per_us: tsc_mhz,
            group: 1,
            round: RoundSetup::default(),
        }
    }

    /// The same harness for a later round of a variant whose first round
    /// settled on `base_batch` (None: calibrate), counting events or not.
    pub fn for_round(&self, base_batch: Option<u64>, count_events: bool) -> Harness {
        Harness {
            round: RoundSetup {
                base: base_batch,
                count_events,
            },
            ..self.clone()
        }
    }

    /// The same harness with every batch a multiple of `items`: for items
    /// that are done `items` at a time (B pages per call), so a batch never
    /// ends in a partial group and n items are exactly n items of work.
    pub fn in_groups_of(&self, items: u64) -> Harness {
        Harness {
            group: items.max(1),
            ..self.clone()
        }
    }

    /// The TSC rate the harness converts with.
    pub fn tsc_mhz(&self) -> f64 {
        self.ticks_per_us
    }

    /// The same harness for items of a millisecond or more (hashing 16 MiB,
    /// tearing down an index): a sample is one item or none, since the
    /// sample's fixed cost is lost in the item anyway and batches of eight
    /// such items would spend the budget on a handful of samples.
    pub fn for_long_items(&self) -> Harness {
        let mut long = self.clone();
        long.settings.batch_multiples = 1;
        long
    }

    /// The same harness with `share` of the budget per variant, for probes
    /// with many variants that settle fast; `--quick` and `--budget` scale
    /// it alike.
    pub fn with_budget_share(&self, share: f64) -> Harness {
        let mut scaled = self.clone();
        scaled.settings = self
            .settings
            .with_budget_s(self.settings.budget_s * share.clamp(0.0, 1.0));
        scaled
    }

    /// Measures a closure that performs one item per call. The harness owns
    /// the loop, so the closure is inlined into it and costs no call.
    #[inline]
    pub fn measure_each<R, F: FnMut() -> R>(&self, mut item: F) -> Option<Measurement> {
        self.measure(|n| {
            for _ in 0..n {
                black_box(item());
            }
        })
    }

    /// Measures a closure that performs `n` items per call; `n` may be 0,
    /// and then it must do nothing. Returns None when interrupted before a
    /// single sample was kept.
    pub fn measure<F: FnMut(u64)>(&self, mut batch: F) -> Option<Measurement> {
        self.measure_samples(|n| time_batch(&mut batch, n).with(()))
            .map(|(m, _)| m)
    }

    /// Like [`measure`](Self::measure) for items that use something up (a
    /// fresh page to fault in): `prepare(n)` makes what `run` needs for n
    /// items, untimed, and the state is dropped after timing, untimed too.
    /// `prepare(0)` should be cheap; its state is never used.
    pub fn measure_prepared<S, P, F>(&self, mut prepare: P, mut run: F) -> Option<Measurement>
    where
        P: FnMut(u64) -> S,
        F: FnMut(&mut S, u64),
    {
        self.measure_samples(|n| {
            let mut state = prepare(n);
            let timed = time_batch(&mut |n| run(&mut state, n), n);
            drop(state);
            timed.with(())
        })
        .map(|(m, _)| m)
    }

    /// Like [`measure`](Self::measure), and the batch also marks where each
    /// of the named phases ends (see [`phases`]): the measurement then
    /// carries each phase's cost per item and its share of the whole.
    pub fn measure_phased<F>(&self, names: &[&'static str], mut batch: F) -> Option<Measurement>
    where
        F: FnMut(u64, &mut Laps),
    {
        let mut laps = Laps::new(names.len());
        let (mut measurement, kept) = self.measure_samples(|n| {
            let timed = time_batch(
                &mut |n| {
                    laps.start();
                    batch(n, &mut laps);
                },
                n,
            );
            timed.with(laps.take())
        })?;
        measurement.phases = phase_costs::summarise(names, &kept);
        let items: u64 = kept.iter().map(|(n, _)| n).sum();
        measurement.phase_marks = Some(phases::MarkCost {
            ticks_per_mark: phases::mark_ticks(),
            marks_per_item: laps.marks() as f64 / items.max(1) as f64,
        });
        Some(measurement)
    }

    /// One round of the protocol in the module comment, over `sample(n)`:
    /// the ticks one batch of n items took and what else the sample
    /// recorded. Returns the measurement and, for every sample it is made
    /// of, the items and that record; None when interrupted before a sample
    /// was kept. The probes reach it through `measure*`, which time a
    /// closure with the TSC; tests hand it synthetic samples.
    pub fn measure_samples<X>(
        &self,
        mut sample: impl FnMut(u64) -> Timed<X>,
    ) -> Option<(Measurement, Vec<(u64, X)>)> {
        let s = &self.settings;
        let machine = &*self.machine;
        let started = machine.now();
        let (base, warmup) = match self.round.base {
            Some(base) => (
                base.next_multiple_of(self.group),
                (s.round_s / 10.0).min(s.warmup_s),
            ),
            None => (self.calibrate(&mut |n| sample(n).ticks())?, s.warmup_s),
        };
        let warmup = Duration::from_secs_f64(warmup);
        while machine.now() - started < warmup {
            sample(base);
            if machine.stop_requested() {
                return None;
            }
        }

        let mut counters = self.round.count_events.then(CounterSet::open);
        let capacity = (s.max_samples + s.batch_multiples as usize) * 9 / 8;
        let mut samples: Vec<(u64, u64)> = Vec::with_capacity(capacity.min(1 << 14));
        let mut records: Vec<(u64, X)> = Vec::with_capacity(capacity.min(1 << 14));
        let (mut dropped_migrated, mut dropped_backwards) = (0, 0);
        // Samples of at least one item: what max_samples counts.
        let mut timed = 0;
        let mut interrupted = false;
        let round = Duration::from_secs_f64(s.round_s);
        let long_sweep = round * LONG_SWEEP_ROUNDS;
        let sampling = machine.now();
        set_counting(&mut counters, true);
        let mut first_sweep = true;
        'sweeps: loop {
            for multiple in 0..=s.batch_multiples {
                let n = base * multiple;
                match sample(n) {
                    Timed::Kept(ticks, record) => {
                        samples.push((n, ticks));
                        records.push((n, record));
                        timed += usize::from(n > 0);
                    }
                    Timed::Migrated => dropped_migrated += 1,
                    Timed::Backwards => dropped_backwards += 1,
                }
                // A sweep many rounds long (batches of a hundred threads,
                // each with a TLS handshake) ends once it has timed a batch:
                // its larger batches would make the round many times its
                // length, and the variant's budget buys more rounds instead.
                // A sweep a few rounds long keeps all its sizes.
                if first_sweep && timed > 0 && machine.now() - sampling >= long_sweep {
                    break 'sweeps;
                }
            }
            first_sweep = false;
            if machine.stop_requested() {
                interrupted = true;
                break;
            }
            if timed >= s.max_samples || machine.now() - sampling >= round {
                break;
            }
        }
        set_counting(&mut counters, false);
        if timed == 0 {
            return None;
        }

        let (fit, per_item, size_medians) = analyse(&samples);
        let items: u64 = samples.iter().map(|&(n, _)| n).sum();
        let measurement = Measurement {
            per_item,
            fit,
            base_batch: base,
            items,
            dropped_migrated,
            dropped_backwards,
            elapsed_s: (machine.now() - started).as_secs_f64(),
            budget_s: s.budget_s,
            interrupted,
            counters: counters.map(|c| c.and_then(|mut c| c.read(items))),
            phases: Vec::new(),
            phase_marks: None,
            size_medians,
        };
        Some((measurement, records))
    }

    /// Grows the batch until one takes `sample_us`, judging by the fastest of
    /// a few tries so one interrupted try cannot stop the growth early.
    fn calibrate(&self, sample: &mut impl FnMut(u64) -> Option<u64>) -> Option<u64> {
        let target = (self.settings.sample_us * self.ticks_per_us).max(1.0) as u64;
        let mut n = self.group;
        loop {
            // One try that already lasts ten targets settles it: a slower
            // second try could not change the answer, and for long items
            // (a whole teardown) each try costs a large part of the budget.
            let first = sample(n);
            let fastest = match first {
                Some(ticks) if ticks >= target.saturating_mul(10) => ticks,
                _ => first
                    .into_iter()
                    .chain((0..2).filter_map(|_| sample(n)))
                    .min()
                    .unwrap_or(0),
            };
            if self.machine.stop_requested() {
                return None;
            }
            if fastest >= target || n >= MAX_BASE_BATCH.max(self.group) {
                return Some(n);
            }
            let wanted = n.saturating_mul(target) / fastest.max(1);
            n = wanted
                .clamp(n * 2, n * 64)
                .min(MAX_BASE_BATCH.max(self.group))
                .next_multiple_of(self.group);
        }
    }
}

fn set_counting(counters: &mut Option<Result<CounterSet, Unsupported>>, on: bool) {
    if let Some(Ok(c)) = counters {
        if on { c.enable() } else { c.disable() }
    }
}

/// One timed batch: its ticks and what the sample recorded beside them, or
/// why it was dropped.
pub enum Timed<X> {
    Kept(u64, X),
    Migrated,
    Backwards,
}

impl Timed<()> {
    fn with<X>(self, record: X) -> Timed<X> {
        match self {
            Timed::Kept(ticks, ()) => Timed::Kept(ticks, record),
            Timed::Migrated => Timed::Migrated,
            Timed::Backwards => Timed::Backwards,
        }
    }
}

impl<X> Timed<X> {
    fn ticks(self) -> Option<u64> {
        match self {
            Timed::Kept(ticks, _) => Some(ticks),
            _ => None,
        }
    }
}

/// Times one batch of `n` items. A TSC that reads lower at the end would
/// wrap to ~1.8e19 ticks; such a sample is dropped, not kept.
#[inline(always)]
fn time_batch<F: FnMut(u64)>(batch: &mut F, n: u64) -> Timed<()> {
    let start = tsc::read();
    batch(black_box(n));
    let end = tsc::read();
    if start.cpu != end.cpu {
        Timed::Migrated
    } else if end.ticks < start.ticks {
        Timed::Backwards
    } else {
        Timed::Kept(end.ticks - start.ticks, ())
    }
}
