//! One contrast: a weighted sum of sets' figures of one row (a comparison's
//! new side less its old, an attribution's part, a fleet host against the
//! first) and how far that sum strays when nothing changed, with every
//! level of noise named. compare and attribute read every row through
//! [`read`]; what each feeds in from outside its sets (a history of runs, a
//! boot's variance) is visible at its call site in [`OutsideEvidence`].
//!
//! A run's log figure of a row is, in a one-way random-effects reading,
//! its set's truth, plus a level the whole run settles at (all its forks
//! share it), plus the mean of its forks' own noise, plus the machine's
//! drift where the figures are raw, plus a level the boot settled at.
//! The levels are read as follows:
//!
//! - **within runs**: the forks' spread over the forks a run averages
//!   (documents before forks: each run's printed interval, which holds
//!   everything);
//! - **between runs**: a set's own runs, where it has two or more, and the
//!   history's runs of the same conditions, where the caller has one. Both
//!   measure a run's whole variance, its level included. At one reference
//!   speed it is pooled with the forks' spread where it is not beyond it
//!   (an F test at [`POOL_P`]: the "sometimes pool" rule of Bozivich,
//!   Bancroft and Hartley, whose 25% keeps the test's size near nominal),
//!   and stands alone where it is, on [`ALONE_DF`] degrees of freedom or
//!   more: then the runs' level is real and the forks cannot show it. The two mean squares come from orthogonal parts
//!   of the runs (a run's figure is the mean of its forks' logs), so their
//!   degrees of freedom add without counting any twice. Raw figures hold
//!   the machine's drift inside a set, which the drift term counts apart,
//!   so there the runs' spread stands beside the rest and the larger decides;
//! - **the machine's drift** between when the sets ran ([`Walk::of`]), or at
//!   one reference speed what carrying the sets there adds and the drift the
//!   reference does not see;
//! - **between boots**: where the sets ran under different boots, a boot's
//!   own variance as the history has seen it between boots of one command
//!   line; where unknown it is named, never silently zero.

use super::noise::{self, Evidence, Learned, RunFigure, RunTime, Spread, Walk};
use serde::Serialize;
use std::collections::BTreeMap;

/// The level of the F test above which the runs' spread is pooled with the
/// forks': below it, the runs are taken to settle at a level of their own.
pub const POOL_P: f64 = 0.25;

/// Fewest degrees of freedom the runs' spread stands alone on: a history
/// of three runs has 1.6 (two steps), and standing alone on it put the
/// printed detectable change of a neighbour pair's 90th-percentile row at
/// 55-120% on the AMD guest, t at 1.6 df being what it is; below it the
/// runs' spread is pooled with the forks', where it counts by its degrees
/// of freedom without deciding. Four runs (2.25) stand alone: at 3 (six
/// runs), a five-run history could not, and on the synthetic misfit guest
/// A/A with it marked a false row in 22% of comparisons (8% at 2).
pub const ALONE_DF: f64 = 2.0;

/// One set of a contrast: its runs' figures of the row, when they ran
/// (empty where unknown), its runs' mean log distance from the common
/// reference speed, and the boot it ran under (an index per boot).
#[derive(Debug, Clone, Copy)]
pub struct Set<'a> {
    pub runs: &'a [RunFigure],
    pub times: &'a [RunTime],
    pub distance: f64,
    pub boot: usize,
}

/// What a contrast is told from outside its sets.
#[derive(Debug, Clone, Copy, Default)]
pub struct OutsideEvidence {
    /// At one reference speed: the standard error of the joint coefficient
    /// that carried the sets' runs there. None: raw figures.
    pub carried_se: Option<f64>,
    /// The history's run-to-run noise of the row under these conditions.
    pub history: Option<Learned>,
    /// A boot's own variance of the row, and the boots it was read over.
    pub boot: Option<(Evidence, usize)>,
}

impl OutsideEvidence {
    /// Raw figures with the history's run-to-run noise of the row, if any.
    pub fn history(history: Option<Learned>) -> OutsideEvidence {
        OutsideEvidence {
            history,
            ..OutsideEvidence::default()
        }
    }
}

/// One level of noise a contrast counted, or says it could not.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "level", rename_all = "snake_case")]
pub enum NoiseLevel {
    /// Within runs: the forks' spread, on its degrees of freedom.
    Forks { df: f64 },
    /// Within and between runs at once: each run's printed interval (a
    /// document before forks, or raw figures whose drift is not known).
    Intervals,
    /// Between runs: the sets' own runs, where a set has two or more.
    RunSets { df: f64 },
    /// Between runs: the history's earlier runs of these conditions.
    History { runs: usize },
    /// Between runs: not known here (one run a set and no history).
    RunLevelUnknown,
    /// The machine's drift between when the sets ran.
    Drift,
    /// At one reference speed, the drift the reference does not see.
    DriftBeyondReference,
    /// At one reference speed, the coefficient's error carrying sets there.
    Carrying,
    /// Between boots: a boot's own variance, read over `boots` boots.
    Boots { boots: usize },
    /// The sets ran under different boots whose own variance is not known.
    BootsUnknown,
}

/// Which level set the spread a verdict is held to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decided {
    /// Within runs (forks or intervals) with the drift and carrying terms.
    WithinRuns,
    /// Within and between runs pooled (the runs show no level of their own).
    Pooled,
    /// Between runs alone: the runs settle at a level the forks cannot show.
    BetweenRuns,
}

/// How far a contrast strays when nothing changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Contrast {
    /// Its standard deviation and degrees of freedom (in the sum's unit).
    pub spread: Option<Spread>,
    pub decided_by: Option<Decided>,
    pub levels: Vec<NoiseLevel>,
    /// The machine's drift between the sets, as counted: a message names it.
    pub drift: Walk,
    /// One run's variance, which more runs a set would average, and the
    /// noise they would not: what the runs to resolve are read from.
    pub per_run: Option<Evidence>,
    pub fixed: Walk,
}

impl Contrast {
    pub fn half_width(&self) -> Option<f64> {
        self.spread.map(|s| s.half_width())
    }

    /// The p-value of `value` (in the sum's unit) under a truth within
    /// `threshold` of none ([`Spread::p_value`]).
    pub fn p_value(&self, value: f64, threshold: f64) -> Option<f64> {
        self.spread.map(|s| s.p_value(value, threshold))
    }
}

/// The noise of Σ weight·figure over `terms` (set index, its weight times
/// its figure in the sum's unit: -1 and 1 for a comparison of logs).
pub fn read(sets: &[Set], terms: &[(usize, f64)], outside: &OutsideEvidence) -> Contrast {
    let mut levels = Vec::new();
    let at_speed = outside.carried_se.is_some();
    let all = || sets.iter().flat_map(|s| s.runs.iter());
    let times_known = sets.iter().all(|s| s.times.len() == s.runs.len());
    let walk_read = sets
        .iter()
        .flat_map(|s| s.times.iter())
        .any(|t| t.walk.is_some());
    let forks = noise::forks_evidence(all());
    let walk_known = times_known && walk_read && forks.is_some();
    let within = within_runs(forks, all(), at_speed || walk_known, &mut levels);
    // Raw figures whose drift is known: a set's own spread holds the drift
    // within the set, which the drift term counts already: read beside it
    // too, a toll is seen far less often (docs/why-the-code-is-so.md).
    let drift_inside_sets = !at_speed && walk_known;
    let sets_spread = Evidence::pooled(sets.iter().filter_map(|s| {
        Evidence::from_runs(&s.runs.iter().map(|r| r.ticks.value).collect::<Vec<_>>())
    }));
    let of_sets = sets_spread.filter(|_| !drift_inside_sets);
    if let Some(e) = of_sets {
        levels.push(NoiseLevel::RunSets { df: e.df });
    }
    if let Some(h) = outside.history {
        levels.push(NoiseLevel::History { runs: h.runs });
    }
    let between = Evidence::pooled(
        of_sets
            .into_iter()
            .chain(outside.history.map(|h| h.evidence)),
    );
    // Where the drift term stands in for the sets' spread, how far a run
    // moves was seen all the same: only a set of single runs with no
    // history leaves it unknown, and so do single runs whose rows have
    // neither forks nor an interval (too few rounds left once the
    // interrupted ones are out).
    if between.is_none() && sets_spread.is_none() && (forks.is_some() || within.is_none()) {
        levels.push(NoiseLevel::RunLevelUnknown);
    }

    // One run's variance counts Σ scaled²/runs in the sum.
    let weight = terms
        .iter()
        .map(|&(set, scaled)| scaled.powi(2) / sets[set].runs.len() as f64)
        .sum();
    let (drift, carried) = drift_and_carrying(sets, terms, outside, walk_known, &mut levels);
    let boots = boot_term(sets, terms, outside, &mut levels);
    let carried = carried.unwrap_or_default();
    let fixed_within = drift.plus(carried).plus(boots);
    let fixed_between = carried.plus(boots);

    let own = Spread::of(within, weight, fixed_within);
    let pool = at_speed
        && forks.is_some()
        && matches!((between, within),
            (Some(b), Some(w)) if b.df < ALONE_DF || !b.beyond_at(&w, POOL_P));
    // The walk the reference misses moves each row as far as the row
    // follows the syscall path's speed: an indirect call not at all, a
    // getpid fully. The runs' spread holds it as this row follows it, so
    // where the runs were tested against the forks and found within them,
    // this row does not follow the walk beyond what they show, and it is
    // not added a second time at the canary's full weight (which made
    // every row's detectable change 7% on a host whose canary walked
    // 1.7% beyond the reference between two runs). Runs too few to test
    // keep it.
    let runs_hold_the_walk = matches!(between, Some(b) if b.df >= ALONE_DF);
    let (spread, decided_by, per_run, fixed) = if pool {
        let pooled = Evidence::pooled(within.into_iter().chain(between));
        let fixed = match runs_hold_the_walk {
            true => fixed_between,
            false => fixed_within,
        };
        (
            Spread::of(pooled, weight, fixed),
            Decided::Pooled,
            pooled,
            fixed,
        )
    } else {
        let apart = between.and_then(|b| Spread::of(Some(b), weight, fixed_between));
        match (own, apart) {
            (Some(o), Some(a)) if a.half_width() > o.half_width() => {
                (Some(a), Decided::BetweenRuns, between, fixed_between)
            }
            (None, Some(a)) => (Some(a), Decided::BetweenRuns, between, fixed_between),
            (o, _) => (o, Decided::WithinRuns, within, fixed_within),
        }
    };
    Contrast {
        decided_by: spread.map(|_| decided_by),
        spread,
        levels,
        drift,
        per_run,
        fixed,
    }
}

/// The noise within runs: the forks' spread where it can be read as it
/// is (at one speed, or with the drift known), else the runs' own
/// intervals pooled; named in `levels`.
fn within_runs<'r>(
    forks: Option<Evidence>,
    runs: impl Iterator<Item = &'r RunFigure>,
    forks_hold: bool,
    levels: &mut Vec<NoiseLevel>,
) -> Option<Evidence> {
    match forks {
        Some(f) if forks_hold => {
            levels.push(NoiseLevel::Forks { df: f.df });
            Some(f)
        }
        _ => {
            let intervals = Evidence::pooled(runs.filter_map(Evidence::of_run));
            if intervals.is_some() {
                levels.push(NoiseLevel::Intervals);
            }
            intervals
        }
    }
}

/// What the runs' own noise does not hold: the drift between the sets,
/// or at one speed the carrying and the drift the reference misses; each
/// term counted is named in `levels`.
fn drift_and_carrying(
    sets: &[Set],
    terms: &[(usize, f64)],
    outside: &OutsideEvidence,
    walk_known: bool,
    levels: &mut Vec<NoiseLevel>,
) -> (Walk, Option<Walk>) {
    let at_speed = outside.carried_se.is_some();
    let scaled: Vec<(f64, &[RunTime])> = terms
        .iter()
        .map(|&(set, scaled)| (scaled, sets[set].times))
        .collect();
    let carried = outside.carried_se.map(|se| Walk {
        var: (se
            * terms
                .iter()
                .map(|&(set, w)| w * sets[set].distance)
                .sum::<f64>())
        .powi(2),
        df: noise::CARRIED_DF,
    });
    let drift = match (at_speed, walk_known) {
        (false, true) => Walk::of(&scaled).unwrap_or_default(),
        (true, true) => Walk::beyond_reference(&scaled).unwrap_or_default(),
        (_, false) => Walk::default(),
    };
    if drift.var > 0.0 {
        levels.push(match at_speed {
            true => NoiseLevel::DriftBeyondReference,
            false => NoiseLevel::Drift,
        });
    }
    if carried.is_some() {
        levels.push(NoiseLevel::Carrying);
    }
    (drift, carried)
}

/// A boot's draw moves every set of the boot alike: the sum weighs it by
/// the scaled figures of each boot's sets, which cancel within a boot.
/// Where the sets span boots and its variance is unknown, it is named.
fn boot_term(
    sets: &[Set],
    terms: &[(usize, f64)],
    outside: &OutsideEvidence,
    levels: &mut Vec<NoiseLevel>,
) -> Walk {
    let mut per_boot: Vec<(usize, f64)> = Vec::new();
    for &(set, scaled) in terms {
        let boot = sets[set].boot;
        match per_boot.iter_mut().find(|(b, _)| *b == boot) {
            Some((_, total)) => *total += scaled,
            None => per_boot.push((boot, scaled)),
        }
    }
    if per_boot.len() < 2 {
        return Walk::default();
    }
    match outside.boot {
        Some((variance, boots)) => {
            levels.push(NoiseLevel::Boots { boots });
            Walk {
                var: variance.var * per_boot.iter().map(|(_, x)| x * x).sum::<f64>(),
                df: variance.df,
            }
        }
        None => {
            levels.push(NoiseLevel::BootsUnknown);
            Walk::default()
        }
    }
}

/// A boot's own variance per row, as the history has seen it between boots
/// of the present command line: what a set of another boot strays by
/// however many runs it holds.
#[derive(Debug, Clone, Default)]
pub struct BootNoise {
    pub rows: BTreeMap<(String, String), Evidence>,
    /// The most boots any row was read over.
    pub boots: usize,
}

impl BootNoise {
    /// From each row's figures per boot (`History::boot_figures`).
    pub fn of(figures: &BTreeMap<(String, String), Vec<Vec<f64>>>) -> BootNoise {
        BootNoise {
            rows: figures
                .iter()
                .filter_map(|(key, boots)| Some((key.clone(), noise::between_boots(boots)?)))
                .collect(),
            boots: figures.values().map(Vec::len).max().unwrap_or(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::interval::Figure;

    fn run(ticks: f64, forks: &[f64]) -> RunFigure {
        RunFigure {
            ticks: Figure::new(ticks, Some([ticks * 0.98, ticks * 1.02])),
            df: Some(4.0),
            ns: ticks,
            forks: forks.to_vec(),
            slow_state: false,
        }
    }

    fn set(runs: &[RunFigure], boot: usize) -> Set<'_> {
        Set {
            runs,
            times: &[],
            distance: 0.0,
            boot,
        }
    }

    const AT_SPEED: OutsideEvidence = OutsideEvidence {
        carried_se: Some(0.0),
        history: None,
        boot: None,
    };

    #[test]
    fn one_run_a_side_says_the_run_level_is_unknown() {
        let (a, b) = (
            [run(100.0, &[99.0, 100.0, 101.0])],
            [run(101.0, &[100.0, 101.0, 102.0])],
        );
        let c = read(&[set(&a, 0), set(&b, 0)], &[(0, -1.0), (1, 1.0)], &AT_SPEED);
        assert!(c.levels.contains(&NoiseLevel::RunLevelUnknown), "{c:?}");
        assert_eq!(c.decided_by, Some(Decided::WithinRuns));
        // Two runs of three forks: 4 degrees of freedom, none counted twice.
        assert_eq!(c.spread.unwrap().df.round(), 4.0);
    }

    #[test]
    fn runs_that_agree_with_their_forks_are_pooled_with_them() {
        // Runs about as far apart as their forks' spread over three forks
        // (0.58%): no level of their own, so both count, on 8 + 4 df.
        let a = [
            run(100.0, &[99.0, 100.0, 101.0]),
            run(100.6, &[99.6, 100.6, 101.6]),
        ];
        let b = [
            run(100.3, &[99.3, 100.3, 101.3]),
            run(99.8, &[98.8, 99.8, 100.8]),
        ];
        let c = read(&[set(&a, 0), set(&b, 0)], &[(0, -1.0), (1, 1.0)], &AT_SPEED);
        assert_eq!(c.decided_by, Some(Decided::Pooled), "{c:?}");
        assert!(c.per_run.unwrap().df > 9.0, "{c:?}");
    }

    #[test]
    fn runs_at_a_level_of_their_own_stand_alone_beyond_their_forks() {
        // Forks 1% apart, runs 8% apart: the runs' level decides, and the
        // spread is about the runs', not the forks'.
        let a = [
            run(100.0, &[99.0, 100.0, 101.0]),
            run(108.0, &[107.0, 108.0, 109.0]),
        ];
        let b = [
            run(104.0, &[103.0, 104.0, 105.0]),
            run(96.0, &[95.0, 96.0, 97.0]),
        ];
        let c = read(&[set(&a, 0), set(&b, 0)], &[(0, -1.0), (1, 1.0)], &AT_SPEED);
        assert_eq!(c.decided_by, Some(Decided::BetweenRuns), "{c:?}");
        let runs_sd = c.per_run.unwrap().sd();
        assert!(runs_sd > 0.04 && runs_sd < 0.08, "{c:?}");
    }

    #[test]
    fn a_boot_is_counted_across_boots_named_when_unknown_and_cancels_within_one() {
        let a = [run(100.0, &[99.0, 100.0, 101.0])];
        let b = [run(100.0, &[99.0, 100.0, 101.0])];
        let terms = [(0, -1.0), (1, 1.0)];
        let one = read(&[set(&a, 0), set(&b, 0)], &terms, &AT_SPEED);
        let unknown = read(&[set(&a, 0), set(&b, 1)], &terms, &AT_SPEED);
        assert!(unknown.levels.contains(&NoiseLevel::BootsUnknown));
        assert!(!one.levels.contains(&NoiseLevel::BootsUnknown));
        assert_eq!(one.spread, unknown.spread);
        let boot = Evidence {
            var: 0.02f64.powi(2),
            df: 3.0,
        };
        let known = OutsideEvidence {
            boot: Some((boot, 4)),
            ..AT_SPEED
        };
        let counted = read(&[set(&a, 0), set(&b, 1)], &terms, &known);
        assert!(counted.levels.contains(&NoiseLevel::Boots { boots: 4 }));
        // Two boots' draws: 2 x var beside the forks' part.
        let added = counted.spread.unwrap().sd.powi(2) - one.spread.unwrap().sd.powi(2);
        assert!((added - 2.0 * boot.var).abs() < 1e-12, "{added}");
        let within = read(&[set(&a, 1), set(&b, 1)], &terms, &known);
        assert_eq!(within.spread, one.spread);
    }

    /// A run of a minute with three forks centred `mid_s` into the
    /// machine's time, whose walks were read.
    fn minute_at(mid_s: f64) -> RunTime {
        RunTime {
            mid_s,
            span_s: 60.0,
            forks: 3,
            walk: Some((1e-6, 7.0)),
            walk_beyond_reference: Some((2.5e-7, 7.0)),
            beyond_reference_spread: None,
        }
    }

    #[test]
    fn raw_the_drift_holds_the_sides_apart_and_at_one_speed_the_carrying_does() {
        let old = [
            run(100.0, &[99.0, 100.0, 101.0]),
            run(100.0, &[99.0, 100.0, 101.0]),
        ];
        let new = [run(100.0, &[99.0, 100.0, 101.0])];
        let (old_t, new_t) = ([minute_at(30.0), minute_at(90.0)], [minute_at(150.0)]);
        let sets = |distances: [f64; 2]| {
            [
                Set {
                    runs: &old[..],
                    times: &old_t[..],
                    distance: distances[0],
                    boot: 0,
                },
                Set {
                    runs: &new[..],
                    times: &new_t[..],
                    distance: distances[1],
                    boot: 0,
                },
            ]
        };
        let terms = [(0, -1.0), (1, 1.0)];
        let walk_of = |terms: &[(f64, &[RunTime])]| Walk::of(terms).unwrap();
        let raw = read(&sets([0.0, 0.0]), &terms, &OutsideEvidence::default());
        assert_eq!(raw.drift, walk_of(&[(-1.0, &old_t), (1.0, &new_t)]));
        assert!(raw.levels.contains(&NoiseLevel::Drift));
        // One run's variance counts 1/2 + 1/1 in the difference.
        let forks = raw.per_run.unwrap();
        let within = raw.spread.unwrap().sd.powi(2) - raw.drift.var;
        assert!((within - 1.5 * forks.var).abs() < 1e-15, "{raw:?}");
        let carried = read(
            &sets([0.01, -0.03]),
            &terms,
            &OutsideEvidence {
                carried_se: Some(0.5),
                ..OutsideEvidence::default()
            },
        );
        assert_eq!(
            carried.drift,
            Walk::beyond_reference(&[(-1.0, &old_t), (1.0, &new_t)]).unwrap()
        );
        assert!(carried.levels.contains(&NoiseLevel::Carrying));
        assert!(carried.levels.contains(&NoiseLevel::DriftBeyondReference));
        // The coefficient's error over the sides' distance: 0.5 x 0.04.
        let fixed = carried.fixed.var - carried.drift.var;
        assert!(
            (fixed - (0.5f64 * 0.04).powi(2)).abs() < 1e-15,
            "{carried:?}"
        );
    }
}
