//! What `compare` prints by default, held as snapshots (insta) on the
//! stored run: the same run twice (A/A), a trace event between two runs (a
//! level shift and the hook's price), a seccomp filter between them (a
//! mitigation and its rows), and another kernel. Each must say what moved
//! first and short: within its line budget at 100 columns, the finding in
//! the first lines, every row still in `--all`.

mod common;

use common::scale_rows;
use mitbench::compare::{self, RunComparison};
use mitbench::export::compare::text::{self, View};
use mitbench::export::text_table::Style;
use mitbench::results::RunDocument;

fn fixture() -> RunDocument {
    let mut doc = common::stored_run("run-a.json");
    // As sharp a quiet level as a quiet host's, so a shift of the syscall
    // path is read as one (tests/level_shift.rs).
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
        let doc = fixture();
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
        let (old, mut new) = common::around_a_trace_event(fixture());
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
        let old = fixture();
        let mut new = fixture();
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
        let old = fixture();
        let mut new = fixture();
        new.inventory.kernel.release = "6.19.0".into();
        scale_rows(&mut new, "indirect/call", 1.3);
        let cmp = compare::compare(&old, "1", &new, "2", compare::DEFAULT_THRESHOLD_PCT);
        let out = check("kernel", &cmp, 40);
        assert!(out.contains("changed: kernel"), "{out}");
    });
}
