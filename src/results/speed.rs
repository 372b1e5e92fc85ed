//! The run's rounds read against the reference: the run's reference speed,
//! each variant's speed coefficient (`analysis::speed`) and the forks'
//! spread of the figures at that speed.

use super::spread::{run_spread, used_rounds};
use crate::analysis::speed::{self, Point, SpeedFit};
use crate::analysis::spread::RunSpread;
use crate::analysis::states::{Drift, StateModel, stretch_medians};
use crate::analysis::stats;
use crate::schedule::{ProbeRounds, Round, VariantRounds};
use std::collections::BTreeMap;

/// What a run's records are normalized by.
#[derive(Debug, Default)]
pub struct RunSpeed {
    /// The run's reference speed, ticks per step (see [`RunSpeed::of`]).
    /// None where the run read none (a document before the reference, a
    /// machine whose reference could not be read).
    pub reference: Option<f64>,
    fits: BTreeMap<(String, String), SpeedFit>,
    /// The run's pooled slope, which a row without a fit of its own takes.
    pooled: Option<f64>,
    /// The forks' spread of every fitted variant's normalized figures.
    pub spread: RunSpread,
    /// How far the machine's speed moved over the run (`speed::moved_pct`,
    /// over the reference beside the rounds the headlines use).
    pub moved_pct: Option<f64>,
    /// How uncertain a pooled coefficient is: the median error of the
    /// rows' own slopes.
    pooled_se: Option<f64>,
    /// The canary over the reference read beside it, in stretches of the
    /// run: what moved the syscall path's speed that the reference did not
    /// see (a host that slows the kernel's entry and not the core's
    /// arithmetic), which a comparison at one reference speed still counts
    /// as a walk between runs (`analysis::noise::RunTime`).
    pub beyond: Drift,
}

impl RunSpeed {
    /// The run's reference speed is the median reference beside the rounds
    /// the headlines stand on (the quiet ones where the machine showed two
    /// states): the speed the figures are of, so that carrying a round to
    /// it moves the round by its own speed's distance from the others' and
    /// no more.
    pub fn of(probes: &[ProbeRounds], model: &StateModel) -> RunSpeed {
        let timed: Vec<(f64, f64)> = probes
            .iter()
            .flat_map(|p| &p.variants)
            .filter(|v| v.unsupported.is_none())
            .flat_map(|v| used_rounds(v, model))
            .filter(|r| r.reference_steady())
            .filter_map(|r| Some((r.started_s, r.reference()?)))
            .collect();
        let mut beside: Vec<f64> = timed.iter().map(|(_, r)| *r).collect();
        beside.sort_by(f64::total_cmp);
        let reference = (!beside.is_empty()).then(|| stats::median(&beside));
        let Some(at) = reference else {
            return RunSpeed::default();
        };
        let mut fits = BTreeMap::new();
        for p in probes {
            for v in p.variants.iter().filter(|v| v.unsupported.is_none()) {
                let points: Vec<Point> = used_rounds(v, model)
                    .iter()
                    .filter(|r| r.reference_steady())
                    .filter_map(|r| {
                        Some(Point {
                            fork: r.fork,
                            figure: r.measured.measurement.per_item.median,
                            reference: r.reference()?,
                        })
                    })
                    .collect();
                if let Some(fit) = speed::fit(&points) {
                    fits.insert((p.declaration.id.to_string(), v.variant.name.clone()), fit);
                }
            }
        }
        let pooled = speed::pooled(&fits.values().copied().collect::<Vec<_>>());
        if let Some(pooled) = pooled {
            for fit in fits.values_mut() {
                *fit = fit.toward(pooled);
            }
        }
        let mut errors: Vec<f64> = fits
            .values()
            .map(|f| f.se)
            .filter(|se| se.is_finite())
            .collect();
        errors.sort_by(f64::total_cmp);
        let mut run = RunSpeed {
            reference: Some(at),
            fits,
            pooled,
            spread: RunSpread::default(),
            moved_pct: speed::moved_pct(&timed),
            pooled_se: (!errors.is_empty()).then(|| stats::median(&errors)),
            beyond: canary_beyond_reference(probes, model),
        };
        run.spread = run_spread(probes, model, |id, v, r| run.figure(id, v, r));
        run
    }

    /// What a variant's coefficient's own uncertainty adds to its interval
    /// for a next run read at this run's speed (`speed::carrying_half_width`),
    /// log scale: none where the speed did not move.
    pub fn carrying(&self, fit: &SpeedFit) -> f64 {
        speed::carrying_half_width(
            self.coefficient_se(fit).unwrap_or(0.0),
            self.moved_pct.unwrap_or(0.0),
        )
    }

    /// How uncertain a variant's coefficient is: its own fit's error, or
    /// for a pooled one the rows' median error.
    pub fn coefficient_se(&self, fit: &SpeedFit) -> Option<f64> {
        if fit.se.is_finite() {
            Some(fit.se)
        } else {
            self.pooled_se
        }
    }

    /// A variant's speed coefficient: its own, or where it was measured too
    /// thinly for one, the run's pooled one.
    pub fn fit(&self, id: &str, variant: &str) -> Option<SpeedFit> {
        self.fits
            .get(&(id.to_string(), variant.to_string()))
            .copied()
            .or_else(|| self.pooled.map(SpeedFit::pooled))
    }

    /// A round's figure at the run's reference speed; None where the
    /// variant has no coefficient or the round no steady reference (the
    /// machine changed state during it: no one speed to carry it from).
    pub fn figure(&self, id: &str, v: &VariantRounds, round: &Round) -> Option<f64> {
        let raw = round.measured.measurement.per_item.median;
        let fit = self.fit(id, &v.variant.name)?;
        let beside = round.reference().filter(|_| round.reference_steady())?;
        Some(speed::at_reference(
            raw,
            beside,
            self.reference?,
            fit.coefficient,
        ))
    }
}

/// Every quiet canary reading over the reference read beside it, and when
/// (seconds into the run), in stretches of the run.
fn canary_beyond_reference(probes: &[ProbeRounds], model: &StateModel) -> Drift {
    let rounds = || {
        probes
            .iter()
            .flat_map(|p| &p.variants)
            .flat_map(|v| &v.rounds)
    };
    let end = rounds().map(|r| r.started_s).fold(0.0, f64::max);
    let ratios: Vec<(f64, f64)> = rounds()
        .flat_map(|r| {
            [
                (r.canary_before, r.reference_before),
                (r.canary_after, r.reference_after),
            ]
            .into_iter()
            .filter_map(move |(canary, reference)| {
                let (canary, reference) = (canary?, reference?);
                (model.is_quiet(canary) && reference > 0.0)
                    .then_some((canary / reference, r.started_s))
            })
        })
        .collect();
    stretch_medians(&ratios, end)
}
