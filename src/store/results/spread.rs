//! Which rounds a record's figures stand on, and the run's forks read into
//! the between-run spread (`analysis::spread`) for every variant.

use crate::analysis::rounds::{Basis, RoundFigure};
use crate::analysis::slow_state;
use crate::analysis::spread::{ForkSpread, ProbeSpreads, RunSpread, VariantSpread, fork_figures};
use crate::analysis::states::StateModel;
use crate::measure::schedule::{ProbeRounds, Round, VariantRounds};

/// Which of a row's rounds count as quiet: those whose canaries read
/// quiet, or, where the row's own rounds show the slow state does not move
/// it (`analysis::slow_state`: a slow syscall path and a row that makes no
/// syscall), every round of a level, so that a fork a slow stretch covered
/// whole still stands.
#[derive(Debug, Clone, Copy)]
pub struct QuietForRow<'m> {
    pub model: &'m StateModel,
    /// Whether the slow state was shown not to move the row.
    pub unmoved: bool,
}

impl<'m> QuietForRow<'m> {
    /// The variant's rounds read against `model`: its one-state slow
    /// rounds against its quiet ones.
    pub fn of(v: &VariantRounds, model: &'m StateModel) -> QuietForRow<'m> {
        let mut sides: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        if model.two_states {
            for r in v.rounds.iter().filter(|r| r.one_state(model)) {
                let ticks = r.measured.measurement.per_item.median.value;
                sides[usize::from(!r.quiet(model))].push(ticks);
            }
        }
        let [quiet, slow] = &sides;
        QuietForRow {
            model,
            unmoved: slow_state::unmoved(quiet, slow),
        }
    }

    /// Whether `round` counts as quiet for the row.
    pub fn counts(&self, round: &Round) -> bool {
        round.quiet(self.model) || (self.unmoved && !round.of_no_level())
    }

    /// The variant's rounds as the headline's estimate reads them.
    pub fn figures(&self, v: &VariantRounds) -> Vec<RoundFigure> {
        v.rounds
            .iter()
            .map(|r| RoundFigure {
                quiet: self.counts(r),
                ..r.figure(self.model)
            })
            .collect()
    }
}

/// The rounds a variant's headline is the median of.
pub fn used_rounds<'a>(v: &'a VariantRounds, model: &StateModel) -> Vec<&'a Round> {
    let quiet = QuietForRow::of(v, model);
    rounds_counted(v, model, |r| quiet.counts(r))
}

/// The rounds a figure stands on where the machine showed two states and
/// `counts` picks the rounds that count as quiet: those, or every round
/// where none does ([`Basis`]); every round where it showed one state.
/// "Every round" leaves out those interrupted inside them unless all were,
/// as the headline's estimate does (`analysis::rounds::estimate`).
pub fn rounds_counted<'a>(
    v: &'a VariantRounds,
    model: &StateModel,
    counts: impl Fn(&Round) -> bool,
) -> Vec<&'a Round> {
    let counted: Vec<&Round> = v.rounds.iter().filter(|r| counts(r)).collect();
    match Basis::of(model.two_states, !counted.is_empty()) {
        Basis::QuietRounds => counted,
        Basis::AllRounds | Basis::NoQuietRound => {
            let levelled: Vec<&Round> = v.rounds.iter().filter(|r| !r.of_no_level()).collect();
            if levelled.is_empty() {
                v.rounds.iter().collect()
            } else {
                levelled
            }
        }
    }
}

/// Every supported variant's fork figures, read into the run's spread
/// (those of rows the slow state does not move lend it nothing:
/// `VariantSpread::lends`); `rounds` picks the rounds a figure stands on ([`used_rounds`] for the
/// raw ones) and `figure` reads a round's figure (raw, or at the run's
/// reference speed, None for a round that has none).
pub fn run_spread<'a>(
    probes: &'a [ProbeRounds],
    model: &StateModel,
    rounds: impl Fn(&'a VariantRounds) -> Vec<&'a Round>,
    figure: impl Fn(&str, &VariantRounds, &Round) -> Option<f64>,
) -> RunSpread {
    // A probe's variants that run on one CPU and those that keep work on
    // another are pooled apart: the second move with where the host placed
    // the two CPUs, fork by fork, which the first never see (a remote
    // shootdown's and its `alone` rows': docs/why-the-code-is-so.md).
    let own: Vec<ProbeSpreads> = probes
        .iter()
        .flat_map(|p| {
            let (across, within): (Vec<&VariantRounds>, Vec<&VariantRounds>) = p
                .variants
                .iter()
                .filter(|v| v.unsupported.is_none())
                .partition(|v| {
                    v.rounds
                        .iter()
                        .any(|r| crate::measure::probes::on_other_cpus(&r.measured.cpus))
                });
            [within, across].map(|group| ProbeSpreads {
                id: p.declaration.id.to_string(),
                variants: group
                    .into_iter()
                    .map(|v| {
                        let figures = fork_figures(
                            rounds(v)
                                .iter()
                                .filter_map(|r| Some((r.fork, figure(p.declaration.id, v, r)?))),
                        );
                        VariantSpread {
                            name: v.variant.name.clone(),
                            forks: figures.len(),
                            spread: ForkSpread::of(&figures),
                            lends: !QuietForRow::of(v, model).unmoved,
                        }
                    })
                    .collect(),
            })
        })
        .filter(|group| !group.variants.is_empty())
        .collect();
    RunSpread::pool(&own)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::probes::Declaration;
    use crate::synthetic::{Truth, round_at, variant_rounds};

    /// A variant of three forks, six rounds each, whose forks read
    /// `fork_ticks`; `second_cpu` puts its work on CPU 0 beside CPU 1.
    fn variant(
        name: &'static str,
        fork_ticks: [f64; 3],
        second_cpu: Option<usize>,
    ) -> VariantRounds {
        let mut v = variant_rounds(&Truth {
            name,
            ticks: fork_ticks[0],
            second_level: None,
            run_level: 0.0,
            baseline: false,
        });
        v.rounds = (0..18)
            .map(|i| {
                let ticks = fork_ticks[i % 3] * (1.0 + 0.001 * (i / 3) as f64);
                let mut r = round_at(ticks, i / 3, i as f64, i % 3, 300.0, 300.0);
                r.measured.cpus = [Some(1), second_cpu].into_iter().flatten().collect();
                r
            })
            .collect();
        v
    }

    #[test]
    fn rows_on_one_cpu_borrow_no_spread_from_their_probes_rows_on_two() {
        let spread_of = |remote_cpu: Option<usize>| {
            // The rest of the run: rows whose forks agree, as most do.
            let rest = ProbeRounds {
                declaration: Declaration::new("os/getpid", "all", "call"),
                toll: None,
                variants: ["a", "b", "c", "d", "e", "f", "g"]
                    .map(|name| variant(name, [300.0, 300.6, 300.3], None))
                    .into(),
                order_seed: 0,
            };
            let probes = vec![
                rest,
                ProbeRounds {
                    declaration: Declaration::new("memory/shootdown", "003", "call"),
                    toll: None,
                    variants: vec![
                        variant("a/alone", [1000.0, 1002.0, 1001.0], None),
                        variant("b/alone", [2000.0, 2001.0, 2003.0], None),
                        variant("a/remote", [9000.0, 12000.0, 9100.0], remote_cpu),
                        variant("b/remote", [9500.0, 12500.0, 9400.0], remote_cpu),
                        variant("c/remote", [9900.0, 13000.0, 9800.0], remote_cpu),
                    ],
                    order_seed: 0,
                },
            ];
            let run = run_spread(
                &probes,
                &StateModel::fit(&[300.0; 40]),
                |v| v.rounds.iter().collect(),
                |_, _, r| Some(r.measured.measurement.per_item.median.value),
            );
            run.get("memory/shootdown", "a/alone").unwrap().sd
        };
        // Pooled with the remote rows (their forks 30% apart), the alone
        // row's spread is theirs; apart, its own forks' (0.1-0.2%).
        let pooled = spread_of(Some(1));
        let apart = spread_of(Some(0));
        assert!(pooled > 0.05, "pooled with the remote rows: {pooled}");
        assert!(apart < 0.01, "pooled apart: {apart}");
    }
}
