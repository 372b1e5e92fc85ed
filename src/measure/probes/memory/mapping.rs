//! Page-table changes and the TLB flushes they force: mmap+munmap, munmap
//! of touched pages, and mprotect / madvise(MADV_DONTNEED) over B pages per
//! call, B from 1 to 512. Costs are per page, so the range curve shows the
//! per-call toll (entry, a flush) amortised over the range.

use super::region::{Region, discard, page_size, protect, touched, unmap};
use crate::measure::harness::Harness;
use crate::measure::probes::failures::Failures;
use crate::measure::probes::{Batched, Config, Outcome, Placement, Probe, Role, Unsupported};
use serde::Serialize;
use std::fmt;

/// Pages per call for the range curves.
pub const RANGES: [usize; 10] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

/// B pages per call of one range call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Range {
    #[serde(rename = "batch")]
    pages: usize,
    call: &'static str,
    #[serde(rename = "pages_per_call")]
    per_call: usize,
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "B={}", self.pages)
    }
}

impl Config for Range {
    fn role(&self) -> Role {
        Role::baseline_if(self.pages == 1)
    }

    fn batch(&self) -> Option<Batched> {
        Some(Batched {
            group: String::new(),
            size: self.pages as u64,
        })
    }
}

fn ranges(call: &'static str) -> Vec<Range> {
    RANGES
        .iter()
        .map(|&pages| Range {
            pages,
            call,
            per_call: pages,
        })
        .collect()
}

probe! {
    /// mmap+munmap of N untouched pages; munmap alone of N touched pages (which must flush)
    pub struct Mmap: "memory/mmap", seed "003", item "call (or call pair)";
}

/// N pages mapped and unmapped, or (touched) mapped and touched untimed
/// and only unmapped timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Unmapping {
    pages: usize,
    touched: bool,
}

impl fmt::Display for Unmapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let call = if self.touched {
            "munmap"
        } else {
            "mmap+munmap"
        };
        write!(f, "{call}/N={}", self.pages)
    }
}

impl Config for Unmapping {
    fn role(&self) -> Role {
        Role::baseline_if(self.pages == 1 && !self.touched)
    }
}

impl Probe for Mmap {
    type Config = Unmapping;

    fn configs(&self) -> Vec<Unmapping> {
        [false, true]
            .into_iter()
            .flat_map(|touched| [1, 64].map(|pages| Unmapping { pages, touched }))
            .collect()
    }

    fn measure(&self, config: &Unmapping, placement: &Placement, harness: &Harness) -> Outcome {
        let Unmapping {
            pages,
            touched: unmap_only,
        } = *config;
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

probe! {
    /// toggle read-only/read-write on B touched pages per call: the flush-batching curve
    pub struct Mprotect: "memory/mprotect", seed "003", item "page";
}

impl Probe for Mprotect {
    type Config = Range;

    fn configs(&self) -> Vec<Range> {
        ranges("mprotect")
    }

    fn measure(&self, range: &Range, placement: &Placement, harness: &Harness) -> Outcome {
        let b = range.pages;
        let total = RANGES[RANGES.len() - 1];
        let region = match Region::anon(total) {
            Ok(region) => region,
            Err(e) => return Outcome::Unsupported(Unsupported::io("mmap", &e)),
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

probe! {
    /// madvise(MADV_DONTNEED) on B touched pages per call: zap, free and flush, batched
    pub struct Madvise: "memory/madvise", seed "003", item "page";
}

impl Probe for Madvise {
    type Config = Range;

    fn configs(&self) -> Vec<Range> {
        ranges("madvise(MADV_DONTNEED)")
    }

    fn measure(&self, range: &Range, placement: &Placement, harness: &Harness) -> Outcome {
        let b = range.pages;
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
