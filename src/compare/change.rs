//! The arithmetic of a change between two runs: new over old in percent,
//! its 95% interval (from both runs' rounds, or from their published
//! intervals where rounds are too few), widened by the machines' drift, and
//! the verdict it gives.

use crate::stats;
use serde::Serialize;

const RESAMPLES: usize = 2000;
/// Rounds a side needs for its own bootstrap; fewer, and the interval is
/// built from the two runs' published intervals instead.
const MIN_ROUNDS: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Verdict {
    #[serde(rename = "slower")]
    Slower,
    #[serde(rename = "faster")]
    Faster,
    /// No change beyond noise, or one below the threshold.
    #[serde(rename = "~")]
    Same,
}

impl Verdict {
    pub fn symbol(self) -> &'static str {
        match self {
            Verdict::Slower => "slower",
            Verdict::Faster => "faster",
            Verdict::Same => "~",
        }
    }
}

pub(super) fn percent_change(old: f64, new: f64) -> f64 {
    (new / old - 1.0) * 100.0
}

/// The 95% interval of new/old - 1 in percent: the two runs' rounds
/// resampled independently, the ratio of the medians each time.
pub fn change_interval(old_rounds: &[f64], new_rounds: &[f64], seed: u64) -> Option<[f64; 2]> {
    if old_rounds.len() < MIN_ROUNDS || new_rounds.len() < MIN_ROUNDS {
        return None;
    }
    let olds = stats::bootstrap_medians(old_rounds, RESAMPLES, seed);
    let mut news = stats::bootstrap_medians(new_rounds, RESAMPLES, seed ^ 0x9e37_79b9_7f4a_7c15);
    // Both come back sorted; pairing them in order would pair quantiles and
    // shrink the interval to nothing. The two resamplings are independent,
    // so any fixed pairing of a shuffled side is a valid draw.
    fastrand::Rng::with_seed(seed).shuffle(&mut news);
    let mut ratios: Vec<f64> = olds
        .iter()
        .zip(&news)
        .filter(|(o, _)| **o > 0.0)
        .map(|(o, n)| (n / o - 1.0) * 100.0)
        .collect();
    ratios.sort_by(f64::total_cmp);
    let (lo, hi) = stats::central_interval(&ratios, 0.95);
    Some([lo, hi])
}

/// A change interval from rounds with the machines' drift added to each
/// side in quadrature: both runs measured the row inside one stretch of
/// their machine's time, and `drift_pct` is how far the speed of such a
/// stretch moves (relative to each run's figure, so scaled by new/old).
pub fn widened(ci: [f64; 2], change_pct: f64, drift_pct: f64) -> [f64; 2] {
    let drift = drift_pct * (1.0 + change_pct / 100.0).abs();
    [
        change_pct - (change_pct - ci[0]).max(0.0).hypot(drift),
        change_pct + (ci[1] - change_pct).max(0.0).hypot(drift),
    ]
}

/// Where rounds are too few: the widest ratio the two intervals allow.
pub(super) fn interval_from_cis(old: Option<[f64; 2]>, new: Option<[f64; 2]>) -> Option<[f64; 2]> {
    let (o, n) = (old?, new?);
    (o[0] > 0.0).then(|| [(n[0] / o[1] - 1.0) * 100.0, (n[1] / o[0] - 1.0) * 100.0])
}

pub fn verdict(change_pct: f64, ci: Option<[f64; 2]>, threshold_pct: f64) -> Verdict {
    let beyond_noise = |above: bool| match ci {
        Some([lo, hi]) => {
            if above {
                lo > 0.0
            } else {
                hi < 0.0
            }
        }
        // No interval: nothing shows the change is more than noise.
        None => false,
    };
    if change_pct > threshold_pct && beyond_noise(true) {
        Verdict::Slower
    } else if change_pct < -threshold_pct && beyond_noise(false) {
        Verdict::Faster
    } else {
        Verdict::Same
    }
}
