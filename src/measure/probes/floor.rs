//! The harness measuring nothing: what an empty item costs once the fixed
//! cost of a sample is fitted out. Anything well above zero here would be
//! added to every other probe's figures.

use super::{Outcome, Placement, Probe};
use crate::measure::harness::Harness;

probe! {
    /// an empty closure timed like every other item: the harness's own per-item cost
    pub struct Floor: "harness/floor", seed "none", item "empty closure call",
        requires ["x86-64 with rdtscp"];
}

named_configs! {
    pub enum Empty (baseline Empty) {
        Empty => "empty" {},
    }
}

impl Probe for Floor {
    type Config = Empty;

    fn measure(&self, _: &Empty, placement: &Placement, harness: &Harness) -> Outcome {
        Outcome::on_cpus(harness.measure_each(|| {}), vec![placement.cpu])
    }
}
