//! The history against real SQLite files: a new one, an older (empty)
//! one migrated, a locked one, a truncated one, one of another program.
//! Every failure is an error value, never a panic, and no file is dropped.

use crate::common;

use mitbench::store::history::{Builds, History, HistoryError, RunRef};
use mitbench::store::results::RunDocument;
use rusqlite::Connection;

fn fixture() -> RunDocument {
    common::stored_run("run-a.json")
}

/// `doc` as it reads under one seccomp filter: another process control.
fn under_a_filter(mut doc: RunDocument) -> RunDocument {
    common::under_a_seccomp_filter(&mut doc);
    doc
}

#[test]
fn runs_are_stored_listed_and_read_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep/er/history.sqlite");
    let doc = fixture();
    let mut history = History::open(&path, true).unwrap();
    let first = history.store(&doc).unwrap();
    let second = history.store(&doc).unwrap();
    assert!(second > first);
    let runs = history.list().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].rows, doc.results.len() as i64);
    assert_eq!(history.nth_last(0).unwrap(), second);
    assert_eq!(history.nth_last(1).unwrap(), first);
    assert!(matches!(
        history.nth_last(2),
        Err(HistoryError::NoSuchRun(_))
    ));
    let back = RunRef::Last(1).resolve(Some(&history)).unwrap();
    assert_eq!(
        serde_json::to_value(&back).unwrap(),
        serde_json::to_value(&doc).unwrap()
    );
    // One row per record, for queries.
    let conn = Connection::open(&path).unwrap();
    let rows: i64 = conn
        .query_row(
            "SELECT count(*) FROM records WHERE run_id = ?1",
            [first],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(rows, doc.results.len() as i64);
}

#[test]
fn an_empty_older_database_is_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    Connection::open(&path).unwrap(); // version 0, no tables
    let mut history = History::open(&path, false).unwrap();
    history.store(&fixture()).unwrap();
    let version: i64 = Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert!(version >= 1);
}

#[test]
fn a_database_before_the_quiet_level_columns_is_brought_forward_with_them() {
    // A history of version 3 holding a run whose document predates the
    // quiet band: bringing it forward fills the new columns from the
    // document (the band the fixed 12% such runs were read with, the
    // command line, which records are the slow state's figure).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    let mut doc = fixture();
    let slow = doc
        .results
        .iter_mut()
        .find(|r| r.cost.is_some())
        .expect("a measured row");
    slow.cost.as_mut().unwrap().estimator = mitbench::analysis::rounds::Basis::NoQuietRound;
    let slow = (slow.id.clone(), slow.variant.clone());
    History::open(&path, true).unwrap().store(&doc).unwrap();
    let older = Connection::open(&path).unwrap();
    older
        .execute_batch(
            "DROP INDEX runs_by_quiet_key;
             DROP INDEX runs_by_cmdline;
             DROP INDEX runs_in_sets;
             ALTER TABLE runs DROP COLUMN quiet_key;
             ALTER TABLE runs DROP COLUMN quiet_canary;
             ALTER TABLE runs DROP COLUMN quiet_band;
             ALTER TABLE runs DROP COLUMN cmdline;
             ALTER TABLE records DROP COLUMN slow_state;
             DROP TABLE floor_scores;
             UPDATE runs SET document = json_remove(document, '$.machine_states.quiet_band');
             PRAGMA user_version = 3;",
        )
        .unwrap();
    drop(older);
    let history = History::open(&path, false).unwrap();
    let level = history
        .quiet_level_like(&doc.inventory.identity, doc.settings.cpu)
        .unwrap()
        .unwrap();
    assert_eq!(level.canary, doc.machine_states.model.quiet_canary);
    assert_eq!(level.band, mitbench::analysis::states::QUIET_BAND);
    let conn = Connection::open(&path).unwrap();
    let cmdline: String = conn
        .query_row("SELECT cmdline FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(cmdline, doc.inventory.kernel.cmdline);
    let slow_rows: Vec<(String, String)> = conn
        .prepare("SELECT probe, variant FROM records WHERE slow_state = 1")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(slow_rows, vec![slow]);
}

#[test]
fn a_database_of_another_program_is_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("foreign.sqlite");
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch("CREATE TABLE runs (name TEXT); INSERT INTO runs VALUES ('theirs');")
        .unwrap();
    drop(conn);
    let before = std::fs::read(&path).unwrap();
    assert!(matches!(
        History::open(&path, true),
        Err(HistoryError::Foreign { .. })
    ));
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn a_newer_database_is_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("newer.sqlite");
    Connection::open(&path)
        .unwrap()
        .execute_batch("PRAGMA user_version = 999;")
        .unwrap();
    assert!(matches!(
        History::open(&path, true),
        Err(HistoryError::Newer { found: 999, .. })
    ));
}

#[test]
fn a_truncated_database_is_an_error_and_stays() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    History::open(&path, true)
        .unwrap()
        .store(&fixture())
        .unwrap();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 3]).unwrap();
    let outcome = History::open(&path, true).and_then(|mut h| h.store(&fixture()).map(|_| ()));
    assert!(outcome.is_err(), "a third of a database took a run");
    assert!(path.exists());
    // Garbage is no database either.
    std::fs::write(&path, b"not a database at all, not even close........").unwrap();
    assert!(History::open(&path, true).is_err());
}

#[test]
fn a_locked_database_is_an_error_after_the_wait_and_then_works() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    History::open(&path, true).unwrap();
    let holder = Connection::open(&path).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE;").unwrap();
    let store = || History::open(&path, false).and_then(|mut h| h.store(&fixture()));
    assert!(matches!(store(), Err(HistoryError::Sqlite { .. })));
    holder.execute_batch("COMMIT;").unwrap();
    store().unwrap();
}

#[test]
fn runs_are_named_by_id_last_and_file() {
    assert_eq!(RunRef::parse("last"), Ok(RunRef::Last(0)));
    assert_eq!(RunRef::parse("last~3"), Ok(RunRef::Last(3)));
    assert_eq!(RunRef::parse("12"), Ok(RunRef::Id(12)));
    assert!(RunRef::parse("last~x").is_err());
    assert!(RunRef::parse("").is_err());
    assert!(matches!(RunRef::parse("runs/a.json"), Ok(RunRef::File(_))));
    // A run in the history needs the history.
    assert!(matches!(
        RunRef::Last(0).resolve(None),
        Err(HistoryError::NoSuchRun(_))
    ));
}

/// The newest run of a boot with every named row measured is found from
/// the per-record table; a missing row, an unmeasured one or another boot
/// finds none.
#[test]
fn the_newest_run_of_a_boot_with_given_rows_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open(&dir.path().join("h.sqlite"), true).unwrap();
    let doc = fixture();
    let boot = doc.inventory.identity.boot_id.clone();
    let first = history.store(&doc).unwrap();
    let mut other_boot = fixture();
    other_boot.inventory.identity.boot_id = "another boot".into();
    history.store(&other_boot).unwrap();
    let rows = [("os/getpid", "syscall"), ("os/getpid", "libc")];
    assert_eq!(history.newest_measuring(&boot, &rows).unwrap(), Some(first));
    let second = history.store(&doc).unwrap();
    assert_eq!(
        history.newest_measuring(&boot, &rows).unwrap(),
        Some(second)
    );
    assert_eq!(
        history.newest_measuring("no such boot", &rows).unwrap(),
        None
    );
    let missing = [("os/getpid", "syscall"), ("os/nothing", "here")];
    assert_eq!(history.newest_measuring(&boot, &missing).unwrap(), None);
}

#[test]
fn the_quiet_level_of_a_boot_is_read_under_the_same_process_controls_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open(&dir.path().join("h.sqlite"), true).unwrap();
    let with_canary = |doc: RunDocument, quiet: f64, above: Option<f64>| {
        let mut doc = doc;
        doc.machine_states.model.quiet_canary = quiet;
        doc.machine_states.model.above_known_pct = above;
        doc
    };
    let like = fixture().inventory.identity;
    let canary_of = |history: &History, like: &mitbench::inventory::identity::Identity| {
        history
            .quiet_level_like(like, fixture().settings.cpu)
            .unwrap()
            .map(|level| level.canary)
    };
    assert_eq!(canary_of(&history, &like), None, "empty");
    history.store(&with_canary(fixture(), 280.0, None)).unwrap();
    let mut sharp = with_canary(fixture(), 274.0, None);
    sharp.machine_states.model.quiet_band = 0.03;
    history.store(&sharp).unwrap();
    // A run that never reached the quiet level, one under a filter (its
    // canary dearer) and one of another boot do not count.
    history
        .store(&with_canary(fixture(), 250.0, Some(27.0)))
        .unwrap();
    history
        .store(&with_canary(under_a_filter(fixture()), 200.0, None))
        .unwrap();
    let mut other_boot = with_canary(fixture(), 150.0, None);
    other_boot.inventory.identity.boot_id = "another boot".into();
    history.store(&other_boot).unwrap();
    assert_eq!(canary_of(&history, &like), Some(274.0));
    let cpu = fixture().settings.cpu;
    let band = history
        .quiet_level_like(&like, cpu)
        .unwrap()
        .map(|l| l.band);
    assert_eq!(band, Some(0.03), "the band that run measured");
    let filtered = under_a_filter(fixture()).inventory.identity;
    assert_eq!(canary_of(&history, &filtered), Some(200.0));
    // A run on another CPU is held against that CPU's level only.
    let mut elsewhere = with_canary(fixture(), 100.0, None);
    elsewhere.settings.cpu += 1;
    history.store(&elsewhere).unwrap();
    assert_eq!(canary_of(&history, &like), Some(274.0));
    // The five newest runs, not the lowest ever: a level that moved for
    // good is followed.
    for _ in 0..5 {
        history.store(&with_canary(fixture(), 290.0, None)).unwrap();
    }
    assert_eq!(canary_of(&history, &like), Some(290.0));
}

#[test]
fn the_history_learns_how_far_each_row_moves_between_runs_of_one_condition() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open(&dir.path().join("h.sqlite"), true).unwrap();
    let base = fixture();
    // Four runs of one condition, the first row 1% apart each time; a fifth
    // under a seccomp filter, which is another condition.
    for (i, factor) in [1.0, 1.01, 1.02, 1.03].into_iter().enumerate() {
        let mut doc = base.clone();
        doc.started_at = format!("2026-11-23T10:0{i}:00+00:00");
        if let Some(cost) = doc.results[0].cost.as_mut() {
            common::scale_cost(cost, factor);
        }
        history.store(&doc).unwrap();
    }
    let filtered = under_a_filter(base.clone());
    history.store(&filtered).unwrap();
    let conditions = mitbench::store::history::conditions_of(&base);
    assert_ne!(
        conditions,
        mitbench::store::history::conditions_of(&filtered)
    );
    let learned = |except: &[&str]| {
        mitbench::analysis::noise::learned(
            history
                .row_figures(&conditions, Builds::This, except)
                .unwrap(),
        )
    };
    let learned_all = learned(&[]);
    let first = &base.results[0];
    let l = learned_all[&(first.id.clone(), first.variant.clone())];
    assert_eq!(
        l.runs, 4,
        "four runs of the condition, not the filtered one"
    );
    let e = l.evidence;
    assert!(e.sd() > 0.005 && e.sd() < 0.02, "{}", e.sd());
    // The runs being compared are left out: three left, still enough.
    let except = ["2026-11-23T10:00:00+00:00"];
    assert_eq!(
        learned(&except)[&(first.id.clone(), first.variant.clone())].runs,
        3
    );
    // Under three runs, nothing is learned.
    let except = ["2026-11-23T10:00:00+00:00", "2026-11-23T10:01:00+00:00"];
    assert!(learned(&except).is_empty());
}

#[test]
fn the_step_across_a_level_shift_is_not_learned_as_a_rows_noise() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open(&dir.path().join("h.sqlite"), true).unwrap();
    let base = fixture();
    // Two runs, a trace event turned on (the canary and the row +25%, the
    // run's level moved) for three, then off again for one: two levels of
    // three runs each.
    let levels = [1.0, 1.0, 1.25, 1.25, 1.25, 1.0];
    let wobble = [1.0, 1.01, 1.0, 1.01, 1.0, 1.0];
    for (i, (level, wobble)) in levels.into_iter().zip(wobble).enumerate() {
        let mut doc = base.clone();
        doc.started_at = format!("2026-11-23T11:0{i}:00+00:00");
        let model = &mut doc.machine_states.model;
        model.quiet_canary *= level;
        model.quiet_band = 0.02;
        if let Some(cost) = doc.results[0].cost.as_mut() {
            common::scale_cost(cost, level * wobble);
        }
        history.store(&doc).unwrap();
    }
    let conditions = mitbench::store::history::conditions_of(&base);
    let figures = history.row_figures(&conditions, Builds::This, &[]).unwrap();
    let first = &base.results[0];
    let key = (first.id.clone(), first.variant.clone());
    let stretches: Vec<usize> = figures[&key].iter().map(Vec::len).collect();
    assert_eq!(stretches, [3, 3]);
    let learned = mitbench::analysis::noise::learned(figures);
    // The steps within each level, each 1%: the row's noise, not +25%.
    let sd = learned[&key].evidence.sd();
    assert!((sd - 1.01f64.ln() / 2f64.sqrt()).abs() < 1e-9, "{sd}");
    assert_eq!(learned[&key].runs, 6);
}

#[test]
fn a_new_build_reads_the_rows_of_the_builds_before_it_each_a_stretch_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open(&dir.path().join("h.sqlite"), true).unwrap();
    let base = fixture();
    // Three runs of one build, then two of the next, whose change made the
    // first row 40% dearer: the step between builds is the code's.
    let builds = ["1111111", "1111111", "1111111", "2222222", "2222222"];
    let scale = [1.0, 1.01, 1.0, 1.4, 1.414];
    for (i, (build, scale)) in builds.into_iter().zip(scale).enumerate() {
        let mut doc = base.clone();
        doc.started_at = format!("2026-11-23T13:0{i}:00+00:00");
        doc.build.git_commit = build.into();
        if let Some(cost) = doc.results[0].cost.as_mut() {
            common::scale_cost(cost, scale);
        }
        history.store(&doc).unwrap();
    }
    let first = &base.results[0];
    let key = (first.id.clone(), first.variant.clone());
    // A third build, not yet stored, reads both builds' runs.
    let mut next = base.clone();
    next.build.git_commit = "3333333".into();
    let figures = history
        .row_figures(
            &mitbench::store::history::conditions_of(&next),
            Builds::Any,
            &[],
        )
        .unwrap();
    let stretches: Vec<usize> = figures[&key].iter().map(Vec::len).collect();
    assert_eq!(stretches, [3, 2]);
    let learned = mitbench::analysis::noise::learned(figures);
    let sd = learned[&key].evidence.sd();
    assert!(sd < 0.01, "the 40% step between builds read as noise: {sd}");
    // Its own build's runs alone: none yet.
    let this = history
        .row_figures(
            &mitbench::store::history::conditions_of(&next),
            Builds::This,
            &[],
        )
        .unwrap();
    assert!(this.is_empty(), "{this:?}");
    // The same boot under a seccomp filter is still another condition.
    let filtered = under_a_filter(next);
    let other = history
        .row_figures(
            &mitbench::store::history::conditions_of(&filtered),
            Builds::Any,
            &[],
        )
        .unwrap();
    assert!(other.is_empty(), "{other:?}");
}

#[test]
fn a_new_build_reads_the_floors_of_older_builds_without_their_stray_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open(&dir.path().join("h.sqlite"), true).unwrap();
    let base = fixture();
    // Six runs of one build, every row 1% up and down; the first row of
    // the fourth run 50% dearer, a stray run its own floor widens for; the
    // second row 20% up and down in every run, a row that wanders.
    for i in 0..6 {
        let mut doc = base.clone();
        doc.started_at = format!("2026-11-23T14:0{i}:00+00:00");
        doc.build.git_commit = "1111111".into();
        for (n, record) in doc.results.iter_mut().enumerate() {
            let stray = if i == 3 && n == 0 { 1.5 } else { 1.0 };
            let step = if n == 1 { 1.2 } else { 1.01 };
            if let Some(cost) = record.cost.as_mut() {
                common::scale_cost(cost, stray * if i % 2 == 0 { 1.0 } else { step });
            }
        }
        history.store(&doc).unwrap();
    }
    let (first, second) = (&base.results[0], &base.results[1]);
    let of_build = |build: &str| {
        let mut doc = base.clone();
        doc.build.git_commit = build.into();
        mitbench::run::run_to_run(&history, &mitbench::store::history::conditions_of(&doc))
    };
    let has = |floors: &[mitbench::analysis::spread::RowFloor],
               r: &mitbench::store::results::Record| {
        floors
            .iter()
            .any(|f| f.probe == r.id && f.variant == r.variant)
    };
    let own = of_build("1111111").expect("80 steps of one build");
    assert!(has(&own.rows, first), "{:?}", own.rows);
    assert!(has(&own.rows, second), "{:?}", own.rows);
    let next = of_build("2222222").expect("the typical floor of the build before");
    assert_eq!(next.median_step, own.median_step);
    assert!(!has(&next.rows, first), "{:?}", next.rows);
    assert!(has(&next.rows, second), "{:?}", next.rows);
    assert_eq!(next.rows.len(), 1, "{:?}", next.rows);
}

#[test]
fn a_co_runners_waits_are_read_back_from_the_stored_runs_and_no_other_figure() {
    use mitbench::measure::probes::NamedFigure;
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open(&dir.path().join("h.sqlite"), true).unwrap();
    let base = fixture();
    let waits = [20.0, 25.0, 18.0, 40.0];
    for (i, wait) in waits.into_iter().enumerate() {
        let mut doc = base.clone();
        doc.started_at = format!("2026-11-23T12:0{i}:00+00:00");
        doc.results[0].figures = vec![
            NamedFigure::new("longest stretch", 1000.0 + i as f64, " us"),
            NamedFigure::co_runner_wait_p99("p99", wait),
        ];
        history.store(&doc).unwrap();
    }
    let conditions = mitbench::store::history::conditions_of(&base);
    let read = history.wait_figures(&conditions, Builds::This).unwrap();
    let first = &base.results[0];
    let key = (first.id.clone(), format!("{}: p99", first.variant));
    assert_eq!(
        read.keys().collect::<Vec<_>>(),
        [&key],
        "the plain figure too"
    );
    assert_eq!(read[&key], [waits.to_vec()], "in the order the runs ran");
    // Runs of other conditions are not read.
    assert!(history.wait_figures("[]", Builds::Any).unwrap().is_empty());
}

#[test]
fn a_rows_quiet_rounds_are_read_back_from_the_newest_runs_of_any_build_and_no_other_round() {
    use mitbench::analysis::rounds::RoundState;
    use mitbench::store::history::USUAL_GAP_RUNS;
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open(&dir.path().join("h.sqlite"), true).unwrap();
    let base = fixture();
    let runs = USUAL_GAP_RUNS as usize + 2;
    for i in 0..runs {
        let mut doc = base.clone();
        doc.started_at = format!("2026-12-03T12:0{i}:00+00:00");
        doc.build.git_commit = ["1111111", "2222222"][i % 2].into();
        let rounds = &mut doc.results[0].rounds.each;
        assert!(rounds.len() >= 3, "the fixture's first row has rounds");
        for (k, round) in rounds.iter_mut().enumerate() {
            round.figure.value = 1000.0 * (i + 1) as f64 + k as f64;
            round.min_ticks = round.figure.value - 10.0;
            round.state = [RoundState::Quiet, RoundState::Slow, RoundState::Interrupted][k % 3];
        }
        history.store(&doc).unwrap();
    }
    // A build of no stored run yet reads the newest runs of the others.
    let mut next = base.clone();
    next.build.git_commit = "3333333".into();
    let read = history
        .quiet_rounds(&mitbench::store::history::conditions_of(&next))
        .unwrap();
    let first = &base.results[0];
    let key = (first.id.clone(), first.variant.clone());
    let quiet_a_run = first.rounds.each.len().div_ceil(3);
    let got = &read[&key];
    assert_eq!(got.len(), USUAL_GAP_RUNS as usize * quiet_a_run, "{got:?}");
    // Quiet rounds only (k a multiple of 3), of the newest runs only.
    for round in got {
        let (median, fastest) = (round.median, round.fastest);
        let (run, k) = ((median / 1000.0).floor() as usize, median as usize % 1000);
        assert!(
            run > runs - USUAL_GAP_RUNS as usize && k % 3 == 0,
            "{median}"
        );
        assert_eq!(median - fastest, 10.0);
    }
    // Runs of other conditions are not read.
    assert!(history.quiet_rounds("[]").unwrap().is_empty());
}

#[test]
fn a_rows_figures_are_grouped_by_boot_over_boots_of_one_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open(&dir.path().join("h.sqlite"), true).unwrap();
    let base = fixture();
    let run = |boot: &str, minute: usize, factor: f64| {
        let mut doc = base.clone();
        doc.started_at = format!("2026-11-23T10:{minute:02}:00+00:00");
        doc.inventory.identity.boot_id = boot.to_string();
        if let Some(cost) = doc.results[0].cost.as_mut() {
            common::scale_cost(cost, factor);
        }
        doc
    };
    // Two boots of the present command line (three runs and two), one run
    // of a third boot under a seccomp filter (another process control) and
    // one of a boot with another command line: neither counts.
    for (i, (boot, factor)) in [
        ("a", 1.0),
        ("a", 1.01),
        ("a", 0.99),
        ("b", 1.1),
        ("b", 1.11),
    ]
    .into_iter()
    .enumerate()
    {
        history.store(&run(boot, i, factor)).unwrap();
    }
    history.store(&under_a_filter(run("c", 10, 1.5))).unwrap();
    let mut other = run("d", 11, 2.0);
    other.inventory.kernel.cmdline = "mitigations=off".to_string();
    history.store(&other).unwrap();

    let figures = history.boot_figures(&base).unwrap();
    let first = &base.results[0];
    let boots = &figures[&(first.id.clone(), first.variant.clone())];
    let mut sizes: Vec<usize> = boots.iter().map(Vec::len).collect();
    sizes.sort();
    assert_eq!(sizes, [2, 3], "{boots:?}");
    let e = mitbench::analysis::noise::between_boots(boots).unwrap();
    // About 10% between the boots, about 1% within them.
    assert!(e.sd() > 0.05 && e.sd() < 0.15, "{}", e.sd());
    // A history of one boot says nothing of boots.
    let dir = tempfile::tempdir().unwrap();
    let mut single = History::open(&dir.path().join("h.sqlite"), true).unwrap();
    single.store(&run("a", 0, 1.0)).unwrap();
    single.store(&run("a", 1, 1.01)).unwrap();
    assert!(single.boot_figures(&base).unwrap().is_empty());
}

#[test]
fn a_side_is_a_run_a_range_of_the_history_or_a_list() {
    use mitbench::store::history::SideRef;
    assert_eq!(
        SideRef::parse("last~5..last~3"),
        Ok(SideRef::Range(RunRef::Last(5), RunRef::Last(3)))
    );
    assert_eq!(
        SideRef::parse("12..14"),
        Ok(SideRef::Range(RunRef::Id(12), RunRef::Id(14)))
    );
    // A path with ".." in it is a file, not a range.
    assert_eq!(
        SideRef::parse("../runs/a.json"),
        Ok(SideRef::Runs(vec![RunRef::File("../runs/a.json".into())]))
    );
    assert!(matches!(SideRef::parse("a.json,b.json"), Ok(SideRef::Runs(r)) if r.len() == 2));
    assert!(SideRef::parse("last~x").is_err());
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open(&dir.path().join("h.sqlite"), true).unwrap();
    for _ in 0..4 {
        history.store(&fixture()).unwrap();
    }
    let side = SideRef::parse("last~2..last").unwrap();
    assert_eq!(side.resolve(Some(&history)).unwrap().len(), 3);
    assert!(
        SideRef::parse("last~9..last")
            .unwrap()
            .resolve(Some(&history))
            .is_err()
    );
}

/// Which stored runs of a boot read audit enabled, and which of them
/// measured a row, are found without reading documents whole.
#[test]
fn a_boots_runs_with_audit_on_and_with_a_row_are_found() {
    use mitbench::inventory::audit::Audit;
    use mitbench::inventory::hooks::Reading;
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open(&dir.path().join("h.sqlite"), true).unwrap();
    let audit = |enabled| {
        Reading::Read(Audit {
            enabled,
            auditd_pid: 0,
            rules: 0,
            syscall_rules: 0,
            never_task: false,
        })
    };
    let mut off = fixture();
    off.inventory.hooks.audit = audit(0);
    let mut on = fixture();
    on.inventory.hooks.audit = audit(1);
    let boot = off.inventory.identity.boot_id.clone();
    history.store(&off).unwrap();
    assert_eq!(history.audit_enabled_in_boot(&boot).unwrap(), None);
    let enabled = history.store(&on).unwrap();
    history.store(&off).unwrap();
    assert_eq!(history.audit_enabled_in_boot(&boot).unwrap(), Some(enabled));
    assert_eq!(history.audit_enabled_in_boot("another boot").unwrap(), None);

    let row = (off.results[0].id.as_str(), off.results[0].variant.as_str());
    let newest = history.newest_of_boot(&boot, row, 2).unwrap();
    assert_eq!(newest.len(), 2);
    assert!(newest[0] > newest[1], "newest first: {newest:?}");
    assert!(
        history
            .newest_of_boot(&boot, ("no/such", "row"), 2)
            .unwrap()
            .is_empty()
    );
}
