//! The return toll scored against boots: a syscall made from inside a
//! function pays on the return after it (`answer::returns`), and the
//! cause is not known. Each boot the sets hold without a mitigation (and
//! the one with every mitigation off) predicts, if that mitigation is the
//! cause, that the toll is gone there. Here the toll of each such set is
//! held against the present set's, and the prediction scored: gone, fell
//! but some stays, or stays. A replay only suggests a cause; this is the
//! measurement that can name one.

use super::{Attribution, NamedSet};
use crate::analysis::figure::Figure;
use crate::analysis::stats::student_t_975;
use crate::answer::returns;
use serde::Serialize;

// The syscall whose toll is scored: the catalogue's.
use crate::mitigations::crossing::RETURN_TOLL_SYSCALL as SCORED;

/// What the toll did in a boot without a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TollMove {
    /// Below the present toll, and what is left under [`GONE_SHARE`] of
    /// it: the candidate explains the toll.
    Gone,
    /// Below the present toll, and above zero: part of it.
    Fell,
    /// Below the present toll, what is left neither shown above zero nor
    /// under [`GONE_SHARE`] of it: a part, perhaps all (more runs tell).
    FellUnresolved,
    /// Not below the present toll: the candidate does not explain it.
    Stays,
}

/// One boot's score.
#[derive(Debug, Clone, Serialize)]
pub struct ReturnScore {
    /// The switch the boot turns off (a vulnerability file), or "all".
    pub without: String,
    pub boot: String,
    /// The toll in that boot's set, ns (the mean of its runs).
    pub toll_ns: Figure,
    /// The present toll less this one: what the candidate explains.
    pub fell_ns: Figure,
    pub outcome: TollMove,
}

/// The toll of the present set and each boot's score.
#[derive(Debug, Clone, Serialize)]
pub struct ReturnScores {
    pub syscall: &'static str,
    pub present_ns: Figure,
    pub scores: Vec<ReturnScore>,
}

/// Scores each boot of `sets` that turns something off against the
/// present set; None where the present set did not measure the toll, or no
/// other set did.
pub fn score(a: &Attribution, sets: &[NamedSet]) -> Option<ReturnScores> {
    let roles = &a.recognised.roles;
    let present_ns = set_toll(&sets[roles.present])?;
    let boot = |set: usize| sets[set].runs[0].inventory.identity.boot_id.clone();
    let candidates = a
        .recognised
        .switches
        .iter()
        .zip(&roles.without)
        .filter_map(|(switch, set)| Some((switch.name.clone(), (*set)?)))
        .chain(roles.all_off.map(|set| ("all".to_string(), set)))
        .filter(|&(_, set)| set != roles.present);
    let mut scores: Vec<ReturnScore> = Vec::new();
    for (without, set) in candidates {
        // With one switch the all-off set is that switch's set too.
        if scores
            .iter()
            .any(|s| s.boot == boot(set) && without == "all")
        {
            continue;
        }
        let Some(toll_ns) = set_toll(&sets[set]) else {
            continue;
        };
        scores.push(ReturnScore {
            without,
            boot: boot(set),
            fell_ns: crate::analysis::combine::difference(present_ns, toll_ns),
            outcome: outcome(present_ns, toll_ns),
            toll_ns,
        });
    }
    (!scores.is_empty()).then_some(ReturnScores {
        syscall: SCORED,
        present_ns,
        scores,
    })
}

/// The scored syscall's toll over a set's runs: their mean, with the 95%
/// interval of a mean (Student's t over the runs), never narrower than
/// the runs' own intervals allow for a mean of that many; one run gives
/// its own figure and the interval where another run's may land.
pub fn set_toll(set: &NamedSet) -> Option<Figure> {
    let each: Vec<Figure> = set
        .runs
        .iter()
        .map(|doc| returns::of_one(doc, SCORED)?.extra_ns)
        .collect::<Option<_>>()?;
    match each.as_slice() {
        [] => None,
        [one] => Some(*one),
        many => {
            let n = many.len() as f64;
            let mean = many.iter().map(|f| f.value).sum::<f64>() / n;
            let var = many.iter().map(|f| (f.value - mean).powi(2)).sum::<f64>() / (n - 1.0);
            let own = many.iter().filter_map(Figure::half_width).sum::<f64>() / n;
            let half = (student_t_975(n - 1.0) * var.sqrt()).max(own) / n.sqrt();
            Some(Figure::within(mean, Some(half)))
        }
    }
}

/// What is left of a toll that fell may be at most this share of the
/// present one for the toll to be called gone.
pub const GONE_SHARE: f64 = 0.1;

/// One-sided tests at 5%: did the toll fall (present less this one above
/// zero), is what is left above zero, or under [`GONE_SHARE`] of the
/// present toll. That nothing left was shown is no evidence that nothing
/// is left: `gone` needs the bound.
fn outcome(present: Figure, without: Figure) -> TollMove {
    let fell = crate::analysis::combine::difference(present, without)
        .lower_bound_95()
        .is_some_and(|lo| lo > 0.0);
    let left = without.lower_bound_95().is_some_and(|lo| lo > 0.0);
    let under_share = without
        .upper_bound_95()
        .is_some_and(|hi| hi < GONE_SHARE * present.value);
    match (fell, left, under_share) {
        (false, _, _) => TollMove::Stays,
        (true, true, _) => TollMove::Fell,
        (true, false, true) => TollMove::Gone,
        (true, false, false) => TollMove::FellUnresolved,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(value: f64, half: f64) -> Figure {
        Figure::within(value, Some(half))
    }

    #[test]
    fn a_toll_is_gone_fell_or_stays_by_one_sided_tests() {
        let present = figure(33.0, 2.0);
        assert_eq!(outcome(present, figure(0.5, 2.0)), TollMove::Gone);
        // Not shown above zero, but up to 6 ns may be left: not gone.
        assert_eq!(outcome(present, figure(1.0, 6.0)), TollMove::FellUnresolved);
        assert_eq!(outcome(present, figure(15.0, 2.0)), TollMove::Fell);
        assert_eq!(outcome(present, figure(32.0, 2.0)), TollMove::Stays);
        // Above the present one is not a fall either.
        assert_eq!(outcome(present, figure(40.0, 2.0)), TollMove::Stays);
        // Without an interval nothing is shown to fall.
        assert_eq!(
            outcome(Figure::new(33.0, None), figure(0.0, 1.0)),
            TollMove::Stays
        );
    }
}
