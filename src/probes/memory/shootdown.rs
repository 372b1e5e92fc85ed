//! TLB shootdown: a one-page mprotect, madvise(MADV_DONTNEED) or munmap,
//! with no other thread of this process running ("alone") and with one
//! spinning on the other CPU ("remote"). While a thread of the same mm runs
//! elsewhere, the kernel must interrupt that CPU to flush its TLB (whatever
//! the thread touches); the difference between the two is the cross-CPU
//! flush toll that XPFO paid on every page-ownership change.

use super::region::{discard, page_size, protect, touched, unmap};
use crate::harness::{Harness, Measurement};
use crate::probes::corunner::CoRunner;
use crate::probes::failures::Failures;
use crate::probes::{Outcome, Placement, Probe, ProbeInfo, Variant};
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

pub struct Shootdown;

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Mprotect,
    Madvise,
    Munmap,
}

const VARIANTS: [(&str, Op, bool); 6] = [
    ("mprotect/alone", Op::Mprotect, false),
    ("mprotect/remote", Op::Mprotect, true),
    ("madvise/alone", Op::Madvise, false),
    ("madvise/remote", Op::Madvise, true),
    ("munmap/alone", Op::Munmap, false),
    ("munmap/remote", Op::Munmap, true),
];

impl Probe for Shootdown {
    fn info(&self) -> ProbeInfo {
        ProbeInfo {
            id: "memory/shootdown",
            family: "memory",
            seed: "003",
            summary: "one-page mprotect, madvise, munmap with and without a thread of this process running on the other CPU",
            item: "call on one present page",
            requirements: vec!["a second allowed CPU for the remote variants"],
            variants: VARIANTS
                .iter()
                .enumerate()
                .map(|(i, &(name, _, remote))| Variant {
                    name,
                    baseline: i == 0,
                    params: json!({"other_thread": if remote { "spinning on the other CPU" } else { "none" }}),
                })
                .collect(),
            derived: None,
        }
    }

    fn check(&self, variant: &Variant, placement: &Placement) -> Result<(), String> {
        if variant.name.ends_with("/remote") {
            placement.second_cpu()?;
        }
        Ok(())
    }

    fn measure(&self, variant: &Variant, placement: &Placement, harness: &Harness) -> Outcome {
        let Some(&(_, op, remote)) = VARIANTS.iter().find(|v| v.0 == variant.name) else {
            return Outcome::Unsupported(format!("no variant {}", variant.name));
        };
        let failures = Failures::new();
        if !remote {
            return failures.outcome(measure_op(harness, op, &failures), vec![placement.cpu]);
        }
        let other = placement.other_cpu().unwrap_or(placement.cpu);
        let spinner = match CoRunner::start("mitbench-spinner", other, spin, || {}) {
            Ok(spinner) => spinner,
            Err(reason) => return Outcome::Unsupported(reason),
        };
        let before = spinner.rounds.load(Ordering::Relaxed);
        let measurement = measure_op(harness, op, &failures);
        let progressed = spinner.rounds.load(Ordering::Relaxed) > before;
        let seen = spinner.cpu_seen;
        drop(spinner);
        if !progressed {
            return Outcome::Unsupported(
                "the thread on the other CPU made no progress while measuring".into(),
            );
        }
        failures.outcome(measurement, vec![placement.cpu, seen])
    }
}

/// The other thread: keeps its own pages in its TLB and its CPU busy until
/// told to stop, counting rounds so the probe can see it ran.
fn spin(stop: &AtomicBool, rounds: &AtomicU64) {
    let buffer = vec![0u8; 16 * page_size()];
    while !stop.load(Ordering::Relaxed) {
        for offset in (0..buffer.len()).step_by(page_size()) {
            std::hint::black_box(buffer[offset]);
        }
        rounds.fetch_add(1, Ordering::Relaxed);
    }
}

fn measure_op(harness: &Harness, op: Op, failures: &Failures) -> Option<Measurement> {
    match op {
        Op::Mprotect => {
            let region = touched(1, failures)?;
            let mut read_only = false;
            harness.measure_each(|| {
                read_only = !read_only;
                let prot = if read_only {
                    libc::PROT_READ
                } else {
                    libc::PROT_READ | libc::PROT_WRITE
                };
                // SAFETY: our page; nothing writes it meanwhile.
                failures.check("mprotect", unsafe { protect(region.base(), 1, prot) });
            })
        }
        // SAFETY (both): pages of our region, not touched after the call.
        Op::Madvise => per_page(harness, failures, "madvise", |page| unsafe {
            discard(page, 1)
        }),
        Op::Munmap => per_page(harness, failures, "munmap", |page| unsafe {
            unmap(page, 1)
        }),
    }
}

/// `call` once per page over pages faulted in beforehand (untimed).
fn per_page(
    harness: &Harness,
    failures: &Failures,
    name: &'static str,
    call: impl Fn(*mut u8) -> bool,
) -> Option<Measurement> {
    let page = page_size();
    harness.measure_prepared(
        |n| touched(n, failures),
        |region, n| {
            if let Some(region) = region {
                for i in 0..n as usize {
                    failures.check(name, call(region.at(i * page)));
                }
            }
        },
    )
}
