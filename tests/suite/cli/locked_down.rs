//! mitbench where a container would put it: under a seccomp filter that
//! refuses what Docker's default profile refuses, and without CAP_SYS_NICE.
//! What needs a refused call is `unsupported` with the call and errno, the
//! rest measures, the run exits 0, and the counters say why they are
//! absent.

use crate::common;

use common::QUICK_RUN;
use std::os::unix::process::CommandExt;

/// Syscalls Docker's default profile denies that a probe or the harness
/// may make.
const DENIED: [libc::c_long; 12] = [
    libc::SYS_perf_event_open,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_mount,
    libc::SYS_bpf,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_userfaultfd,
    libc::SYS_kexec_load,
];

/// `struct seccomp_data`: nr at 0, arch at 4.
const NR: u32 = 0;
const ARCH: u32 = 4;
const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
/// linux/capability.h; the libc crate does not carry capability numbers.
const CAP_SYS_NICE: libc::c_ulong = 23;

/// Allow everything but `DENIED`, which fails with EPERM; another
/// architecture's calls are killed, as a profile does.
fn deny_filter() -> Vec<libc::sock_filter> {
    let stmt = |code: u32, k: u32| libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |k: u32, jt: u8, jf: u8| libc::sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    };
    let mut program = vec![
        stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, ARCH),
        jump(AUDIT_ARCH_X86_64, 1, 0),
        stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_KILL_PROCESS),
        stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, NR),
    ];
    for (i, nr) in DENIED.iter().enumerate() {
        // Jump to the EPERM return past the remaining checks and the allow.
        let to_deny = (DENIED.len() - i) as u8;
        program.push(jump(*nr as u32, to_deny, 0));
    }
    program.push(stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW));
    program.push(stmt(
        libc::BPF_RET | libc::BPF_K,
        libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
    ));
    program
}

/// Starts `command` under the profile and without CAP_SYS_NICE.
fn lock_down(command: &mut std::process::Command) {
    let program = deny_filter();
    // SAFETY: prctl is async-signal-safe; the program lives until exec.
    unsafe {
        command.pre_exec(move || {
            // Without CAP_SYS_NICE after exec, even as root.
            libc::prctl(libc::PR_CAPBSET_DROP, CAP_SYS_NICE, 0, 0, 0);
            let fprog = libc::sock_fprog {
                len: program.len() as u16,
                filter: program.as_ptr().cast_mut(),
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER,
                    &fprog as *const libc::sock_fprog,
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[test]
fn a_run_under_a_container_profile_measures_what_it_may() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let mut command = common::command(&QUICK_RUN);
    command
        .args(["--probe", "os/getpid", "--probe", "syscall/batch-devnull"])
        .args([
            "--probe",
            "section/chunked",
            "--json",
            json.to_str().unwrap(),
        ]);
    lock_down(&mut command);
    let out = command.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        doc["inventory"]["identity"]["process_controls"]["Seccomp"],
        "2"
    );
    let records = doc["results"].as_array().unwrap();
    let find = |id: &str, variant: &str| {
        records
            .iter()
            .find(|r| r["id"] == id && r["variant"] == variant)
            .unwrap_or_else(|| panic!("no {id} {variant}"))
    };
    // Refused: io_uring, with the call and the errno a program reads.
    let io_uring = records
        .iter()
        .filter(|r| r["id"] == "syscall/batch-devnull")
        .filter(|r| r["variant"].as_str().unwrap().starts_with("io_uring"))
        .collect::<Vec<_>>();
    assert!(!io_uring.is_empty());
    for r in io_uring {
        let why = &r["unsupported"];
        assert!(
            why.is_object(),
            "{} measured under the filter",
            r["variant"]
        );
        assert!(r["cost"].is_null());
        let text = why.to_string();
        assert!(
            text.contains("io_uring") && (text.contains("EPERM") || text.contains("denied")),
            "{text}"
        );
    }
    // The rest measures: getpid, writev batches, and the chunked hash at
    // SCHED_OTHER with a note saying so.
    for (id, variant) in [
        ("os/getpid", "syscall"),
        ("syscall/batch-devnull", "writev/N=8"),
        ("section/chunked", "waiting/4KiB"),
    ] {
        let r = find(id, variant);
        assert!(
            r["cost"]["rounds_ticks"]["value"].as_f64().unwrap() > 0.0,
            "{id} {variant}"
        );
        // The counting round says why there are no counters.
        assert_eq!(r["counters"]["status"], "unavailable", "{id} {variant}");
        assert!(
            r["counters"].to_string().contains("perf_event_open"),
            "{}",
            r["counters"]
        );
    }
    let chunked = find("section/chunked", "waiting/4KiB");
    assert!(
        chunked["notes"].to_string().contains("SCHED_OTHER"),
        "{}",
        chunked["notes"]
    );
}

/// `mitbench tax` where perf_event_open is refused: context switches and
/// page faults still counted, from getrusage, and said so; syscalls
/// unsupported with the reason.
#[test]
fn tax_under_a_container_profile_falls_back_and_says_so() {
    let exe = env!("CARGO_BIN_EXE_mitbench");
    let mut command = common::command(&["tax", "--json", "--", exe, "workload", "faults", "2000"]);
    lock_down(&mut command);
    let out = command.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let tax: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let counts = tax["counted"]["counts"].as_array().unwrap();
    let kind = |k: &str| counts.iter().find(|c| c["kind"] == k).unwrap();
    let faults = kind("page fault");
    assert!(faults["count"].as_u64().unwrap() >= 2000, "{faults}");
    assert!(
        faults["source"].as_str().unwrap().starts_with("getrusage"),
        "{faults}"
    );
    assert!(kind("context switch")["count"].is_u64());
    let syscalls = kind("syscall");
    assert!(syscalls["count"].is_null());
    // Refused at perf_event_open, or before it: the tracepoint's id needs
    // tracefs, and mounting it needs the refused mount and unshare.
    // The profile's filter is named in the syscall toll.
    let named = tax["mitigations"].as_array().unwrap();
    assert!(
        named.iter().any(|m| m["mitigation"] == "seccomp filters"
            && m["kinds"] == serde_json::json!(["syscall"])),
        "{named:?}"
    );
    let why = syscalls["unsupported"].as_str().unwrap();
    assert!(
        why.contains("perf_event_open") || why.contains("tracefs"),
        "{why}"
    );
}
