//! compare on stored documents: the same run against itself, a run with a
//! known toll injected into chosen rows and the inventory change that
//! explains it, rows missing on one side, and files it must refuse.

use crate::common;

use common::{mitbench, refused, scale_rows, scale_variant};
use mitbench::compare::{self, RunComparison, Verdict};
use mitbench::export::compare::text::{self, View};
use mitbench::export::text_table::Style;
use mitbench::store::results::RunDocument;
use std::path::Path;

fn fixture() -> RunDocument {
    common::stored_run("run-a.json")
}

#[test]
fn a_run_against_itself_changes_nothing() {
    let doc = fixture();
    let cmp = compare::compare(&doc, "a", &doc, "a", compare::DEFAULT_THRESHOLD_PCT);
    assert!(cmp.inventory.is_empty());
    assert!(cmp.gaps.is_empty());
    assert_eq!(cmp.rows.len(), doc.results.len());
    for row in &cmp.rows {
        assert_eq!(
            row.verdict,
            Verdict::Same,
            "{} {}",
            row.key.id,
            row.key.variant
        );
        assert!(row.change_pct.value.abs() < 1e-9);
    }
    assert!(cmp.unexplained.is_empty() && cmp.explained.is_empty());
}

#[test]
fn an_injected_toll_is_flagged_and_attributed() {
    let old = fixture();
    let mut new = fixture();
    scale_rows(&mut new, "os/getpid", 1.5);
    common::under_a_seccomp_filter(&mut new);
    let cmp = compare::compare(&old, "old", &new, "new", compare::DEFAULT_THRESHOLD_PCT);
    assert!(cmp.inventory.iter().any(|c| c.key == "process: Seccomp"));
    for row in &cmp.rows {
        let name = format!("{} {}", row.key.id, row.key.variant);
        if row.key.id == "os/getpid" {
            assert_eq!(row.verdict, Verdict::Slower, "{name}");
            assert!((row.change_pct.value - 50.0).abs() < 1e-6, "{name}");
            let [lo, hi] = row.change_pct.ci95.unwrap();
            assert!(
                lo <= 50.0 + 1e-6 && 50.0 - 1e-6 <= hi,
                "{name}: [{lo}, {hi}]"
            );
            assert!(
                row.consistent_with.iter().any(|m| m == "seccomp filters"),
                "{name}"
            );
        } else {
            assert_eq!(row.verdict, Verdict::Same, "{name}");
            assert!(row.consistent_with.is_empty(), "{name}");
        }
    }
    let seccomp = cmp
        .explained
        .iter()
        .find(|e| e.mitigation == "seccomp filters")
        .unwrap();
    assert_eq!(seccomp.rows.len(), 3);
    assert!(cmp.unexplained.is_empty());
    assert!(cmp.worst_slowdown_pct().unwrap() > 40.0);
}

#[test]
fn a_change_no_inventory_difference_explains_is_unexplained() {
    let old = fixture();
    let mut new = fixture();
    scale_rows(&mut new, "indirect/call", 0.5);
    let cmp = compare::compare(&old, "old", &new, "new", compare::DEFAULT_THRESHOLD_PCT);
    let faster: Vec<_> = cmp
        .rows
        .iter()
        .filter(|r| r.verdict == Verdict::Faster)
        .collect();
    assert!(faster.iter().all(|r| r.key.id == "indirect/call"));
    assert!(!faster.is_empty());
    assert_eq!(cmp.unexplained.len(), faster.len());
}

#[test]
fn rows_in_one_run_only_are_listed_not_dropped() {
    let old = fixture();
    let mut new = fixture();
    let gone = new.results.remove(0);
    let cmp = compare::compare(&old, "old", &new, "new", compare::DEFAULT_THRESHOLD_PCT);
    assert_eq!(cmp.gaps.len(), 1);
    assert_eq!(cmp.gaps[0].key.variant, gone.variant);
    assert_eq!(cmp.gaps[0].new.as_deref(), Some("absent"));
    assert_eq!(cmp.gaps[0].old, None);
}

#[test]
fn a_change_of_a_cheap_row_is_read_on_its_noise_not_on_a_tick() {
    // The direct call costs 2.7 ticks; 3.5% of it is under a tenth of a
    // tick, which a per-item figure fitted over ~10 us samples resolves
    // (its interval says 0.9%). Its noise decides, not a fixed tick.
    let old = fixture();
    let mut new = fixture();
    scale_variant(&mut new, "indirect/call", Some("direct"), 1.035);
    let cmp = compare::compare(&old, "old", &new, "new", compare::DEFAULT_THRESHOLD_PCT);
    let row = cmp
        .rows
        .iter()
        .find(|r| r.key.id == "indirect/call" && r.key.variant == "direct")
        .unwrap();
    assert!(row.new_ticks - row.old_ticks < 0.1, "{row:?}");
    assert!(row.smallest_detectable_pct.unwrap() < 3.5, "{row:?}");
    assert_eq!(row.verdict, Verdict::Slower, "{row:?}");
    assert!(row.note.is_none(), "{row:?}");
}

#[test]
fn verdicts_need_both_the_interval_and_the_threshold() {
    assert_eq!(
        compare::verdict(5.0, Some([1.0, 9.0]), 2.0),
        Verdict::Slower
    );
    assert_eq!(compare::verdict(5.0, Some([-1.0, 9.0]), 2.0), Verdict::Same);
    assert_eq!(compare::verdict(1.5, Some([1.0, 2.0]), 2.0), Verdict::Same);
    assert_eq!(
        compare::verdict(-5.0, Some([-9.0, -1.0]), 2.0),
        Verdict::Faster
    );
    assert_eq!(compare::verdict(50.0, None, 2.0), Verdict::Same);
}

/// `doc` saved as `name` in `dir`: the path, as the command line takes it.
fn saved(dir: &Path, name: &str, doc: &RunDocument) -> String {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec(doc).unwrap()).unwrap();
    path.display().to_string()
}

#[test]
fn the_command_gates_ci_and_refuses_what_it_cannot_read() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, doc: &RunDocument| saved(dir.path(), name, doc);
    let old = write("old.json", &fixture());
    let mut slower = fixture();
    scale_rows(&mut slower, "os/getpid", 1.5);
    common::under_a_seccomp_filter(&mut slower);
    let new = write("new.json", &slower);

    let out = mitbench(&["compare", &old, &new]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("process: Seccomp: 0 -> 2") || text.contains("process: Seccomp:"));
    assert!(text.contains("seccomp filters"));

    assert_eq!(
        mitbench(&["compare", &old, &new, "--fail-above", "10"])
            .status
            .code(),
        Some(3)
    );
    assert_eq!(
        mitbench(&["compare", &old, &new, "--fail-above", "60"])
            .status
            .code(),
        Some(0)
    );

    let json = mitbench(&["compare", &old, &new, "--json"]);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["rows"][0]["verdict"], "slower");
    // Every row's figure object is its change, in the one shape: the new
    // figure over the old, and schema 4's flat twins of it are gone.
    for row in value["rows"].as_array().unwrap() {
        let figure = &row["figure"];
        assert!(row.get("change_pct").is_none() && row.get("change_ci95_pct").is_none());
        let ratio = row["new_ticks"].as_f64().unwrap() / row["old_ticks"].as_f64().unwrap();
        assert!((figure["value"].as_f64().unwrap() - (ratio - 1.0) * 100.0).abs() < 1e-6);
        assert_eq!(
            (figure["unit"].as_str(), figure["basis"].as_str()),
            (Some("%"), Some("change"))
        );
    }
    let markdown = mitbench(&["compare", &old, &new, "--markdown"]);
    assert!(String::from_utf8_lossy(&markdown.stdout).contains("| os/getpid"));

    // The page: the attributed group with a plot of its rows, nothing
    // fetched, no script.
    let page_path = dir.path().join("cmp.html");
    let out = mitbench(&["compare", &old, &new, "--html", page_path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let page = std::fs::read_to_string(&page_path).unwrap();
    assert!(page.contains("seccomp filters: "), "no attributed group");
    assert!(page.matches("<svg").count() >= 2, "no change plots");
    assert!(page.contains("new ÷ old"));
    assert!(!page.contains("<script"));
    for fetch in ["src=\"http", "href=\"http", "url(http", "@import"] {
        assert!(!page.contains(fetch), "the page fetches something: {fetch}");
    }
    refused(
        &["compare", &old, &new, "--html", "/nonexistent/dir/cmp.html"],
        "cannot write --html /nonexistent/dir/cmp.html",
    );

    let mut older: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(common::fixture_path("run-a.json")).unwrap())
            .unwrap();
    older["schema"] = 2.into();
    let older_path = dir.path().join("older.json");
    std::fs::write(&older_path, older.to_string()).unwrap();
    refused(&["compare", older_path.to_str().unwrap(), &new], "schema 2");
    refused(
        &["compare", "/nonexistent/run.json", &new],
        "cannot read /nonexistent/run.json",
    );
    refused(&["compare", "last~1", "last"], "last");
}

#[test]
fn a_fleet_groups_hosts_by_inventory_and_marks_what_differs() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, doc: &RunDocument| saved(dir.path(), name, doc);
    let mut twin = fixture();
    twin.inventory.identity.hostname = "twin".into();
    let mut filtered = fixture();
    filtered.inventory.identity.hostname = "filtered".into();
    scale_rows(&mut filtered, "os/getpid", 1.5);
    common::under_a_seccomp_filter(&mut filtered);
    let (a, b, c) = (
        write("a.json", &fixture()),
        write("filtered.json", &filtered),
        write("twin.json", &twin),
    );

    let out = mitbench(&["fleet", &a, &b, &c, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let fleet: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The twin has the reference's inventory: same group, next column.
    assert_eq!(fleet["groups"], serde_json::json!([[0, 1], [2]]));
    assert_eq!(fleet["runs"][1]["label"]["host"], "twin");
    assert!(
        fleet["group_differences"][1]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["key"] == "process: Seccomp")
    );
    let rows = fleet["rows"].as_array().unwrap();
    let getpid = rows
        .iter()
        .find(|r| r["id"] == "os/getpid" && r["variant"] == "syscall")
        .unwrap();
    assert_eq!(getpid["differs"], true);
    assert_eq!(
        getpid["against_first"],
        serde_json::json!([null, "~", "slower"])
    );
    assert!(
        rows.iter()
            .filter(|r| r["id"] != "os/getpid")
            .all(|r| r["differs"] == false),
        "only getpid was made slower"
    );

    let out = mitbench(&["fleet", &a, &b, &c, "--markdown"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("| probe"), "{text}");
    assert!(text.contains("differs from group 1 in"), "{text}");
    refused(&["fleet", &a], "2 values required");
    refused(
        &["fleet", &a, "/nonexistent.json"],
        "cannot read /nonexistent.json",
    );
}

#[test]
fn two_run_sets_compare_from_the_history_and_state_what_they_could_see() {
    let (_dir, history) = common::temp_history();
    let history = history.as_str();
    let set: Vec<&str> = "run --quick --quiet --budget 0.05 --forks 2 --probe os/getpid --runs 3"
        .split(' ')
        .chain(["--history", history])
        .collect();
    for _ in 0..2 {
        let out = mitbench(&set);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains("run set stored as runs"));
    }
    let compare_sets = [
        "compare",
        "last~5..last~3",
        "last~2..last",
        "--history",
        history,
    ];
    let out = mitbench(&[&compare_sets[..], &["--json"]].concat());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cmp: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = cmp["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    for row in rows {
        // A run whose row is the slow state's figure is left out of its
        // set where the set's others are quiet ones.
        let runs = row["runs"].as_array().unwrap();
        assert!(
            runs.iter().all(|n| (1..=3).contains(&n.as_u64().unwrap())),
            "{row}"
        );
        let levels: Vec<&str> = row["noise_from"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["level"].as_str().unwrap())
            .collect();
        // On a busy host all but one run of a side can be slow states.
        // Then only the runs' printed next-run intervals say how far a whole
        // run moves; where the runs had forks' spread instead, it is unseen
        // and no power is claimed.
        let one_run_a_side = runs.iter().all(|n| n.as_u64() == Some(1));
        if levels.contains(&"run_level_unknown") {
            assert!(one_run_a_side, "{row}");
            assert!(row["smallest_detectable_pct"].is_null(), "{row}");
            continue;
        }
        let smallest = row["smallest_detectable_pct"]
            .as_f64()
            .unwrap_or_else(|| panic!("a detectable change: {row}"));
        assert!(smallest >= compare::DEFAULT_THRESHOLD_PCT, "{row}");
        let run_strays = if one_run_a_side {
            ["intervals"].as_slice()
        } else {
            ["run_sets", "forks"].as_slice()
        };
        assert!(
            levels.iter().any(|l| run_strays.contains(l)),
            "the sets' own runs say how far a run strays: {row}"
        );
    }
    // The table says it too, where asked how the rows are read.
    let explained: Vec<&str> = compare_sets.iter().copied().chain(["--explain"]).collect();
    let out = mitbench(&explained);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("detectable") && table.contains("between runs:"),
        "{table}"
    );
    // Every run of the history is compared: it says where a level a whole
    // run settles at is read from, how many runs the history needs, and
    // that both sides ran under one boot.
    let words = table.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("a level a whole run settles at")
            && words.contains("`mitbench run --runs 3`")
            && words.contains("between boots: one boot"),
        "{table}"
    );
    // --runs keeps its runs in the history: it refuses what would lose them.
    refused(&["run", "--runs", "2", "--no-history"], "--no-history");
}

// What `compare` prints by default, held as snapshots (insta) on the
// stored run: the same run twice (A/A), a trace event between two runs (a
// level shift and the hook's price), an audit rule, a seccomp filter (a
// mitigation and its rows), and another kernel. Each must say what moved
// first and short: within its line budget at 100 columns, the finding in
// the first lines, every row still in `--all`.

/// The stored run with as sharp a quiet level as a quiet host's, so a
/// shift of the syscall path is read as one (tests/suite/compare/level_shift.rs).
fn sharp_fixture() -> RunDocument {
    let mut doc = fixture();
    doc.machine_states.model.quiet_band = 0.02;
    doc
}

fn shown(cmp: &RunComparison, view: View) -> String {
    text::render(cmp, Style::Terminal, 100, view)
}

/// The comparison printed by default, checked against its line budget and
/// its snapshot.
fn check(name: &str, cmp: &RunComparison, most_lines: usize) -> String {
    let out = shown(cmp, View::default());
    assert!(
        out.lines().count() <= most_lines,
        "{name}: {} lines\n{out}",
        out.lines().count()
    );
    insta::assert_snapshot!(name, out);
    out
}

fn with_utc<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: set before any thread of this test reads the zone; the
    // tests of this file all set the same value.
    unsafe { std::env::set_var("TZ", "UTC") };
    f()
}

#[test]
fn the_same_run_twice_says_nothing_moved_in_a_few_lines() {
    with_utc(|| {
        let doc = sharp_fixture();
        let cmp = compare::compare(&doc, "1", &doc, "2", compare::DEFAULT_THRESHOLD_PCT);
        let out = check("a_a", &cmp, 40);
        assert!(out.lines().nth(2).unwrap().contains("0 of "), "{out}");
        // Every row is still there for whoever asks.
        let all = shown(
            &cmp,
            View {
                all: true,
                explain: false,
            },
        );
        for r in &cmp.rows {
            assert!(all.contains(&r.key.variant), "{}", r.key.variant);
        }
    });
}

#[test]
fn a_trace_event_between_two_runs_is_one_shift_with_its_price_first() {
    with_utc(|| {
        let (old, mut new) = common::around_a_trace_event(sharp_fixture());
        let known = old.machine_states.model.quiet_canary;
        scale_rows(&mut new, "os/getpid", 1.24);
        common::moved(&mut new, known, 1.24);
        let cmp = compare::compare(&old, "1", &new, "2", compare::DEFAULT_THRESHOLD_PCT);
        let out = check("trace_event", &cmp, 80);
        let first: String = out.lines().take(10).collect::<Vec<_>>().join("\n");
        assert!(first.contains("level shift"), "{out}");
        assert!(first.contains("raw_syscalls:sys_enter"), "{out}");
        assert!(first.contains("per syscall"), "{out}");
    });
}

#[test]
fn a_seccomp_filter_between_two_runs_groups_its_rows_under_it() {
    with_utc(|| {
        let old = sharp_fixture();
        let mut new = sharp_fixture();
        scale_rows(&mut new, "os/getpid", 1.5);
        common::under_a_seccomp_filter(&mut new);
        let cmp = compare::compare(&old, "1", &new, "2", compare::DEFAULT_THRESHOLD_PCT);
        let out = check("seccomp", &cmp, 40);
        assert_eq!(out.matches("seccomp filters (").count(), 1, "{out}");
    });
}

#[test]
fn another_kernel_is_named_with_the_rows_it_can_move() {
    with_utc(|| {
        let old = sharp_fixture();
        let mut new = sharp_fixture();
        new.inventory.kernel.release = "6.19.0".into();
        scale_rows(&mut new, "indirect/call", 1.3);
        let cmp = compare::compare(&old, "1", &new, "2", compare::DEFAULT_THRESHOLD_PCT);
        let out = check("kernel", &cmp, 40);
        assert!(out.contains("changed: kernel"), "{out}");
    });
}

#[test]
fn an_audit_rule_between_two_runs_is_named_as_the_shifts_cause() {
    with_utc(|| {
        use mitbench::inventory::audit::Audit;
        use mitbench::inventory::hooks::Reading;
        let audit = |enabled: u32, syscall_rules: usize| Audit {
            enabled,
            auditd_pid: 0,
            rules: syscall_rules,
            syscall_rules,
            never_task: false,
        };
        let mut old = sharp_fixture();
        old.inventory.hooks.audit = Reading::Read(audit(0, 0));
        let known = old.machine_states.model.quiet_canary;
        let mut new = old.clone();
        new.inventory.hooks.audit = Reading::Read(audit(1, 1));
        scale_rows(&mut new, "os/getpid", 1.3);
        common::moved(&mut new, known, 1.3);
        let cmp = compare::compare(&old, "1", &new, "2", compare::DEFAULT_THRESHOLD_PCT);
        let out = check("audit_rule", &cmp, 40);
        let first: String = out.lines().take(10).collect::<Vec<_>>().join("\n");
        assert!(
            first.contains("level shift") && first.contains("audit"),
            "{out}"
        );
    });
}

/// `sharp_fixture` on a guest, with the VM exit's rows.
fn guest_fixture() -> RunDocument {
    let mut doc = sharp_fixture();
    common::with_exit_rows(&mut doc);
    doc
}

#[test]
fn a_guests_exit_that_moved_alone_is_named_a_change_on_the_hosts_side() {
    use mitbench::measure::probes::guest::{EXIT_PROBE, EXITING};
    let host = |cmp: &RunComparison| {
        cmp.explained
            .iter()
            .find(|e| e.mitigation.starts_with("the host's side"))
            .cloned()
    };
    let old = guest_fixture();
    // The same runs: nothing moved, nothing named.
    let same = compare::compare(&old, "1", &old, "2", compare::DEFAULT_THRESHOLD_PCT);
    assert!(host(&same).is_none());
    // The exit 20% dearer, the guest unchanged: the host's side, per exit.
    let mut new = old.clone();
    scale_variant(&mut new, EXIT_PROBE, Some(EXITING), 1.2);
    let cmp = compare::compare(&old, "1", &new, "2", compare::DEFAULT_THRESHOLD_PCT);
    let exit = cmp
        .rows
        .iter()
        .find(|r| r.key.id == EXIT_PROBE && r.key.variant == EXITING)
        .unwrap();
    assert_eq!(exit.verdict, Verdict::Slower);
    let named = host(&cmp).expect("the host's side named");
    let added = exit.new_ticks - exit.old_ticks;
    assert!(
        named
            .mitigation
            .contains(&format!("{added:+.0} ticks an exit")),
        "{named:?}"
    );
    assert!(cmp.unexplained.is_empty(), "{:?}", cmp.unexplained);
    let out = shown(&cmp, View::default());
    assert!(out.contains("the host's side"), "{out}");
    // With the guest's own kernel changed too, the guest may have moved
    // it: not named the host's.
    new.inventory.kernel.release = "6.19.0".into();
    let cmp = compare::compare(&old, "1", &new, "2", compare::DEFAULT_THRESHOLD_PCT);
    assert!(host(&cmp).is_none());
}
