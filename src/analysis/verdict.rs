//! A change between two runs: new over old in percent, and the verdict its
//! interval (see [`super::noise`]) and the threshold give. Compare,
//! attribute and fleet all judge by this one rule.

use serde::Serialize;

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

pub fn percent_change(old: f64, new: f64) -> f64 {
    (new / old - 1.0) * 100.0
}

/// The verdict on a change of `change_pct` with its 95% interval `ci`:
/// beyond noise when the interval excludes no change, and beyond the
/// threshold.
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
