//! The return after a crossing: the same syscall made inline, from inside
//! a function, two functions deep, and with a call and return after it
//! inside the function, each against a plain call and return. What a
//! program pays beyond the raw instruction when its syscall comes through a
//! function (libc's wrappers, its own helpers) is the in-function variant
//! less the inline one, per syscall (`results::returns`).

use crate::harness::{Harness, Measurement};
use crate::probes::failures::Failures;
use crate::probes::{Outcome, Placement, Probe};
use crate::sys;
use std::arch::asm;
use std::hint::black_box;

probe! {
    /// a syscall made from inside a function: the return after the crossing
    pub struct SyscallReturn: "os/syscall-return", seed "all", item "syscall (or plain call)",
        requires ["x86-64 with rdtscp"];
}

named_configs! {
    pub enum Shape (baseline CallRet) {
        CallRet => "call+ret" {"syscall": "none", "shape": "a call to an empty function and its return"},
        GetpidInline => "getpid/inline" {"syscall": "getpid", "shape": "inline"},
        GetpidInFn => "getpid/in-fn" {"syscall": "getpid", "shape": "in a function"},
        GetpidTwoDeep => "getpid/two-deep" {"syscall": "getpid", "shape": "two functions deep"},
        GetpidCallAfter => "getpid/call-after" {"syscall": "getpid", "shape": "in a function, a call and return after it"},
        GetuidInline => "getuid/inline" {"syscall": "getuid", "shape": "inline"},
        GetuidInFn => "getuid/in-fn" {"syscall": "getuid", "shape": "in a function"},
        GetppidInline => "getppid/inline" {"syscall": "getppid", "shape": "inline"},
        GetppidInFn => "getppid/in-fn" {"syscall": "getppid", "shape": "in a function"},
        CloseInline => "close-bad-fd/inline" {"syscall": "close(-1)", "shape": "inline"},
        CloseInFn => "close-bad-fd/in-fn" {"syscall": "close(-1)", "shape": "in a function"},
    }
}

const GETPID: i64 = libc::SYS_getpid;
const GETUID: i64 = libc::SYS_getuid;
const GETPPID: i64 = libc::SYS_getppid;
const CLOSE: i64 = libc::SYS_close;
/// The argument each passes: none read, or a descriptor never open.
const NONE: usize = 0;
const BAD_FD: usize = usize::MAX;

impl Probe for SyscallReturn {
    type Config = Shape;

    fn measure(&self, shape: &Shape, placement: &Placement, harness: &Harness) -> Outcome {
        let failures = Failures::new();
        let m = match shape {
            Shape::CallRet => harness.measure(|n| {
                for _ in 0..n {
                    empty();
                }
            }),
            Shape::GetpidInline => timed(harness, &failures, || sys::syscall1(GETPID, NONE)),
            Shape::GetpidInFn => timed(harness, &failures, in_fn::<GETPID, NONE>),
            Shape::GetpidTwoDeep => timed(harness, &failures, two_deep::<GETPID, NONE>),
            Shape::GetpidCallAfter => timed(harness, &failures, call_after::<GETPID, NONE>),
            Shape::GetuidInline => timed(harness, &failures, || sys::syscall1(GETUID, NONE)),
            Shape::GetuidInFn => timed(harness, &failures, in_fn::<GETUID, NONE>),
            Shape::GetppidInline => timed(harness, &failures, || sys::syscall1(GETPPID, NONE)),
            Shape::GetppidInFn => timed(harness, &failures, in_fn::<GETPPID, NONE>),
            Shape::CloseInline => bad_close(harness, &failures, || sys::syscall1(CLOSE, BAD_FD)),
            Shape::CloseInFn => bad_close(harness, &failures, in_fn::<CLOSE, BAD_FD>),
        };
        failures.outcome(m, vec![placement.cpu])
    }
}

/// An empty function the compiler must call: the asm has effects it
/// cannot see, so the call is neither removed nor inlined.
#[inline(never)]
fn empty() {
    // SAFETY: an empty instruction sequence.
    unsafe { asm!("", options(nostack, preserves_flags)) }
}

/// The syscall as the only work of a function, which returns right after.
#[inline(never)]
fn in_fn<const NR: i64, const ARG: usize>() -> i64 {
    sys::syscall1(NR, ARG)
}

/// One function further out: `black_box` keeps the inner call a call and
/// not a jump (a tail call would return straight to the loop).
#[inline(never)]
fn two_deep<const NR: i64, const ARG: usize>() -> i64 {
    black_box(in_fn::<NR, ARG>())
}

/// The syscall, then a call and return inside the same function, then its
/// own return: which return pays.
#[inline(never)]
fn call_after<const NR: i64, const ARG: usize>() -> i64 {
    let ret = sys::syscall1(NR, ARG);
    empty();
    ret
}

/// Times calls that return a pid or an id as `os/getpid` does.
#[inline(always)]
fn timed(harness: &Harness, failures: &Failures, call: impl Fn() -> i64) -> Option<Measurement> {
    super::syscall::measure_calls(harness, failures, "syscall", call)
}

/// close(-1) fails with EBADF every time: any other result is a failure.
#[inline(always)]
fn bad_close(
    harness: &Harness,
    failures: &Failures,
    call: impl Fn() -> i64,
) -> Option<Measurement> {
    let (mut lowest, mut highest) = (0i64, i64::MIN);
    let m = harness.measure(|n| {
        for _ in 0..n {
            let ret = call();
            lowest = lowest.min(ret);
            highest = highest.max(ret);
        }
    });
    let ebadf = -i64::from(libc::EBADF);
    let all_ebadf = highest == i64::MIN || (lowest == ebadf && highest == ebadf);
    failures.check("close(-1) giving EBADF", black_box(all_ebadf));
    m
}
