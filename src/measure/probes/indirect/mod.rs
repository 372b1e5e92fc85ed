//! Family `indirect` (seed 001): what retpolines, return thunks and
//! speculation barriers cost per call, and how much of it bulking and the
//! compare-then-direct-call wrapper win back.

mod barrier;
mod calls;
mod dispatch;
mod pipeline;

use super::AnyProbe;
pub(super) use barrier::lfence;

pub fn probes() -> Vec<&'static dyn AnyProbe> {
    vec![
        &calls::Calls,
        &barrier::Barrier,
        &pipeline::PIPELINE_64,
        &pipeline::PIPELINE_1500,
    ]
}
