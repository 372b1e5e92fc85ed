//! Ctrl-C during a run: exit 130, what was measured is printed and written
//! whole, and no thread, child process or temporary file outlives it.
//!
//! The signal is sent once the run's round log shows rounds measured, so
//! where it lands does not depend on how fast or quiet the machine is: a
//! probe's rounds go on until its variants have their minimum of rounds and
//! the target, and `--target-ci` asks for more than rounds can give. The
//! round log is a FIFO the test reads: each line is the child's word that
//! a round is done, so nothing polls or sleeps.

use crate::common;

use std::ffi::CString;
use std::io::{BufRead, BufReader};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// Starts `mitbench run` on `probes` with its round log on a FIFO in
/// `dir`, and the lines it writes there, as they come.
fn start(dir: &Path, probes: &[&str]) -> (Child, Receiver<String>) {
    let fifo = dir.join("rounds.log");
    let path = CString::new(fifo.as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0, "mkfifo");
    let child = spawn(dir, probes);
    let (lines, rounds) = mpsc::channel();
    // Opening blocks until mitbench opens its end; the log is read to its
    // end, so a full pipe never holds mitbench up after the test has
    // what it waited for.
    std::thread::spawn(move || {
        let log = std::fs::File::open(&fifo).unwrap();
        for line in BufReader::new(log).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    (child, rounds)
}

fn spawn(dir: &Path, probes: &[&str]) -> Child {
    let json = dir.join("out.json");
    let log = dir.join("rounds.log");
    let mut command = Command::new(env!("CARGO_BIN_EXE_mitbench"));
    command.args([
        "run",
        "--quiet",
        "--no-history",
        "--budget",
        "60",
        "--target-ci",
        "0.0001",
    ]);
    command.args([
        "--json",
        json.to_str().unwrap(),
        "--openmetrics",
        dir.join("out.prom").to_str().unwrap(),
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

/// Waits until mitbench has logged `rounds` rounds: those are measured and
/// the run is inside a probe's rounds.
fn wait_for_rounds(log: &Receiver<String>, rounds: usize) {
    for _ in 0..rounds {
        log.recv_timeout(Duration::from_secs(120))
            .expect("mitbench logs a round within 120 s");
    }
}

fn interrupt_run(probes: &[&str]) {
    // Orphans of mitbench would be re-parented to this process, where
    // waitpid can see them.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) };
    let dir = tempfile::tempdir().unwrap();
    // The last whole run's metrics, which a partial run must not replace.
    let previous = "# the last whole run\n";
    std::fs::write(dir.path().join("out.prom"), previous).unwrap();
    let (child, log) = start(dir.path(), probes);
    wait_for_rounds(&log, 3);
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
        results
            .iter()
            .any(|r| r["cost"]["rounds_ticks"]["value"].is_f64()),
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
        ["out.json", "out.prom", "rounds.log"],
        "temporary file left behind"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.prom")).unwrap(),
        previous
    );
    // Nothing left to reap: no orphaned child of mitbench.
    let rc = unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) };
    assert_eq!(rc, -1, "a child of mitbench outlived it");
}

#[test]
fn ctrl_c_during_ping_pong_and_fork() {
    if !common::alone(module_path!(), "ctrl_c_during_ping_pong_and_fork") {
        return;
    }
    interrupt_run(&["os/ctxswitch"]);
    interrupt_run(&["os/fork"]);
}

#[test]
fn a_second_ctrl_c_exits_at_once_and_leaves_no_temporary_file() {
    // Its worker, left to die with the run, is re-parented to the nearest
    // subreaper: in a process of its own, never one the test above made.
    if !common::alone(
        module_path!(),
        "a_second_ctrl_c_exits_at_once_and_leaves_no_temporary_file",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (child, log) = start(dir.path(), &["os/getpid"]);
    wait_for_rounds(&log, 1);
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
