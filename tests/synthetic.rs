//! The synthetic machine (`mitbench::synthetic`): a drift of a few percent
//! between back-to-back runs, figures at one of two levels per process, a
//! slow state in 20-80% of the rounds. What a run prints is held against
//! the truth and against the next run, over seeded trials: no clock, no
//! dependence on this machine.

use mitbench::harness::Settings;
use mitbench::harness::rounds::Basis;
use mitbench::synthetic::{Layout, Machine, Noise, guest_probes};

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

#[test]
fn the_printed_interval_covers_the_next_run() {
    let (mut covered, mut rows) = (0usize, 0usize);
    let mut misses: std::collections::BTreeMap<String, usize> = Default::default();
    let mut halfs = Vec::new();
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
            rows += 1;
            let Some([lo, hi]) = cost.interval_ticks() else {
                eprintln!(
                    "no interval {} {} {:?} used {}",
                    r.id, r.variant, cost.next_run_from, cost.rounds_used
                );
                continue;
            };
            halfs.push(cost.interval_half_width_pct().unwrap());
            if lo <= n.ticks && n.ticks <= hi {
                covered += 1;
            } else {
                *misses.entry(format!("{} {}", r.id, r.variant)).or_default() += 1;
            }
        }
    }
    halfs.sort_by(f64::total_cmp);
    let rate = covered as f64 / rows as f64;
    eprintln!(
        "coverage {rate:.3} of {rows}; median half-width {:.2}%; misses {misses:?}",
        halfs[halfs.len() / 2]
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
            let error = (cost.ticks / truth - 1.0).abs() * 100.0;
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
                    .interval_ticks()
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
