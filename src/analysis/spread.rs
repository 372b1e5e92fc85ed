//! How far the next run's figure may land: read across the run's forks.
//!
//! Each fork is a fresh process at another moment of the run, so a
//! variant's figure in each fork (the median of its rounds there) carries
//! what a next run redraws: the process's layout and modes, the minute's
//! machine speed, the sampling of its rounds. The spread of those figures,
//! on a log scale, is the variant's between-run noise as this run saw it.
//!
//! Three forks give a variant two degrees of freedom, too few to trust
//! alone; so a variant's spread is pooled with its probe's (the median of
//! its variants': whole probes move together between runs), and a probe's
//! with the run's, each weighing in as a few pseudo-degrees of freedom: a
//! variant whose
//! own forks disagree (a figure at one of two levels per process) still
//! widens its own interval, and one whose three forks agree by chance does
//! not get a needle. The interval is a prediction interval for the next
//! run's figure: t(df) times the spread times sqrt(1/F + 1/F), since both
//! this run's and the next run's figures are of F forks.

use super::interval::Figure;
pub use super::interval::{NEXT_RUN_FLOOR_SHARE, next_run_floor};
use super::rounds;
use super::stats::{self, student_t_975};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Pseudo-degrees of freedom a variant borrows from its probe, and a probe
/// from the run.
const VARIANT_PRIOR_DF: f64 = 2.0;
const PROBE_PRIOR_DF: f64 = 4.0;

/// The spread between processes a run states before it measures (a fork
/// figure's log standard deviation, worth [`STATED_PRIOR_DF`] pseudo
/// degrees of freedom), pooled into the run's own: a run whose rows
/// nearly all stood on one fork (a quick run on a host slow half the time)
/// had one two-fork row, a spread of df 1, and t(1) = 12.7 printed
/// ±4,051.84% on 410 rows. 2% lies between the median (0.59%) and the
/// 75th percentile (2.9%) of the rows' spread between forks in the busy
/// Zen 4 guest's default run (`shared/data/zen4-busy-quick/`); a run with
/// as many degrees of freedom of its own does without it.
const STATED_PRIOR_SD: f64 = 0.02;
const STATED_PRIOR_DF: f64 = 4.0;

/// Squared deviations of log fork figures from their variant's mean, and
/// their degrees of freedom; adds up over variants and probes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ForkSpread {
    pub ss: f64,
    pub df: f64,
}

impl ForkSpread {
    /// The spread of one variant's figures, one per fork.
    pub fn of(figures: &[f64]) -> ForkSpread {
        ForkSpread::of_values(
            figures
                .iter()
                .filter(|f| f.is_finite() && **f > 0.0)
                .map(|f| f.ln()),
        )
    }

    /// The spread of one variant's differences from its baseline, one per
    /// fork, in their own unit: a difference may be near zero or below, and
    /// what moves it (the clock's granularity, a process's layout) is not
    /// proportional to it.
    pub fn of_differences(differences: &[f64]) -> ForkSpread {
        ForkSpread::of_values(differences.iter().copied().filter(|d| d.is_finite()))
    }

    fn of_values(values: impl Iterator<Item = f64>) -> ForkSpread {
        let values: Vec<f64> = values.collect();
        if values.len() < 2 {
            return ForkSpread::default();
        }
        let mean = stats::mean(&values);
        ForkSpread {
            ss: values.iter().map(|v| (v - mean).powi(2)).sum(),
            df: (values.len() - 1) as f64,
        }
    }

    /// The spread pooled with `prior` (a variance) worth `weight`
    /// pseudo-degrees of freedom: (variance, degrees of freedom).
    fn with_prior(self, prior: Option<(f64, f64)>, weight: f64) -> Option<(f64, f64)> {
        let (prior_var, prior_df) = prior.unwrap_or((0.0, 0.0));
        let weight = weight.min(prior_df);
        let df = self.df + weight;
        (df > 0.0).then(|| ((self.ss + weight * prior_var) / df, df))
    }
}

/// What a variant's interval for the next run is made of.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NextRun {
    /// Standard deviation of a fork's figure: of its log for a cost, in
    /// its unit for a difference from the baseline.
    pub sd: f64,
    /// Its degrees of freedom, pseudo ones included.
    pub df: f64,
    /// Forks the variant has figures from.
    pub forks: usize,
}

impl NextRun {
    /// The 95% prediction interval of the next run's figure around `cost`,
    /// with `drift_log` (a 95% half-width on the log scale: how far the
    /// machine's speed may move by then) added in quadrature.
    pub fn interval(&self, cost: f64, drift_log: f64) -> [f64; 2] {
        let half = self.half_width().hypot(drift_log);
        [cost * (-half).exp(), cost * half.exp()]
    }

    /// The 95% interval of the next run's difference from a baseline
    /// around `delta` (this run's, with its own interval): the wider of
    /// the two on each side, the machine's drift by then (`drift_pct`,
    /// which scales both rows and so their difference) in quadrature, and
    /// never under `floor` ([`next_run_floor`]): forks that agree to the
    /// tick predicted a price of ±0, which the next run does not keep.
    pub fn difference_interval(
        &self,
        delta: Figure,
        drift_pct: Option<f64>,
        floor: f64,
    ) -> [f64; 2] {
        let value = delta.value;
        let drift = drift_pct.unwrap_or(0.0) / 100.0 * value.abs();
        let half = self.half_width().hypot(drift).max(floor);
        let [lo, hi] = delta.ends();
        [lo.min(value - half), hi.max(value + half)]
    }

    /// The 95% half-width of the next run's figure less this run's, in the
    /// spread's own scale (log for a figure, its unit for a difference).
    pub fn half_width(&self) -> f64 {
        student_t_975(self.df) * self.sd * (2.0 / self.forks as f64).sqrt()
    }
}

/// Steps between stored runs a floor is read from at the least: a few
/// runs' worth of one row each would be one row's noise, not the host's.
pub const MIN_RUN_STEPS: usize = 50;

/// The 95% quantile of a normal deviation's size over its median
/// (1.96 / 0.6745): a typical row's 95% move from its median move.
const P95_OVER_MEDIAN: f64 = 2.906;

/// How far rows moved from one stored run to the next of the same
/// conditions: what a run whose rounds and forks agree to the tick cannot
/// show of the next run. Read from the history before a run measures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunToRun {
    /// The median size of a row's log step between successive runs.
    pub median_step: f64,
    /// Steps and runs it was read from.
    pub steps: usize,
    pub runs: usize,
    /// The same over the co-runners' p99 waits of those runs
    /// (`History::wait_figures`), where there were enough: a wait moves
    /// with how the host schedules the co-runner, far more than a cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_median_step: Option<f64>,
    /// The rows whose own stored runs give a floor wider than the typical
    /// row's, each with it ([`RowFloor::of`]): a churn of threads or a
    /// flush to another vCPU moves with the host's placement from run to
    /// run, by more than its forks inside one run can show.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<RowFloor>,
    /// The same for the co-runners' p99 waits (`variant` is then
    /// "variant: figure", as `History::wait_figures` keys them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waits: Vec<RowFloor>,
}

/// One row's least half-width of its next run's interval, read from its
/// own stored runs, where that is wider than the typical row's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowFloor {
    pub probe: String,
    pub variant: String,
    /// The half-width, on the log scale (used as a share, as
    /// [`RunToRun::floor_share`] is).
    pub floor: f64,
    /// Stored runs it was read from.
    pub runs: usize,
}

/// Degrees of freedom a row's own floor needs at the least (five runs in
/// one stretch): t(4) is 2.78 against 1.96, and fewer would widen a row by
/// the noise of its own few readings.
pub const MIN_ROW_FLOOR_DF: usize = 4;

/// How many robust standard deviations (MADs read as one) a stored figure
/// may stand from its stretch's median and still count in a row's floor
/// read over every build: a normal figure is past it once in two thousand.
pub const STRAY_SDS: f64 = 3.5;

/// Each stretch's usable figures (finite, above nought) on the log scale.
fn log_stretches(stretches: &[Vec<f64>]) -> Vec<Vec<f64>> {
    stretches
        .iter()
        .map(|s| {
            s.iter()
                .filter(|f| f.is_finite() && **f > 0.0)
                .map(|f| f.ln())
                .collect()
        })
        .collect()
}

impl RowFloor {
    /// The 95% half-width of the next run's log figure around this run's,
    /// from a row's stored figures in stretches at one quiet level: their
    /// variance pooled within the stretches (a step between stretches is a
    /// level shift's), for the difference of two independent runs (this
    /// one and the next: √2), with Student's t on the pooled degrees of
    /// freedom, so that it holds 95% of next runs however few the stored
    /// ones. None under [`MIN_ROW_FLOOR_DF`].
    pub fn of(stretches: &[Vec<f64>]) -> Option<f64> {
        RowFloor::of_logs(&log_stretches(stretches))
    }

    /// [`RowFloor::of`] of stretches already on the log scale.
    fn of_logs(logs: &[Vec<f64>]) -> Option<f64> {
        let df: usize = logs.iter().map(|s| s.len().saturating_sub(1)).sum();
        if df < MIN_ROW_FLOOR_DF {
            return None;
        }
        let ss: f64 = logs
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| {
                let mean = s.iter().sum::<f64>() / s.len() as f64;
                s.iter().map(|x| (x - mean).powi(2)).sum::<f64>()
            })
            .sum();
        let sd = (ss / df as f64).sqrt();
        Some(student_t_975(df as f64) * sd * std::f64::consts::SQRT_2)
    }

    /// [`RowFloor::of`] over the stretches of every build (each build's
    /// runs a stretch of their own, or more), leaving out the figures that
    /// stand further from their stretch's median than
    /// [`STRAY_SDS`] robust deviations of every stretch's figures: a new
    /// build's first runs then have the floor its rows' earlier runs show,
    /// and one stray run of an older build (read before a fix, or in a
    /// stall of the host) does not widen it, as it would a variance.
    pub fn of_any_build(stretches: &[Vec<f64>]) -> Option<f64> {
        let logs: Vec<Vec<f64>> = log_stretches(stretches)
            .into_iter()
            .filter(|s| s.len() >= 2)
            .collect();
        // Each figure's distance from its stretch's median, made up for
        // the median's own closeness to its few figures (n/(n-1) in the
        // variance), so that pairs and long stretches are read alike.
        let centred: Vec<Vec<(f64, f64)>> = logs
            .iter()
            .map(|s| {
                let centre = stats::median_in_place(&mut s.clone());
                let widen = (s.len() as f64 / (s.len() - 1) as f64).sqrt();
                s.iter().map(|x| (*x, (x - centre).abs() * widen)).collect()
            })
            .collect();
        let mut distances: Vec<f64> = centred.iter().flatten().map(|(_, d)| *d).collect();
        if distances.is_empty() {
            return None;
        }
        let sd = stats::robust_sd(&mut distances);
        let limit = STRAY_SDS * sd;
        let kept: Vec<Vec<f64>> = centred
            .iter()
            .map(|s| {
                s.iter()
                    .filter(|(_, d)| *d <= limit)
                    .map(|(x, _)| *x)
                    .collect()
            })
            .collect();
        RowFloor::of_logs(&kept)
    }

    /// The rows whose own floor is wider than `typical`: from this build's
    /// runs (`own`) where they give one, else from every build's (`any`,
    /// [`RowFloor::of_any_build`]).
    fn above(
        own: &BTreeMap<(String, String), Vec<Vec<f64>>>,
        any: &BTreeMap<(String, String), Vec<Vec<f64>>>,
        typical: f64,
    ) -> Vec<RowFloor> {
        any.iter()
            .filter_map(|(key, every)| {
                let (floor, stretches) = own
                    .get(key)
                    .and_then(|this| Some((RowFloor::of(this)?, this)))
                    .or_else(|| Some((RowFloor::of_any_build(every)?, every)))?;
                (floor > typical).then(|| RowFloor {
                    probe: key.0.clone(),
                    variant: key.1.clone(),
                    floor,
                    runs: stretches.iter().map(Vec::len).sum(),
                })
            })
            .collect()
    }

    /// The floor `floors` hold for one row, if any.
    fn find(floors: &[RowFloor], probe: &str, variant: &str) -> Option<f64> {
        floors
            .iter()
            .find(|r| r.probe == probe && r.variant == variant)
            .map(|r| r.floor)
    }
}

impl RunToRun {
    /// From each row's figures over the stored runs, in the order they
    /// ran, in stretches at one quiet level (`History::row_figures`): the
    /// step from one stretch to the next is a level shift's, not the
    /// row's. The median over every row's steps, so the rows whose own
    /// rounds are wide (a cross-CPU flush, a co-runner's wait) do not set
    /// it. None under [`MIN_RUN_STEPS`].
    pub fn of<K>(rows: &BTreeMap<K, Vec<Vec<f64>>>) -> Option<RunToRun> {
        let mut steps: Vec<f64> = rows
            .values()
            .flatten()
            .flat_map(|stretch| stretch.windows(2))
            .filter(|w| w.iter().all(|f| f.is_finite() && *f > 0.0))
            .map(|w| (w[1] / w[0]).ln().abs())
            .collect();
        if steps.len() < MIN_RUN_STEPS {
            return None;
        }
        let runs = rows
            .values()
            .map(|stretches| stretches.iter().map(Vec::len).sum::<usize>())
            .max()
            .unwrap_or(0);
        Some(RunToRun {
            median_step: stats::median_in_place(&mut steps),
            steps: steps.len(),
            runs,
            wait_median_step: None,
            rows: Vec::new(),
            waits: Vec::new(),
        })
    }

    /// With the floors of their own of the rows where wider than the
    /// typical row's: read over this build's runs (`own`), or over every
    /// build's (`any`, those `of` read the typical step from) for a row
    /// this build has too few runs of ([`RowFloor::above`]).
    pub fn with_rows(
        self,
        own: &BTreeMap<(String, String), Vec<Vec<f64>>>,
        any: &BTreeMap<(String, String), Vec<Vec<f64>>>,
    ) -> RunToRun {
        let typical = RunToRun::floor_share(Some(&self));
        RunToRun {
            rows: RowFloor::above(own, any, typical),
            ..self
        }
    }

    /// With the co-runners' waits' steps read from every build's runs
    /// (`any`) as the rows' are (none where there are too few), and the
    /// waits whose own floor is wider than the typical wait's, read as
    /// [`RunToRun::with_rows`] reads the rows'.
    pub fn with_waits(
        self,
        own: &BTreeMap<(String, String), Vec<Vec<f64>>>,
        any: &BTreeMap<(String, String), Vec<Vec<f64>>>,
    ) -> RunToRun {
        let wait_median_step = RunToRun::of(any).map(|w| w.median_step);
        let typical = wait_median_step.map_or(0.0, |step| P95_OVER_MEDIAN * step);
        RunToRun {
            wait_median_step,
            waits: RowFloor::above(own, any, typical),
            ..self
        }
    }

    /// The least half-width of a co-runner's p99 wait's interval for the
    /// next run, on the log scale: its typical 95% move between runs.
    pub fn wait_floor(&self) -> Option<f64> {
        self.wait_median_step.map(|step| P95_OVER_MEDIAN * step)
    }

    /// The floor's share of a row: a typical row's 95% move between runs,
    /// never under [`NEXT_RUN_FLOOR_SHARE`].
    pub fn floor_share(run_to_run: Option<&RunToRun>) -> f64 {
        run_to_run.map_or(NEXT_RUN_FLOOR_SHARE, |r| {
            (P95_OVER_MEDIAN * r.median_step).max(NEXT_RUN_FLOOR_SHARE)
        })
    }

    /// One row's floor share: its own where that is wider than the typical
    /// row's ([`RunToRun::rows`]), the typical row's otherwise.
    pub fn row_floor_share(run_to_run: Option<&RunToRun>, probe: &str, variant: &str) -> f64 {
        let own = run_to_run.and_then(|r| RowFloor::find(&r.rows, probe, variant));
        own.map_or_else(
            || RunToRun::floor_share(run_to_run),
            |f| f.max(NEXT_RUN_FLOOR_SHARE),
        )
    }

    /// One co-runner's p99 wait's floor (`wait`: "variant: figure"): its
    /// own where that is wider than the typical wait's, the typical
    /// wait's otherwise.
    pub fn wait_floor_of(&self, probe: &str, wait: &str) -> Option<f64> {
        RowFloor::find(&self.waits, probe, wait).or_else(|| self.wait_floor())
    }
}

/// The figure of each fork a variant has rounds in: the median of the
/// rounds the headline uses there (the quiet ones where the machine showed
/// two states and the variant has any), given as (fork, round's figure).
pub fn fork_figures(rounds: impl IntoIterator<Item = (usize, f64)>) -> Vec<f64> {
    rounds::by_fork(rounds)
        .iter()
        .map(|figures| stats::median(figures))
        .collect()
}

/// A supported variant's figures across its forks.
#[derive(Debug, Clone)]
pub struct VariantSpread {
    pub name: String,
    /// Forks it has figures from.
    pub forks: usize,
    pub spread: ForkSpread,
    /// Whether its spread informs its probe's and the run's prior. A row
    /// whose forks stand only because the slow state was shown not to move
    /// it (`analysis::slow_state`) keeps its own spread and lends none: such
    /// rows are mostly user-space loops whose two forks agree to 0.1%, and
    /// lent, the 47%-quiet Zen 4 quick run's one-fork rows held the default
    /// run's figures in 55% of rows (all of them, before the rule).
    pub lends: bool,
}

impl VariantSpread {
    /// A variant's differences from another row, one per fork, from pairs
    /// of their rounds: what the next run's interval of the difference is
    /// pooled from.
    pub fn of_paired(name: String, paired: &rounds::Paired) -> VariantSpread {
        VariantSpread {
            name,
            forks: paired.fork_deltas.len(),
            spread: ForkSpread::of_differences(&paired.fork_deltas),
            lends: true,
        }
    }
}

/// A probe's id and its variants' spreads.
#[derive(Debug, Clone)]
pub struct ProbeSpreads {
    pub id: String,
    pub variants: Vec<VariantSpread>,
}

/// Every variant's [`NextRun`] in a run, by (probe id, variant name).
#[derive(Debug, Default)]
pub struct RunSpread {
    by_variant: BTreeMap<(String, String), NextRun>,
}

impl RunSpread {
    /// Every variant's next-run spread from its own fork spread, pooled
    /// with its probe's and the run's.
    pub fn pool(probes: &[ProbeSpreads]) -> RunSpread {
        let own = median_variance(lent(probes.iter().flat_map(|p| &p.variants)));
        let run_prior = with_stated_prior(own);
        let mut by_variant = BTreeMap::new();
        for probe in probes {
            for (name, next) in pooled_in_probe(&probe.variants, run_prior) {
                by_variant.insert((probe.id.clone(), name.to_string()), next);
            }
        }
        RunSpread { by_variant }
    }

    pub fn get(&self, id: &str, variant: &str) -> Option<NextRun> {
        self.by_variant
            .get(&(id.to_string(), variant.to_string()))
            .copied()
    }
}

/// Each variant's [`NextRun`] (by name) from its own spread pooled with
/// its probe's, which is pooled with `run_prior` (a variance and its df)
/// where there is one; a variant of one fork takes the prior alone, at
/// [`VARIANT_PRIOR_DF`] degrees of freedom. Variants of one probe share what moves them between
/// processes, so three forks need not stand alone; a variant at one of two
/// levels per process still widens its own interval.
pub fn pooled_in_probe(
    variants: &[VariantSpread],
    run_prior: Option<(f64, f64)>,
) -> Vec<(&str, NextRun)> {
    let probe_prior = median_variance(lent(variants.iter()))
        .and_then(|(var, df)| ForkSpread { ss: var * df, df }.with_prior(run_prior, PROBE_PRIOR_DF))
        .or(run_prior);
    // A variant measured in one process has no spread of its own: it
    // borrows its probe's (or the run's), never none, which would have
    // left its interval to its rounds alone, far too narrow
    // (docs/why-the-code-is-so.md).
    variants
        .iter()
        .filter(|v| v.forks >= 1)
        .filter_map(|v| {
            let (var, df) = v.spread.with_prior(probe_prior, VARIANT_PRIOR_DF)?;
            let next = NextRun {
                sd: var.sqrt(),
                df,
                forks: v.forks,
            };
            Some((v.name.as_str(), next))
        })
        .collect()
}

/// The run's own spread between processes (a variance and its degrees of
/// freedom), or where it stands on fewer degrees of freedom than the
/// stated one ([`STATED_PRIOR_SD`]) is worth, the two pooled: never a
/// prior of one or two degrees of freedom, nor none at all. A run with
/// evidence of its own keeps it (pooled always, the stated 2% widened the
/// synthetic many-levels host's intervals past its 98% coverage bound).
fn with_stated_prior(own: Option<(f64, f64)>) -> Option<(f64, f64)> {
    match own {
        Some((var, df)) if df >= STATED_PRIOR_DF => Some((var, df)),
        _ => {
            let stated = (STATED_PRIOR_SD.powi(2), STATED_PRIOR_DF);
            let (var, df) = own.unwrap_or((0.0, 0.0));
            ForkSpread { ss: var * df, df }.with_prior(Some(stated), STATED_PRIOR_DF)
        }
    }
}

/// The spreads of the variants that lend theirs ([`VariantSpread::lends`]).
fn lent<'a>(variants: impl Iterator<Item = &'a VariantSpread>) -> impl Iterator<Item = ForkSpread> {
    variants.filter(|v| v.lends).map(|v| v.spread)
}

/// The median of the spreads' own variances and their degrees of freedom
/// together: a prior that one variant at two levels per process does not
/// move, as the pooled sum would.
fn median_variance(spreads: impl Iterator<Item = ForkSpread>) -> Option<(f64, f64)> {
    let mut vars = Vec::new();
    let mut df = 0.0;
    // A spread of zero (forks that agree to the tick) is the clock's step,
    // not evidence of none: it would pull the median down (halve it in a
    // probe of two variants) and hand its neighbours a needle.
    for s in spreads.filter(|s| s.df > 0.0 && s.ss > 0.0) {
        vars.push(s.ss / s.df);
        df += s.df;
    }
    Some((stats::median_of(&vars)?, df))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_to_run_floor_is_a_typical_rows_step_and_needs_enough_of_them() {
        // Forty rows over three runs: each steps by 1% and back; one noisy
        // row steps by 30% and does not set the median.
        let mut rows: BTreeMap<usize, Vec<Vec<f64>>> = (0..40)
            .map(|i| (i, vec![vec![100.0, 101.0, 100.0]]))
            .collect();
        rows.insert(40, vec![vec![100.0, 130.0, 100.0]]);
        let r = RunToRun::of(&rows).expect("82 steps");
        assert_eq!((r.steps, r.runs), (82, 3));
        assert!((r.median_step - 1.01f64.ln()).abs() < 1e-12);
        let share = RunToRun::floor_share(Some(&r));
        assert!((share - P95_OVER_MEDIAN * 1.01f64.ln()).abs() < 1e-12);
        // The step from one quiet level's stretch to the next is a shift's.
        let shifted: BTreeMap<usize, Vec<Vec<f64>>> = (0..60)
            .map(|i| (i, vec![vec![100.0, 100.0], vec![150.0, 150.0]]))
            .collect();
        let r = RunToRun::of(&shifted).expect("120 steps");
        assert_eq!(r.median_step, 0.0);
        // Never under the stated share; the stated share without a reading.
        assert_eq!(RunToRun::floor_share(Some(&r)), NEXT_RUN_FLOOR_SHARE);
        assert_eq!(RunToRun::floor_share(None), NEXT_RUN_FLOOR_SHARE);
        // Two runs of twenty rows are too few steps to read a host from.
        let few: BTreeMap<usize, Vec<Vec<f64>>> =
            (0..20).map(|i| (i, vec![vec![100.0, 101.0]])).collect();
        assert_eq!(RunToRun::of(&few), None);
    }

    #[test]
    fn a_rows_own_floor_is_a_t_prediction_from_its_stretches_and_kept_where_wider() {
        let at = |logs: &[f64]| logs.iter().map(|l| l.exp()).collect::<Vec<f64>>();
        // Logs 0, .1, 0, .1, 0: mean .04, sum of squares .012 over 4 df.
        let own = RowFloor::of(&[at(&[0.0, 0.1, 0.0, 0.1, 0.0])]).expect("4 df");
        let want = student_t_975(4.0) * (0.012f64 / 4.0).sqrt() * 2f64.sqrt();
        assert!((own - want).abs() < 1e-12, "{own} against {want}");
        // A level shift between stretches is not the row's: the same
        // deviations about two levels read as about one.
        let parted = RowFloor::of(&[at(&[0.0, 0.1, 0.0]), at(&[1.0, 1.1, 1.0])]).expect("4 df");
        let one = RowFloor::of(&[at(&[0.0, 0.1, 0.0]), at(&[0.0, 0.1, 0.0])]).expect("4 df");
        assert!((parted - one).abs() < 1e-12);
        // Four runs in one stretch, or five across two, are too few.
        assert_eq!(RowFloor::of(&[at(&[0.0, 0.1, 0.0, 0.1])]), None);
        assert_eq!(RowFloor::of(&[at(&[0.0, 0.1]), at(&[0.0, 0.1, 0.0])]), None);

        // Sixty rows step by 1% and back; one by 30%. Only that one is
        // kept, and only it reads its own floor.
        let key = |i: usize| ("p".to_string(), format!("v{i}"));
        let mut figures: BTreeMap<(String, String), Vec<Vec<f64>>> = (0..60)
            .map(|i| (key(i), vec![vec![100.0, 101.0, 100.0, 101.0, 100.0]]))
            .collect();
        figures.insert(key(60), vec![vec![100.0, 130.0, 100.0, 130.0, 100.0]]);
        let r = RunToRun::of(&figures)
            .expect("244 steps")
            .with_rows(&figures, &figures);
        assert_eq!(r.rows.len(), 1, "{:?}", r.rows);
        assert_eq!((r.rows[0].variant.as_str(), r.rows[0].runs), ("v60", 5));
        let typical = RunToRun::floor_share(Some(&r));
        assert_eq!(RunToRun::row_floor_share(Some(&r), "p", "v0"), typical);
        assert_eq!(
            RunToRun::row_floor_share(Some(&r), "p", "v60"),
            r.rows[0].floor
        );
        assert!(r.rows[0].floor > typical);
        // A wait without a floor of its own reads the typical wait's.
        let waits = figures.clone();
        let r = r.with_waits(&waits, &waits);
        assert_eq!(r.wait_floor_of("p", "v0"), r.wait_floor());
        assert_eq!(r.wait_floor_of("p", "v60"), Some(r.waits[0].floor));
    }

    #[test]
    fn a_floor_over_every_build_leaves_a_stray_figure_out_and_a_second_level_in() {
        let at = |logs: &[f64]| logs.iter().map(|l| l.exp()).collect::<Vec<f64>>();
        // Three builds' stretches, the first with a stray run 1.0 above
        // (e ≈ 2.7 times): distances from the medians, made up for the
        // stretches' lengths, are .112 .112 .122 .071 .071 and four
        // noughts beside the stray's 1.006, so the limit is 3.5 × 1.4826
        // × .071 = .367, and the floor is the one of the other figures.
        let clean = [
            at(&[0.0, 0.1, 0.0, 0.1]),
            at(&[0.05, 0.15, 0.05]),
            at(&[0.02, 0.12]),
        ];
        let mut stray = clean.clone();
        stray[0].push(1f64.exp());
        let want = RowFloor::of(&clean).expect("6 df");
        let got = RowFloor::of_any_build(&stray).expect("6 df once the stray is out");
        assert!((got - want).abs() < 1e-12, "{got} against {want}");
        assert!(RowFloor::of(&stray).unwrap() > 2.0 * want);
        // A build of one run has no distance to give, and changes nothing.
        let mut lone = stray.to_vec();
        lone.push(at(&[3.0]));
        assert_eq!(RowFloor::of_any_build(&lone), Some(got));
        // A row read at one of two tick levels, most figures on the lower:
        // its median distance is nought; both levels stay in.
        let two = [4.52, 4.52, 6.78, 4.52, 6.78, 4.52];
        let levels = [two.to_vec(), two.to_vec()];
        assert_eq!(RowFloor::of_any_build(&levels), RowFloor::of(&levels));
        assert!(RowFloor::of(&levels).is_some());

        // Read as a run reads them: a row this build has five runs of keeps
        // its own floor; a row it has two of reads every build's.
        let key = |i: usize| ("p".to_string(), format!("v{i}"));
        let steady = vec![vec![100.0, 101.0, 100.0, 101.0, 100.0]];
        let mut any: BTreeMap<(String, String), Vec<Vec<f64>>> =
            (0..60).map(|i| (key(i), steady.clone())).collect();
        any.insert(key(60), stray.to_vec());
        any.insert(
            key(61),
            vec![at(&[0.0, 0.3, 0.0, 0.3, 0.0]), at(&[0.0, 0.3])],
        );
        let own: BTreeMap<(String, String), Vec<Vec<f64>>> = [
            (key(60), vec![at(&[0.0, 0.1])]),
            (key(61), vec![at(&[0.0, 0.3, 0.0, 0.3, 0.0])]),
        ]
        .into();
        let r = RunToRun::of(&any)
            .expect("enough steps")
            .with_rows(&own, &any);
        let floor = |i: usize| RowFloor::find(&r.rows, "p", &format!("v{i}"));
        assert_eq!(floor(60), Some(got));
        assert_eq!(floor(61), RowFloor::of(&own[&key(61)]));
        assert_eq!(floor(0), None);
    }

    #[test]
    fn a_fork_spread_is_the_sample_variance_of_log_figures() {
        let s = ForkSpread::of(&[100.0, 100.0 * 1.1f64, 100.0 * 1.1f64.powi(2)]);
        assert_eq!(s.df, 2.0);
        // log figures 0, l, 2l around l: ss = 2 l^2.
        let l = 1.1f64.ln();
        assert!((s.ss - 2.0 * l * l).abs() < 1e-12);
        assert_eq!(ForkSpread::of(&[5.0]).df, 0.0);
        assert_eq!(ForkSpread::of(&[5.0, f64::NAN]).df, 0.0);
    }

    #[test]
    fn a_prior_weighs_in_by_its_pseudo_degrees_of_freedom() {
        let own = ForkSpread { ss: 0.0, df: 2.0 };
        // A variance of 0.01 with plenty of df behind it, worth 4.
        let (var, df) = own.with_prior(Some((0.01, 50.0)), 4.0).unwrap();
        assert!((var - 0.04 / 6.0).abs() < 1e-12);
        assert_eq!(df, 6.0);
        // A prior with less evidence than its weight counts for what it has.
        let (_, df) = own.with_prior(Some((0.01, 1.0)), 4.0).unwrap();
        assert_eq!(df, 3.0);
        assert_eq!(ForkSpread::default().with_prior(None, 4.0), None);
    }

    #[test]
    fn the_prediction_interval_is_t_times_sd_times_root_two_over_forks() {
        let next = NextRun {
            sd: 0.02,
            df: 6.0,
            forks: 3,
        };
        let [lo, hi] = next.interval(100.0, 0.0);
        let half = 2.447 * 0.02 * (2.0f64 / 3.0).sqrt();
        assert!((hi - 100.0 * half.exp()).abs() < 1e-9);
        assert!((lo - 100.0 * (-half).exp()).abs() < 1e-9);
    }

    fn one_fork(name: &str) -> VariantSpread {
        VariantSpread {
            name: name.to_string(),
            forks: 1,
            spread: ForkSpread::default(),
            lends: true,
        }
    }

    #[test]
    fn rows_of_one_fork_borrow_no_spread_of_one_degree_of_freedom() {
        // A quick run on a host slow half the time: one row of the run on
        // two forks 20.7% apart (df 1), every other on one. Alone, that
        // one spread set every row's interval at t(1) = 12.7: ±4,051%.
        let two = VariantSpread {
            name: "two".into(),
            forks: 2,
            spread: ForkSpread::of(&[100.0, 100.0 * 0.207f64.mul_add(2f64.sqrt(), 1.0)]),
            lends: true,
        };
        assert!((two.spread.df - 1.0).abs() < 1e-12);
        let probes = vec![
            ProbeSpreads {
                id: "a".into(),
                variants: vec![two, one_fork("a1")],
            },
            ProbeSpreads {
                id: "b".into(),
                variants: vec![one_fork("b1"), one_fork("b2")],
            },
        ];
        let pooled = RunSpread::pool(&probes);
        let own = probes[0].variants[0].spread;
        let with_stated =
            (own.ss + STATED_PRIOR_DF * STATED_PRIOR_SD.powi(2)) / (own.df + STATED_PRIOR_DF);
        for (id, name) in [("a", "a1"), ("b", "b1"), ("b", "b2")] {
            let next = pooled.get(id, name).expect("a one-fork row borrows");
            assert_eq!(next.df, VARIANT_PRIOR_DF, "{id} {name}: {next:?}");
            // Its probe's own evidence weighs in beside the prior, shrunk.
            assert!(next.sd < 0.207, "{id} {name}: {next:?}");
        }
        let other_probe = pooled.get("b", "b1").unwrap();
        assert!((other_probe.sd.powi(2) - with_stated).abs() < 1e-12);
        // A run with no row on two forks still gives its rows the stated
        // spread, never an interval of their rounds alone.
        let alone = vec![ProbeSpreads {
            id: "c".into(),
            variants: vec![one_fork("c1")],
        }];
        let next = RunSpread::pool(&alone).get("c", "c1").unwrap();
        assert!((next.sd - STATED_PRIOR_SD).abs() < 1e-12, "{next:?}");
        assert_eq!(next.df, VARIANT_PRIOR_DF);
    }
}
