//! Change points on synthetic histories of one row (`analysis::changes`):
//! stationary series, steps of 1.5, 2 and 3 times the between-run spread,
//! a drift and a single outlier run. Each rate's bound is the issue's
//! target, written before the first run; the rates measured are printed
//! and quoted in docs/history-and-compare.md.

use mitbench::analysis::changes::{ChangePoint, Search, change_points};
use mitbench::synthetic::series::CASES;

/// Runs in one series, and the step's place in it.
const RUNS: usize = 40;
/// Where the step cases lay their step (`synthetic::series::CASES`).
const STEP_AT: usize = RUNS / 2;
const TRIALS: u64 = 400;

/// The case `name`'s series of trial `trial`.
fn case(name: &str, trial: u64) -> Vec<f64> {
    CASES
        .iter()
        .find(|c| c.name == name)
        .expect(name)
        .draw(RUNS, trial)
}

fn found(series: &[f64]) -> Vec<ChangePoint> {
    change_points(series, Search::default())
}

#[test]
fn a_stationary_series_shows_at_most_one_false_change_per_hundred_runs() {
    for name in ["stationary-normal", "stationary-t4"] {
        let false_points: usize = (0..TRIALS).map(|seed| found(&case(name, seed)).len()).sum();
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
    for (size, name) in [(1.5, "step-1.5"), (2.0, "step-2"), (3.0, "step-3")] {
        let within_one = (0..TRIALS)
            .filter(|&seed| {
                found(&case(name, seed))
                    .iter()
                    .any(|c| c.at.abs_diff(STEP_AT) <= 1)
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
        .map(|seed| found(&case("outlier-5", seed)).len())
        .sum();
    let per_hundred = at_outlier as f64 / (TRIALS as usize * RUNS) as f64 * 100.0;
    eprintln!("one outlier run: {at_outlier} change points ({per_hundred:.3} per 100 runs)");
    assert!(per_hundred <= 1.0, "{per_hundred:.3}");
    // A drift of four spreads over the series: how many steps it is read
    // as is printed, for the docs (the method looks for steps; a drift has
    // none to find).
    let points: Vec<usize> = (0..TRIALS)
        .map(|seed| found(&case("drift-4", seed)).len())
        .collect();
    let flat = points.iter().filter(|&&n| n == 0).count();
    eprintln!(
        "a drift of 4 spreads over {RUNS} runs: {:.2} change points a series, none in {flat} of {TRIALS}",
        points.iter().sum::<usize>() as f64 / TRIALS as f64
    );
}
