//! The null syscall and the vDSO bypass.

use crate::harness::Harness;
use crate::probes::failures::Failures;
use crate::probes::{Outcome, Placement, Probe, ProbeInfo, Variant};
use crate::sys;
use serde_json::json;
use std::hint::black_box;

pub struct Getpid;

impl Probe for Getpid {
    fn info(&self) -> ProbeInfo {
        ProbeInfo {
            id: "os/getpid",
            family: "os",
            seed: "all",
            summary: "the null syscall: entry, the mitigations on the way in and out, return",
            item: "getpid call",
            requirements: vec!["x86-64 with rdtscp"],
            derived: None,
            variants: vec![
                Variant {
                    name: "syscall",
                    baseline: true,
                    params: json!({"path": "raw syscall instruction, SYS_getpid"}),
                },
                Variant {
                    name: "libc",
                    baseline: false,
                    params: json!({"path": "glibc getpid()"}),
                },
                Variant {
                    name: "cached",
                    baseline: false,
                    params: json!({"path": "pid read from memory, as glibc cached it before 2.25: no crossing"}),
                },
            ],
        }
    }

    fn measure(&self, variant: &Variant, placement: &Placement, harness: &Harness) -> Outcome {
        let failures = Failures::new();
        let measurement = match variant.name {
            "syscall" => harness.measure_each(|| {
                let pid = sys::syscall0(libc::SYS_getpid);
                failures.check_raw("getpid", pid);
                pid
            }),
            // SAFETY: getpid has no preconditions.
            "libc" => harness.measure_each(|| unsafe { libc::getpid() }),
            _ => {
                let pid = std::process::id();
                harness.measure_each(|| black_box(&pid).to_owned())
            }
        };
        failures.outcome(measurement, vec![placement.cpu])
    }
}

pub struct ClockGettime;

impl Probe for ClockGettime {
    fn info(&self) -> ProbeInfo {
        ProbeInfo {
            id: "os/clock_gettime",
            family: "os",
            seed: "all",
            summary: "CLOCK_MONOTONIC through the vDSO (no crossing) vs through the raw syscall",
            item: "clock_gettime call",
            requirements: vec![
                "x86-64 with rdtscp",
                "a vDSO-capable clocksource for the vdso variant to bypass",
            ],
            derived: None,
            variants: vec![
                Variant {
                    name: "vdso",
                    baseline: true,
                    params: json!({"clock": "CLOCK_MONOTONIC", "path": "glibc clock_gettime via the vDSO"}),
                },
                Variant {
                    name: "syscall",
                    baseline: false,
                    params: json!({"clock": "CLOCK_MONOTONIC", "path": "raw syscall instruction, SYS_clock_gettime"}),
                },
            ],
        }
    }

    fn measure(&self, variant: &Variant, placement: &Placement, harness: &Harness) -> Outcome {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let failures = Failures::new();
        let measurement = match variant.name {
            // SAFETY: ts is a valid out-pointer for both calls.
            "vdso" => harness.measure_each(|| {
                let ret = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
                failures.check("clock_gettime", ret == 0);
            }),
            _ => harness.measure_each(|| {
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
