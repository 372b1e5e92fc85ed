//! Work that fails is never a cost: a variant whose timed calls the kernel
//! refuses reports the call and its errno instead of a figure, and perf
//! counters attach only to the counting round, never to a timed one.

mod common;

use mitbench::harness::affinity;
use mitbench::probes::{self, Outcome};
use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, TargetArch};
use std::collections::BTreeMap;

/// Runs `variant` of probe `id` for one round on a thread of its own under
/// a seccomp filter that fails `syscall` with EPERM; the filter ends with
/// the thread.
fn run_with_syscall_denied(id: &str, variant: &str, syscall: i64) -> Outcome {
    let placement = common::placement();
    let probe = probes::select(&[id.to_string()]).expect("a probe id")[0];
    let info = probe.info();
    let v = info
        .variants
        .iter()
        .find(|v| v.name == variant)
        .unwrap()
        .clone();
    let filter = SeccompFilter::new(
        BTreeMap::from([(syscall, vec![])]),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        TargetArch::x86_64,
    )
    .unwrap();
    let program = BpfProgram::try_from(filter).unwrap();
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                affinity::pin_current_thread_forever(placement.cpu).unwrap();
                if let Err(e) = seccompiler::apply_filter(&program) {
                    // A container may already forbid installing filters.
                    eprintln!("skipped: installing a seccomp filter failed: {e}");
                    return None;
                }
                Some(probe.run(&v, &placement, &common::tiny_harness()))
            })
            .join()
            .unwrap()
    })
    .map_or(Outcome::Interrupted, |outcome| outcome)
}

fn assert_refused(outcome: Outcome, call: &str) {
    match outcome {
        Outcome::Unsupported(reason) => assert!(
            reason.starts_with(&format!("{call} failed: Operation not permitted")),
            "{reason}"
        ),
        Outcome::Interrupted => {} // skipped: no seccomp here
        Outcome::Measured(m) => panic!(
            "a refused {call} was timed as a cost of {} ticks",
            m.measurement.per_item.median
        ),
    }
}

#[test]
fn a_refused_mprotect_is_not_a_cost() {
    assert_refused(
        run_with_syscall_denied("memory/mprotect", "B=1", libc::SYS_mprotect),
        "mprotect",
    );
    assert_refused(
        run_with_syscall_denied("memory/shootdown", "mprotect/alone", libc::SYS_mprotect),
        "mprotect",
    );
}

#[test]
fn a_refused_madvise_or_write_is_not_a_cost() {
    assert_refused(
        run_with_syscall_denied("memory/madvise", "B=8", libc::SYS_madvise),
        "madvise",
    );
    assert_refused(
        run_with_syscall_denied("syscall/batch-devnull", "write/N=1", libc::SYS_write),
        "write",
    );
}

#[test]
fn a_refused_getpid_is_not_a_cost() {
    // The fastest failure there is: the filter answers before the syscall.
    assert_refused(
        run_with_syscall_denied("os/getpid", "syscall", libc::SYS_getpid),
        "getpid",
    );
    assert_refused(
        run_with_syscall_denied("syscall/seccomp", "none", libc::SYS_getpid),
        "getpid",
    );
}

#[test]
fn a_refused_doorbell_is_not_a_round_trip() {
    // A wait whose read fails returns at once: the ping-pong would time
    // nothing but two failing syscalls.
    assert_refused(
        run_with_syscall_denied("os/ctxswitch", "pipe/same-cpu", libc::SYS_read),
        "pipe read",
    );
}

#[test]
fn a_probe_that_cannot_map_its_memory_says_so() {
    // (A map refused only inside the preparation of a batch cannot be
    // staged here: the filter would refuse the allocator's maps too.)
    assert_refused(
        run_with_syscall_denied("memory/fault", "anon", libc::SYS_mmap),
        "mmap",
    );
}

#[test]
fn counters_attach_only_to_the_counting_round() {
    let placement = common::placement();
    let _pin = affinity::pin_current_thread(placement.cpu).unwrap();
    let probe = probes::select(&["os/ctxswitch".to_string()]).unwrap()[0];
    let info = probe.info();
    let v = info
        .variants
        .iter()
        .find(|v| v.name == "pipe/same-cpu")
        .unwrap();
    let harness = common::tiny_harness();
    for (count, expected) in [(false, false), (true, true)] {
        match probe.run(v, &placement, &harness.for_round(None, count)) {
            Outcome::Measured(m) => assert_eq!(
                m.measurement.counters.is_some(),
                expected,
                "counting round: {count}"
            ),
            other => panic!("not measured: {other:?}"),
        }
    }
}
