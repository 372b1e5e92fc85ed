//! A round's phases: each phase's cost per item and its share of the
//! item's total, from the laps the probe marked in every sample.

use super::stats;
use serde::{Deserialize, Serialize};

/// One seed for every round's phase intervals, so a round's are repeatable.
const PHASES_SEED: u64 = 0x7068_6173_6573;

/// One phase's cost per item and its share of the item's total.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PhaseCost {
    pub name: String,
    /// Ticks per item: the median over samples, and its bootstrap 95% CI.
    pub median_ticks: f64,
    pub ci95_ticks: (f64, f64),
    /// Percent of the sample's phases together: the median of the
    /// per-sample shares, and its bootstrap 95% CI. Medians of shares need
    /// not add up to exactly 100.
    pub share_pct: f64,
    pub share_ci95_pct: (f64, f64),
}

/// Per-item cost and share of every phase that some sample marked, from
/// `(items, ticks per phase)` samples; empty batches carry no phases and
/// are passed over.
pub fn summarise(names: &[&'static str], samples: &[(u64, Vec<u64>)]) -> Vec<PhaseCost> {
    // (items, ticks per phase, all phases' ticks) of each timed sample.
    let timed: Vec<(f64, &[u64], f64)> = samples
        .iter()
        .map(|(n, ticks)| {
            (
                *n as f64,
                ticks.as_slice(),
                ticks.iter().sum::<u64>() as f64,
            )
        })
        .filter(|&(n, _, total)| n > 0.0 && total > 0.0)
        .collect();
    names
        .iter()
        .enumerate()
        .filter(|&(i, _)| timed.iter().any(|(_, ticks, _)| ticks[i] > 0))
        .map(|(i, &name)| {
            let per_item: Vec<f64> = timed.iter().map(|&(n, t, _)| t[i] as f64 / n).collect();
            let shares: Vec<f64> = timed
                .iter()
                .map(|&(_, t, total)| t[i] as f64 / total * 100.0)
                .collect();
            let (median_ticks, ci95_ticks) =
                stats::median_with_ci(&per_item, stats::Summary::ROUND_RESAMPLES, PHASES_SEED);
            let (share_pct, share_ci95_pct) =
                stats::median_with_ci(&shares, stats::Summary::ROUND_RESAMPLES, PHASES_SEED);
            PhaseCost {
                name: name.to_string(),
                median_ticks,
                ci95_ticks,
                share_pct,
                share_ci95_pct,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(n: u64, ticks: &[u64]) -> (u64, Vec<u64>) {
        (n, ticks.to_vec())
    }

    #[test]
    fn costs_are_per_item_and_shares_per_sample() {
        let samples = [
            sample(0, &[0, 0, 0]),
            sample(2, &[200, 0, 600]),
            sample(4, &[400, 0, 1200]),
            sample(1, &[100, 0, 300]),
        ];
        let phases = summarise(&["a", "never", "c"], &samples);
        let names: Vec<_> = phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["a", "c"], "a phase no sample marked is left out");
        assert_eq!(phases[0].median_ticks, 100.0);
        assert_eq!(phases[1].median_ticks, 300.0);
        assert_eq!(phases[0].share_pct, 25.0);
        assert_eq!(phases[1].share_pct, 75.0);
        assert_eq!(phases[1].share_ci95_pct, (75.0, 75.0));
    }

    #[test]
    fn nothing_timed_gives_no_phases() {
        assert!(summarise(&["a"], &[sample(0, &[0])]).is_empty());
        assert!(summarise(&["a"], &[]).is_empty());
    }
}
