//! Measuring: one round timed (`harness`), the probes that each time one
//! boundary (`probes`), and the rounds of a run scheduled over them
//! (`schedule`). Nothing here computes an interval; `analysis` does.

pub mod harness;
pub mod probes;
pub mod schedule;
