//! The measurement harness: every probe hands it a closure and gets back a
//! [`Measurement`]. Probes never time themselves.
//!
//! Protocol, per probe variant:
//! 1. Calibrate a base batch size `b` so one batch of `b` items takes about
//!    `sample_us`; items far below the timer's own cost are thus timed many
//!    at a time.
//! 2. Warm up (caches, branch predictors, lazy kernel state).
//! 3. Time batches of `0, b, 2b, ..., kb` items round-robin, so slow drift
//!    hits every batch size alike. A sample whose two TSC reads ran on
//!    different CPUs is dropped.
//! 4. Fit ticks against batch size through the per-size medians. The
//!    intercept is the fixed cost of a sample (the TSC reads, the call into
//!    the closure): the empty batches measure it directly, to about a tick,
//!    where fitting it from the long batches would leave it buried in their
//!    noise. The slope is fitted through that intercept, and the intercept
//!    is subtracted from every non-empty sample before dividing by its
//!    batch size.
//! 5. Stop when the bootstrap 95% CI of the median per-item cost is within
//!    the target and the chronological quarters agree, or when the CI is
//!    within target but the quarters have disagreed at several checks in a
//!    row (the machine switches states; reported unstable), or the time
//!    budget is spent, or the user interrupts.

pub mod affinity;
pub mod counters;
pub mod interrupt;
pub mod phases;
pub mod stats;
pub mod tsc;

use counters::{CounterReport, CounterSet};
use phases::{Laps, PhaseCost};
use serde::Serialize;
use stats::{LineFit, Summary};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// How long and how precisely to measure each probe variant.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    /// Stop once the 95% CI half-width is within this percentage of the median.
    pub target_ci_pct: f64,
    /// ... or within this many ticks: below a tenth of a tick nothing is
    /// resolved anyway, and a near-zero median makes a relative target moot.
    pub abs_tolerance_ticks: f64,
    /// Wall-time budget per variant, warm-up and calibration included.
    pub budget_s: f64,
    pub warmup_s: f64,
    pub min_samples: usize,
    pub max_samples: usize,
    /// Target duration of the smallest batch.
    pub sample_us: f64,
    /// Batch sizes are 1..=this multiples of the base batch.
    pub batch_multiples: u64,
}

impl Settings {
    pub fn standard() -> Settings {
        Settings {
            target_ci_pct: 1.0,
            abs_tolerance_ticks: 0.1,
            budget_s: 3.0,
            warmup_s: 0.1,
            min_samples: 240,
            max_samples: 10_000,
            sample_us: 10.0,
            batch_multiples: 8,
        }
    }

    /// Less precision for a faster run.
    pub fn quick() -> Settings {
        Settings {
            target_ci_pct: 2.0,
            budget_s: 0.6,
            warmup_s: 0.03,
            min_samples: 80,
            ..Settings::standard()
        }
    }

    /// Largest tolerated CI half-width, in ticks, for a given median.
    fn tolerance(&self, median: f64) -> f64 {
        (self.target_ci_pct / 100.0 * median.abs()).max(self.abs_tolerance_ticks)
    }

    /// The CI is within target and the cost held still while measuring.
    fn within_target(&self, summary: &Summary) -> bool {
        summary.has_ci()
            && summary.ci_half_width() <= self.tolerance(summary.median)
            && self.stationary(summary)
    }

    /// Whether the block medians agree. Each quarter's median has about the
    /// whole CI half-width as its standard error, so noise alone spreads
    /// four of them by up to ~4.5 half-widths (99%); a wider spread, and
    /// one that matters at the precision asked for, is a change of state.
    pub fn stationary(&self, summary: &Summary) -> bool {
        let noise = NOISE_SPREAD * summary.ci_half_width();
        summary.drift() <= noise.max(DRIFT_FACTOR * self.tolerance(summary.median))
    }
}

/// See [`Settings::stationary`].
const NOISE_SPREAD: f64 = 5.0;
/// A drift seen at this many consecutive checks, each with more samples
/// than the last and a CI already within target, is the machine switching
/// between states: more samples would only narrow the CI of a mixture, so
/// sampling stops and the variant is reported unstable.
const SETTLED_DRIFT_CHECKS: usize = 4;
const DRIFT_FACTOR: f64 = 3.0;

/// The outcome of measuring one probe variant. Costs are TSC ticks per item.
#[derive(Debug, Clone, Serialize)]
pub struct Measurement {
    pub per_item: Summary,
    /// Ticks per sample against items per sample, through per-size medians.
    pub fit: LineFit,
    pub base_batch: u64,
    /// Items timed in kept samples.
    pub items: u64,
    /// Samples dropped because the thread changed CPU between its TSC reads.
    pub dropped_migrated: usize,
    pub elapsed_s: f64,
    /// The wall-time budget this variant was measured under.
    pub budget_s: f64,
    pub target_met: bool,
    /// Whether the cost held still while measuring (see [`Settings::stationary`]).
    pub stationary: bool,
    pub interrupted: bool,
    /// Counts over the sampling phase, or why there are none.
    pub counters: Result<CounterReport, String>,
    /// Cost per item of each phase a phased batch marked (see
    /// [`Harness::measure_phased`]); empty for other measurements.
    pub phases: Vec<PhaseCost>,
}

#[derive(Clone)]
pub struct Harness {
    pub settings: Settings,
    ticks_per_us: f64,
    /// Every batch size is a multiple of this (see `in_groups_of`).
    group: u64,
}

/// Batch sizes stop growing here even if a batch is still shorter than the
/// target (an empty closure never gets longer).
const MAX_BASE_BATCH: u64 = 1 << 24;

impl Harness {
    pub fn new(settings: Settings, tsc_mhz: f64) -> Harness {
        Harness {
            settings,
            ticks_per_us: tsc_mhz,
            group: 1,
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
        long.settings.min_samples = long.settings.min_samples.min(30);
        long
    }

    /// The same harness with `share` of the budget per variant, for probes
    /// with many variants that settle fast; `--quick` and `--budget` scale
    /// it alike.
    pub fn with_budget_share(&self, share: f64) -> Harness {
        let mut scaled = self.clone();
        scaled.settings.budget_s *= share.clamp(0.0, 1.0);
        scaled.settings.warmup_s = scaled
            .settings
            .warmup_s
            .min(scaled.settings.budget_s / 10.0);
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
        self.sample_until_done(|n| time_batch(&mut batch, n).map(|t| (t, ())))
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
        self.sample_until_done(|n| {
            let mut state = prepare(n);
            let ticks = time_batch(&mut |n| run(&mut state, n), n);
            drop(state);
            ticks.map(|t| (t, ()))
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
        let (mut measurement, kept) = self.sample_until_done(|n| {
            let ticks = time_batch(
                &mut |n| {
                    laps.start();
                    batch(n, &mut laps);
                },
                n,
            )?;
            Some((ticks, laps.take()))
        })?;
        measurement.phases = phases::summarise(names, &kept);
        Some(measurement)
    }

    /// The protocol in the module comment, over `sample(n)`: the ticks one
    /// batch of n items took and what else the sample recorded, or None
    /// when it migrated. Returns the measurement and, for every sample it
    /// is made of, the items and that record.
    fn sample_until_done<X>(
        &self,
        mut sample: impl FnMut(u64) -> Option<(u64, X)>,
    ) -> Option<(Measurement, Vec<(u64, X)>)> {
        let s = &self.settings;
        let started = Instant::now();
        let budget = Duration::from_secs_f64(s.budget_s);
        let base = self.calibrate(&mut |n| sample(n).map(|(ticks, _)| ticks))?;
        let warmup = Duration::from_secs_f64(s.warmup_s);
        while started.elapsed() < warmup {
            sample(base);
            if interrupt::requested() {
                return None;
            }
        }

        let mut counters = CounterSet::open();
        let capacity = (s.max_samples + s.batch_multiples as usize) * 9 / 8;
        let mut samples: Vec<(u64, u64)> = Vec::with_capacity(capacity);
        let mut records: Vec<(u64, X)> = Vec::with_capacity(capacity);
        let mut dropped_migrated = 0;
        // Samples of at least one item: what min/max_samples count.
        let mut timed = 0;
        let mut next_check = s.min_samples;
        // Consecutive checks at which the CI was within target but the
        // quarters disagreed (see `SETTLED_DRIFT_CHECKS`).
        let mut drifting_checks = 0;
        let mut interrupted = false;
        // The analysis of the samples as they stood at the last check; the
        // stopping decision and the report use the same one.
        let mut analysis: Option<(usize, LineFit, Summary)> = None;
        set_counting(&mut counters, true);
        loop {
            for multiple in 0..=s.batch_multiples {
                let n = base * multiple;
                match sample(n) {
                    Some((ticks, record)) => {
                        samples.push((n, ticks));
                        records.push((n, record));
                        timed += usize::from(n > 0);
                    }
                    None => dropped_migrated += 1,
                }
            }
            if interrupt::requested() {
                interrupted = true;
                break;
            }
            if timed >= next_check {
                set_counting(&mut counters, false);
                let (fit, summary) = analyse(&samples);
                let precise = summary.ci_half_width() <= s.tolerance(summary.median);
                drifting_checks = if precise && !s.stationary(&summary) {
                    drifting_checks + 1
                } else {
                    0
                };
                let done = s.within_target(&summary) || drifting_checks >= SETTLED_DRIFT_CHECKS;
                analysis = Some((samples.len(), fit, summary));
                if done {
                    break;
                }
                next_check = next_check * 3 / 2;
                set_counting(&mut counters, true);
            }
            if timed >= s.max_samples || started.elapsed() >= budget {
                break;
            }
        }
        set_counting(&mut counters, false);
        if timed == 0 {
            return None;
        }

        let (fit, per_item) = match analysis {
            Some((analysed, fit, summary)) if analysed == samples.len() => (fit, summary),
            _ => analyse(&samples),
        };
        let items: u64 = samples.iter().map(|&(n, _)| n).sum();
        let measurement = Measurement {
            target_met: s.within_target(&per_item),
            stationary: s.stationary(&per_item),
            per_item,
            fit,
            base_batch: base,
            items,
            dropped_migrated,
            elapsed_s: started.elapsed().as_secs_f64(),
            budget_s: s.budget_s,
            interrupted,
            counters: counters.and_then(|mut c| c.read(items)),
            phases: Vec::new(),
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
            if interrupt::requested() {
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

fn set_counting(counters: &mut Result<CounterSet, String>, on: bool) {
    if let Ok(c) = counters {
        if on { c.enable() } else { c.disable() }
    }
}

/// Times one batch of `n` items; None if the thread changed CPU meanwhile.
#[inline(always)]
fn time_batch<F: FnMut(u64)>(batch: &mut F, n: u64) -> Option<u64> {
    let start = tsc::read();
    batch(black_box(n));
    let end = tsc::read();
    (start.cpu == end.cpu).then(|| end.ticks.wrapping_sub(start.ticks))
}

/// The fit and the summary of per-item costs for the samples so far.
fn analyse(samples: &[(u64, u64)]) -> (LineFit, Summary) {
    let (fit, values) = per_item_costs(samples);
    (fit, Summary::of(&values, Summary::RESAMPLES))
}

/// Fits ticks against batch size through the median of each size, then turns
/// every non-empty sample into a per-item cost with the fixed cost removed.
/// Samples of 0 items measure that fixed cost and inform only the fit.
pub fn per_item_costs(samples: &[(u64, u64)]) -> (LineFit, Vec<f64>) {
    let mut by_size: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for &(n, ticks) in samples {
        by_size.entry(n).or_default().push(ticks as f64);
    }
    let fixed = by_size.remove(&0).map(|mut ticks| {
        ticks.sort_by(f64::total_cmp);
        stats::median(&ticks)
    });
    let (sizes, medians): (Vec<f64>, Vec<f64>) = by_size
        .into_iter()
        .map(|(n, mut ticks)| {
            ticks.sort_by(f64::total_cmp);
            (n as f64, stats::median(&ticks))
        })
        .unzip();
    let fit = match fixed {
        Some(fixed) => stats::fit_slope_through(fixed, &sizes, &medians),
        None => stats::fit_line(&sizes, &medians),
    };
    // With no empty batches and a single size the fixed cost cannot be
    // told apart: all of the time is attributed to the items, the
    // conservative choice.
    let fit = fit.unwrap_or_else(|| LineFit {
        slope: medians.last().zip(sizes.last()).map_or(0.0, |(m, n)| m / n),
        intercept: 0.0,
        r2: 1.0,
    });
    let values = samples
        .iter()
        .filter(|&&(n, _)| n > 0)
        .map(|&(n, ticks)| (ticks as f64 - fit.intercept) / n as f64)
        .collect();
    (fit, values)
}
