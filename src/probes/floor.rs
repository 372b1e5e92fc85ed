//! The harness measuring nothing: what an empty item costs once the fixed
//! cost of a sample is fitted out. Anything well above zero here would be
//! added to every other probe's figures.

use super::{Declaration, Outcome, Placement, Probe};
use crate::harness::Harness;

pub struct Floor;

named_configs! {
    pub enum Empty (baseline Empty) {
        Empty => "empty" {},
    }
}

const FLOOR: Declaration = Declaration {
    id: "harness/floor",
    family: "harness",
    seed: "none",
    summary: "an empty closure timed like every other item: the harness's own per-item cost",
    item: "empty closure call",
    requirements: &["x86-64 with rdtscp"],
    rate_unit: None,
};

impl Probe for Floor {
    type Config = Empty;

    fn declaration(&self) -> &Declaration {
        &FLOOR
    }

    fn configs(&self) -> Vec<Empty> {
        vec![Empty::Empty]
    }

    fn measure(&self, _: &Empty, placement: &Placement, harness: &Harness) -> Outcome {
        Outcome::on_cpus(harness.measure_each(|| {}), vec![placement.cpu])
    }
}
