//! Change points on synthetic histories of one row (`analysis::changes`):
//! stationary series, steps of 1.5, 2 and 3 times the between-run spread,
//! a drift and a single outlier run. Each rate's bound is the issue's
//! target, written before the first run; the rates measured are printed
//! and quoted in docs/history-and-compare.md.

use mitbench::analysis::changes::{ChangePoint, Search, change_points};

/// Runs in one series, and the step's place in it.
const RUNS: usize = 40;
const STEP_AT: usize = 20;
const TRIALS: u64 = 400;

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut fastrand::Rng) -> f64 {
    let u = rng.f64().max(f64::MIN_POSITIVE);
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * rng.f64()).cos()
}

/// A Student's t draw on 4 degrees of freedom: heavier tails than the
/// normal, as a guest's runs have (a run that caught a busy hour).
fn heavy(rng: &mut fastrand::Rng) -> f64 {
    let chi2: f64 = (0..4).map(|_| normal(rng).powi(2)).sum();
    // Scaled to unit variance (t4's is 2).
    normal(rng) / (chi2 / 4.0).sqrt() / 2f64.sqrt()
}

/// One series of between-run noise of unit spread drawn by `noise`, with
/// `shape(i)` added to run i.
fn series(
    seed: u64,
    noise: fn(&mut fastrand::Rng) -> f64,
    shape: impl Fn(usize) -> f64,
) -> Vec<f64> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..RUNS).map(|i| noise(&mut rng) + shape(i)).collect()
}

fn found(series: &[f64]) -> Vec<ChangePoint> {
    change_points(series, Search::default())
}

#[test]
fn a_stationary_series_shows_at_most_one_false_change_per_hundred_runs() {
    for (name, noise) in [
        ("normal", normal as fn(&mut fastrand::Rng) -> f64),
        ("heavy-tailed", heavy),
    ] {
        let false_points: usize = (0..TRIALS)
            .map(|seed| found(&series(seed, noise, |_| 0.0)).len())
            .sum();
        let per_hundred = false_points as f64 / (TRIALS as usize * RUNS) as f64 * 100.0;
        eprintln!(
            "{name}: {false_points} false change points in {} runs ({per_hundred:.3} per 100)",
            TRIALS as usize * RUNS
        );
        assert!(per_hundred <= 1.0, "{name}: {per_hundred:.3} per 100 runs");
    }
}

#[test]
fn a_step_of_three_spreads_is_found_within_one_run_nine_times_in_ten() {
    for size in [1.5, 2.0, 3.0] {
        let within_one = (0..TRIALS)
            .filter(|&seed| {
                let s = series(
                    1000 + seed,
                    normal,
                    |i| if i >= STEP_AT { size } else { 0.0 },
                );
                found(&s).iter().any(|c| c.at.abs_diff(STEP_AT) <= 1)
            })
            .count();
        let rate = within_one as f64 / TRIALS as f64;
        eprintln!("step of {size} spreads: found within one run in {rate:.3} of {TRIALS}");
        if size == 3.0 {
            assert!(rate >= 0.9, "{rate:.3}");
        }
    }
}

#[test]
fn a_single_outlier_run_is_no_change_and_a_drift_is_reported_as_steps() {
    // One run five spreads off, anywhere: no side of three runs stands on it.
    let at_outlier: usize = (0..TRIALS)
        .map(|seed| {
            let odd = (seed as usize * 7) % RUNS;
            let s = series(2000 + seed, normal, |i| if i == odd { 5.0 } else { 0.0 });
            found(&s).len()
        })
        .sum();
    let per_hundred = at_outlier as f64 / (TRIALS as usize * RUNS) as f64 * 100.0;
    eprintln!("one outlier run: {at_outlier} change points ({per_hundred:.3} per 100 runs)");
    assert!(per_hundred <= 1.0, "{per_hundred:.3}");
    // A drift of four spreads over the series: how many steps it is read
    // as is printed, for the docs (the method looks for steps; a drift has
    // none to find).
    let points: Vec<usize> = (0..TRIALS)
        .map(|seed| {
            let s = series(3000 + seed, normal, |i| 4.0 * i as f64 / RUNS as f64);
            found(&s).len()
        })
        .collect();
    let flat = points.iter().filter(|&&n| n == 0).count();
    eprintln!(
        "a drift of 4 spreads over {RUNS} runs: {:.2} change points a series, none in {flat} of {TRIALS}",
        points.iter().sum::<usize>() as f64 / TRIALS as f64
    );
}
