//! mitbench: what the security mitigations on this machine cost, where, and
//! how much of it batching wins back.
//!
//! `main.rs` parses the command line ([`cli`]) and hands it to [`commands`];
//! everything else is this library, which the tests use too.

pub mod analysis;
pub mod answer;
pub mod attribute;
pub mod cli;
pub mod commands;
pub mod compare;
pub mod export;
pub mod inventory;
pub mod measure;
pub mod mitigations;
pub mod plan;
pub mod run;
pub mod store;
// The seeded machine the statistics' tests and examples run on. Compiled
// into every build, not behind a feature: with one, `cargo test` built the
// library a second time beside the release build `cargo run` had made
// (docs/why-the-code-is-so.md); the binary links none of it.
#[doc(hidden)]
pub mod synthetic;
pub mod sys;
pub mod tax;
pub mod thunks;
pub mod unsupported;
