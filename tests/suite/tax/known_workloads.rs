//! `mitbench tax` on workloads whose crossings are known: every byte `dd
//! bs=1` copies is a read and a write; a shell that runs `true` N times
//! creates N processes. The counts must hold those, and each priced row
//! must be count x toll.

use crate::common;

use common::{mitbench, refused};

/// A history holding one quick run of the tolls, made once for all the
/// tests here, so each `tax` prices from it instead of measuring again.
/// It lives in cargo's scratch directory for tests, made afresh by each
/// run of this file (a static is never dropped, so a temporary directory
/// would be left in /tmp).
fn tolls_history() -> &'static str {
    static HISTORY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HISTORY.get_or_init(|| {
        let path = format!("{}/tax-tolls.sqlite", env!("CARGO_TARGET_TMPDIR"));
        let _ = std::fs::remove_file(&path);
        let probes = mitbench::tax::toll_probes();
        let mut args = vec!["run", "--quick", "--quiet", "--history", &path];
        for probe in &probes {
            args.extend(["--probe", probe.as_str()]);
        }
        let out = mitbench(&args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        path
    })
}

/// `mitbench tax --history (the tolls) ARGS`.
fn tax_command(args: &[&str]) -> std::process::Command {
    common::command(&[&["tax", "--history", tolls_history()][..], args].concat())
}

/// The JSON of a `tax --json` that exited 0.
fn json_of(out: std::process::Output) -> serde_json::Value {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn tax_of(command: &[&str]) -> serde_json::Value {
    tax_with(&[], command)
}

/// `tax_of` where what counting costs is not under test: measuring it
/// takes seconds a call.
fn counted_of(command: &[&str]) -> serde_json::Value {
    tax_with(&["--no-correction"], command)
}

fn tax_with(options: &[&str], command: &[&str]) -> serde_json::Value {
    json_of(
        tax_command(&[options, &["--json", "--"], command].concat())
            .output()
            .unwrap(),
    )
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
    // The shares are of the CPU time without the counters where their cost
    // could be measured, and say why not where it could not.
    match tax["without_counters"].as_object() {
        Some(o) => {
            for key in ["per_syscall_ns", "per_switch_ns", "cpu_s"] {
                assert!(o[key]["value"].as_f64().unwrap().is_finite(), "{key}");
            }
            let cpu_s = o["cpu_s"]["value"].as_f64().unwrap();
            let rate = row(&tax, "syscall")["per_cpu_second"].as_f64();
            if let (Some(rate), Some(n)) = (rate, syscalls["count"].as_f64())
                && cpu_s > 0.0
            {
                assert!(
                    (rate - n / cpu_s).abs() <= rate * 1e-9,
                    "rate of {n} in {cpu_s}"
                );
            }
        }
        None => assert!(tax["without_counters_unsupported"].is_string(), "{tax}"),
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
        // The row's figure object is its share of the CPU time (the
        // count over its rate per CPU second), and schema 4's flat twins
        // of it are gone.
        assert!(r.get("share_pct").is_none() && r.get("share_ci95_pct").is_none());
        if let (Some(share), Some(n), Some(rate), Some(total)) = (
            r["figure"]["value"].as_f64(),
            r["count"].as_f64(),
            r["per_cpu_second"].as_f64(),
            r["total_ms"].as_f64(),
        ) {
            if rate <= 0.0 {
                continue;
            }
            let cpu_ms = n / rate * 1e3;
            assert!(
                (share - total / cpu_ms * 100.0).abs() <= share.abs() * 1e-9,
                "{r}"
            );
            assert_eq!(r["figure"]["unit"], "%", "{r}");
        }
    }

    let shell = counted_of(&[
        "sh",
        "-c",
        "for i in 1 2 3 4 5 6 7 8; do /bin/true; done; exit 3",
    ]);
    // The workload's own exit is reported, not taken as mitbench's.
    assert_eq!(shell["counted"]["exit_code"], 3);
    // Asked not to, it does not measure what counting costs, and says so.
    assert!(shell["without_counters"].is_null(), "{shell}");
    assert_eq!(
        shell["without_counters_unsupported"],
        "not measured: --no-correction"
    );
    // Each command is a process (vfork or fork, as the shell likes) and an
    // exec, priced as such; no thread.
    let processes: Option<u64> = ["process creation by vfork", "process creation by fork"]
        .iter()
        .map(|kind| row(&shell, kind)["count"].as_u64())
        .sum();
    let execs = row(&shell, "exec")["count"].as_u64();
    if let (Some(processes), Some(execs)) = (processes, execs) {
        assert!(processes >= 8, "{processes} processes for 8 commands");
        assert!(execs >= 8, "{execs} execs for 8 commands");
        assert_eq!(row(&shell, "thread creation")["count"], 0);
    }
}

/// A workload that only runs programs and one that only starts threads:
/// each creation counted as what it is and priced by the probe that
/// measures that.
#[test]
fn processes_threads_and_execs_are_counted_apart_and_priced_by_their_probes() {
    let exe = env!("CARGO_BIN_EXE_mitbench");
    let execs = counted_of(&[exe, "workload", "execs", "40"]);
    let threads = counted_of(&[exe, "workload", "threads", "40"]);
    let count = |tax: &serde_json::Value, kind: &str| row(tax, kind)["count"].as_u64();
    let Some(forked) = count(&execs, "process creation by fork") else {
        common::skipped("creations by kind: this kernel did not split them by clone flags");
        return;
    };
    // The workload's own start (by mitbench, with a fork and an exec) is
    // counted with it: at most one more of each.
    assert!(
        (40..=41).contains(&forked),
        "{forked} forks for 40 programs"
    );
    let exec = count(&execs, "exec").unwrap();
    assert!((40..=41).contains(&exec), "{exec} execs for 40 programs");
    assert_eq!(count(&execs, "thread creation"), Some(0));
    assert_eq!(count(&execs, "process creation by vfork"), Some(0));
    let started = count(&threads, "thread creation").unwrap();
    assert!((40..=41).contains(&started), "{started} threads for 40");
    assert!(count(&threads, "process creation by fork").unwrap() <= 1);
    assert!(count(&threads, "exec").unwrap() <= 1);
    // Which row priced each: its own probe, an exec less its creation.
    let from = |tax: &serde_json::Value, kind: &str| row(tax, kind)["toll_from"].clone();
    assert_eq!(from(&execs, "process creation by fork"), "os/fork fork");
    assert_eq!(
        from(&execs, "exec"),
        "os/exec vfork+exec less os/fork vfork"
    );
    assert_eq!(from(&threads, "thread creation"), "os/thread pthread");
    for tax in [&execs, &threads] {
        for r in tax["rows"].as_array().unwrap() {
            if let Some(toll) = r["toll_ns"].as_f64() {
                assert!(toll > 0.0 && toll.is_finite(), "{r}");
            }
        }
    }
    // TLB flushes are priced, by reason.
    let local = row(&execs, "TLB flush, local");
    assert_eq!(
        local["toll_from"],
        "memory/shootdown mprotect/alone less os/getpid syscall"
    );
}

#[test]
fn a_command_that_cannot_start_exits_2() {
    refused(
        &["tax", "--", "/nonexistent/command"],
        "/nonexistent/command",
    );
    refused(&["tax"], "<COMMAND>");
}

/// `--check` sets a measured difference beside the prediction, and the
/// prediction is the counted syscalls times the measured toll.
#[test]
fn the_check_predicts_from_the_count_and_measures_pairs() {
    let tax = {
        let out = tax_command(&[
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
        ])
        .output()
        .unwrap();
        json_of(out)
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
    let toll = check["toll_per_syscall_ns"]["value"].as_f64().unwrap();
    let predicted = check["predicted_ms"]["value"].as_f64().unwrap();
    assert!(toll.is_finite());
    assert!((syscalls as f64 * toll / 1e6 - predicted).abs() <= predicted.abs() * 1e-9);
    // The toll is taken between the two regimes by the workload's switches
    // per syscall, over the reference ping-pong's 0.5.
    let switches = row(&tax, "context switch")["count"].as_u64().unwrap();
    let per_syscall = check["switches_per_syscall"].as_f64().unwrap();
    assert!((per_syscall - switches as f64 / syscalls as f64).abs() < 1e-12);
    let weight = check["switching_weight"].as_f64().unwrap();
    let expected = (switches as f64 / syscalls as f64 / 0.5).min(1.0);
    assert!((weight - expected).abs() < 1e-12, "{weight} vs {expected}");
    for key in [
        "hot_toll_ns",
        "switching_toll_ns",
        "measured_cpu_ms",
        "measured_wall_ms",
    ] {
        let value = check[key]["value"].as_f64().unwrap();
        let [lo, hi] = [0, 1].map(|i| check[key]["ci95"][i].as_f64().unwrap());
        assert!(value.is_finite() && lo <= hi, "{key}: {}", check[key]);
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
        ("threads", "100", "thread creation", 100),
        ("execs", "50", "exec", 50),
    ];
    let exe = env!("CARGO_BIN_EXE_mitbench");
    for (workload, count, kind, at_least) in expect {
        let tax = counted_of(&[exe, "workload", workload, count]);
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
    refused(&["workload", "nonsense"], "invalid value 'nonsense'");
}

/// Whether a process is gone (reaped, not even a zombie).
fn gone(pid: i32) -> bool {
    // SAFETY: signal 0 only checks the pid exists.
    unsafe { libc::kill(pid, 0) != 0 }
}

/// Runs `mitbench tax --json ARGS` whose workload prints one line first;
/// `then` gets that line and mitbench's pid while the workload runs.
/// Returns mitbench's exit code and its JSON.
fn tax_after_first_line(
    args: &[&str],
    then: impl FnOnce(&str, i32),
) -> (Option<i32>, serde_json::Value) {
    use std::io::{BufRead, BufReader, Read};
    let mut child = tax_command(&[&["--json"][..], args].concat())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    then(first.trim(), child.id() as i32);
    let mut json = String::new();
    out.read_to_string(&mut json).unwrap();
    let code = child.wait().unwrap().code();
    (code, serde_json::from_str(&json).unwrap())
}

/// `--timeout` stops the workload and what it left running, keeps what was
/// counted, and exits 124.
#[test]
fn a_workload_past_its_timeout_is_stopped_and_its_counts_kept() {
    let mut orphan = 0;
    let (code, tax) = tax_after_first_line(
        &[
            "--timeout",
            // A bound, not a measurement: the timeout has to fall after the
            // shell has started its background sleep and printed its pid,
            // which takes milliseconds; 2 s leaves a slow machine room.
            "2",
            "--",
            "sh",
            "-c",
            "sleep 300 & echo $!; exec sleep 300",
        ],
        |line, _| orphan = line.parse().unwrap(),
    );
    assert_eq!(code, Some(124));
    assert_eq!(tax["counted"]["timed_out"], true);
    assert_eq!(tax["counted"]["leftovers_stopped"], 1, "{tax}");
    assert!(row(&tax, "context switch")["count"].as_u64().is_some());
    assert!(
        gone(orphan),
        "the background sleep {orphan} was left running"
    );
}

/// SIGINT sent to mitbench alone reaches the workload, and what was
/// counted is still printed; the exit code is 130.
#[test]
fn an_interrupt_is_passed_on_and_the_counts_printed() {
    let (code, tax) = tax_after_first_line(
        &["--", "sh", "-c", "echo ready; exec sleep 300"],
        |line, mitbench| {
            assert_eq!(line, "ready");
            // SAFETY: a signal to our own child.
            unsafe { libc::kill(mitbench, libc::SIGINT) };
        },
    );
    assert_eq!(code, Some(130));
    assert_eq!(tax["counted"]["interrupted"], true);
    assert_eq!(tax["counted"]["exit_signal"], libc::SIGINT);
}

/// `--pid --for` counts a running process and its children, ends early
/// when the process does, and a pid that does not exist is bad input.
#[test]
fn a_running_process_is_counted_for_a_while() {
    let mut sleeper = std::process::Command::new("sleep")
        .arg("300")
        .spawn()
        .unwrap();
    let pid = sleeper.id().to_string();
    let tax = json_of(
        tax_command(&["--json", "--no-correction", "--pid", &pid, "--for", "0.2"])
            .output()
            .unwrap(),
    );
    assert_eq!(tax["counted"]["command"][0], "sleep");
    assert!(tax["counted"]["includes"].as_str().unwrap().contains(&pid));
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();

    // A process that ends first ends the count: a shell whose only work is
    // a short sleep, counted for far longer. It is reaped only after the
    // count, so whether it ends before mitbench attaches (a zombie then) or
    // while it counts, the pid is there and the count ends early: nothing
    // here depends on how fast this machine starts mitbench.
    let mut short = std::process::Command::new("sh")
        .args(["-c", "sleep 0.3"])
        .spawn()
        .unwrap();
    let pid = short.id().to_string();
    let out = tax_command(&["--json", "--no-correction", "--pid", &pid, "--for", "600"])
        .output()
        .unwrap();
    short.wait().unwrap();
    let tax = json_of(out);
    assert!(
        tax["counted"]["includes"]
            .as_str()
            .unwrap()
            .contains("it ended after")
    );

    refused(
        &["tax", "--pid", "2147483647", "--for", "1"],
        "no process 2147483647",
    );
    refused(&["tax", "--pid", "1"], "--for <DURATION>");
}

/// `--html` writes the estimate as one self-contained page beside the table:
/// every kind of crossing in it, no script, nothing fetched.
#[test]
fn the_estimate_is_also_a_page() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("tax.html");
    let out = tax_command(&[
        "--no-correction",
        "--html",
        page.to_str().unwrap(),
        "--",
        "dd",
        "if=/dev/zero",
        "of=/dev/null",
        "bs=1",
        "count=1000",
    ])
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let html = std::fs::read_to_string(&page).unwrap();
    for kind in [
        "syscall",
        "context switch",
        "page fault",
        "thread creation",
        "process creation by fork",
        "exec",
        "TLB flush, local",
    ] {
        assert!(html.contains(&format!("<td>{kind}</td>")), "{kind} missing");
    }
    assert!(html.contains("<code>dd if="), "the command is shown");
    assert!(
        html.contains("not measured: --no-correction"),
        "what shares are of"
    );
    assert!(!html.contains("<script") && !html.contains("src=\"http"));
    // Only the page is left in the directory: no temporary file.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

    // A page that cannot be written is bad input, found before the workload
    // runs.
    let out = tax_command(&["--html", "/", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Where the kernel would not split creations or flushes, the wholes are
/// priced at the cheaper toll and say so; a toll whose row the stored run
/// lacks says which.
#[test]
fn wholes_are_priced_at_the_cheaper_toll_and_a_missing_row_is_named() {
    use mitbench::tax::count::{Count, Counted};
    use mitbench::tax::crossing::Crossing;
    let tolls = common::stored_run("default-run.json");
    let count = |kind: Crossing| Count {
        kind,
        source: "a test".into(),
        count: Some(1000),
        unsupported: None,
    };
    let counted = Counted::of(
        vec![
            count(Crossing::Creation),
            count(Crossing::TlbFlush),
            count(Crossing::Exec),
        ],
        Default::default(),
    );
    let tax = mitbench::tax::estimate(counted, &tolls, "a fixture".into(), Err("none".into()));
    let row = |kind: Crossing| tax.rows.iter().find(|r| r.kind == kind).unwrap();
    let created = row(Crossing::Creation);
    assert_eq!(created.toll_from, "os/thread pthread");
    assert!(created.toll_note.unwrap().contains("cheapest"));
    let flushes = row(Crossing::TlbFlush);
    assert_eq!(
        flushes.toll_from,
        "memory/shootdown mprotect/alone less os/getpid syscall"
    );
    assert!(flushes.toll_note.unwrap().contains("local"));
    assert!(flushes.toll.unwrap().value > 0.0);
    // The stored run predates os/exec: the exec row is counted, not priced.
    let exec = row(Crossing::Exec);
    assert!(exec.toll.is_none());
    assert!(
        exec.toll_from.contains("os/exec vfork+exec"),
        "{}",
        exec.toll_from
    );
    assert!(
        exec.toll_from.contains("not measured"),
        "{}",
        exec.toll_from
    );
}

/// `tax --json -- mitbench workload syscalls` against `history`, the tax
/// (and its workload) under a seccomp filter where `filtered`.
fn getpid_taxed(history: &str, filtered: bool) -> serde_json::Value {
    use std::os::unix::process::CommandExt;
    let mitbench_bin = env!("CARGO_BIN_EXE_mitbench");
    let mut command = common::command(&[
        "tax",
        "--history",
        history,
        "--json",
        "--",
        mitbench_bin,
        "workload",
        "syscalls",
    ]);
    if filtered {
        let program = mitbench::tax::inject::every_syscall_filter(8);
        // SAFETY: only prctl calls between fork and exec; the program
        // lives until exec.
        unsafe {
            command.pre_exec(move || mitbench::tax::inject::install(&program));
        }
    }
    let out = command.output().unwrap();
    let tax = json_of(out);
    assert_eq!(tax["counted"]["exit_code"], 0, "the workload failed: {tax}");
    tax
}

#[test]
fn each_mitigation_is_priced_by_its_attributed_part_or_named_with_its_boot() {
    use mitbench::store::history::History;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    std::fs::copy(tolls_history(), &path).unwrap();
    let h = path.to_str().unwrap();
    let per = |tax: &serde_json::Value, name: &str| -> serde_json::Value {
        tax["per_mitigation"]["parts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["mitigation"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no part for {name}: {tax}"))
    };
    // The tolls' run alone: no set separates anything; each kernel
    // mitigation in force names the boot of the plan that would.
    let alone = getpid_taxed(h, false);
    assert!(alone["per_mitigation"]["attributed_over"].is_null());
    for part in alone["per_mitigation"]["parts"].as_array().unwrap() {
        if part["share_pct"].is_null() {
            assert!(part["needs_boot"].as_str().is_some(), "{part}");
            // Keyed as the price list is: the file, and the catalogue's
            // mitigations its line puts in force.
            assert_eq!(
                part["vulnerabilities"],
                serde_json::json!([part["mitigation"]])
            );
            assert!(!part["ids"].as_array().unwrap().is_empty(), "{part}");
        }
    }
    // A set made under a seccomp filter whose null syscall is 1.5x the
    // plain one's: the filter's part is attributed over the two sets.
    let mut history = History::open(&path, false).unwrap();
    let mut filtered = history.load(1).unwrap();
    common::under_a_seccomp_filter(&mut filtered);
    common::scale_rows(&mut filtered, "os/getpid", 1.5);
    filtered.started_at = "2099-01-01T00:00:00+00:00".into();
    history.store(&filtered).unwrap();
    drop(history);
    // A workload outside any filter pays none of it.
    let plain = getpid_taxed(h, false);
    assert!(
        plain["per_mitigation"]["attributed_over"].is_string(),
        "{plain}"
    );
    let part = per(&plain, "seccomp filter");
    assert!(part["share_pct"].is_null(), "{part}");
    assert!(part["from"].as_str().unwrap().contains("not on"), "{part}");
    // Under a filter it pays the part on each syscall: positive, inside
    // its interval, and no more than all its syscalls' share.
    let under = getpid_taxed(h, true);
    let part = per(&under, "seccomp filter");
    let share = part["share_pct"].as_f64().unwrap();
    let [lo, hi] = [0, 1].map(|i| part["share_ci95_pct"][i].as_f64().unwrap());
    assert!(share > 0.0 && lo <= share && share <= hi, "{part}");
    let syscalls = row(&under, "syscall")["figure"]["value"].as_f64().unwrap();
    assert!(share < syscalls, "{share} of {syscalls}");
}

/// Three runs plain and three under a filter that makes the null syscall
/// 1.5x, copies of `base` whose getpid rows each stray by `stray()`, as
/// the wrappers' sets would be stored.
fn plain_and_filtered(
    base: &mitbench::store::results::RunDocument,
    mut stray: impl FnMut() -> f64,
) -> Vec<mitbench::attribute::NamedSet> {
    let mut set = |filter: bool| -> Vec<mitbench::store::results::RunDocument> {
        (0..3)
            .map(|_| {
                let mut doc = base.clone();
                let factor = stray() * if filter { 1.5 } else { 1.0 };
                common::scale_rows(&mut doc, "os/getpid", factor);
                if filter {
                    common::under_a_seccomp_filter(&mut doc);
                }
                doc
            })
            .collect()
    };
    let plain = set(false);
    vec![
        mitbench::attribute::NamedSet {
            name: "plain".into(),
            runs: plain,
        },
        mitbench::attribute::NamedSet {
            name: "filtered".into(),
            runs: set(true),
        },
    ]
}

/// A workload's share per mitigation against the truth: three runs a set,
/// plain and under a filter that makes the null syscall 1.5x, each run's
/// figures moved by a level of its own three times the noise its forks
/// claim (the forks share it and cannot show it: only the sets' runs can);
/// the filter's share of a workload of a million syscalls in one CPU second
/// must hold the true share (half a null syscall each) in 90-98% of trials,
/// each bound moved out by what chance allows over the trials.
#[test]
fn a_known_part_is_recovered_within_its_interval() {
    use mitbench::attribute::BootNoise;
    let base = common::stored_run("default-run.json");
    // The row tax prices a syscall by: glibc's getpid(), as programs call.
    let getpid = base
        .results
        .iter()
        .find(|r| r.id == "os/getpid" && r.variant == "libc")
        .and_then(|r| r.cost.clone())
        .unwrap();
    // One run's figure strays by its forks' spread over the forks; its own
    // level, three times that, is what the model must find elsewhere.
    let sd = 3.0 * getpid.between_forks_pct.unwrap() / 100.0 / (getpid.forks as f64).sqrt();
    let syscalls = 1_000_000u64;
    let truth = syscalls as f64 * 0.5 * getpid.ns() / 1e9 * 100.0;
    let plan = mitbench::plan::plan(&base.inventory, 3);
    let mut rng = fastrand::Rng::with_seed(4242);
    let mut normal = move || {
        let (u, v) = (rng.f64().max(1e-12), rng.f64());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    };
    let (trials, mut covered, mut halves, mut shares) = (200, 0, Vec::new(), Vec::new());
    for _ in 0..trials {
        let sets = plain_and_filtered(&base, || (sd * normal()).exp());
        let recognised = mitbench::attribute::recognise(&sets).unwrap();
        let a = mitbench::attribute::attribute(&sets, recognised, 2.0, &BootNoise::default());
        let counted = common::syscalls_under_a_filter(syscalls);
        let tax = mitbench::tax::estimate(counted, &base, "a fixture".into(), Err("none".into()));
        let per = mitbench::tax::parts::per_mitigation(&tax, Some(&a), &plan);
        let filter = per
            .parts
            .iter()
            .find(|p| p.mitigation == "seccomp filter")
            .unwrap();
        let share = filter.share.unwrap();
        let [lo, hi] = share.ci95.unwrap();
        covered += usize::from(lo <= truth && truth <= hi);
        halves.push((hi - lo) / 2.0 / truth);
        shares.push(share.value);
        // The kernel's mitigations, in every set, name their boots.
        assert!(
            per.parts
                .iter()
                .filter(|p| p.share.is_none())
                .all(|p| p.needs_boot.is_some())
        );
    }
    let rate = covered as f64 / trials as f64;
    halves.sort_by(f64::total_cmp);
    let half = halves[halves.len() / 2];
    let mean = shares.iter().sum::<f64>() / shares.len() as f64;
    eprintln!(
        "the filter's share of the workload ({truth:.2}%) held in {rate:.2} of {trials} trials; \
         median half-width {:.1}% of it; mean estimate {mean:.3}%",
        half * 100.0
    );
    let (least, most) = (
        common::at_least_by_chance(0.90, trials),
        common::at_most_by_chance(0.98, trials),
    );
    assert!((least..=most).contains(&rate), "covered {rate}");
    // Informative, and not biased: the interval is a fraction of the share,
    // and the estimates centre on the truth.
    assert!(half < 0.5, "half-width {half}");
    assert!(
        (mean / truth - 1.0).abs() < 0.02,
        "mean {mean} against {truth}"
    );
}

/// A row whose sets are not comparable (some set's figure the slow
/// state's) prices no part: a row that prices none of a mitigation's
/// crossings leaves its share as it was, the row that prices them all
/// leaves it without a share, and the line says why.
#[test]
fn a_part_is_not_priced_from_sets_that_are_not_comparable() {
    use mitbench::attribute::BootNoise;
    use mitbench::tax::count::{Count, Counted};
    use mitbench::tax::crossing::Crossing;
    let base = common::stored_run("default-run.json");
    let plan = mitbench::plan::plan(&base.inventory, 3);
    let mut run = 0;
    let sets = plain_and_filtered(&base, || {
        run += 1;
        1.0 + 0.002 * f64::from(run % 3)
    });
    let recognised = mitbench::attribute::recognise(&sets).unwrap();
    let mut a = mitbench::attribute::attribute(&sets, recognised, 2.0, &BootNoise::default());
    let count = |kind, count| Count {
        kind,
        source: "a test".into(),
        count: Some(count),
        unsupported: None,
    };
    let counted = Counted::of(
        vec![
            count(Crossing::Syscall, 1_000_000),
            count(Crossing::ContextSwitch, 10_000),
        ],
        common::one_seccomp_filter(),
    );
    let tax = mitbench::tax::estimate(counted, &base, "a fixture".into(), Err("none".into()));
    fn note(a: &mut mitbench::attribute::Attribution, id: &str, variant: &str) {
        let row = a
            .rows
            .iter_mut()
            .find(|r| r.key.id == id && r.key.variant == variant)
            .unwrap();
        row.note = Some("some sets' figure is the slow state's".into());
    }
    let filter = |a: &mitbench::attribute::Attribution| {
        let per = mitbench::tax::parts::per_mitigation(&tax, Some(a), &plan);
        per.parts
            .into_iter()
            .find(|p| p.mitigation == "seccomp filter")
            .unwrap()
    };
    let before = filter(&a);
    assert!(before.share.is_some(), "{before:?}");
    // The filter is priced on syscalls only: a context switch's row does
    // not touch its share.
    note(&mut a, "os/ctxswitch", "futex/same-cpu");
    let after = filter(&a);
    assert_eq!(
        (after.share, after.from.as_str()),
        (before.share, before.from.as_str())
    );
    note(&mut a, "os/getpid", "libc");
    let none = filter(&a);
    assert!(none.share.is_none(), "{none:?}");
    assert!(none.from.contains("not comparable"), "{}", none.from);
}

/// The syscall row is priced as a program pays it (glibc's getpid()), and
/// tax says how much of that is the return after the crossing: getpid's
/// toll from the tolls' run times the syscalls counted, as a share of the
/// CPU time, with the toll's interval; said in the text.
#[test]
fn the_return_after_the_crossing_is_named_within_the_syscall_price() {
    let tolls = common::stored_run("syscall-return-run.json");
    let toll = mitbench::answer::returns::of(&tolls)
        .into_iter()
        .find(|t| t.crossing == "getpid")
        .and_then(|t| t.extra_ns)
        .unwrap();
    let syscalls = 1_000_000u64;
    let counted = common::syscalls_under_a_filter(syscalls);
    let tax = mitbench::tax::estimate(counted, &tolls, "a fixture".into(), Err("none".into()));
    let share = tax.syscall_return.as_ref().unwrap();
    assert_eq!(share.per_syscall_ns, toll);
    // A million syscalls in one CPU second: ns per syscall x 1e6 / 1e9 s.
    let pct = share.share_pct.unwrap();
    assert!((pct.value - toll.value / 10.0).abs() < 1e-9, "{pct:?}");
    let [lo, hi] = pct.ci95.unwrap();
    assert!(lo < pct.value && pct.value < hi, "{pct:?}");
    // The syscall row reads glibc's getpid(), not the raw instruction.
    let row = tax
        .rows
        .iter()
        .find(|r| r.kind == mitbench::tax::crossing::Crossing::Syscall)
        .unwrap();
    assert!(
        row.toll_from.starts_with("os/getpid libc"),
        "{}",
        row.toll_from
    );
    let (text, prose) = rendered(&tax);
    assert!(prose.contains("is the return after the crossing"), "{text}");
    // That run measured no refill: nothing is said of one.
    assert!(tax.syscall_return_refill.is_none());
    assert!(!prose.contains("refilling"), "{text}");
    // Tolls from a run that measured the refills: what refilling after each
    // syscall would win back, at that run's price, less than the return's
    // whole share and said in the text.
    let refilled = common::stored_run("refill-run.json");
    let counted = common::syscalls_under_a_filter(syscalls);
    let tax = mitbench::tax::estimate(counted, &refilled, "a fixture".into(), Err("none".into()));
    let (whole, won) = (
        tax.syscall_return.as_ref().unwrap(),
        tax.syscall_return_refill.as_ref().unwrap(),
    );
    let (whole, won) = (whole.share_pct.unwrap(), won.share_pct.unwrap());
    assert!(
        0.0 < won.value && won.value < whole.value,
        "{won:?} of {whole:?}"
    );
    let (text, prose) = rendered(&tax);
    assert!(
        prose.contains("refilling the return stack after each crossing"),
        "{text}"
    );
    // Tolls from a run that did not measure the probe: the share is not
    // known, and the text says why.
    let older = common::stored_run("default-run.json");
    let counted = common::syscalls_under_a_filter(syscalls);
    let tax = mitbench::tax::estimate(counted, &older, "a fixture".into(), Err("none".into()));
    assert!(tax.syscall_return.is_none());
    let why = tax.syscall_return_unmeasured.as_deref().unwrap();
    assert!(why.contains("did not measure os/syscall-return"), "{why}");
    let (text, prose) = rendered(&tax);
    assert!(
        prose.contains("is the return after the crossing is not known"),
        "{text}"
    );
}

/// The tax's terminal text, and the same with its lines run together
/// (a sentence the table wrapped reads whole).
fn rendered(tax: &mitbench::tax::Tax) -> (String, String) {
    let text =
        mitbench::export::tax::render(tax, mitbench::export::text_table::Style::Terminal, 100);
    let prose = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (text, prose)
}
