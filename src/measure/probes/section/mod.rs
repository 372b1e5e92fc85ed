//! Family `section` (seed 004): what crypto costs per byte here, and the
//! trade between throughput and a co-runner's latency when a long section
//! is chunked and yields.

pub mod algorithms;
pub mod chunked;
mod crypto;

use super::AnyProbe;

/// "4KiB", "16MiB": a power-of-two size as the variant and probe names
/// spell it.
fn size_name(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{}MiB", bytes >> 20)
    } else {
        format!("{}KiB", bytes >> 10)
    }
}

pub fn probes() -> Vec<&'static dyn AnyProbe> {
    let mut probes: Vec<&'static dyn AnyProbe> =
        crypto::CRYPTOS.iter().map(|c| c as &dyn AnyProbe).collect();
    probes.push(&chunked::Chunked);
    probes
}
