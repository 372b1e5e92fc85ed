//! The command line as a user meets it: errors before anything runs, exit
//! codes, and the JSON a run writes.

use crate::common;

use common::{NO_HISTORY_HOME, copy_tree, mitbench, refused};
use std::path::Path;
use std::process::{Command, Output};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn unknown_probe_exits_2_with_the_closest_ids() {
    refused(
        &["run", "--probe", "os/getpd"],
        "no probe matches 'os/getpd'; closest: os/getpid",
    );
    refused(
        &["run", "--probe", "os/*", "--probe", "zzz"],
        "families: harness, os",
    );
}

#[test]
fn invalid_values_exit_2_with_a_reason() {
    for (args, reason) in [
        (
            &["run", "--cpu", "99"][..],
            "CPU 99 is not one this process may run on",
        ),
        (
            &["run", "--target-ci", "-1"][..],
            "must be a percentage above 0",
        ),
        (
            &["run", "--target-ci", "100"][..],
            "must be a percentage above 0",
        ),
        (
            &["run", "--target-ci", "NaN"][..],
            "must be a percentage above 0",
        ),
        (
            &["run", "--budget", "0"][..],
            "must be a number of seconds above 0",
        ),
        (&["run", "--budget", "soon"][..], "'soon' is not a number"),
        (&["--cpu", "-3"][..], "invalid value"),
        (
            &["inventory", "--root", "/no/such/dir"][..],
            "is not a directory",
        ),
    ] {
        refused(args, reason);
    }
}

#[test]
fn unwritable_outputs_fail_before_measuring() {
    let stderr = refused(
        &[
            "run",
            "--probe",
            "os/fork",
            "--json",
            "/no/such/dir/out.json",
        ],
        "cannot write --json /no/such/dir/out.json: No such file or directory",
    );
    assert!(!stderr.contains(".tmp"), "names a temporary file: {stderr}");
    let dir = tempfile::tempdir().unwrap();
    refused(
        &["run", "--json", dir.path().to_str().unwrap()],
        "it is a directory",
    );
    refused(
        &["run", "--round-log", "/no/such/dir/rounds.log"],
        "cannot write --round-log /no/such/dir/rounds.log",
    );
}

#[test]
fn run_writes_a_complete_json_document_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    let out = mitbench(&[
        "run",
        "--quiet",
        "--probe",
        "os/getpid",
        "--probe",
        "harness/*",
        "--budget",
        "0.2",
        "--json",
        path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("os/getpid") && table.contains(" base "),
        "{table}"
    );
    // Only the finished file is left in the directory.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into())
        .collect();
    assert_eq!(names, vec!["run.json".to_string()]);

    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(doc["schema"], 5);
    assert_eq!(doc["tool_version"], env!("CARGO_PKG_VERSION"));
    assert!(doc["started_at"].is_string() && doc["settings"].is_object());
    assert!(doc["settings"]["order_seed"].is_u64());
    assert_eq!(doc["interrupted"], false);
    assert!(doc["inventory"]["tsc_mhz"].as_f64().unwrap() > 0.0);
    let states = &doc["machine_states"];
    assert!(states["readings"].as_u64().unwrap() > 0);
    assert!(states["summary"].as_str().unwrap().starts_with("machine: "));
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 4, "floor + three getpid variants");
    for r in results {
        assert!(r["id"].is_string() && r["family"].is_string() && r["variant"].is_string());
        assert!(r["params"].is_object());
        assert!(["baseline", "compared", "layout-control"].contains(&r["role"].as_str().unwrap()));
        assert!(r["unsupported"].is_null());
        let c = &r["cost"];
        for key in ["ns_per_tick", "all_states_median_ticks"] {
            assert!(c[key].is_f64(), "cost.{key} is not a number: {}", c[key]);
        }
        // Schema 5: the figures typed, the flat twins of schema 4 gone.
        for gone in [
            "ticks",
            "ns",
            "ci95_ticks",
            "ci95_ns",
            "speed_normalized_ns",
        ] {
            assert!(c.get(gone).is_none(), "cost.{gone} is still written");
        }
        let cost = c["rounds_ticks"]["value"].as_f64().unwrap();
        let rounds = r["rounds"]["each"].as_array().unwrap();
        assert_eq!(rounds.len() as u64, r["rounds"]["total"].as_u64().unwrap());
        assert!(c["rounds_used"].as_u64().unwrap() <= rounds.len() as u64);
        for round in rounds {
            assert!(round["n"].as_u64().unwrap() > 0);
            // A round lifted inside it by a burst its canaries missed is of
            // neither level (analysis::rounds::interrupted).
            let state = round["state"].as_str().unwrap();
            assert!(["quiet", "slow", "interrupted"].contains(&state), "{state}");
        }
        if let Some(ci) = c["rounds_ticks"]["ci95"].as_array() {
            assert!(ci[0].as_f64().unwrap() <= cost && cost <= ci[1].as_f64().unwrap());
        } else {
            let used = c["rounds_used"].as_u64().unwrap();
            assert!(
                used < 5,
                "an interval from five used rounds on; {used} used"
            );
        }
        assert!(c["target_met"].is_boolean() && r["rounds"]["stopped"].is_string());
        // The figure object: the figure the table shows, in ns, in the one
        // shape every document writes a figure in.
        let figure = &c["figure"];
        assert_eq!(figure["unit"], "ns", "{figure}");
        assert!(["quiet", "slow"].contains(&figure["level"].as_str().unwrap()));
        assert!(["next-run", "at-reference-speed"].contains(&figure["basis"].as_str().unwrap()));
        assert!(figure["stands_on"].is_string(), "{figure}");
        let shown = match c["at_reference"]["ticks"]["value"].as_f64() {
            Some(ticks) => ticks,
            None => cost,
        } * c["ns_per_tick"].as_f64().unwrap();
        let value = figure["value"].as_f64().unwrap();
        assert!((value - shown).abs() <= 1e-9 * shown.abs(), "{figure}");
        if let Some(ci) = figure["ci95"].as_array() {
            let [lo, hi] = [0, 1].map(|i| ci[i].as_f64().unwrap());
            assert!(lo <= shown && shown <= hi, "{figure}");
        }
        // Counters come from a round of their own, never a timed one.
        let counters = r["counters"]["status"].as_str().unwrap();
        assert!(["counted", "unavailable"].contains(&counters), "{counters}");
        assert!(r["counters"]["counting_round_ticks"].is_f64());
        // Absent counters say why in a kind a program reads, never a number.
        let why = if counters == "unavailable" {
            &r["counters"]
        } else {
            &r["counters"]["values"]["hardware"]
        };
        if why["status"] == "unavailable" {
            assert!(
                why["kind"].is_string() && why["reason"].is_string(),
                "{why}"
            );
        }
        // The baseline is not compared with itself.
        assert_eq!(r["vs_baseline"].is_null(), r["role"] == "baseline");
    }
    // The ratio and the difference to the baseline come from the same
    // pairs of rounds, so they agree in sign, and each sits in its interval.
    let libc = results
        .iter()
        .find(|r| r["id"] == "os/getpid" && r["variant"] == "libc")
        .unwrap();
    let ratio = libc["vs_baseline"]["ratio"].as_f64().unwrap();
    let delta = libc["vs_baseline"]["delta_ticks"].as_f64().unwrap();
    assert_eq!(ratio > 1.0, delta > 0.0, "ratio {ratio}, delta {delta}");
    if let Some(ci) = libc["vs_baseline"]["ratio_ci95"].as_array() {
        assert!(ci[0].as_f64().unwrap() <= ratio && ratio <= ci[1].as_f64().unwrap());
    }
}

#[test]
fn list_shows_every_probe_with_support() {
    let out = mitbench(&["list", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let listing: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = listing.iter().map(|p| p["id"].as_str().unwrap()).collect();
    for id in [
        "harness/floor",
        "os/getpid",
        "os/clock_gettime",
        "os/ctxswitch",
        "os/thread",
        "os/fork",
    ] {
        assert!(ids.contains(&id), "{id} missing from list");
    }
    for probe in &listing {
        assert!(
            probe["seed"].is_string()
                && probe["family"].is_string()
                && probe["requirements"].is_array()
        );
        let variants = probe["variants"].as_array().unwrap();
        assert!(!variants.is_empty());
        for v in variants {
            let name = v["name"].as_str().unwrap();
            assert!(
                probe["unsupported"].get(name).is_some(),
                "{name}: support not stated"
            );
        }
    }
    // Every compiler flag set states its exact flags and the compiler.
    let cflags: Vec<&serde_json::Value> =
        listing.iter().filter(|p| p["family"] == "cflags").collect();
    assert_eq!(cflags.len(), 3);
    for probe in &cflags {
        for v in probe["variants"].as_array().unwrap() {
            let flags = v["params"]["flags"].as_str().unwrap();
            assert!(flags.starts_with("-O2 "), "{flags}");
            assert!(!v["params"]["compiler"].as_str().unwrap().is_empty());
        }
        assert_eq!(probe["variants"][0]["name"], "plain");
        assert_eq!(probe["variants"][0]["role"], "baseline");
    }
    let text = mitbench(&["list"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("os/ctxswitch"));
    assert!(
        text.contains("Compiler flag sets of the cflags family ("),
        "{text}"
    );
    assert!(text.contains("-mindirect-branch=thunk-extern -mindirect-branch-register"));
}

#[test]
fn inventory_of_a_fixture_tree() {
    let out = mitbench(&["inventory", "--json", "--root", &fixture("intel-pti-ibrs")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let inv: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(inv["tsc_mhz"], 2394.381);
    assert_eq!(inv["cpu"]["vulnerabilities"]["meltdown"], "Mitigation: PTI");
    let text = mitbench(&["inventory", "--root", &fixture("mitigations-off")]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("mitigations=off") && text.contains("unknown"),
        "{text}"
    );
}

/// A run whose terminal went away (stdout and stderr both closed pipes)
/// still writes its whole JSON and exits 0.
#[test]
fn a_run_with_closed_stdout_and_stderr_still_writes_its_results() {
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mitbench"))
        .args(FLOOR_RUN)
        .args(["--no-history", "--json", json.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(doc["results"][0]["cost"]["rounds_ticks"]["value"].is_f64());
}

/// A write error on an output (here the file-size limit a full disk would
/// be) loses that file only: no partial file or temporary is left, the
/// table is printed, the other outputs are written, and the exit is 1 with
/// the reason.
#[test]
fn an_output_that_cannot_be_written_costs_only_that_file() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let markdown = dir.path().join("out.md");
    let mut command = Command::new(env!("CARGO_BIN_EXE_mitbench"));
    command
        .args(FLOOR_RUN)
        .args(["--no-history", "--json", json.to_str().unwrap()])
        .args(["--export-markdown", markdown.to_str().unwrap()]);
    // SAFETY: setrlimit and signal are async-signal-safe; the ignored
    // SIGXFSZ turns a write past the limit into EFBIG, as a full disk
    // turns it into ENOSPC.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 8 << 10,
                rlim_max: 8 << 10,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &limit);
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    let out = command.output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("writing") && err.contains("out.json"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("harness/floor"));
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["out.md"], "the JSON or a temporary was left");
    assert!(std::fs::metadata(&markdown).unwrap().len() < 8 << 10);
}

/// A 10 MB vulnerabilities file is not read (a sysfs attribute is one
/// page); a command line with a newline and an escape sequence is shown
/// escaped in the terminal and kept exact in the JSON.
#[test]
fn hostile_machine_files_are_bounded_and_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    copy_tree(Path::new(&fixture("amd-epyc-vm")), &root);
    let vulnerabilities = root.join("sys/devices/system/cpu/vulnerabilities");
    std::fs::create_dir_all(&vulnerabilities).unwrap();
    std::fs::write(vulnerabilities.join("huge"), vec![b'A'; 10 << 20]).unwrap();
    let cmdline = "quiet\nmitigations=off \u{1b}[2J\u{1b}]0;owned\u{7}";
    std::fs::write(root.join("proc/cmdline"), cmdline).unwrap();
    let root = root.to_str().unwrap();

    let out = mitbench(&["inventory", "--json", "--root", root]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        out.stdout.len() < 1 << 20,
        "{} bytes of JSON",
        out.stdout.len()
    );
    let inv: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        inv["cpu"]["vulnerabilities"]["huge"],
        "unreadable: larger than 4096 bytes"
    );
    assert_eq!(inv["kernel"]["cmdline"], cmdline);

    let out = mitbench(&["inventory", "--root", root]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text:?}"
    );
    assert!(text.contains("quiet\\nmitigations=off \\x1b[2J"), "{text}");
    let cmdline_lines = text.lines().filter(|l| l.starts_with("cmdline")).count();
    assert_eq!(cmdline_lines, 1, "{text}");
}

#[test]
fn help_names_the_subcommands() {
    let out = mitbench(&["--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    for word in ["run", "list", "inventory", "--quick", "--probe", "--json"] {
        assert!(help.contains(word), "--help lacks {word}");
    }
}

/// A reader that stops early (`mitbench list | head`) ends the command
/// quietly with status 0: no panic, no message. The reading end is closed
/// before the command writes, so its write meets a closed pipe.
#[test]
fn a_closed_stdout_ends_a_listing_quietly() {
    use std::process::Stdio;
    let (root, run) = (fixture("amd-epyc-vm"), fixture("run-a.json"));
    let commands: [&[&str]; 5] = [
        &["list"],
        &["list", "--json"],
        &["inventory", "--root", &root],
        &["inventory", "--json", "--root", &root],
        &["compare", &run, &run],
    ];
    for args in commands {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mitbench"))
            .args(args)
            .env("XDG_DATA_HOME", NO_HISTORY_HOME)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?} said: {err}");
    }
}

/// The shortest real run there is.
const FLOOR_RUN: [&str; 7] = [
    "run",
    "--quick",
    "--probe",
    "harness/floor",
    "--budget",
    "0.05",
    "--quiet",
];

#[test]
fn runs_are_kept_in_the_history_and_compared_by_name() {
    let (_dir, history) = common::temp_history();
    let history = history.as_str();
    for _ in 0..2 {
        let out = mitbench(&[&FLOOR_RUN[..], &["--history", history]].concat());
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(stderr(&out).contains("stored as run"), "{}", stderr(&out));
    }
    let listed = mitbench(&["history", "--history", history, "--json"]);
    let runs: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 2);
    let shown = mitbench(&["history", "--history", history, "show", "last"]);
    assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
    assert!(String::from_utf8_lossy(&shown.stdout).contains("harness/floor"));
    let compared = mitbench(&["compare", "last~1", "last", "--history", history]);
    assert_eq!(compared.status.code(), Some(0), "{}", stderr(&compared));
    assert!(String::from_utf8_lossy(&compared.stdout).contains("rows marked"));
    let missing = mitbench(&["compare", "last~5", "last", "--history", history]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn a_history_that_cannot_be_written_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let out = mitbench(&[&FLOOR_RUN[..], &["--json", json.to_str().unwrap()]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let warnings: Vec<_> = stderr(&out)
        .lines()
        .filter(|l| l.starts_with("warning: the run was not stored"))
        .map(str::to_string)
        .collect();
    assert_eq!(warnings.len(), 1, "{}", stderr(&out));
    assert!(json.exists(), "the JSON was lost with the history");
}

/// An output named by a device or a link is written there, not renamed
/// over it: on /dev/full every output fails with one line naming it and
/// exit 1, and the device is still a device (as root a rename would have
/// put a file of ours in /dev and said "written").
#[test]
fn every_output_to_a_full_device_fails_and_leaves_the_device() {
    use std::os::unix::fs::FileTypeExt;
    let full = Path::new("/dev/full");
    if !std::fs::metadata(full).is_ok_and(|m| m.file_type().is_char_device()) {
        eprintln!("skipped: no /dev/full character device here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("to-full");
    std::os::unix::fs::symlink(full, &link).unwrap();
    let link = link.to_str().unwrap();
    let run = fixture("default-run.json");
    let mut cases: Vec<Vec<&str>> = ["json", "html", "csv", "markdown", "openmetrics"]
        .into_iter()
        .map(|format| vec!["export", format, run.as_str(), "/dev/full"])
        .collect();
    cases.push(vec!["report", run.as_str(), "-o", "/dev/full"]);
    cases.push(vec!["report", run.as_str(), "-o", link]);
    for flag in [
        "--json",
        "--html",
        "--export-csv",
        "--export-markdown",
        "--openmetrics",
    ] {
        let mut args = FLOOR_RUN.to_vec();
        args.extend(["--no-history", flag, "/dev/full"]);
        cases.push(args);
    }
    for args in &cases {
        let out = mitbench(args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        let failed: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(failed.len(), 1, "{args:?}: {err}");
        assert!(
            failed[0].contains("No space left on device"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("written to"), "{args:?}: {err}");
        let kind = std::fs::symlink_metadata(full).unwrap().file_type();
        assert!(kind.is_char_device(), "{args:?} replaced /dev/full");
    }
    let stray = std::fs::read_dir("/dev")
        .unwrap()
        .filter_map(Result::ok)
        .any(|e| e.file_name().to_string_lossy().starts_with(".mitbench-"));
    assert!(!stray, "a temporary file was left in /dev");
}

#[test]
fn a_round_log_whose_reader_quit_is_said_and_the_run_goes_on() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("rounds.log");
    let path = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0, "mkfifo");
    // Two forks, the first's rounds spanning at least 0.3 s (quick's
    // `min_span_s`): the reader takes its first line and quits, so the
    // second fork finds the log with no reader.
    let mut args = common::QUICK_RUN.to_vec();
    args[5] = "2";
    let mut child = common::command(&args)
        .args(["--probe", "harness/floor", "--forks", "2"])
        .args(["--round-log", fifo.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let first = BufReader::new(std::fs::File::open(&fifo).unwrap())
        .lines()
        .next();
    assert!(matches!(first, Some(Ok(_))), "no round logged: {first:?}");
    // A fork that waited for a reader would wait for ever (the change
    // that made this test: mitbench at dd1f7fc still waited after 40 s);
    // a minute is far more than the run's budget of 2 s.
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("the run hung on a round log without a reader");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "{status:?}: {stderr}");
    assert!(
        stderr.contains("its reader is gone; fork 2's rounds are not logged"),
        "{stderr}"
    );
}
