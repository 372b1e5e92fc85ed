//! What the tests that run probes share: a harness with a tiny budget and
//! the placement the CLI would choose. Tests assert invariants, never
//! absolute timings, so tiny budgets suffice.

use mitbench::harness::{Harness, Settings, affinity, tsc};
use mitbench::probes::{self, AnyProbe, Figure, Measured, Outcome, Placement, Variant};
use std::time::Duration;

pub fn tiny_harness() -> Harness {
    let settings = Settings {
        budget_s: 0.05,
        warmup_s: 0.005,
        round_s: 0.005,
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

/// Says on the terminal that part of a test did not run here and why.
/// Written to stderr directly: libtest would swallow an `eprintln!` of a
/// passing test.
#[allow(dead_code)] // not every test crate skips anything
pub fn skipped(what: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "skipped: {what}");
}

/// mitbench's named helper threads ("mitbench-...") alive in this process.
/// Other tests' threads come and go meanwhile, so only these are counted.
#[allow(dead_code)] // not every test crate checks for helpers
pub fn helper_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|comm| comm.trim().starts_with("mitbench-"))
        .count()
}

/// Asserts every figure is finite and not negative, and returns a lookup
/// of a figure's value by name.
#[allow(dead_code)] // not every test crate reads figures
pub fn sane_figures<'a>(label: &'a str, figures: &'a [Figure]) -> impl Fn(&str) -> f64 + 'a {
    for f in figures {
        assert!(
            f.value.is_finite() && f.value >= 0.0,
            "{label}: {} {}",
            f.name,
            f.value
        );
    }
    move |name| {
        figures
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("{label}: no figure {name}"))
            .value
    }
}

/// Probe `id` and its variant named `variant`; panics if there is none.
#[allow(dead_code)] // not every test crate runs single variants
pub fn probe_variant(id: &str, variant: &str) -> (&'static dyn AnyProbe, Variant) {
    let probe = probes::select(&[id.to_string()]).expect("a probe id")[0];
    let v = probe
        .variants()
        .into_iter()
        .find(|v| v.name == variant)
        .unwrap_or_else(|| panic!("{id} has no variant {variant}"));
    (probe, v)
}

/// Runs one round of `variant` of probe `id` with the tiny harness, pinned as
/// `mitbench run` pins; panics unless it was measured.
#[allow(dead_code)] // not every test crate runs single variants
pub fn measure(id: &str, variant: &str) -> Box<Measured> {
    let placement = placement();
    let _pin = affinity::pin_current_thread(placement.cpu).expect("pinning");
    let (probe, v) = probe_variant(id, variant);
    match probe.run(&v, &placement, &tiny_harness()) {
        Outcome::Measured(m) => m,
        other => panic!("{id} {variant}: not measured: {other:?}"),
    }
}
