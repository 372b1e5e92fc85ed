//! The XPFO curve: a TLB-sensitive workload (a dependent pointer chase with
//! one hop per page, over a working set of W pages) alone, and with a TLB
//! invalidation every K hops (a one-page mprotect round trip elsewhere in
//! the address space, as a page-ownership change would do). The ratio to
//! the workload alone is its slowdown against K. dTLB load misses are in the
//! counters where a PMU exists; without one the counters say so.

use super::region::{Region, page_size, protect};
use crate::harness::Harness;
use crate::probes::failures::Failures;
use crate::probes::{Outcome, Placement, Probe, ProbeInfo, Variant};
use serde_json::json;

pub struct Chase {
    pub pages: usize,
}

pub const CHASES: [Chase; 4] = [
    Chase { pages: 16 },
    Chase { pages: 256 },
    Chase { pages: 4096 },
    Chase { pages: 65536 },
];

/// Invalidation intervals; 0 means never.
const EVERY: [(&str, u64); 6] = [
    ("K=none", 0),
    ("K=1", 1),
    ("K=16", 16),
    ("K=256", 256),
    ("K=4096", 4096),
    ("K=65536", 65536),
];

impl Probe for Chase {
    fn info(&self) -> ProbeInfo {
        const IDS: [&str; 4] = [
            "memory/tlb-16p",
            "memory/tlb-256p",
            "memory/tlb-4096p",
            "memory/tlb-65536p",
        ];
        let id = CHASES
            .iter()
            .position(|c| c.pages == self.pages)
            .map_or("memory/tlb", |i| IDS[i]);
        ProbeInfo {
            id,
            family: "memory",
            seed: "003",
            summary: "pointer chase, one hop per page over W pages, with a one-page mprotect round trip every K hops",
            item: "hop (dependent load)",
            requirements: vec![
                "a PMU for dTLB-load-miss counts (reported as unavailable otherwise)",
            ],
            variants: EVERY
                .iter()
                .map(|&(name, k)| Variant {
                    name,
                    baseline: k == 0,
                    params: json!({
                        "working_set_pages": self.pages,
                        "invalidate_every": if k == 0 { serde_json::Value::Null } else { k.into() },
                    }),
                })
                .collect(),
            derived: None,
        }
    }

    fn measure(&self, variant: &Variant, placement: &Placement, harness: &Harness) -> Outcome {
        let every = EVERY
            .iter()
            .find(|v| v.0 == variant.name)
            .map_or(0, |v| v.1);
        let (ring, victim) = match (Region::anon(self.pages), Region::anon(1)) {
            (Ok(ring), Ok(victim)) => (ring, victim),
            (Err(e), _) | (_, Err(e)) => return Outcome::Unsupported(format!("mmap failed: {e}")),
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
