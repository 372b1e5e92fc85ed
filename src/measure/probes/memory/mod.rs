//! Family `memory` (seed 003): what page faults, page-table changes and TLB
//! invalidations cost here, how much batching the range wins back, and what
//! a flush every K accesses does to a TLB-sensitive workload.

mod fault;
mod mapping;
pub(crate) mod region;
mod secret;
mod shootdown;
mod tlb;

use super::AnyProbe;

pub(crate) use region::{Region, page_size};
pub use shootdown::PARTNER_ROUND_TRIP;

pub fn probes() -> Vec<&'static dyn AnyProbe> {
    let mut probes: Vec<&'static dyn AnyProbe> = vec![
        &fault::Fault,
        &mapping::Mmap,
        &mapping::Mprotect,
        &mapping::Madvise,
        &shootdown::Shootdown,
    ];
    probes.extend(tlb::CHASES.iter().map(|c| c as &dyn AnyProbe));
    probes.push(&secret::Secret);
    probes
}
