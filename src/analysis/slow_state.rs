//! Whether the machine's slow state moves a row. The canary is a syscall:
//! a host that slows the kernel's entry and exit (a trace event or an
//! audit rule on every syscall, a seccomp filter) slows the canary and
//! leaves a row that makes no syscall in its timed loop where it was. Its
//! rounds in that slow state are then as good as its quiet ones, and a
//! fork a slow stretch covered whole is not lost to the row. A busy host's
//! slow state, on the other hand, slows memory-bound user-space rows too
//! while the reference does not see it (the packet pipeline +30% in the
//! slow rounds of a busy Zen 4 guest's default run, its reference within
//! 2%), so neither the probe's kind nor the reference can say which rows a
//! slow state moves: each row says it, its slow rounds against its quiet
//! ones.

use super::stats;

/// How far a row's slow rounds may sit from its quiet ones, either way,
/// for the slow state to count as not moving it. The two sides mostly come
/// from different forks (a slow stretch covers a probe's rounds in one
/// fork whole), so the margin holds the machine's own walk between forks
/// as well as the rows' noise: at 1%, the synthetic hooked host's rows that
/// make no syscall were told unmoved in 38% of the cases the canary alone
/// left short of a fork, at 2% in 83%. A row read over both sides sits at
/// most this far from its quiet figure times the share of its rounds that
/// were slow, inside what a run whose canary spends long in a slow state
/// prints (±2-8% on the busy Zen 4 guest's toggled quick runs).
pub const UNMOVED_WITHIN: f64 = 0.02;

/// Fewest rounds on each side for the comparison to say anything.
pub const ROUNDS_EACH: usize = 3;

/// Whether rounds read in the slow state (`slow`, figures) sit within
/// [`UNMOVED_WITHIN`] of those read quiet (`quiet`): the 95% interval of
/// the difference of their mean log figures (Welch) lies inside ±that. An
/// equivalence test, two one-sided tests at 2.5% each: a row that moves by
/// more passes it in at most 2.5% of runs, and one whose rounds are too few
/// or too scattered to tell fails it and keeps to its quiet rounds.
pub fn unmoved(quiet: &[f64], slow: &[f64]) -> bool {
    let (Some(quiet), Some(slow)) = (LogMean::of(quiet), LogMean::of(slow)) else {
        return false;
    };
    let variance = quiet.variance_of_mean + slow.variance_of_mean;
    let welch_df = variance * variance
        / (quiet.variance_of_mean.powi(2) / quiet.df + slow.variance_of_mean.powi(2) / slow.df);
    let df = if welch_df.is_finite() {
        welch_df.max(1.0)
    } else {
        quiet.df + slow.df
    };
    let half = stats::student_t_975(df) * variance.sqrt();
    let difference = slow.mean - quiet.mean;
    let within = UNMOVED_WITHIN.ln_1p();
    difference - half > -within && difference + half < within
}

/// A side's mean log figure and the variance of that mean.
struct LogMean {
    mean: f64,
    variance_of_mean: f64,
    df: f64,
}

impl LogMean {
    fn of(figures: &[f64]) -> Option<LogMean> {
        let logs: Vec<f64> = figures
            .iter()
            .filter(|f| **f > 0.0 && f.is_finite())
            .map(|f| f.ln())
            .collect();
        if logs.len() < ROUNDS_EACH {
            return None;
        }
        let n = logs.len() as f64;
        let mean = stats::mean(&logs);
        let variance = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1.0);
        Some(LogMean {
            mean,
            variance_of_mean: variance / n,
            df: n - 1.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` figures about `level`, relative noise `noise`.
    fn rounds(n: usize, level: f64, noise: f64, rng: &mut fastrand::Rng) -> Vec<f64> {
        (0..n)
            .map(|_| level * (1.0 + noise * (rng.f64() * 2.0 - 1.0) * 3f64.sqrt()))
            .collect()
    }

    /// The share of `trials` pairs of sides (quiet at 100, slow at
    /// `slow_level`) the test calls unmoved.
    fn unmoved_share(slow_level: f64, n: usize, noise: f64, trials: usize) -> f64 {
        let mut rng = fastrand::Rng::with_seed(7);
        let passed = (0..trials)
            .filter(|_| {
                let quiet = rounds(n, 100.0, noise, &mut rng);
                let slow = rounds(n, slow_level, noise, &mut rng);
                unmoved(&quiet, &slow)
            })
            .count();
        passed as f64 / trials as f64
    }

    #[test]
    fn a_row_the_slow_state_moves_past_the_margin_is_rarely_called_unmoved() {
        // At the margin itself the test passes at most 2.5% of the time
        // (one side of the two one-sided tests); over 2,000 trials chance
        // takes that rate to 3.6% at most (+3.3 sd).
        let share = unmoved_share(100.0 * (1.0 + UNMOVED_WITHIN), 6, 0.005, 2_000);
        assert!(share <= 0.036, "passed {share:.3} at the margin");
        assert_eq!(unmoved_share(125.0, 8, 0.005, 200), 0.0);
    }

    #[test]
    fn a_row_the_slow_state_leaves_is_called_so_once_its_rounds_say_it() {
        // Six tight rounds a side: almost always told (0.3% noise, a
        // half-width ~0.35%); six scattered ones (3%) cannot tell.
        assert!(unmoved_share(100.0, 6, 0.003, 200) >= 0.95);
        assert!(unmoved_share(100.0, 6, 0.03, 200) <= 0.05);
    }

    #[test]
    fn too_few_rounds_or_nothing_to_read_is_not_unmoved() {
        assert!(!unmoved(&[100.0, 100.1], &[100.0, 100.1, 99.9]));
        assert!(!unmoved(&[100.0; 3], &[f64::NAN; 3]));
        // Identical sides: no spread at all, read as unmoved.
        assert!(unmoved(&[100.0; 3], &[100.0; 3]));
    }
}
