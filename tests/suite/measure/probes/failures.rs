//! Work that fails is never a cost: a variant whose timed calls the kernel
//! refuses reports the call and its errno instead of a figure, and perf
//! counters attach only to the counting round, never to a timed one.

use crate::common;

use mitbench::measure::harness::affinity;
use mitbench::measure::probes::{Kind, Outcome};
use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, TargetArch};
use std::collections::BTreeMap;

/// Runs `variant` of probe `id` for one round on a thread of its own under
/// a seccomp filter that fails `syscall` with EPERM, and asserts the round
/// reports `call` failing instead of a cost. The filter ends with the
/// thread; where filters cannot be installed the case is skipped.
/// The name a probe gives the call it makes with `syscall`.
fn call_name(syscall: i64) -> &'static str {
    match syscall {
        libc::SYS_mprotect => "mprotect",
        libc::SYS_madvise => "madvise",
        libc::SYS_mmap => "mmap",
        libc::SYS_write => "write",
        libc::SYS_getpid => "getpid",
        libc::SYS_read => "pipe read",
        _ => unreachable!("no probe here makes syscall {syscall}"),
    }
}

fn assert_refused(id: &str, variant: &str, syscall: i64) {
    let call = call_name(syscall);
    let cpu = common::measuring_cpu();
    let placement = &cpu.placement;
    let (probe, v) = common::probe_variant(id, variant);
    let filter = SeccompFilter::new(
        BTreeMap::from([(syscall, vec![])]),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        TargetArch::x86_64,
    )
    .unwrap();
    let program = BpfProgram::try_from(filter).unwrap();
    let outcome = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                affinity::pin_current_thread_forever(placement.cpu).unwrap();
                if let Err(e) = seccompiler::apply_filter(&program) {
                    common::skipped(&format!("installing a seccomp filter failed: {e}"));
                    return None;
                }
                Some(probe.run(&v, placement, &common::tiny_harness()))
            })
            .join()
            .unwrap()
    });
    match outcome {
        Some(Outcome::Unsupported(why)) => {
            assert!(
                why.reason
                    .starts_with(&format!("{call} failed: Operation not permitted")),
                "{id} {variant}: {why}"
            );
            assert_eq!(
                why.kind,
                Kind::Denied {
                    call: call.to_string(),
                    errno: libc::EPERM
                },
                "{id} {variant}"
            );
        }
        Some(Outcome::Measured(m)) => panic!(
            "{id} {variant}: a refused {call} was timed as a cost of {} ticks",
            m.measurement.per_item.median.value
        ),
        Some(Outcome::Interrupted) => panic!("{id} {variant}: interrupted"),
        None => {}
    }
}

#[test]
fn refused_calls_are_not_a_cost() {
    for (id, variant, syscall) in [
        ("memory/mprotect", "B=1", libc::SYS_mprotect),
        ("memory/shootdown", "mprotect/alone", libc::SYS_mprotect),
        ("memory/madvise", "B=8", libc::SYS_madvise),
        // (A map refused only inside the preparation of a batch cannot be
        // staged here: the filter would refuse the allocator's maps too.)
        ("memory/fault", "anon", libc::SYS_mmap),
        ("syscall/batch-devnull", "write/N=1", libc::SYS_write),
        // The fastest failure there is: the filter answers before the call.
        ("os/getpid", "syscall", libc::SYS_getpid),
        ("syscall/seccomp", "none", libc::SYS_getpid),
        // A wait whose read fails returns at once: the ping-pong would
        // time nothing but two failing syscalls.
        ("os/ctxswitch", "pipe/same-cpu", libc::SYS_read),
    ] {
        assert_refused(id, variant, syscall);
    }
}

#[test]
fn counters_attach_only_to_the_counting_round() {
    let cpu = common::measuring_cpu();
    let placement = &cpu.placement;
    let (probe, v) = common::probe_variant("os/ctxswitch", "pipe/same-cpu");
    let harness = common::tiny_harness();
    for (count, expected) in [(false, false), (true, true)] {
        match probe.run(&v, placement, &harness.for_round(None, count)) {
            Outcome::Measured(m) => assert_eq!(
                m.measurement.counters.is_some(),
                expected,
                "counting round: {count}"
            ),
            other => panic!("not measured: {other:?}"),
        }
    }
}
