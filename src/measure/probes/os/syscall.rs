//! The null syscall and the vDSO bypass.

use crate::measure::harness::{Harness, Measurement};
use crate::measure::probes::failures::Failures;
use crate::measure::probes::{Outcome, Placement, Probe};
use crate::sys;
use std::hint::black_box;

probe! {
    /// the null syscall: entry, the mitigations on the way in and out, return
    pub struct Getpid: "os/getpid", seed "all", item "getpid call", requires ["x86-64 with rdtscp"];
}

named_configs! {
    pub enum GetpidPath (baseline Syscall) {
        Syscall => "syscall" {"path": "raw syscall instruction, SYS_getpid"},
        Libc => "libc" {"path": "glibc getpid()"},
        Cached => "cached" {"path": "pid read from memory, as glibc cached it before 2.25: no crossing"},
    }
}

impl Probe for Getpid {
    type Config = GetpidPath;

    fn measure(&self, path: &GetpidPath, placement: &Placement, harness: &Harness) -> Outcome {
        let failures = Failures::new();
        let measurement = match path {
            GetpidPath::Syscall => measure_raw_getpid(harness, &failures),
            // SAFETY: getpid has no preconditions.
            GetpidPath::Libc => measure_calls(harness, &failures, "getpid", || {
                i64::from(unsafe { libc::getpid() })
            }),
            GetpidPath::Cached => {
                let pid = std::process::id();
                harness.measure_each(|| black_box(&pid).to_owned())
            }
        };
        failures.outcome(measurement, vec![placement.cpu])
    }
}

/// The null syscall as os/getpid and the specctrl getpid workload time it:
/// the raw instruction and nothing else, as a plain C loop would run it
/// (bench/getpid_ref.c).
pub fn measure_raw_getpid(harness: &Harness, failures: &Failures) -> Option<Measurement> {
    measure_calls(harness, failures, "getpid", || {
        sys::syscall0(libc::SYS_getpid)
    })
}

/// Times calls that return a pid or an id (-errno on failure) with nothing
/// around them but the loop. A failure is still caught, but not by a
/// branch per call: the loop keeps the lowest result in a register (a
/// conditional move) and it is checked once the round is timed: a per-call
/// branch and a store read above the C loop on a kernel that clears the
/// branch history on every entry (docs/why-the-code-is-so.md).
#[inline(always)]
pub(crate) fn measure_calls(
    harness: &Harness,
    failures: &Failures,
    name: &'static str,
    call: impl Fn() -> i64,
) -> Option<Measurement> {
    let mut lowest = 0i64;
    let measurement = harness.measure(|n| {
        let mut batch_lowest = 0i64;
        for _ in 0..n {
            batch_lowest = batch_lowest.min(call());
        }
        lowest = lowest.min(batch_lowest);
    });
    failures.check_raw(name, black_box(lowest));
    measurement
}

probe! {
    /// CLOCK_MONOTONIC through the vDSO (no crossing) vs through the raw syscall
    pub struct ClockGettime: "os/clock_gettime", seed "all", item "clock_gettime call",
        requires [
            "x86-64 with rdtscp",
            "a vDSO-capable clocksource for the vdso variant to bypass",
        ];
}

named_configs! {
    pub enum ClockPath (baseline Vdso) {
        Vdso => "vdso" {"clock": "CLOCK_MONOTONIC", "path": "glibc clock_gettime via the vDSO"},
        Syscall => "syscall" {"clock": "CLOCK_MONOTONIC", "path": "raw syscall instruction, SYS_clock_gettime"},
    }
}

impl Probe for ClockGettime {
    type Config = ClockPath;

    fn measure(&self, path: &ClockPath, placement: &Placement, harness: &Harness) -> Outcome {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let failures = Failures::new();
        let measurement = match path {
            // SAFETY: ts is a valid out-pointer for both calls.
            ClockPath::Vdso => harness.measure_each(|| {
                let ret = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
                failures.check("clock_gettime", ret == 0);
            }),
            ClockPath::Syscall => harness.measure_each(|| {
                let ret = unsafe {
                    sys::syscall2(
                        libc::SYS_clock_gettime,
                        libc::CLOCK_MONOTONIC as usize,
                        &raw mut ts as usize,
                    )
                };
                failures.check_raw("clock_gettime", ret);
            }),
        };
        failures.outcome(measurement, vec![placement.cpu])
    }
}
