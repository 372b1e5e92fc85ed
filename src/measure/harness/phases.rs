//! Phases inside a measured batch: the seed's "cycles per phase and their
//! proportions" (clone, channel setup, handshake, ...). The batch marks
//! where each phase ends; every tick since the previous mark belongs to the
//! phase named at the mark, so the phases tile the batch with no gap and a
//! sample's phases add up to its whole (less the harness's own call).

use super::tsc;
use crate::analysis::stats::median_of;
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
    let runs: Vec<f64> = (0..9)
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
    median_of(&runs).unwrap_or(0.0)
}
