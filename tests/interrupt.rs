//! Ctrl-C during a run: exit 130, what was measured is printed and written
//! whole, and no thread, child process or temporary file outlives it.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn interrupt_run(probes: &[&str]) {
    // Orphans of mitbench would be re-parented to this process, where
    // waitpid can see them.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) };
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let mut args = vec![
        "run",
        "--quiet",
        "--budget",
        "20",
        "--target-ci",
        "0.0001",
        "--json",
        json.to_str().unwrap(),
    ];
    for p in probes {
        args.extend(["--probe", p]);
    }
    let child = Command::new(env!("CARGO_BIN_EXE_mitbench"))
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Long enough to be inside the first variant's sampling loop.
    std::thread::sleep(Duration::from_millis(1500));
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

    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["interrupted"], true);
    let results = doc["results"].as_array().unwrap();
    assert!(
        !results.is_empty(),
        "what was measured before the signal is reported"
    );
    // The signal may land mid-sample (that variant is reported, flagged) or
    // between variants; either way only the last record can be flagged.
    let flagged: Vec<usize> = (0..results.len())
        .filter(|&i| results[i]["interrupted"] == true)
        .collect();
    assert!(
        flagged.is_empty() || flagged == [results.len() - 1],
        "flagged records: {flagged:?}"
    );
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into())
        .collect();
    assert_eq!(
        names,
        vec!["out.json".to_string()],
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
    let json = dir.path().join("out.json");
    let child = Command::new(env!("CARGO_BIN_EXE_mitbench"))
        .args(["run", "--quiet", "--budget", "20", "--target-ci", "0.0001"])
        .args(["--probe", "os/getpid", "--json", json.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1000));
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
        .filter(|name: &String| name != "out.json")
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
