//! `mitbench history changes` on histories made of a stored run with known
//! changes laid on it: each row's run-to-run noise drawn with a seed, a
//! step at a known run with or without an inventory change, a lone busy
//! run, and two hosts with one cause.

use crate::common;

use common::histories::{Laid, NOTHING, STEP_RUN, history, run};
use common::{mitbench, temp_history};
use mitbench::analysis::changes::Search;
use mitbench::compare::Timeline;
use mitbench::store::history::History;
use std::path::Path;

fn timeline(histories: &[History]) -> Timeline {
    Timeline::of(histories, 1.0, Search::default()).unwrap()
}

#[test]
fn a_step_with_a_kernel_update_is_one_event_at_its_run_naming_the_update() {
    let laid = Laid {
        step: 1.3,
        kernel_update: true,
        ..NOTHING
    };
    for seed in 0..5 {
        let (_dir, path) = temp_history();
        let t = timeline(&[history(&path, "vm", laid, seed)]);
        assert_eq!(t.machines.len(), 1);
        let events = &t.machines[0].events;
        assert_eq!(events.len(), 1, "seed {seed}: {events:#?}");
        let event = &events[0];
        assert_eq!(event.run, STEP_RUN as i64);
        assert_eq!(event.since_run, STEP_RUN as i64 - 1);
        // Every row of os/getpid and no other.
        let getpid_rows = run(1, "vm", laid, seed)
            .results
            .iter()
            .filter(|r| r.id == "os/getpid" && r.cost.is_some())
            .count();
        assert!(event.rows.iter().all(|r| r.probe == "os/getpid"));
        assert_eq!(event.rows.len(), getpid_rows, "seed {seed}");
        for row in &event.rows {
            let [lo, hi] = row.change.ci95.unwrap();
            assert!(lo < 30.0 && 30.0 < hi, "{row:?}");
            assert_eq!((row.runs_before, row.runs_after), (6, 6));
        }
        assert!(
            event
                .changed
                .iter()
                .any(|c| c.key == "kernel release" && c.new == "6.18.45-next"),
            "{:?}",
            event.changed
        );
    }
}

#[test]
fn a_quiet_history_has_no_event_and_a_lone_busy_run_is_none() {
    let busy = Laid {
        busy_run: Some((5, 1.25)),
        ..NOTHING
    };
    for (laid, seed) in [(NOTHING, 10), (busy, 11), (busy, 12)] {
        let (_dir, path) = temp_history();
        let t = timeline(&[history(&path, "vm", laid, seed)]);
        assert!(
            t.machines[0].events.is_empty(),
            "{:#?}",
            t.machines[0].events
        );
    }
}

#[test]
fn a_step_with_nothing_changed_says_so_and_a_fleet_names_the_cause_hosts_share() {
    let unexplained = Laid {
        step: 1.3,
        ..NOTHING
    };
    let (_dir, path) = temp_history();
    let t = timeline(&[history(&path, "vm", unexplained, 20)]);
    assert_eq!(t.machines[0].events.len(), 1);
    assert!(t.machines[0].events[0].changed.is_empty());
    let out = mitbench(&["history", "changes", "--history", &path]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("nothing mitbench records changed"), "{text}");

    let update = Laid {
        step: 1.3,
        kernel_update: true,
        ..NOTHING
    };
    let (_a, first) = temp_history();
    let (_b, second) = temp_history();
    history(&first, "host-a", update, 21);
    history(&second, "host-b", update, 22);
    let out = mitbench(&["history", "changes", "--json", &first, &second]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["machines"].as_array().unwrap().len(), 2);
    let shared = json["shared"].as_array().unwrap();
    assert_eq!(shared.len(), 1, "{shared:#?}");
    let hosts: Vec<&str> = shared[0]["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["host"].as_str().unwrap())
        .collect();
    assert_eq!(hosts, ["host-a", "host-b"]);
    let text = String::from_utf8_lossy(&mitbench(&["history", "changes", &first, &second]).stdout)
        .to_string();
    assert!(
        text.contains("Causes shared by machines") && text.contains("6.18.45-next"),
        "{text}"
    );
}

#[test]
fn too_few_runs_missing_and_foreign_files_are_said_not_panicked() {
    let (_dir, path) = temp_history();
    let mut h = History::open(Path::new(&path), true).unwrap();
    for n in 1..=4 {
        h.store(&run(n, "vm", NOTHING, 30)).unwrap();
    }
    let out = mitbench(&["history", "changes", "--history", &path]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("a change needs 3 runs on each side"));

    let out = mitbench(&["history", "changes", "/nonexistent/h.sqlite"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such history"));

    let dir = tempfile::tempdir().unwrap();
    let foreign = dir.path().join("other.sqlite");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE notes (text TEXT);")
        .unwrap();
    let out = mitbench(&["history", "changes", foreign.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("other than mitbench") && !stderr.contains("panicked"));
}
