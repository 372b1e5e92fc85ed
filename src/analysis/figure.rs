//! A record's figure put together: its interval for the next run from the
//! rounds, the forks and the machine's drift; what share of a toll a
//! variant wins back, with every end of the intervals it is read from; a
//! per-round figure's median with its interval.

pub use super::interval::{Figure, Reported, half_width, half_width_pct};
use super::rounds;
use super::spread::NextRun;
use serde::{Deserialize, Serialize};

/// What a figure's interval for the next run stands on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NextRunFrom {
    /// The forks' spread (the wider side where rounds and drift say more).
    Forks,
    /// One fork: the spread between processes borrowed from its probe's
    /// other variants (or the run's), beside the rounds' interval.
    BorrowedSpread,
    /// One fork: the rounds' interval and the machine's drift.
    RoundsAndDrift,
    /// One fork and no drift measured: the rounds alone, which cannot see
    /// how far another process or minute moves the figure.
    #[default]
    RoundsOnly,
}

impl NextRunFrom {
    pub fn describe(self) -> &'static str {
        match self {
            NextRunFrom::Forks => "the spread across forks",
            NextRunFrom::BorrowedSpread => {
                "one process: the spread between processes borrowed from its probe's other rows"
            }
            NextRunFrom::RoundsAndDrift => "this run's rounds and the machine's drift",
            NextRunFrom::RoundsOnly => {
                "this run's rounds only: one fork and no drift measured, so another process or minute may land outside it"
            }
        }
    }
}

/// The 95% interval of the next run's figure around the rounds' figure and
/// what it stands on: the hull of the forks' prediction interval (with the
/// machine's drift by then in quadrature) and the rounds' interval (with
/// `redrawn`, a next run's forks drawn from these rounds:
/// [`super::redrawn`]) widened by the drift; whichever of the two exists
/// where one does not; never narrower than `floor_share` of it on either
/// side (in logs for a positive cost; [`super::spread::next_run_floor`]
/// otherwise).
pub fn next_run_interval(
    rounds: Figure,
    redrawn: Option<[f64; 2]>,
    next: Option<NextRun>,
    drift_interval_pct: Option<f64>,
    floor_share: f64,
) -> (Option<[f64; 2]>, NextRunFrom) {
    let ticks = rounds.value;
    // A redrawn end is a figure the next run may read (the other level of
    // a two-level row), and moves by the least floor a figure gets.
    let slack = super::interval::NEXT_RUN_FLOOR_SHARE;
    let redrawn = redrawn.map(|[lo, hi]| match ticks > 0.0 && lo > 0.0 {
        true => [lo * (-slack).exp(), hi * slack.exp()],
        false => [lo, hi],
    });
    let of_rounds = rounds
        .ci95
        .and_then(|interval| hull([[ticks, ticks], interval].into_iter().chain(redrawn)));
    let in_run = of_rounds.map(|[lo, hi]| {
        let drift = drift_interval_pct.unwrap_or(0.0) / 100.0 * ticks.abs();
        let widen = |half: f64| half.hypot(drift);
        [ticks - widen(ticks - lo), ticks + widen(hi - ticks)]
    });
    // The forks' spread holds the processes and the moments of this run;
    // the machine's drift by the next run comes on top, in quadrature.
    let drift_log = drift_interval_pct.unwrap_or(0.0) / 100.0;
    let forks = next.map(|n| n.interval(ticks, drift_log));
    let run_to_run = match (forks, in_run) {
        (Some([f_lo, f_hi]), Some([r_lo, r_hi])) => Some([f_lo.min(r_lo), f_hi.max(r_hi)]),
        (one, other) => one.or(other),
    };
    // Rounds and forks that agree to the tick hold no next run. The share
    // is read from log steps between runs, and a row's own can pass 100%
    // (a teardown that moved 3x): either side of a cost in logs, then.
    let (down, up) = if ticks > 0.0 {
        (ticks * (-floor_share).exp(), ticks * floor_share.exp())
    } else {
        let floor = super::spread::next_run_floor(ticks, 0.0, floor_share);
        (ticks - floor, ticks + floor)
    };
    let run_to_run = run_to_run.map(|[lo, hi]| [lo.min(down), hi.max(up)]);
    let from = match (next, drift_interval_pct) {
        (Some(n), _) if n.forks < 2 => NextRunFrom::BorrowedSpread,
        (Some(_), _) => NextRunFrom::Forks,
        (None, Some(_)) => NextRunFrom::RoundsAndDrift,
        (None, None) => NextRunFrom::RoundsOnly,
    };
    (run_to_run, from)
}

/// `interval` around `figure` widened on the log scale, each side apart,
/// by `log_half` in quadrature: an error that scales the figure (a speed
/// coefficient's over as far as the speed moved) beside the interval's own.
pub fn widened_in_logs(figure: f64, [lo, hi]: [f64; 2], log_half: f64) -> [f64; 2] {
    let widen = |bound: f64| (bound / figure).ln().abs().hypot(log_half);
    [figure * (-widen(lo)).exp(), figure * widen(hi).exp()]
}

/// (toll - cost) / (toll - reference) with each figure anywhere in its
/// interval: the widest range the three intervals allow. None when an
/// interval is missing or the toll's could be zero.
pub fn toll_recovered_interval(
    toll: Option<[f64; 2]>,
    reference: Option<[f64; 2]>,
    cost: Option<[f64; 2]>,
) -> Option<[f64; 2]> {
    let ([t_lo, t_hi], [r_lo, r_hi], [c_lo, c_hi]) = (toll?, reference?, cost?);
    let (den_lo, den_hi) = (t_lo - r_hi, t_hi - r_lo);
    if den_lo <= 0.0 {
        return None;
    }
    let (num_lo, num_hi) = (t_lo - c_hi, t_hi - c_lo);
    let candidates = [
        num_lo / den_lo,
        num_lo / den_hi,
        num_hi / den_lo,
        num_hi / den_hi,
    ];
    let lo = candidates.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = candidates.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some([lo * 100.0, hi * 100.0])
}

/// The least interval holding every one of `intervals` (a point is an
/// interval of no width); None where there is none.
pub fn hull(intervals: impl IntoIterator<Item = [f64; 2]>) -> Option<[f64; 2]> {
    intervals
        .into_iter()
        .reduce(|[lo, hi], [l, h]| [lo.min(l), hi.max(h)])
}

/// The median over rounds of a per-round figure (a phase's ticks or
/// share) with its interval over rounds from five rounds on, else the hull
/// of the rounds' own intervals.
pub fn median_or_hull(each_round: &[Figure], seed: u64) -> Figure {
    let values: Vec<f64> = each_round.iter().map(|f| f.value).collect();
    let median = rounds::median_with_ci(&values, seed);
    Figure {
        ci95: median
            .ci95
            .or_else(|| hull(each_round.iter().filter_map(|f| f.ci95))),
        ..median
    }
}

/// Where the next run's median over rounds of a per-round figure lands,
/// from this run's `values` (one a round) and their median: a round's
/// figure read as lognormal (a wait, a count: positive, skewed), the
/// median's standard error 1.2533 s / sqrt(n) on the log scale, the next
/// run's median carrying the same, so their difference sqrt(2) times it,
/// and Student's t for n - 1. Over seven-round runs of such a law the
/// bootstrap interval of this run's median alone held the next run's
/// median in 291 of 400 pairs, this one in 384 (the test below). Where a
/// value is not positive, the median's bootstrap interval sqrt(2) as wide.
/// None under [`rounds::MIN_ROUNDS_FOR_CI`] values, or where the median
/// has no interval.
pub fn next_run_of_median(values: &[f64], median: Figure) -> Option<[f64; 2]> {
    let n = values.len();
    let [lo, hi] = median.ci95?;
    if n < rounds::MIN_ROUNDS_FOR_CI {
        return None;
    }
    let median = median.value;
    if median <= 0.0 || values.iter().any(|v| *v <= 0.0) {
        let widen = std::f64::consts::SQRT_2;
        return Some([
            median - (median - lo) * widen,
            median + (hi - median) * widen,
        ]);
    }
    let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    let mean = logs.iter().sum::<f64>() / n as f64;
    let var = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let se = MEDIAN_SE_PER_SD * (var / n as f64).sqrt();
    let half = super::stats::student_t_975((n - 1) as f64) * std::f64::consts::SQRT_2 * se;
    Some([median * (-half).exp(), median * half.exp()])
}

/// `interval` widened to hold `value` times e^(-floor) to e^(+floor), or
/// that alone where there is none: the least interval of a positive
/// figure whose moves between runs are read on the log scale. A value
/// that is not positive keeps what it had.
pub fn at_least_log(interval: Option<[f64; 2]>, value: f64, floor: f64) -> Option<[f64; 2]> {
    if value <= 0.0 || !value.is_finite() || !floor.is_finite() {
        return interval;
    }
    let [lo, hi] = [value * (-floor).exp(), value * floor.exp()];
    Some(interval.map_or([lo, hi], |[a, b]| [a.min(lo), b.max(hi)]))
}

/// A normal sample's median's standard error over its mean's: sqrt(pi/2).
const MEDIAN_SE_PER_SD: f64 = 1.2533;

/// How much more than the canary a row may be slowed by a slow level:
/// rows on the AMD EPYC guest slowed 0.5x to 2x as much as the canary did.
pub const MOST_ROW_SLOWDOWN_PER_CANARY: f64 = 2.0;

/// An interval of a figure measured in a slow level only (`excess`: its
/// rounds' canary over the quiet canary, less one), reaching down to
/// where the figure could lie at the quiet level: a slow level's figure
/// is no measurement of the quiet one, and its own interval, however
/// tight, says nothing of how far below the quiet figure lies.
pub fn reaching_down_to_quiet(interval: [f64; 2], excess: f64) -> [f64; 2] {
    let [lo, hi] = interval;
    let down = 1.0 + MOST_ROW_SLOWDOWN_PER_CANARY * excess.max(0.0);
    [if lo > 0.0 { lo / down } else { lo }, hi]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_floor_widens_a_narrow_interval_and_gives_one_where_none_was() {
        let floor = 0.5_f64;
        let [lo, hi] = [100.0 * (-floor).exp(), 100.0 * floor.exp()];
        assert_eq!(
            at_least_log(Some([95.0, 105.0]), 100.0, floor),
            Some([lo, hi])
        );
        assert_eq!(at_least_log(None, 100.0, floor), Some([lo, hi]));
        // A wider interval keeps its own ends, each side apart.
        assert_eq!(
            at_least_log(Some([10.0, 120.0]), 100.0, floor),
            Some([10.0, hi])
        );
        // A figure that is not positive has no log scale: left as it was.
        assert_eq!(at_least_log(None, 0.0, floor), None);
    }

    #[test]
    fn a_log_scale_error_widens_each_side_in_quadrature() {
        // ln(110/100) = 0.0953, ln(100/80) = 0.2231; each side widened by
        // 0.1 in quadrature.
        let [lo, hi] = widened_in_logs(100.0, [80.0, 110.0], 0.1);
        assert!(
            (lo - 100.0 * (-(0.2231435513f64.hypot(0.1))).exp()).abs() < 1e-6,
            "{lo}"
        );
        assert!(
            (hi - 100.0 * 0.0953101798f64.hypot(0.1).exp()).abs() < 1e-6,
            "{hi}"
        );
        let [lo, hi] = widened_in_logs(100.0, [80.0, 110.0], 0.0);
        assert!((lo - 80.0).abs() < 1e-9 && (hi - 110.0).abs() < 1e-9);
        assert_eq!(half_width_pct(100.0, [80.0, 110.0]), Some(20.0));
        assert_eq!(half_width_pct(0.0, [-1.0, 1.0]), None);
    }

    #[test]
    fn the_next_runs_median_of_rounds_lands_in_its_interval() {
        // Runs of seven rounds of a per-round figure (a co-runner's p99
        // wait) drawn from one lognormal law: this run's interval must
        // hold the next run's median in 95% of 400 pairs; the bound, 3.5
        // standard deviations of a 95% rate under it, fixed before the
        // run. The interval of this run's median alone holds fewer.
        let mut rng = fastrand::Rng::with_seed(11);
        let run = |rng: &mut fastrand::Rng| -> Vec<f64> {
            (0..7)
                .map(|_| (0.4 * crate::synthetic::standard_normal(rng)).exp() * 30.0)
                .collect()
        };
        let (trials, mut held, mut held_alone) = (400, 0, 0);
        for seed in 0..trials {
            let (this, next) = (run(&mut rng), run(&mut rng));
            let median = rounds::median_with_ci(&this, seed);
            let [alone_lo, alone_hi] = median.ci95.expect("seven rounds");
            let next_median = rounds::median_with_ci(&next, seed).value;
            let [lo, hi] = next_run_of_median(&this, median).expect("seven rounds");
            held += usize::from(lo <= next_median && next_median <= hi);
            held_alone += usize::from(alone_lo <= next_median && next_median <= alone_hi);
        }
        let bound = trials as f64 * 0.95 - 3.5 * (trials as f64 * 0.95 * 0.05).sqrt();
        eprintln!("held {held} of {trials}; this run's interval alone {held_alone}");
        assert!(
            held as f64 >= bound,
            "{held} of {trials}, alone {held_alone}"
        );
        assert!(held_alone < held, "{held_alone} against {held}");
    }

    #[test]
    fn rounds_that_agree_to_the_tick_get_the_floor() {
        // A thunk's row on a quiet host: every round and fork the same.
        let exact = Figure::new(500.0, Some([500.0, 500.0]));
        let share = super::super::spread::NEXT_RUN_FLOOR_SHARE;
        let (interval, _) = next_run_interval(exact, None, None, Some(0.0), share);
        let within = |share: f64| Some([500.0 * (-share).exp(), 500.0 * share.exp()]);
        assert_eq!(interval, within(share));
        // A wider interval of its own keeps it.
        let wide = Figure::new(500.0, Some([480.0, 530.0]));
        assert_eq!(
            next_run_interval(wide, None, None, Some(0.0), share).0,
            Some([480.0, 530.0])
        );
        // The share the history read (runs that moved 1% a step): 2.9%.
        let (interval, _) = next_run_interval(exact, None, None, Some(0.0), 0.029);
        assert_eq!(interval, within(0.029));
        // A row's own floor past 100% (a teardown that moved 3x between
        // runs) keeps the lower end above zero: it was a share off the
        // cost, and a negative end was written as null.
        let (interval, _) = next_run_interval(exact, None, None, Some(0.0), 1.2);
        assert_eq!(interval, within(1.2));
        assert!(interval.is_some_and(|[lo, _]| lo > 0.0));
    }

    #[test]
    fn toll_recovered_takes_every_end_of_the_three_intervals() {
        // toll 100 [90, 110], reference 20 [18, 22], cost 60 [55, 65]:
        // (100 - 60) / 80 = 50%, from (90 - 65) / 92 to (110 - 55) / 68.
        let [lo, hi] =
            toll_recovered_interval(Some([90.0, 110.0]), Some([18.0, 22.0]), Some([55.0, 65.0]))
                .unwrap();
        assert!((lo - 25.0 / 92.0 * 100.0).abs() < 1e-9, "{lo}");
        assert!((hi - 55.0 / 68.0 * 100.0).abs() < 1e-9, "{hi}");
        assert!(lo < 50.0 && 50.0 < hi);
        // A toll whose interval reaches the reference's has no interval.
        assert!(
            toll_recovered_interval(Some([10.0, 30.0]), Some([18.0, 22.0]), Some([15.0, 16.0]))
                .is_none()
        );
        assert!(toll_recovered_interval(None, Some([1.0, 2.0]), Some([1.0, 2.0])).is_none());
    }
}
