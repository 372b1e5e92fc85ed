//! The synthetic machine (`mitbench::synthetic`): a drift of a few percent
//! between back-to-back runs, figures at one of two levels per process, a
//! slow state in 20-80% of the rounds. What a run prints is held against
//! the truth and against the next run, over seeded trials: no clock, no
//! dependence on this machine.

use crate::common;

use mitbench::analysis::rounds::{Basis, RoundState};
use mitbench::analysis::spread::RunToRun;
use mitbench::compare::{self, Verdict};
use mitbench::measure::harness::Settings;
use mitbench::store::results::Record;
use mitbench::synthetic::{Bursts, Layout, Machine, Noise, guest_probes};

const TRIALS: u64 = 200;
const LAYOUT: Layout = Layout {
    forks: 3,
    passes: 15,
    run_s: 180.0,
};

/// Every trial's back-to-back pair of runs on a machine of its own, the
/// slow state's share going from 20% to 80% over the trials.
fn pairs(layout: Layout) -> Vec<(mitbench::synthetic::Run, mitbench::synthetic::Run)> {
    let probes = guest_probes();
    let settings = Settings::standard();
    (0..TRIALS)
        .map(|trial| {
            let slow_share = 0.2 + 0.6 * (trial % 7) as f64 / 6.0;
            let mut machine = Machine::new(Noise::cloud_guest(slow_share), trial);
            let first = machine.run(&probes, layout, &settings);
            let next = machine.run(&probes, layout, &settings);
            (first, next)
        })
        .collect()
}

/// The middle of `values`, sorted in place.
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[test]
fn the_printed_interval_covers_the_next_run() {
    let (mut covered, mut rows) = (0usize, 0usize);
    let mut misses: std::collections::BTreeMap<String, usize> = Default::default();
    // Per probe: the printed half-widths and how far the next run moved.
    let mut halves: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
    let mut moves: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
    for (first, next) in pairs(LAYOUT) {
        for r in &first.records {
            let Some(cost) = &r.cost else { continue };
            let Some(n) = next
                .records
                .iter()
                .find(|n| n.id == r.id && n.variant == r.variant)
                .and_then(|n| n.cost.as_ref())
            else {
                continue;
            };
            // A row without an interval covers nothing.
            rows += 1;
            let (Some([lo, hi]), Some(half)) =
                (cost.raw_ticks().ci95, cost.raw_ticks().half_width_pct())
            else {
                *misses
                    .entry(format!("{} {} (no interval)", r.id, r.variant))
                    .or_default() += 1;
                continue;
            };
            halves.entry(r.id.clone()).or_default().push(half);
            moves
                .entry(r.id.clone())
                .or_default()
                .push((n.ticks() / cost.ticks() - 1.0).abs() * 100.0);
            if lo <= n.ticks() && n.ticks() <= hi {
                covered += 1;
            } else {
                *misses.entry(format!("{} {}", r.id, r.variant)).or_default() += 1;
            }
        }
    }
    for (probe, half) in &mut halves {
        eprintln!(
            "{probe}: median half-width {:.2}%, next run moved {:.2}% (median)",
            median(half),
            median(moves.get_mut(probe).unwrap())
        );
    }
    let mut all: Vec<f64> = halves.into_values().flatten().collect();
    let rate = covered as f64 / rows as f64;
    eprintln!(
        "coverage {rate:.3} of {rows}; median half-width {:.2}%; misses {misses:?}",
        median(&mut all)
    );
    assert!(
        (0.80..=0.98).contains(&rate),
        "coverage {rate:.3} of {rows} rows; misses {misses:?}"
    );
}

#[test]
fn the_headline_stays_within_one_percent_of_the_truth() {
    // The error of every row with a quiet-state figure, in percent; rows
    // with no quiet round at all must say so.
    let mut errors: Vec<f64> = Vec::new();
    let (mut unflagged, mut no_quiet) = (Vec::new(), 0);
    for (first, _) in pairs(LAYOUT) {
        for r in &first.records {
            let Some(cost) = &r.cost else { continue };
            let truth = first.truth[&(r.id.clone(), r.variant.clone())];
            let error = (cost.ticks() / truth - 1.0).abs() * 100.0;
            // A figure far from the truth must be one the row gives away:
            // no quiet round, too few quiet rounds to stand on (the table
            // prints quiet/all rounds), quiet rounds in only some forks (a
            // note), or an interval that holds the truth.
            let forks_run: std::collections::BTreeSet<usize> =
                r.rounds.each.iter().map(|round| round.fork).collect();
            let said = cost.estimator == Basis::NoQuietRound
                || cost.rounds_used < 5
                || cost.forks < forks_run.len()
                || cost
                    .raw_ticks()
                    .ci95
                    .is_some_and(|[lo, hi]| lo <= truth && truth <= hi);
            if error > 5.0 && !said {
                unflagged.push(format!(
                    "{} {} {error:.1}% ({} quiet rounds)",
                    r.id, r.variant, cost.rounds_used
                ));
            }
            if cost.estimator == Basis::NoQuietRound {
                no_quiet += 1;
            } else {
                errors.push(error);
            }
        }
    }
    errors.sort_by(f64::total_cmp);
    let q = |p: f64| errors[((errors.len() - 1) as f64 * p) as usize];
    eprintln!(
        "headline error over {} rows with a quiet-state figure: median {:.3}%, p90 {:.3}%, p99 {:.3}%; {no_quiet} rows without a quiet round, each saying so",
        errors.len(),
        q(0.5),
        q(0.9),
        q(0.99)
    );
    assert!(
        unflagged.is_empty(),
        "far from the truth, unsaid: {unflagged:?}"
    );
    // The tail is runs whose quiet speed moved within the run by as much as
    // the slow state's step, where the run-wide state split misreads a
    // fast fork's quiet rounds as slow and leaves that fork out.
    assert!(q(0.5) < 0.5, "median error {:.2}%", q(0.5));
    assert!(q(0.9) < 1.0, "90th percentile error {:.2}%", q(0.9));
}

/// Bursts inside rounds at the busiest stored host's rate: on the Zen 4
/// guest of 2026-11-26, 4.2% of the rounds its canaries called quiet (479
/// of 11,509) stood above their row as an interrupted one does; each lifts
/// its round's median 3.09x, as the burst in Zen 2's getpid round of
/// 2026-12-01 did (605.2 ticks, its fastest sample 196.5). Fixed before
/// the first run of the test.
const BURSTS: Bursts = Bursts {
    share: 0.042,
    lift: 3.09,
};

/// A quick run's layout: two forks of five passes, where a fork may hold
/// one or two quiet rounds and one lifted round of them carried it.
const QUICK: Layout = Layout {
    forks: 2,
    passes: 5,
    run_s: 60.0,
};

#[test]
fn a_burst_inside_a_round_between_quiet_canaries_moves_no_headline() {
    // Each trial's machine runs twice from one seed, with bursts and
    // without (the bursts draw from a stream of their own, so every other
    // draw is the same): a row whose headline the bursts move by more than
    // 2% was carried by a lifted round read as a quiet one, unless the row
    // says what it stands on instead (no quiet round left, or fewer forks
    // than it ran in: a fork whose quiet rounds were all lifted). Bound
    // fixed before the run: at most one such row in 200.
    let probes = guest_probes();
    let settings = Settings::quick();
    let (mut rows, mut said, mut moved) = (0usize, 0usize, Vec::new());
    for trial in 0..TRIALS {
        let slow_share = 0.2 + 0.6 * (trial % 7) as f64 / 6.0;
        let run = |bursts| {
            let noise = Noise {
                bursts,
                ..Noise::cloud_guest(slow_share)
            };
            Machine::new(noise, trial).run(&probes, QUICK, &settings)
        };
        let (calm, burst) = (run(None), run(Some(BURSTS)));
        for (a, b) in calm.records.iter().zip(&burst.records) {
            let (Some(a_cost), Some(b_cost)) = (&a.cost, &b.cost) else {
                continue;
            };
            let forks_run: std::collections::BTreeSet<usize> =
                b.rounds.each.iter().map(|round| round.fork).collect();
            if b_cost.estimator == Basis::NoQuietRound || b_cost.forks < forks_run.len() {
                said += 1;
                continue;
            }
            rows += 1;
            let change = (b_cost.ticks() / a_cost.ticks() - 1.0).abs() * 100.0;
            if change > 2.0 {
                moved.push(format!(
                    "trial {trial} {} {} {change:.0}% {:?}/{:?} used {}/{} of {}",
                    a.id,
                    a.variant,
                    a_cost.estimator,
                    b_cost.estimator,
                    a_cost.rounds_used,
                    b_cost.rounds_used,
                    b.rounds.each.len()
                ));
            }
        }
    }
    eprintln!(
        "{} of {rows} headlines moved by bursts by more than 2%; {said} rows said what they stand on",
        moved.len()
    );
    assert!(
        moved.len() as f64 <= rows as f64 / 200.0,
        "{} of {rows} headlines moved by more than 2%: {:?}",
        moved.len(),
        &moved[..moved.len().min(10)]
    );
}

/// Bursts inside most rounds, as on the busy Zen 3 guest of 2026-12-03:
/// in the first of five quick runs, five of the thread churn's six quiet
/// rounds stood 29-57% above their fastest samples, where its rounds of
/// the other runs stood 2-6%. Fixed before the first run of the test.
const MOST_ROUNDS_BURST: Bursts = Bursts {
    share: 0.6,
    lift: 1.3,
};

#[test]
fn where_bursts_lift_most_rounds_the_rows_usual_gap_finds_them() {
    // A row's own rounds cannot tell a burst that lifted most of them;
    // the history's earlier runs of the machine can (`UsualGap`, from as
    // many runs without bursts as a run reads). Each trial's machine runs
    // from one seed with bursts and without, so a round the bursts lifted
    // is known: it reads 1.3x its twin. Of the rounds the canaries call
    // quiet, in rows the earlier runs gave a usual gap, bounds fixed before
    // the run: at least 99% of the lifted ones are interrupted (a lift of
    // 30% against a margin of twice the 3% band), at most 1% of the others
    // (the margin is four spreads of the gap). Read without the history,
    // the same rounds are counted for comparison.
    let probes = guest_probes();
    let settings = Settings::quick();
    // [lifted, lifted and marked, not lifted, not lifted and marked], with
    // the history's usual gaps and without.
    let mut tally = [[0usize; 4]; 2];
    let mut no_usual_gap = 0;
    for trial in 0..TRIALS / 4 {
        let slow_share = 0.2 + 0.6 * (trial % 7) as f64 / 6.0;
        let machine = |bursts, seed| {
            let noise = Noise {
                bursts,
                ..Noise::cloud_guest(slow_share)
            };
            Machine::new(noise, seed)
        };
        let earlier: Vec<_> = (1..=mitbench::store::history::USUAL_GAP_RUNS as u64)
            .map(|k| machine(None, 5000 + 10 * trial + k).run(&probes, QUICK, &settings))
            .collect();
        let gaps = usual_gaps(&earlier);
        let facts = mitbench::store::results::RunFacts {
            usual_gaps: gaps.clone(),
            ..Default::default()
        };
        let calm = machine(None, trial).run(&probes, QUICK, &settings);
        let held =
            machine(Some(MOST_ROUNDS_BURST), trial).run_with(&probes, QUICK, &settings, facts);
        let unheld = machine(Some(MOST_ROUNDS_BURST), trial).run(&probes, QUICK, &settings);
        for (k, burst) in [&held, &unheld].into_iter().enumerate() {
            for (a, b) in calm.records.iter().zip(&burst.records) {
                if !gaps.contains_key(&(a.id.clone(), a.variant.clone())) {
                    no_usual_gap += usize::from(k == 0);
                    continue;
                }
                for (calm_round, round) in a.rounds.each.iter().zip(&b.rounds.each) {
                    if calm_round.state != RoundState::Quiet {
                        continue;
                    }
                    let lifted = round.figure.value > 1.2 * calm_round.figure.value;
                    let marked = round.state == RoundState::Interrupted;
                    let at = if lifted { 0 } else { 2 };
                    tally[k][at] += 1;
                    tally[k][at + 1] += usize::from(marked);
                }
            }
        }
    }
    let [
        [lifted, found, other, false_marks],
        [lifted_unheld, found_unheld, ..],
    ] = tally;
    eprintln!(
        "{found} of {lifted} lifted quiet rounds interrupted, {false_marks} of {other} others; \
         without the history's usual gaps {found_unheld} of {lifted_unheld}; {no_usual_gap} rows \
         left out, too few quiet rounds in the earlier runs for a usual gap"
    );
    assert!(lifted > 100 && other > 100, "{lifted} lifted, {other} not");
    assert!(
        found as f64 >= 0.99 * lifted as f64,
        "{found} of {lifted} lifted quiet rounds interrupted"
    );
    assert!(
        false_marks as f64 <= 0.01 * other as f64,
        "{false_marks} of {other} quiet rounds interrupted without a burst"
    );
}

/// Each row's usual gap over the quiet rounds of `runs`, as the history
/// reads it from stored runs (`History::quiet_rounds`).
fn usual_gaps(runs: &[mitbench::synthetic::Run]) -> mitbench::analysis::rounds::UsualGaps {
    use mitbench::analysis::rounds::UsualGap;
    let mut rounds = mitbench::store::history::QuietRounds::new();
    for r in runs.iter().flat_map(|run| &run.records) {
        for round in r
            .rounds
            .each
            .iter()
            .filter(|x| x.state == RoundState::Quiet)
        {
            rounds
                .entry((r.id.clone(), r.variant.clone()))
                .or_default()
                .push(mitbench::analysis::rounds::RoundReading {
                    median: round.figure.value,
                    fastest: round.min_ticks,
                    canaries_quiet: true,
                    fork: round.fork,
                });
        }
    }
    UsualGap::of_rows(rounds)
}

/// The rows of a synthetic run by (probe, variant).
fn by_row(run: &mitbench::synthetic::Run) -> Rows<'_> {
    run.records
        .iter()
        .filter(|r| r.cost.is_some())
        .map(|r| ((r.id.clone(), r.variant.clone()), r))
        .collect()
}

type Rows<'a> = std::collections::BTreeMap<(String, String), &'a Record>;

/// Each run's record of `key`, where every run has one.
fn side<'a>(runs: &[Rows<'a>], key: &(String, String)) -> Option<Vec<&'a Record>> {
    runs.iter().map(|r| r.get(key).copied()).collect()
}

/// Verdicts over `trials` seeded trials, each `a` runs then `b` runs of a
/// machine of its own, the second side's `synthetic/syscall` rows dearer by
/// `toll` (1.0: none), the sides run one after the other or alternating.
fn verdicts(trials: u64, a: usize, b: usize, toll: f64, alternate: bool) -> Verdicts {
    verdicts_on(Noise::cloud_guest, 0, trials, a, b, toll, alternate)
}

/// [`verdicts`] after `history` runs the comparison learns each row's
/// noise from, on a machine whose noise `noise` makes from the trial's
/// slow share.
fn verdicts_on(
    noise: fn(f64) -> Noise,
    history: usize,
    trials: u64,
    a: usize,
    b: usize,
    toll: f64,
    alternate: bool,
) -> Verdicts {
    let settings = Settings::standard();
    let plain = guest_probes();
    let tolled = common::sides::syscall_rows_times(toll);
    let (mut hit, mut tolled_rows, mut false_alarms, mut other_rows) = (0, 0, 0, 0);
    let (mut promised, mut kept, mut claimed_blind) = (0, 0, 0);
    for trial in 0..trials {
        let slow_share = 0.2 + 0.6 * (trial % 7) as f64 / 6.0;
        let mut machine = Machine::new(noise(slow_share), 1000 + trial);
        let earlier: Vec<_> = (0..history)
            .map(|_| machine.run(&plain, LAYOUT, &settings))
            .collect();
        let mut figures: std::collections::BTreeMap<(String, String), Vec<f64>> =
            Default::default();
        for run in &earlier {
            // As the history keeps them: a figure the slow state took
            // (no quiet round) is not one of the row's (`row_figures`).
            for (key, record) in by_row(run).into_iter().filter(|(_, r)| !r.slow_state()) {
                let ticks = record.cost.as_ref().map(|c| c.ticks()).unwrap_or_default();
                figures.entry(key).or_default().push(ticks);
            }
        }
        let learned = mitbench::analysis::noise::learned(common::sides::one_stretch(figures));
        let (mut old, mut new) = (Vec::new(), Vec::new());
        if alternate {
            for _ in 0..a.max(b) {
                old.push(machine.run(&plain, LAYOUT, &settings));
                new.push(machine.run(&tolled, LAYOUT, &settings));
            }
        } else {
            old.extend((0..a).map(|_| machine.run(&plain, LAYOUT, &settings)));
            new.extend((0..b).map(|_| machine.run(&tolled, LAYOUT, &settings)));
        }
        let times = |runs: &[mitbench::synthetic::Run]| -> Vec<compare::RunTime> {
            runs.iter().filter_map(|r| r.time).collect()
        };
        let (old_times, new_times) = (times(&old), times(&new));
        let (old, new): (Vec<_>, Vec<_>) = (
            old.iter().map(by_row).collect(),
            new.iter().map(by_row).collect(),
        );
        for (key, first) in &old[0] {
            let (Some(o), Some(n)) = (side(&old, key), side(&new, key)) else {
                continue;
            };
            let mut row = compare::row_change(
                &o,
                &n,
                compare::DEFAULT_THRESHOLD_PCT,
                compare::OutsideEvidence::history(learned.get(key).copied()),
                [0, 0],
                [&old_times, &new_times],
                [&[], &[]],
            );
            // Each row held alone: its own 5% test, and its power for it.
            compare::hold_to_false_discovery_rate([&mut row], compare::DEFAULT_THRESHOLD_PCT);
            let marked = row.verdict != Verdict::Same;
            claimed_blind +=
                usize::from(!row.power_is_known() && row.smallest_detectable_pct.is_some());
            if first.id == "synthetic/syscall" {
                tolled_rows += 1;
                let seen = toll > 1.0 && row.verdict == Verdict::Slower || toll == 1.0 && marked;
                hit += usize::from(seen);
                // The rows whose printed detectable change the toll passes
                // are promised a mark four times in five.
                if toll > 1.0
                    && row
                        .smallest_detectable_pct
                        .is_some_and(|d| d <= (toll - 1.0) * 100.0)
                {
                    promised += 1;
                    kept += usize::from(seen);
                }
            } else {
                other_rows += 1;
                false_alarms += usize::from(marked);
            }
        }
    }
    Verdicts {
        seen: hit as f64 / tolled_rows as f64,
        trials: trials as usize,
        promised,
        kept,
        claimed_blind,
        tolled_rows,
        alarms: false_alarms as f64 / other_rows as f64,
        other_rows,
    }
}

/// Of the tolled rows, the share marked (slower, or anything with no
/// toll); of the others, the share marked.
struct Verdicts {
    seen: f64,
    /// The comparisons: the rows of one move together with its machine's
    /// walk, so a rate over rows is held to what chance allows over the
    /// comparisons, not over rows counted as independent.
    trials: usize,
    /// Tolled rows whose printed detectable change the toll reaches, and
    /// how many of them were marked slower.
    promised: usize,
    kept: usize,
    /// Rows that claimed a detectable change though how far a whole run
    /// moves was not counted (`RunLevelUnknown`).
    claimed_blind: usize,
    tolled_rows: usize,
    alarms: f64,
    other_rows: usize,
}

#[test]
fn a_to_a_comparisons_mark_at_most_five_percent_of_rows() {
    let v = verdicts(TRIALS, 1, 1, 1.0, false);
    let rows = v.tolled_rows + v.other_rows;
    let rate = (v.seen * v.tolled_rows as f64 + v.alarms * v.other_rows as f64) / rows as f64;
    let most = common::at_most_by_chance(0.05, v.trials);
    eprintln!("A/A: {rate:.3} of {rows} rows marked (held to {most:.3})");
    assert!(rate <= most, "A/A false alarms {rate:.3}");
}

impl Verdicts {
    /// Says what was seen, then holds the tolled rows to `nominal` (where
    /// the model gives a rate, fixed before the run) less what chance
    /// allows over them, the rows promised a mark by their printed detectable
    /// change to 80% likewise, and the others' false alarms to what chance
    /// allows a 5% rate.
    fn hold(&self, what: &str, nominal: Option<f64>) {
        let most = common::at_most_by_chance(0.05, self.trials);
        let least = nominal.map_or(0.0, |n| common::at_least_by_chance(n, self.trials));
        let kept = self.kept as f64 / self.promised.max(1) as f64;
        let least_kept = common::at_least_by_chance(0.80, self.promised.min(self.trials));
        eprintln!(
            "{what}: tolled rows marked in {:.3} of {} (held to {least:.3}); of the {} whose \
             printed detectable change the toll reaches, {kept:.3} (held to {least_kept:.3}); \
             other rows marked {:.3} of {} (held to {most:.3})",
            self.seen, self.tolled_rows, self.promised, self.alarms, self.other_rows
        );
        assert!(self.seen >= least, "{what}: seen in {:.3}", self.seen);
        // Where no model gives the rate, the toll was chosen beyond most
        // rows' detectable change: a test of the promise needs rows.
        assert!(
            nominal.is_some() || 2 * self.promised >= self.tolled_rows,
            "{what}: only {} of {} rows promised",
            self.promised,
            self.tolled_rows
        );
        assert!(kept >= least_kept, "{what}: promised rows marked {kept:.3}");
        assert!(
            self.alarms <= most,
            "{what}: others marked {:.3}",
            self.alarms
        );
    }

    /// With no toll: every row's marks are false alarms, the tolled rows'
    /// too, each held to what chance allows a 5% rate.
    fn hold_no_toll(&self, what: &str) {
        let most = common::at_most_by_chance(0.05, self.trials);
        eprintln!(
            "{what}: rows marked {:.3} of {} and {:.3} of {} (held to {most:.3})",
            self.seen, self.tolled_rows, self.alarms, self.other_rows,
        );
        assert!(self.seen <= most, "{what}: {:.3}", self.seen);
        assert!(self.alarms <= most, "{what}: {:.3}", self.alarms);
    }
}

#[test]
fn a_ten_percent_toll_is_seen_in_one_run_a_side_and_no_power_is_claimed() {
    // Two of the seven other rows sit at one of two levels per process:
    // their noise is read from both runs' forks together, so three forks
    // that land on one level by chance do not make a needle of it. One run
    // a side and no history: where how far a whole run moves is unknown,
    // no row claims a detectable change (a live repetition found 100%
    // where 80% was printed); the few rows read on their printed next-run
    // intervals alone (one fork) hold theirs, and the others' false alarms
    // stay within 5%.
    let v = verdicts(TRIALS, 1, 1, 1.10, false);
    let most = common::at_most_by_chance(0.05, v.trials);
    let kept = v.kept as f64 / v.promised.max(1) as f64;
    let least_kept = common::at_least_by_chance(0.80, v.promised.min(v.trials));
    eprintln!(
        "10% toll, one run a side: tolled rows marked in {:.3} of {}; {} promised, {kept:.3} \
         kept (held to {least_kept:.3}); other rows marked {:.3} of {} (held to {most:.3})",
        v.seen, v.tolled_rows, v.promised, v.alarms, v.other_rows
    );
    assert_eq!(
        v.claimed_blind, 0,
        "a detectable change claimed without a run level"
    );
    assert!(kept >= least_kept, "promised rows marked {kept:.3}");
    assert!(v.alarms <= most, "others marked {:.3}", v.alarms);
}

/// The share of comparisons in which a `toll` passes the 1% threshold by
/// the one-sided 95% point of a normal noise of `sd` (logs): what a row
/// held alone is marked in, where that noise is all there is.
fn marked_past_the_threshold(toll: f64, sd: f64) -> f64 {
    let margin = (toll.ln() - (compare::DEFAULT_THRESHOLD_PCT / 100.0).ln_1p()) / sd;
    let normal_upper = |x: f64| mitbench::analysis::stats::t_upper_p(x, 1e9);
    normal_upper(normal_upper_point(0.05) - margin)
}

/// The normal's one-sided point with upper tail `p`.
fn normal_upper_point(p: f64) -> f64 {
    mitbench::analysis::stats::t_point(2.0 * p, 1e9)
}

#[test]
fn a_three_percent_toll_is_seen_with_alternating_runs_as_far_as_the_walk_allows() {
    // Three alternating runs a side cannot see it every time here, by any
    // test: the quiet speed's walk between a run and the next (3 min
    // apart, a mean-reverting walk of 1%/sqrt(min) over 10 min) moves the
    // log figure by sd sqrt(2 * 0.0005 * (1 - exp(-0.3))) = 1.61%, so the
    // mean of n alternating differences carries 1.61%/sqrt(n) of walk
    // alone. With the walk known exactly, the verdict marks a 3% toll as
    // often as it passes the 1% threshold by 1.645 of those: the nominal
    // rate, the tests' own noise only lowering it.
    let walk_sd = |n: f64| (2.0 * 0.0005 * (1.0 - (-0.3f64).exp()) / n).sqrt();
    for (trials, runs) in [(TRIALS / 2, 3), (TRIALS / 4, 6)] {
        let nominal = marked_past_the_threshold(1.03, walk_sd(runs as f64));
        verdicts(trials, runs, runs, 1.03, true).hold(
            &format!("3% toll, {runs} alternating runs a side (nominal {nominal:.3})"),
            Some(nominal),
        );
    }
}

#[test]
fn sets_run_back_to_back_do_not_pass_the_machines_drift_for_a_toll() {
    // Three runs, then three more: the quiet speed's walk between the two
    // sets is as large as the toll, and the verdict must not call the walk
    // a change: false alarms stay near the A/A rate (no toll: every row of
    // either kind counts as marked).
    verdicts(TRIALS / 2, 3, 3, 1.0, false).hold_no_toll("A/A, three runs a side back to back");
}

#[test]
fn a_history_of_the_machine_keeps_false_alarms_down_and_sees_a_ten_percent_toll() {
    // Eight earlier runs of the same machine: the history's spread of each
    // row stands beside what the compared runs say of themselves. The
    // rows the toll does not touch are the A/A comparison. A toll above
    // the change the comparison prints as detectable is marked in at
    // least 80% of comparisons, less what chance takes over the trials.
    verdicts_on(Noise::cloud_guest, 8, TRIALS / 2, 1, 1, 1.10, false)
        .hold("10% toll, one run a side, a history of eight runs", None);
}

/// The many-levels host at a quiet share from 20% to 80% over the trials
/// (a slow share of 80% down to 20%).
fn many_levels(slow_share: f64) -> Noise {
    Noise::many_levels_guest(1.0 - slow_share)
}

#[test]
fn on_a_host_with_many_slow_levels_the_printed_interval_holds_the_true_quiet_figure() {
    // The targets (issue 52): the truth inside the printed interval in 85%
    // to 98% of rows, each bound moved out as far as chance may take that
    // rate over the rows counted, so the test fails on the estimator and
    // not on the trials' own sampling; at a median
    // half-width of at most 3% (the default run's target); the headline
    // as close to the truth as on the two-state host. A band that takes
    // the +4..+12% levels for quiet covers as often, at 5.6%.
    let (probes, settings) = (guest_probes(), Settings::standard());
    let (mut covered, mut rows, mut halves) = (0usize, 0usize, Vec::new());
    let mut errors = Vec::new();
    let mut misses: std::collections::BTreeMap<String, usize> = Default::default();
    for trial in 0..TRIALS {
        let slow_share = 0.2 + 0.6 * (trial % 7) as f64 / 6.0;
        let run =
            Machine::new(many_levels(slow_share), 5000 + trial).run(&probes, LAYOUT, &settings);
        for r in &run.records {
            let Some(cost) = &r.cost else { continue };
            let truth = run.truth[&(r.id.clone(), r.variant.clone())];
            rows += 1;
            if cost.estimator != Basis::NoQuietRound {
                errors.push((cost.ticks() / truth - 1.0).abs() * 100.0);
            }
            let shown = cost.shown_ticks();
            let (Some([lo, hi]), Some(half)) = (shown.ci95, shown.half_width_pct()) else {
                *misses
                    .entry(format!("{} {} (no interval)", r.id, r.variant))
                    .or_default() += 1;
                continue;
            };
            halves.push(half);
            if lo <= truth && truth <= hi {
                covered += 1;
            } else {
                *misses.entry(format!("{} {}", r.id, r.variant)).or_default() += 1;
            }
        }
    }
    let rate = covered as f64 / rows as f64;
    let (least, most) = (
        common::at_least_by_chance(0.85, rows),
        common::at_most_by_chance(0.98, rows),
    );
    let half = median(&mut halves);
    errors.sort_by(f64::total_cmp);
    let error_at = |p: f64| errors[((errors.len() - 1) as f64 * p) as usize];
    eprintln!(
        "many levels: truth inside in {rate:.3} of {rows} rows (held to {least:.3}..{most:.3}); \
         median half-width {half:.2}%; headline error median {:.2}%, p90 {:.2}%; misses {misses:?}",
        error_at(0.5),
        error_at(0.9),
    );
    assert!(
        (least..=most).contains(&rate),
        "coverage {rate:.3} of {rows}; misses {misses:?}"
    );
    assert!(half <= 3.0, "median half-width {half:.2}%");
    assert!(error_at(0.5) < 0.5, "median error {:.2}%", error_at(0.5));
    assert!(
        error_at(0.9) < 1.0,
        "90th percentile error {:.2}%",
        error_at(0.9)
    );
}

#[test]
fn on_a_host_with_many_slow_levels_a_to_a_comparisons_mark_at_most_five_percent_of_rows() {
    let v = verdicts_on(many_levels, 0, TRIALS, 1, 1, 1.0, false);
    let rows = v.tolled_rows + v.other_rows;
    let marked = v.seen * v.tolled_rows as f64 + v.alarms * v.other_rows as f64;
    let rate = marked / rows as f64;
    let most = common::at_most_by_chance(0.05, v.trials);
    eprintln!("many levels, A/A: {rate:.3} of {rows} rows marked (held to {most:.3})");
    assert!(rate <= most, "A/A false alarms {rate:.3}");
}

/// `old` against `new` as `mitbench compare` reads two sets: every row's
/// change, then the rows held to the false discovery rate over all.
fn compared(
    old: &[mitbench::synthetic::Run],
    new: &[mitbench::synthetic::Run],
) -> Vec<compare::RowChange> {
    let times = |runs: &[mitbench::synthetic::Run]| -> Vec<compare::RunTime> {
        runs.iter().filter_map(|r| r.time).collect()
    };
    let (old_times, new_times) = (times(old), times(new));
    let (old, new): (Vec<_>, Vec<_>) = (
        old.iter().map(by_row).collect(),
        new.iter().map(by_row).collect(),
    );
    let mut rows: Vec<compare::RowChange> = old[0]
        .keys()
        .filter_map(|key| {
            Some(compare::row_change(
                &side(&old, key)?,
                &side(&new, key)?,
                compare::DEFAULT_THRESHOLD_PCT,
                compare::OutsideEvidence::default(),
                [0, 0],
                [&old_times, &new_times],
                [&[], &[]],
            ))
        })
        .collect();
    compare::hold_to_false_discovery_rate(&mut rows, compare::DEFAULT_THRESHOLD_PCT);
    rows
}

/// [`common::sides::printed_power`] over `trials` comparisons of `runs`
/// runs a side on the cloud guest.
fn printed_power(trials: u64, runs: usize) -> (f64, usize) {
    let settings = Settings::standard();
    let plain = guest_probes();
    common::sides::printed_power(7000..7000 + trials, |seed, new_probes| {
        let slow_share = 0.2 + 0.6 * (seed % 7) as f64 / 6.0;
        let mut machine = Machine::new(Noise::cloud_guest(slow_share), seed);
        let old: Vec<_> = (0..runs)
            .map(|_| machine.run(&plain, LAYOUT, &settings))
            .collect();
        let new: Vec<_> = (0..runs)
            .map(|_| machine.run(new_probes, LAYOUT, &settings))
            .collect();
        compared(&old, &new)
    })
}

#[test]
fn a_change_of_the_printed_detectable_size_is_marked_four_times_in_five() {
    // "detectable" claims 80% power for the verdict as applied (threshold
    // and false discovery control included), for one changed row; the
    // target is 75-85% of trials (issue 53), each bound moved out as far as
    // chance may take it over the trials counted.
    // One run a side claims none where the run level is unknown
    // (`a_ten_percent_toll_is_seen_in_one_run_a_side_and_no_power_is_claimed`).
    {
        let (trials, runs) = (TRIALS / 2, 3);
        let (rate, tried) = printed_power(trials, runs);
        // Three runs a side see how far a run moves (their spread, or the
        // drift that stands in for it): every row has a detectable size.
        assert_eq!(tried as u64, trials, "rows with a detectable size");
        let (least, most) = (
            common::at_least_by_chance(0.75, tried),
            common::at_most_by_chance(0.85, tried),
        );
        eprintln!(
            "{runs} run(s) a side: a change of the printed detectable size marked in {rate:.3} \
             of {tried} trials (held to {least:.3}..{most:.3})"
        );
        assert!(
            (least..=most).contains(&rate),
            "{runs} run(s) a side: marked in {rate:.3} of {tried}"
        );
    }
}

/// Runs of a host in its slow levels (+4% to +30%) from start to end, each
/// analysed knowing the quiet level a history of the machine holds and
/// alone: (rows, rows that say they are a slow level's figure, rows whose
/// printed interval holds the truth, the same alone).
fn held_in_slow_levels(noise: Noise) -> (usize, usize, usize, usize) {
    let (probes, settings) = (guest_probes(), Settings::standard());
    let (mut rows, mut said, mut covered, mut covered_alone) = (0, 0, 0, 0);
    // As a quiet run of this machine measures it: the canary's own noise
    // (0.4%, which only adds) well inside the least band.
    let known = Some(mitbench::analysis::states::QuietLevel {
        canary: mitbench::synthetic::CANARY_TICKS,
        band: mitbench::analysis::states::MIN_QUIET_BAND,
    });
    let inside = |r: &Record, truth: f64| {
        r.cost
            .as_ref()
            .and_then(|c| c.shown_ticks().ci95)
            .is_some_and(|[lo, hi]| lo <= truth && truth <= hi)
    };
    for trial in 0..TRIALS / 4 {
        let held = || Machine::new(noise.clone(), 9000 + trial);
        let facts = mitbench::store::results::RunFacts {
            known_quiet: known,
            ..Default::default()
        };
        let run = held().run_with(&probes, LAYOUT, &settings, facts);
        let alone = held().run(&probes, LAYOUT, &settings);
        for (r, a) in run.records.iter().zip(&alone.records) {
            let truth = run.truth[&(r.id.clone(), r.variant.clone())];
            rows += 1;
            said += usize::from(
                r.cost
                    .as_ref()
                    .is_some_and(|c| c.estimator == Basis::NoQuietRound),
            );
            covered += usize::from(inside(r, truth));
            covered_alone += usize::from(inside(a, truth));
        }
    }
    (rows, said, covered, covered_alone)
}

/// The many-levels host in its slow levels all the time, no canary reading
/// at the quiet level (a misread one would be a visit to it).
fn never_quiet() -> Noise {
    Noise {
        canary_misread: 0.0,
        ..Noise::many_levels_guest(0.0)
    }
}

#[test]
fn a_run_held_in_slow_levels_says_so() {
    // With the quiet speed held still the known level is this run's own,
    // and a run that never reached it must say so on every row. (Where the
    // quiet speed drifts a few percent fast, the +4% level comes within the
    // known band, and the run rightly reads it as quiet: that case is the
    // next test's.)
    let (rows, said, _, _) = held_in_slow_levels(Noise {
        drift_per_minute: 0.0,
        ..never_quiet()
    });
    eprintln!("held in slow levels, the quiet speed still: {said} of {rows} rows say so");
    assert_eq!(said, rows, "every row is a slow level's figure");
}

#[test]
fn a_run_held_in_slow_levels_prints_intervals_that_reach_the_quiet_figure() {
    // Alone, the run takes its lowest slow level for quiet and its
    // intervals hold the truth in under half of the rows; knowing the
    // quiet level a history of the machine holds (the quiet speed drifting
    // as it does between runs), they reach down to the truth: in 85-98% of
    // rows, each bound moved out as far as chance may take it.
    let (rows, said, covered, covered_alone) = held_in_slow_levels(never_quiet());
    let rate = covered as f64 / rows as f64;
    let (least, most) = (
        common::at_least_by_chance(0.85, rows),
        common::at_most_by_chance(0.98, rows),
    );
    eprintln!(
        "held in slow levels: {said} of {rows} rows say so; truth inside in {rate:.3} \
         (held to {least:.3}..{most:.3}); alone, {:.3}",
        covered_alone as f64 / rows as f64
    );
    assert!((least..=most).contains(&rate), "coverage {rate:.3}");
}

/// Each row's figure over `runs` quick runs of `machine`, keyed and laid
/// out as `History::row_figures` gives them (one stretch: the synthetic
/// machine's quiet level does not move between runs).
fn stored_figures(
    machine: &mut Machine,
    probes: &[mitbench::synthetic::Probe],
    settings: &Settings,
    runs: usize,
) -> std::collections::BTreeMap<(String, String), Vec<Vec<f64>>> {
    let mut history: std::collections::BTreeMap<(String, String), Vec<Vec<f64>>> =
        Default::default();
    for _ in 0..runs {
        for r in machine.run(probes, QUICK, settings).records {
            let figure = r.cost_ticks().expect("a figure");
            history
                .entry((r.id, r.variant))
                .or_insert_with(|| vec![Vec::new()])[0]
                .push(figure);
        }
    }
    history
}

/// Whether this run's shown interval holds the next run's shown figure.
fn holds(this: &Record, next: &Record) -> bool {
    let (Some(a), Some(b)) = (this.shown_ticks(), next.shown_ticks()) else {
        return false;
    };
    a.ci95
        .is_some_and(|[lo, hi]| lo <= b.value && b.value <= hi)
}

#[test]
fn runs_whose_rounds_agree_to_the_tick_hold_the_next_run_with_the_historys_floor() {
    // A host whose rounds agree to 0.05% and whose every row moves by 1%
    // (one standard deviation) from one run to the next: within a run
    // nothing shows the move. Each trial's machine runs eight times into
    // its history, then a pair: the first pair run's interval, floored by
    // what the history read, must hold the second's figure in 95% of rows
    // (a normal move's 95% quantile from its median); bound fixed before
    // the run, 3.5 standard deviations of a 95% rate under it. Without the
    // history (the stated 0.2%) fewer hold.
    let probes = guest_probes();
    let settings = Settings::quick();
    let noise = Noise {
        round_noise: 0.0005,
        drift_per_minute: 0.0,
        canary_misread: 0.0,
        reference_noise: 0.0001,
        run_level: 0.01,
        ..Noise::cloud_guest(0.0)
    };
    // A row at one of two levels per process has forks that may agree by
    // chance and a next run at the other level: a miss of its own, not
    // what the floor is for.
    let one_level: Vec<(&str, &str)> = probes
        .iter()
        .flat_map(|p| p.variants.iter().map(move |v| (p.declaration.id, v)))
        .filter(|(_, v)| v.second_level.is_none())
        .map(|(id, v)| (id, v.name))
        .collect();
    let (mut rows, mut held, mut held_stated) = (0usize, 0usize, 0usize);
    for trial in 0..TRIALS / 8 {
        let mut machine = Machine::new(noise.clone(), 7000 + trial);
        let history = stored_figures(&mut machine, &probes, &settings, 8);
        let run_to_run = RunToRun::of(&history).expect("70 steps");
        let mut twin = machine.clone();
        let facts = mitbench::store::results::RunFacts {
            run_to_run: Some(run_to_run),
            ..Default::default()
        };
        let this = machine.run_with(&probes, QUICK, &settings, facts);
        let stated = twin.run(&probes, QUICK, &settings);
        let next = machine.run(&probes, QUICK, &settings);
        for ((a, s), b) in this.records.iter().zip(&stated.records).zip(&next.records) {
            if !one_level.contains(&(a.id.as_str(), a.variant.as_str())) {
                continue;
            }
            rows += 1;
            held += usize::from(holds(a, b));
            held_stated += usize::from(holds(s, b));
        }
    }
    let expected = rows as f64 * 0.95;
    let bound = expected - 3.5 * (rows as f64 * 0.95 * 0.05).sqrt();
    eprintln!("held {held} of {rows} with the history's floor, {held_stated} with the stated");
    assert!(
        held as f64 >= bound,
        "{held} of {rows} held, under {bound:.0}"
    );
    assert!(held_stated < held, "{held_stated} held without the history");
}

#[test]
fn a_row_that_wanders_between_runs_holds_the_next_run_with_its_own_floor() {
    // A host where every third row moves by 4% (one standard deviation of
    // a level drawn per run, shared by the run's forks, so no fork shows
    // it) and the others by 0.5%: the typical row's floor is the steady
    // rows'. Each trial's machine runs eight times into its history, then a
    // pair: over the wandering rows, the first pair run's interval, floored
    // by each row's own stored runs, must hold the second's figure in 95%
    // of rows (Student's t on the history's seven degrees of freedom);
    // bound fixed before the run, 3.5 standard deviations of a 95% rate
    // under it. With the typical row's floor alone, fewer hold.
    let mut probes = guest_probes();
    let mut wandering = Vec::new();
    for probe in &mut probes {
        for (i, v) in probe.variants.iter_mut().enumerate() {
            v.run_level = 0.005;
            if i % 3 == 0 && v.second_level.is_none() {
                v.run_level = 0.04;
                wandering.push((probe.declaration.id, v.name));
            }
        }
    }
    let settings = Settings::quick();
    let noise = Noise {
        drift_per_minute: 0.0,
        canary_misread: 0.0,
        ..Noise::cloud_guest(0.0)
    };
    let (mut rows, mut held, mut held_typical, mut own) = (0usize, 0usize, 0usize, 0usize);
    for trial in 0..TRIALS / 8 {
        let mut machine = Machine::new(noise.clone(), 9100 + trial);
        let history = stored_figures(&mut machine, &probes, &settings, 8);
        let typical = RunToRun::of(&history).expect("enough steps");
        let with_rows = typical.clone().with_rows(&history, &history);
        own += with_rows.rows.len();
        let mut twin = machine.clone();
        let facts = |run_to_run| mitbench::store::results::RunFacts {
            run_to_run: Some(run_to_run),
            ..Default::default()
        };
        let this = machine.run_with(&probes, QUICK, &settings, facts(with_rows));
        let alone = twin.run_with(&probes, QUICK, &settings, facts(typical));
        let next = machine.run(&probes, QUICK, &settings);
        for ((a, t), b) in this.records.iter().zip(&alone.records).zip(&next.records) {
            if !wandering.contains(&(a.id.as_str(), a.variant.as_str())) {
                continue;
            }
            rows += 1;
            held += usize::from(holds(a, b));
            held_typical += usize::from(holds(t, b));
        }
    }
    let expected = rows as f64 * 0.95;
    let bound = expected - 3.5 * (rows as f64 * 0.95 * 0.05).sqrt();
    eprintln!(
        "held {held} of {rows} wandering rows with their own floors ({own} floors over the \
         trials), {held_typical} with the typical row's"
    );
    assert!(
        held as f64 >= bound,
        "{held} of {rows} held, under {bound:.0}"
    );
    assert!(
        held_typical < held,
        "{held_typical} held without own floors"
    );
}
