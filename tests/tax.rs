//! `mitbench tax` on workloads whose crossings are known: every byte `dd
//! bs=1` copies is a read and a write; a shell that runs `true` N times
//! creates N processes. The counts must hold those, and each priced row
//! must be count x toll.

mod common;

use common::mitbench;

fn tax_of(command: &[&str]) -> serde_json::Value {
    let out = mitbench(&[&["tax", "--json", "--"][..], command].concat());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn row<'a>(tax: &'a serde_json::Value, kind: &str) -> &'a serde_json::Value {
    tax["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} row"))
}

#[test]
fn counts_hold_what_the_workload_did_and_rows_are_count_times_toll() {
    let bytes = 5000;
    let count = format!("count={bytes}");
    let tax = tax_of(&["dd", "if=/dev/zero", "of=/dev/null", "bs=1", &count]);
    assert_eq!(tax["counted"]["exit_code"], 0);
    let syscalls = row(&tax, "syscall");
    match syscalls["count"].as_u64() {
        Some(n) => assert!(n >= 2 * bytes, "{n} syscalls for {bytes} one-byte copies"),
        // Where the tracepoint cannot be counted the row says why.
        None => assert!(
            syscalls["unsupported"]
                .as_str()
                .is_some_and(|s| !s.is_empty())
        ),
    }
    for r in tax["rows"].as_array().unwrap() {
        if let (Some(n), Some(toll), Some(total)) = (
            r["count"].as_f64(),
            r["toll_ns"].as_f64(),
            r["total_ms"].as_f64(),
        ) {
            assert!((n * toll / 1e6 - total).abs() <= total * 1e-9, "{r}");
            assert!(toll > 0.0, "{r}");
        }
    }

    let shell = tax_of(&[
        "sh",
        "-c",
        "for i in 1 2 3 4 5 6 7 8; do /bin/true; done; exit 3",
    ]);
    // The workload's own exit is reported, not taken as mitbench's.
    assert_eq!(shell["counted"]["exit_code"], 3);
    let created = row(&shell, "thread or process creation");
    if let Some(n) = created["count"].as_u64() {
        assert!(n >= 8, "{n} creations for 8 commands");
    }
}

#[test]
fn a_command_that_cannot_start_exits_2() {
    let out = mitbench(&["tax", "--", "/nonexistent/command"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/command"));
    let out = mitbench(&["tax"]);
    assert_eq!(out.status.code(), Some(2));
}

/// `--check` sets a measured difference beside the prediction, and the
/// prediction is the counted syscalls times the measured toll.
#[test]
fn the_check_predicts_from_the_count_and_measures_pairs() {
    let tax = {
        let out = mitbench(&[
            "tax",
            "--json",
            "--check",
            "--pairs",
            "4",
            "--",
            "dd",
            "if=/dev/zero",
            "of=/dev/null",
            "bs=1",
            "count=20000",
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let check = &tax["check"];
    let Some(syscalls) = row(&tax, "syscall")["count"].as_u64() else {
        // No syscall count here: the check cannot run, and says so.
        assert!(tax["check_unsupported"].is_string(), "{tax}");
        return;
    };
    assert_eq!(check["syscalls"], syscalls);
    assert_eq!(check["pairs"], 4);
    assert_eq!(check["rules"], 64);
    let toll = check["toll_per_syscall_ns"].as_f64().unwrap();
    let predicted = check["predicted_ms"].as_f64().unwrap();
    assert!(toll.is_finite());
    assert!((syscalls as f64 * toll / 1e6 - predicted).abs() <= predicted.abs() * 1e-9);
    // The toll is taken between the two regimes by the workload's switches
    // per syscall, over the reference ping-pong's 0.5.
    let switches = row(&tax, "context switch")["count"].as_u64().unwrap();
    let weight = check["switching_weight"].as_f64().unwrap();
    let expected = (switches as f64 / syscalls as f64 / 0.5).min(1.0);
    assert!((weight - expected).abs() < 1e-12, "{weight} vs {expected}");
    for key in ["hot_toll_ns", "switching_toll_ns"] {
        assert!(check[key].as_f64().unwrap().is_finite(), "{key}");
    }
    for key in ["measured_cpu_ms", "measured_wall_ms"] {
        assert!(check[key].as_f64().unwrap().is_finite(), "{key}");
    }
}

/// The shipped workloads do what they say: each is heavy in its own kind
/// of crossing, by at least the count asked for.
#[test]
fn the_shipped_workloads_cross_what_they_name() {
    let expect = [
        ("syscalls", "2000", "syscall", 2000),
        ("pingpong", "1000", "context switch", 2000),
        ("eventfd-pingpong", "1000", "context switch", 2000),
        ("faults", "2000", "page fault", 2000),
        ("threads", "100", "thread or process creation", 100),
    ];
    let exe = env!("CARGO_BIN_EXE_mitbench");
    for (workload, count, kind, at_least) in expect {
        let tax = tax_of(&[exe, "workload", workload, count]);
        assert_eq!(tax["counted"]["exit_code"], 0, "{workload}");
        let crossed = row(&tax, kind);
        match crossed["count"].as_u64() {
            Some(n) => assert!(
                n >= at_least,
                "{workload}: {n} of {kind}, {at_least} expected"
            ),
            None => assert!(crossed["unsupported"].is_string(), "{workload}: {crossed}"),
        }
    }
    let out = mitbench(&["workload", "nonsense"]);
    assert_eq!(out.status.code(), Some(2));
}
