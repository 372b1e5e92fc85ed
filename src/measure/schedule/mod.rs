//! Rounds: every variant of a probe is measured in many short rounds, the
//! rounds of all its variants interleaved in a random order with a recorded
//! seed (Google Benchmark's random interleaving), and each round bracketed
//! by the canary. A machine state that comes and goes thus lands on every
//! variant alike, and the canary says which rounds it landed on.
//!
//! Interleaving the rounds of all probes over the whole run was tried: on a
//! guest whose speed drifts over seconds and minutes it did not make runs
//! reproduce better and took longer, since every round then carries the
//! run's whole drift and more of them are needed for the same interval
//! (docs/why-the-code-is-so.md).
//!
//! Each round is a fresh call of the probe, so what a round can vary is made
//! afresh: its buffers, threads, filters and mappings. The measuring thread
//! stays pinned to one CPU throughout; the canary runs there too.
//!
//! After every pass over the variants the stopping rule is applied per
//! variant (see [`Scheduler::decide`]); when all have stopped, each
//! measured variant gets one counting round with perf counters attached,
//! whose timing never enters a figure.

pub mod forks;
pub mod gate;
mod revisit;

use crate::analysis::figure::Figure;
use crate::analysis::rounds::{self, RoundFigure};
use crate::analysis::states::StateModel;
use crate::measure::harness::Harness;
use crate::measure::probes::{
    AnyProbe, Declaration, Kind, Measured, Outcome, Placement, TollPair, Unsupported, Variant,
};
use gate::{Decision, Gate};
use revisit::Patience;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::time::Duration;

/// Why a variant got no more rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stop {
    /// The round-level interval met the target.
    TargetMet,
    /// The variant's time budget was spent first.
    Budget,
    /// The most rounds a variant may have.
    MaxRounds,
    /// Ctrl-C.
    Interrupted,
}

impl Stop {
    pub fn describe(self) -> &'static str {
        match self {
            Stop::TargetMet => "target met",
            Stop::Budget => "budget spent",
            Stop::MaxRounds => "most rounds reached",
            Stop::Interrupted => "interrupted",
        }
    }
}

/// The share of a round its partner thread may lose and the round still
/// be of the state where the partner runs: with one sample in ten from the
/// other state, a round's median moves by no more than the step from the
/// 44th to the 50th percentile of its own state's samples.
pub const PARTNER_AWAY_SHARE: f64 = 0.10;

/// How far apart (log) the reference readings on a round's two sides may be
/// for the round to count as run at one speed.
const STEADY_REFERENCE: f64 = 0.02;

/// One round of one variant.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Round {
    /// Which pass over the probe's variants it was part of.
    pub pass: usize,
    /// Seconds since the run started, at the round's start.
    pub started_s: f64,
    /// Canary readings just before and just after the round.
    pub canary_before: Option<f64>,
    pub canary_after: Option<f64>,
    /// Reference readings (the machine's own speed, `harness::reference`)
    /// just before and just after the round; None in documents before it.
    #[serde(default)]
    pub reference_before: Option<f64>,
    #[serde(default)]
    pub reference_after: Option<f64>,
    pub measured: Measured,
    /// The process the round ran in, and which of the run's forks (fresh
    /// worker processes, in order) that was.
    pub worker_pid: u32,
    pub fork: usize,
    /// Interrupted inside it, as its row's rounds tell
    /// ([`VariantRounds::mark_interrupted`]): neither quiet nor of a slow
    /// level, whatever its canaries read.
    #[serde(default)]
    pub interrupted: bool,
}

impl Round {
    /// Whether the thread the probe kept on another CPU was stalled for
    /// more than [`PARTNER_AWAY_SHARE`] of the round
    /// ([`Measured::partner_stalled`]): the round ran in another host
    /// state than the one the figure is of.
    pub fn partner_away(&self) -> bool {
        self.measured
            .partner_stalled
            .is_some_and(|share| share > PARTNER_AWAY_SHARE)
    }

    /// Of neither level: interrupted inside it, or run with its partner
    /// away. Such a round is left out of the figure as long as the row has
    /// others.
    pub fn of_no_level(&self) -> bool {
        self.interrupted || self.partner_away()
    }

    /// Quiet when both canaries read quiet and nothing interrupted it
    /// inside; a round without a reading on either side is not counted
    /// quiet.
    pub fn quiet(&self, model: &StateModel) -> bool {
        !self.of_no_level() && self.canaries_quiet(model)
    }

    /// Whether the canaries on both sides read quiet, whatever the round's
    /// own samples say.
    pub fn canaries_quiet(&self, model: &StateModel) -> bool {
        [self.canary_before, self.canary_after]
            .iter()
            .all(|c| c.is_some_and(|c| model.is_quiet(c)))
    }

    /// Whether both canaries read one state, quiet or slow, and nothing
    /// interrupted it inside: the machine did not change state during the
    /// round (as far as the round and its canaries tell).
    pub fn one_state(&self, model: &StateModel) -> bool {
        match (self.canary_before, self.canary_after) {
            (Some(a), Some(b)) => !self.of_no_level() && model.is_quiet(a) == model.is_quiet(b),
            _ => false,
        }
    }

    /// The canary beside the round: the mean of the readings on both
    /// sides; None where either is missing.
    pub fn canary(&self) -> Option<f64> {
        Some((self.canary_before? + self.canary_after?) / 2.0)
    }

    /// The machine's speed beside the round: the mean of the reference
    /// readings on both sides (one where only one was taken).
    pub fn reference(&self) -> Option<f64> {
        match (self.reference_before, self.reference_after) {
            (Some(a), Some(b)) => Some((a + b) / 2.0),
            (one, other) => one.or(other),
        }
    }

    /// Whether the reference read the same speed on both sides of the
    /// round (within 2%): where it did not, the machine changed state
    /// during the round and the mean of the two readings is no speed the
    /// round ran at, so the round says nothing of how the row follows it.
    pub fn reference_steady(&self) -> bool {
        match (self.reference_before, self.reference_after) {
            (Some(a), Some(b)) if a > 0.0 && b > 0.0 => (a / b).ln().abs() <= STEADY_REFERENCE,
            _ => false,
        }
    }

    pub fn figure(&self, model: &StateModel) -> RoundFigure {
        let per_item = &self.measured.measurement.per_item;
        RoundFigure {
            figure: Figure {
                ci95: per_item.median.ci95.filter(|_| per_item.has_ci()),
                ..per_item.median
            },
            fork: self.fork,
            quiet: self.quiet(model),
            interrupted: self.of_no_level(),
        }
    }
}

/// Everything one variant's rounds produced.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VariantRounds {
    pub variant: Variant,
    pub rounds: Vec<Round>,
    /// The counting round: perf counters attached, timing reported apart.
    pub counting: Option<Measured>,
    pub unsupported: Option<Unsupported>,
    pub stopped: Option<Stop>,
    /// Wall time of all its rounds, set-up included.
    pub elapsed_s: f64,
    /// Whether the answer reads it: until it has its quiet rounds it waits
    /// for the quiet level past the other rows' allowance, out of the
    /// answer's reserve ([`gate::ANSWER_RESERVE_SHARE`]), and it goes on past
    /// its budget until it has the rounds an interval needs
    /// ([`Scheduler::decide`]).
    #[serde(default)]
    pub answer: bool,
}

impl VariantRounds {
    /// A variant before its first round.
    pub fn new(variant: Variant) -> VariantRounds {
        VariantRounds {
            variant,
            rounds: Vec::new(),
            counting: None,
            unsupported: None,
            stopped: None,
            elapsed_s: 0.0,
            answer: false,
        }
    }

    fn active(&self) -> bool {
        self.unsupported.is_none() && self.stopped.is_none()
    }

    /// The base batch its first round settled on.
    fn base_batch(&self) -> Option<u64> {
        self.rounds
            .first()
            .map(|r| r.measured.measurement.base_batch)
    }

    /// Its budget, all rounds together: the probe may take a share of the
    /// run's per-variant budget, which its first round reports.
    pub fn budget_s(&self, default: f64) -> f64 {
        self.rounds
            .first()
            .map_or(default, |r| r.measured.measurement.budget_s)
    }

    pub fn figures(&self, model: &StateModel) -> Vec<RoundFigure> {
        self.rounds.iter().map(|r| r.figure(model)).collect()
    }

    /// Marks the rounds interrupted inside them by the row's rounds
    /// together ([`rounds::interrupted`], against the canary's quiet band
    /// and the `earlier` runs' usual gap where the history has one): a
    /// burst too short for the canaries around a round to see.
    pub fn mark_interrupted(&mut self, model: &StateModel, earlier: Option<rounds::UsualGap>) {
        let rounds: Vec<rounds::RoundReading> = self
            .rounds
            .iter()
            .map(|r| {
                let per_item = &r.measured.measurement.per_item;
                rounds::RoundReading {
                    median: per_item.median.value,
                    fastest: per_item.min,
                    canaries_quiet: r.canaries_quiet(model),
                    fork: r.fork,
                }
            })
            .collect();
        for (round, interrupted) in
            self.rounds
                .iter_mut()
                .zip(rounds::interrupted(&rounds, model.quiet_band, earlier))
        {
            round.interrupted = interrupted;
        }
    }
}

/// A probe's variants and their rounds.
#[derive(Debug, Clone)]
pub struct ProbeRounds {
    pub declaration: Declaration,
    /// The toll and reference variants, as indices into `variants`.
    pub toll: Option<TollPair<usize>>,
    pub variants: Vec<VariantRounds>,
    /// Seed of the random order of rounds within each pass.
    pub order_seed: u64,
}

/// Runs the rounds of one probe after another, keeping the run's canary
/// readings (the state model is fitted over all of them).
pub struct Scheduler<'a> {
    pub harness: &'a Harness,
    pub placement: &'a Placement,
    /// When the run started, on the harness's machine clock.
    run_started: Duration,
    /// Every canary reading of the run so far, and when it was taken
    /// (seconds since the run started).
    pub canaries: Vec<f64>,
    pub canary_times: Vec<f64>,
    last_canary: Option<f64>,
    last_reference: Option<f64>,
    round_log: Option<Box<dyn Write + 'a>>,
    /// Which of the run's forks this process is.
    pub fork: usize,
    /// Whether each measured variant gets its counting round here.
    pub counting: bool,
    /// Budget the fork's stopped variants left unspent, less what others
    /// took beyond theirs: what a variant still short of quiet rounds may
    /// go on with (`Scheduler::decide`), so the fork never runs past the
    /// sum of its variants' budgets.
    spare_s: f64,
    /// When the fork's first round began: the gate's time is counted from
    /// it, the wait for the boot's known level before it left out.
    rounds_began: Option<Duration>,
    /// Waits for the quiet level before each round, and counts them.
    pub gate: Gate,
    /// The rows the answer reads, (probe, variant) ([`VariantRounds::answer`]).
    pub answer_rows: Vec<(String, String)>,
}

impl<'a> Scheduler<'a> {
    pub fn new(
        harness: &'a Harness,
        placement: &'a Placement,
        round_log: Option<Box<dyn Write + 'a>>,
    ) -> Scheduler<'a> {
        Scheduler {
            harness,
            placement,
            run_started: harness.machine.now(),
            canaries: Vec::new(),
            canary_times: Vec::new(),
            last_canary: None,
            last_reference: None,
            round_log,
            fork: 0,
            counting: true,
            spare_s: 0.0,
            rounds_began: None,
            gate: Gate::new(harness.settings.wait_for_quiet, 0.0),
            answer_rows: Vec::new(),
        }
    }

    fn seconds_since(&self, start: Duration) -> f64 {
        (self.harness.machine.now() - start).as_secs_f64()
    }

    /// Reads the canary and, right after it, the reference.
    fn canary(&mut self) -> Option<f64> {
        let reading = self.harness.machine.canary();
        self.keep_canary(reading)
    }

    /// Keeps a canary reading among the run's, and reads the reference.
    fn keep_canary(&mut self, reading: Option<f64>) -> Option<f64> {
        if let Some(c) = reading {
            self.canaries.push(c);
            self.canary_times.push(self.seconds_since(self.run_started));
        }
        self.last_canary = reading;
        self.last_reference = self.harness.machine.reference();
        reading
    }

    /// Measures `probe` in rounds until every variant has stopped.
    /// `on_pass` is told after each pass how many variants have stopped.
    pub fn run_probe(
        &mut self,
        probe: &dyn AnyProbe,
        order_seed: u64,
        mut on_pass: impl FnMut(usize),
    ) -> ProbeRounds {
        let mut variants: Vec<VariantRounds> = probe
            .variants()
            .into_iter()
            .map(VariantRounds::new)
            .collect();
        let id = probe.declaration().id;
        for v in variants.iter_mut() {
            v.unsupported = probe.check(&v.variant, self.placement).err();
            v.answer = self
                .answer_rows
                .iter()
                .any(|(p, name)| p == id && *name == v.variant.name);
        }
        // What an answer row adds is read against its baseline's rounds of
        // the same pass: the baseline goes on with it.
        if variants.iter().any(|v| v.answer) {
            for v in variants.iter_mut().filter(|v| v.variant.is_baseline()) {
                v.answer = true;
            }
        }
        let machine = self.harness.machine.clone();
        let seed = rounds::seed_of(probe.declaration().id);
        let mut rng = fastrand::Rng::with_seed(order_seed);
        let started = machine.now();
        let mut pass = 0;
        while variants.iter().any(VariantRounds::active) {
            let mut order: Vec<usize> = (0..variants.len())
                .filter(|&i| variants[i].active())
                .collect();
            rng.shuffle(&mut order);
            for i in order {
                if machine.stop_requested() {
                    break;
                }
                self.one_round(probe, &mut variants[i], pass);
            }
            pass += 1;
            if machine.stop_requested() {
                for v in variants.iter_mut().filter(|v| v.active()) {
                    v.stopped = Some(Stop::Interrupted);
                }
                break;
            }
            let model = StateModel::fit(&self.canaries);
            for v in variants.iter_mut() {
                v.mark_interrupted(&model, None);
            }
            let now_s = self.seconds_since(self.run_started);
            self.gate.refit(&self.canaries, &self.canary_times, now_s);
            let span_s = self.seconds_since(started);
            self.decide(&mut variants, &model, pass, span_s, seed);
            on_pass(variants.iter().filter(|v| !v.active()).count());
        }
        if self.counting && !machine.stop_requested() {
            for v in variants.iter_mut().filter(|v| !v.rounds.is_empty()) {
                let harness = self.harness.for_round(v.base_batch(), true);
                if let Outcome::Measured(m) = probe.run(&v.variant, self.placement, &harness) {
                    v.counting = Some(*m);
                }
            }
            // The last reading came before the counting rounds: the next
            // probe's first round reads the machine afresh.
            self.last_canary = None;
            self.last_reference = None;
        }
        ProbeRounds {
            declaration: *probe.declaration(),
            toll: probe.toll(),
            variants,
            order_seed,
        }
    }

    fn one_round(&mut self, probe: &dyn AnyProbe, v: &mut VariantRounds, pass: usize) {
        let canary_before = match self.last_canary {
            Some(reading) => Some(reading),
            None => self.canary(),
        };
        // A row the answer reads is patient until it has its quiet rounds.
        let patience = match v.answer && self.quiet_rounds(v) < QUIET_ROUNDS_PER_FORK {
            true => Patience::Answer,
            false => Patience::Shared,
        };
        let canary_before = self.wait_for_quiet(canary_before, patience);
        let reference_before = self.last_reference;
        let harness = self.harness.for_round(v.base_batch(), false);
        let round_started = self.harness.machine.now();
        let started_s = self.seconds_since(self.run_started);
        let outcome = probe.run(&v.variant, self.placement, &harness);
        let round_s = self.seconds_since(round_started);
        v.elapsed_s += round_s;
        let canary_after = self.canary();
        self.gate
            .count_round(round_s, [canary_before, canary_after]);
        let reference_after = self.last_reference;
        match outcome {
            Outcome::Measured(measured) => {
                let round = Round {
                    pass,
                    started_s,
                    canary_before,
                    canary_after,
                    reference_before,
                    reference_after,
                    measured: *measured,
                    worker_pid: std::process::id(),
                    fork: self.fork,
                    interrupted: false,
                };
                self.log(probe.declaration().id, &v.variant, &round);
                v.rounds.push(round);
            }
            Outcome::Unsupported(reason) => v.unsupported = Some(reason),
            Outcome::Interrupted if !self.harness.machine.stop_requested() => {
                v.unsupported = Some(Unsupported::new(
                    Kind::SamplesDropped,
                    "every sample of a round was dropped: the thread changed CPU or the \
                     clock went backwards between its two reads",
                ));
            }
            Outcome::Interrupted => {}
        }
    }

    /// Waits while the canary reads a slow level, as the gate allows
    /// (see [`gate`]); returns the reading the round starts at. The
    /// readings taken while waiting are not kept among the run's (they
    /// would weigh the slow stretches by how long they were waited out);
    /// after a wait, a fresh reading is the round's own. A patient wait
    /// (a row the answer reads, short of quiet rounds, or the fork's
    /// revisit of them) goes past the other rows' allowance into the
    /// answer's reserve ([`Patience`]).
    fn wait_for_quiet(&mut self, reading: Option<f64>, patience: Patience) -> Option<f64> {
        let machine = self.harness.machine.clone();
        let mut reading = reading;
        let started = machine.now();
        let began = *self.rounds_began.get_or_insert(started);
        self.gate.note_elapsed((started - began).as_secs_f64());
        let mut waited_s = 0.0;
        let shared_s = self.gate.allowance_s().min(gate::LONGEST_WAIT_S);
        let allowance_s = match patience {
            Patience::Shared => shared_s,
            Patience::Answer => self.gate.answer_allowance_s(),
            Patience::Revisit => self.gate.revisit_allowance_s(),
        };
        loop {
            match self.gate.judge_within(reading, waited_s, allowance_s) {
                Decision::Go => break,
                Decision::GiveUp => {
                    self.gate.waited.ended_slow += 1;
                    break;
                }
                Decision::Wait if machine.stop_requested() => break,
                Decision::Wait => {
                    machine.pause(gate::WAIT_STEP);
                    reading = machine.canary();
                    waited_s = (machine.now() - started).as_secs_f64();
                }
            }
        }
        if waited_s > 0.0 {
            let from_reserve_s = match patience {
                Patience::Shared => 0.0,
                _ => (waited_s - shared_s).max(0.0),
            };
            self.gate.count_wait(waited_s, from_reserve_s);
            // The reading that ended the wait was chosen for reading quiet:
            // in a slow stretch a noisy canary dips under the threshold now
            // and then, and the round that starts on such a dip would be
            // classed quiet by the dip. A fresh reading, which the wait did
            // not choose, classes it.
            self.canary()
        } else {
            reading
        }
    }

    /// Waits, before the run's first round, for the canary to read at or
    /// below `threshold` (the boot's known quiet level) for at most
    /// [`gate::LEVEL_MOVED_AFTER_S`]; says whether it never did. Nothing
    /// of this enters a figure: it tells a host's slow stretch, which
    /// ends, from a level that moved, which does not.
    pub fn wait_for_known_level(&mut self, threshold: f64) {
        let started = self.harness.machine.now();
        let reached = self.watch_for_level(threshold, started);
        self.gate.waited.start_s = self.seconds_since(started);
        self.gate.waited.known_level_not_reached = !reached;
    }

    /// After the fork's last round, where none of its canary readings
    /// reached `threshold` (the boot's known quiet level): watches the
    /// canary until it does, or until [`gate::LEVEL_MOVED_AFTER_S`] have
    /// passed since the fork began, and says whether it never came back.
    /// A run that does not wait before its rounds (`--no-wait`) gathers
    /// the same evidence as one that does, without delaying a round: the
    /// watch costs time only where the level did not come back, and
    /// nothing of it enters a figure.
    pub fn watch_for_known_level(&mut self, threshold: f64) {
        if self.canaries.iter().any(|&c| c <= threshold) {
            return;
        }
        let watched = self.harness.machine.now();
        let reached = self.watch_for_level(threshold, self.run_started);
        self.gate.waited.end_s = self.seconds_since(watched);
        self.gate.waited.known_level_not_reached = !reached;
    }

    /// Reads the canary until it reads at or below `threshold` (true), or
    /// [`gate::LEVEL_MOVED_AFTER_S`] have passed since `since` (false). A
    /// Ctrl-C ends it saying nothing of the level: true.
    fn watch_for_level(&mut self, threshold: f64, since: Duration) -> bool {
        let machine = self.harness.machine.clone();
        loop {
            if machine.canary().is_some_and(|c| c <= threshold) {
                return true;
            }
            if self.seconds_since(since) >= gate::LEVEL_MOVED_AFTER_S || machine.stop_requested() {
                return machine.stop_requested();
            }
            machine.pause(gate::WAIT_STEP);
        }
    }

    /// A variant's budget in this fork: its share of the quiet time the
    /// gate finds ([`Gate::budget_scale`]).
    fn budget_of(&self, v: &VariantRounds) -> f64 {
        v.budget_s(self.harness.settings.budget_s) * self.gate.budget_scale()
    }

    /// The stopping rule, after a pass: a variant stops when it has its
    /// budget spent, or the most rounds, or (once every variant has had
    /// `min_rounds` and the probe's rounds span `min_span_s`) when its
    /// round-level interval is within target, from quiet rounds where the
    /// machine has shown slow levels. A variant at its budget with fewer
    /// than [`QUIET_ROUNDS_PER_FORK`] quiet rounds goes on, up to its
    /// budget again, while the fork has spare time (budget others left):
    /// on a host in its slow levels most of the time, the rows that need
    /// quiet rounds get them from the suite's time, not by overrunning it.
    /// A row the answer reads ([`VariantRounds::answer`]) goes on past its
    /// budget, on no other row's spare time, until it has `min_rounds`
    /// rounds (whose p99 waits need five in all for an interval, and whose
    /// rounds of one long item each are few in a quick run's budget) and,
    /// up to [`ANSWER_ROW_BUDGETS`] of its budget, where the machine showed
    /// slow levels, [`QUIET_ROUNDS_PER_FORK`] quiet ones: the answer's rows
    /// are a score of the suite's hundreds, and a figure a user acts on
    /// should not stand on one round or on the slow level.
    /// The baseline goes on while another variant does, so every round has
    /// a baseline round near it in time.
    fn decide(
        &mut self,
        variants: &mut [VariantRounds],
        model: &StateModel,
        passes: usize,
        span_s: f64,
        seed: u64,
    ) {
        let s = &self.harness.settings;
        let settled = passes >= s.min_rounds && span_s >= s.min_span_s;
        let borrowed = |v: &VariantRounds| (v.elapsed_s - self.budget_of(v)).max(0.0);
        // Stopped variants' borrowing is in `spare_s` already.
        let mut lendable = self.spare_s
            - variants
                .iter()
                .filter(|v| v.active() && !v.answer)
                .map(borrowed)
                .sum::<f64>();
        for v in variants.iter_mut() {
            if !v.active() {
                continue;
            }
            let budget = self.budget_of(v);
            v.stopped = if v.rounds.len() >= s.max_rounds {
                Some(Stop::MaxRounds)
            } else if v.answer && v.elapsed_s >= budget {
                let few = v.rounds.len() < s.min_rounds;
                let short = short_of_quiet_rounds(v, model);
                let goes_on = few || (short && v.elapsed_s < ANSWER_ROW_BUDGETS * budget);
                (!goes_on).then_some(Stop::Budget)
            } else if v.elapsed_s >= budget {
                let short = short_of_quiet_rounds(v, model);
                let may_borrow = short && v.elapsed_s < 2.0 * budget && lendable > 0.0;
                if may_borrow {
                    // What its next pass takes: about its mean round.
                    lendable -= v.elapsed_s / v.rounds.len().max(1) as f64;
                }
                (!may_borrow).then_some(Stop::Budget)
            } else if settled && target_met(v, model, s, seed) {
                Some(Stop::TargetMet)
            } else {
                None
            };
            if v.stopped.is_some() {
                let left = budget - v.elapsed_s;
                // An answer row's time past its budget was its own.
                if !v.answer || left > 0.0 {
                    self.spare_s += left;
                    lendable += left.max(0.0);
                }
            }
        }
        if let Some(b) = variants.iter().position(|v| v.variant.is_baseline()) {
            let others_active = variants
                .iter()
                .enumerate()
                .any(|(i, v)| i != b && v.active());
            if others_active && variants[b].stopped == Some(Stop::TargetMet) {
                variants[b].stopped = None;
                self.spare_s -= self.budget_of(&variants[b]) - variants[b].elapsed_s;
            }
        }
    }

    fn log(&mut self, probe: &str, variant: &Variant, round: &Round) {
        let Some(log) = self.round_log.as_mut() else {
            return;
        };
        let line = serde_json::json!({
            "probe": probe,
            "variant": variant.name,
            "pass": round.pass,
            "started_s": round.started_s,
            "ticks": round.measured.measurement.per_item.median.value,
            "canary_before": round.canary_before,
            "canary_after": round.canary_after,
        });
        // A log that cannot be written must not stop the measuring.
        if writeln!(log, "{line}").and_then(|()| log.flush()).is_err() {
            self.round_log = None;
        }
    }
}

/// How far past its budget a row the answer reads may go for the rounds it
/// wants ([`Scheduler::decide`]): on the busy Zen 3 guest (quiet in about
/// half of its readings) three quiet rounds of a fork take about six, and
/// a quick run's budget gives its rows two.
pub const ANSWER_ROW_BUDGETS: f64 = 4.0;

/// Quiet rounds a variant wants in each fork before its budget ends: three
/// forks of three give the headline a median per fork and the interval
/// more than [`rounds::MIN_ROUNDS_FOR_CI`] rounds.
pub const QUIET_ROUNDS_PER_FORK: usize = 3;

/// Whether a variant has fewer than [`QUIET_ROUNDS_PER_FORK`] quiet rounds
/// where the machine showed slow levels.
fn short_of_quiet_rounds(v: &VariantRounds, model: &StateModel) -> bool {
    model.two_states && v.rounds.iter().filter(|r| r.quiet(model)).count() < QUIET_ROUNDS_PER_FORK
}

/// Whether a variant's round-level interval is within target, with enough
/// quiet rounds behind it when the machine has two states.
/// `seed` is the probe's ([`rounds::seed_of`]), the one its record's
/// interval is drawn with.
pub fn target_met(
    v: &VariantRounds,
    model: &StateModel,
    s: &crate::measure::harness::Settings,
    seed: u64,
) -> bool {
    rounds::estimate(&v.figures(model), model.two_states, seed).is_some_and(|e| meets_target(&e, s))
}

/// [`target_met`] for an estimate already made: the stopping rule and the
/// record judge the same way.
pub fn meets_target(e: &rounds::Estimate, s: &crate::measure::harness::Settings) -> bool {
    let enough = e.rounds_used
        >= s.min_rounds
            .min(rounds::MIN_ROUNDS_FOR_CI.max(s.min_rounds / 2));
    enough
        && e.basis != rounds::Basis::NoQuietRound
        && e.cost
            .half_width()
            .is_some_and(|h| h <= s.tolerance(e.cost.value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::harness::Settings;

    /// A round of `figure` ticks, read beside a canary of `canary` ticks.
    fn round(figure: f64, canary: f64) -> Round {
        crate::synthetic::round_at(figure, 0, 0.0, 0, canary, canary)
    }

    fn variant(name: &str, baseline: bool, figures: &[f64], canary: f64) -> VariantRounds {
        let mut v = VariantRounds::new(Variant {
            index: 0,
            name: name.to_string(),
            role: if baseline {
                crate::measure::probes::Role::Baseline
            } else {
                crate::measure::probes::Role::Compared
            },
            params: serde_json::Value::Null,
            batch: None,
            bytes_per_item: None,
            latency_step: None,
            seed_choice: None,
        });
        v.rounds = figures.iter().map(|&f| round(f, canary)).collect();
        v.elapsed_s = 0.01 * figures.len() as f64;
        v
    }

    fn one_state() -> StateModel {
        StateModel::fit(&[300.0; 20])
    }

    /// A quiet level at 300 ticks and a slow one at 400, half the time each.
    fn two_levels() -> StateModel {
        let mut canaries = vec![300.0; 40];
        canaries.extend([400.0; 40]);
        StateModel::fit(&canaries)
    }

    /// A harness and a placement on one CPU, for the stopping rule's tests.
    fn one_cpu() -> (Harness, Placement) {
        let placement = Placement {
            cpu: 0,
            allowed: vec![0],
        };
        (Harness::new(Settings::standard(), 2000.0), placement)
    }

    #[test]
    fn the_target_needs_enough_tight_rounds() {
        let s = Settings::standard();
        let tight = variant("a", false, &[100.0; 12], 300.0);
        assert!(target_met(&tight, &one_state(), &s, 0));
        let few = variant("a", false, &[100.0; 3], 300.0);
        assert!(!target_met(&few, &one_state(), &s, 0), "three rounds");
        let spread: Vec<f64> = (0..12).map(|i| 90.0 + 20.0 * f64::from(i % 2)).collect();
        assert!(!target_met(
            &variant("a", false, &spread, 300.0),
            &one_state(),
            &s,
            0
        ));
    }

    #[test]
    fn rounds_with_the_partner_away_are_left_out_of_the_figure() {
        // A remote shootdown at 1000 ticks while the partner runs; five
        // rounds had it away for a fifth of the round and read 400 (the
        // flush skipped its IPI), one lost only the share a round may.
        let model = two_levels();
        let mut v = variant("remote", false, &[1000.0; 12], 300.0);
        let away: Vec<Round> = (0..5)
            .map(|_| {
                let mut r = round(400.0, 300.0);
                r.measured.partner_stalled = Some(0.2);
                r
            })
            .collect();
        v.rounds[0].measured.partner_stalled = Some(PARTNER_AWAY_SHARE);
        v.rounds.extend(away);
        let e = rounds::estimate(&v.figures(&model), model.two_states, 0).unwrap();
        assert_eq!((e.cost.value, e.rounds_used), (1000.0, 12));
        assert!(!v.rounds[12].quiet(&model) && v.rounds[0].quiet(&model));
        // Broken the other way (no round of the other state known), the
        // figure is the mix's.
        for r in &mut v.rounds {
            r.measured.partner_stalled = None;
        }
        let e = rounds::estimate(&v.figures(&model), model.two_states, 0).unwrap();
        assert_eq!(e.rounds_used, 17);
    }

    #[test]
    fn no_quiet_round_never_meets_the_target() {
        let s = Settings::standard();
        let model = two_levels();
        assert!(model.two_states);
        let slow_only = variant("a", false, &[100.0; 12], 400.0);
        assert!(!target_met(&slow_only, &model, &s, 0));
        assert!(target_met(
            &variant("a", false, &[100.0; 12], 300.0),
            &model,
            &s,
            0
        ));
    }

    #[test]
    fn budget_and_round_limits_stop_a_variant_and_the_baseline_waits_for_the_others() {
        let (harness, placement) = one_cpu();
        let mut scheduler = Scheduler::new(&harness, &placement, None);
        let spread: Vec<f64> = (0..12).map(|i| 90.0 + 20.0 * f64::from(i % 2)).collect();
        let mut variants = vec![
            variant("base", true, &[100.0; 12], 300.0),
            variant("settled", false, &[50.0; 12], 300.0),
            variant("noisy", false, &spread, 300.0),
            variant("spent", false, &spread, 300.0),
            variant("many", false, &vec![70.0; 200], 300.0),
        ];
        variants[3].elapsed_s = 3.5;
        variants[4].rounds[0] = round(10.0, 300.0);
        variants[4].rounds[1] = round(200.0, 300.0);
        scheduler.decide(&mut variants, &one_state(), 12, 2.0, 0);
        let stops: Vec<Option<Stop>> = variants.iter().map(|v| v.stopped).collect();
        assert_eq!(
            stops,
            [
                None, // met its target, but "noisy" still needs pairs
                Some(Stop::TargetMet),
                None,
                Some(Stop::Budget),
                Some(Stop::MaxRounds),
            ]
        );
        // Too early: the probe's rounds span less than min_span_s.
        let mut early = vec![variant("settled", false, &[50.0; 12], 300.0)];
        scheduler.decide(&mut early, &one_state(), 12, 0.1, 0);
        assert_eq!(early[0].stopped, None);
    }

    #[test]
    fn a_variant_short_of_quiet_rounds_goes_on_with_the_time_others_left() {
        let (harness, placement) = one_cpu();
        let model = two_levels();
        let budget = Settings::standard().budget_s;
        // Its budget spent, every round slow.
        let spent = || {
            let mut v = variant("slow", false, &[100.0; 12], 400.0);
            v.elapsed_s = budget;
            v
        };
        let mut scheduler = Scheduler::new(&harness, &placement, None);
        let mut alone = vec![spent()];
        scheduler.decide(&mut alone, &model, 12, 2.0, 0);
        assert_eq!(alone[0].stopped, Some(Stop::Budget), "no spare time");
        // A variant that met its target with half its budget left lends it.
        let mut settled = variant("settled", false, &[50.0; 12], 300.0);
        settled.elapsed_s = budget / 2.0;
        let mut scheduler = Scheduler::new(&harness, &placement, None);
        let mut both = vec![settled, spent()];
        scheduler.decide(&mut both, &model, 12, 2.0, 0);
        assert_eq!(both[0].stopped, Some(Stop::TargetMet));
        assert_eq!(both[1].stopped, None, "goes on with the spare time");
        // Once it has taken all of it, it stops.
        both[1].elapsed_s = budget * 1.5;
        scheduler.decide(&mut both, &model, 13, 2.1, 0);
        assert_eq!(both[1].stopped, Some(Stop::Budget));
        assert!(scheduler.spare_s.abs() < 1e-9, "{}", scheduler.spare_s);
        // A variant at its budget that has its quiet rounds stops and takes
        // nothing of the spare time from one that is short of them.
        let mut settled = variant("settled", false, &[50.0; 12], 300.0);
        settled.elapsed_s = budget - 0.2;
        let mut quiet_spent = variant("quiet", false, &[60.0; 12], 300.0);
        quiet_spent.elapsed_s = budget;
        let mut scheduler = Scheduler::new(&harness, &placement, None);
        let mut three = vec![settled, quiet_spent, spent()];
        scheduler.decide(&mut three, &model, 12, 2.0, 0);
        assert_eq!(three[1].stopped, Some(Stop::Budget));
        assert_eq!(three[2].stopped, None, "the short one goes on");
    }

    #[test]
    fn an_answer_row_goes_on_past_its_budget_on_its_own_time_until_it_has_its_rounds() {
        let (harness, placement) = one_cpu();
        let model = two_levels();
        let budget = Settings::standard().budget_s;
        let at_budget = |name: &str, figures: &[f64], canary: f64, answer: bool| {
            let mut v = variant(name, false, figures, canary);
            v.elapsed_s = budget;
            v.answer = answer;
            v
        };
        // Two rounds, both quiet, at ten times its budget: short of
        // min_rounds. Nobody lends time.
        let mut scheduler = Scheduler::new(&harness, &placement, None);
        let mut rows = vec![
            at_budget("answer", &[100.0; 2], 300.0, true),
            at_budget("other", &[100.0; 2], 300.0, false),
        ];
        rows[0].elapsed_s = 10.0 * budget;
        scheduler.decide(&mut rows, &model, 2, 2.0, 0);
        assert_eq!(rows[0].stopped, None, "the answer's row goes on");
        assert_eq!(rows[1].stopped, Some(Stop::Budget));
        // Every round slow: it goes on for its quiet rounds, up to its
        // bound, and its time past the budget is taken from no spare.
        let mut slow = vec![at_budget("answer", &[100.0; 12], 400.0, true)];
        scheduler.decide(&mut slow, &model, 12, 2.0, 0);
        assert_eq!(slow[0].stopped, None);
        slow[0].elapsed_s = ANSWER_ROW_BUDGETS * budget;
        let spare = scheduler.spare_s;
        scheduler.decide(&mut slow, &model, 13, 2.1, 0);
        assert_eq!(slow[0].stopped, Some(Stop::Budget), "at its bound");
        assert_eq!(scheduler.spare_s, spare, "its overrun is its own");
        // With its quiet rounds it stops at its budget as any row does.
        let mut done = vec![at_budget("answer", &[100.0; 12], 300.0, true)];
        let mut scheduler = Scheduler::new(&harness, &placement, None);
        scheduler.decide(&mut done, &model, 2, 0.1, 0);
        assert_eq!(done[0].stopped, Some(Stop::Budget));
    }
}
