//! Statistics against inputs whose answers are known.

use crate::common;

use common::assert_coverage;
use mitbench::analysis::noise::Spread;
use mitbench::analysis::stats;
use mitbench::analysis::stats::{
    Summary, block_medians, bootstrap_median_ci, fit_amortization, fit_line, fit_slope_through,
    mad, median, quantile, tukey_outliers,
};
use mitbench::measure::harness::per_item_costs;

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

/// Standard normal draws by Box-Muller from a seeded generator.
fn normal(rng: &mut fastrand::Rng) -> f64 {
    let u1 = rng.f64().max(f64::MIN_POSITIVE);
    let u2 = rng.f64();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

#[test]
fn median_quantiles_and_mad_of_known_data() {
    let odd = sorted(vec![5.0, 1.0, 3.0, 2.0, 4.0]);
    assert_eq!(median(&odd), 3.0);
    assert_eq!(median(&sorted(vec![4.0, 1.0, 3.0, 2.0])), 2.5);
    assert_eq!(quantile(&odd, 0.0), 1.0);
    assert_eq!(quantile(&odd, 1.0), 5.0);
    assert_eq!(quantile(&odd, 0.25), 2.0);
    // Type 7 interpolation: position 0.99 * 4 = 3.96 between 4 and 5.
    assert!((quantile(&odd, 0.99) - 4.96).abs() < 1e-12);
    // |x - 3| = 2,1,0,1,2 -> median 1.
    assert_eq!(mad(&odd, 3.0), 1.0);
    assert_eq!(median(&[7.0]), 7.0);
}

/// The bootstraps read a resample's median without sorting it (in place,
/// or from counts of draws): the same figure as the sorted median, to the
/// last bit, on samples of every small size with ties, and the counts are
/// the same draws as indexing one by one.
#[test]
fn a_median_read_in_place_or_from_counts_is_the_sorted_median() {
    let mut rng = fastrand::Rng::with_seed(11);
    for n in 1..=41 {
        for _ in 0..50 {
            // Few distinct values, so resamples hold ties.
            let values: Vec<f64> = (0..n).map(|_| rng.u32(0..7) as f64 * 1.5 + 0.1).collect();
            let ascending = sorted(values.clone());
            let seed = rng.u64(..);
            let one_by_one: Vec<f64> = {
                let mut draw = fastrand::Rng::with_seed(seed);
                (0..n).map(|_| ascending[draw.usize(..n)]).collect()
            };
            let mut counts = Vec::new();
            stats::draw_counts(&mut fastrand::Rng::with_seed(seed), n, &mut counts);
            let expected = median(&sorted(one_by_one.clone()));
            let counted =
                stats::median_of_counted(ascending.iter().copied().zip(counts.iter().copied()), n);
            let in_place = stats::median_in_place(&mut one_by_one.clone());
            assert_eq!(counted.to_bits(), expected.to_bits(), "{one_by_one:?}");
            assert_eq!(in_place.to_bits(), expected.to_bits(), "{one_by_one:?}");
        }
    }
}

#[test]
fn tukey_counts_planted_outliers() {
    // Quartiles of 0..=100 are 25 and 75: IQR 50, mild fences -50/150,
    // severe fences -125/225.
    let mut data: Vec<f64> = (0..=100).map(f64::from).collect();
    data.extend([160.0, 170.0, 300.0, -60.0, -200.0, -300.0]);
    let out = tukey_outliers(&sorted(data));
    // The planted points shift the quartiles a little, not across a fence.
    assert_eq!(
        (out.low_severe, out.low_mild, out.high_mild, out.high_severe),
        (2, 1, 2, 1)
    );
    assert_eq!(out.total(), 6);
}

/// How many of 300 seeded trials' 95% intervals (of 101 draws each) hold
/// the true median.
fn median_ci_hits(true_median: f64, draw: impl Fn(&mut fastrand::Rng) -> f64) -> usize {
    let mut rng = fastrand::Rng::with_seed(7);
    (0..300)
        .filter(|&trial| {
            let sample: Vec<f64> = (0..101).map(|_| draw(&mut rng)).collect();
            let (lo, hi) = bootstrap_median_ci(&sample, 0.95, 400, trial as u64);
            lo <= true_median && true_median <= hi
        })
        .count()
}

#[test]
fn bootstrap_ci_covers_the_true_median_about_95_percent() {
    let normal_hits = median_ci_hits(10.0, |rng| 10.0 + 2.0 * normal(rng));
    assert_coverage("normal", normal_hits, 300, 0.90..=0.99);
    // Right-skewed, like latencies: exponential with median ln 2.
    let exponential_hits = median_ci_hits(std::f64::consts::LN_2, |rng| -(1.0 - rng.f64()).ln());
    assert_coverage("exponential", exponential_hits, 300, 0.90..=0.99);
}

#[test]
fn bootstrap_ci_is_deterministic_and_brackets_the_median() {
    let mut rng = fastrand::Rng::with_seed(3);
    let sample: Vec<f64> = (0..500).map(|_| 100.0 + normal(&mut rng)).collect();
    let summary = Summary::of(&sample, Summary::RESAMPLES);
    let [lo, hi] = summary.median.ci95.expect("500 samples have an interval");
    let median = summary.median.value;
    assert!(lo <= median && median <= hi);
    assert_eq!(
        Summary::of(&sample, Summary::RESAMPLES).median,
        summary.median
    );
    // 500 draws of sd 1: the median's CI half-width is about 1.96 * 1.2533 / sqrt(500) = 0.11.
    let half = summary.median.half_width().unwrap();
    assert!(half > 0.05 && half < 0.2, "{half}");
    assert_eq!(summary.n, 500);
    assert!(summary.min <= median && median <= summary.p99 && summary.p99 <= summary.max);
}

#[test]
fn line_fit_recovers_planted_slope_and_intercept() {
    let mut rng = fastrand::Rng::with_seed(11);
    let xs: Vec<f64> = (0..200).map(|i| f64::from(i % 9) * 64.0).collect();
    let ys: Vec<f64> = xs
        .iter()
        .map(|x| 78.0 + 247.5 * x + 5.0 * normal(&mut rng))
        .collect();
    let fit = fit_line(&xs, &ys).unwrap();
    assert!((fit.slope - 247.5).abs() < 0.01, "slope {}", fit.slope);
    assert!(
        (fit.intercept - 78.0).abs() < 2.0,
        "intercept {}",
        fit.intercept
    );
    assert!(fit.r2 > 0.999);
    // Exact points give exact answers.
    let exact = fit_line(&[0.0, 1.0, 2.0], &[1.0, 3.0, 5.0]).unwrap();
    assert_eq!((exact.slope, exact.intercept, exact.r2), (2.0, 1.0, 1.0));
}

#[test]
fn slope_through_a_known_intercept() {
    let xs = [16.0, 32.0, 48.0];
    let fit = fit_slope_through(
        80.0,
        &xs,
        &[
            80.0 + 16.0 * 250.0,
            80.0 + 32.0 * 250.0,
            80.0 + 48.0 * 250.0,
        ],
    )
    .unwrap();
    assert_eq!((fit.slope, fit.intercept, fit.r2), (250.0, 80.0, 1.0));
    // Noise on the points moves the slope, never the anchored intercept.
    let noisy = fit_slope_through(80.0, &xs, &[4100.0, 8050.0, 12090.0]).unwrap();
    assert_eq!(noisy.intercept, 80.0);
    assert!((noisy.slope - 250.0).abs() < 1.0 && noisy.r2 > 0.99);
    assert!(fit_slope_through(80.0, &[0.0], &[80.0]).is_none());
}

#[test]
fn line_fit_needs_two_distinct_x() {
    assert!(fit_line(&[1.0], &[2.0]).is_none());
    assert!(fit_line(&[3.0, 3.0, 3.0], &[1.0, 2.0, 3.0]).is_none());
}

/// Synthetic harness samples: a fixed cost of 80 ticks per sample plus
/// 250 ticks per item, with per-item noise, in batches of 0, b, ..., 8b.
fn synthetic_samples(rounds: usize, base: u64) -> Vec<(u64, u64)> {
    let mut rng = fastrand::Rng::with_seed(5);
    let mut samples = Vec::new();
    for _ in 0..rounds {
        for multiple in 0..=8u64 {
            let n = base * multiple;
            let noise = 3.0 * normal(&mut rng) + 4.0 * (n as f64).sqrt() * normal(&mut rng);
            samples.push((n, (80.0 + 250.0 * n as f64 + noise).round().max(0.0) as u64));
        }
    }
    samples
}

#[test]
fn overhead_is_fitted_out_of_per_item_costs() {
    let samples = synthetic_samples(60, 16);
    let (fit, values) = per_item_costs(&samples);
    assert!(
        (fit.intercept - 80.0).abs() < 1.5,
        "intercept {}",
        fit.intercept
    );
    assert!((fit.slope - 250.0).abs() < 0.5, "slope {}", fit.slope);
    // Empty batches inform the fit only.
    assert_eq!(values.len(), 60 * 8);
    let summary = Summary::of(&values, Summary::RESAMPLES);
    let middle = summary.median.value;
    assert!((middle - 250.0).abs() < 0.5, "median {middle}");
    let [lo, hi] = summary.median.ci95.unwrap();
    assert!(lo <= middle && middle <= hi);
    // Without removing the fixed cost, small batches would read 80/16 = 5
    // ticks high; the spread of per-item values shows it is gone.
    let smallest: Vec<f64> = samples
        .iter()
        .filter(|&&(n, _)| n == 16)
        .map(|&(n, t)| (t as f64 - fit.intercept) / n as f64)
        .collect();
    let smallest_median = median(&sorted(smallest));
    assert!(
        (smallest_median - 250.0).abs() < 2.0,
        "smallest batch median {smallest_median}"
    );
}

#[test]
fn without_empty_batches_the_intercept_is_fitted() {
    let samples: Vec<(u64, u64)> = synthetic_samples(60, 16)
        .into_iter()
        .filter(|&(n, _)| n > 0)
        .collect();
    let (fit, values) = per_item_costs(&samples);
    assert!((fit.slope - 250.0).abs() < 0.5, "slope {}", fit.slope);
    assert!(
        (fit.intercept - 80.0).abs() < 30.0,
        "intercept {}",
        fit.intercept
    );
    assert_eq!(values.len(), samples.len());
}

#[test]
fn block_medians_expose_a_shift_mid_measurement() {
    let steady: Vec<f64> = (0..400).map(|i| 100.0 + f64::from(i % 5)).collect();
    let steady_summary = Summary::of(&steady, 200);
    assert_eq!(steady_summary.block_medians, vec![102.0; 4]);
    assert_eq!(steady_summary.drift(), 0.0);
    // The machine slows by 20% for the second half.
    let shifted: Vec<f64> = (0..400)
        .map(|i| if i < 200 { 100.0 } else { 120.0 })
        .collect();
    assert_eq!(block_medians(&shifted, 4), vec![100.0, 100.0, 120.0, 120.0]);
    assert_eq!(Summary::of(&shifted, 200).drift(), 20.0);
    // Fewer values than blocks: one block per value.
    assert_eq!(block_medians(&[1.0, 2.0], 4), vec![1.0, 2.0]);
}

/// Batch sizes as memory/mprotect's range curve has them: 1 to 512 pages.
fn range_batches() -> Vec<f64> {
    (0..10).map(|k| f64::from(1 << k)).collect()
}

#[test]
fn amortization_fit_recovers_planted_per_call_and_per_page_costs() {
    // An mprotect-like curve: 150 ticks per page plus 2,250 per call,
    // measured at B = 1..512 with 1% multiplicative noise.
    let mut rng = fastrand::Rng::with_seed(9);
    let batches = range_batches();
    let costs: Vec<f64> = batches
        .iter()
        .map(|b| (150.0 + 2250.0 / b) * (1.0 + 0.01 * normal(&mut rng)))
        .collect();
    let fit = fit_amortization(&batches, &costs).unwrap();
    assert!(
        (fit.per_batch.value - 2250.0).abs() < 60.0,
        "per call {}",
        fit.per_batch.value
    );
    assert!(
        (fit.per_item.value - 150.0).abs() < 10.0,
        "per page {}",
        fit.per_item.value
    );
    // The intervals bracket the estimates; whether they cover the truth
    // at the promised rate is the next test's question, over many draws.
    assert!(
        fit.per_batch.ends()[0] < fit.per_batch.value
            && fit.per_batch.value < fit.per_batch.ends()[1]
    );
    assert!(
        fit.per_item.ends()[0] < fit.per_item.value && fit.per_item.value < fit.per_item.ends()[1]
    );
    assert!(fit.r2 > 0.99);
    assert_eq!(fit.points, 10);
    // Exact data: exact answer, zero-width intervals.
    let exact: Vec<f64> = batches.iter().map(|b| 10.0 + 100.0 / b).collect();
    let fit = fit_amortization(&batches, &exact).unwrap();
    assert!((fit.per_item.value - 10.0).abs() < 1e-9 && (fit.per_batch.value - 100.0).abs() < 1e-9);
    assert!((fit.per_batch.ends()[1] - fit.per_batch.ends()[0]).abs() < 1e-6);
    // Too few points, or a batch of zero, is no fit.
    assert!(fit_amortization(&[1.0, 2.0], &[3.0, 2.0]).is_none());
    assert!(fit_amortization(&[0.0, 1.0, 2.0], &[1.0, 2.0, 3.0]).is_none());
}

#[test]
fn amortization_intervals_cover_the_planted_costs_about_95_percent() {
    // Additive noise of sd 20 ticks on every point, 400 seeded trials.
    let mut rng = fastrand::Rng::with_seed(21);
    let batches = range_batches();
    let (mut per_call, mut per_page) = (0, 0);
    let trials = 400;
    for _ in 0..trials {
        let costs: Vec<f64> = batches
            .iter()
            .map(|b| 150.0 + 2250.0 / b + 20.0 * normal(&mut rng))
            .collect();
        let fit = fit_amortization(&batches, &costs).unwrap();
        per_call +=
            usize::from(fit.per_batch.ends()[0] <= 2250.0 && 2250.0 <= fit.per_batch.ends()[1]);
        per_page += usize::from(fit.per_item.ends()[0] <= 150.0 && 150.0 <= fit.per_item.ends()[1]);
    }
    assert_coverage("per call", per_call, trials, 0.91..=0.99);
    assert_coverage("per page", per_page, trials, 0.91..=0.99);
}

/// Two-state samples: a quiet figure plus noise, and in a share of the runs
/// a slow state on top. The low-quantile difference recovers the true
/// difference of the quiet figures whatever the slow share of each side,
/// where the difference of medians moves with the shares; and its interval
/// covers the truth in most of 200 synthetic trials.
#[test]
fn a_low_quantile_difference_sees_through_a_slow_state() {
    let mut rng = fastrand::Rng::with_seed(7);
    let sample = |quiet: f64, slow_share: f64, rng: &mut fastrand::Rng| -> Vec<f64> {
        (0..16)
            .map(|_| {
                let slow = if rng.f64() < slow_share {
                    0.4 * quiet
                } else {
                    0.0
                };
                quiet + slow + 2.0 * normal(rng).abs()
            })
            .collect()
    };
    let (plain, filtered) = (500.0, 540.0);
    // What the quartiles see: each side's quiet runs are the lower 90% and
    // 70%, so its quartile is the quiet noise's 0.25/0.9 and 0.25/0.7
    // quantile; of |N(0, 2)|, 2 x 0.355 and 2 x 0.464.
    const TRUTH: f64 = 40.0 + 2.0 * (0.464 - 0.355);
    let mut covered = 0;
    for trial in 0..200 {
        let a = sample(plain, 0.1, &mut rng);
        let b = sample(filtered, 0.3, &mut rng);
        let difference = stats::quantile_difference(&a, &b, 0.25, 0.95, 500, trial).unwrap();
        let (d, [lo, hi]) = (difference.value, difference.ci95.unwrap());
        assert!((d - 40.0).abs() < 12.0, "trial {trial}: {d}");
        assert!(lo <= d && d <= hi);
        covered += usize::from(lo <= TRUTH && TRUTH <= hi);
    }
    assert_coverage("quartile difference", covered, 200, 0.85..=1.0);
    assert!(stats::quantile_difference(&[], &[1.0], 0.25, 0.95, 10, 1).is_none());
}

#[test]
fn the_t_point_on_fractional_degrees_of_freedom_is_the_verdict_s() {
    // Where the p-value is read on fractional degrees of freedom, the
    // printed half-width and detectable change stand on the same point.
    for dof in [1.6, 2.25, 2.9, 7.5, 45.5, 500.0] {
        let t = stats::student_t_975(dof);
        let p = stats::t_two_sided_p(t, dof);
        assert!((p - 0.05).abs() < 1e-6, "{dof}: t {t} p {p}");
        let p80 = stats::t_two_sided_p(stats::student_t_80(dof), dof);
        assert!((p80 - 0.40).abs() < 1e-6, "{dof}: {p80}");
        let spread = Spread { sd: 0.01, df: dof };
        let at_half = spread.p_value(spread.half_width(), 0.0);
        assert!((at_half - 0.05).abs() < 1e-6, "{dof}: {at_half}");
    }
    // Between the table's rows: the points found by integrating t's
    // density numerically (Simpson, 20,000 steps) at 1.6 and 2.5 df.
    for (dof, t975, t80) in [(1.6, 5.517, 1.129), (2.5, 3.575, 1.010)] {
        assert!((stats::student_t_975(dof) - t975).abs() < 0.001, "{dof}");
        assert!((stats::student_t_80(dof) - t80).abs() < 0.001, "{dof}");
    }
    // Past the table's 30 rows: the published 40, 60 and 120, not the normal.
    for (dof, t) in [(40.0, 2.021), (60.0, 2.000), (120.0, 1.980)] {
        assert!((stats::student_t_975(dof) - t).abs() < 0.0006, "{dof}");
    }
    assert_eq!(stats::student_t_975(0.0), f64::INFINITY);
    assert_eq!(stats::student_t_975(0.4), 12.706);
    assert_eq!(stats::t_point(1.0, 5.0), 0.0);
}

#[test]
fn the_t_distribution_s_p_values_match_its_table() {
    // The table's 97.5% points are where the two-sided p is 5%.
    for (dof, t) in [(1usize, 12.706), (4, 2.776), (10, 2.228), (30, 2.042)] {
        let p = stats::t_two_sided_p(t, dof as f64);
        assert!((p - 0.05).abs() < 0.0005, "t {t} on {dof}: p {p}");
        assert!((stats::student_t_975(dof as f64) - t).abs() < 1e-9);
    }
    // Its 80% points: one-sided 20% above them.
    for dof in [2usize, 5, 20] {
        let p = stats::t_two_sided_p(stats::student_t_80(dof as f64), dof as f64);
        assert!((p - 0.40).abs() < 0.002, "{dof}: {p}");
    }
    assert!((stats::t_two_sided_p(1.96, 1e6) - 0.05).abs() < 0.0005);
    assert_eq!(stats::t_two_sided_p(0.0, 5.0), 1.0);
    assert!((stats::ln_gamma(5.0) - 24f64.ln()).abs() < 1e-12);
    assert!((stats::ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-12);
}

#[test]
fn the_f_distribution_s_upper_tail_matches_its_table() {
    // The table's 95% points, (numerator df, denominator df, F).
    for (d1, d2, f) in [(1.0, 10.0, 4.965), (4.0, 10.0, 3.478), (3.0, 20.0, 3.098)] {
        let p = stats::f_upper_p(f, d1, d2);
        assert!((p - 0.05).abs() < 0.0005, "F {f} on ({d1}, {d2}): p {p}");
    }
    // F(1, d) is t(d) squared: its upper tail is t's two-sided p.
    let p = stats::f_upper_p(2.228f64.powi(2), 1.0, 10.0);
    assert!((p - stats::t_two_sided_p(2.228, 10.0)).abs() < 1e-9);
    assert_eq!(stats::f_upper_p(0.0, 3.0, 4.0), 1.0);
    assert_eq!(stats::f_upper_p(f64::INFINITY, 3.0, 4.0), 0.0);
}

#[test]
fn benjamini_hochberg_finds_the_step_up_cut() {
    // m = 5, q = 0.05: thresholds 0.01, 0.02, 0.03, 0.04, 0.05.
    let found = stats::benjamini_hochberg(&[0.04, 0.001, 0.5, 0.025, 0.03], 0.05);
    // Sorted: 0.001 (<= .01), 0.025 (> .02), 0.03 (<= .03), 0.04 (<= .04),
    // 0.5: the cut is the fourth, so all but 0.5 are found.
    assert_eq!(found, [true, true, false, true, true]);
    assert_eq!(stats::benjamini_hochberg(&[0.2, 0.3], 0.05), [false, false]);
    assert!(stats::benjamini_hochberg(&[], 0.05).is_empty());
    // Uniform p-values under no change: nothing found in nearly every trial.
    let mut rng = fastrand::Rng::with_seed(7);
    let any = (0..2000)
        .filter(|_| {
            let p: Vec<f64> = (0..50).map(|_| rng.f64()).collect();
            stats::benjamini_hochberg(&p, 0.05).iter().any(|&f| f)
        })
        .count();
    assert!(
        any <= 2000 / 20 + 30,
        "{any} of 2000 trials found something"
    );
}

/// The next run's difference from its baseline: 5 variants of a probe, 3
/// forks a run, each fork's difference drawn around the true one. Another
/// run's difference lands in this run's interval 95% of the time. The
/// bound: nominal +- 3.09 standard errors over the runs counted (the five
/// variants of a run share its pooled spread, so they do not count apart).
#[test]
fn another_runs_difference_lands_in_the_next_run_interval_95_percent() {
    use mitbench::analysis::spread::{ForkSpread, VariantSpread, pooled_in_probe};
    const RUNS: usize = 2000;
    const VARIANTS: usize = 5;
    const FORKS: usize = 3;
    let mut rng = fastrand::Rng::with_seed(55);
    let run = |rng: &mut fastrand::Rng| -> Vec<Vec<f64>> {
        (0..VARIANTS)
            .map(|v| (0..FORKS).map(|_| 10.0 * v as f64 + normal(rng)).collect())
            .collect()
    };
    let (mut hits, mut checks) = (0, 0);
    for _ in 0..RUNS {
        let (this, next) = (run(&mut rng), run(&mut rng));
        let spreads: Vec<VariantSpread> = this
            .iter()
            .enumerate()
            .map(|(v, forks)| VariantSpread {
                name: v.to_string(),
                forks: FORKS,
                spread: ForkSpread::of_differences(forks),
                lends: true,
            })
            .collect();
        for (name, interval) in pooled_in_probe(&spreads, None) {
            let v: usize = name.parse().unwrap();
            let moved = stats::mean(&next[v]) - stats::mean(&this[v]);
            hits += usize::from(moved.abs() <= interval.half_width());
            checks += 1;
        }
    }
    assert_eq!(checks, RUNS * VARIANTS);
    let se = (0.95 * 0.05 / RUNS as f64).sqrt();
    assert_coverage(
        "next run's difference",
        hits,
        checks,
        (0.95 - 3.09 * se)..=(0.95 + 3.09 * se),
    );
}
