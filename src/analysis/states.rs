//! The machine's speed levels, told apart by a fixed canary.
//!
//! Cloud guests are slowed by their host every 0.1-1 s. On some hosts the
//! whole CPU wanders; on others (the AMD EPYC guests) the host slows the
//! syscall path and branch prediction in a sharp quiet level plus a
//! continuum of slow levels, +4% to +30%, not one slow state. A variant
//! measured inside one level carries that level's figure and a tight
//! interval, and the next run lands in another. So every round is
//! bracketed by a canary, a fixed workload timed the same way all run
//! long, and the rounds whose canaries both read the quiet level carry the
//! headline figure.
//!
//! The quiet level is read from the readings themselves: noise only ever
//! adds time, so it is the densest stretch just above the fastest readings
//! (a low quantile), and it reaches up as far as the readings stay dense
//! ([`quiet_band`]): 2% where the host's quiet level is sharp, wider where
//! the quiet speed itself wanders over the run. A fixed wide band counted a
//! busy host's first slow levels as quiet, and the forks' "quiet" figures
//! then disagreed (docs/why-the-code-is-so.md). A clean two-cluster gap
//! below the band also splits.
//!
//! A run may sit in a slow level from its first reading to its last; its
//! lowest readings are then no quiet level at all. Where the history knows
//! the quiet canary of this boot, the model is anchored to it
//! ([`StateModel::fit_anchored`]), and a run above it says so. Which it is
//! is told by time, not shape (a host's slow stretch can be one sharp
//! level, a traced syscall path as noisy as a continuum): the canary is
//! watched for the known level longer than a slow stretch lasts, before a
//! gated run's first round and after a `--no-wait` run's last
//! (`Scheduler::wait_for_known_level`, `watch_for_known_level`), so both
//! kinds of run decide on the same evidence. Where it never came back the
//! level moved (the host's speed, or a real cost added on the syscall
//! path: an audit rule, a trace event). That run's own lowest level is its
//! quiet level, and the move a finding of its own (`moved_pct`): calling
//! it a slow level had dropped every row of a run with a real regression.
//! Where the watch was cut short (Ctrl-C), nothing tells the two apart:
//! every reading is slow (`above_known_pct`), and the run says so.

use crate::analysis::stats::quantile;
use serde::{Deserialize, Serialize};

/// The quiet level reaches at most this far above the fastest readings,
/// and at least [`MIN_QUIET_BAND`]: the canary's own spread in one level is
/// under 1% (the best of several samples is taken).
pub const QUIET_BAND: f64 = 0.12;
pub const MIN_QUIET_BAND: f64 = 0.02;
/// The density the quiet level's upper edge is read at: the first 1% step
/// above the fastest readings holding clearly under this share of the
/// densest step below it: where the quiet level thins out, the band ends
/// (docs/why-the-code-is-so.md has a busy host's steps).
const BAND_STEP: f64 = 0.01;
const EDGE_OF_PEAK: f64 = 0.25;
/// The quantile of all readings taken as the fast reference: low enough to
/// be in the quiet level while the slow ones hold up to 95% of the run.
const REFERENCE_QUANTILE: f64 = 0.02;
/// A two-cluster split counts when the slow cluster is at least this much
/// slower and the clusters explain this share of the readings' variance (a
/// single normal cluster, split at its median, explains 2/pi = 64%).
const MIN_SPLIT_SLOWDOWN: f64 = 0.06;
const MIN_SPLIT_EXPLAINED: f64 = 0.85;
/// Fewer readings than this tell nothing about levels: all are quiet.
pub const MIN_READINGS: usize = 8;
/// Slow readings below this share of all are single disturbances, not a
/// level of the machine; they still do not count as quiet.
const MIN_SLOW_SHARE: f64 = 0.03;
/// A fast level holding less than this share of the run, under one tight
/// level (readings within [`MIN_QUIET_BAND`] of each other) holding at
/// least [`HOLDING_SHARE`] of it, is a fast minority, not the quiet level
/// ([`holding_level`]). A busy host's quiet level held 35-89% of its runs'
/// readings here, and its slow readings one tight level at most 46%.
const FAST_MINORITY: f64 = 0.25;
const HOLDING_SHARE: f64 = 0.5;

/// How the run's canary readings split into the quiet level and the slow
/// ones.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StateModel {
    /// Canary ticks per call at or below which a reading is quiet.
    /// Infinite (null in JSON) where there were too few readings to split.
    #[serde(deserialize_with = "null_is_infinite")]
    pub quiet_threshold: f64,
    /// Median canary of the quiet and of the slow readings; NaN (null in
    /// JSON) without readings. Where the run never reached a known quiet
    /// level, the quiet canary is that level's (`known_quiet`).
    #[serde(deserialize_with = "null_is_nan")]
    pub quiet_canary: f64,
    pub slow_canary: Option<f64>,
    /// Share of readings above the threshold, 0 to 1.
    pub slow_share: f64,
    pub readings: usize,
    /// Whether the slow readings form levels of their own (enough of them
    /// beyond the quiet band, or a run that never reached the known quiet
    /// level) rather than stray ones.
    pub two_states: bool,
    /// How far above the fastest readings the quiet level reached, as a
    /// fraction ([`quiet_band`]); documents before it used [`QUIET_BAND`].
    #[serde(default = "fixed_band")]
    pub quiet_band: f64,
    /// The slow readings' 10th and 90th percentiles, in percent above the
    /// quiet canary: where the slow levels lay.
    #[serde(default)]
    pub slow_levels_pct: Option<[f64; 2]>,
    /// The quiet canary the history knew for this boot, where it was given.
    #[serde(default)]
    pub known_quiet: Option<f64>,
    /// How far the run's own fastest readings sat above `known_quiet`, in
    /// percent, where they sat above its quiet band: the whole run was in
    /// a slow level.
    #[serde(default)]
    pub above_known_pct: Option<f64>,
    /// How far this run's own quiet level sat above `known_quiet`, in
    /// percent, where it sat above that level's band and the run's start
    /// waited a slow stretch's length without reaching it: the quiet level
    /// moved (drift, or a cost added on the syscall path), which is not a
    /// slow level. None in documents before it.
    #[serde(default)]
    pub moved_pct: Option<f64>,
}

/// A quiet level as a run measured it: its canary (median quiet reading)
/// and how far above its fastest readings it reached (`quiet_band`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QuietLevel {
    pub canary: f64,
    pub band: f64,
}

impl QuietLevel {
    /// The canary at or below which a reading is at this level.
    pub fn threshold(&self) -> f64 {
        self.canary * (1.0 + self.band.clamp(MIN_QUIET_BAND, QUIET_BAND))
    }

    /// Whether `other` is this level as far as their own spread tells:
    /// within the wider of the two bands (at least [`MIN_QUIET_BAND`]).
    /// Two runs' levels further apart are a level shift between them: a
    /// cost added on the syscall path, or the host's speed.
    pub fn holds(&self, other: &QuietLevel) -> bool {
        (other.canary / self.canary - 1.0).abs() <= self.band_with(other)
    }

    /// The band two levels are held to one another by, as a fraction.
    pub fn band_with(&self, other: &QuietLevel) -> f64 {
        self.band.max(other.band).clamp(MIN_QUIET_BAND, QUIET_BAND)
    }
}

fn fixed_band() -> f64 {
    QUIET_BAND
}

/// JSON has no infinity or NaN: serde_json writes them as null, and these
/// read null back as what it stood for.
fn null_is_infinite<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::INFINITY))
}

fn null_is_nan<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

impl StateModel {
    /// Splits canary readings (ticks per canary call) taken so far while
    /// measuring, with nothing known beforehand; see the module comment.
    /// A fast minority is the quiet level here ([`holding_level`] is read
    /// over a whole run only): in a window of seconds it is more often the
    /// host's quiet level between slow stretches, which the gate waits for.
    pub fn fit(readings: &[f64]) -> StateModel {
        StateModel::split(readings, None, false, false)
    }

    /// Splits a whole run's canary readings, anchored where `known` (the
    /// quiet level the history read on this boot) lies below this run's
    /// own: a run whose fastest readings sit above the known level's band
    /// never reached the quiet level, and has every reading slow, rather
    /// than its lowest slow level taken for quiet.
    pub fn fit_anchored(readings: &[f64], known: Option<QuietLevel>) -> StateModel {
        StateModel::fit_against(readings, known, false)
    }

    /// [`StateModel::fit_anchored`], where `moved` says the canary was
    /// watched longer than a slow stretch lasts without reaching the known
    /// level: its own lowest level is then the quiet level, moved.
    pub fn fit_against(readings: &[f64], known: Option<QuietLevel>, moved: bool) -> StateModel {
        StateModel::split(readings, known, moved, true)
    }

    /// The split itself; `whole_run` says the readings are a whole run's,
    /// where a fast minority under a level that holds the run is no quiet
    /// level ([`holding_level`]).
    fn split(
        readings: &[f64],
        known: Option<QuietLevel>,
        moved: bool,
        whole_run: bool,
    ) -> StateModel {
        let known = known.filter(|k| k.canary.is_finite() && k.canary > 0.0);
        let known_quiet = known.map(|k| k.canary);
        let mut sorted: Vec<f64> = readings
            .iter()
            .copied()
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect();
        sorted.sort_by(f64::total_cmp);
        if sorted.len() < MIN_READINGS {
            let quiet_canary = if sorted.is_empty() {
                f64::NAN
            } else {
                quantile(&sorted, 0.5)
            };
            return StateModel {
                quiet_threshold: f64::INFINITY,
                quiet_canary,
                slow_canary: None,
                slow_share: 0.0,
                readings: sorted.len(),
                two_states: false,
                quiet_band: QUIET_BAND,
                slow_levels_pct: None,
                known_quiet,
                above_known_pct: None,
                moved_pct: None,
            };
        }
        let own = quantile(&sorted, REFERENCE_QUANTILE);
        let own_band = quiet_band(&sorted, own);
        let own_threshold = match two_cluster_gap(&sorted) {
            Some(gap) => gap.min(own * (1.0 + own_band)),
            None => own * (1.0 + own_band),
        };
        // A fast minority at the level the history knows for this boot is
        // that level, however few readings reached it.
        let at_known = known.is_some_and(|k| own <= k.threshold());
        let own_threshold = match whole_run && !at_known {
            true => holding_level(&sorted, own, own_threshold).unwrap_or(own_threshold),
            false => own_threshold,
        };
        // The run's own quiet level stands unless its fastest readings lie
        // above the known level's band (its own, as measured when the
        // boot's host was quiet: a run wholly in a continuum of slow
        // levels has no sharp peak, and a band of its own as wide as them)
        // and the canary was not watched a slow stretch's length for it.
        let beyond = known.filter(|k| own > k.threshold());
        let pct_over = |k: QuietLevel| (own / k.canary - 1.0) * 100.0;
        let moved_pct = beyond.filter(|_| moved).map(pct_over);
        let above = beyond.filter(|_| !moved);
        let above_known_pct = above.map(pct_over);
        let (quiet_threshold, quiet_base) = match above {
            Some(k) => (k.threshold(), k.canary),
            None => (own_threshold, own),
        };
        let cut = sorted.partition_point(|&v| v <= quiet_threshold);
        let (quiet, slow) = sorted.split_at(cut);
        let slow_share = slow.len() as f64 / sorted.len() as f64;
        let quiet_canary = match known_quiet {
            Some(k) if quiet.is_empty() => k,
            _ => quantile(quiet, 0.5),
        };
        let slow_canary = (!slow.is_empty()).then(|| quantile(slow, 0.5));
        // The band ends where the quiet level does, so readings beyond it
        // are at other levels however near (+3.5% was the median slow
        // reading of a busy minute here, and taking those rounds for one
        // level with the quiet ones put getpid 1.4% high, ±4%): enough of
        // them are slow levels.
        let two_states = slow_share >= MIN_SLOW_SHARE || above_known_pct.is_some();
        let slow_levels_pct = (!slow.is_empty()).then(|| {
            let above = |p: f64| (quantile(slow, p) / quiet_canary - 1.0) * 100.0;
            [above(0.1), above(0.9)]
        });
        StateModel {
            quiet_threshold,
            quiet_canary,
            slow_canary,
            slow_share,
            readings: sorted.len(),
            two_states,
            quiet_band: (quiet_threshold / quiet_base - 1.0).clamp(0.0, QUIET_BAND),
            slow_levels_pct,
            known_quiet,
            above_known_pct,
            moved_pct,
        }
    }

    /// The level the run's canary sat at: its quiet canary, or, where the
    /// run never reached the known quiet level (`quiet_canary` is then the
    /// known one), the level of its own fastest readings.
    pub fn level(&self) -> f64 {
        match (self.above_known_pct, self.known_quiet) {
            (Some(pct), Some(known)) => known * (1.0 + pct / 100.0),
            _ => self.quiet_canary,
        }
    }

    pub fn is_quiet(&self, canary: f64) -> bool {
        canary <= self.quiet_threshold
    }

    /// The slow readings' median over the quiet canary, when there are
    /// slow levels.
    pub fn slowdown(&self) -> Option<f64> {
        self.slow_canary
            .filter(|_| self.two_states)
            .map(|s| s / self.quiet_canary)
    }
}

/// How far above `fastest` (the readings' low quantile) the quiet level
/// reaches, as a fraction: up to the end of the first [`BAND_STEP`] step
/// above it whose readings fall clearly under [`EDGE_OF_PEAK`] of the
/// densest step below it (by two Poisson standard deviations, so a few
/// readings do not cut a level short); the level's own last readings lie
/// in that step. Within [`MIN_QUIET_BAND`]..[`QUIET_BAND`]. A sharp quiet
/// level gives the least band; a quiet speed that wanders over the run
/// spreads its readings and the band follows it.
pub fn quiet_band(sorted: &[f64], fastest: f64) -> f64 {
    let steps = (QUIET_BAND / BAND_STEP).round() as usize;
    let mut counts = vec![0usize; steps];
    for &v in sorted {
        let step = ((v / fastest - 1.0) / BAND_STEP).max(0.0) as usize;
        if let Some(c) = counts.get_mut(step) {
            *c += 1;
        }
    }
    let mut peak = counts[0] as f64;
    let edge = (1..steps)
        .find(|&k| {
            let count = counts[k] as f64;
            peak = peak.max(count);
            count + 2.0 * count.sqrt() < peak * EDGE_OF_PEAK
        })
        .map_or(steps, |k| k + 1);
    (edge as f64 * BAND_STEP).clamp(MIN_QUIET_BAND, QUIET_BAND)
}

/// The upper edge of the level that holds the run, where its fastest
/// readings (at or below `threshold`, `fastest` their low quantile) are
/// only a fast minority ([`FAST_MINORITY`]) under one tight level a few
/// percent above holding most of the run ([`HOLDING_SHARE`], within
/// [`QUIET_BAND`] of `fastest`): that level is the quiet one, and the fast
/// readings below it count with it. None where the fast level holds the
/// run, or no one level above it does.
///
/// A cost on the whole process's syscall path (four argument-reading
/// seccomp filters) read 7% of a run's canary at one level and the rest
/// one tight level 2.6-3.4% above: taking the 7% for the quiet level put
/// 93% of the run in the slow state and left every syscall row without a
/// quiet round. A busy host's slow readings spread over levels, or sit
/// beside a quiet level that holds a share of its own
/// (docs/why-the-code-is-so.md, "A fast minority is not the quiet level").
pub fn holding_level(sorted: &[f64], fastest: f64, threshold: f64) -> Option<f64> {
    let n = sorted.len() as f64;
    let cut = sorted.partition_point(|&v| v <= threshold);
    if cut as f64 >= FAST_MINORITY * n {
        return None;
    }
    let ceiling = sorted.partition_point(|&v| v <= fastest * (1.0 + QUIET_BAND));
    let above = sorted.get(cut..ceiling)?;
    // The densest stretch of one level's width among the readings above.
    let mut end = 0;
    let (mut start, mut most) = (0, 0);
    for (i, &low) in above.iter().enumerate() {
        end = end.max(i);
        while end < above.len() && above[end] <= low * (1.0 + MIN_QUIET_BAND) {
            end += 1;
        }
        if end - i > most {
            (start, most) = (i, end - i);
        }
    }
    if (most as f64) < HOLDING_SHARE * n {
        return None;
    }
    let level = above[start];
    // Its upper edge is read as the quiet level's is: where it thins out.
    Some(level * (1.0 + quiet_band(&sorted[cut + start..], level)))
}

/// Stretches of time the drift is read over: as many as the quiet
/// readings allow, from eight down to three, each with at least the fewest
/// readings its median needs to mean something. A run with long slow
/// stretches still gets a drift figure from fewer stretches (and a wider
/// t), rather than none, which would have counted as no drift at all.
pub const DRIFT_BLOCKS: usize = 8;
const MIN_DRIFT_BLOCKS: usize = 3;
const MIN_PER_DRIFT_BLOCK: usize = 12;

/// The quiet speed over a run's stretches of time: each stretch's median
/// quiet canary reading, and the variance (of logs) a stretch's median has
/// from the canary's own sampling alone, which the steps between stretches
/// carry whether or not the speed moved.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Drift {
    pub medians: Vec<f64>,
    pub sampling_var: f64,
}

/// A reading (a canary, a reference, their ratio) and when it was taken,
/// seconds into the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    pub value: f64,
    pub at_s: f64,
}

/// Medians of the quiet readings in equal stretches of the run's time, and
/// their sampling variance (see [`stretch_medians`]).
pub fn drift_blocks(model: &StateModel, readings: &[f64], times: &[f64]) -> Drift {
    let end = times.iter().copied().fold(0.0, f64::max);
    let quiet: Vec<Reading> = readings
        .iter()
        .zip(times)
        .filter(|(reading, _)| model.is_quiet(**reading))
        .map(|(&value, &at_s)| Reading { value, at_s })
        .collect();
    stretch_medians(&quiet, end)
}

/// Medians of `readings` (value, seconds into the run) in equal stretches
/// of the run's first `end` seconds, and their sampling variance: a median
/// of n readings of relative spread s (1.4826 MADs) strays by (pi/2)·s²/n,
/// averaged over the stretches. No stretches when there are too few
/// readings for three.
pub fn stretch_medians(readings: &[Reading], end: f64) -> Drift {
    if end <= 0.0 {
        return Drift::default();
    }
    for count in (MIN_DRIFT_BLOCKS..=DRIFT_BLOCKS).rev() {
        let mut blocks: Vec<Vec<f64>> = vec![Vec::new(); count];
        for r in readings {
            let b = ((r.at_s / end * count as f64) as usize).min(count - 1);
            blocks[b].push(r.value);
        }
        if blocks.iter().all(|b| b.len() >= MIN_PER_DRIFT_BLOCK) {
            let mut sampling = 0.0;
            let medians = blocks
                .into_iter()
                .map(|mut b| {
                    b.sort_by(f64::total_cmp);
                    let median = quantile(&b, 0.5);
                    let spread = crate::analysis::stats::MAD_TO_SD
                        * crate::analysis::stats::mad(&b, median)
                        / median;
                    sampling += std::f64::consts::FRAC_PI_2 * spread * spread / b.len() as f64;
                    median
                })
                .collect();
            return Drift {
                medians,
                sampling_var: sampling / count as f64,
            };
        }
    }
    Drift::default()
}

/// How far the machine's quiet speed may move by the next run, as a 95%
/// half-width in percent (see `results::MachineStates::drift_interval_pct`),
/// from the stretches' medians and their sampling variance.
pub fn drift_interval_pct(block_medians: &[f64], sampling_var: f64) -> Option<f64> {
    let (step, _) = walk_step(block_medians, sampling_var)?;
    let k = block_medians.len();
    let t = crate::analysis::stats::student_t_975((k - 1) as f64);
    Some(t * (k as f64).sqrt() * step * 100.0)
}

/// The quiet speed's step from one stretch to the next, in log units: the
/// root mean square of the log ratios of the stretches' canary medians,
/// leaving out an odd one (`stats::clipped_rms_step`), less what the two
/// medians' own sampling puts in every step (2·`sampling_var`): a variance
/// ratio, the steps' mean square over what sampling alone gives, whose
/// excess over one is the walk. A canary read steadily, whose medians
/// differ only by sampling, walks nowhere, and its sampling noise is not
/// extrapolated to the next run as a walk; nor is one odd stretch
/// (docs/why-the-code-is-so.md, "One odd stretch is no walk"). With the
/// degrees of freedom it stands on: the steps kept, fewer
/// where the sampling took a large part of their mean square (a difference
/// of two estimates, Satterthwaite's rule with the sampling variance, read
/// from hundreds of readings, taken as exact); None under three stretches.
pub fn walk_step(block_medians: &[f64], sampling_var: f64) -> Option<(f64, f64)> {
    if block_medians.len() < MIN_DRIFT_BLOCKS || block_medians.iter().any(|m| *m <= 0.0) {
        return None;
    }
    let steps: Vec<f64> = block_medians
        .windows(2)
        .map(|pair| (pair[1] / pair[0]).ln())
        .collect();
    let (rms, kept) = crate::analysis::stats::clipped_rms_step(&steps)?;
    let mean_square = rms * rms;
    let walk_var = (mean_square - 2.0 * sampling_var.max(0.0)).max(0.0);
    let df = match mean_square > 0.0 {
        true => kept as f64 * (walk_var / mean_square).powi(2),
        false => kept as f64,
    };
    Some((walk_var.sqrt(), df))
}

/// Otsu's split of sorted readings in log space: the cut that maximises the
/// variance between the two sides. Returns the geometric midpoint of the gap
/// at that cut when the split is clean (see the constants), else None.
fn two_cluster_gap(sorted: &[f64]) -> Option<f64> {
    let logs: Vec<f64> = sorted.iter().map(|v| v.ln()).collect();
    let n = logs.len() as f64;
    let total: f64 = logs.iter().sum();
    let mean = total / n;
    let variance: f64 = logs.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    if variance <= 0.0 {
        return None;
    }
    let mut below = 0.0;
    let mut best: Option<(f64, usize)> = None;
    for cut in 1..logs.len() {
        below += logs[cut - 1];
        let (w0, w1) = (cut as f64 / n, 1.0 - cut as f64 / n);
        let (m0, m1) = (below / cut as f64, (total - below) / (n - cut as f64));
        let between = w0 * w1 * (m1 - m0).powi(2);
        if best.is_none_or(|(b, _)| between > b) {
            best = Some((between, cut));
        }
    }
    let (between, cut) = best?;
    let slow_mean = (logs[cut..].iter().sum::<f64>() / (n - cut as f64)).exp();
    let quiet_mean = (logs[..cut].iter().sum::<f64>() / cut as f64).exp();
    let clean = between / variance >= MIN_SPLIT_EXPLAINED
        && slow_mean >= quiet_mean * (1.0 + MIN_SPLIT_SLOWDOWN);
    clean.then(|| (sorted[cut - 1] * sorted[cut]).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run's canary readings over `n` evenly spaced times: a quiet speed
    /// that walks by `walk` (log sd per reading) under reading noise of
    /// `noise` (relative sd), with the times.
    fn drifting(n: usize, walk: f64, noise: f64, seed: u64) -> (Vec<f64>, Vec<f64>) {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut normal = || {
            let (u, v) = (rng.f64().max(1e-12), rng.f64());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        };
        let mut level = 0.0f64;
        let readings = (0..n)
            .map(|_| {
                level += walk * normal();
                250.0 * level.exp() * (1.0 + noise * normal())
            })
            .collect();
        (readings, (0..n).map(|i| i as f64 * 0.01).collect())
    }

    #[test]
    fn a_steady_canarys_sampling_noise_is_not_extrapolated_as_a_walk() {
        // 2% reading noise, no walk: the stretches' medians differ by
        // sampling alone. Read as a walk (as before), that became an
        // interval of a few percent on every raw figure; less the sampling
        // it is a fraction of that, in most runs nothing.
        let (mut with, mut without) = (Vec::new(), Vec::new());
        for seed in 0..200 {
            let (readings, times) = drifting(400, 0.0, 0.02, seed);
            let model = StateModel::fit(&readings);
            let drift = drift_blocks(&model, &readings, &times);
            assert_eq!(drift.medians.len(), DRIFT_BLOCKS);
            assert!(drift.sampling_var > 0.0);
            with.push(drift_interval_pct(&drift.medians, 0.0).unwrap());
            without.push(drift_interval_pct(&drift.medians, drift.sampling_var).unwrap());
        }
        with.sort_by(f64::total_cmp);
        without.sort_by(f64::total_cmp);
        let (old, new) = (quantile(&with, 0.5), quantile(&without, 0.5));
        eprintln!(
            "steady canary, median drift interval: {old:.2}% read as a walk, {new:.2}% less the sampling"
        );
        assert!(old > 1.0, "sampling alone read as a walk: {old}%");
        assert!(new < old / 3.0, "less the sampling: {new}% against {old}%");
    }

    #[test]
    fn a_real_walk_is_still_read_beside_the_sampling_noise() {
        // A walk of 0.1% per reading (about 0.7% per stretch of 50) under
        // 1% reading noise: the walk's step is recovered, not zeroed.
        let mut steps = Vec::new();
        for seed in 0..200 {
            let (readings, times) = drifting(400, 0.001, 0.01, seed);
            let model = StateModel::fit(&readings);
            let drift = drift_blocks(&model, &readings, &times);
            let (step, _) = walk_step(&drift.medians, drift.sampling_var).unwrap();
            steps.push(step);
        }
        steps.sort_by(f64::total_cmp);
        let median = quantile(&steps, 0.5);
        let per_stretch = 0.001 * 50f64.sqrt();
        assert!(
            median > 0.5 * per_stretch && median < 1.6 * per_stretch,
            "median step {median} against {per_stretch}"
        );
    }

    /// Readings of a two-state machine: `slow_share` of them `slowdown`
    /// times slower, each with a few percent of noise that only adds.
    fn two_state(n: usize, slow_share: f64, slowdown: f64, seed: u64) -> Vec<f64> {
        let mut rng = fastrand::Rng::with_seed(seed);
        (0..n)
            .map(|_| {
                let base = if rng.f64() < slow_share {
                    300.0 * slowdown
                } else {
                    300.0
                };
                base * (1.0 + 0.03 * rng.f64())
            })
            .collect()
    }

    #[test]
    fn two_states_are_found_at_any_share() {
        for (i, share) in [0.1, 0.3, 0.5, 0.7, 0.9].into_iter().enumerate() {
            let readings = two_state(400, share, 1.37, i as u64);
            let model = StateModel::fit(&readings);
            assert!(model.two_states, "share {share}: {model:?}");
            // The states are 37% apart and the noise 3%: every reading is
            // classed right.
            let slow = readings.iter().filter(|&&r| r > 350.0).count();
            assert_eq!(
                model.slow_share,
                slow as f64 / readings.len() as f64,
                "{model:?}"
            );
            let slowdown = model.slowdown().unwrap();
            assert!((slowdown - 1.37).abs() < 0.03, "{slowdown}");
            assert!(model.is_quiet(300.0) && !model.is_quiet(300.0 * 1.3));
        }
    }

    #[test]
    fn one_state_is_one_state() {
        let model = StateModel::fit(&two_state(400, 0.0, 1.0, 7));
        assert!(!model.two_states, "{model:?}");
        assert_eq!(model.slow_share, 0.0);
        assert!(model.slowdown().is_none());
    }

    #[test]
    fn a_few_disturbed_readings_are_not_a_state() {
        let mut readings = two_state(400, 0.0, 1.0, 3);
        readings[10] = 900.0;
        readings[200] = 700.0;
        let model = StateModel::fit(&readings);
        assert!(!model.two_states, "{model:?}");
        assert!(
            !model.is_quiet(700.0),
            "a disturbed reading is still not quiet"
        );
    }

    #[test]
    fn too_few_readings_call_everything_quiet() {
        let model = StateModel::fit(&[300.0, 450.0, 310.0]);
        assert!(!model.two_states);
        assert!(model.is_quiet(450.0));
        assert!(StateModel::fit(&[]).quiet_canary.is_nan());
    }

    #[test]
    fn a_small_slowdown_is_split_by_its_gap() {
        // +9%: inside the quiet band, but a clean gap of its own.
        let model = StateModel::fit(&two_state(400, 0.5, 1.09, 11));
        assert!(model.two_states, "{model:?}");
        assert!(model.is_quiet(305.0) && !model.is_quiet(326.0));
    }

    /// Readings of a host with a sharp quiet level (`quiet_share` of them,
    /// within 0.6% of 272 ticks) and the rest spread evenly over slow
    /// levels +4% to +30%, as the busy AMD EPYC guest read.
    fn many_levels(n: usize, quiet_share: f64, seed: u64) -> Vec<f64> {
        let mut rng = fastrand::Rng::with_seed(seed);
        (0..n)
            .map(|_| {
                let level = if rng.f64() < quiet_share {
                    1.0
                } else {
                    1.04 + 0.26 * rng.f64()
                };
                272.0 * level * (1.0 + 0.006 * rng.f64())
            })
            .collect()
    }

    #[test]
    fn the_quiet_level_of_a_host_with_many_slow_levels_holds_that_level_alone() {
        for (seed, share) in [0.2, 0.4, 0.6, 0.8].into_iter().enumerate() {
            let readings = many_levels(3000, share, seed as u64);
            let model = StateModel::fit(&readings);
            assert!(model.two_states, "share {share}: {model:?}");
            assert!(
                model.quiet_band <= 0.04,
                "share {share}: the band reaches into the slow levels: {model:?}"
            );
            assert!(model.is_quiet(272.0 * 1.006) && !model.is_quiet(272.0 * 1.04));
            let [low, high] = model.slow_levels_pct.unwrap();
            assert!(low < 8.0 && high > 24.0, "{low} {high}");
        }
    }

    #[test]
    fn a_wandering_quiet_speed_widens_the_band_with_it() {
        // The whole CPU's speed spread evenly over 8%, one level: every
        // reading is the quiet level's.
        let mut rng = fastrand::Rng::with_seed(5);
        let readings: Vec<f64> = (0..2000)
            .map(|_| 250.0 * (1.0 + 0.08 * rng.f64()))
            .collect();
        let model = StateModel::fit(&readings);
        assert!(model.quiet_band >= 0.08, "{model:?}");
        assert!(!model.two_states, "{model:?}");
    }

    fn known(canary: f64) -> QuietLevel {
        QuietLevel {
            canary,
            band: MIN_QUIET_BAND,
        }
    }

    #[test]
    fn a_run_held_in_a_slow_level_is_slow_against_the_boots_quiet_canary() {
        // Every reading at +27%: alone, the run takes that level for quiet;
        // against the quiet canary this boot read before, it is all slow.
        let readings: Vec<f64> = many_levels(60, 1.0, 9).iter().map(|r| r * 1.27).collect();
        let anchored = StateModel::fit_anchored(&readings, Some(known(272.0)));
        assert!(anchored.two_states, "{anchored:?}");
        assert_eq!(anchored.slow_share, 1.0);
        assert!(!anchored.is_quiet(272.0 * 1.27) && anchored.moved_pct.is_none());
        assert_eq!(anchored.quiet_canary, 272.0);
        let above = anchored.above_known_pct.unwrap();
        assert!((above - 27.0).abs() < 1.0, "{above}");
        // The same run after waiting out a slow stretch's length at its
        // start without the known level coming back: the level moved (a
        // cost added on the syscall path), this run's own, said as a move.
        let moved = StateModel::fit_against(&readings, Some(known(272.0)), true);
        assert!(moved.above_known_pct.is_none(), "{moved:?}");
        assert!(moved.is_quiet(272.0 * 1.27));
        let pct = moved.moved_pct.unwrap();
        assert!((pct - 27.0).abs() < 1.0, "{pct}");
        // A run wholly in a continuum of slow levels: no sharp peak, so its
        // own band is as wide as they are, and still it is above the known
        // level's band.
        let continuum = many_levels(200, 0.0, 6);
        let model = StateModel::fit_anchored(&continuum, Some(known(272.0)));
        assert!(model.above_known_pct.is_some(), "{model:?}");
        assert_eq!(model.slow_share, 1.0);
        // A run that reached the known level is read as it would be alone.
        let reached = many_levels(3000, 0.5, 4);
        let model = StateModel::fit_anchored(&reached, Some(known(272.5)));
        assert!(model.above_known_pct.is_none(), "{model:?}");
        let alone = StateModel::fit(&reached);
        assert_eq!(model.quiet_threshold, alone.quiet_threshold);
        assert_eq!(model.quiet_band, alone.quiet_band);
    }

    /// A run of a busy host (half its readings in the continuum of slow
    /// levels) whose quiet level sits at `level` ticks.
    fn busy_run_at(level: f64, seed: u64) -> Vec<f64> {
        many_levels(400, 0.5, seed)
            .iter()
            .map(|r| r * level / 272.0)
            .collect()
    }

    /// Twenty runs of one boot, each anchored as `mitbench run` anchors
    /// it: to the lowest quiet canary of the boot's five newest runs that
    /// reached a level of their own (`History::quiet_level_like`), and told
    /// whether its start's wait reached that level (every reading of these
    /// runs is at its own levels, so it did where its fastest readings lie
    /// within the anchor's band).
    fn boot_of(levels: impl Fn(usize) -> f64) -> Vec<StateModel> {
        let mut stored: Vec<f64> = Vec::new();
        (0..20)
            .map(|i| {
                let anchor = stored.iter().rev().take(5).copied().reduce(f64::min);
                let readings = busy_run_at(levels(i), i as u64);
                let fastest = readings.iter().copied().fold(f64::INFINITY, f64::min);
                let waited_out = anchor.is_some_and(|a| fastest > known(a).threshold());
                let model = StateModel::fit_against(&readings, anchor.map(known), waited_out);
                if model.above_known_pct.is_none() {
                    stored.push(model.quiet_canary);
                }
                model
            })
            .collect()
    }

    #[test]
    fn a_quiet_level_drifting_four_percent_over_a_boot_is_never_a_slow_level() {
        let runs = boot_of(|i| 272.0 * (1.0 + 0.04 * i as f64 / 19.0));
        for (i, model) in runs.iter().enumerate() {
            assert!(model.above_known_pct.is_none(), "run {i}: {model:?}");
            assert!(model.slow_share < 0.6, "run {i}: {model:?}");
        }
    }

    #[test]
    fn a_real_five_percent_step_is_a_moved_level_not_a_slow_one() {
        let runs = boot_of(|i| if i < 10 { 272.0 } else { 272.0 * 1.05 });
        for (i, model) in runs.iter().enumerate() {
            assert!(model.above_known_pct.is_none(), "run {i}: {model:?}");
            assert!(model.slow_share < 0.6, "run {i}: {model:?}");
        }
        // The first run after the step says so; once five runs of the new
        // level are stored, it is the level runs are held against.
        let moved = runs[10].moved_pct.expect("the step is said");
        assert!((moved - 5.0).abs() < 1.0, "{moved}");
        assert!(runs[..10].iter().all(|m| m.moved_pct.is_none()));
        assert!(runs[16..].iter().all(|m| m.moved_pct.is_none()));
    }

    /// `n` readings at `level` times 272 ticks, each up to 0.6% slower (the
    /// canary's own noise, which only adds).
    fn at_level(n: usize, level: f64, rng: &mut fastrand::Rng) -> Vec<f64> {
        (0..n)
            .map(|_| 272.0 * level * (1.0 + 0.006 * rng.f64()))
            .collect()
    }

    #[test]
    fn two_levels_within_two_percent_are_one_quiet_level() {
        let mut rng = fastrand::Rng::with_seed(11);
        let mut readings = at_level(1000, 1.0, &mut rng);
        readings.extend(at_level(1000, 1.012, &mut rng));
        let model = StateModel::fit(&readings);
        assert!(model.is_quiet(272.0 * 1.017), "{model:?}");
        assert!(model.slow_share < MIN_SLOW_SHARE, "{model:?}");
    }

    #[test]
    fn a_fast_level_two_percent_below_the_usual_one_does_not_make_it_slow() {
        // 5% of readings on a level 2% faster than the other 95%: both are
        // the quiet level (the usual one is no slow level of the host).
        let mut rng = fastrand::Rng::with_seed(12);
        let mut readings = at_level(100, 0.98, &mut rng);
        readings.extend(at_level(1900, 1.0, &mut rng));
        let model = StateModel::fit(&readings);
        assert!(model.is_quiet(272.0 * 1.006), "{model:?}");
        assert!(model.slow_share < MIN_SLOW_SHARE, "{model:?}");
    }

    #[test]
    fn a_quiet_level_wandering_over_more_than_twelve_percent_is_read_so() {
        // The whole CPU's speed spread evenly over 16%: one level, wider
        // than the widest band. What lies beyond the band is called slow
        // and said (its share), never taken for quiet.
        let mut rng = fastrand::Rng::with_seed(13);
        let readings: Vec<f64> = (0..2000)
            .map(|_| 250.0 * (1.0 + 0.16 * rng.f64()))
            .collect();
        let model = StateModel::fit(&readings);
        assert_eq!(model.quiet_band, QUIET_BAND, "{model:?}");
        assert!(!model.is_quiet(250.0 * 1.15), "{model:?}");
        assert!((0.15..0.35).contains(&model.slow_share), "{model:?}");
    }

    /// The canary under a cost on the whole process's syscall path, as a
    /// run under four argument-reading seccomp filters read it: 7% of the
    /// readings at one level (538.7 ticks) and the rest one tight level
    /// +2.6% to +3.4% above it.
    fn fast_minority(n: usize, fast_share: f64, rng: &mut fastrand::Rng) -> Vec<f64> {
        (0..n)
            .map(|_| match rng.f64() < fast_share {
                true => 538.7 * (1.0 + 0.002 * rng.f64()),
                false => 538.7 * (1.026 + 0.008 * rng.f64()),
            })
            .collect()
    }

    #[test]
    fn a_fast_minority_under_one_level_that_holds_the_run_is_that_level() {
        let mut rng = fastrand::Rng::with_seed(21);
        let readings = fast_minority(2000, 0.07, &mut rng);
        let model = StateModel::fit_anchored(&readings, None);
        // While measuring, a window's fast minority is still waited for.
        assert!(StateModel::fit(&readings).slow_share > 0.85);
        // One level: the fast few and the level above them are quiet.
        assert!(model.slow_share < MIN_SLOW_SHARE, "{model:?}");
        assert!(model.is_quiet(538.7) && model.is_quiet(538.7 * 1.034));
        assert!(
            (model.quiet_canary / (538.7 * 1.03) - 1.0).abs() < 0.005,
            "{model:?}"
        );
    }

    #[test]
    fn a_fast_level_that_holds_its_own_share_stays_the_quiet_level() {
        // A busy host read as the quick run at 47% quiet: its quiet level
        // 48% of readings, a slow level +3.6% to +4.4% another 46%, and a
        // few up to +28%. The slow level holds no majority and the quiet
        // one more than a minority: both stay what they are.
        let mut rng = fastrand::Rng::with_seed(22);
        let readings: Vec<f64> = (0..4000)
            .map(|_| {
                let u = rng.f64();
                let level = match u {
                    u if u < 0.48 => 1.0,
                    u if u < 0.94 => 1.036 + 0.008 * rng.f64(),
                    _ => 1.06 + 0.22 * rng.f64(),
                };
                273.4 * level * (1.0 + 0.004 * rng.f64())
            })
            .collect();
        let model = StateModel::fit_anchored(&readings, None);
        assert!((0.45..0.56).contains(&model.slow_share), "{model:?}");
        assert!(!model.is_quiet(273.4 * 1.036), "{model:?}");
    }

    #[test]
    fn a_fast_minority_at_the_boots_known_level_is_that_level() {
        // The same shape where the fast few sit at the level the history
        // read for this boot: that is the quiet level, and the run stood
        // mostly in a slow one.
        let mut rng = fastrand::Rng::with_seed(23);
        let readings = fast_minority(2000, 0.07, &mut rng);
        let model = StateModel::fit_anchored(&readings, Some(known(538.7)));
        assert!(model.slow_share > 0.85, "{model:?}");
        assert!(!model.is_quiet(538.7 * 1.03), "{model:?}");
    }

    #[test]
    fn a_level_that_holds_the_run_is_found_beside_disturbances() {
        // 10% of readings a few percent below a level holding 75%, and 15%
        // spread over slow levels: the holding level's band ends where it
        // thins, so the slow readings stay slow.
        let mut rng = fastrand::Rng::with_seed(24);
        let mut readings = fast_minority(1700, 0.12, &mut rng);
        readings.extend((0..300).map(|_| 538.7 * (1.08 + 0.2 * rng.f64())));
        let model = StateModel::fit_anchored(&readings, None);
        assert!(model.is_quiet(538.7 * 1.034), "{model:?}");
        assert!((0.13..0.17).contains(&model.slow_share), "{model:?}");
    }
}
