//! Probes: each declares what it measures and hands the harness closures.
//! The registry lists them in report order.
//!
//! The contract a probe implements is in [`contract`], what it gives back
//! in [`outcome`], the list of them in [`registry`].

#[macro_use]
mod macros;

mod cflags;
mod corunner;
mod doorbell;
pub mod failures;
mod floor;
pub mod guest;
mod indirect;
mod kernel;
pub(crate) mod memory;
pub(crate) mod os;
pub mod section;
pub mod syscall;
pub mod teardown;
pub mod thread;
pub mod wake_latency;

mod contract;
mod outcome;
mod registry;

pub use crate::unsupported::{Kind, Unsupported};
pub use contract::*;
pub use memory::PARTNER_ROUND_TRIP;
pub use outcome::*;
pub use registry::*;
