//! Change points in one row's series over a machine's runs: where its
//! level moved and stayed. E-divisive means (Matteson and James, 2014) as
//! Hunter and Apache Otava use it (Fleming et al., ICPE 2023): the split of
//! a segment that puts the most energy distance between its two sides,
//! kept where a Welch t-test of the sides' means rejects at `alpha` (their
//! stand-in for the permutation test, which a few hundred runs make slow),
//! then each side searched again until no split holds. Pure: a function of
//! the numbers, which a caller takes as logs of the runs' figures.

use super::stats::{mean, t_two_sided_p};

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
    /// series is measured (tests/changes.rs) and stated in the docs.
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
    let min_side = search.min_side.max(2);
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
        let p_value = welch_p(left, right);
        if p_value < search.alpha {
            found.push(ChangePoint {
                at: start + split,
                before: mean(left),
                after: mean(right),
                p_value,
            });
            segments.push((start, start + split));
            segments.push((start + split, end));
        }
    }
    found.sort_by_key(|c| c.at);
    found
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
    let variance =
        |x: &[f64], m: f64| x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (x.len() as f64 - 1.0);
    let (ma, mb) = (mean(a), mean(b));
    let (va, vb) = (
        variance(a, ma) / a.len() as f64,
        variance(b, mb) / b.len() as f64,
    );
    let se2 = va + vb;
    if se2 <= 0.0 {
        return if ma == mb { 1.0 } else { 0.0 };
    }
    let t = (mb - ma) / se2.sqrt();
    // Welch–Satterthwaite degrees of freedom.
    let dof =
        se2.powi(2) / (va.powi(2) / (a.len() as f64 - 1.0) + vb.powi(2) / (b.len() as f64 - 1.0));
    t_two_sided_p(t, dof)
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
    }
}
