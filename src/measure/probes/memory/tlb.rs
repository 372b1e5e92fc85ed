//! The XPFO curve: a TLB-sensitive workload (a dependent pointer chase with
//! one hop per page, over a working set of W pages) alone, and with a TLB
//! invalidation every K hops (a one-page mprotect round trip elsewhere in
//! the address space, as a page-ownership change would do). The ratio to
//! the workload alone is its slowdown against K. dTLB load misses are in the
//! counters where a PMU exists; without one the counters say so.

use super::region::{Region, page_size, protect};
use crate::measure::harness::Harness;
use crate::measure::probes::failures::Failures;
use crate::measure::probes::{Config, Declaration, Outcome, Placement, Probe, Role, Unsupported};
use serde::Serialize;
use std::fmt;

pub struct Chase {
    pub pages: usize,
    declaration: Declaration,
}

const fn chase(id: &'static str, pages: usize) -> Chase {
    Chase {
        pages,
        declaration: Declaration::new(id, "003", "hop (dependent load)").summary("pointer chase, one hop per page over W pages, with a one-page mprotect round trip every K hops").requires(&["a PMU for dTLB-load-miss counts (reported as unavailable otherwise)"]),
    }
}

pub const CHASES: [Chase; 4] = [
    chase("memory/tlb-16p", 16),
    chase("memory/tlb-256p", 256),
    chase("memory/tlb-4096p", 4096),
    chase("memory/tlb-65536p", 65536),
];

/// Invalidation intervals; None means never.
const EVERY: [Option<u64>; 6] = [None, Some(1), Some(16), Some(256), Some(4096), Some(65536)];

/// The chase over `pages`, with an invalidation every `every` hops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Invalidating {
    #[serde(rename = "working_set_pages")]
    pages: usize,
    #[serde(rename = "invalidate_every")]
    every: Option<u64>,
}

impl fmt::Display for Invalidating {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.every {
            None => f.write_str("K=none"),
            Some(k) => write!(f, "K={k}"),
        }
    }
}

impl Config for Invalidating {
    fn role(&self) -> Role {
        Role::baseline_if(self.every.is_none())
    }
}

described_by_field!(Chase);

impl Probe for Chase {
    type Config = Invalidating;

    fn configs(&self) -> Vec<Invalidating> {
        EVERY
            .map(|every| Invalidating {
                pages: self.pages,
                every,
            })
            .to_vec()
    }

    fn measure(&self, config: &Invalidating, placement: &Placement, harness: &Harness) -> Outcome {
        let every = config.every.unwrap_or(0);
        let (ring, victim) = match (Region::anon(self.pages), Region::anon(1)) {
            (Ok(ring), Ok(victim)) => (ring, victim),
            (Err(e), _) | (_, Err(e)) => return Outcome::Unsupported(Unsupported::io("mmap", &e)),
        };
        victim.touch_all();
        let start = link_pages(&ring);
        let mut at = start;
        let mut hops = 0u64;
        let failures = Failures::new();
        let measurement = harness.measure(|n| {
            for _ in 0..n {
                // SAFETY: every page holds the address of another page of
                // the ring at its chosen offset (link_pages).
                at = unsafe { *(at as *const usize) };
                hops += 1;
                if every != 0 && hops.is_multiple_of(every) {
                    // SAFETY: our own page, not otherwise accessed.
                    let ok = unsafe {
                        protect(victim.base(), 1, libc::PROT_READ)
                            && protect(victim.base(), 1, libc::PROT_READ | libc::PROT_WRITE)
                    };
                    failures.check("mprotect", ok);
                }
            }
            std::hint::black_box(at);
        });
        drop((ring, victim));
        failures.outcome(measurement, vec![placement.cpu])
    }
}

/// Links the pages into one random cycle, one pointer per page at a varying
/// cache-line offset (so hops do not all compete for one cache set), and
/// returns the first pointer's address.
fn link_pages(ring: &Region) -> usize {
    let page = page_size();
    let pages = ring.len() / page;
    let mut order: Vec<usize> = (0..pages).collect();
    fastrand::Rng::with_seed(0xc4a5e).shuffle(&mut order);
    let slot = |p: usize| ring.at(p * page + (p * 64) % page) as usize;
    for i in 0..pages {
        let (from, to) = (order[i], order[(i + 1) % pages]);
        // SAFETY: both addresses are inside the writable ring, aligned to 64.
        unsafe { (slot(from) as *mut usize).write(slot(to)) };
    }
    slot(order[0])
}
