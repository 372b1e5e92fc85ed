//! compare on a level shift: the syscall path's quiet level read apart on
//! the two sides is one finding above the rows, told as far as the runs
//! tell it (a level that moved, a slow stretch, a change between the
//! runs), with the rows that moved with it gathered under it rather than
//! listed as unexplained regressions, and no row's verdict moved by it.

use crate::common;

use common::{around_a_trace_event, moved, scale_rows};
use mitbench::analysis::rounds::Basis;
use mitbench::compare::{self, ShiftCause, Verdict};
use mitbench::export::compare::text;
use mitbench::export::text_table::Style;
use mitbench::run::Known;
use mitbench::store::history::History;
use mitbench::store::results::RunDocument;

/// The stored run, its quiet level as sharp as a quiet host's (the 2%
/// least band; the fixture predates the band and would read the old 12%).
fn fixture() -> RunDocument {
    let mut doc = common::stored_run("run-a.json");
    doc.machine_states.model.quiet_band = 0.02;
    doc
}

/// The run `doc` as the analysis states one that never reached the known
/// level in its rounds but whose canary came back to it when watched:
/// every reading slow, every figure that slow level's.
fn above_known(doc: &mut RunDocument, known: f64, factor: f64) {
    let model = &mut doc.machine_states.model;
    model.known_quiet = Some(known);
    model.quiet_canary = known;
    model.above_known_pct = Some((factor - 1.0) * 100.0);
    for cost in doc.results.iter_mut().filter_map(|r| r.cost.as_mut()) {
        cost.estimator = Basis::NoQuietRound;
    }
}

fn getpid_rows(cmp: &compare::RunComparison) -> Vec<String> {
    cmp.rows
        .iter()
        .filter(|r| r.key.id == "os/getpid")
        .map(|r| format!("{} {}", r.key.id, r.key.variant))
        .collect()
}

#[test]
fn a_level_that_moved_is_one_shift_and_its_rows_move_with_it() {
    let old = fixture();
    let known = old.machine_states.model.quiet_canary;
    let mut new = fixture();
    // A trace event on the syscall path: the canary and the syscall rows
    // +24%, the indirect calls untouched.
    scale_rows(&mut new, "os/getpid", 1.24);
    moved(&mut new, known, 1.24);
    let cmp = compare::compare(&old, "old", &new, "new", compare::DEFAULT_THRESHOLD_PCT);
    let shift = cmp.level_shift.as_ref().expect("a shift of 24% is named");
    assert_eq!(shift.told, ShiftCause::Moved);
    assert_eq!(shift.shifted.as_deref(), Some("new"));
    assert!((shift.change_pct - 24.0).abs() < 1e-6, "{shift:?}");
    // Each row keeps its verdict as measured: a regression is never noise.
    for row in &cmp.rows {
        let expected = match row.key.id.as_str() {
            "os/getpid" => Verdict::Slower,
            _ => Verdict::Same,
        };
        assert_eq!(row.verdict, expected, "{row:?}");
    }
    assert_eq!(shift.rows, getpid_rows(&cmp));
    assert_eq!(shift.rows_against, 0);
    assert!(cmp.unexplained.is_empty(), "{:?}", cmp.unexplained);
    let shown = text::render(&cmp, Style::Markdown, 100, text::View::default());
    assert_eq!(shown.matches("level shift: ").count(), 1, "{shown}");
    assert!(shown.contains("a level that moved"), "{shown}");
    assert!(!shown.contains("unexplained"), "{shown}");
}

#[test]
fn a_row_marked_against_the_shift_stays_unexplained() {
    let old = fixture();
    let known = old.machine_states.model.quiet_canary;
    let mut new = fixture();
    scale_rows(&mut new, "os/getpid", 1.24);
    scale_rows(&mut new, "indirect/call", 0.5);
    moved(&mut new, known, 1.24);
    let cmp = compare::compare(&old, "old", &new, "new", compare::DEFAULT_THRESHOLD_PCT);
    let shift = cmp.level_shift.as_ref().unwrap();
    let faster = cmp
        .rows
        .iter()
        .filter(|r| r.verdict == Verdict::Faster)
        .count();
    assert!(faster > 0);
    assert_eq!(shift.rows_against, faster);
    assert_eq!(cmp.unexplained.len(), faster);
    assert!(
        cmp.unexplained
            .iter()
            .all(|r| r.starts_with("indirect/call")),
        "{:?}",
        cmp.unexplained
    );
}

#[test]
fn a_run_that_never_reached_the_level_but_came_back_is_a_slow_stretch() {
    let old = fixture();
    let known = old.machine_states.model.quiet_canary;
    let mut new = fixture();
    scale_rows(&mut new, "os/getpid", 1.24);
    above_known(&mut new, known, 1.24);
    let cmp = compare::compare(&old, "old", &new, "new", compare::DEFAULT_THRESHOLD_PCT);
    let shift = cmp
        .level_shift
        .as_ref()
        .expect("the level it sat at is said");
    assert_eq!(shift.told, ShiftCause::SlowStretch);
    assert!((shift.change_pct - 24.0).abs() < 1e-6, "{shift:?}");
    // Neither a regression nor hidden: not compared, and said why.
    for row in &cmp.rows {
        assert_eq!(row.verdict, Verdict::Same, "{row:?}");
        assert!(row.note.is_some(), "{row:?}");
    }
    assert!(shift.summary.contains("a run later tells"), "{shift:?}");
    // The header reads the level the run sat at, not the known one.
    assert!((cmp.new.quiet_canary_ticks / known - 1.24).abs() < 1e-9);
}

#[test]
fn two_runs_each_at_a_level_of_its_own_are_a_change_between_them() {
    let old = fixture();
    let mut new = fixture();
    scale_rows(&mut new, "os/getpid", 0.9);
    new.machine_states.model.quiet_canary *= 0.9;
    let cmp = compare::compare(&old, "old", &new, "new", compare::DEFAULT_THRESHOLD_PCT);
    let shift = cmp.level_shift.as_ref().unwrap();
    assert_eq!(shift.told, ShiftCause::Between);
    assert_eq!(shift.shifted, None);
    assert_eq!(shift.rows, getpid_rows(&cmp));
}

#[test]
fn a_level_within_its_band_is_no_shift() {
    let old = fixture();
    let mut new = fixture();
    // The band is the 2% least: 1.5% lies within it.
    new.machine_states.model.quiet_canary *= 1.015;
    let cmp = compare::compare(&old, "old", &new, "new", compare::DEFAULT_THRESHOLD_PCT);
    assert!(cmp.level_shift.is_none(), "{:?}", cmp.level_shift);
    let doc = fixture();
    let same = compare::compare(&doc, "a", &doc, "a", compare::DEFAULT_THRESHOLD_PCT);
    assert!(same.level_shift.is_none());
}

/// The run with a reference speed read (the fixture predates it): the
/// one a stored run of the return toll read.
fn with_reference(mut doc: RunDocument) -> RunDocument {
    let other = common::stored_run("syscall-return-run.json");
    doc.machine_states.reference = other.machine_states.reference;
    doc
}

/// `ticks` added to each figure of the row (`id`, `variant`), as a cost
/// on every crossing adds them to a row that makes one crossing an item.
fn add_ticks(doc: &mut RunDocument, id: &str, variant: &str, ticks: f64) {
    let old = doc
        .record(id, variant)
        .and_then(|r| r.cost.as_ref())
        .unwrap()
        .ticks();
    common::scale_variant(doc, id, Some(variant), (old + ticks) / old);
}

#[test]
fn beyond_a_cost_on_the_syscall_path_each_row_reads_the_crossings_it_makes() {
    let old = with_reference(fixture());
    let known = old.machine_states.model.quiet_canary;
    let added = 0.24 * known;
    let mut new = with_reference(fixture());
    // A trace event's cost on every crossing: getpid's two variants make
    // one an item, and libc's a second crossing's worth on top (the rule
    // must read 2, not the row's percent over the canary's).
    add_ticks(&mut new, "os/getpid", "syscall", added);
    add_ticks(&mut new, "os/getpid", "libc", 2.0 * added);
    moved(&mut new, known, 1.24);
    let cmp = compare::compare(&old, "old", &new, "new", compare::DEFAULT_THRESHOLD_PCT);
    let shift = cmp.level_shift.as_ref().unwrap();
    assert_eq!(shift.reference_held, Some(true), "{shift:?}");
    let read = |row: &str| {
        let b = shift.beyond.iter().find(|b| b.row == row).unwrap();
        let [lo, hi] = b.canary_calls.ci95.unwrap();
        assert!(
            lo <= b.canary_calls.value && b.canary_calls.value <= hi,
            "{b:?}"
        );
        b.canary_calls.value
    };
    assert!((read("os/getpid syscall") - 1.0).abs() < 1e-6);
    assert!((read("os/getpid libc") - 2.0).abs() < 1e-6);
    let explained = text::View {
        explain: true,
        ..text::View::default()
    };
    let shown = text::render(&cmp, Style::Markdown, 100, explained);
    assert!(shown.contains("beyond the shift"), "{shown}");
}

#[test]
fn a_host_that_moved_whole_is_read_at_one_speed_not_in_crossings() {
    let old = with_reference(fixture());
    let known = old.machine_states.model.quiet_canary;
    let mut new = with_reference(fixture());
    scale_rows(&mut new, "os/getpid", 1.24);
    moved(&mut new, known, 1.24);
    // The reference moved with the canary: the host's speed, which a
    // cost per crossing does not describe.
    new.machine_states.reference.as_mut().unwrap().ticks *= 1.24;
    let cmp = compare::compare(&old, "old", &new, "new", compare::DEFAULT_THRESHOLD_PCT);
    let shift = cmp.level_shift.as_ref().unwrap();
    assert_eq!(shift.reference_held, Some(false), "{shift:?}");
    assert!(shift.beyond.is_empty(), "{shift:?}");
}

#[test]
fn a_trace_event_enabled_between_the_runs_is_named_as_the_shifts_cause() {
    let (old, mut new) = around_a_trace_event(fixture());
    let known = old.machine_states.model.quiet_canary;
    scale_rows(&mut new, "os/getpid", 1.24);
    moved(&mut new, known, 1.24);
    let cmp = compare::compare(&old, "old", &new, "new", compare::DEFAULT_THRESHOLD_PCT);
    let change = cmp
        .inventory
        .iter()
        .find(|c| c.key == "hooks: trace events enabled")
        .expect("the hook is in the inventory's difference");
    assert_eq!(
        (change.old.as_str(), change.new.as_str()),
        ("none", "raw_syscalls:sys_enter")
    );
    let shift = cmp.level_shift.as_ref().unwrap();
    assert!(
        shift
            .summary
            .contains("a hook on the syscall path changed between the runs (trace events enabled: none -> raw_syscalls:sys_enter)"),
        "{}",
        shift.summary
    );
    // The rows it moved are the shift's, not unexplained, and not lost
    // to the hook's broad "consistent with" either.
    assert_eq!(shift.rows, getpid_rows(&cmp));
    assert!(cmp.unexplained.is_empty(), "{:?}", cmp.unexplained);
    // A run that never read its hooks (before they were read) says
    // nothing of them: no change is made up against it.
    let unread = fixture();
    let cmp = compare::compare(&unread, "old", &new, "new", compare::DEFAULT_THRESHOLD_PCT);
    assert!(cmp.inventory.iter().all(|c| !c.key.starts_with("hooks: ")));
}

#[test]
fn the_hooks_that_changed_are_priced_where_they_are_all_that_changed() {
    let (old, mut new) = around_a_trace_event(fixture());
    let known = old.machine_states.model.quiet_canary;
    let added = 0.24 * known;
    add_ticks(&mut new, "os/getpid", "syscall", added);
    moved(&mut new, known, 1.24);
    let cmp = compare::compare(&old, "old", &new, "new", compare::DEFAULT_THRESHOLD_PCT);
    let toll = cmp
        .hook_toll
        .as_ref()
        .expect("the hook is all that changed");
    assert_eq!(toll.row, "os/getpid syscall");
    assert_eq!(
        toll.changed,
        ["trace events enabled: none -> raw_syscalls:sys_enter"]
    );
    // The ticks the hook added to one syscall, within the row's interval,
    // and the percent of the old figure they are.
    assert!((toll.ticks.value - added).abs() < 1e-6 * added, "{toll:?}");
    let [lo, hi] = toll.ticks.ci95.unwrap();
    assert!(lo < added && added < hi, "{toll:?}");
    let old_ticks = old
        .record("os/getpid", "syscall")
        .and_then(|r| r.cost.as_ref())
        .unwrap()
        .ticks();
    assert!((toll.pct.value - 100.0 * added / old_ticks).abs() < 1e-6);
    let shown = text::render(&cmp, Style::Terminal, 100, text::View::default());
    assert!(shown.contains("the hook changes cost +"), "{shown}");
    assert!(shown.contains("per syscall"), "{shown}");

    // Where the kernel changed too, the change is not the hooks' alone:
    // nothing is priced.
    let mut other_kernel = new.clone();
    other_kernel.inventory.kernel.release.push_str("-next");
    let cmp = compare::compare(&old, "old", &other_kernel, "new", 1.0);
    assert!(cmp.hook_toll.is_none(), "{:?}", cmp.hook_toll);
    // Where nothing changed, there is no hook to price.
    let cmp = compare::compare(&old, "old", &old, "new", 1.0);
    assert!(cmp.hook_toll.is_none());
}

/// A run with a hook in force is priced against the newest stored run of
/// its boot without it, from what the history held before the run
/// measured (`run::Known`, read once): the toll `compare` reads of the two.
#[test]
fn a_run_reads_its_hookless_run_before_it_measures_and_prices_the_hook_after() {
    let (old, new) = around_a_trace_event(fixture());
    let known = old.machine_states.model.quiet_canary;
    let mut measured = new.clone();
    add_ticks(&mut measured, "os/getpid", "syscall", 0.24 * known);
    moved(&mut measured, known, 1.24);
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open(&dir.path().join("h.sqlite"), true).unwrap();
    let id = history.store(&old).unwrap();
    let before = (new.settings.quick, new.settings.cpu);
    let read = Known::read(&history, &new.inventory, before, false);
    // Completing the document takes no history: nothing is read after.
    drop(history);
    read.complete(&mut measured);
    let toll = measured.hook_toll.as_ref().expect("the hook is priced");
    let against = format!("run {id}");
    let cmp = compare::compare(
        &old,
        &against,
        &measured,
        "this run",
        compare::DEFAULT_THRESHOLD_PCT,
    );
    let expected = cmp.hook_toll.expect("compare prices it too");
    assert_eq!(format!("{toll:?}"), format!("{expected:?}"));
    assert_eq!(toll.row, "os/getpid syscall");

    // Without the hook, no stored run is looked for and nothing priced.
    let mut plain = old.clone();
    Known::default().complete(&mut plain);
    assert!(plain.hook_toll.is_none() && plain.attributed.is_empty());
}

/// The run `doc` under seccomp filters on its whole process: its inventory
/// says so, the canary and getpid's crossing variants at `factor`, and
/// (where `no_quiet_round`) those rows' figures from rounds its analysis
/// called slow, as a fast minority taken for the quiet level left them.
fn under_filters(doc: &mut RunDocument, factor: f64, no_quiet_round: bool) {
    let controls = &mut doc.inventory.identity.process_controls;
    controls.insert("Seccomp".into(), "2".into());
    controls.insert("Seccomp_filters".into(), "4".into());
    doc.machine_states.model.quiet_canary *= factor;
    for variant in ["syscall", "libc"] {
        common::scale_variant(doc, "os/getpid", Some(variant), factor);
    }
    let crossing =
        |r: &&mut mitbench::store::results::Record| r.id == "os/getpid" && r.variant != "cached";
    for r in doc.results.iter_mut().filter(crossing) {
        if let Some(cost) = r.cost.as_mut().filter(|_| no_quiet_round) {
            cost.estimator = Basis::NoQuietRound;
        }
    }
}

fn crossing_rows() -> Vec<String> {
    vec!["os/getpid syscall".into(), "os/getpid libc".into()]
}

#[test]
fn a_filter_on_the_whole_process_is_marked_on_its_crossing_rows_whatever_their_rounds_state() {
    for no_quiet_round in [false, true] {
        let old = fixture();
        let mut new = fixture();
        under_filters(&mut new, 1.97, no_quiet_round);
        let cmp = compare::compare(&old, "old", &new, "new", compare::DEFAULT_THRESHOLD_PCT);
        let shift = cmp
            .level_shift
            .as_ref()
            .expect("a doubled canary is a shift");
        assert_eq!(shift.told, ShiftCause::Between);
        for row in &cmp.rows {
            let name = format!("{} {}", row.key.id, row.key.variant);
            let expected = match crossing_rows().contains(&name) {
                true => Verdict::Slower,
                false => Verdict::Same,
            };
            assert_eq!(
                row.verdict, expected,
                "no quiet round {no_quiet_round}: {row:?}"
            );
            assert!(row.note.is_none(), "{row:?}");
        }
        // Explained by the filters, which the inventory names.
        let seccomp = cmp
            .explained
            .iter()
            .find(|e| e.mitigation == "seccomp filters");
        assert_eq!(seccomp.map(|e| e.rows.clone()), Some(crossing_rows()));
        assert!(cmp.unexplained.is_empty(), "{:?}", cmp.unexplained);
        let json = serde_json::to_value(&cmp).unwrap();
        let slower = json["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["verdict"] == "slower")
            .count();
        assert_eq!(slower, 2, "{json}");
    }
}

#[test]
fn a_hosts_slow_stretch_still_leaves_slow_against_quiet_uncompared() {
    // The same rows from slow rounds, but the run's canary came back to
    // the known level when watched: a slow stretch, as the note says.
    let old = fixture();
    let known = old.machine_states.model.quiet_canary;
    let mut new = fixture();
    under_filters(&mut new, 1.24, true);
    above_known(&mut new, known, 1.24);
    let cmp = compare::compare(&old, "old", &new, "new", compare::DEFAULT_THRESHOLD_PCT);
    assert_eq!(
        cmp.level_shift.as_ref().unwrap().told,
        ShiftCause::SlowStretch
    );
    for row in cmp
        .rows
        .iter()
        .filter(|r| r.key.id == "os/getpid" && r.key.variant != "cached")
    {
        assert_eq!(row.verdict, Verdict::Same, "{row:?}");
        assert!(row.note.is_some(), "{row:?}");
    }
}

#[test]
fn a_user_space_row_marked_beside_a_shift_is_not_moved_by_it() {
    let old = fixture();
    let known = old.machine_states.model.quiet_canary;
    let mut new = fixture();
    scale_rows(&mut new, "os/getpid", 1.24);
    // An indirect call 10% slower in the same run: its own finding, not
    // the syscall path's (it makes no syscall).
    common::scale_variant(&mut new, "indirect/call", Some("retpoline"), 1.10);
    moved(&mut new, known, 1.24);
    let cmp = compare::compare(&old, "old", &new, "new", compare::DEFAULT_THRESHOLD_PCT);
    let marked = |id: &str| {
        cmp.rows
            .iter()
            .filter(|r| r.key.id == id && r.verdict == Verdict::Slower)
            .count()
    };
    assert!(marked("indirect/call") > 0, "{:?}", cmp.rows);
    let shift = cmp.level_shift.as_ref().unwrap();
    assert_eq!(shift.rows, getpid_rows(&cmp));
    assert!(
        cmp.unexplained
            .iter()
            .all(|r| r.starts_with("indirect/call"))
    );
    assert_eq!(cmp.unexplained.len(), marked("indirect/call"));
}

#[test]
fn a_slow_stretch_on_the_side_below_a_shift_is_still_not_compared() {
    // The old run's getpid rows stood in a host's slow stretch (no quiet
    // round); the new run's level moved up by a hook. The old side's
    // figures are not its level's: held apart, not read as faster.
    let mut old = fixture();
    for r in old.results.iter_mut().filter(|r| r.id == "os/getpid") {
        if let Some(cost) = r.cost.as_mut() {
            cost.estimator = Basis::NoQuietRound;
        }
    }
    common::scale_variant(&mut old, "os/getpid", Some("syscall"), 1.3);
    let mut new = fixture();
    under_filters(&mut new, 1.1, false);
    let cmp = compare::compare(&old, "old", &new, "new", compare::DEFAULT_THRESHOLD_PCT);
    assert_eq!(cmp.level_shift.as_ref().unwrap().told, ShiftCause::Between);
    let row = cmp
        .rows
        .iter()
        .find(|r| r.key.id == "os/getpid" && r.key.variant == "syscall")
        .unwrap();
    assert_eq!(row.verdict, Verdict::Same, "{row:?}");
    assert!(row.note.is_some(), "{row:?}");
}
