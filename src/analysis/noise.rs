//! How far a row's figure moves between runs when nothing changed, and so
//! how large a change must be before a verdict calls it one.
//!
//! Three kinds of evidence say how far one run's figure (its log) strays,
//! each as a variance with its degrees of freedom:
//!
//! - each run's own interval: the table's interval is a 95% prediction of
//!   the next run's figure (`Cost::run_to_run_ci95_ticks`), so its half-width
//!   over t(df)·sqrt(2) is the standard deviation of one run's figure, with
//!   the degrees of freedom the interval stood on;
//! - a run set's own runs: their sample variance;
//! - the history: the spread of the row's figure over earlier runs of the
//!   same host, boot, build and process controls (criterion's noise
//!   threshold, learned instead of fixed).
//!
//! The first two are what the compared runs say of themselves, pooled by
//! their degrees of freedom. That is the noise a run draws afresh (its
//! processes, its rounds), which averages out over the runs of a set. The
//! machine's quiet speed also wanders like a random walk
//! (`machine_states.drift_interval_pct`), which does not average out: two
//! sides run far apart in time differ by more than two run back to back,
//! and sides that alternate (A B A B) by less. So its share is computed
//! from when each run ran ([`RunTime`]). The history's runs moved by all
//! of it, the walk included, and stand on their own (with the sets'
//! spread). A change is beyond noise when its log exceeds the two-sided
//! 95% point of the compared runs' noise and of the history's, so a row
//! that did not change is flagged in at most about 5% of comparisons.

use super::interval::Figure;
use super::spread::ForkSpread;
use super::states::Drift;
use super::stats::{self, student_t_975};
use serde::Serialize;

/// Degrees of freedom an interval is taken to stand on where its record
/// does not say (documents before forks).
const INTERVAL_DF_UNKNOWN: f64 = 4.0;

/// A variance of one run's log figure and its degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Evidence {
    pub var: f64,
    pub df: f64,
}

impl Evidence {
    /// From a run's prediction interval `[lo, hi]` of `cost`, which stood on
    /// `df` degrees of freedom.
    pub fn from_interval(cost: f64, [lo, hi]: [f64; 2], df: Option<f64>) -> Option<Evidence> {
        if !(cost > 0.0 && lo > 0.0 && hi >= cost && lo <= cost) {
            return None;
        }
        let half = (hi / cost).ln().max((cost / lo).ln());
        let df = df.unwrap_or(INTERVAL_DF_UNKNOWN).max(1.0);
        let sd = half / (student_t_975(df) * std::f64::consts::SQRT_2);
        Some(Evidence { var: sd * sd, df })
    }

    /// From one run's printed interval of its figure, on the degrees of
    /// freedom the run says it stood on.
    pub fn of_run(run: &RunFigure) -> Option<Evidence> {
        Evidence::from_interval(run.ticks.value, run.ticks.ci95?, run.df)
    }

    /// The sample variance of runs' figures; None under two runs.
    pub fn from_runs(figures: &[f64]) -> Option<Evidence> {
        // The same log spread the forks' figures are read with.
        let spread = ForkSpread::of(figures);
        (spread.df > 0.0).then(|| Evidence {
            var: spread.ss / spread.df,
            df: spread.df,
        })
    }

    /// The spread of one run's figure from runs in the order they ran, read
    /// from the steps between neighbours (von Neumann's mean square
    /// successive difference, halved): a drift that carries the history's
    /// runs far apart over days does not count, only how far a run lands
    /// from the one before it. A run at a level of its own steps away and
    /// back and counts, as it should: such runs are part of what a compared
    /// run may be (leaving them out, as a clipped step did, let one A/A
    /// comparison in eight mark a row on a synthetic guest with an odd run
    /// in ten, where 10% is the rate). A figure the slow state took is not
    /// in the history's figures (`History::row_figures`). Its degrees of
    /// freedom are those of a normal sample's MSSD, 2m^2/(3m-1) for m steps.
    /// None under two steps.
    pub fn from_successive(figures: &[f64]) -> Option<Evidence> {
        Evidence::from_stretches(&[figures.to_vec()])
    }

    /// [`Evidence::from_successive`] over stretches of runs, each at one
    /// quiet level of the machine: the steps within each stretch count and
    /// the step from one stretch to the next does not. A level shift
    /// between two runs (a trace event turned on, an audit rule added) is
    /// a finding of its own, which `compare` names; counted as a step it
    /// had widened every later verdict on the row for as many runs as the
    /// history reads. None under two steps in all.
    pub fn from_stretches(stretches: &[Vec<f64>]) -> Option<Evidence> {
        let figures = || stretches.iter().flatten();
        if figures().any(|f| f.is_nan() || *f <= 0.0) {
            return None;
        }
        let steps: Vec<f64> = stretches
            .iter()
            .flat_map(|stretch| stretch.windows(2).map(|pair| (pair[1] / pair[0]).ln()))
            .collect();
        if steps.len() + 1 < MIN_LEARNED_RUNS {
            return None;
        }
        let m = steps.len() as f64;
        let mean_square = steps.iter().map(|s| s * s).sum::<f64>() / m;
        Some(Evidence {
            var: mean_square / 2.0,
            df: 2.0 * m * m / (3.0 * m - 1.0),
        })
    }

    /// Several pieces pooled by their degrees of freedom.
    pub fn pooled(parts: impl IntoIterator<Item = Evidence>) -> Option<Evidence> {
        let (ss, df) = parts
            .into_iter()
            .filter(|e| e.var.is_finite() && e.df > 0.0)
            .fold((0.0, 0.0), |(ss, df), e| (ss + e.var * e.df, df + e.df));
        (df > 0.0).then(|| Evidence { var: ss / df, df })
    }

    /// Whether runs' spread (`self`: how far the history's runs landed
    /// apart) is beyond what `within` (the forks' spread inside runs, on
    /// the same scale: one run's figure) explains, by a one-sided F test
    /// at level `p`. Where it is, the row settles at a level of its own for
    /// a whole run, which its forks share and cannot show
    /// (docs/why-the-code-is-so.md has a row that did).
    pub fn beyond_at(&self, within: &Evidence, p: f64) -> bool {
        within.var > 0.0
            && self.var.is_finite()
            && stats::f_upper_p(self.var / within.var, self.df, within.df) < p
    }

    pub fn sd(&self) -> f64 {
        self.var.sqrt()
    }

    /// The 95% half-width of one run's log figure, read as normal.
    pub fn half_width(&self) -> f64 {
        stats::NORMAL_975 * self.sd()
    }

    /// Runs a side would need for a change of [`RESOLVED_THRESHOLDS`]
    /// times the threshold to be marked four times in five as a
    /// comparison judges it (`judged`), beside `fixed`: the noise more runs
    /// do not average away (the walk the reference does not see is
    /// bounded whatever the runs; the walk between two sides is taken as
    /// it stands). A change of the threshold itself is marked at most half
    /// the time however many runs: its estimate must pass the threshold.
    pub fn runs_to_resolve(&self, judged: Judged, fixed: Walk) -> Option<usize> {
        (judged.threshold_log > 0.0).then(|| {
            // The count is printed from this spread, but a comparison of
            // n runs a side is judged by their spread within each side
            // beside it (`contrast::read` pools the sets' spread): 2(n - 1)
            // degrees of freedom more, at least. Held to the degrees of
            // freedom it has now, the count was a run or more too many: at
            // it, a change of twice the threshold was marked in 94% of
            // 2,000 fresh trials, at one run fewer 93% (the test below).
            let resolves = |n: usize| {
                let weight = 2.0 / n as f64;
                Spread::of(Some(*self), weight, fixed)
                    .zip(Spread::of(Some(self.judged_with(n)), weight, fixed))
                    .is_some_and(|(printed, judging)| {
                        judged.detectable_judged_by(&printed, &judging) <= judged.resolved()
                    })
            };
            // The detectable change shrinks as runs are added: the first
            // count that resolves is found by halving, a dozen solves
            // where trying each count took up to a thousand.
            let (mut low, mut high) = (1, OUT_OF_REACH);
            while low < high {
                let mid = (low + high) / 2;
                if resolves(mid) {
                    high = mid;
                } else {
                    low = mid + 1;
                }
            }
            low
        })
    }

    /// The spread a comparison of `runs` a side would judge by: this one
    /// beside their own spread within each side, 2(runs - 1) degrees of
    /// freedom more.
    fn judged_with(&self, runs: usize) -> Evidence {
        Evidence {
            df: self.df + 2.0 * runs.saturating_sub(1) as f64,
            ..*self
        }
    }
}

/// The multiple K of an estimated spread s by which a true change must
/// pass the threshold for a repetition to mark it with 80% chance, when
/// the change is printed from one estimate of the spread (on `printed_df`
/// degrees of freedom) and the repetition judges it against `cut` times
/// its own (on `judging_df`): P(K·u₁ - cut·u₂ + z > 0) = 0.8, where z is
/// the repetition's standard normal error and u₁, u₂ the two estimates
/// over the true spread, each read as normal about 1 with variance
/// 1/(2 df) (the delta method on a χ² over its df). Solved for K:
/// (K - cut)² = z₈₀²·(1 + K²/(2 df₁) + cut²/(2 df₂)). On many df it is
/// the textbook cut + z₈₀; on 4 df both and a cut of 2.13 it is 3.64, not
/// 3.07.
pub fn power_multiple(cut: f64, printed_df: f64, judging_df: f64) -> f64 {
    let z2 = stats::NORMAL_80.powi(2);
    let spread = |df: f64| 1.0 / (2.0 * df.max(1.0));
    let a = 1.0 - z2 * spread(printed_df);
    if a <= 0.0 || !cut.is_finite() {
        return f64::INFINITY;
    }
    let half_b = cut;
    let c = cut * cut - z2 - z2 * cut * cut * spread(judging_df);
    (half_b + (half_b * half_b - a * c).max(0.0).sqrt()) / a
}

/// The change, in thresholds, that runs to resolve are read for.
pub const RESOLVED_THRESHOLDS: f64 = 2.0;

/// The verdict as a comparison applies it, which the power of a change is
/// read against: the threshold its estimate must pass, and how many rows
/// its p-value is held to the false discovery rate over.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judged {
    pub threshold_log: f64,
    pub tests: usize,
}

impl Judged {
    /// The level a lone changed row's p-value must reach: Benjamini-
    /// Hochberg over `tests` rows takes the smallest p-value at q / tests,
    /// and the 95% interval asks 5% of every row. Where many rows changed
    /// the step-up cut is laxer, so the change printed is what one row
    /// alone needs: at least 80%, never less.
    pub fn level(&self) -> f64 {
        (super::verdict::FALSE_DISCOVERY_RATE / self.tests.max(1) as f64).min(0.05)
    }

    /// How far beyond the threshold an estimated log change must lie for
    /// its p-value ([`Spread::p_value`], against the threshold) to reach
    /// [`Judged::level`]: the point where the two tails sum to the level,
    /// between the one-sided point (a threshold far beyond the noise,
    /// whose far tail is nothing) and the two-sided one (no threshold).
    pub fn noise_cut(&self, s: &Spread) -> f64 {
        let level = self.level();
        let p = |cut: f64| s.p_value(self.threshold_log + cut * s.sd, self.threshold_log);
        let (mut low, mut high) = (
            stats::t_point(2.0 * level, s.df),
            stats::t_point(level, s.df),
        );
        if s.sd <= 0.0 || !high.is_finite() {
            return if s.sd > 0.0 { f64::INFINITY } else { 0.0 };
        }
        for _ in 0..50 {
            let mid = 0.5 * (low + high);
            if p(mid) > level {
                low = mid;
            } else {
                high = mid;
            }
        }
        high * s.sd
    }

    /// The smallest true log change marked in 80% of repetitions that
    /// draw fresh noise: the estimate must pass the threshold by the
    /// noise's cut. Both the spread this change is printed from and the
    /// spread a repetition is judged by are estimates on `s.df` degrees of
    /// freedom, and a change set from one and judged by the other is
    /// marked less often than either spread taken as the truth says, the
    /// more so on few degrees of freedom (docs/why-the-code-is-so.md).
    /// [`power_multiple`] counts both.
    pub fn detectable(&self, s: &Spread) -> f64 {
        self.detectable_judged_by(s, s)
    }

    /// [`Judged::detectable`] printed from `printed` and judged by a
    /// repetition that estimates the same spread on the degrees of freedom
    /// of `judging` (more runs, more of them).
    pub fn detectable_judged_by(&self, printed: &Spread, judging: &Spread) -> f64 {
        let cut = self.noise_cut(judging);
        if judging.sd <= 0.0 {
            return self.threshold_log + cut;
        }
        let multiple = power_multiple(cut / judging.sd, printed.df, judging.df);
        self.threshold_log + multiple * judging.sd
    }

    /// The log change runs to resolve are read for.
    pub fn resolved(&self) -> f64 {
        RESOLVED_THRESHOLDS * self.threshold_log
    }
}

/// Runs a side said to be needed where no number of them would do.
pub const OUT_OF_REACH: usize = 1000;

/// Fewest runs a spread is read from successive runs of (two steps).
const MIN_LEARNED_RUNS: usize = 3;

/// What the history has seen a row do between runs of one condition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Learned {
    pub evidence: Evidence,
    /// The earlier runs it was learned from.
    pub runs: usize,
}

/// Each row's noise from its earlier runs' figures in the order they ran,
/// in stretches at one quiet level each, where they hold two steps (see
/// `History::row_figures`).
pub fn learned<K: Ord>(
    figures: std::collections::BTreeMap<K, Vec<Vec<f64>>>,
) -> std::collections::BTreeMap<K, Learned> {
    figures
        .into_iter()
        .filter_map(|(key, stretches)| {
            let evidence = Evidence::from_stretches(&stretches)?;
            Some((
                key,
                Learned {
                    evidence,
                    runs: stretches.iter().map(Vec::len).sum(),
                },
            ))
        })
        .collect()
}

/// How far a row's figure moves from one boot to another of the same
/// command line, beyond how far its runs within a boot move: a one-way
/// random-effects reading of the log figures of each boot's runs. The boot
/// means' variance less what their runs' own spread puts in them (the
/// pooled within-boot variance over each boot's runs, averaged), on the
/// boots' degrees of freedom less one. A boot with one run adds to the
/// means only; without any boot of two runs the means' whole variance is
/// taken (an upper reading). None under two boots.
pub fn between_boots(boots: &[Vec<f64>]) -> Option<Evidence> {
    let logs: Vec<Vec<f64>> = boots
        .iter()
        .filter(|b| !b.is_empty() && b.iter().all(|f| f.is_finite() && *f > 0.0))
        .map(|b| b.iter().map(|f| f.ln()).collect())
        .collect();
    if logs.len() < 2 {
        return None;
    }
    let means: Vec<f64> = logs
        .iter()
        .map(|b| b.iter().sum::<f64>() / b.len() as f64)
        .collect();
    let grand = means.iter().sum::<f64>() / means.len() as f64;
    let df = (means.len() - 1) as f64;
    let of_means = means.iter().map(|m| (m - grand).powi(2)).sum::<f64>() / df;
    let (within_ss, within_df) = logs
        .iter()
        .zip(&means)
        .fold((0.0, 0.0), |(ss, df), (b, m)| {
            (
                ss + b.iter().map(|x| (x - m).powi(2)).sum::<f64>(),
                df + (b.len() - 1) as f64,
            )
        });
    let within = if within_df > 0.0 {
        within_ss / within_df * logs.iter().map(|b| 1.0 / b.len() as f64).sum::<f64>()
            / logs.len() as f64
    } else {
        0.0
    };
    Some(Evidence {
        var: (of_means - within).max(0.0),
        df,
    })
}

/// A stretch's median averages the walk over the stretch, and the step
/// between two such averages of a random walk of rate q has variance
/// (2/3)·q·stretch, not q·stretch: the walk's rate at a point in time,
/// which the walk between runs is read with, is 3/2 of step² / stretch.
/// Without it the synthetic machine's rate read 0.66 of its truth (mean of
/// 200 runs), and the walk between sets was that much too narrow.
const AVERAGED_STEP: f64 = 1.5;

/// When a run ran, in seconds on one clock, and how far the machine's
/// speed moves per second of it: the random walk's variance rate, from the
/// step between the run's stretches of time (`states::walk_step`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunTime {
    pub mid_s: f64,
    /// How long it ran, and the forks a row's figure of it averages: each
    /// fork a pass over every probe, so a row's rounds sit at one point in
    /// each of `forks` equal shares of the span.
    pub span_s: f64,
    pub forks: usize,
    /// The walk's variance per second and the degrees of freedom it was
    /// read on (`states::walk_step`); None where the run had too few quiet
    /// readings.
    pub walk: Option<(f64, f64)>,
    /// The same of the canary over the reference beside it: the walk a
    /// figure read at one reference speed still has (the syscall path's
    /// speed moving on a host the core's clock does not show). None where
    /// the run read no reference.
    pub walk_beyond_reference: Option<(f64, f64)>,
    /// That ratio's variance over the run's stretches (logs, less what
    /// their sampling puts in) and its degrees of freedom: how far it
    /// strays about its level, which bounds how far two runs' levels lie
    /// apart however long between them ([`Walk::beyond_reference`]).
    pub beyond_reference_spread: Option<(f64, f64)>,
}

impl RunTime {
    /// From a run's start and end (seconds), its forks, the canary medians
    /// of its equal stretches of time with their sampling variance (0 where
    /// the document predates it), and the same of the canary over the
    /// reference; None where the times are unknown.
    pub fn new(
        [started_s, finished_s]: [f64; 2],
        forks: usize,
        canary: &Drift,
        beyond_reference: &Drift,
    ) -> Option<RunTime> {
        let span = finished_s - started_s;
        let rate = |drift: &Drift| {
            let stretch_s = span / drift.medians.len() as f64;
            super::states::walk_step(&drift.medians, drift.sampling_var)
                .map(|(step, df)| (AVERAGED_STEP * step * step / stretch_s, df))
        };
        (span > 0.0).then(|| RunTime {
            mid_s: (started_s + finished_s) / 2.0,
            span_s: span,
            forks: forks.max(1),
            walk: rate(canary),
            walk_beyond_reference: rate(beyond_reference),
            beyond_reference_spread: stationary_spread(beyond_reference),
        })
    }
}

/// The variance of a run's stretch medians' logs about their mean, less
/// what their sampling puts in, on the stretches less one; None under
/// three stretches.
fn stationary_spread(drift: &Drift) -> Option<(f64, f64)> {
    if drift.medians.len() < 3 || drift.medians.iter().any(|m| *m <= 0.0) {
        return None;
    }
    let spread = ForkSpread::of(&drift.medians);
    Some((
        (spread.ss / spread.df - drift.sampling_var).max(0.0),
        spread.df,
    ))
}

/// The machine's walk between when two sides ran: the variance of the
/// difference between the mean of its log speed at `new` and at `old` (a
/// Brownian motion: Cov(W_s, W_t) = q·min(s, t)), q the sides' mean rate,
/// with the degrees of freedom q was read on. Zero where times are unknown.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Walk {
    pub var: f64,
    pub df: f64,
}

impl Walk {
    /// Two independent terms as one: their variances add, their degrees of
    /// freedom by Welch-Satterthwaite.
    pub fn plus(self, other: Walk) -> Walk {
        let var = self.var + other.var;
        let parts = [self, other];
        let spread: f64 = parts
            .iter()
            .filter(|w| w.var > 0.0)
            .map(|w| w.var * w.var / w.df.max(1.0))
            .sum();
        Walk {
            var,
            df: if spread > 0.0 {
                var * var / spread
            } else {
                0.0
            },
        }
    }

    /// The walk's 95% half-width on the log scale, read as normal.
    pub fn half_width(&self) -> f64 {
        stats::NORMAL_975 * self.var.sqrt()
    }

    /// [`Walk::of`] at the rate the reference does not see, bounded by
    /// that ratio's own spread: it is the host's mix of path speeds, which
    /// flips within seconds and reverts to its level, not a walk that
    /// grows with the hours between runs (read as one, it set A/A runs
    /// seconds apart far wider apart than their figures moved:
    /// docs/why-the-code-is-so.md). For a stationary process whose covariances are not
    /// negative, a weighted sum of sets' means varies by at most σ²·(P² +
    /// N²), P and N the sums of its positive and negative weights (2σ² for
    /// a difference of two sides).
    ///
    /// A run that did not read the ratio (a document from before it) has
    /// its canary's whole walk stand in, unbounded: more than the
    /// reference leaves, never less.
    pub fn beyond_reference(terms: &[(f64, &[RunTime])]) -> Option<Walk> {
        let walk = Walk::at_rate(terms, |r| r.walk_beyond_reference.or(r.walk))?;
        let spreads: Option<Vec<(f64, f64)>> = terms
            .iter()
            .flat_map(|(_, runs)| runs.iter())
            .map(|r| r.beyond_reference_spread)
            .collect();
        let Some(spreads) = spreads.filter(|s| !s.is_empty()) else {
            return Some(walk);
        };
        let var = spreads.iter().map(|(v, _)| v).sum::<f64>() / spreads.len() as f64;
        let signed = |positive: bool| -> f64 {
            terms
                .iter()
                .filter(|(w, runs)| !runs.is_empty() && (*w > 0.0) == positive)
                .map(|(w, _)| w.abs())
                .sum()
        };
        let bound = var * (signed(true).powi(2) + signed(false).powi(2));
        Some(match bound < walk.var {
            true => Walk {
                var: bound,
                df: spreads.iter().map(|(_, df)| df).sum(),
            },
            false => walk,
        })
    }

    /// The walk's share of a weighted sum of sets' figures, each set's
    /// figure the mean over its runs (`terms`: weight, when its runs ran):
    /// q·Σ_i Σ_j w_i·w_j·Cov(set i, set j). A difference of two sets (a
    /// comparison: weights -1 and 1) is one such sum; an attribution's
    /// residual, which weighs several boots, another. None where no run
    /// read its walk.
    ///
    /// A run's figure is the mean of the walk at its forks' points, not its
    /// value at the run's middle: two runs apart in time covary by the
    /// earlier one's middle, as points would, but a run varies with itself
    /// by span·(1 - 1/forks²)/6 less. Two runs of three forks back to back
    /// differ by 0.70 of the walk over the time between their middles.
    pub fn of(terms: &[(f64, &[RunTime])]) -> Option<Walk> {
        Walk::at_rate(terms, |r| r.walk)
    }

    fn at_rate(
        terms: &[(f64, &[RunTime])],
        rate: impl Fn(&RunTime) -> Option<(f64, f64)>,
    ) -> Option<Walk> {
        let all: Vec<&RunTime> = terms.iter().flat_map(|(_, runs)| runs.iter()).collect();
        let rates: Vec<(f64, f64)> = all.iter().filter_map(|r| rate(r)).collect();
        if rates.is_empty() {
            return None;
        }
        let q = rates.iter().map(|(q, _)| q).sum::<f64>() / rates.len() as f64;
        let origin = all
            .iter()
            .map(|r| r.mid_s - r.span_s / 2.0)
            .fold(f64::INFINITY, f64::min);
        let pair = |x: &RunTime, y: &RunTime| -> f64 {
            let earlier = (x.mid_s - origin).min(y.mid_s - origin);
            match x == y {
                true => earlier - x.span_s * (1.0 - 1.0 / (x.forks * x.forks) as f64) / 6.0,
                false => earlier,
            }
        };
        let cov = |xs: &[RunTime], ys: &[RunTime]| -> f64 {
            let mut sum = 0.0;
            for x in xs {
                for y in ys {
                    sum += pair(x, y);
                }
            }
            sum / (xs.len() * ys.len()) as f64
        };
        let mut var = 0.0;
        for (wi, xs) in terms.iter().filter(|(_, runs)| !runs.is_empty()) {
            for (wj, ys) in terms.iter().filter(|(_, runs)| !runs.is_empty()) {
                var += wi * wj * cov(xs, ys);
            }
        }
        Some(Walk {
            var: (q * var).max(0.0),
            df: rates.iter().map(|(_, df)| df).sum(),
        })
    }
}

/// How far a figure (a change, a sum of sets) strays when nothing changed:
/// its standard deviation on the log scale and the degrees of freedom it
/// was read on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub sd: f64,
    pub df: f64,
}

impl Spread {
    /// A figure whose variance is the runs' noise `evidence` times `weight`
    /// plus the machine's `walk`: the two variances' Welch-Satterthwaite
    /// degrees of freedom, since both are estimates from a handful of runs
    /// and stretches, and a normal quantile there would flag more than 5%.
    /// A difference of two sides weighs the runs' noise by 1/a + 1/b (in
    /// logs); a sum of set figures in nanoseconds weighs it by each weight
    /// times figure, squared, over the set's runs.
    pub fn of(evidence: Option<Evidence>, weight: f64, walk: Walk) -> Option<Spread> {
        let runs = evidence.map(|e| (e.var * weight, e.df));
        let parts: Vec<(f64, f64)> = runs
            .into_iter()
            .chain((walk.var > 0.0).then_some((walk.var, walk.df.max(1.0))))
            .filter(|(v, df)| v.is_finite() && *df > 0.0)
            .collect();
        if parts.is_empty() {
            return None;
        }
        let var: f64 = parts.iter().map(|(v, _)| v).sum();
        let spread: f64 = parts.iter().map(|(v, df)| v * v / df).sum();
        let df = if spread > 0.0 {
            var * var / spread
        } else {
            1e6
        };
        Some(Spread { sd: var.sqrt(), df })
    }

    /// A spread as an evidence of runs is read between sides of `a` and `b`.
    #[cfg(test)]
    fn between(evidence: Evidence, a: usize, b: usize) -> Spread {
        Spread {
            sd: evidence.sd() * (1.0 / a as f64 + 1.0 / b as f64).sqrt(),
            df: evidence.df,
        }
    }

    /// Its 95% half-width: Student's t times the standard deviation.
    pub fn half_width(&self) -> f64 {
        stats::student_t_975(self.df) * self.sd
    }

    /// The p-value of a change `change` under the hypothesis that the true
    /// change lies within `threshold` either way (0: no change at all,
    /// the two-sided p-value): how often noise alone takes an estimate
    /// this far out when the truth sits at the threshold's edge, the worst
    /// case within it. A verdict says "changed beyond the threshold", so
    /// a false mark is a row whose change lies within it, and holding
    /// these p-values to a false discovery rate bounds the share of such
    /// rows among the marked (a point null tested beside a threshold
    /// bounds nothing: rows that moved a little pass the test and the
    /// threshold takes its pick of them).
    pub fn p_value(&self, change: f64, threshold: f64) -> f64 {
        let (beyond, within) = (change.abs() - threshold, change.abs() + threshold);
        if self.sd > 0.0 {
            let upper = |x: f64| stats::t_upper_p(x / self.sd, self.df);
            (upper(beyond) + upper(within)).min(1.0)
        } else if beyond > 0.0 {
            0.0
        } else {
            1.0
        }
    }
}

/// One run's figure of a row, as the noise model reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunFigure {
    /// In ticks, with its printed interval for the next run.
    pub ticks: Figure,
    /// The degrees of freedom that interval stood on.
    pub df: Option<f64>,
    /// The figure in nanoseconds.
    pub ns: f64,
    /// Its figure in each fork: the median of the rounds its headline uses
    /// there. Empty where the document kept no rounds.
    pub forks: Vec<f64>,
    /// The figure is the slow state's: no round of the row was quiet.
    pub slow_state: bool,
}

/// Degrees of freedom of what carrying figures to one reference speed adds:
/// the coefficients' errors are read on tens of rounds each.
pub const CARRIED_DF: f64 = 20.0;

/// The spread of one run's figure from its forks: each run's fork figures,
/// their squared log deviations pooled over every run of every side, over
/// the forks a run's figure averages. A run of F forks carries 1/F of the
/// forks' variance, so runs of unlike fork counts carry its mean over the
/// runs (a 1-fork run beside a 3-fork run: 2/3 of it, where dividing by
/// the mean count, 2, took a quarter off). None where a run has no forks,
/// or none has two.
pub(super) fn forks_evidence<'r>(runs: impl Iterator<Item = &'r RunFigure>) -> Option<Evidence> {
    let mut pooled = ForkSpread::default();
    let mut forks = Vec::new();
    for run in runs {
        if run.forks.is_empty() {
            return None;
        }
        let spread = ForkSpread::of(&run.forks);
        pooled.ss += spread.ss;
        pooled.df += spread.df;
        forks.push(run.forks.len() as f64);
    }
    let per_run = forks.iter().map(|f| f.recip()).sum::<f64>() / forks.len() as f64;
    (pooled.df > 0.0).then(|| Evidence {
        var: pooled.ss / pooled.df * per_run,
        df: pooled.df,
    })
}

/// A side's runs whose figure is the quiet state's, with when each ran,
/// where it has any: a run the slow state held throughout this row gives
/// the slow state's figure, which its side's other runs do not (alone on a
/// side, it gets a note instead).
pub fn quiet_runs<T: Copy>(
    runs: &[T],
    slow_state: impl Fn(T) -> bool,
    times: &[RunTime],
) -> (Vec<T>, Vec<RunTime>) {
    if runs.iter().all(|&r| slow_state(r)) {
        return (runs.to_vec(), times.to_vec());
    }
    let kept: Vec<usize> = (0..runs.len()).filter(|&i| !slow_state(runs[i])).collect();
    (
        kept.iter().map(|&i| runs[i]).collect(),
        if times.len() == runs.len() {
            kept.iter().map(|&i| times[i]).collect()
        } else {
            Vec::new()
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Boots of `runs` runs each: a boot effect of sd `boot`, run noise of
    /// sd `run` (log scale), around 100.
    fn boots(count: usize, runs: usize, boot: f64, run: f64, seed: u64) -> Vec<Vec<f64>> {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut normal = || {
            let (u, v) = (rng.f64().max(1e-12), rng.f64());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        };
        (0..count)
            .map(|_| {
                let effect = boot * normal();
                (0..runs)
                    .map(|_| 100.0 * (effect + run * normal()).exp())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_boots_own_variance_is_read_beyond_its_runs_spread() {
        // Four boots of three runs: a 2% boot effect under 1% run noise is
        // recovered on average; with no boot effect the reading is near
        // nothing, not the runs' own spread.
        let mean = |boot: f64| {
            let trials = 2000;
            (0..trials)
                .map(|seed| between_boots(&boots(4, 3, boot, 0.01, seed)).unwrap().var)
                .sum::<f64>()
                / trials as f64
        };
        let (with, without) = (mean(0.02), mean(0.0));
        assert!((with / 0.0004 - 1.0).abs() < 0.1, "{with} against 0.0004");
        assert!(without < 0.00005, "no boot effect read as {without}");
        let e = between_boots(&boots(4, 3, 0.02, 0.01, 1)).unwrap();
        assert_eq!(e.df, 3.0);
        assert!(between_boots(&boots(1, 5, 0.02, 0.01, 1)).is_none());
        assert!(between_boots(&[vec![100.0], vec![]]).is_none());
        // One run a boot: the means' whole variance.
        let single = between_boots(&[vec![100.0], vec![110.0]]).unwrap();
        assert!((single.var - (1.1f64.ln()).powi(2) / 2.0).abs() < 1e-12);
    }

    #[test]
    fn an_interval_gives_the_spread_of_one_runs_figure() {
        // A 95% prediction half-width of ln(1.1) on 10 df: sd of one run's
        // figure ln(1.1) / (2.228 * sqrt 2).
        let e = Evidence::from_interval(100.0, [100.0 / 1.1, 110.0], Some(10.0)).unwrap();
        let sd = 1.1f64.ln() / (2.228 * std::f64::consts::SQRT_2);
        assert!((e.sd() - sd).abs() < 1e-12);
        assert_eq!(e.df, 10.0);
        // Two such runs: the threshold is the interval's half-width again.
        assert!((Spread::between(e, 1, 1).half_width() - 1.1f64.ln()).abs() < 1e-12);
        assert!(Evidence::from_interval(100.0, [120.0, 130.0], None).is_none());
    }

    #[test]
    fn successive_runs_give_the_spread_without_a_slow_trend() {
        // A steady rise of 1% a run: no run lands further than 1% from the
        // one before, however far the first and last are apart.
        let rising: Vec<f64> = (0..10).map(|i| 100.0 * 1.01f64.powi(i)).collect();
        let e = Evidence::from_successive(&rising).unwrap();
        assert!((e.var - 1.01f64.ln().powi(2) / 2.0).abs() < 1e-12);
        assert!(e.var < Evidence::from_runs(&rising).unwrap().var / 10.0);
        // Nine steps: 2 * 81 / 26 degrees of freedom.
        assert!((e.df - 162.0 / 26.0).abs() < 1e-12);
        // One run far off the others steps away and back: it counts.
        let mut odd = vec![100.0, 101.0, 100.0, 101.0, 100.0, 101.0, 100.0];
        odd[3] = 130.0;
        let e = Evidence::from_successive(&odd).unwrap();
        assert!(e.var > 10.0 * 1.01f64.ln().powi(2), "{e:?}");
        assert!(Evidence::from_successive(&[100.0, 101.0]).is_none());
        assert!(Evidence::from_successive(&[100.0, 0.0, 101.0]).is_none());
    }

    #[test]
    fn the_step_between_two_levels_of_the_machine_is_not_a_rows_noise() {
        // Four runs at one level, a trace event turned on, four at +25%:
        // the step between them is the shift's, the steps within each are
        // the row's noise, and their degrees of freedom are the six steps'.
        let before = vec![100.0, 101.0, 100.0, 101.0];
        let after: Vec<f64> = before.iter().map(|f| f * 1.25).collect();
        let e = Evidence::from_stretches(&[before.clone(), after.clone()]).unwrap();
        assert!((e.var - 1.01f64.ln().powi(2) / 2.0).abs() < 1e-12, "{e:?}");
        assert!((e.df - 72.0 / 17.0).abs() < 1e-12, "{e:?}");
        // Read as one series, the step takes the row's noise up 40-fold.
        let joined: Vec<f64> = before.into_iter().chain(after).collect();
        assert!(Evidence::from_successive(&joined).unwrap().var > 40.0 * e.var);
        // One step in each of two stretches is two steps: enough.
        assert!(Evidence::from_stretches(&[vec![100.0, 101.0], vec![125.0, 126.0]]).is_some());
        assert!(Evidence::from_stretches(&[vec![100.0, 101.0], vec![125.0]]).is_none());
    }

    #[test]
    fn a_run_of_fewer_forks_carries_more_of_their_variance() {
        let run = |forks: Vec<f64>| RunFigure {
            ticks: Figure::new(100.0, None),
            df: None,
            ns: 40.0,
            forks,
            slow_state: false,
        };
        let three = run(vec![99.0, 100.0, 101.0]);
        let alone = forks_evidence([&three].into_iter()).unwrap();
        // One run of three forks: its forks' variance over three.
        let logs = [99f64.ln(), 100f64.ln(), 101f64.ln()];
        let mean = logs.iter().sum::<f64>() / 3.0;
        let s2 = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / 2.0;
        assert!((alone.var - s2 / 3.0).abs() < 1e-15, "{alone:?}");
        // Beside a run of one fork (no spread of its own): (1/3 + 1) / 2.
        let one = run(vec![100.0]);
        let mixed = forks_evidence([&three, &one].into_iter()).unwrap();
        assert!((mixed.var - s2 * 2.0 / 3.0).abs() < 1e-15, "{mixed:?}");
        assert_eq!(mixed.df, 2.0);
    }

    #[test]
    fn runs_further_apart_than_their_forks_explain_are_told_apart() {
        let forks = Evidence {
            var: 0.03f64.powi(2),
            df: 4.0,
        };
        // Seven times the variance on three df: F(3, 4) = 7 has p = 0.045.
        let apart = Evidence {
            var: 7.0 * forks.var,
            df: 3.0,
        };
        assert!(apart.beyond_at(&forks, 0.05));
        // Four times is within what three and four df let chance do.
        let near = Evidence {
            var: 4.0 * forks.var,
            df: 3.0,
        };
        assert!(!near.beyond_at(&forks, 0.05));
        assert!(!apart.beyond_at(&Evidence { var: 0.0, df: 4.0 }, 0.05));
    }

    #[test]
    fn pooling_weighs_by_degrees_of_freedom() {
        let p = Evidence::pooled([
            Evidence { var: 1.0, df: 3.0 },
            Evidence { var: 4.0, df: 1.0 },
        ])
        .unwrap();
        assert_eq!((p.var, p.df), (7.0 / 4.0, 4.0));
        assert!(Evidence::pooled([]).is_none());
    }

    #[test]
    fn more_runs_resolve_smaller_changes() {
        let e = Evidence {
            var: 0.01f64.powi(2),
            df: 20.0,
        };
        let threshold = |a, b| Spread::between(e, a, b).half_width();
        assert!(threshold(3, 3) < threshold(1, 1));
        let judged = |threshold_log: f64, tests: usize| Judged {
            threshold_log,
            tests,
        };
        let detectable = |n: usize, j: Judged| {
            j.detectable_judged_by(
                &Spread::between(e, n, n),
                &Spread::between(e.judged_with(n), n, n),
            )
        };
        // The runs found are the fewest whose detectable change is within
        // twice the threshold.
        let one = judged(0.01, 1);
        let n = e.runs_to_resolve(one, Walk::default()).unwrap();
        assert!(
            detectable(n, one) <= 0.02 && detectable(n - 1, one) > 0.02,
            "{n}"
        );
        // Held to a false discovery rate over 65 rows, a change must clear
        // a stricter cut: more runs.
        let many = judged(0.01, 65);
        let m = e.runs_to_resolve(many, Walk::default()).unwrap();
        assert!(
            m > n && detectable(m, many) <= 0.02 && detectable(m - 1, many) > 0.02,
            "{m}"
        );
        // Noise that more runs do not average away: a walk of sd 0.3%
        // beside it needs more runs, and one of 0.5% leaves a change of
        // twice a 1% threshold out of reach of any number (1% + 1.7 + 0.86
        // sd is beyond 2%).
        let fixed = |sd: f64| Walk {
            var: sd * sd,
            df: 20.0,
        };
        let beside = e.runs_to_resolve(one, fixed(0.003)).unwrap();
        assert!(beside > n, "{beside} {n}");
        assert_eq!(e.runs_to_resolve(one, fixed(0.005)), Some(OUT_OF_REACH));
        let runs = Evidence::from_runs(&[100.0, 100.0, 100.0]).unwrap();
        assert_eq!((runs.var, runs.df), (0.0, 2.0));
    }

    /// Runs to resolve as a user relies on it, with fresh noise each
    /// trial: a row whose runs land 0.5% apart (sd, log scale) prints its
    /// count from a history's estimate of that spread (8 df); a repetition
    /// with that many runs a side, whose second side is dearer by twice the
    /// 1% threshold, estimates its spread afresh (its runs' own spread
    /// within each side pooled with a fresh history) and is judged as
    /// compare judges: against the threshold, held to the false discovery
    /// rate over 65 rows. The count is the fewest runs that mark such a
    /// change four times in five, so at it the change is marked in 80% or
    /// more of trials, one run fewer in under 80%. Bounds written before
    /// the first run: at least 75% at the count and at most 85% one run
    /// fewer over 2,000 trials each (the count is read by the delta
    /// method's approximation of two estimated spreads, and 2,000 trials
    /// leave 3.3 binomial sd = 2.9 points either way).
    #[test]
    fn a_change_of_twice_the_threshold_is_marked_four_times_in_five_at_the_runs_printed() {
        use crate::synthetic::standard_normal as normal;
        let (sd, history_df, trials) = (0.005, 8, 2000);
        let judged = Judged {
            threshold_log: 0.01f64.ln_1p(),
            tests: 65,
        };
        let mut rng = fastrand::Rng::with_seed(62);
        // A history's estimate of the runs' spread: sd² times a χ² over its df.
        let history = |rng: &mut fastrand::Rng| Evidence {
            var: sd * sd * (0..history_df).map(|_| normal(rng).powi(2)).sum::<f64>()
                / history_df as f64,
            df: history_df as f64,
        };
        let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
        // One repetition with `runs` a side: marked or not.
        let marked = |rng: &mut fastrand::Rng, runs: usize| {
            let mut side =
                |shift: f64| -> Vec<f64> { (0..runs).map(|_| shift + sd * normal(rng)).collect() };
            let (old, new) = (side(0.0), side(judged.resolved()));
            let within: f64 = [&old, &new]
                .iter()
                .map(|xs| xs.iter().map(|x| (x - mean(xs)).powi(2)).sum::<f64>())
                .sum();
            let df = 2 * (runs - 1);
            let sides = Evidence {
                var: within / df.max(1) as f64,
                df: df as f64,
            };
            let evidence = Evidence::pooled([sides, history(rng)]).unwrap();
            let change = mean(&new) - mean(&old);
            change > 0.0
                && Spread::between(evidence, runs, runs).p_value(change, judged.threshold_log)
                    <= judged.level()
        };
        let (mut at, mut below, mut printed) = (0, 0, Vec::new());
        for _ in 0..trials {
            let n = history(&mut rng)
                .runs_to_resolve(judged, Walk::default())
                .unwrap();
            assert!(n > 1 && n < OUT_OF_REACH, "{n}");
            printed.push(n);
            at += usize::from(marked(&mut rng, n));
            below += usize::from(marked(&mut rng, n - 1));
        }
        printed.sort_unstable();
        let (at, below) = (at as f64 / trials as f64, below as f64 / trials as f64);
        let median = printed[trials / 2];
        assert!(at >= 0.75, "{at} at the runs printed (median {median})");
        assert!(
            below <= 0.85 && below < at,
            "{below} one run fewer, {at} at it"
        );
        eprintln!("runs printed: median {median}; marked {at} at them, {below} one fewer");
    }

    #[test]
    fn the_power_multiple_is_the_textbook_sum_on_many_df_and_more_on_few() {
        let textbook = 1.645 + stats::NORMAL_80;
        assert!((power_multiple(1.645, 1e9, 1e9) - textbook).abs() < 1e-6);
        // On 4 df: (K - 2.132)² = 0.708 (1 + (K² + 4.545) / 8), K = 3.644.
        assert!((power_multiple(2.132, 4.0, 4.0) - 3.644).abs() < 0.002);
        assert!(power_multiple(2.132, 4.0, 4.0) > 2.132 + stats::student_t_80(4.0));
        // A repetition that judges on more degrees of freedom than the
        // change was printed from needs a smaller multiple, one that
        // printed from more a smaller one still.
        assert!(power_multiple(2.132, 4.0, 40.0) < power_multiple(2.132, 4.0, 4.0));
        assert!(power_multiple(2.132, 40.0, 4.0) < power_multiple(2.132, 4.0, 4.0));
    }

    #[test]
    fn a_p_value_against_the_threshold_is_the_two_sided_one_at_none_and_holds_its_level() {
        let s = Spread { sd: 0.01, df: 8.0 };
        // No threshold: the two-sided p-value of t.
        let t = 2.3;
        assert!((s.p_value(t * 0.01, 0.0) - stats::t_two_sided_p(t, 8.0)).abs() < 1e-12);
        // Anything within the threshold is never marked at 5%, and the
        // cut it is marked beyond is past the threshold by the noise's
        // one-sided point or more.
        assert!(s.p_value(0.02, 0.02) > 0.5);
        let judged = Judged {
            threshold_log: 0.02,
            tests: 1,
        };
        let cut = judged.noise_cut(&s);
        assert!((s.p_value(0.02 + cut, 0.02) - 0.05).abs() < 1e-9, "{cut}");
        let one_sided = stats::t_point(0.10, 8.0) * 0.01;
        assert!(
            cut >= one_sided && cut < one_sided * 1.01,
            "{cut} {one_sided}"
        );
        // With a truth at the threshold's edge, an estimate drawn from
        // normal noise of that sd passes the cut as often as the normal's
        // tail beyond it (3.1%: under the 5% the t cut holds a t-noise to),
        // within what chance allows 20,000 draws, 99.9% either way.
        let mut rng = fastrand::Rng::with_seed(11);
        let draws = 20_000;
        let passed = (0..draws)
            .filter(|_| {
                let noise = crate::synthetic::standard_normal(&mut rng) * 0.01;
                s.p_value(0.02 + noise, 0.02) <= 0.05
            })
            .count() as f64
            / draws as f64;
        let nominal = stats::t_two_sided_p(cut / 0.01, 1e9) / 2.0;
        let chance = 3.09 * (nominal * (1.0 - nominal) / draws as f64).sqrt();
        assert!(
            (passed - nominal).abs() <= chance,
            "{passed} against {nominal}"
        );
    }

    /// The walk between two sides, as a comparison weighs them (-1 and 1).
    fn between(old: &[RunTime], new: &[RunTime]) -> Option<Walk> {
        Walk::of(&[(-1.0, old), (1.0, new)])
    }

    /// The walk the reference does not see between two sides.
    fn beyond_between(old: &[RunTime], new: &[RunTime]) -> Option<Walk> {
        Walk::beyond_reference(&[(-1.0, old), (1.0, new)])
    }

    /// A run of a minute, one fork, centred `mid_s` into the machine's
    /// time, whose walk rate was read (1 per second, on 7 df).
    fn minute_at(mid_s: f64) -> RunTime {
        RunTime {
            mid_s,
            span_s: 60.0,
            forks: 1,
            walk: Some((1.0, 7.0)),
            walk_beyond_reference: None,
            beyond_reference_spread: None,
        }
    }

    #[test]
    fn the_walk_grows_with_time_apart_and_shrinks_when_sides_alternate() {
        let at = minute_at;
        let walk_variance =
            |old: &[RunTime], new: &[RunTime]| between(old, new).map_or(0.0, |w| w.var);
        // One run each, 60 s apart: q * 60.
        assert!((walk_variance(&[at(0.0)], &[at(60.0)]) - 60.0).abs() < 1e-9);
        // Three back to back a side, 60 s each: further apart on average.
        let back_to_back = walk_variance(
            &[at(0.0), at(60.0), at(120.0)],
            &[at(180.0), at(240.0), at(300.0)],
        );
        assert!(back_to_back > 60.0, "{back_to_back}");
        // Alternating A B A B A B: less than one pair back to back.
        let alternating = walk_variance(
            &[at(0.0), at(120.0), at(240.0)],
            &[at(60.0), at(180.0), at(300.0)],
        );
        assert!(alternating < 60.0, "{alternating}");
        // A run of three forks is the mean of the walk at three points of
        // its minute: back to back, 60 - 60 * (1 - 1/9) / 3 apart.
        let forked = |mid_s: f64| RunTime {
            forks: 3,
            ..at(mid_s)
        };
        let averaged = walk_variance(&[forked(0.0)], &[forked(60.0)]);
        assert!(
            (averaged - (60.0 - 60.0 * 8.0 / 27.0)).abs() < 1e-9,
            "{averaged}"
        );
        // The same three points by simulation: a walk of rate 1 read at
        // 10, 30 and 50 s of each minute.
        let mut rng = fastrand::Rng::with_seed(3);
        let trials = 20_000;
        let mut sum = 0.0;
        for _ in 0..trials {
            let (mut w, mut t, mut means) = (0.0, 0.0, [0.0; 2]);
            let points: [(usize, f64); 6] = [
                (0, 10.0),
                (0, 30.0),
                (0, 50.0),
                (1, 70.0),
                (1, 90.0),
                (1, 110.0),
            ];
            for (run, point) in points {
                let normal = (-2.0 * rng.f64().max(1e-300).ln()).sqrt()
                    * (std::f64::consts::TAU * rng.f64()).cos();
                w += normal * (point - t).sqrt();
                t = point;
                means[run] += w / 3.0;
            }
            sum += (means[1] - means[0]).powi(2);
        }
        let simulated = sum / trials as f64;
        assert!(
            (simulated / averaged - 1.0).abs() < 0.05,
            "{simulated} {averaged}"
        );
        // Four stretches of 25 s, each 1% above the last.
        let medians: Vec<f64> = (0..4).map(|i| 100.0 * 1.01f64.powi(i)).collect();
        let drift = |medians: &[f64]| Drift {
            medians: medians.to_vec(),
            sampling_var: 0.0,
        };
        let none = Drift::default();
        let run = RunTime::new([0.0, 100.0], 3, &drift(&medians), &none).unwrap();
        let (rate, steps) = run.walk.unwrap();
        assert!((rate - 1.5 * 1.01f64.ln().powi(2) / 25.0).abs() < 1e-15);
        assert_eq!(steps, 3.0);
        assert!(
            RunTime::new([0.0, 100.0], 3, &drift(&medians[..2]), &none)
                .unwrap()
                .walk
                .is_none()
        );
        assert!(RunTime::new([100.0, 100.0], 3, &drift(&medians), &none).is_none());
        // Without a reference, no walk beyond it; with the canary over the
        // reference flat, none either.
        assert!(run.walk_beyond_reference.is_none());
        let flat = RunTime::new([0.0, 100.0], 3, &drift(&medians), &drift(&[1.0; 4])).unwrap();
        assert_eq!(flat.walk_beyond_reference.map(|(rate, _)| rate), Some(0.0));
    }

    #[test]
    fn the_walk_the_reference_does_not_see_is_bounded_by_its_own_spread() {
        // The canary over the reference flips 3% from stretch to stretch:
        // read as a walk, two runs an hour apart would lie far apart; about
        // its level it strays by its stretches' variance, and two runs'
        // levels differ by at most twice that.
        let flipping: Vec<f64> = (0..8)
            .map(|i| if i % 2 == 0 { 1.0 } else { 1.03 })
            .collect();
        let drift = Drift {
            medians: flipping.clone(),
            sampling_var: 0.0,
        };
        let run = |start: f64| RunTime::new([start, start + 40.0], 3, &drift, &drift).unwrap();
        let (a, b) = (run(0.0), run(3600.0));
        let (spread, df) = a.beyond_reference_spread.unwrap();
        let logs: Vec<f64> = flipping.iter().map(|m| m.ln()).collect();
        let mean = logs.iter().sum::<f64>() / 8.0;
        let var = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 7.0;
        assert!((spread - var).abs() < 1e-15 && df == 7.0);
        let walk = between(&[a], &[b]).unwrap();
        let beyond = beyond_between(&[a], &[b]).unwrap();
        assert!((beyond.var - 2.0 * var).abs() < 1e-15, "{beyond:?}");
        assert!(beyond.var < walk.var / 100.0, "{beyond:?} {walk:?}");
        assert_eq!(beyond.df, 14.0);
        // Sets of three alternating runs: the bound of a difference again.
        let sets = [run(0.0), run(80.0), run(160.0)];
        let other = [run(40.0), run(120.0), run(200.0)];
        let beyond = beyond_between(&sets, &other).unwrap();
        assert!(beyond.var <= 2.0 * var + 1e-15);
        // Runs close in time walk less than the bound: the walk stands.
        let near = beyond_between(&[a], &[run(40.0)]).unwrap();
        let near_walk = Walk::at_rate(&[(-1.0, &[a]), (1.0, &[run(40.0)])], |r| {
            r.walk_beyond_reference
        })
        .unwrap();
        assert!(near.var <= near_walk.var + 1e-15);
        // A run from before the ratio was read: its canary's walk stands
        // in and nothing bounds it.
        let old = RunTime {
            walk_beyond_reference: None,
            beyond_reference_spread: None,
            ..a
        };
        let mixed = beyond_between(&[old], &[b]).unwrap();
        assert!(mixed.var > 100.0 * 2.0 * var, "{mixed:?}");
    }
}
