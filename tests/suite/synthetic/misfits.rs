//! Comparisons on a synthetic guest that does not fit the estimator where
//! it is simplest (`Noise::misfit_guest`): rows follow the speed with
//! slopes from 0.5 to 1.5, the reference reads with noise of its own and
//! sees a third of the slow state, every row settles at a level per run,
//! one run in ten at an odd one, and each boot at a level of its own. Read
//! at one reference speed, as `mitbench compare` reads stored runs: the
//! intervals cover the truth, A/A comparisons mark what their rates allow,
//! and a change of the printed detectable size is marked four times in
//! five. Seeded: no clock, no dependence on this machine. Every bound is
//! the nominal rate moved out by what chance allows over the trials
//! counted (`common::at_most_by_chance`), fixed before the run.

use crate::common;

use common::sides::{Boots, boot_noise_from, compare_sides, learned_from};
use mitbench::compare::{self, Verdict};
use mitbench::measure::harness::Settings;
use mitbench::synthetic::{Layout, Machine, Noise, Probe, Run, guest_probes};
use std::collections::BTreeMap;

const LAYOUT: Layout = Layout {
    forks: 3,
    passes: 15,
    run_s: 180.0,
};

/// Rows at one of two levels per process: a fork draw that lands all three
/// forks of one run on one level and the next run's on the other is a
/// 17-35% change nothing in two runs tells from a real one, so they count
/// towards the share of rows, not of comparisons (as in tests/suite/synthetic/speed.rs).
const TWO_LEVELS: [&str; 2] = ["indirect", "wrapper"];

fn misfit_machine(seed: u64) -> Machine {
    let slow_share = 0.2 + 0.6 * (seed % 7) as f64 / 6.0;
    Machine::new(Noise::misfit_guest(slow_share), seed)
}

fn runs(machine: &mut Machine, probes: &[Probe], count: usize) -> Vec<Run> {
    let settings = Settings::standard();
    (0..count)
        .map(|_| machine.run(probes, LAYOUT, &settings))
        .collect()
}

/// Old and new sides of `a_side` runs each on one machine, alternating,
/// after `history` earlier runs; the new side's probes `new`.
fn sides(
    seed: u64,
    history: usize,
    a_side: usize,
    new: &[Probe],
) -> (Vec<Run>, Vec<Run>, Vec<Run>) {
    let plain = guest_probes();
    let mut machine = misfit_machine(seed);
    let earlier = runs(&mut machine, &plain, history);
    let (mut old, mut newer) = (Vec::new(), Vec::new());
    for _ in 0..a_side {
        old.extend(runs(&mut machine, &plain, 1));
        newer.extend(runs(&mut machine, new, 1));
    }
    (earlier, old, newer)
}

/// What A/A comparisons marked and covered.
#[derive(Default)]
struct Tally {
    rows: usize,
    marked: usize,
    covered: usize,
    comparisons: usize,
    with_a_false_row: usize,
}

impl Tally {
    fn add(&mut self, rows: &[compare::RowChange]) {
        let mut false_row = false;
        for row in rows {
            self.rows += 1;
            let marked = row.verdict != Verdict::Same;
            self.marked += usize::from(marked);
            self.covered += usize::from(
                row.change_pct
                    .ci95
                    .is_some_and(|[lo, hi]| lo <= 0.0 && 0.0 <= hi),
            );
            false_row |= marked && !TWO_LEVELS.contains(&row.key.variant.as_str());
        }
        self.comparisons += 1;
        self.with_a_false_row += usize::from(false_row);
    }

    fn hold(&self, what: &str) {
        let share = |n: usize, of: usize| n as f64 / of as f64;
        let (marked, covered, any) = (
            share(self.marked, self.rows),
            share(self.covered, self.rows),
            share(self.with_a_false_row, self.comparisons),
        );
        // The rows of one comparison move together with its machine: a
        // rate over rows is held to what chance allows over comparisons.
        // Any false row at all: Benjamini-Hochberg where nothing moved
        // beyond the threshold marks one in at most 5% of comparisons.
        let most_marked = common::at_most_by_chance(0.05, self.comparisons);
        let most_any = common::at_most_by_chance(0.05, self.comparisons);
        let (least_covered, most_covered) = (
            common::at_least_by_chance(0.90, self.comparisons),
            common::at_most_by_chance(0.98, self.comparisons),
        );
        eprintln!(
            "{what}: marked {marked:.3} of {} rows (held to {most_marked:.3}); comparisons with a \
             false row {any:.3} of {} (held to {most_any:.3}); no change inside the interval in \
             {covered:.3} (held to {least_covered:.3}..{most_covered:.3})",
            self.rows, self.comparisons
        );
        assert!(marked <= most_marked, "{what}: rows marked {marked:.3}");
        assert!(
            any <= most_any,
            "{what}: comparisons with a false row {any:.3}"
        );
        assert!(
            (least_covered..=most_covered).contains(&covered),
            "{what}: covered {covered:.3}"
        );
    }
}

#[test]
fn a_to_a_on_a_misfit_guest_one_run_a_side_with_a_history() {
    let mut tally = Tally::default();
    for trial in 0..60 {
        let (earlier, old, new) = sides(9000 + trial, 5, 1, &guest_probes());
        tally.add(&compare_sides(
            &old,
            &new,
            true,
            &learned_from(&earlier),
            Boots::One,
        ));
    }
    tally.hold("A/A, one run a side, a history of five runs");
}

#[test]
fn a_to_a_on_a_misfit_guest_three_runs_a_side() {
    let mut tally = Tally::default();
    for trial in 0..40 {
        let (_, old, new) = sides(9100 + trial, 0, 3, &guest_probes());
        tally.add(&compare_sides(
            &old,
            &new,
            true,
            &BTreeMap::new(),
            Boots::One,
        ));
    }
    tally.hold("A/A, three alternating runs a side");
}

#[test]
fn across_boots_a_boots_own_variance_is_counted_from_the_history() {
    // Each machine is a boot: its rows sit 1% (sd) apart from another's.
    // Told of four earlier boots of two runs each, A/A across two boots
    // holds its rates; told of none, it says so and marks the boots'
    // difference as change far more often.
    let (mut told, mut untold) = (Tally::default(), Tally::default());
    let plain = guest_probes();
    for trial in 0..40 {
        let seed = 9200 + 10 * trial;
        let earlier: Vec<Vec<Run>> = (1..=4)
            .map(|b| runs(&mut misfit_machine(seed + b), &plain, 2))
            .collect();
        let boot_noise = boot_noise_from(&earlier);
        let old = runs(&mut misfit_machine(seed + 5), &plain, 1);
        let new = runs(&mut misfit_machine(seed + 6), &plain, 1);
        told.add(&compare_sides(
            &old,
            &new,
            true,
            &BTreeMap::new(),
            Boots::Two(&boot_noise),
        ));
        let unknown = compare_sides(
            &old,
            &new,
            true,
            &BTreeMap::new(),
            Boots::Two(&Default::default()),
        );
        assert!(
            unknown
                .iter()
                .all(|r| r.noise_from.contains(&compare::NoiseLevel::BootsUnknown))
        );
        untold.add(&unknown);
    }
    told.hold("A/A across two boots, a boot's variance from four earlier boots");
    let share = |t: &Tally| t.marked as f64 / t.rows as f64;
    eprintln!(
        "the same without the boots' variance: marked {:.3}",
        share(&untold)
    );
    assert!(share(&untold) > 2.0 * share(&told).max(0.05));
}

/// [`common::sides::printed_power`] over `trials` comparisons of `a_side`
/// runs a side, each after a history of `history` runs (the repetition
/// draws a fresh history too).
fn printed_power(trials: u64, history: usize, a_side: usize) -> (f64, usize) {
    common::sides::printed_power(9500..9500 + trials, |seed, new_probes| {
        let (earlier, old, new) = sides(seed, history, a_side, new_probes);
        compare_sides(&old, &new, true, &learned_from(&earlier), Boots::One)
    })
}

#[test]
fn on_a_misfit_guest_a_change_of_the_printed_detectable_size_is_marked_four_times_in_five() {
    for (trials, history, a_side) in [(120, 5, 1), (80, 0, 3)] {
        let (rate, tried) = printed_power(trials, history, a_side);
        let (least, most) = (
            common::at_least_by_chance(0.75, tried),
            common::at_most_by_chance(0.85, tried),
        );
        eprintln!(
            "{a_side} run(s) a side, a history of {history}: a change of the printed detectable \
             size marked in {rate:.3} of {tried} trials (held to {least:.3}..{most:.3})"
        );
        assert!(
            (least..=most).contains(&rate),
            "{a_side} run(s) a side: {rate:.3}"
        );
    }
}
