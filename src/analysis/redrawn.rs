//! The next run drawn again from this run's rounds: where its figure lands
//! if its forks take their rounds from the law this run's rounds show.
//!
//! Resampling rounds within each fork gives this run's figure an interval,
//! and the forks' spread gives the processes theirs. Neither sees a row
//! whose rounds stand at two levels (a call whose target the predictor
//! takes in one tick or in two, round by round): where a quarter to half
//! of the rounds are at the upper level, two forks of six rounds may both
//! read the lower one, and their figures then agree to the tick while the
//! next run's fork reads the upper (docs/why-the-code-is-so.md, "A row at
//! levels is drawn again from its pooled rounds"). Here the
//! rounds of every fork are pooled, a law drawn from the pool (so how often
//! the upper level comes is itself uncertain), and each fork of the next
//! run takes as many rounds from that law as it had in this one.

use super::stats;

/// How many next runs are drawn.
const REDRAWS: usize = stats::Summary::RESAMPLES;

/// `read` over [`REDRAWS`] next runs drawn from `forks` (each this run's
/// rounds of one fork, in any order): each a pool drawn with replacement
/// from every fork's rounds, then each fork as many draws from that pool
/// as it has rounds here. Empty where no fork has a round.
pub fn redraws<T: Copy, O>(
    forks: &[Vec<T>],
    seed: u64,
    mut read: impl FnMut(&[Vec<T>]) -> O,
) -> Vec<O> {
    let pooled: Vec<T> = forks.iter().flatten().copied().collect();
    if pooled.is_empty() {
        return Vec::new();
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut law = Vec::with_capacity(pooled.len());
    let mut next: Vec<Vec<T>> = forks.iter().map(|f| Vec::with_capacity(f.len())).collect();
    (0..REDRAWS)
        .map(|_| {
            law.clear();
            law.extend((0..pooled.len()).map(|_| pooled[rng.usize(..pooled.len())]));
            for (fork, drawn) in forks.iter().zip(next.iter_mut()) {
                drawn.clear();
                drawn.extend((0..fork.len()).map(|_| law[rng.usize(..law.len())]));
            }
            read(&next)
        })
        .collect()
}

/// Whether `values` (a row's rounds, or its pairs' differences) stand at
/// more than one level: somewhere between neighbours, with two or more on
/// each side, a step of at least [`LEVEL_STEP_SDS`] robust deviations of
/// each value from its own side's median ([`stats::robust_sd`]). A row
/// spread around one level takes no such step, one stray round is no
/// level, and a third level (slow rounds above) is spread the sides may
/// hold. Only rows at levels are redrawn: for the others the rounds' and
/// forks' intervals already hold the next run, and a redrawn one would
/// only widen them.
pub fn at_levels(values: &[f64]) -> bool {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let spread_of_sides = |at: usize| {
        let (lower, upper) = sorted.split_at(at);
        let mut distances: Vec<f64> = [lower, upper]
            .into_iter()
            .flat_map(|side| {
                let centre = stats::median(side);
                side.iter().map(move |v| (v - centre).abs())
            })
            .collect();
        stats::robust_sd(&mut distances)
    };
    (2..sorted.len().saturating_sub(1)).any(|at| {
        let step = sorted[at] - sorted[at - 1];
        step > 0.0 && step >= LEVEL_STEP_SDS * spread_of_sides(at)
    })
}

/// How wide a step between two levels is at the least, in robust
/// deviations within them: a normal sample of a dozen rounds steps about
/// one deviation at its widest away from its tails.
const LEVEL_STEP_SDS: f64 = 3.0;

/// The central 95% of `draws`, or None where there are none.
pub fn interval(mut draws: Vec<f64>) -> Option<[f64; 2]> {
    if draws.is_empty() {
        return None;
    }
    draws.sort_by(f64::total_cmp);
    let (lo, hi) = stats::central_interval(&draws, 0.95);
    Some([lo, hi])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_told_from_one_level_and_a_stray_round() {
        let two = [3.5, 3.5, 3.6, 5.6, 3.5, 3.5, 5.6, 3.5, 3.5, 3.5];
        assert!(at_levels(&two));
        // Half and half.
        assert!(at_levels(&[3.5, 5.6, 3.5, 5.6, 5.6, 3.5, 3.6, 5.6]));
        // A retpoline less its baseline, as a quick run read it: the
        // baseline's upper level below, two slow rounds above.
        let three = [
            18.272, 18.272, 20.347, 20.347, 20.348, 20.348, 20.349, 22.254, 22.991,
        ];
        assert!(at_levels(&three));
        // One round at the upper level is a stray, not a level.
        assert!(!at_levels(&[3.5, 3.5, 3.6, 5.6, 3.5, 3.5]));
        // Evenly spread: no step wider than the spread.
        let even: Vec<f64> = (1..=12).map(f64::from).collect();
        assert!(!at_levels(&even));
        assert!(!at_levels(&[3.5; 8]));
        assert!(!at_levels(&[1.0, 2.0, 3.0]));
    }

    #[test]
    fn each_next_fork_has_this_forks_size_and_draws_from_every_forks_rounds() {
        let forks = vec![vec![1.0, 2.0, 3.0], vec![10.0], vec![]];
        let mut lone = Vec::new();
        let sizes = redraws(&forks, 7, |next| {
            lone.push(next[1][0]);
            next.iter().map(Vec::len).collect::<Vec<_>>()
        });
        assert_eq!(sizes.len(), REDRAWS);
        assert!(sizes.iter().all(|s| s == &[3, 1, 0]));
        // Pooled: the one-round fork reads the other fork's rounds too.
        assert!(lone.iter().all(|v| [1.0, 2.0, 3.0, 10.0].contains(v)));
        assert!(lone.contains(&10.0) && lone.contains(&1.0));
        assert!(redraws::<f64, ()>(&[vec![], vec![]], 7, |_| ()).is_empty());
        assert_eq!(interval(Vec::new()), None);
    }
}
