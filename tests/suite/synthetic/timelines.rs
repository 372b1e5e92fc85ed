//! Host noise is never a regression, a regression is never host noise,
//! tested through the real scheduler: runs of the synthetic host
//! (src/synthetic/host.rs) measured fork by fork by `forks::measure`, as
//! `mitbench run` measures them, gated and with `--no-wait`, each fork's
//! watch or wait for the boot's known level where the run knows one,
//! analysed by `results::analyse` and compared by `compare::compare`. Four
//! timelines: a quiet host, a busy one (slow levels +4..+30% in a third of
//! the time, stretches of seconds), a host slow for a whole run, and a
//! cost added on the syscall path alone. Every bound is written from the
//! rate the tool claims and the number of trials, before the first run.

use crate::common;

use mitbench::analysis::noise;
use mitbench::analysis::states::QuietLevel;
use mitbench::compare::{self, BootNoise, ShiftCause, Side, Verdict};
use mitbench::measure::harness::machine::Machine as _;
use mitbench::measure::harness::tsc::TscFrequency;
use mitbench::measure::harness::{Harness, Settings};
use mitbench::measure::probes::{AnyProbe, Placement};
use mitbench::measure::schedule::forks::{self, Job, Merged};
use mitbench::store::history::{Builds, History, conditions_of};
use mitbench::store::results::{self, RunDocument};
use mitbench::synthetic::{Host, Noise, TSC_MHZ, guest_probes};
use std::sync::Arc;

const FORKS: usize = 3;

/// A run's settings, as `mitbench run` has them but for samples 10x as
/// long (the figures' noise is the host's, drawn per round and per
/// sample's state, so fewer samples only make the test faster).
fn settings(wait: bool) -> Settings {
    Settings {
        sample_us: 100.0,
        budget_s: 1.0,
        wait_for_quiet: wait,
        ..Settings::standard()
    }
}

/// What a run is made of: the host and how it runs.
struct Make<'a> {
    host: &'a Arc<Host>,
    wait: bool,
    /// The boot's quiet level from the history, where it holds one.
    known: Option<QuietLevel>,
    /// The syscall probe's rows this many times dearer (a toll to find).
    toll: f64,
    seed: u64,
    /// A hook on the syscall path for this many seconds from the first
    /// fork's start (none at 0), and the syscall rows read by the answer.
    hooked_s: f64,
}

/// What a hook adds to every crossing into the kernel: the canary +25%.
const HOOK_TICKS: f64 = 70.0;

/// One run as `mitbench run` makes it: `FORKS` forks, each a process of
/// its own, the fork that watches for the known level watching, analysed
/// as a live run, with the times it started and ended on the host's clock.
fn run(make: Make) -> RunDocument {
    let Make {
        host,
        wait,
        known,
        toll,
        seed,
        hooked_s,
    } = make;
    let mut truths = guest_probes();
    for v in &mut truths[0].variants {
        v.ticks *= toll;
    }
    let probes = host.probes(&truths);
    let plan: Vec<&dyn AnyProbe> = probes.iter().map(|p| p as &dyn AnyProbe).collect();
    let settings = settings(wait);
    let shared = Job::share(&settings, FORKS);
    let harness = Harness::on(host.clone(), shared.clone(), TSC_MHZ);
    let placement = Placement {
        cpu: 0,
        allowed: vec![0],
    };
    host.begin_run(&truths);
    let started = host.now();
    let mut merged = Merged::default();
    let mut previous_round_s = Vec::new();
    let answer_rows = match hooked_s > 0.0 {
        true => truths[0]
            .variants
            .iter()
            .map(|v| (truths[0].declaration.id.to_string(), v.name.to_string()))
            .collect(),
        false => Vec::new(),
    };
    for fork in 0..FORKS {
        host.begin_process(&truths);
        if fork == 0 && hooked_s > 0.0 {
            host.add_to_syscall_path_for(HOOK_TICKS, hooked_s);
        }
        let job = Job {
            probes: plan
                .iter()
                .map(|p| p.declaration().id.to_string())
                .collect(),
            settings: shared.clone(),
            placement: placement.clone(),
            tsc_mhz: TSC_MHZ,
            order_seed: seed.wrapping_add((fork as u64) << 32),
            fork,
            counting: false,
            round_log: None,
            progress: false,
            known_quiet: known,
            watches_known_level: Job::watching_fork(wait, fork, FORKS),
            answer_rows: answer_rows.clone(),
            previous_round_s: std::mem::take(&mut previous_round_s),
        };
        let offset_s = (host.now() - started).as_secs_f64();
        let rounds = forks::measure(&job, &harness, &plan, None, |_| {});
        previous_round_s = rounds.round_seconds();
        merged.add(&plan, fork, offset_s, rounds);
    }
    let tsc = TscFrequency {
        mhz: TSC_MHZ,
        source: "synthetic".into(),
        calibrated_mhz: None,
    };
    let facts = results::RunFacts {
        known_quiet: known,
        ..results::RunFacts::default()
    };
    let (states, records) = results::analyse(&merged, &tsc, &settings, facts);
    let mut doc = common::stored_run("run-a.json");
    doc.results = records;
    doc.machine_states = states;
    doc.settings.forks = FORKS;
    doc.started_at = at(started);
    doc.finished_at = at(host.now());
    doc
}

/// A time on the host's clock as a run document writes it.
fn at(clock: std::time::Duration) -> String {
    let epoch = chrono::DateTime::parse_from_rfc3339("2026-11-29T00:00:00+00:00").unwrap();
    (epoch + chrono::Duration::from_std(clock).unwrap()).to_rfc3339()
}

/// The quiet level a run read, as the history keeps it for the boot.
fn level_of(doc: &RunDocument) -> QuietLevel {
    let model = &doc.machine_states.model;
    QuietLevel {
        canary: model.quiet_canary,
        band: model.quiet_band,
    }
}

/// `old` against `new` as `mitbench compare` compares them, with what a
/// history holding `earlier` learned of each row between runs.
fn compared(
    old: &RunDocument,
    new: &RunDocument,
    earlier: &[RunDocument],
) -> compare::RunComparison {
    let learned = if earlier.is_empty() {
        Default::default()
    } else {
        let dir = tempfile::tempdir().unwrap();
        let mut history = History::open(&dir.path().join("h.sqlite"), true).unwrap();
        for doc in earlier {
            history.store(doc).unwrap();
        }
        let compared = [old.started_at.as_str(), new.started_at.as_str()];
        let figures = history
            .row_figures(&conditions_of(old), Builds::This, &compared)
            .unwrap();
        noise::learned(figures)
    };
    compare::compare_sets(
        &Side::one(old, "old"),
        &Side::one(new, "new"),
        compare::DEFAULT_THRESHOLD_PCT,
        &|id, variant| learned.get(&(id.to_string(), variant.to_string())).copied(),
        &BootNoise::default(),
    )
}

/// A host's runs for one trial: the run that first reads the boot's
/// level, `history` runs a history keeps, and two more to compare.
struct Trial {
    earlier: Vec<RunDocument>,
    old: RunDocument,
    new: RunDocument,
}

const HISTORY: usize = 4;

/// A trial on a host of `noise` drawn from `seed`, the new run's syscall
/// rows `toll` times dearer.
fn trial(noise: &Noise, seed: u64, wait: bool, toll: f64) -> Trial {
    let host = Host::new(noise.clone(), seed);
    let mut seeds = seed << 8..;
    let first = run(Make {
        host: &host,
        wait,
        known: None,
        toll: 1.0,
        seed: seeds.next().unwrap(),
        hooked_s: 0.0,
    });
    let known = Some(level_of(&first));
    let mut next = |toll| {
        run(Make {
            host: &host,
            wait,
            known,
            toll,
            seed: seeds.next().unwrap(),
            hooked_s: 0.0,
        })
    };
    let mut earlier = vec![first];
    earlier.extend((0..HISTORY).map(|_| next(1.0)));
    let old = next(1.0);
    let new = next(toll);
    Trial { earlier, old, new }
}

/// The quiet host: a tenth of the time slow by 20%.
fn quiet() -> Noise {
    Noise::cloud_guest(0.1)
}

/// The busy host, as the busy Zen 3 guest: slow levels +4..+30% a third
/// of the time, stretches of seconds (a switch a step of 0.1 s with a
/// chance of 3%: slow stretches 2.5 s on average, quiet ones 5 s).
fn busy() -> Noise {
    Noise {
        switch_per_reading: 0.03,
        ..Noise::many_levels_guest(2.0 / 3.0)
    }
}

const TRIALS: u64 = 24;

#[test]
fn on_a_quiet_or_busy_host_runs_agree_and_no_shift_is_told() {
    for (name, noise) in [("quiet", quiet()), ("busy", busy())] {
        for wait in [true, false] {
            let (mut marked, mut marked_with_history, mut rows, mut shifts) = (0, 0, 0, 0);
            let mut covered = Coverage::default();
            let marked_in = |c: &compare::RunComparison| {
                c.rows.iter().filter(|r| r.verdict != Verdict::Same).count()
            };
            let trials = common::in_parallel(0..TRIALS, |seed| {
                let t = trial(&noise, seed, wait, 1.0);
                let alone = compared(&t.old, &t.new, &[]);
                let with_history = compared(&t.old, &t.new, &t.earlier);
                (t, alone, with_history)
            });
            for (t, alone, with_history) in trials {
                rows += alone.rows.len();
                marked += marked_in(&alone);
                marked_with_history += marked_in(&with_history);
                shifts += usize::from(alone.level_shift.is_some());
                if name == "quiet" {
                    covered.add(&t.old, &t.new);
                }
            }
            // The rows of one comparison move together with the host's
            // walk: the rate is held to what chance allows over trials.
            let most = common::at_most_by_chance(0.05, TRIALS as usize);
            let rate = marked as f64 / rows as f64;
            let rate_history = marked_with_history as f64 / rows as f64;
            eprintln!(
                "{name}, wait {wait}: A/A {rate:.3} alone, {rate_history:.3} with a history, \
                 of {rows} rows (held to {most:.3}); {shifts} shifts"
            );
            assert!(rate <= most, "{name} {wait}: {rate}");
            assert!(rate_history <= most, "{name} {wait}: {rate_history}");
            assert_eq!(shifts, 0, "{name} {wait}");
            if name == "quiet" {
                covered.hold(&format!("{name}, wait {wait}"));
            }
        }
    }
}

/// How a timeline moves the host after its boot's earlier runs.
#[derive(Debug, Clone, Copy)]
enum Moved {
    /// The whole host slower by 25% for the whole run: the canary, every
    /// row and the reference.
    WholeHost,
    /// 70 ticks on every crossing into the kernel (the canary +25%), as a
    /// trace event adds: the canary and the syscall rows, not the
    /// reference.
    SyscallPath,
}

const SHIFT_TRIALS: u64 = 12;

#[test]
fn a_host_slow_for_a_whole_run_and_a_cost_on_the_syscall_path_are_each_one_shift() {
    for moved in [Moved::WholeHost, Moved::SyscallPath] {
        for wait in [true, false] {
            let (mut unexplained, mut rows, mut seen) = (0, 0, 0);
            for seed in 0..SHIFT_TRIALS {
                let host = Host::new(quiet(), 1000 + seed);
                let make = |known, seed| Make {
                    host: &host,
                    wait,
                    known,
                    toll: 1.0,
                    seed,
                    hooked_s: 0.0,
                };
                let first = run(make(None, 1));
                let known = Some(level_of(&first));
                let old = run(make(known, 2));
                match moved {
                    Moved::WholeHost => host.slow_whole(1.25),
                    Moved::SyscallPath => host.add_to_syscall_path(70.0),
                }
                let new = run(make(known, 3));
                let cmp = compared(&old, &new, &[]);
                let what = format!("{moved:?}, wait {wait}, seed {seed}");
                let shift = cmp.level_shift.as_ref().unwrap_or_else(|| panic!("{what}"));
                // Told on evidence, the same with and without the wait:
                // a level that moved, never a slow stretch (noise).
                assert_eq!(shift.told, ShiftCause::Moved, "{what}: {shift:?}");
                assert_eq!(shift.shifted.as_deref(), Some("new"), "{what}");
                let reference_held = matches!(moved, Moved::SyscallPath);
                assert_eq!(
                    shift.reference_held,
                    Some(reference_held),
                    "{what}: {shift:?}"
                );
                // Not N row regressions: the rows it moved are under it,
                // and a row left unexplained is one an A/A comparison
                // would mark as often.
                assert!(
                    cmp.unexplained
                        .iter()
                        .all(|r| !r.starts_with("synthetic/syscall")),
                    "{what}: {:?}",
                    cmp.unexplained
                );
                unexplained += cmp.unexplained.len();
                rows += cmp.rows.len();
                // Never hidden: the syscall rows the cost made dearer
                // (+17-26%) are marked and named under the shift.
                let dearer = shift
                    .rows
                    .iter()
                    .filter(|r| r.starts_with("synthetic/syscall"));
                seen += dearer.count();
            }
            if let Moved::SyscallPath = moved {
                let syscall_rows = 3 * SHIFT_TRIALS as usize;
                let least = common::at_least_by_chance(0.8, SHIFT_TRIALS as usize);
                eprintln!("{moved:?}, wait {wait}: {seen} of {syscall_rows} syscall rows marked");
                assert!(
                    seen as f64 >= least * syscall_rows as f64,
                    "{moved:?} {wait}: {seen}"
                );
            }
            let most = common::at_most_by_chance(0.05, SHIFT_TRIALS as usize);
            let rate = unexplained as f64 / rows as f64;
            eprintln!("{moved:?}, wait {wait}: {rate:.3} of {rows} rows unexplained");
            assert!(
                rate <= most,
                "{moved:?} {wait}: {rate:.3} (held to {most:.3})"
            );
        }
    }
}

/// How often a run's printed interval held the next run's printed figure,
/// and the printed half-widths.
#[derive(Default)]
struct Coverage {
    covered: usize,
    rows: usize,
    half_widths: Vec<f64>,
}

impl Coverage {
    fn add(&mut self, first: &RunDocument, next: &RunDocument) {
        for r in &first.results {
            let (Some(shown), Some(then)) = (r.shown_ticks(), next.record(&r.id, &r.variant))
            else {
                continue;
            };
            let Some(then) = then.shown_ticks() else {
                continue;
            };
            self.rows += 1;
            if let Some([lo, hi]) = shown.ci95 {
                self.covered += usize::from((lo..=hi).contains(&then.value));
                self.half_widths.push((hi - lo) / 2.0 / shown.value * 100.0);
            }
        }
    }

    /// The bounds on the quiet host, written before the run:
    /// coverage 85-98%, median printed half-width at most 2.5%.
    fn hold(&mut self, what: &str) {
        let rate = self.covered as f64 / self.rows as f64;
        self.half_widths.sort_by(f64::total_cmp);
        let median = self.half_widths[self.half_widths.len() / 2];
        eprintln!(
            "{what}: next-run coverage {rate:.3} of {} rows, median half-width {median:.2}%",
            self.rows
        );
        assert!((0.85..=0.98).contains(&rate), "{what}: coverage {rate:.3}");
        assert!(median <= 2.5, "{what}: median half-width {median:.2}%");
    }
}

const POWER_TRIALS: u64 = 40;

#[test]
fn a_change_of_the_printed_detectable_size_is_marked_four_times_in_five() {
    let row = ("synthetic/syscall", "raw");
    for wait in [true, false] {
        // Each trial: None where no detectable change was printed, else
        // whether the repetition marked it.
        let outcomes = common::in_parallel(0..POWER_TRIALS, |seed| {
            // What a comparison with a history prints as detectable; a
            // user who makes that change and runs again gets new draws.
            let printed = trial(&quiet(), 2000 + seed, wait, 1.0);
            let cmp = compared(&printed.old, &printed.new, &printed.earlier);
            let detectable = cmp
                .rows
                .iter()
                .find(|r| (r.key.id.as_str(), r.key.variant.as_str()) == row)
                .and_then(|r| r.smallest_detectable_pct)?;
            let t = trial(&quiet(), 3000 + seed, wait, 1.0 + detectable / 100.0);
            let cmp = compared(&t.old, &t.new, &t.earlier);
            Some(cmp.rows.iter().any(|r| {
                (r.key.id.as_str(), r.key.variant.as_str()) == row && r.verdict == Verdict::Slower
            }))
        });
        let tried = outcomes.iter().flatten().count();
        let marked = outcomes.iter().flatten().filter(|&&m| m).count();
        let rate = marked as f64 / tried as f64;
        let (least, most) = (
            common::at_least_by_chance(0.8, tried),
            common::at_most_by_chance(0.8, tried),
        );
        eprintln!(
            "wait {wait}: marked {marked} of {tried} ({rate:.3}; held to {least:.3}-{most:.3})"
        );
        assert_eq!(
            tried, POWER_TRIALS as usize,
            "every trial claims a detectable change"
        );
        assert!((least..=most).contains(&rate), "wait {wait}: {rate:.3}");
    }
}

const STRETCH_TRIALS: u64 = 12;

/// A hook on the syscall path for the first 2 s of a run (the canary
/// +25%): longer than the syscall probe's rounds in the first fork (its
/// three rows have about 0.33 s each of a fork's 3.3 s) and the answer's
/// reserve (a quarter of the fork) together, shorter than the fork. The
/// syscall rows, which the answer reads, get no quiet round there, and the
/// fork's end revisits them (`Scheduler::revisit`).
#[test]
fn a_slow_stretch_over_an_answer_rows_rounds_of_a_fork_drops_no_fork() {
    // Stated before the first run: in every trial each syscall row stands
    // on all three forks (the stretch ends more than a second before the
    // first fork's budget does, so the revisit finds the quiet level by
    // construction), and its headline is the quiet level's: within +8% of
    // its true ticks (the drift of a run and the rounds' noise keep a
    // quiet figure within about 3%; a slow round reads +17% or more).
    let trials = common::in_parallel(0..STRETCH_TRIALS, |seed| {
        let host = Host::new(Noise::cloud_guest(0.0), 5000 + seed);
        run(Make {
            host: &host,
            wait: true,
            known: None,
            toll: 1.0,
            seed,
            hooked_s: 0.6,
        })
    });
    let truths = guest_probes();
    let mut short = Vec::new();
    for (seed, doc) in trials.iter().enumerate() {
        for truth in &truths[0].variants {
            let record = doc
                .record(truths[0].declaration.id, truth.name)
                .expect("the syscall row");
            let cost = record.cost.as_ref().expect("a figure");
            let off = cost.rounds_ticks.value / truth.ticks - 1.0;
            eprintln!(
                "seed {seed} {}: {} forks, {:+.1}% off its truth",
                truth.name,
                cost.forks,
                off * 100.0
            );
            if cost.forks < FORKS || off > 0.08 {
                short.push(format!(
                    "seed {seed} {}: {} forks, {off:+.3}",
                    truth.name, cost.forks
                ));
            }
        }
    }
    assert!(short.is_empty(), "{short:#?}");
}
