//! A change between two runs: new over old in percent, and the verdict its
//! interval (see [`super::noise`]) and the threshold give. Compare,
//! attribute and fleet all judge by this one rule, and compare and
//! attribute hold their verdicts to one false discovery rate.

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

/// The false discovery rate a comparison's (or an attribution table's)
/// marked figures are held to: of those it marks, at most this share are
/// expected to have moved less than the threshold (their p-values are read
/// against it: `noise::Spread::p_value`).
pub const FALSE_DISCOVERY_RATE: f64 = 0.05;

/// Holds verdicts to [`FALSE_DISCOVERY_RATE`] over every figure tested
/// (those with a p-value; Benjamini-Hochberg): a verdict stands only where
/// the step-up cut finds its p-value. Returns how many were tested.
pub fn hold_to_false_discovery_rate<'a>(
    tests: impl IntoIterator<Item = (&'a mut Verdict, Option<f64>)>,
) -> usize {
    let tested: Vec<(&mut Verdict, f64)> = tests
        .into_iter()
        .filter_map(|(verdict, p)| Some((verdict, p?)))
        .collect();
    let p: Vec<f64> = tested.iter().map(|(_, p)| *p).collect();
    let found = super::stats::benjamini_hochberg(&p, FALSE_DISCOVERY_RATE);
    let count = tested.len();
    for ((verdict, _), found) in tested.into_iter().zip(found) {
        if !found {
            *verdict = Verdict::Same;
        }
    }
    count
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
