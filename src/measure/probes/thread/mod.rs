//! Family `thread` (seed 002): what a new thread costs with each kind of
//! signal channel, up to a TLS session that only ever signals.

mod churn;
pub mod tls;

use super::AnyProbe;

pub fn probes() -> Vec<&'static dyn AnyProbe> {
    churn::CHURNS.iter().map(|c| c as &dyn AnyProbe).collect()
}
