//! The reference: a fixed piece of user-space work timed beside the canary
//! at every round's edges, that no mitigation can move, so that what moves
//! it is the machine's own speed.
//!
//! A dependent chain of multiply-adds held in one register: no syscall
//! (PTI, return thunks, buffer clearing, seccomp and IBRS act on kernel
//! entry and exit), no load or store (SSBD and L1D flushes act on memory
//! order and contents), no indirect branch and no return inside the timed
//! loop (retpolines, IBPB and RSB filling act on those). Each step waits
//! for the one before, so its time is the multiplier's and adder's latency
//! in core cycles, and its ticks per step are the core's cycles over the
//! TSC's: what a host that runs the guest slower or faster changes. The
//! best of a few samples is taken, as the canary's is: an interrupt inside
//! one sample is not a speed.

use super::tsc;

/// Steps per sample and samples per reading. At a few core cycles a step
/// a sample is some ten thousand cycles, so the TSC's one-tick resolution
/// is under 0.01% of it, and a reading is short beside a round.
const STEPS: u64 = 4_000;
const SAMPLES: usize = 5;

/// What the reference is, for the report.
pub const DESCRIPTION: &str = "a dependent 64-bit multiply-add chain in one register (no memory, \
                               no syscall, no indirect branch), ticks per step, best of 5 \
                               samples of 4,000 steps";

/// The chain itself: `steps` dependent multiply-adds on `x`. The empty asm
/// keeps the compiler from folding the chain into a closed form.
#[inline(never)]
fn chain(mut x: u64, steps: u64) -> u64 {
    for _ in 0..steps {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        // SAFETY: an empty asm block that only claims to read and write x.
        unsafe { std::arch::asm!("/* {0} */", inout(reg) x, options(nomem, nostack)) };
    }
    x
}

/// One reading: ticks per step, or None when every sample migrated or the
/// clock went backwards.
pub fn read() -> Option<f64> {
    let mut x = 1u64;
    let best = (0..SAMPLES)
        .filter_map(|_| {
            let start = tsc::read();
            x = chain(x, STEPS);
            let end = tsc::read();
            (start.cpu == end.cpu && end.ticks > start.ticks)
                .then(|| (end.ticks - start.ticks) as f64 / STEPS as f64)
        })
        .min_by(f64::total_cmp);
    std::hint::black_box(x);
    best
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_chain_is_not_folded_away() {
        // Same input, same output; and it is not the identity.
        assert_eq!(super::chain(1, 10), super::chain(1, 10));
        assert_ne!(super::chain(1, 10), 1);
    }
}
