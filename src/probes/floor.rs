//! The harness measuring nothing: what an empty item costs once the fixed
//! cost of a sample is fitted out. Anything well above zero here would be
//! added to every other probe's figures.

use super::{Outcome, Placement, Probe, ProbeInfo, Variant};
use crate::harness::Harness;
use serde_json::json;

pub struct Floor;

impl Probe for Floor {
    fn info(&self) -> ProbeInfo {
        ProbeInfo {
            id: "harness/floor",
            family: "harness",
            seed: "none",
            summary: "an empty closure timed like every other item: the harness's own per-item cost",
            item: "empty closure call",
            requirements: vec!["x86-64 with rdtscp"],
            derived: None,
            variants: vec![Variant {
                name: "empty",
                baseline: true,
                params: json!({}),
            }],
        }
    }

    fn measure(&self, _variant: &Variant, placement: &Placement, harness: &Harness) -> Outcome {
        Outcome::on_cpus(harness.measure_each(|| {}), vec![placement.cpu])
    }
}
