//! A round's phases: each phase's cost per item and its share of the
//! item's total, from the laps the probe marked in every sample.

use super::interval::Figure;
use super::stats;
use serde::{Deserialize, Serialize};

/// One seed for every round's phase intervals, so a round's are repeatable.
const PHASES_SEED: u64 = 0x7068_6173_6573;

/// One phase's cost per item and its share of the item's total.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseCost {
    pub name: String,
    /// Ticks per item: the median over samples, and its bootstrap 95% CI.
    pub ticks: Figure,
    /// Percent of the sample's phases together: the median of the
    /// per-sample shares, and its bootstrap 95% CI. Medians of shares need
    /// not add up to exactly 100.
    pub share_pct: Figure,
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
            let of = |values: &[f64]| {
                stats::median_with_ci(values, stats::Summary::ROUND_RESAMPLES, PHASES_SEED)
            };
            PhaseCost {
                name: name.to_string(),
                ticks: of(&per_item),
                share_pct: of(&shares),
            }
        })
        .collect()
}

/// Each phase over a variant's rounds (each round's phases as
/// [`summarise`] gave them), in the order first seen: the median over
/// rounds of the rounds' figures, with the interval over rounds from five
/// rounds on, else the hull of the rounds' own intervals.
pub fn over_rounds(rounds: &[&[PhaseCost]], seed: u64) -> Vec<PhaseCost> {
    let mut names: Vec<&str> = Vec::new();
    for p in rounds.iter().flat_map(|r| r.iter()) {
        if !names.contains(&p.name.as_str()) {
            names.push(&p.name);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let of: Vec<&PhaseCost> = rounds
                .iter()
                .flat_map(|r| r.iter())
                .filter(|p| p.name == name)
                .collect();
            let over = |figure: fn(&PhaseCost) -> Figure| {
                let each: Vec<Figure> = of.iter().map(|p| figure(p)).collect();
                super::figure::median_or_hull(&each, seed)
            };
            PhaseCost {
                name: name.to_string(),
                ticks: over(|p| p.ticks),
                share_pct: over(|p| p.share_pct),
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
        assert_eq!(phases[0].ticks.value, 100.0);
        assert_eq!(phases[1].ticks.value, 300.0);
        assert_eq!(phases[0].share_pct.value, 25.0);
        assert_eq!(phases[1].share_pct, Figure::new(75.0, Some([75.0, 75.0])));
    }

    #[test]
    fn nothing_timed_gives_no_phases() {
        assert!(summarise(&["a"], &[sample(0, &[0])]).is_empty());
        assert!(summarise(&["a"], &[]).is_empty());
    }
}
