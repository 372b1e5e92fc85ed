//! Which rounds a record's figures stand on, and the run's forks read into
//! the between-run spread (`analysis::spread`) for every variant.

use crate::analysis::rounds::Basis;
use crate::analysis::spread::{ForkSpread, ProbeSpreads, RunSpread, VariantSpread, fork_figures};
use crate::analysis::states::StateModel;
use crate::schedule::{ProbeRounds, Round, VariantRounds};

/// The rounds a variant's headline is the median of.
pub fn used_rounds<'a>(v: &'a VariantRounds, model: &StateModel) -> Vec<&'a Round> {
    rounds_counted(v, model, |r| r.quiet(model))
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

/// Every supported variant's fork figures, read into the run's spread;
/// `rounds` picks the rounds a figure stands on ([`used_rounds`] for the
/// raw ones) and `figure` reads a round's figure (raw, or at the run's
/// reference speed, None for a round that has none).
pub fn run_spread<'a>(
    probes: &'a [ProbeRounds],
    rounds: impl Fn(&'a VariantRounds) -> Vec<&'a Round>,
    figure: impl Fn(&str, &VariantRounds, &Round) -> Option<f64>,
) -> RunSpread {
    let own: Vec<ProbeSpreads> = probes
        .iter()
        .map(|p| {
            let variants = p
                .variants
                .iter()
                .filter(|v| v.unsupported.is_none())
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
                    }
                })
                .collect();
            ProbeSpreads {
                id: p.declaration.id.to_string(),
                variants,
            }
        })
        .collect();
    RunSpread::pool(&own)
}
