//! Page-table changes and the TLB flushes they force: mmap+munmap, munmap
//! of touched pages, and mprotect / madvise(MADV_DONTNEED) over B pages per
//! call, B from 1 to 512. Costs are per page, so the range curve shows the
//! per-call toll (entry, a flush) amortised over the range.

use super::region::{Region, discard, page_size, protect, touched, unmap};
use crate::harness::Harness;
use crate::probes::failures::Failures;
use crate::probes::{Outcome, Placement, Probe, ProbeInfo, Variant, static_name};
use serde_json::json;

/// Pages per call for the range curves.
pub const RANGES: [usize; 10] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

fn range_of(variant: &Variant) -> usize {
    variant
        .params
        .get("batch")
        .and_then(|b| b.as_u64())
        .unwrap_or(1) as usize
}

fn range_variants(what: &str) -> Vec<Variant> {
    RANGES
        .iter()
        .map(|&b| Variant {
            name: static_name(format!("B={b}")),
            baseline: b == 1,
            params: json!({"batch": b, "call": what, "pages_per_call": b}),
        })
        .collect()
}

pub struct Mmap;

const MMAP_VARIANTS: [(&str, usize, bool); 4] = [
    ("mmap+munmap/N=1", 1, false),
    ("mmap+munmap/N=64", 64, false),
    ("munmap/N=1", 1, true),
    ("munmap/N=64", 64, true),
];

impl Probe for Mmap {
    fn info(&self) -> ProbeInfo {
        ProbeInfo {
            id: "memory/mmap",
            family: "memory",
            seed: "003",
            summary: "mmap+munmap of N untouched pages; munmap alone of N touched pages (which must flush)",
            item: "call (or call pair)",
            requirements: vec![],
            variants: MMAP_VARIANTS
                .iter()
                .enumerate()
                .map(|(i, &(name, pages, touched))| Variant {
                    name,
                    baseline: i == 0,
                    params: json!({"pages": pages, "touched": touched}),
                })
                .collect(),
            derived: None,
        }
    }

    fn measure(&self, variant: &Variant, placement: &Placement, harness: &Harness) -> Outcome {
        let Some(&(_, pages, unmap_only)) = MMAP_VARIANTS.iter().find(|v| v.0 == variant.name)
        else {
            return Outcome::Unsupported(format!("no variant {}", variant.name));
        };
        let failures = Failures::new();
        let measurement = if unmap_only {
            // n regions mapped and touched beforehand; each item unmaps one.
            // A map that fails leaves an item with nothing to unmap: the
            // round is then not measured.
            harness.measure_prepared(
                |n| {
                    (0..n)
                        .filter_map(|_| failures.ok("mmap", Region::anon(pages)))
                        .inspect(|r| r.touch_all())
                        .collect::<Vec<_>>()
                },
                |regions, _| {
                    for region in regions.iter() {
                        // SAFETY: unmaps our own mapping, untouched after.
                        failures.check("munmap", unsafe { unmap(region.base(), pages) });
                    }
                },
            )
        } else {
            harness.measure_each(|| drop(failures.ok("mmap", Region::anon(pages))))
        };
        failures.outcome(measurement, vec![placement.cpu])
    }
}

pub struct Mprotect;

impl Probe for Mprotect {
    fn info(&self) -> ProbeInfo {
        ProbeInfo {
            id: "memory/mprotect",
            family: "memory",
            seed: "003",
            summary: "toggle read-only/read-write on B touched pages per call: the flush-batching curve",
            item: "page",
            requirements: vec![],
            variants: range_variants("mprotect"),
            derived: None,
        }
    }

    fn measure(&self, variant: &Variant, placement: &Placement, harness: &Harness) -> Outcome {
        let b = range_of(variant);
        let total = RANGES[RANGES.len() - 1];
        let region = match Region::anon(total) {
            Ok(region) => region,
            Err(e) => return Outcome::Unsupported(format!("mmap failed: {e}")),
        };
        region.touch_all();
        // Each range flips between read-only and read-write, so every call
        // really changes present PTEs and must flush them.
        let mut read_only = vec![false; total / b];
        let mut next = 0;
        let failures = Failures::new();
        let measurement = harness.in_groups_of(b as u64).measure(|n| {
            for _ in 0..n as usize / b {
                let prot = if read_only[next] {
                    libc::PROT_READ | libc::PROT_WRITE
                } else {
                    libc::PROT_READ
                };
                read_only[next] = !read_only[next];
                // SAFETY: a range of our region; nothing writes it meanwhile.
                let ok = unsafe { protect(region.at(next * b * page_size()), b, prot) };
                failures.check("mprotect", ok);
                next = (next + 1) % read_only.len();
            }
        });
        drop(region);
        failures.outcome(measurement, vec![placement.cpu])
    }
}

pub struct Madvise;

impl Probe for Madvise {
    fn info(&self) -> ProbeInfo {
        ProbeInfo {
            id: "memory/madvise",
            family: "memory",
            seed: "003",
            summary: "madvise(MADV_DONTNEED) on B touched pages per call: zap, free and flush, batched",
            item: "page",
            requirements: vec![],
            variants: range_variants("madvise(MADV_DONTNEED)"),
            derived: None,
        }
    }

    fn measure(&self, variant: &Variant, placement: &Placement, harness: &Harness) -> Outcome {
        let b = range_of(variant);
        // The pages are faulted in before each sample (untimed), so every
        // call has present pages to zap.
        let failures = Failures::new();
        let measurement = harness.in_groups_of(b as u64).measure_prepared(
            |n| touched(n, &failures),
            |region, n| {
                if let Some(region) = region {
                    for call in 0..n as usize / b {
                        // SAFETY: a range of our region.
                        let ok = unsafe { discard(region.at(call * b * page_size()), b) };
                        failures.check("madvise", ok);
                    }
                }
            },
        );
        failures.outcome(measurement, vec![placement.cpu])
    }
}
