//! Ctrl-C during a run: exit 130, what was measured is printed and written
//! whole, and no thread, child process or temporary file outlives it.
//!
//! The signal is sent once the run's round log shows rounds measured, so
//! where it lands does not depend on how fast or quiet the machine is: a
//! probe's rounds go on until its variants have their minimum of rounds and
//! the target, and `--target-ci` asks for more than rounds can give.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Starts `mitbench run` on `probes` with a round log in `dir`.
fn start(dir: &Path, probes: &[&str]) -> Child {
    let json = dir.join("out.json");
    let log = dir.join("rounds.log");
    let mut command = Command::new(env!("CARGO_BIN_EXE_mitbench"));
    command.args(["run", "--quiet", "--budget", "60", "--target-ci", "0.0001"]);
    command.args([
        "--json",
        json.to_str().unwrap(),
        "--round-log",
        log.to_str().unwrap(),
    ]);
    for p in probes {
        command.args(["--probe", p]);
    }
    command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until the round log holds `rounds` lines; those rounds are
/// measured and the run is inside a probe's rounds.
fn wait_for_rounds(dir: &Path, rounds: usize) {
    let log = dir.join("rounds.log");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let lines = std::fs::File::open(&log)
            .map(|f| BufReader::new(f).lines().count())
            .unwrap_or(0);
        if lines >= rounds {
            return;
        }
        assert!(Instant::now() < deadline, "no {rounds} rounds in 120 s");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn interrupt_run(probes: &[&str]) {
    // Orphans of mitbench would be re-parented to this process, where
    // waitpid can see them.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) };
    let dir = tempfile::tempdir().unwrap();
    let child = start(dir.path(), probes);
    wait_for_rounds(dir.path(), 3);
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let started = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?} to stop",
        started.elapsed()
    );
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("interrupted"), "{table}");

    let json = dir.path().join("out.json");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["interrupted"], true);
    let results = doc["results"].as_array().unwrap();
    assert!(
        results.iter().any(|r| r["cost"]["ticks"].is_f64()),
        "what was measured before the signal is reported"
    );
    // The rounds of the probe in flight stopped with the signal; a probe
    // that had finished before it is not flagged.
    for r in results
        .iter()
        .filter(|r| r["rounds"]["total"].as_u64() > Some(0))
    {
        let rounds = &r["rounds"];
        assert_eq!(
            rounds["interrupted"],
            rounds["stopped"] == "interrupted",
            "{}: {}",
            r["variant"],
            rounds["stopped"]
        );
    }
    assert!(results.iter().any(|r| r["rounds"]["interrupted"] == true));
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["out.json", "rounds.log"],
        "temporary file left behind"
    );
    // Nothing left to reap: no orphaned child of mitbench.
    let rc = unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) };
    assert_eq!(rc, -1, "a child of mitbench outlived it");
}

#[test]
fn ctrl_c_during_ping_pong_and_fork() {
    interrupt_run(&["os/ctxswitch"]);
    interrupt_run(&["os/fork"]);
}

#[test]
fn a_second_ctrl_c_exits_at_once_and_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let child = start(dir.path(), &["os/getpid"]);
    wait_for_rounds(dir.path(), 1);
    let pid = child.id() as libc::pid_t;
    unsafe { libc::kill(pid, libc::SIGINT) };
    unsafe { libc::kill(pid, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    // Dead by the signal itself (or, had the first already finished the
    // run, by its own exit 130).
    use std::os::unix::process::ExitStatusExt;
    assert!(
        out.status.signal() == Some(libc::SIGINT) || out.status.code() == Some(130),
        "{:?}",
        out.status
    );
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into())
        .filter(|name: &String| name != "out.json" && name != "rounds.log")
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
