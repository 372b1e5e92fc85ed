//! Figures that see through the machine's speed: control variates.
//!
//! A guest's whole CPU runs faster or slower as its host moves it (5-7%
//! within one run seen on an Intel Xeon KVM guest), and every figure moves
//! with it. The reference (`harness::reference`: work no mitigation
//! touches) is read beside every round, so each round says how fast the
//! machine was while it ran. Per row, the log of a round's figure is
//! regressed on the log of the reference beside it; the slope (the row's
//! speed coefficient: 1 for work that scales with the core's clock, 0 for
//! a row that waits on something else, a cross-CPU ping-pong or a fork)
//! takes the machine's speed out of each round:
//!
//!   normalized = figure × (run's reference / round's reference)^coefficient
//!
//! and the row's headline and interval are then read over the normalized
//! rounds as over raw ones. The slope is fitted within each fork (a
//! process's own level is not a speed), on rounds the reference read one
//! speed on both sides of, and shrunk by its own uncertainty towards the
//! run's pooled slope (positive-part James-Stein: the row's own slope
//! counts by max(0, 1 - se²/(slope - pooled)²)): most rows follow the
//! core's clock alike, and a row's slope read on 45 rounds of a machine
//! that moved a few percent is uncertain by ±0.2 or more, which carried
//! over the speed's distance between two runs would be an error of its
//! own. A row whose rounds clearly do not follow (a slope near 0 with a
//! small error) keeps a coefficient near 0 and so its raw figure. Between
//! runs a figure is read at one reference speed: each run's normalized
//! figure carried from its own run's reference to a common one by one
//! coefficient for the row (`results::at_speed`).

use super::stats::median_of;
use std::collections::BTreeMap;

/// Fewest degrees of freedom (rounds less one mean per fork and the slope)
/// a row's own slope is fitted on; with fewer, its error is itself too
/// uncertain to say how far the row may stray from the run's pooled slope,
/// and the row takes the pooled one ([`SpeedFit::pooled`]).
pub const MIN_DF: f64 = 8.0;
/// A coefficient is kept within these bounds: a row cannot run faster on a
/// slower machine, nor slow by more than twice the machine's own change.
const BOUNDS: (f64, f64) = (0.0, 2.0);

/// A coefficient within [`BOUNDS`].
pub fn bounded(coefficient: f64) -> f64 {
    coefficient.clamp(BOUNDS.0, BOUNDS.1)
}

/// One round as the fit reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub fork: usize,
    /// The round's median cost per item.
    pub ticks: f64,
    /// The reference read beside it, ticks per step.
    pub reference: f64,
}

/// A row's speed coefficient.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpeedFit {
    /// The slope used: shrunk and bounded.
    pub coefficient: f64,
    /// The slope as fitted, and its standard error.
    pub fitted: f64,
    pub se: f64,
    /// Share of the rounds' within-fork log variance the reference explains
    /// with the coefficient used, 0 to 1.
    pub explained: f64,
    /// The within-fork sums the fit stands on: Σx², Σxy, Σy².
    sums: (f64, f64, f64),
}

impl SpeedFit {
    /// A row too thinly measured for a slope of its own: the run's pooled
    /// slope, as fitted nothing (`fitted` NaN, `se` infinite).
    pub fn pooled(pooled: f64) -> SpeedFit {
        SpeedFit {
            coefficient: bounded(pooled),
            fitted: f64::NAN,
            se: f64::INFINITY,
            explained: 0.0,
            sums: (0.0, 0.0, 0.0),
        }
    }

    /// The fit with its slope shrunk towards `pooled` by its own error
    /// (see the module comment), bounded.
    pub fn toward(self, pooled: f64) -> SpeedFit {
        let off = self.fitted - pooled;
        let keep = if off == 0.0 {
            0.0
        } else {
            (1.0 - self.se * self.se / (off * off)).max(0.0)
        };
        let coefficient = bounded(pooled + off * keep);
        let (sxx, sxy, syy) = self.sums;
        let left = (syy - 2.0 * coefficient * sxy + coefficient * coefficient * sxx).max(0.0);
        SpeedFit {
            coefficient,
            explained: if syy > 0.0 {
                (1.0 - left / syy).max(0.0)
            } else {
                0.0
            },
            ..self
        }
    }
}

/// The run's pooled slope: the median of its rows' fitted slopes whose
/// error is under [`POOL_SE`] (the rows that say something); None where
/// none does.
pub fn pooled(fits: &[SpeedFit]) -> Option<f64> {
    let mut slopes: Vec<f64> = fits
        .iter()
        .filter(|f| f.se < POOL_SE)
        .map(|f| f.fitted)
        .collect();
    slopes.sort_by(f64::total_cmp);
    (!slopes.is_empty()).then(|| super::stats::median(&slopes))
}

/// Rows whose fitted slope is uncertain by more than this say nothing of
/// the run's pooled slope.
const POOL_SE: f64 = 0.5;

/// A speed coefficient and its standard error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slope {
    pub coefficient: f64,
    pub se: f64,
}

/// One coefficient for runs that each fitted a slope: the slopes weighed
/// by their precision (1/se²) and bounded as one run's is. None where no
/// run has one.
pub fn joint(slopes: impl IntoIterator<Item = Slope>) -> Option<Slope> {
    let (mut weighed, mut precision) = (0.0, 0.0);
    for Slope { coefficient, se } in slopes {
        let w = 1.0 / (se * se).max(1e-6);
        weighed += w * coefficient;
        precision += w;
    }
    (precision > 0.0).then(|| Slope {
        coefficient: bounded(weighed / precision),
        se: precision.sqrt().recip(),
    })
}

/// Most of the reference's movement within forks one round may carry for
/// the slope to stand on the rounds rather than on that round.
const MAX_LEVERAGE: f64 = 0.5;

/// The row's coefficient over its rounds; None under [`MIN_DF`] degrees of
/// freedom, where the reference did not move within any fork, or where one
/// round carries most of its movement (over [`MAX_LEVERAGE`] of it): a run
/// whose speed held but beside one round fits every row a slope of that
/// round alone, and carries the next run by it (docs/why-the-code-is-so.md).
pub fn fit(points: &[Point]) -> Option<SpeedFit> {
    let points: Vec<&Point> = points
        .iter()
        .filter(|p| p.ticks > 0.0 && p.reference > 0.0)
        .filter(|p| p.ticks.is_finite() && p.reference.is_finite())
        .collect();
    if (points.len() as f64) < MIN_DF + 2.0 {
        return None;
    }
    // Deviations from each fork's means, in logs.
    let mut by_fork: BTreeMap<usize, Vec<(f64, f64)>> = BTreeMap::new();
    for p in &points {
        by_fork
            .entry(p.fork)
            .or_default()
            .push((p.reference.ln(), p.ticks.ln()));
    }
    let mut deviations = Vec::with_capacity(points.len());
    for fork in by_fork.values() {
        let n = fork.len() as f64;
        let (mx, my) = fork
            .iter()
            .fold((0.0, 0.0), |(a, b), (x, y)| (a + x / n, b + y / n));
        deviations.extend(fork.iter().map(|(x, y)| (x - mx, y - my)));
    }
    let sxx: f64 = deviations.iter().map(|(x, _)| x * x).sum();
    let sxy: f64 = deviations.iter().map(|(x, y)| x * y).sum();
    let syy: f64 = deviations.iter().map(|(_, y)| y * y).sum();
    if sxx <= 0.0 {
        return None;
    }
    let leverage = deviations.iter().map(|(x, _)| x * x).fold(0.0, f64::max) / sxx;
    if leverage > MAX_LEVERAGE {
        return None;
    }
    let fitted = sxy / sxx;
    // Degrees of freedom: the points less one mean per fork and the slope.
    let df = points.len() as f64 - by_fork.len() as f64 - 1.0;
    if df < MIN_DF {
        return None;
    }
    let residual = (syy - fitted * sxy).max(0.0);
    let se = (residual / df / sxx).sqrt();
    // Alone, a row's slope is shrunk towards 0; the run's rows together
    // shrink it towards their pooled slope (`toward`).
    Some(
        SpeedFit {
            coefficient: 0.0,
            fitted,
            se,
            explained: 0.0,
            sums: (sxx, sxy, syy),
        }
        .toward(0.0),
    )
}

/// How far the machine's speed moved over a run, from the reference read
/// beside its rounds (seconds into the run, ticks per step): the medians of
/// eight equal shares of the readings in time order, highest over lowest
/// less one, in percent. None under 32 readings.
pub fn moved_pct(readings: &[super::states::Reading]) -> Option<f64> {
    const STRETCHES: usize = 8;
    if readings.len() < STRETCHES * 4 {
        return None;
    }
    let mut in_time = readings.to_vec();
    in_time.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
    let medians: Vec<f64> = in_time
        .chunks(in_time.len().div_ceil(STRETCHES))
        .map(|chunk| {
            let mut values: Vec<f64> = chunk.iter().map(|r| r.value).collect();
            values.sort_by(f64::total_cmp);
            super::stats::median(&values)
        })
        .collect();
    let low = medians.iter().copied().fold(f64::INFINITY, f64::min);
    let high = medians.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (low > 0.0).then(|| (high / low - 1.0) * 100.0)
}

/// A coefficient's standard error as far as it can matter to a figure: a
/// coefficient the bounds hold is uncertain by at most their own spread
/// (a uniform over them: width/√12), however thinly its rounds measured
/// its slope. A fork's rounds on the Intel Xeon guest, under a filter, ran
/// while the machine's speed held: slope error 4.7, which carried over the
/// 3.5% the run's speed moved made ±12% of the row's interval.
pub fn bounded_se(se: f64) -> f64 {
    se.min((BOUNDS.1 - BOUNDS.0) / 12f64.sqrt())
}

/// The half-width, on the log scale, that a coefficient uncertain by `se`
/// adds to a figure read at another run's reference speed, where the
/// machine's speed moves by `moved_pct` between runs as it did within this
/// one: the figure is carried that far by a slope that may be off by se.
/// One standard error, not a 95% point: read as Student's t at 20 df times
/// it, the synthetic host of many slow levels covered the truth in 99.1%
/// of 2,000 rows (its test holds 82.5-99.0%) with a median half-width of
/// 3.03% (held to 3.0%): the other terms it is added to carry most of it.
pub fn carrying_half_width(se: f64, moved_pct: f64) -> f64 {
    se * (moved_pct / 100.0).ln_1p()
}

/// The one reference speed runs are read at together: the geometric mean
/// of their own (speeds multiply, as the figures they carry do). compare,
/// attribute and the history's learned noise all carry to it.
pub fn common(speeds: &[f64]) -> Option<f64> {
    (!speeds.is_empty() && speeds.iter().all(|s| *s > 0.0))
        .then(|| super::rounds::across_forks(speeds))
}

/// `figure`, measured at `reference`, as it would read at `at` (ticks per
/// reference step): figure × (at / reference)^coefficient.
pub fn at_reference(figure: f64, reference: f64, at: f64, coefficient: f64) -> f64 {
    if reference > 0.0 && at > 0.0 {
        figure * (at / reference).powf(coefficient)
    } else {
        figure
    }
}

/// How much of the machine's slow state the reference may miss for the
/// slow rounds to stand beside the quiet ones at one reference speed: what
/// it misses stays in each slow round read at that speed, and two runs
/// whose slow shares differ would differ by up to that much, so at most
/// half the smallest change a comparison is asked to find (1%).
pub const STATE_SEEN_WITHIN: f64 = 0.005;
/// Readings of each state before the reference's view of them is judged.
const STATE_READINGS: usize = 20;

/// What the reference did not see of the machine's slow state, log scale:
/// the canary over the reference beside it (`quiet` and `slow`: that ratio
/// at the readings of each state), the slow readings' median over the quiet
/// ones'. Near 0 where the slow state slows the whole CPU, the reference
/// with it (then a slow round read at the reference speed is a quiet one);
/// the state's whole slowdown where it slows only the syscall path (the
/// AMD EPYC guest's host: getpid 1.18x slower, the core's arithmetic not).
/// None with fewer than 20 readings of either state.
pub fn state_unseen(quiet: &[f64], slow: &[f64]) -> Option<f64> {
    if quiet.len() < STATE_READINGS || slow.len() < STATE_READINGS {
        return None;
    }
    let (quiet, slow) = (median_of(quiet)?, median_of(slow)?);
    (quiet > 0.0 && slow > 0.0).then(|| (slow / quiet).ln())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slope_that_rests_on_one_round_is_no_slope() {
        // The machine held its speed but for one round, beside which the
        // reference read fast while the row did not move.
        let mut points = rounds(200.0, 1.0, 0.001);
        for p in &mut points {
            p.reference = 3.0 * (1.0 + 0.0005 * (p.ticks * 7.0).sin());
            p.ticks = 200.0 * (1.0 + 0.001 * (p.ticks * 3.0).cos());
        }
        assert!(fit(&points).is_some(), "read noise alone is spread");
        points[7].reference *= 0.976;
        assert!(fit(&points).is_none());
    }

    #[test]
    fn a_coefficients_error_is_at_most_the_spread_of_its_bounds() {
        assert_eq!(bounded_se(0.1), 0.1);
        let cap = bounded_se(4.72);
        assert!((cap - 2.0 / 12f64.sqrt()).abs() < 1e-12, "{cap}");
        assert_eq!(bounded_se(f64::INFINITY), cap);
    }

    #[test]
    fn a_slow_state_the_reference_follows_is_seen_and_one_it_misses_is_not() {
        // The canary over the reference at 200 readings: 73.7 with a read
        // noise of 1%, and a few slow readings that were misread quiet
        // ones (the canary slow, the reference not).
        let ratios = |level: f64, misread: usize| -> Vec<f64> {
            (0..200)
                .map(|i| {
                    let noise = 1.0 + 0.01 * ((i as f64) * 1.7).sin().abs();
                    let misread = if i % 100 < misread { 1.2 } else { 1.0 };
                    level * noise * misread
                })
                .collect()
        };
        // The whole CPU 1.2x slower, the reference with it: the ratio holds.
        let whole = state_unseen(&ratios(73.7, 0), &ratios(73.7, 10)).unwrap();
        assert!(whole.abs() <= STATE_SEEN_WITHIN, "{whole}");
        // Only the syscall path 1.18x slower: the ratio moves with it.
        let path = state_unseen(&ratios(73.7, 0), &ratios(73.7 * 1.18, 0)).unwrap();
        assert!((path - 1.18f64.ln()).abs() < 0.01, "{path}");
        assert!(state_unseen(&ratios(73.7, 0), &ratios(73.7, 0)[..19]).is_none());
    }

    /// Rounds of a row `base` ticks that scales with the machine's speed by
    /// `coefficient`, over three forks, the speed wandering ±5%, each
    /// round with `noise` of its own (deterministic).
    fn rounds(base: f64, coefficient: f64, noise: f64) -> Vec<Point> {
        (0..60)
            .map(|i| {
                let speed = 1.0 + 0.05 * ((i as f64) * 0.7).sin();
                let wobble = 1.0 + noise * ((i as f64) * 2.3).cos();
                Point {
                    fork: i % 3,
                    ticks: base * speed.powf(coefficient) * wobble,
                    reference: 3.0 * speed,
                }
            })
            .collect()
    }

    #[test]
    fn a_row_that_follows_the_machine_gets_its_coefficient() {
        let fit = fit(&rounds(100.0, 1.0, 0.001)).unwrap();
        assert!((fit.coefficient - 1.0).abs() < 0.02, "{fit:?}");
        assert!(fit.explained > 0.9, "{fit:?}");
        let half = fit_of(0.5);
        assert!((half.coefficient - 0.5).abs() < 0.05, "{half:?}");
    }

    fn fit_of(coefficient: f64) -> SpeedFit {
        fit(&rounds(100.0, coefficient, 0.001)).unwrap()
    }

    #[test]
    fn a_row_that_does_not_follow_keeps_its_raw_figure() {
        let fit = fit(&rounds(100.0, 0.0, 0.02)).unwrap();
        assert!(fit.coefficient < 0.2, "{fit:?}");
        // Pure noise against a still reference: nothing to fit.
        let still: Vec<Point> = (0..20)
            .map(|i| Point {
                fork: 0,
                ticks: 100.0 + i as f64,
                reference: 3.0,
            })
            .collect();
        assert!(super::fit(&still).is_none());
        assert!(super::fit(&rounds(100.0, 1.0, 0.0)[..4]).is_none());
    }

    #[test]
    fn a_fork_level_is_not_a_speed() {
        // Fork 1 sits 30% higher and happened to run on a faster machine:
        // read across forks that would look like a negative coefficient.
        let points: Vec<Point> = (0..40)
            .map(|i| {
                let fork = i % 2;
                let speed = if fork == 1 { 0.95 } else { 1.05 } + 0.01 * ((i as f64) * 0.9).sin();
                let level = if fork == 1 { 1.3 } else { 1.0 };
                Point {
                    fork,
                    ticks: 100.0 * level * speed,
                    reference: 3.0 * speed,
                }
            })
            .collect();
        let fit = fit(&points).unwrap();
        assert!((fit.coefficient - 1.0).abs() < 0.02, "{fit:?}");
    }

    #[test]
    fn runs_slopes_are_joined_by_their_precision() {
        // Weights 100 and 25: (100·1 + 25·0) / 125, se 1/√125.
        let of = |coefficient: f64, se: f64| Slope { coefficient, se };
        let Slope {
            coefficient: slope,
            se,
        } = joint([of(1.0, 0.1), of(0.0, 0.2)]).unwrap();
        assert!((slope - 0.8).abs() < 1e-12, "{slope}");
        assert!((se - 125f64.sqrt().recip()).abs() < 1e-12, "{se}");
        assert_eq!(joint([of(3.0, 0.1)]).unwrap().coefficient, BOUNDS.1);
        assert!(joint([]).is_none());
    }

    #[test]
    fn a_figure_is_carried_to_another_reference_speed() {
        assert!((at_reference(100.0, 3.0, 3.3, 1.0) - 110.0).abs() < 1e-9);
        assert_eq!(at_reference(100.0, 3.0, 3.3, 0.0), 100.0);
        assert_eq!(at_reference(100.0, 0.0, 3.3, 1.0), 100.0);
    }
}
