//! The canary: a fixed workload timed between rounds, whose only job is to
//! say what state the machine is in (see [`super::states`]).
//!
//! The raw getpid syscall: it crosses into the kernel and back, so it slows
//! with everything a host's state touches (entry, caches, the TLB), costs
//! a few hundred ticks, and needs no set-up. The best of a few short
//! samples is taken: an interrupt inside one sample is not a machine state.

use super::tsc;

/// Calls per sample and samples per reading: a reading short beside a round.
const CALLS: u32 = 64;
const SAMPLES: usize = 5;

/// What the canary is, for the report.
pub const DESCRIPTION: &str = "raw getpid syscall, ticks per call, best of 5 samples of 64 calls";

/// One reading: ticks per call, or None when every sample migrated or the
/// clock went backwards (then the round has no state of its own).
pub fn read() -> Option<f64> {
    // A round's helper threads may still be exiting on this CPU after
    // their join; one yield lets them finish first, so the reading is of
    // the machine, not of the round's teardown.
    std::thread::yield_now();
    (0..SAMPLES)
        .filter_map(|_| {
            let start = tsc::read();
            for _ in 0..CALLS {
                std::hint::black_box(crate::sys::syscall0(libc::SYS_getpid));
            }
            let end = tsc::read();
            (start.cpu == end.cpu && end.ticks > start.ticks)
                .then(|| (end.ticks - start.ticks) as f64 / f64::from(CALLS))
        })
        .min_by(f64::total_cmp)
}
