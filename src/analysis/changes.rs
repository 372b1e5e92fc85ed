//! Change points in one row's series over a machine's runs: where its
//! level moved and stayed. E-divisive means (Matteson and James, 2014) as
//! Hunter and Apache Otava use it (Fleming et al., ICPE 2023): the split of
//! a segment that puts the most energy distance between its two sides,
//! kept where a Welch t-test of the sides' means rejects at `alpha` (their
//! stand-in for the permutation test, which a few hundred runs make slow),
//! then each side searched again until no split holds. Pure: a function of
//! the numbers, which a caller takes as logs of the runs' figures.
//!
//! A run's figure comes with its own interval (its rounds'), which Otava's
//! series do not have: a side's variance is held at least at its runs' own
//! sampling variance (`own_floor`), so that a few runs that happened to agree
//! closely do not make a step of less than one run's resolution a change.
//!
//! A run that stands alone, far from both its neighbours (a busy hour, a
//! compile beside it), is read as their median before the search
//! (`without_lone_runs`, a Hampel filter three runs wide): one run is not
//! a level, and the mean a t-test reads is not robust to it. A step's edge
//! keeps its place (the median of three of a step is the step).

use super::interval::Figure;
use super::stats::{mean, student_t_975, t_two_sided_p};

/// The series' level moved between values `at - 1` and `at`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    /// The first value after the change.
    pub at: usize,
    /// The means of the two sides it was tested between (the segment it
    /// split: up to the change points around it).
    pub before: f64,
    pub after: f64,
    /// The Welch t-test's two-sided p-value of the sides' means.
    pub p_value: f64,
}

/// How a series is searched.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Search {
    /// A split holds where its test's p-value is below this. The split
    /// tested is the best of a segment's, so the rate at which a
    /// stationary series shows one is above `alpha`: what it is on these
    /// series is measured (tests/suite/analysis/changes.rs) and stated in the docs.
    pub alpha: f64,
    /// The fewest values on either side of a split: one odd run is not a
    /// level.
    pub min_side: usize,
}

impl Default for Search {
    /// Otava's default significance; three runs a side.
    fn default() -> Search {
        Search {
            alpha: 0.001,
            min_side: 3,
        }
    }
}

/// The change points of `series`, in order.
pub fn change_points(series: &[f64], search: Search) -> Vec<ChangePoint> {
    change_points_of_runs(series, &[], search)
}

/// The change points of a series of runs' figures, each value's own
/// sampling variance in `own_variance` (same units squared; empty where
/// unknown): a side is tested with at least its values' mean own variance.
pub fn change_points_of_runs(
    series: &[f64],
    own_variance: &[f64],
    search: Search,
) -> Vec<ChangePoint> {
    let floor = |range| own_floor(own_variance, range);
    let min_side = search.min_side.max(2);
    let series = &without_lone_runs(series);
    let mut found = Vec::new();
    let mut segments = vec![(0, series.len())];
    while let Some((start, end)) = segments.pop() {
        if end - start < 2 * min_side {
            continue;
        }
        let segment = &series[start..end];
        let Some(split) = best_split(segment, min_side) else {
            continue;
        };
        let (left, right) = segment.split_at(split);
        let at = start + split;
        let p_value = welch(left, right, [floor(start..at), floor(at..end)]).p_value();
        if p_value < search.alpha {
            found.push(ChangePoint {
                at,
                before: mean(left),
                after: mean(right),
                p_value,
            });
            segments.push((start, at));
            segments.push((at, end));
        }
    }
    found.sort_by_key(|c| c.at);
    found
}

/// The variance a side of runs `range` is tested with at least: the median
/// of its runs' own sampling variances (`own`, empty where unknown), a
/// typical run's resolution. Not their mean: one run whose rounds were
/// spread by a busy hour says nothing of the others'.
pub fn own_floor(own: &[f64], range: std::ops::Range<usize>) -> f64 {
    own.get(range)
        .and_then(super::stats::median_of)
        .unwrap_or(0.0)
}

/// How many times a row's typical own sd a run's may be and still be
/// read: past it the run's own rounds spread wider than the steps the
/// series is read for.
const IMPRECISE_SD_MULTIPLE: f64 = 4.0;

/// Which runs' figures are precise enough to place a change: those whose
/// own sampling variance (`own`) is within [`IMPRECISE_SD_MULTIPLE`]
/// squared of the series' median own variance. A run measured through a
/// busy stretch has a median somewhere between the levels it straddled and
/// an interval that says so; it cannot say on which side of a step it lies
/// (where the median's three-run window reads a lone run as its
/// neighbours, it reads such a run as itself: it lies between them).
pub fn precise_enough(own: &[f64]) -> Vec<bool> {
    let typical = super::stats::median_of(own).unwrap_or(0.0);
    own.iter()
        .map(|v| typical <= 0.0 || *v <= typical * IMPRECISE_SD_MULTIPLE.powi(2))
        .collect()
}

/// How far from the median of itself and its neighbours a value must lie,
/// in the series' robust between-run spread, to be read as that median.
const LONE_RUN_SPREADS: f64 = 4.0;

/// `series` with each lone value ([`lone_runs`]) read as the median of
/// itself and its neighbours.
pub fn without_lone_runs(series: &[f64]) -> Vec<f64> {
    read_as_neighbours(series, &lone_runs(series))
}

/// Which values lie further than [`LONE_RUN_SPREADS`] from the median of
/// themselves and their two neighbours (the two nearest at an end). The
/// spread is read from the successive differences' median absolute size,
/// which a step moves by one difference and a lone run by two: 1.4826 x
/// median |d| / sqrt(2) is a normal series' sd.
pub fn lone_runs(series: &[f64]) -> Vec<bool> {
    let n = series.len();
    if n < 3 {
        return vec![false; n];
    }
    let mut steps: Vec<f64> = series.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    let spread = super::stats::median_in_place(&mut steps) * super::stats::MAD_TO_SD / 2f64.sqrt();
    (0..n)
        .map(|i| (series[i] - median_around(series, i)).abs() > LONE_RUN_SPREADS * spread)
        .collect()
}

/// `series` with each value where `lone` holds read as the median of
/// itself and its neighbours.
pub fn read_as_neighbours(series: &[f64], lone: &[bool]) -> Vec<f64> {
    (0..series.len())
        .map(|i| {
            if lone.get(i).copied().unwrap_or(false) && series.len() >= 3 {
                median_around(series, i)
            } else {
                series[i]
            }
        })
        .collect()
}

/// The median of value `i` and its two neighbours (the two nearest at an
/// end); the series holds three values at least.
fn median_around(series: &[f64], i: usize) -> f64 {
    let at = i.clamp(1, series.len() - 2);
    let mut three = [series[at - 1], series[at], series[at + 1]];
    super::stats::median_in_place(&mut three)
}

/// The split of `x` (the first index of its right side) with the largest
/// energy statistic, each side at least `min_side` long: with m values
/// left and n right, mn/(m+n) times twice the mean distance across, less
/// the mean distance within each side. Each sum is carried from one split
/// to the next, so a segment costs O(len²).
fn best_split(x: &[f64], min_side: usize) -> Option<usize> {
    let n = x.len();
    let distance_to = |v: f64, range: std::ops::Range<usize>| -> f64 {
        x[range].iter().map(|w| (v - w).abs()).sum()
    };
    // Sums of |xi - xj| within the left side, within the right, and across,
    // for the split at `split`.
    let mut within_left = 0.0;
    let mut within_right: f64 = (0..n).map(|i| distance_to(x[i], i + 1..n)).sum();
    let mut across = 0.0;
    let mut best: Option<(usize, f64)> = None;
    for split in 1..n {
        // Value split-1 moves from the right side to the left.
        let moved = x[split - 1];
        let to_left = distance_to(moved, 0..split - 1);
        let to_right = distance_to(moved, split..n);
        within_left += to_left;
        within_right -= to_right;
        across += to_right - to_left;
        let (m, r) = (split as f64, (n - split) as f64);
        if split < min_side || n - split < min_side {
            continue;
        }
        let energy = 2.0 * across / (m * r)
            - within_left / (m * (m - 1.0) / 2.0)
            - within_right / (r * (r - 1.0) / 2.0);
        let statistic = m * r / (m + r) * energy;
        if best.is_none_or(|(_, b)| statistic > b) {
            best = Some((split, statistic));
        }
    }
    best.map(|(split, _)| split)
}

/// The two-sided p-value of Welch's t-test that `a` and `b` share a mean;
/// 1 where neither side varies and their means agree.
pub fn welch_p(a: &[f64], b: &[f64]) -> f64 {
    welch(a, b, [0.0; 2]).p_value()
}

/// The step from side `a` to side `b` (the difference of their means)
/// with its 95% interval on Welch's degrees of freedom, each side's
/// variance at least its `floor`; the interval is None where neither side
/// varies. The p-value is Welch's test's.
pub fn step(a: &[f64], b: &[f64], floor: [f64; 2]) -> (Figure, f64) {
    let test = welch(a, b, floor);
    let half = (test.se > 0.0).then(|| student_t_975(test.dof) * test.se);
    (Figure::within(test.difference, half), test.p_value())
}

/// Welch's two-sample t statistic's parts.
struct Welch {
    difference: f64,
    se: f64,
    dof: f64,
}

impl Welch {
    fn p_value(&self) -> f64 {
        if self.se <= 0.0 {
            return if self.difference == 0.0 { 1.0 } else { 0.0 };
        }
        t_two_sided_p(self.difference / self.se, self.dof)
    }
}

fn welch(a: &[f64], b: &[f64], floor: [f64; 2]) -> Welch {
    let variance =
        |x: &[f64], m: f64| x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (x.len() as f64 - 1.0);
    let (ma, mb) = (mean(a), mean(b));
    let (va, vb) = (
        variance(a, ma).max(floor[0]) / a.len() as f64,
        variance(b, mb).max(floor[1]) / b.len() as f64,
    );
    let se2 = va + vb;
    // Welch–Satterthwaite degrees of freedom.
    let dof =
        se2.powi(2) / (va.powi(2) / (a.len() as f64 - 1.0) + vb.powi(2) / (b.len() as f64 - 1.0));
    Welch {
        difference: mb - ma,
        se: se2.sqrt(),
        dof,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_carried_sums_are_the_direct_ones() {
        // The statistic at each split from the carried sums, against the
        // sums written out: the best split must be the same one.
        let x = [1.0, 1.2, 0.9, 1.1, 3.0, 3.2, 2.9, 3.1, 3.05];
        let direct = |split: usize| {
            let (l, r) = x.split_at(split);
            let d = |a: &[f64], b: &[f64]| -> f64 {
                a.iter()
                    .flat_map(|u| b.iter().map(move |v| (u - v).abs()))
                    .sum()
            };
            let (m, n) = (l.len() as f64, r.len() as f64);
            let e = 2.0 * d(l, r) / (m * n) - d(l, l) / (m * (m - 1.0)) - d(r, r) / (n * (n - 1.0));
            m * n / (m + n) * e
        };
        let best = (2..=x.len() - 2)
            .max_by(|&a, &b| direct(a).total_cmp(&direct(b)))
            .unwrap();
        assert_eq!(best_split(&x, 2), Some(best));
        assert_eq!(best, 4);
    }

    #[test]
    fn a_flat_series_has_none_and_a_clean_step_has_one() {
        assert!(change_points(&[5.0; 20], Search::default()).is_empty());
        let mut step = vec![1.0, 1.1, 0.9, 1.0, 1.05, 0.95, 1.0, 1.02];
        step.extend([2.0, 2.1, 1.9, 2.0, 2.05, 1.95, 2.0, 2.02]);
        let found = change_points(&step, Search::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].at, 8);
        assert!(found[0].after > found[0].before);
        // Too short to hold a side of three either way: none.
        assert!(change_points(&step[6..11], Search::default()).is_empty());
        assert!(change_points(&[], Search::default()).is_empty());
    }

    #[test]
    fn welch_agrees_with_a_known_case() {
        // Equal sizes and variances: t = 2 / sqrt(2/5 * 2.5) = 2, df 8,
        // two-sided p = 0.0805 (Student's t table).
        let a = [-2.0, -1.0, 0.0, 1.0, 2.0];
        let b = [0.0, 1.0, 2.0, 3.0, 4.0];
        assert!(
            (welch_p(&a, &b) - 0.0805).abs() < 0.001,
            "{}",
            welch_p(&a, &b)
        );
        assert_eq!(welch_p(&[1.0, 1.0], &[1.0, 1.0]), 1.0);
        assert_eq!(welch_p(&[1.0, 1.0], &[2.0, 2.0]), 0.0);
        // The same sides with their step's interval: 2 ± t(8) x 1.
        let (size, p) = step(&a, &b, [0.0; 2]);
        assert!((p - 0.0805).abs() < 0.001);
        let [lo, hi] = size.ci95.unwrap();
        assert!((size.value - 2.0).abs() < 1e-12);
        assert!((hi - 2.0 - 2.306).abs() < 0.01 && (2.0 - lo - 2.306).abs() < 0.01);
    }

    #[test]
    fn a_lone_run_is_read_as_its_neighbours_and_a_step_keeps_its_edge() {
        let step = [1.0, 1.01, 0.99, 1.0, 2.0, 2.01, 1.99, 2.0];
        assert_eq!(without_lone_runs(&step), step);
        let lone = [1.0, 1.01, 0.99, 1.0, 3.0, 1.01, 0.99, 1.0];
        let read = without_lone_runs(&lone);
        assert_eq!(read[4], 1.01);
        assert_eq!(read[..4], lone[..4]);
        // A lone run just after a step is read as the new level: the
        // step is still found where it is.
        let mut series = vec![1.0, 1.01, 0.99, 1.0, 1.005, 0.995];
        series.extend([4.0, 2.0, 2.01, 1.99, 2.0, 2.005]);
        let found = change_points(&series, Search::default());
        assert_eq!(found.iter().map(|c| c.at).collect::<Vec<_>>(), [6]);
        assert!(without_lone_runs(&[1.0, 5.0]) == [1.0, 5.0]);
    }

    #[test]
    fn a_run_far_less_precise_than_the_rest_is_not_read() {
        let own = [1.0, 1.2, 0.9, 15.0, 25.0, 1.1];
        assert_eq!(precise_enough(&own), [true, true, true, true, false, true]);
        assert_eq!(precise_enough(&[0.0, 0.0, 3.0]), [true; 3]);
        assert!(precise_enough(&[]).is_empty());
    }

    #[test]
    fn runs_that_agree_closely_are_held_to_their_own_resolution() {
        // Two sides each flat to 1e-4 but one run's own sd 0.05: a step of
        // 0.02 is a change by their spread, none by what each run measured.
        let left = [1.0, 1.0001, 0.9999, 1.0, 1.0001, 0.9999];
        let right = left.map(|v| v + 0.02);
        let series: Vec<f64> = left.iter().chain(&right).copied().collect();
        assert_eq!(change_points(&series, Search::default()).len(), 1);
        let own = vec![0.05f64.powi(2); series.len()];
        assert!(change_points_of_runs(&series, &own, Search::default()).is_empty());
        let (size, p) = step(&left, &right, [0.05f64.powi(2); 2]);
        assert!(p > 0.3, "{p}");
        assert!(size.ci95.unwrap()[0] < 0.0);
    }
}
