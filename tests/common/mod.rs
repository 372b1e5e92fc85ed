//! What the tests that run probes share: a harness with a tiny budget and
//! the placement the CLI would choose. Tests assert invariants, never
//! absolute timings, so tiny budgets suffice.

use mitbench::harness::{Harness, Settings, affinity, tsc};
use mitbench::probes::Placement;
use std::time::Duration;

pub fn tiny_harness() -> Harness {
    let settings = Settings {
        budget_s: 0.05,
        warmup_s: 0.005,
        min_samples: 16,
        max_samples: 400,
        sample_us: 5.0,
        ..Settings::quick()
    };
    let mhz = tsc::calibrate_mhz(Duration::from_millis(10), 3).expect("TSC calibration");
    Harness::new(settings, mhz)
}

/// The highest allowed CPU, as `mitbench run` picks by default.
pub fn placement() -> Placement {
    let allowed = affinity::allowed_cpus().expect("sched_getaffinity");
    Placement {
        cpu: *allowed.last().expect("an allowed CPU"),
        allowed,
    }
}
