//! Family `section` (seed 004): what crypto costs per byte here, and the
//! trade between throughput and a co-runner's latency when a long section
//! is chunked and yields.

pub mod algorithms;
pub mod chunked;
mod crypto;

use super::Probe;

pub fn probes() -> Vec<&'static dyn Probe> {
    let mut probes: Vec<&'static dyn Probe> =
        crypto::CRYPTOS.iter().map(|c| c as &dyn Probe).collect();
    probes.push(&chunked::Chunked);
    probes
}
