//! A figure and its 95% interval: the one type every estimate mitbench
//! prints is, the one half-width rule every "±" is written by, the least
//! half-width an interval for the next run gets ([`next_run_floor`]), and
//! how a figure is written flat under two field names ([`flat_as`]; the
//! names the documents give them are `results::fields`).

use serde::{Deserialize, Serialize};

/// A figure and its 95% interval: what every estimate mitbench prints is,
/// read by one half-width rule ([`half_width`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub value: f64,
    pub ci95: Option<[f64; 2]>,
}

impl Figure {
    pub fn new(value: f64, ci95: Option<[f64; 2]>) -> Figure {
        Figure { value, ci95 }
    }

    /// A figure whose interval reaches `half` either side of it, where a
    /// half-width is known.
    pub fn within(value: f64, half: Option<f64>) -> Figure {
        Figure::new(value, half.map(|h| [value - h, value + h]))
    }

    /// How far its interval reaches on its wider side.
    pub fn half_width(&self) -> Option<f64> {
        self.ci95.map(|interval| half_width(self.value, interval))
    }

    /// The one-sided 95% lower bound: the figure less 1.645/1.96 of its
    /// interval's lower side (a two-sided 95% interval's end is a 97.5%
    /// bound); None without an interval, where no bound is known.
    pub fn lower_bound_95(&self) -> Option<f64> {
        let [lo, _] = self.ci95?;
        Some(self.value - (self.value - lo) * (1.645 / 1.96))
    }

    /// The one-sided 95% upper bound, as [`Figure::lower_bound_95`] is the
    /// lower.
    pub fn upper_bound_95(&self) -> Option<f64> {
        let [_, hi] = self.ci95?;
        Some(self.value + (hi - self.value) * (1.645 / 1.96))
    }

    /// Whether its interval reaches more than twice as far on one side of
    /// the figure as on the other (a p99 wait's, read on a log scale):
    /// such an interval is written as its two ends, since "4,943 ns
    /// ±15,753" reads as reaching below zero.
    pub fn lopsided(&self) -> bool {
        self.ci95.is_some_and(|[lo, hi]| {
            let (below, above) = (self.value - lo, hi - self.value);
            below > 0.0 && above > 0.0 && below.max(above) > 2.0 * below.min(above)
        })
    }

    /// [`Figure::half_width`] as a percentage of the figure.
    pub fn half_width_pct(&self) -> Option<f64> {
        self.ci95
            .and_then(|interval| half_width_pct(self.value, interval))
    }

    /// Whether its interval reaches further than [`WIDEST_READ_PCT`] from
    /// the figure on either side: an interval that wide says where the
    /// next run may land, but not what the figure is.
    pub fn too_wide_to_read(&self) -> bool {
        self.half_width_pct()
            .is_some_and(|pct| pct.abs() > WIDEST_READ_PCT)
    }

    /// The figure with its interval widened, where it has one, to hold
    /// `at`.
    pub fn holding(self, at: f64) -> Figure {
        Figure {
            ci95: self.ci95.map(|[lo, hi]| [lo.min(at), hi.max(at)]),
            ..self
        }
    }

    /// Its interval's ends; a figure without one has both at the figure.
    pub fn ends(&self) -> [f64; 2] {
        self.ci95.unwrap_or([self.value; 2])
    }

    /// `self` + (`other` - `self`) x `weight`, the interval's ends alike.
    pub fn towards(self, other: Figure, weight: f64) -> Figure {
        let between = |a: f64, b: f64| a + (b - a) * weight;
        let ([lo, hi], [other_lo, other_hi]) = (self.ends(), other.ends());
        Figure {
            value: between(self.value, other.value),
            ci95: Some([between(lo, other_lo), between(hi, other_hi)]),
        }
    }

    /// The figure and its interval's ends through `f` alike (a change of
    /// unit, a scale).
    pub fn map(self, f: impl Fn(f64) -> f64) -> Figure {
        Figure {
            value: f(self.value),
            ci95: self.ci95.map(|[lo, hi]| [f(lo), f(hi)]),
        }
    }
}

/// A figure in the one shape every JSON document writes a row's figure in
/// (its `figure` object): the value and its 95% interval in `unit`, the
/// interval's half-width in percent of the value, and what stands behind
/// it. Records, compare rows and tax rows carry one each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reported {
    pub value: f64,
    pub ci95: Option<[f64; 2]>,
    pub half_width_pct: Option<f64>,
    pub unit: String,
    /// The machine's level the figure was measured at: `quiet`, or `slow`
    /// where no round was at the quiet level; absent where a figure is not
    /// of one level (a difference between runs, a share of CPU time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
    /// What the interval is of: `next-run` (where another run's figure may
    /// land), `at-reference-speed` (the same, each run read at one
    /// machine speed), `change` (the difference between two sets of runs),
    /// `estimate` (a count times a price).
    pub basis: String,
    /// The degrees of freedom of the interval's spread, where it has one.
    pub df: Option<f64>,
    /// What the interval stands on, in words the docs define.
    pub stands_on: String,
}

impl Reported {
    pub fn of(figure: Figure, unit: &str, basis: &str, stands_on: String) -> Reported {
        Reported {
            value: figure.value,
            ci95: figure.ci95,
            half_width_pct: figure.half_width_pct(),
            unit: unit.to_string(),
            level: None,
            basis: basis.to_string(),
            df: None,
            stands_on,
        }
    }
}

/// A figure, or one that may be missing, as the JSON writes it: its value
/// and its interval, each null where there is none.
pub trait Flat: Sized {
    fn parts(&self) -> (Option<f64>, Option<[f64; 2]>);
    /// The figure from those two fields; None where they cannot make one.
    fn from_parts(value: Option<f64>, ci95: Option<[f64; 2]>) -> Option<Self>;
}

impl Flat for Figure {
    fn parts(&self) -> (Option<f64>, Option<[f64; 2]>) {
        (Some(self.value), self.ci95)
    }

    fn from_parts(value: Option<f64>, ci95: Option<[f64; 2]>) -> Option<Figure> {
        Some(Figure::new(value?, ci95))
    }
}

impl Flat for Option<Figure> {
    fn parts(&self) -> (Option<f64>, Option<[f64; 2]>) {
        (self.map(|f| f.value), self.and_then(|f| f.ci95))
    }

    fn from_parts(value: Option<f64>, ci95: Option<[f64; 2]>) -> Option<Option<Figure>> {
        Some(value.map(|v| Figure::new(v, ci95)))
    }
}

/// Writes `figure` as two flat fields named `value` and `interval`: the
/// names the JSON gave each figure before it had one type. For
/// `#[serde(flatten, with = ...)]` through the modules [`flat_as`] makes.
pub fn flat<S: serde::Serializer>(
    figure: &impl Flat,
    serializer: S,
    value: &str,
    interval: &str,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let (point, ci95) = figure.parts();
    let mut map = serializer.serialize_map(Some(2))?;
    map.serialize_entry(value, &point)?;
    map.serialize_entry(interval, &ci95)?;
    map.end()
}

/// Reads what [`flat`] wrote, from the fields a flattened figure is given
/// (every field its struct did not claim).
pub fn unflat<'de, D: serde::Deserializer<'de>, F: Flat>(
    deserializer: D,
    value: &str,
    interval: &str,
) -> Result<F, D::Error> {
    use serde::de::Error;
    let mut fields: std::collections::BTreeMap<String, serde_json::Value> =
        Deserialize::deserialize(deserializer)?;
    let mut take = |name: &str| fields.remove(name).unwrap_or(serde_json::Value::Null);
    let point: Option<f64> = serde_json::from_value(take(value)).map_err(D::Error::custom)?;
    let ci95: Option<[f64; 2]> =
        serde_json::from_value(take(interval)).map_err(D::Error::custom)?;
    F::from_parts(point, ci95).ok_or_else(|| D::Error::missing_field("a figure's value"))
}

/// A module for `#[serde(flatten, with = ...)]` writing and reading a
/// figure under two field names.
macro_rules! flat_as {
    ($(#[$doc:meta])* $name:ident: $value:literal, $interval:literal) => {
        $(#[$doc])*
        pub mod $name {
            use $crate::analysis::interval::Flat;

            pub fn serialize<S: serde::Serializer>(
                figure: &impl Flat,
                serializer: S,
            ) -> Result<S::Ok, S::Error> {
                $crate::analysis::interval::flat(figure, serializer, $value, $interval)
            }

            pub fn deserialize<'de, D: serde::Deserializer<'de>, F: Flat>(
                deserializer: D,
            ) -> Result<F, D::Error> {
                $crate::analysis::interval::unflat(deserializer, $value, $interval)
            }
        }
    };
}
pub(crate) use flat_as;

/// The widest interval a figure is read with, percent of the figure:
/// past it the answer prints why instead (a quick run on a host slow half
/// the time, most forks without a quiet round).
pub const WIDEST_READ_PCT: f64 = 50.0;

/// Why a figure's interval is wider than [`WIDEST_READ_PCT`], short
/// enough for the answer's line: where some of the forks its rounds ran in
/// were never quiet (a slow host), how many were. Where every fork was
/// quiet the width is the forks' own spread, or a difference small against
/// it, and the width says it all.
/// `forks` is (quiet forks, forks run), None for a figure read from more
/// than one row.
pub fn too_wide_reason(forks: Option<(usize, usize)>) -> String {
    let slow = match forks {
        Some((quiet, run)) if quiet < run => format!(", {quiet} of {run} forks quiet"),
        _ => String::new(),
    };
    format!("wider than ±{WIDEST_READ_PCT:.0}%{slow}")
}

/// How far `interval` reaches from `figure` on its wider side: the one
/// half-width rule every output writes as "±" (an interval read on the log
/// scale, or widened on one side, is not symmetric, and the narrower side
/// would flatter it).
pub fn half_width(figure: f64, [lo, hi]: [f64; 2]) -> f64 {
    (figure - lo).max(hi - figure)
}

/// [`half_width`] as a percentage of the figure; None at a figure of zero.
pub fn half_width_pct(figure: f64, interval: [f64; 2]) -> Option<f64> {
    (figure.abs() > 0.0).then(|| half_width(figure, interval) / figure.abs() * 100.0)
}

/// The least half-width of a row's interval for the next run, as a share
/// of the row's cost: a row whose rounds and forks agree to the tick (a
/// thunk's price on a quiet host) still moves between runs, by up to 0.16%
/// of its cost in 95% of the pairs of runs that printed it under ±0.2%
/// (docs/why-the-code-is-so.md); rounds that agree cannot show it. The
/// stated share, where the history holds too few runs of the conditions
/// to read one ([`super::spread::RunToRun`]), and the least share
/// otherwise.
pub const NEXT_RUN_FLOOR_SHARE: f64 = 0.002;

/// The least half-width of an interval for the next run of a row costing
/// `row_ticks` or of its difference from its baseline, ticks: `share` of
/// the row ([`super::spread::RunToRun::floor_share`]), and never under
/// `clock_step` (the clock's step over a batch's items, the finest
/// difference a round resolves).
pub fn next_run_floor(row_ticks: f64, clock_step: f64, share: f64) -> f64 {
    (share * row_ticks.abs()).max(clock_step)
}
