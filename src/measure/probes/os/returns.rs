//! The return after a crossing: the same syscall made inline, from inside
//! a function, two functions deep, and with a call and return after it
//! inside the function, each against a plain call and return. What a
//! program pays beyond the raw instruction when its syscall comes through a
//! function (libc's wrappers, its own helpers) is the in-function variant
//! less the inline one, per syscall (`answer::returns`). The other ways
//! into the kernel and back are timed the same way, inline and from a
//! function: a page fault (the kernel returns by `iret`), a signal handled
//! and returned from (`rt_sigreturn`), and a `sched_yield` that switches to
//! a partner on the same CPU and back. Each syscall is also made from a
//! function that refills the return stack after the crossing (2, 4 and 16
//! entries), beside the pushes alone, to price what the refill wins back
//! (docs/the-return-after-a-crossing.md); each other crossing with 4 only,
//! the refill the answer names, one row each, as each of their items
//! costs the time of 15-25 syscalls.

use crate::measure::harness::{Harness, Measurement};
use crate::measure::probes::corunner::CoRunner;
use crate::measure::probes::failures::Failures;
use crate::measure::probes::memory::region::Region;
use crate::measure::probes::{Outcome, Placement, Probe, Unsupported};
use crate::sys;
use std::arch::asm;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

probe! {
    /// a syscall, page fault, signal or switch met inside a function: the return after it
    pub struct SyscallReturn: "os/syscall-return", seed "all", item "crossing (or plain call)",
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
        GetpidRefill2 => "getpid/refill-2" {"syscall": "getpid", "shape": "in a function, 2 return-stack entries pushed after it"},
        GetpidRefill4 => "getpid/refill-4" {"syscall": "getpid", "shape": "in a function, 4 return-stack entries pushed after it"},
        GetpidRefill16 => "getpid/refill-16" {"syscall": "getpid", "shape": "in a function, 16 return-stack entries pushed after it"},
        GetuidRefill2 => "getuid/refill-2" {"syscall": "getuid", "shape": "in a function, 2 return-stack entries pushed after it"},
        GetuidRefill4 => "getuid/refill-4" {"syscall": "getuid", "shape": "in a function, 4 return-stack entries pushed after it"},
        GetuidRefill16 => "getuid/refill-16" {"syscall": "getuid", "shape": "in a function, 16 return-stack entries pushed after it"},
        GetppidRefill2 => "getppid/refill-2" {"syscall": "getppid", "shape": "in a function, 2 return-stack entries pushed after it"},
        GetppidRefill4 => "getppid/refill-4" {"syscall": "getppid", "shape": "in a function, 4 return-stack entries pushed after it"},
        GetppidRefill16 => "getppid/refill-16" {"syscall": "getppid", "shape": "in a function, 16 return-stack entries pushed after it"},
        CloseRefill2 => "close-bad-fd/refill-2" {"syscall": "close(-1)", "shape": "in a function, 2 return-stack entries pushed after it"},
        CloseRefill4 => "close-bad-fd/refill-4" {"syscall": "close(-1)", "shape": "in a function, 4 return-stack entries pushed after it"},
        CloseRefill16 => "close-bad-fd/refill-16" {"syscall": "close(-1)", "shape": "in a function, 16 return-stack entries pushed after it"},
        Pushes2 => "refill-2/alone" {"syscall": "none", "shape": "a function that pushes 2 return-stack entries and returns"},
        Pushes4 => "refill-4/alone" {"syscall": "none", "shape": "a function that pushes 4 return-stack entries and returns"},
        Pushes16 => "refill-16/alone" {"syscall": "none", "shape": "a function that pushes 16 return-stack entries and returns"},
        FaultInline => "fault/inline" {"crossing": "page fault: first write to an anonymous page", "shape": "inline"},
        FaultInFn => "fault/in-fn" {"crossing": "page fault: first write to an anonymous page", "shape": "in a function"},
        FaultRefill4 => "fault/refill-4" {"crossing": "page fault: first write to an anonymous page", "shape": "in a function, 4 return-stack entries pushed after it"},
        SignalInline => "signal/inline" {"crossing": "tgkill to itself: a handler runs, rt_sigreturn", "shape": "inline"},
        SignalInFn => "signal/in-fn" {"crossing": "tgkill to itself: a handler runs, rt_sigreturn", "shape": "in a function"},
        SignalRefill4 => "signal/refill-4" {"crossing": "tgkill to itself: a handler runs, rt_sigreturn", "shape": "in a function, 4 return-stack entries pushed after it"},
        SwitchInline => "yield-switch/inline" {"crossing": "sched_yield to a yielding thread on the same CPU and back", "shape": "inline"},
        SwitchInFn => "yield-switch/in-fn" {"crossing": "sched_yield to a yielding thread on the same CPU and back", "shape": "in a function"},
        SwitchRefill4 => "yield-switch/refill-4" {"crossing": "sched_yield to a yielding thread on the same CPU and back", "shape": "in a function, 4 return-stack entries pushed after it"},
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
            Shape::GetpidRefill2 => timed(harness, &failures, refilled::<GETPID, NONE, 2>),
            Shape::GetpidRefill4 => timed(harness, &failures, refilled::<GETPID, NONE, 4>),
            Shape::GetpidRefill16 => timed(harness, &failures, refilled::<GETPID, NONE, 16>),
            Shape::GetuidRefill2 => timed(harness, &failures, refilled::<GETUID, NONE, 2>),
            Shape::GetuidRefill4 => timed(harness, &failures, refilled::<GETUID, NONE, 4>),
            Shape::GetuidRefill16 => timed(harness, &failures, refilled::<GETUID, NONE, 16>),
            Shape::GetppidRefill2 => timed(harness, &failures, refilled::<GETPPID, NONE, 2>),
            Shape::GetppidRefill4 => timed(harness, &failures, refilled::<GETPPID, NONE, 4>),
            Shape::GetppidRefill16 => timed(harness, &failures, refilled::<GETPPID, NONE, 16>),
            Shape::CloseRefill2 => bad_close(harness, &failures, refilled::<CLOSE, BAD_FD, 2>),
            Shape::CloseRefill4 => bad_close(harness, &failures, refilled::<CLOSE, BAD_FD, 4>),
            Shape::CloseRefill16 => bad_close(harness, &failures, refilled::<CLOSE, BAD_FD, 16>),
            Shape::Pushes2 => pushes_alone::<2>(harness),
            Shape::Pushes4 => pushes_alone::<4>(harness),
            Shape::Pushes16 => pushes_alone::<16>(harness),
            Shape::FaultInline => faults(harness, &failures, |page| {
                // SAFETY: a page of the mapping `faults` prepared.
                unsafe { page.write_volatile(1) }
            }),
            Shape::FaultInFn => faults(harness, &failures, write_in_fn),
            Shape::FaultRefill4 => faults(harness, &failures, write_refilled),
            Shape::SignalInline => return signals(harness, placement, raise),
            Shape::SignalInFn => return signals(harness, placement, raise_in_fn),
            Shape::SignalRefill4 => return signals(harness, placement, raise_refilled),
            Shape::SwitchInline => {
                return switches(harness, placement, || sys::syscall0(SCHED_YIELD));
            }
            Shape::SwitchInFn => return switches(harness, placement, in_fn::<SCHED_YIELD, NONE>),
            Shape::SwitchRefill4 => {
                return switches(harness, placement, refilled::<SCHED_YIELD, NONE, 4>);
            }
        };
        failures.outcome(m, vec![placement.cpu])
    }
}

/// Page faults, one per item: each batch writes the first byte of each
/// page of a fresh anonymous mapping, made and unmapped untimed.
#[inline(always)]
fn faults(harness: &Harness, failures: &Failures, write: impl Fn(*mut u8)) -> Option<Measurement> {
    let page = crate::measure::probes::memory::region::page_size();
    harness.measure_prepared(
        |n| failures.ok("mmap", Region::anon(n as usize)),
        |region, n| {
            if let Some(region) = region {
                for i in 0..(n as usize).min(region.len() / page) {
                    write(region.at(i * page));
                }
            }
        },
    )
}

#[inline(never)]
fn write_in_fn(page: *mut u8) {
    // SAFETY: as the inline write.
    unsafe { page.write_volatile(1) }
}

/// The fault's refill, as a syscall's (`refilled`).
#[inline(never)]
fn write_refilled(page: *mut u8) {
    // SAFETY: as the inline write.
    unsafe { page.write_volatile(1) }
    push_return_entries::<4>();
}

/// The signal each item sends itself: one whose default is to be ignored,
/// so one that arrives after the handler is gone harms nothing.
const SIGNAL: libc::c_int = libc::SIGURG;

/// Signals handled, counted by the handler.
static HANDLED: AtomicU64 = AtomicU64::new(0);

extern "C" fn on_signal(_: libc::c_int) {
    HANDLED.fetch_add(1, Ordering::Relaxed);
}

/// The handler installed for the length of a measurement; the previous
/// disposition is put back when dropped, on every path out.
struct Handler(libc::sigaction);

impl Handler {
    fn install() -> std::io::Result<Handler> {
        // SAFETY: a zeroed sigaction with a handler that only counts (async
        // signal safe); the old one is kept to be put back.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut action.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(SIGNAL, &action, &mut old) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(Handler(old))
        }
    }
}

impl Drop for Handler {
    fn drop(&mut self) {
        // SAFETY: the disposition sigaction gave back.
        unsafe { libc::sigaction(SIGNAL, &self.0, std::ptr::null_mut()) };
    }
}

/// The calling thread, as tgkill names it.
struct TgkillTarget {
    pid: usize,
    tid: usize,
}

impl TgkillTarget {
    fn calling() -> TgkillTarget {
        TgkillTarget {
            pid: sys::syscall0(libc::SYS_getpid) as usize,
            tid: sys::syscall0(libc::SYS_gettid) as usize,
        }
    }
}

#[inline(always)]
fn raise(to: &TgkillTarget) -> i64 {
    // SAFETY: a signal to this thread, whose handler only counts.
    unsafe { sys::syscall3(libc::SYS_tgkill, to.pid, to.tid, SIGNAL as usize) }
}

#[inline(never)]
fn raise_in_fn(to: &TgkillTarget) -> i64 {
    raise(to)
}

/// The signal's refill, as a syscall's (`refilled`).
#[inline(never)]
fn raise_refilled(to: &TgkillTarget) -> i64 {
    let ret = raise(to);
    push_return_entries::<4>();
    ret
}

/// Signals this thread sends itself, one per item: the tgkill returns
/// through the handler and rt_sigreturn. Every call must have run the
/// handler once, or the figure is not of a signal.
fn signals(
    harness: &Harness,
    placement: &Placement,
    send: impl Fn(&TgkillTarget) -> i64,
) -> Outcome {
    let _handler = match Handler::install() {
        Ok(handler) => handler,
        Err(e) => return Outcome::Unsupported(Unsupported::io("sigaction", &e)),
    };
    let failures = Failures::new();
    let to = TgkillTarget::calling();
    let sent = std::cell::Cell::new(0u64);
    let before = HANDLED.load(Ordering::Relaxed);
    let m = super::syscall::measure_calls(harness, &failures, "tgkill", || {
        sent.set(sent.get() + 1);
        send(&to)
    });
    let handled = HANDLED.load(Ordering::Relaxed) - before;
    if failures.reason().is_none() && handled != sent.get() {
        return Outcome::Unsupported(Unsupported::probe_failed(format!(
            "{handled} signals handled for {} sent",
            sent.get()
        )));
    }
    failures.outcome(m, vec![placement.cpu])
}

const SCHED_YIELD: i64 = libc::SYS_sched_yield;

/// sched_yield with a partner on the same CPU that yields back: each item
/// is two switches. The partner's own count of yields must keep up with
/// ours (at least half), or the yields ran alone and switched nothing.
fn switches(harness: &Harness, placement: &Placement, call: impl Fn() -> i64) -> Outcome {
    let partner = match CoRunner::start(
        "mitbench-yield",
        placement.cpu,
        |stop, rounds| {
            while !stop.load(Ordering::Acquire) {
                sys::syscall0(SCHED_YIELD);
                rounds.fetch_add(1, Ordering::Relaxed);
            }
        },
        || {},
    ) {
        Ok(partner) => partner,
        Err(reason) => return Outcome::Unsupported(reason),
    };
    let failures = Failures::new();
    let calls = std::cell::Cell::new(0u64);
    let before = partner.rounds.load(Ordering::Relaxed);
    let m = super::syscall::measure_calls(harness, &failures, "sched_yield", || {
        calls.set(calls.get() + 1);
        call()
    });
    let answered = partner.rounds.load(Ordering::Relaxed) - before;
    drop(partner);
    if failures.reason().is_none() && answered < calls.get() / 2 {
        return Outcome::Unsupported(Unsupported::probe_failed(format!(
            "sched_yield switched to the partner on CPU {} for {answered} of {} calls: \
             the scheduler let the yields run alone",
            placement.cpu,
            calls.get()
        )));
    }
    failures.outcome(m, vec![placement.cpu])
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

/// The syscall in a function, then `N` return-stack entries pushed before
/// its return: a refill of the return stack with user addresses, which
/// the kernel's return left holding its own (see
/// docs/the-return-after-a-crossing.md).
#[inline(never)]
fn refilled<const NR: i64, const ARG: usize, const N: usize>() -> i64 {
    let ret = sys::syscall1(NR, ARG);
    push_return_entries::<N>();
    ret
}

/// `N` calls, each to the instruction after it, then the stack pointer put
/// back: the return stack gets `N` entries (user addresses), the stack
/// and every register but the flags are as they were, and the `int3` each
/// call would return to is never reached.
#[inline(always)]
fn push_return_entries<const N: usize>() {
    // SAFETY: each call lands on the label that follows it and pushes 8
    // bytes, all dropped by the `add`; without `nostack` the compiler keeps
    // nothing below the stack pointer across the block.
    unsafe {
        asm!(
            ".rept {n}",
            "call 2f",
            "int3",
            "2:",
            ".endr",
            "add rsp, {bytes}",
            n = const N,
            bytes = const 8 * N,
        )
    }
}

/// The refill's own cost: a function that pushes `N` entries and returns,
/// timed as `call+ret` is.
#[inline(always)]
fn pushes_alone<const N: usize>(harness: &Harness) -> Option<Measurement> {
    #[inline(never)]
    fn pushes<const N: usize>() {
        push_return_entries::<N>();
    }
    harness.measure(|n| {
        for _ in 0..n {
            pushes::<N>();
        }
    })
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
