//! The synthetic machine as the harness sees a live one: a clock that
//! advances by the ticks it hands out, a canary, a reference, and probes
//! whose samples it times, so a run goes through the real scheduler and
//! fork logic (the gate's waits, the wait for the boot's known level or the
//! watch after the last round, the stopping rule) rather than a layout of
//! rounds. Its noise is [`Machine`]'s: the drifting speed and the slow
//! state step every [`STATE_STEP_S`] of its clock, a round's figure is its
//! row's level times the speed and the state at each of its samples.
//!
//! Two timelines come on top of the noise, as a test sets them: the whole
//! host slower by a factor (a cloud host busy for a whole run: the canary,
//! every row and the reference), and ticks added to every crossing into
//! the kernel (a trace event, an audit rule: the canary and the rows that
//! cross, not the reference).

use super::{Machine, Noise, Probe, RowDraws, TSC_MHZ, Truth};
use crate::measure::harness::machine::Machine as Clocked;
use crate::measure::harness::{Harness, Timed};
use crate::measure::probes::{self, Config, Declaration, Described, Outcome, Placement, Role};
use serde::Serialize;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often the slow state may switch and the speed walks: a few times a
/// second, as the busy guests' hosts switch every 0.1-1 s.
pub const STATE_STEP_S: f64 = 0.1;
/// Ticks a sample pays besides its items (the timer's reads, the call).
const SAMPLE_TICKS: f64 = 60.0;
/// Calls in one canary reading, and steps of work in one reference reading.
const CANARY_CALLS: f64 = 320.0;
const REFERENCE_STEPS: f64 = 10_000.0;

/// The synthetic machine behind a clock.
pub struct Host {
    inner: Mutex<Inner>,
}

struct Inner {
    machine: Machine,
    now_s: f64,
    since_step_s: f64,
    /// How much slower the whole host is than the noise makes it.
    whole: f64,
    /// Ticks added to every crossing into the kernel, until the clock
    /// reaches `on_syscall_path_until_s`.
    on_syscall_path: f64,
    on_syscall_path_until_s: f64,
    /// This run's draws for each row, and each row's level in the process.
    run: Option<RowDraws>,
    process: Vec<Vec<f64>>,
    jitter: fastrand::Rng,
}

impl Inner {
    /// Ticks a crossing into the kernel pays now besides the noise's.
    fn on_path(&self) -> f64 {
        match self.now_s < self.on_syscall_path_until_s {
            true => self.on_syscall_path,
            false => 0.0,
        }
    }

    fn advance(&mut self, seconds: f64) {
        self.now_s += seconds;
        self.since_step_s += seconds;
        while self.since_step_s >= STATE_STEP_S {
            self.since_step_s -= STATE_STEP_S;
            self.machine.elapse(STATE_STEP_S);
            self.machine.step_state();
        }
    }
}

impl Host {
    pub fn new(noise: Noise, seed: u64) -> Arc<Host> {
        Arc::new(Host {
            inner: Mutex::new(Inner {
                machine: Machine::new(noise, seed),
                now_s: 0.0,
                since_step_s: 0.0,
                whole: 1.0,
                on_syscall_path: 0.0,
                on_syscall_path_until_s: f64::INFINITY,
                run: None,
                process: Vec::new(),
                jitter: fastrand::Rng::with_seed(seed ^ 0x5a3f_1e5e_0b5e),
            }),
        })
    }

    /// The whole host `factor` times slower than its noise from now on.
    pub fn slow_whole(&self, factor: f64) {
        self.lock().whole = factor;
    }

    /// `ticks` added to every crossing into the kernel from now on.
    pub fn add_to_syscall_path(&self, ticks: f64) {
        self.add_to_syscall_path_for(ticks, f64::INFINITY);
    }

    /// `ticks` added to every crossing into the kernel for the next
    /// `seconds` of the host's clock: a hook toggled on for a stretch.
    pub fn add_to_syscall_path_for(&self, ticks: f64, seconds: f64) {
        let mut inner = self.lock();
        inner.on_syscall_path = ticks;
        inner.on_syscall_path_until_s = inner.now_s + seconds;
    }

    /// A new run of `probes`: each row's level for it, slope and
    /// sensitivity drawn, as [`Machine::run`] draws them.
    pub fn begin_run(&self, probes: &[Probe]) {
        let mut inner = self.lock();
        let draws = inner.machine.row_draws(probes);
        inner.run = Some(draws);
    }

    /// A new process (a fork) of the run: each row's level in it.
    pub fn begin_process(&self, probes: &[Probe]) {
        let mut inner = self.lock();
        let levels = inner.run.as_ref().expect("begin_run first").levels.clone();
        inner.process = probes
            .iter()
            .zip(&levels)
            .map(|(probe, run_levels)| inner.machine.process_levels(probe, run_levels))
            .collect();
    }

    /// `probes` as the scheduler runs them on this host.
    pub fn probes(self: &Arc<Host>, probes: &[Probe]) -> Vec<HostProbe> {
        probes
            .iter()
            .enumerate()
            .map(|(index, probe)| HostProbe {
                host: self.clone(),
                index,
                declaration: probe.declaration,
                variants: probe
                    .variants
                    .iter()
                    .enumerate()
                    .map(|(variant, truth)| Row {
                        variant,
                        truth: truth.clone(),
                        crossings: probe.kernel_crossings,
                    })
                    .collect(),
            })
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().expect("the host's lock")
    }

    /// The per-item figure of `row` of probe `probe` now, before the
    /// round's own noise.
    fn figure(inner: &Inner, probe: usize, row: &Row) -> f64 {
        let draws = inner.run.as_ref().expect("begin_run first");
        let (slope, sensitivity) = (
            draws.slopes[probe][row.variant],
            draws.sensitivities[probe][row.variant],
        );
        let level = inner.process[probe][row.variant];
        let slowed = 1.0 + sensitivity * (inner.machine.state_slowdown() - 1.0);
        row.truth.ticks * level * inner.machine.path_speed().powf(slope) * slowed * inner.whole
            + row.crossings * inner.on_path()
    }

    /// One sample of `n` items of `row`: its ticks, and the clock moved on
    /// by them.
    fn sample(&self, probe: usize, row: &Row, round_noise: f64, n: u64) -> Timed<()> {
        let mut inner = self.lock();
        let per_item = Host::figure(&inner, probe, row) * round_noise;
        // A sample's own noise, which only adds, as a timer's does.
        let own = 1.0 + 0.002 * inner.jitter.f64();
        let ticks = (SAMPLE_TICKS + n as f64 * per_item) * own;
        inner.advance(ticks / (TSC_MHZ * 1e6));
        Timed::Kept(ticks.round() as u64, ())
    }
}

impl Clocked for Host {
    fn now(&self) -> Duration {
        Duration::from_secs_f64(self.lock().now_s)
    }

    fn canary(&self) -> Option<f64> {
        let mut inner = self.lock();
        let reading = inner.machine.canary() * inner.whole + inner.on_path();
        inner.advance(reading * CANARY_CALLS / (TSC_MHZ * 1e6));
        Some(reading)
    }

    fn reference(&self) -> Option<f64> {
        let mut inner = self.lock();
        let reading = inner.machine.reference() * inner.whole;
        inner.advance(reading * REFERENCE_STEPS / (TSC_MHZ * 1e6));
        Some(reading)
    }

    fn stop_requested(&self) -> bool {
        false
    }

    fn pause(&self, d: Duration) {
        self.lock().advance(d.as_secs_f64());
    }
}

/// A variant of a probe on the host.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    #[serde(skip)]
    variant: usize,
    #[serde(skip)]
    truth: Truth,
    #[serde(skip)]
    crossings: f64,
}

impl fmt::Display for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.truth.name)
    }
}

impl PartialEq for Row {
    fn eq(&self, other: &Row) -> bool {
        self.variant == other.variant && self.truth.name == other.truth.name
    }
}

impl Config for Row {
    fn role(&self) -> Role {
        Role::baseline_if(self.truth.baseline)
    }
}

/// A synthetic probe as the scheduler runs it.
pub struct HostProbe {
    host: Arc<Host>,
    index: usize,
    declaration: Declaration,
    variants: Vec<Row>,
}

impl Described for HostProbe {
    fn declaration(&self) -> &Declaration {
        &self.declaration
    }
}

impl probes::Probe for HostProbe {
    type Config = Row;

    fn configs(&self) -> Vec<Row> {
        self.variants.clone()
    }

    /// A round: its own noise drawn once, as a process's layout or a
    /// round's interrupts move a whole round; the state and the speed as
    /// they are at each sample.
    fn measure(&self, row: &Row, _: &Placement, harness: &Harness) -> Outcome {
        let round_noise = {
            let mut inner = self.host.lock();
            1.0 + inner.machine.noise.round_noise * inner.machine.normal()
        };
        let measured = harness
            .measure_samples(|n| self.host.sample(self.index, row, round_noise, n))
            .map(|(m, _)| m);
        Outcome::on_cpus(measured, vec![0])
    }
}
