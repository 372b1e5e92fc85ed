//! Histories made of a stored run with known changes laid on it: each
//! row's run-to-run noise drawn with a seed, a step at a known run with or
//! without a kernel update, a lone busy run. For `history changes` and the
//! report's timeline.

use super::scale_variant;
use mitbench::store::history::History;
use mitbench::store::results::RunDocument;
use std::path::Path;

/// Runs in each history, and the first run of the new level where one is
/// laid (ids start at 1).
pub const RUNS: usize = 12;
pub const STEP_RUN: usize = 7;

/// What is laid on the runs of one history.
#[derive(Clone, Copy)]
pub struct Laid {
    /// os/getpid's rows times this from `STEP_RUN` on.
    pub step: f64,
    /// The kernel release changes at the step.
    pub kernel_update: bool,
    /// Every row times this in one run, with its quiet canary: a busy
    /// host for one run.
    pub busy_run: Option<(usize, f64)>,
}

pub const NOTHING: Laid = Laid {
    step: 1.0,
    kernel_update: false,
    busy_run: None,
};

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut fastrand::Rng) -> f64 {
    let u = rng.f64().max(f64::MIN_POSITIVE);
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * rng.f64()).cos()
}

/// Run `n` (from 1) of host `host`: the fixture with 1% run-to-run noise
/// on every row, and what `laid` puts on it.
pub fn run(n: usize, host: &str, laid: Laid, seed: u64) -> RunDocument {
    let mut doc = super::stored_run("run-a.json");
    doc.inventory.identity.hostname = host.to_string();
    doc.started_at = format!("2026-11-{:02}T03:00:00+00:00", n);
    let mut rng = fastrand::Rng::with_seed(seed * 1000 + n as u64);
    let rows: Vec<(String, String)> = doc
        .results
        .iter()
        .map(|r| (r.id.clone(), r.variant.clone()))
        .collect();
    for (id, variant) in &rows {
        let factor = (0.01 * normal(&mut rng)).exp();
        scale_variant(&mut doc, id, Some(variant), factor);
    }
    if n >= STEP_RUN {
        scale_variant(&mut doc, "os/getpid", None, laid.step);
        if laid.kernel_update {
            doc.inventory.kernel.release = "6.18.45-next".into();
            doc.inventory.identity.boot_id = "boot-after-the-update".into();
        }
    }
    if let Some((busy, factor)) = laid.busy_run
        && busy == n
    {
        for (id, variant) in &rows {
            scale_variant(&mut doc, id, Some(variant), factor);
        }
        doc.machine_states.model.quiet_canary *= factor;
    }
    doc
}

/// A history of `RUNS` runs of `host` at `path`.
pub fn history(path: &str, host: &str, laid: Laid, seed: u64) -> History {
    let mut history = History::open(Path::new(path), true).unwrap();
    for n in 1..=RUNS {
        history.store(&run(n, host, laid, seed)).unwrap();
    }
    history
}
