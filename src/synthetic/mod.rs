//! A synthetic machine: runs made of rounds whose noise is known, seeded
//! and without a clock, for testing what mitbench prints against the truth
//! in milliseconds. It has the three kinds of noise seen on cloud guests:
//!
//! - the quiet speed drifts over minutes (a mean-reverting random walk of
//!   the log speed), so back-to-back runs differ by a few percent;
//! - some figures sit at one of two levels per process, drawn anew in
//!   each fork (a layout or predictor mode a process settles into), and
//!   some at a level per run, which all its forks share (as an indirect
//!   call to two targets did on the Intel guest: 15% dearer in every fork
//!   of one run of five);
//! - a slow state (the host's) holds a share of the time, switching on
//!   and off between canary readings (a two-state Markov chain), read by
//!   the canary that brackets each round, which now and then misreads it;
//!   on the many-levels host ([`Noise::many_levels_guest`]) the slow state
//!   is a continuum of levels, +4% to +30%, drawn anew at every switch,
//!   a switch may fall inside a round, and each row is slowed 0.5x-2x as
//!   much as the canary.
//!
//! A run here goes through [`crate::store::results::analyse`], the analysis a
//! live run gets, so an interval or a verdict is tested as it is printed.

use crate::analysis::interval::Figure;
use crate::analysis::stats::{LineFit, Summary, TukeyOutliers};
use crate::measure::harness::tsc::TscFrequency;
use crate::measure::harness::{Measurement, Settings};
use crate::measure::probes::{Declaration, Measured, Role, Variant};
use crate::measure::schedule::forks::Merged;
use crate::measure::schedule::{ProbeRounds, Round, Stop, VariantRounds};
use crate::store::results::{self, Record};
use std::collections::BTreeMap;

mod host;
pub mod series;
pub use host::{Host, HostProbe};

/// How the synthetic machine behaves.
#[derive(Debug, Clone)]
pub struct Noise {
    /// Standard deviation of the log quiet speed's step per minute, and
    /// the minutes over which it reverts to the mean.
    pub drift_per_minute: f64,
    pub reversion_minutes: f64,
    /// Share of the time in the slow state, how much slower it is, and
    /// how likely the state is to have switched from one canary reading to
    /// the next (the host switches every 0.1-1 s, many rounds apart).
    pub slow_share: f64,
    pub slowdown: f64,
    pub switch_per_reading: f64,
    /// Share of canary readings taken in the other state than the round's.
    pub canary_misread: f64,
    /// Relative standard deviation of a round's figure inside one state.
    pub round_noise: f64,
    /// A second walk of the log speed (per minute, and the minutes over
    /// which it reverts) that moves the canary and every figure but not
    /// the reference: a host that slows the syscall path and not the
    /// core's arithmetic. 0: the reference sees all of the machine's walk.
    pub unseen_drift_per_minute: f64,
    pub unseen_reversion_minutes: f64,
    /// How much of the slow state's slowdown the reference sees: all of
    /// it (1: the whole CPU, as on the Intel Xeon guest), none (0: only the
    /// canary and the figures, the syscall path, as on the AMD EPYC guest),
    /// or a part.
    pub reference_state_share: f64,
    /// The reference's own read noise (relative, only adding).
    pub reference_noise: f64,
    /// How each row follows the machine's speed: its log figure moves by a
    /// slope times the log speed, the slope drawn per row and boot evenly
    /// between the two; None: every row exactly as the speed (slope 1).
    pub slopes: Option<Between>,
    /// Standard deviation of a level of every row's log figure drawn once
    /// per run and shared by its forks, beside each variant's own.
    pub run_level: f64,
    /// Some runs sit at a level of their own on every row.
    pub odd_runs: Option<OddRuns>,
    /// Standard deviation of a level of each row's log figure drawn once
    /// per machine (a boot: layouts and pages it settles), shared by every
    /// run of it.
    pub boot_level: f64,
    /// A continuum of slow levels instead of one `slowdown`: the least and
    /// the most slowdown, each slow stretch's drawn evenly between them.
    pub slow_levels: Option<Between>,
    /// How much more or less than the canary each row is slowed by a slow
    /// level (log-uniform between the two, drawn per row and run); None:
    /// every row exactly as much.
    pub row_sensitivity: Option<Between>,
    /// Whether a switch of level falls inside a round (the round's figure
    /// then at the level that held the larger part of it), not only
    /// between a round and its closing canary.
    pub switch_inside_rounds: bool,
    /// Rounds interrupted inside them: a burst that begins and ends within
    /// the round, too short for its canaries to see, lifting most of its
    /// samples while its fastest stays at the level. None: no round is.
    pub bursts: Option<Bursts>,
    /// Whether the slow state slows the syscall path alone (a trace event
    /// or an audit rule on every syscall): rows of probes that make no
    /// crossing into the kernel keep their figure, and the canary and the
    /// crossing rows slow. False: every row slows.
    pub syscall_path_only: bool,
}

/// Bursts inside rounds: the share of rounds one lands in, and how far it
/// lifts the round's median.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bursts {
    pub share: f64,
    pub lift: f64,
}

/// A draw's bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Between {
    pub least: f64,
    pub most: f64,
}

impl Between {
    /// The point `u` (0 to 1) of the way from the least to the most.
    fn evenly(self, u: f64) -> f64 {
        self.least + (self.most - self.least) * u
    }

    /// The same on the log scale.
    fn log_evenly(self, u: f64) -> f64 {
        (self.least.ln() + (self.most / self.least).ln() * u).exp()
    }
}

/// Runs at a level of their own: their share, and the standard deviation
/// of the level drawn per row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OddRuns {
    pub share: f64,
    pub sd: f64,
}

/// A row's slope to the machine's speed and its level (log at the boot, a
/// factor for a run).
#[derive(Debug, Clone, Copy)]
struct Misfit {
    slope: f64,
    level: f64,
}

/// A run's draws for each row, per probe and variant: see
/// [`Machine::row_draws`].
struct RowDraws {
    levels: Vec<Vec<f64>>,
    slopes: Vec<Vec<f64>>,
    sensitivities: Vec<Vec<f64>>,
}

impl Noise {
    /// A guest like the ones mitbench was built on: back-to-back runs a
    /// few percent apart, a slow state 1.2x in `slow_share` of the time
    /// that slows the syscall path and not the reference.
    pub fn cloud_guest(slow_share: f64) -> Noise {
        Noise {
            drift_per_minute: 0.01,
            reversion_minutes: 10.0,
            slow_share,
            slowdown: 1.2,
            switch_per_reading: 0.1,
            canary_misread: 0.03,
            round_noise: 0.006,
            unseen_drift_per_minute: 0.0,
            unseen_reversion_minutes: 1.0,
            reference_state_share: 0.0,
            reference_noise: 0.001,
            slopes: None,
            run_level: 0.0,
            odd_runs: None,
            boot_level: 0.0,
            slow_levels: None,
            row_sensitivity: None,
            switch_inside_rounds: false,
            bursts: None,
            syscall_path_only: false,
        }
    }

    /// A guest whose whole CPU wanders in speed as the Intel Xeon KVM
    /// guest's did: 5-7% within a run of three minutes, every figure and the
    /// reference with it, in the slow state too.
    pub fn wandering_guest(slow_share: f64) -> Noise {
        Noise {
            drift_per_minute: 0.04,
            reference_state_share: 1.0,
            ..Noise::cloud_guest(slow_share)
        }
    }

    /// A guest like the busy AMD EPYC (Zen 4) one of 2026-11-26: a sharp
    /// quiet level in `quiet_share` of the time and slow levels spread
    /// evenly from +4% to +30% (its 18,086 canary readings: 52% within 2%
    /// of the fastest, then ~4% in every 2% step up to +24%), a level
    /// holding 0.1-1 s and switching inside rounds too, rows slowed 0.5x-2x
    /// as much as the canary, and a reference that does not follow.
    pub fn many_levels_guest(quiet_share: f64) -> Noise {
        Noise {
            slow_levels: Some(Between {
                least: 1.04,
                most: 1.30,
            }),
            row_sensitivity: Some(Between {
                least: 0.5,
                most: 2.0,
            }),
            switch_inside_rounds: true,
            ..Noise::cloud_guest(1.0 - quiet_share)
        }
    }

    /// A guest that does not fit the estimator's model where it is
    /// simplest: rows follow the speed with slopes from 0.5 to 1.5, the
    /// reference reads with 0.5% of noise of its own and sees a third of
    /// the slow state, every row settles at a level per run (0.5%) and,
    /// one run in ten, at an odd one (3%), and each boot (each machine)
    /// sets every row at a level of its own (1%).
    pub fn misfit_guest(slow_share: f64) -> Noise {
        Noise {
            slopes: Some(Between {
                least: 0.5,
                most: 1.5,
            }),
            reference_noise: 0.005,
            reference_state_share: 1.0 / 3.0,
            run_level: 0.005,
            odd_runs: Some(OddRuns {
                share: 0.1,
                sd: 0.03,
            }),
            boot_level: 0.01,
            ..Noise::cloud_guest(slow_share)
        }
    }

    /// A guest whose syscall path a hook slows in long stretches (a trace
    /// event toggled on and off): the canary and the rows that cross into
    /// the kernel 1.2x in `slow_share` of the time, stretches of about a
    /// hundred rounds so that a quick run's fork falls whole in one, and
    /// rows that make no syscall where they were throughout.
    pub fn hooked_guest(slow_share: f64) -> Noise {
        Noise {
            syscall_path_only: true,
            switch_per_reading: 0.01,
            ..Noise::cloud_guest(slow_share)
        }
    }

    /// A guest like the AMD EPYC one mitbench was built on: its host moves
    /// the syscall path's speed while the core's arithmetic, and so the
    /// reference, hardly moves (the canary over the reference strayed
    /// 1.3% between stretches of a run there, and one run of five sat 3%
    /// above its neighbours throughout): here 2% about its level,
    /// reverting over three minutes, so a run's forks share most of it.
    pub fn unseen_path_guest(slow_share: f64) -> Noise {
        Noise {
            drift_per_minute: 0.005,
            unseen_drift_per_minute: 0.02 * (2.0f64 / 3.0).sqrt(),
            unseen_reversion_minutes: 3.0,
            ..Noise::cloud_guest(slow_share)
        }
    }
}

/// One variant of a synthetic probe.
#[derive(Debug, Clone)]
pub struct Truth {
    pub name: &'static str,
    /// Its quiet cost at the machine's mean speed, ticks.
    pub ticks: f64,
    /// Where it sits at one of two levels per process: how much higher
    /// the upper level is (0.3 = 30%); each fork draws one, evenly.
    pub second_level: Option<f64>,
    /// Standard deviation of a level of its log figure drawn once per run
    /// and shared by the run's forks (0: none).
    pub run_level: f64,
    pub baseline: bool,
}

/// A probe of the synthetic machine.
#[derive(Debug, Clone)]
pub struct Probe {
    pub declaration: Declaration,
    pub variants: Vec<Truth>,
    /// Crossings into the kernel an item makes: what a cost added on the
    /// syscall path adds to it ([`Host::add_to_syscall_path`]).
    pub kernel_crossings: f64,
}

/// How a synthetic run is laid out.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub forks: usize,
    /// Passes over the variants in each fork: each variant's rounds there.
    pub passes: usize,
    /// Seconds the whole run spans on the machine's clock: its rounds and
    /// all else a live run does between them.
    pub run_s: f64,
}

/// The canary's quiet figure at the machine's mean speed: what a history
/// of this machine's runs would know as its quiet canary.
pub const CANARY_TICKS: f64 = 275.0;
const CANARY_NOISE: f64 = 0.004;
/// The reference's ticks per step at the machine's mean speed, and its own
/// read noise (which only adds, as the canary's).
const REFERENCE_TICKS: f64 = 4.0;
pub const TSC_MHZ: f64 = 2600.0;

/// A synthetic run: its records, as a live run's are made, and each
/// variant's true figure in it.
pub struct Run {
    pub records: Vec<Record>,
    /// (probe id, variant) -> the figure its rounds would give were every
    /// one of them quiet and free of noise (the truth times the machine's
    /// speed and the process's level then), taken as the headline is: the
    /// median in each fork, their geometric mean. What the headline should
    /// find, whatever the slow state hid.
    pub truth: BTreeMap<(String, String), f64>,
    /// When it ran on the machine's clock, with its drift figure.
    pub time: Option<crate::compare::RunTime>,
    /// Its reference speed (`machine_states.reference`).
    pub reference: Option<f64>,
    /// Whether its figures at that speed stand on the slow rounds too
    /// (`machine_states.reference.slow_rounds_used`).
    pub slow_rounds_used: bool,
}

/// A synthetic machine, seeded; runs made one after another follow its
/// drifting speed, as back-to-back runs would. A clone is its twin: the
/// same draws from there on, for one run analysed two ways.
#[derive(Clone)]
pub struct Machine {
    rng: fastrand::Rng,
    /// The reference's read noise draws from a stream of its own, so the
    /// machine's other draws are what they were before it had one; the
    /// unseen walk likewise.
    reference_rng: fastrand::Rng,
    unseen_rng: fastrand::Rng,
    run_level_rng: fastrand::Rng,
    /// The slow levels and the rows' sensitivity to them draw from a
    /// stream of their own, so a two-state machine's draws stay as they were.
    level_rng: fastrand::Rng,
    /// The misfits (slopes, levels per run, odd runs, the boot's levels)
    /// likewise, and the bursts inside rounds.
    misfit_rng: fastrand::Rng,
    burst_rng: fastrand::Rng,
    /// Each row's slope and boot level, drawn when the machine first runs it.
    rows: BTreeMap<(String, String), Misfit>,
    noise: Noise,
    log_speed: f64,
    /// The log speed of what the reference does not see.
    unseen_log_speed: f64,
    slow: bool,
    /// The slowdown the slow state holds now.
    slow_level: f64,
    /// Seconds since the machine started, at the end of the last run.
    clock_s: f64,
}

impl Machine {
    pub fn new(noise: Noise, seed: u64) -> Machine {
        let mut machine = Machine {
            rng: fastrand::Rng::with_seed(seed),
            reference_rng: fastrand::Rng::with_seed(seed ^ 0x5eed_0f7e_fe7e),
            unseen_rng: fastrand::Rng::with_seed(seed ^ 0x0a5e_e7a1_c0de),
            run_level_rng: fastrand::Rng::with_seed(seed ^ 0x7e7e_1e7e_1000),
            level_rng: fastrand::Rng::with_seed(seed ^ 0x1e7e_15ea_0b0e),
            misfit_rng: fastrand::Rng::with_seed(seed ^ 0x0ddb_0075_107e),
            burst_rng: fastrand::Rng::with_seed(seed ^ 0xb075_7b07_57b0),
            rows: BTreeMap::new(),
            slow_level: noise.slowdown,
            noise,
            log_speed: 0.0,
            unseen_log_speed: 0.0,
            slow: false,
            clock_s: 0.0,
        };
        machine.slow = machine.rng.f64() < machine.noise.slow_share;
        machine.draw_slow_level();
        // Start anywhere in the walk's stationary spread.
        let stationary =
            machine.noise.drift_per_minute * (machine.noise.reversion_minutes / 2.0).sqrt();
        machine.log_speed = stationary * machine.normal();
        machine
    }

    /// Lifts `round`'s median (and its interval and tail) by a burst
    /// inside it, as often as [`Noise::bursts`] says; its fastest sample
    /// stays where it was.
    fn burst_inside(&mut self, round: &mut Round) {
        let Some(bursts) = self.noise.bursts else {
            return;
        };
        if self.burst_rng.f64() >= bursts.share {
            return;
        }
        let per_item = &mut round.measured.measurement.per_item;
        per_item.median = per_item.median.map(|ticks| ticks * bursts.lift);
        per_item.p99 *= bursts.lift;
        per_item.max *= bursts.lift;
    }

    /// A standard normal draw from the machine's main stream.
    fn normal(&mut self) -> f64 {
        standard_normal(&mut self.rng)
    }

    /// Moves the speed on by `seconds`.
    fn elapse(&mut self, seconds: f64) {
        let minutes = seconds / 60.0;
        let keep = (-minutes / self.noise.reversion_minutes).exp();
        self.log_speed =
            self.log_speed * keep + self.noise.drift_per_minute * minutes.sqrt() * self.normal();
        if self.noise.unseen_drift_per_minute > 0.0 {
            let keep = (-minutes / self.noise.unseen_reversion_minutes).exp();
            self.unseen_log_speed = self.unseen_log_speed * keep
                + self.noise.unseen_drift_per_minute
                    * minutes.sqrt()
                    * standard_normal(&mut self.unseen_rng);
        }
    }

    /// The speed the canary and the figures run at: the machine's, and what
    /// the reference does not see.
    fn path_speed(&self) -> f64 {
        (self.log_speed + self.unseen_log_speed).exp()
    }

    /// A new slow level where the host has a continuum of them.
    fn draw_slow_level(&mut self) {
        if let Some(levels) = self.noise.slow_levels {
            self.slow_level = levels.evenly(self.level_rng.f64());
        }
    }

    /// The slowdown of the state the machine is in now.
    fn state_slowdown(&self) -> f64 {
        if self.slow { self.slow_level } else { 1.0 }
    }

    /// The state after one more canary reading's time: a two-state chain
    /// whose stationary slow share is `slow_share`; on a host with many
    /// slow levels, each switch into the slow state (and a switch of the
    /// same chance within it) draws a new level.
    fn step_state(&mut self) {
        if self.slow
            && self.noise.slow_levels.is_some()
            && self.level_rng.f64() < self.noise.switch_per_reading
        {
            self.draw_slow_level();
        }
        let p = self.noise.slow_share;
        let switch = 2.0 * self.noise.switch_per_reading;
        let leave = if self.slow {
            switch * (1.0 - p)
        } else {
            switch * p
        };
        if self.rng.f64() < leave.min(1.0) {
            self.slow = !self.slow;
            if self.slow {
                self.draw_slow_level();
            }
        }
    }

    fn canary(&mut self) -> f64 {
        let misread = self.rng.f64() < self.noise.canary_misread;
        let state = if self.slow != misread {
            self.slow_level
        } else {
            1.0
        };
        // Noise only ever adds time.
        CANARY_TICKS * self.path_speed() * state * (1.0 + CANARY_NOISE * self.normal().abs())
    }

    /// The reference beside a round: the machine's speed (and state, where
    /// the state slows the whole CPU), with a read noise of its own.
    fn reference(&mut self) -> f64 {
        let state = 1.0 + self.noise.reference_state_share * (self.state_slowdown() - 1.0);
        let normal = standard_normal(&mut self.reference_rng);
        REFERENCE_TICKS
            * self.log_speed.exp()
            * state
            * (1.0 + self.noise.reference_noise * normal.abs())
    }

    /// What a run draws for each row before its first round, in `probes`'
    /// order: its level for the run (its own, the boot's, an odd run's),
    /// its slope to the machine's speed and its sensitivity to slow levels.
    fn row_draws(&mut self, probes: &[Probe]) -> RowDraws {
        let run_levels = per_variant(probes, |v| {
            if v.run_level > 0.0 {
                (v.run_level * standard_normal(&mut self.run_level_rng)).exp()
            } else {
                1.0
            }
        });
        let misfits = self.misfits(probes);
        let levels = run_levels
            .iter()
            .zip(&misfits)
            .map(|(levels, rows)| {
                levels
                    .iter()
                    .zip(rows)
                    .map(|(level, misfit)| level * misfit.level)
                    .collect()
            })
            .collect();
        let slopes = misfits
            .iter()
            .map(|rows| rows.iter().map(|m| m.slope).collect())
            .collect();
        let sensitivities = per_variant(probes, |_| match self.noise.row_sensitivity {
            Some(s) => s.log_evenly(self.level_rng.f64()),
            None => 1.0,
        });
        RowDraws {
            levels,
            slopes,
            sensitivities,
        }
    }

    /// Each variant's level in a new process (a fork): its run's level,
    /// raised to its second level where it has one and the process drew it.
    fn process_levels(&mut self, probe: &Probe, run_levels: &[f64]) -> Vec<f64> {
        probe
            .variants
            .iter()
            .zip(run_levels)
            .map(|(v, run_level)| match v.second_level {
                Some(up) if self.rng.bool() => (1.0 + up) * run_level,
                _ => *run_level,
            })
            .collect()
    }

    /// Each variant's slope and its level for this run beyond its own
    /// (the boot's, every row's per run, an odd run's, as a factor), in
    /// `probes`' order.
    fn misfits(&mut self, probes: &[Probe]) -> Vec<Vec<Misfit>> {
        let Noise {
            slopes,
            run_level,
            odd_runs,
            boot_level,
            ..
        } = self.noise;
        let odd = odd_runs.is_some_and(|o| self.misfit_rng.f64() < o.share);
        probes
            .iter()
            .map(|probe| {
                probe
                    .variants
                    .iter()
                    .map(|v| {
                        let key = (probe.declaration.id.to_string(), v.name.to_string());
                        let rng = &mut self.misfit_rng;
                        let boot = *self.rows.entry(key).or_insert_with(|| Misfit {
                            slope: slopes.map_or(1.0, |s| s.evenly(rng.f64())),
                            level: boot_level * standard_normal(rng),
                        });
                        let mut level = boot.level + run_level * standard_normal(rng);
                        if let (true, Some(o)) = (odd, odd_runs) {
                            level += o.sd * standard_normal(rng);
                        }
                        Misfit {
                            slope: boot.slope,
                            level: level.exp(),
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// How much of a slow level's slowdown a row of `probe` takes: its
    /// drawn sensitivity, or none where the slow state is on the syscall
    /// path alone and the probe makes no syscall.
    fn sensitivity(&self, probe: &Probe, drawn: f64) -> f64 {
        match self.noise.syscall_path_only {
            true if probe.kernel_crossings == 0.0 => 0.0,
            _ => drawn,
        }
    }

    /// One run of `probes` laid out as `layout`, analysed with `settings`.
    pub fn run(&mut self, probes: &[Probe], layout: Layout, settings: &Settings) -> Run {
        self.run_with(probes, layout, settings, results::RunFacts::default())
    }

    /// [`Machine::run`], analysed knowing what a history of this machine's
    /// runs would hold (`RunFacts::known_quiet`, `RunFacts::run_to_run`).
    pub fn run_with(
        &mut self,
        probes: &[Probe],
        layout: Layout,
        settings: &Settings,
        facts: results::RunFacts,
    ) -> Run {
        let mut merged = Merged::default();
        let mut clean = CleanFigures::new();
        let mut clock = 0.0;
        let variants_total: usize = probes.iter().map(|p| p.variants.len()).sum();
        let round_s = layout.run_s / (layout.forks * layout.passes * variants_total) as f64;
        let rows = self.row_draws(probes);
        for fork in 0..layout.forks {
            let mut last_canary = None;
            for (((probe, run_levels), sensitivities), slopes) in probes
                .iter()
                .zip(&rows.levels)
                .zip(&rows.sensitivities)
                .zip(&rows.slopes)
            {
                let levels = self.process_levels(probe, run_levels);
                let mut variants: Vec<VariantRounds> =
                    probe.variants.iter().map(variant_rounds).collect();
                for pass in 0..layout.passes {
                    let mut order: Vec<usize> = (0..probe.variants.len()).collect();
                    self.rng.shuffle(&mut order);
                    for i in order {
                        self.elapse(round_s);
                        clock += round_s;
                        let (before, reference_before) = match last_canary {
                            Some(read) => read,
                            None => (self.canary(), self.reference()),
                        };
                        let speed = self.path_speed().powf(slopes[i]);
                        let quiet_figure = probe.variants[i].ticks * levels[i] * speed;
                        clean
                            .entry((
                                probe.declaration.id.to_string(),
                                probe.variants[i].name.to_string(),
                            ))
                            .or_default()
                            .entry(fork)
                            .or_default()
                            .push(quiet_figure);
                        let round_noise = 1.0 + self.noise.round_noise * self.normal();
                        let before_switch = self.state_slowdown();
                        self.step_state();
                        // A switch inside the round: the round's median is
                        // the level that held the larger part of it.
                        let state = if self.noise.switch_inside_rounds && self.level_rng.bool() {
                            self.state_slowdown()
                        } else {
                            before_switch
                        };
                        let slowed =
                            1.0 + self.sensitivity(probe, sensitivities[i]) * (state - 1.0);
                        let figure = quiet_figure * slowed * round_noise;
                        let after = self.canary();
                        let reference_after = self.reference();
                        last_canary = Some((after, reference_after));
                        merged.canaries.extend([before, after]);
                        merged.canary_times.extend([clock - round_s, clock]);
                        let mut round = Round {
                            reference_before: Some(reference_before),
                            reference_after: Some(reference_after),
                            ..round_at(figure, pass, clock, fork, before, after)
                        };
                        self.burst_inside(&mut round);
                        variants[i].rounds.push(round);
                        variants[i].elapsed_s += round_s;
                    }
                }
                for v in &mut variants {
                    v.stopped = Some(Stop::Budget);
                }
                merged.probes.push(ProbeRounds {
                    declaration: probe.declaration,
                    toll: None,
                    variants,
                    order_seed: 0,
                });
            }
        }
        merged.probes = merge_forks(merged.probes);
        let (states, records) = analysed(&merged, settings, facts);
        let started_s = self.clock_s;
        self.clock_s += clock;
        Run {
            records,
            truth: truth_of(clean),
            time: states.run_time(started_s..self.clock_s, layout.forks),
            reference: states.reference.as_ref().map(|r| r.ticks),
            slow_rounds_used: states
                .reference
                .as_ref()
                .is_some_and(|r| r.slow_rounds_used),
        }
    }
}

/// One draw for each variant of each probe, in order: a figure a run
/// gives each row (its level for the run, its sensitivity to slow levels).
fn per_variant(probes: &[Probe], mut draw: impl FnMut(&Truth) -> f64) -> Vec<Vec<f64>> {
    probes
        .iter()
        .map(|probe| probe.variants.iter().map(&mut draw).collect())
        .collect()
}

/// A standard normal draw (Box-Muller).
pub(crate) fn standard_normal(rng: &mut fastrand::Rng) -> f64 {
    let u = rng.f64().max(f64::MIN_POSITIVE);
    let v = rng.f64();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// Each row's quiet figure free of round noise and slow states, one per
/// round in each fork: the truth a run's figure is held to is their
/// medians' geometric mean over the forks, as a run reads its forks.
type CleanFigures = BTreeMap<(String, String), BTreeMap<usize, Vec<f64>>>;

fn truth_of(clean: CleanFigures) -> BTreeMap<(String, String), f64> {
    clean
        .into_iter()
        .map(|(key, forks)| {
            let medians: Vec<f64> = forks
                .into_values()
                .map(|figures| crate::analysis::stats::median_of(&figures).unwrap_or(0.0))
                .collect();
            (key, crate::analysis::rounds::across_forks(&medians))
        })
        .collect()
}

/// The synthetic rounds read as a real run's are, at the synthetic TSC.
fn analysed(
    merged: &Merged,
    settings: &Settings,
    facts: results::RunFacts,
) -> (results::MachineStates, Vec<results::Record>) {
    let tsc = TscFrequency {
        mhz: TSC_MHZ,
        source: "synthetic".into(),
        calibrated_mhz: None,
    };
    results::analyse(merged, &tsc, settings, facts)
}

/// The forks' [`ProbeRounds`] of one probe as one, rounds in order.
fn merge_forks(per_fork: Vec<ProbeRounds>) -> Vec<ProbeRounds> {
    let mut merged: Vec<ProbeRounds> = Vec::new();
    for probe in per_fork {
        match merged
            .iter_mut()
            .find(|p| p.declaration.id == probe.declaration.id)
        {
            Some(into) => {
                for (a, b) in into.variants.iter_mut().zip(probe.variants) {
                    a.rounds.extend(b.rounds);
                    a.elapsed_s += b.elapsed_s;
                }
            }
            None => merged.push(probe),
        }
    }
    merged
}

pub fn variant_rounds(truth: &Truth) -> VariantRounds {
    VariantRounds::new(Variant {
        index: 0,
        name: truth.name.to_string(),
        role: Role::baseline_if(truth.baseline),
        params: serde_json::Value::Null,
        batch: None,
        bytes_per_item: None,
        latency_step: None,
        seed_choice: None,
    })
}

/// A round whose median is `figure`, inside a 0.2% interval of its own.
pub fn round_at(
    figure: f64,
    pass: usize,
    at_s: f64,
    fork: usize,
    before: f64,
    after: f64,
) -> Round {
    let half = figure * 0.001;
    Round {
        pass,
        started_s: at_s,
        canary_before: Some(before),
        canary_after: Some(after),
        reference_before: None,
        reference_after: None,
        measured: Measured {
            measurement: Measurement {
                per_item: Summary {
                    n: 100,
                    median: Figure::within(figure, Some(half)),
                    mad: half,
                    p99: figure * 1.01,
                    min: figure * 0.99,
                    max: figure * 1.02,
                    outliers: TukeyOutliers::default(),
                    block_medians: Vec::new(),
                },
                fit: LineFit {
                    slope: figure,
                    intercept: 0.0,
                    r2: 1.0,
                },
                size_medians: Vec::new(),
                base_batch: 1,
                items: 100,
                dropped_migrated: 0,
                dropped_backwards: 0,
                elapsed_s: 0.01,
                budget_s: 3.0,
                interrupted: false,
                counters: None,
                phases: Vec::new(),
                phase_marks: None,
            },
            cpus: vec![0],
            notes: Vec::new(),
            figures: Vec::new(),
            partner_stalled: None,
        },
        worker_pid: fork as u32 + 1,
        interrupted: false,
        fork,
    }
}

/// The probes the synthetic machine's tests use: a syscall-like probe
/// (hundreds of ticks, all variants at one level), an indirect-call-like
/// one (a few ticks, two variants at one of two levels per process), and
/// a batch-like one with a wide range of costs; each probe's first variant
/// is its baseline.
pub fn guest_probes() -> Vec<Probe> {
    GUEST
        .iter()
        .map(|&(id, item, kernel_crossings, variants)| Probe {
            declaration: Declaration::new(id, "none", item),
            kernel_crossings,
            variants: variants
                .iter()
                .enumerate()
                .map(|(i, &(name, ticks, second_level))| Truth {
                    name,
                    ticks,
                    second_level,
                    run_level: 0.0,
                    baseline: i == 0,
                })
                .collect(),
        })
        .collect()
}

/// (probe, item, crossings into the kernel an item makes, [(variant,
/// ticks, second level)]) of [`guest_probes`].
type ProbeTable = [(
    &'static str,
    &'static str,
    f64,
    &'static [(&'static str, f64, Option<f64>)],
); 3];
const GUEST: ProbeTable = [
    (
        crate::mitigations::SYNTHETIC_SYSCALL,
        "call",
        1.0,
        &[
            ("raw", 270.0, None),
            ("libc", 380.0, None),
            ("filtered", 420.0, None),
        ],
    ),
    (
        "synthetic/call",
        "call",
        0.0,
        &[
            ("direct", 1.2, None),
            ("indirect", 3.4, Some(0.35)),
            ("wrapper", 3.6, Some(0.17)),
            ("thunk", 25.0, None),
        ],
    ),
    (
        "synthetic/batch",
        "page",
        0.0,
        &[
            ("B=1", 5400.0, None),
            ("B=8", 900.0, None),
            ("B=64", 300.0, None),
        ],
    ),
];
