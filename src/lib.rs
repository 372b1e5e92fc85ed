//! mitbench: what the security mitigations on this machine cost, where, and
//! how much of it batching wins back.
//!
//! The CLI in `main.rs` is a thin layer over this library; tests use it too.

pub mod compare;
pub mod duration;
pub mod export;
pub mod harness;
pub mod history;
pub mod inventory;
pub mod probes;
pub mod results;
pub mod run;
pub mod schedule;
pub mod stats;
pub mod sys;
pub mod tax;
pub mod thunks;
pub mod unsupported;
