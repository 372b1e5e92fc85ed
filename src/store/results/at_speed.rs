//! A row's runs read at one reference speed, as compare reads its two
//! sides and attribute its sets: every run's figure at its own run's
//! reference speed, carried to the runs' common speed by one coefficient
//! for the row (the runs' own, weighed by their precision), so that the
//! coefficient's error moves all runs alike and turns into a change only
//! by how far the sides' mean speeds lie apart. Where any run cannot be
//! read so (a document before the reference, a row without a coefficient)
//! the row is read raw.

use super::{EqualSpeed, Record, RunDocument};
use crate::analysis::noise::RunFigure;
use crate::analysis::speed;

/// The reference speed runs are read at together (`speed::common`), where
/// every run has one.
pub fn common_speed<'d>(runs: impl IntoIterator<Item = &'d RunDocument>) -> Option<f64> {
    let speeds: Option<Vec<f64>> = runs.into_iter().map(|d| d.reference_ticks()).collect();
    speed::common(&speeds?)
}

/// Each run's figures read at reference speed `at`, where it and the run
/// have one.
pub fn speeds_at<'d>(
    runs: impl IntoIterator<Item = &'d RunDocument>,
    at: Option<f64>,
) -> Vec<Option<EqualSpeed>> {
    runs.into_iter()
        .map(|d| {
            Some(EqualSpeed {
                at: at?,
                run: d.reference_ticks()?,
                carry: None,
            })
        })
        .collect()
}

/// A run's record of the row beside how it is read (None: raw).
pub type AtSpeed<'r> = (&'r Record, Option<EqualSpeed>);

/// Each run's record beside the reference speed it may be read at.
pub fn paired<'r>(records: &[&'r Record], speeds: &[Option<EqualSpeed>]) -> Vec<AtSpeed<'r>> {
    records
        .iter()
        .enumerate()
        .map(|(i, r)| (*r, speeds.get(i).copied().flatten()))
        .collect()
}

/// A row's sides (or sets), read at one speed or raw.
pub struct RowAtSpeed<'r> {
    pub sides: Vec<Vec<AtSpeed<'r>>>,
    /// Every run of every side is read at the common speed.
    pub equal_speed: bool,
    /// The coefficient carrying them there, and its standard error.
    pub joint: Option<speed::Slope>,
}

impl<'r> RowAtSpeed<'r> {
    /// Every run is read at the common speed where every run has a
    /// reference speed and some run of the row a coefficient: a run whose
    /// machine hardly moved has no slope of its own, and its raw figure is
    /// carried by the others' (`Record::run_figure`).
    pub fn of(sides: Vec<Vec<AtSpeed<'r>>>) -> RowAtSpeed<'r> {
        let referenced = sides
            .iter()
            .flatten()
            .all(|(r, s)| s.is_some() && r.cost.is_some());
        let joint = referenced
            .then(|| joint_coefficient(sides.iter().flatten().map(|(r, _)| *r)))
            .flatten();
        let equal_speed = joint.is_some();
        let carry = joint.map(|j| j.coefficient);
        let sides = sides
            .into_iter()
            .map(|side| {
                side.into_iter()
                    .map(|(r, s)| {
                        (
                            r,
                            s.filter(|_| equal_speed).map(|s| EqualSpeed { carry, ..s }),
                        )
                    })
                    .collect()
            })
            .collect();
        RowAtSpeed {
            sides,
            equal_speed,
            joint,
        }
    }

    /// Side `i`'s runs' figures as the noise model reads them.
    pub fn figures(&self, i: usize) -> Vec<RunFigure> {
        self.sides[i]
            .iter()
            .filter_map(|(r, s)| r.run_figure(*s))
            .collect()
    }

    /// Side `i`'s records.
    pub fn records(&self, i: usize) -> Vec<&'r Record> {
        self.sides[i].iter().map(|(r, _)| *r).collect()
    }

    /// The mean log distance of side `i`'s runs from the common speed.
    pub fn distance(&self, i: usize) -> f64 {
        let d: Vec<f64> = self.sides[i]
            .iter()
            .filter_map(|(_, s)| s.map(|s| (s.at / s.run).ln()))
            .collect();
        d.iter().sum::<f64>() / d.len().max(1) as f64
    }
}

/// One coefficient for a row's runs, and its standard error
/// (`speed::joint`): the slopes its runs fitted. The fitted slopes, not
/// the coefficients each run shrank towards its other rows': averaged,
/// those keep their shrinkage's bias while the errors combined shrink,
/// and a carry by them is surer than it is (on the synthetic cloud guest,
/// whose rows all move as 1, the runs' coefficients had a median of
/// 0.6-0.9). A run with no slope of its own (a row thinly measured) counts
/// its run's pooled one by its error; one with no coefficient at all is
/// carried by the others'. None where no run has one.
fn joint_coefficient<'r>(records: impl Iterator<Item = &'r Record>) -> Option<speed::Slope> {
    speed::joint(records.filter_map(|r| {
        let at = r.cost.as_ref()?.at_reference?;
        Some(speed::Slope {
            coefficient: at.coefficient_fitted.unwrap_or(at.coefficient),
            se: at.coefficient_se?,
        })
    }))
}
