//! The run's rounds read against the reference: the run's reference speed,
//! each variant's speed coefficient (`analysis::speed`) and the forks'
//! spread of the figures at that speed.

use super::spread::{QuietForRow, rounds_counted, run_spread, used_rounds};
use crate::analysis::speed::{self, Point, SpeedFit};
use crate::analysis::spread::RunSpread;
use crate::analysis::states::{Drift, Reading, StateModel, stretch_medians};
use crate::analysis::stats;
use crate::measure::schedule::{ProbeRounds, Round, VariantRounds};
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
    /// What the reference did not see of the machine's slow state
    /// (`speed::state_unseen`); None with one state or too few readings.
    pub slow_state_unseen: Option<f64>,
}

impl RunSpeed {
    /// The run's reference speed is the median reference beside the rounds
    /// the headlines stand on (the quiet ones where the machine showed two
    /// states): the speed the figures are of, so that carrying a round to
    /// it moves the round by its own speed's distance from the others' and
    /// no more.
    pub fn of(probes: &[ProbeRounds], model: &StateModel) -> RunSpeed {
        let timed: Vec<Reading> = probes
            .iter()
            .flat_map(|p| &p.variants)
            .filter(|v| v.unsupported.is_none())
            .flat_map(|v| used_rounds(v, model))
            .filter(|r| r.reference_steady())
            .filter_map(|r| {
                Some(Reading {
                    value: r.reference()?,
                    at_s: r.started_s,
                })
            })
            .collect();
        let beside: Vec<f64> = timed.iter().map(|r| r.value).collect();
        let reference = stats::median_of(&beside);
        let Some(at) = reference else {
            return RunSpeed::default();
        };
        let (beyond, slow_state_unseen) = canary_over_reference(probes, model);
        let mut run = RunSpeed {
            reference: Some(at),
            moved_pct: speed::moved_pct(&timed),
            beyond,
            slow_state_unseen,
            ..RunSpeed::default()
        };
        let mut fits = BTreeMap::new();
        for p in probes {
            for v in p.variants.iter().filter(|v| v.unsupported.is_none()) {
                let points: Vec<Point> = run
                    .rounds(v, model)
                    .iter()
                    .filter(|r| r.reference_steady())
                    .filter_map(|r| {
                        Some(Point {
                            fork: r.fork,
                            ticks: r.measured.measurement.per_item.median.value,
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
        let errors: Vec<f64> = fits
            .values()
            .map(|f| f.se)
            .filter(|se| se.is_finite())
            .collect();
        run.fits = fits;
        run.pooled = pooled;
        run.pooled_se = stats::median_of(&errors);
        run.spread = run_spread(
            probes,
            model,
            |v| run.rounds(v, model),
            |id, v, r| run.figure(id, v, r),
        );
        run
    }

    /// Whether the reference followed the machine's slow state closely
    /// enough (`speed::STATE_SEEN_WITHIN`) that a slow round read at the
    /// reference speed is as good as a quiet one.
    pub fn sees_slow_state(&self) -> bool {
        self.slow_state_unseen
            .is_some_and(|unseen| unseen.abs() <= speed::STATE_SEEN_WITHIN)
    }

    /// Whether a round counts among those a figure at the reference speed
    /// stands on: one that counts as quiet for its row ([`QuietForRow`]),
    /// or where the reference saw the slow state, any whose canaries read
    /// one state (a round the state changed in has no one speed).
    pub fn counts(&self, round: &Round, quiet: &QuietForRow) -> bool {
        quiet.counts(round) || (self.sees_slow_state() && round.one_state(quiet.model))
    }

    /// The rounds a variant's figure at the reference speed stands on: the
    /// headline's, or where the reference saw the slow state, every round
    /// of one state ([`RunSpeed::counts`]).
    pub fn rounds<'a>(&self, v: &'a VariantRounds, model: &StateModel) -> Vec<&'a Round> {
        let quiet = QuietForRow::of(v, model);
        rounds_counted(v, model, |r| self.counts(r, &quiet))
    }

    /// What a variant's coefficient's own uncertainty adds to its interval
    /// for a next run read at this run's speed (`speed::carrying_half_width`),
    /// log scale: none where the speed did not move.
    pub fn carrying(&self, fit: &SpeedFit) -> f64 {
        speed::carrying_half_width(
            speed::bounded_se(self.coefficient_se(fit).unwrap_or(0.0)),
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
    /// variant has no coefficient or the round no reference. A round whose
    /// reference moved during it (more than 2% from one side to the other)
    /// says nothing of the row's slope, but it is carried by the mean of
    /// the two readings all the same: leaving it out would read the figure
    /// on other rounds than the raw one, and a row whose rounds sit at two
    /// levels (an indirect call whose predictor state flips) moved by which
    /// rounds were left out (docs/why-the-code-is-so.md, "A round the
    /// reference moved in is kept").
    pub fn figure(&self, id: &str, v: &VariantRounds, round: &Round) -> Option<f64> {
        let raw = round.measured.measurement.per_item.median.value;
        let fit = self.fit(id, &v.variant.name)?;
        let beside = round.reference()?;
        Some(speed::at_reference(
            raw,
            beside,
            self.reference?,
            fit.coefficient,
        ))
    }
}

/// Every canary reading over the reference read beside it: the quiet ones
/// in stretches of the run (seconds into it), and the slow state's against
/// the quiet state's (`speed::state_unseen`, where the run showed two).
fn canary_over_reference(probes: &[ProbeRounds], model: &StateModel) -> (Drift, Option<f64>) {
    let rounds = || {
        probes
            .iter()
            .flat_map(|p| &p.variants)
            .flat_map(|v| &v.rounds)
    };
    let end = rounds().map(|r| r.started_s).fold(0.0, f64::max);
    // (ratio, seconds into the run, whether the canary read quiet)
    let ratios: Vec<(f64, f64, bool)> = rounds()
        .flat_map(|r| {
            [
                (r.canary_before, r.reference_before),
                (r.canary_after, r.reference_after),
            ]
            .into_iter()
            .filter_map(move |(canary, reference)| {
                let (canary, reference) = (canary?, reference?);
                (reference > 0.0).then(|| (canary / reference, r.started_s, model.is_quiet(canary)))
            })
        })
        .collect();
    let of_state = |quiet: bool| -> Vec<f64> {
        ratios
            .iter()
            .filter(|r| r.2 == quiet)
            .map(|r| r.0)
            .collect()
    };
    let quiet: Vec<Reading> = ratios
        .iter()
        .filter(|r| r.2)
        .map(|r| Reading {
            value: r.0,
            at_s: r.1,
        })
        .collect();
    let unseen = model
        .two_states
        .then(|| speed::state_unseen(&of_state(true), &of_state(false)))
        .flatten();
    (stretch_medians(&quiet, end), unseen)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::probes::Declaration;
    use crate::synthetic::{Truth, round_at, variant_rounds};

    /// A row whose rounds sit at two levels, 2.55 and 3.18 ticks, as an
    /// indirect call's did on the Intel Xeon guest, where the reference
    /// stepped 2.5% during every upper round and held during the lower
    /// ones: read at the reference speed, the row is at its upper level as
    /// its raw figure is, not at the level of the rounds the reference held
    /// still in.
    #[test]
    fn a_round_the_reference_moved_in_is_still_read_at_the_reference_speed() {
        let truth = Truth {
            name: "indirect",
            ticks: 2.55,
            second_level: None,
            run_level: 0.0,
            baseline: true,
        };
        let mut v = variant_rounds(&truth);
        for i in 0..60 {
            let upper = i % 3 != 0;
            let (before, after) = if upper {
                (2.546, 2.611)
            } else {
                let held = 2.54 + 0.01 * (i % 5) as f64;
                (held, held)
            };
            let level = if upper { 3.18 } else { 2.55 };
            let figure = level * (before + after) / 2.0 / 2.546;
            let mut round = round_at(figure, i, i as f64, i % 3, 200.0, 200.0);
            round.reference_before = Some(before);
            round.reference_after = Some(after);
            v.rounds.push(round);
        }
        let probes = vec![ProbeRounds {
            declaration: Declaration::new("indirect/call", "none", "call"),
            toll: None,
            variants: vec![v],
            order_seed: 0,
        }];
        let model = StateModel::fit(&[200.0; 200]);
        let speed = RunSpeed::of(&probes, &model);
        let v = &probes[0].variants[0];
        let at_speed: Vec<f64> = v
            .rounds
            .iter()
            .filter_map(|r| speed.figure("indirect/call", v, r))
            .collect();
        assert_eq!(at_speed.len(), v.rounds.len(), "every round has a figure");
        let median = stats::median_of(&at_speed).unwrap();
        assert!((3.0..3.4).contains(&median), "{median}");
    }
}
