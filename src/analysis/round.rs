//! One round's figure from its timed batches: ticks against batch size
//! fitted through the per-size medians (the empty batches measure the
//! fixed cost of a sample directly), every non-empty sample turned into a
//! cost per item with that fixed cost removed, and their summary.

use super::stats::{LineFit, Summary};
use std::collections::BTreeMap;

/// The fit, the summary of per-item costs and the per-size medians of the
/// samples of a round, the samples grouped by size once.
pub fn analyse(samples: &[(u64, u64)]) -> (LineFit, Summary, Vec<(u64, f64)>) {
    let by_size = medians_by_size(samples);
    let (fit, values) = costs_through(samples, &by_size);
    (
        fit,
        Summary::of(&values, Summary::ROUND_RESAMPLES),
        by_size.into_iter().collect(),
    )
}

/// The median ticks of the samples of each batch size, by size.
pub fn medians_by_size(samples: &[(u64, u64)]) -> BTreeMap<u64, f64> {
    let mut by_size: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for &(n, ticks) in samples {
        by_size.entry(n).or_default().push(ticks as f64);
    }
    by_size
        .into_iter()
        .map(|(n, mut ticks)| {
            ticks.sort_by(f64::total_cmp);
            (n, super::stats::median(&ticks))
        })
        .collect()
}

/// Fits ticks against batch size through the median of each size, then turns
/// every non-empty sample into a per-item cost with the fixed cost removed.
/// Samples of 0 items measure that fixed cost and inform only the fit.
pub fn per_item_costs(samples: &[(u64, u64)]) -> (LineFit, Vec<f64>) {
    costs_through(samples, &medians_by_size(samples))
}

/// [`per_item_costs`] with the per-size medians already taken.
fn costs_through(samples: &[(u64, u64)], by_size: &BTreeMap<u64, f64>) -> (LineFit, Vec<f64>) {
    let fixed = by_size.get(&0).copied();
    let (sizes, medians): (Vec<f64>, Vec<f64>) = by_size
        .iter()
        .filter(|&(&n, _)| n > 0)
        .map(|(&n, &m)| (n as f64, m))
        .unzip();
    let fit = match fixed {
        Some(fixed) => super::stats::fit_slope_through(fixed, &sizes, &medians),
        None => super::stats::fit_line(&sizes, &medians),
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
