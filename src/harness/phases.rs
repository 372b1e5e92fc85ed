//! Phases inside a measured batch: the seed's "cycles per phase and their
//! proportions" (clone, channel setup, handshake, ...). The batch marks
//! where each phase ends; every tick since the previous mark belongs to the
//! phase named at the mark, so the phases tile the batch with no gap and a
//! sample's phases add up to its whole (less the harness's own call).

use super::tsc;
use crate::stats::{self, median};
use serde::{Deserialize, Serialize};

/// The phase stopwatch a batch is handed; see the module comment.
pub struct Laps {
    ticks: Vec<u64>,
    last: u64,
    /// Marks made since the stopwatch was made, in every batch.
    marks: u64,
}

impl Laps {
    pub(super) fn new(phases: usize) -> Laps {
        Laps {
            ticks: vec![0; phases],
            last: 0,
            marks: 0,
        }
    }

    /// Starts a batch: clears the phases and starts the first one now.
    pub(super) fn start(&mut self) {
        self.ticks.fill(0);
        self.last = tsc::read().ticks;
    }

    /// Ends a stretch of phase `phase` (an index into the names the probe
    /// gave the harness) now; the next stretch starts at once.
    #[inline]
    pub fn end(&mut self, phase: usize) {
        let now = tsc::read().ticks;
        self.ticks[phase] += now.wrapping_sub(self.last);
        self.last = now;
        self.marks += 1;
    }

    /// Marks made in all batches so far, warm-up included.
    pub(super) fn marks(&self) -> u64 {
        self.marks
    }

    /// The batch's ticks per phase. A phase never marked has none: two
    /// fenced TSC reads are never equal, so a marked one always has some.
    pub(super) fn take(&self) -> Vec<u64> {
        self.ticks.clone()
    }
}

/// What the phase marks add to a phased figure: each mark is a fenced TSC
/// read inside the timed batch.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct MarkCost {
    /// One mark, measured by timing a run of marks with nothing between.
    pub ticks_per_mark: f64,
    /// Marks per item in the round (warm-up batches included: they mark as
    /// the timed ones do).
    pub marks_per_item: f64,
}

impl MarkCost {
    /// Ticks per item the marks add to the figure: an estimate, from the
    /// two measured factors.
    pub fn estimated_ticks_per_item(&self) -> f64 {
        self.ticks_per_mark * self.marks_per_item
    }
}

/// The cost of one mark: the median over a few runs of 256 marks in a row.
pub fn mark_ticks() -> f64 {
    const MARKS: u64 = 256;
    let mut laps = Laps::new(1);
    let mut runs: Vec<f64> = (0..9)
        .map(|_| {
            laps.start();
            let start = tsc::read().ticks;
            for _ in 0..MARKS {
                laps.end(0);
            }
            let end = tsc::read().ticks;
            end.saturating_sub(start) as f64 / MARKS as f64
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    median(&runs)
}

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
            let (median_ticks, ci95_ticks) = median_and_ci(&per_item);
            let (share_pct, share_ci95_pct) = median_and_ci(&shares);
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

fn median_and_ci(values: &[f64]) -> (f64, (f64, f64)) {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let ci = stats::bootstrap_median_ci(
        values,
        0.95,
        stats::Summary::ROUND_RESAMPLES,
        0x7068_6173_6573,
    );
    (median(&sorted), ci)
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
