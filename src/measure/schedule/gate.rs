//! Waiting for the quiet level: a round starts when the canary reads the
//! machine quiet, so a variant's budget is spent in quiet time.
//!
//! On a busy host the slow level comes in stretches of seconds, and a
//! probe's turn is a second or two: without waiting, a turn that falls in
//! one stretch gives its rows no quiet round at all while the run as a
//! whole has thousands (docs/why-the-code-is-so.md). Waiting moves those
//! rounds to the next quiet time.
//!
//! The time waited is paid for by the budget: each variant's budget shrinks
//! to its share of the quiet time the host offers (the quiet share of the
//! fork's time so far, never under [`LEAST_SCALE`]), and the time that
//! frees is the fork's wait allowance; where the rounds run past their
//! budget (a round is at least one item, and a long item does not shrink
//! with the scale), what they project over the fork, or what the fork
//! before says the rounds ahead take, is taken off it, and so is the
//! fork's time outside its rounds and waits (readings, set-up). A
//! run thus keeps its length on any host; a quiet host waits for nothing
//! and keeps its whole budget. A wait ends at the quiet level, after
//! [`LONGEST_WAIT_S`], or when the allowance is spent; the round then runs
//! at the slow level and is counted so.
//! Replayed on the busy host's timeline, this spreads the quiet rounds over
//! the rows without making the run longer (the dated figures:
//! docs/how-a-figure-is-made.md).
//!
//! The quiet level the gate waits for is read from the readings of the
//! last [`WINDOW_S`], not the whole run: a level that moves for good (a
//! regression on the syscall path, a drifting host) is followed within it
//! rather than waited for until the allowance runs out. Anchoring it to
//! the boot's known quiet level was tried and measured worse on a guest
//! whose quiet level drifted within a run: fewer rounds counted quiet,
//! budgets shrank and runs ran longer (docs/why-the-code-is-so.md).

use crate::analysis::states::StateModel;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The readings the gate's quiet level is read from: the last 30 s, well
/// over the longest slow stretch seen on a busy host, so a stretch does
/// not fill the window and become the level.
pub const WINDOW_S: f64 = 30.0;
/// The longest one wait: most of a busy host's slow time comes in
/// stretches shorter than this; a longer stretch is measured in rather
/// than spending the allowance on it.
pub const LONGEST_WAIT_S: f64 = 3.0;
/// How often a wait reads the canary again (a reading is short beside it).
pub const WAIT_STEP: Duration = Duration::from_millis(2);
/// The least share of its budget a variant keeps, however seldom the host
/// is quiet: below it, rounds would be too few to tell anything.
pub const LEAST_SCALE: f64 = 0.25;
/// The quiet share starts as this share of the fork's budget spent quiet:
/// the first rounds' states (a long round of a slow probe, a round whose
/// teardown the closing canary reads) must not cut every later variant's
/// budget. Live on a quiet Zen 4, a quick run's first fork without it
/// measured a median 1 round a variant against 4-5 in the others, and 125
/// rows stood on one fork.
pub const PRIOR_SHARE: f64 = 0.2;
/// How long the canary must stay above the quiet level the boot's recent
/// runs read before the level is taken as moved: longer than the longest
/// slow stretch seen (11.4 s on the busy Zen 3), so a host's slow stretch
/// ends within it and a moved level (a cost added on the syscall path,
/// the host's speed) does not. A gated run watches for it before its first
/// round, a `--no-wait` run after its last (`Scheduler::watch_for_known_level`).
pub const LEVEL_MOVED_AFTER_S: f64 = 15.0;
/// The share of the fork's budget held back for the rows the answer reads
/// while any lies ahead in the fork: they may wait with it beyond the
/// other rows' allowance, and since it is the fork's own budget, the run
/// keeps its length however seldom the host is quiet
/// (docs/why-the-code-is-so.md).
pub const ANSWER_RESERVE_SHARE: f64 = 0.25;

/// How long a fork (or a run, summed) waited for the quiet level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Waited {
    /// Seconds spent waiting.
    pub seconds: f64,
    /// Rounds that found the machine slow and waited.
    pub waits: u64,
    /// Of those, the ones that ended still slow: the wait reached
    /// [`LONGEST_WAIT_S`] or the allowance was spent.
    pub ended_slow: u64,
    /// Seconds of rounds run, and of those whose canaries both read quiet:
    /// with `seconds`, the share of the time the host was quiet.
    #[serde(default)]
    pub round_seconds: f64,
    #[serde(default)]
    pub quiet_round_seconds: f64,
    /// Seconds the run waited at its start for the boot's known quiet
    /// level (a gated run), and watched for it after its last round where
    /// no reading had reached it (`--no-wait`); and whether the canary
    /// stayed above it for [`LEVEL_MOVED_AFTER_S`] on end: the level
    /// moved.
    #[serde(default)]
    pub start_s: f64,
    #[serde(default)]
    pub end_s: f64,
    #[serde(default)]
    pub known_level_not_reached: bool,
    /// Rounds of the answer's rows measured again at a fork's end, where
    /// a slow stretch had covered every round of one in the fork
    /// (`Scheduler::revisit`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub revisited_rounds: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Waited {
    pub fn add(&mut self, other: &Waited) {
        self.seconds += other.seconds;
        self.waits += other.waits;
        self.ended_slow += other.ended_slow;
        self.round_seconds += other.round_seconds;
        self.quiet_round_seconds += other.quiet_round_seconds;
        self.start_s += other.start_s;
        self.end_s += other.end_s;
        self.known_level_not_reached |= other.known_level_not_reached;
        self.revisited_rounds += other.revisited_rounds;
    }

    /// The share of the time (rounds and waits) the machine was quiet;
    /// None before any round.
    pub fn quiet_share(&self) -> Option<f64> {
        self.quiet_share_after(0.0)
    }

    /// [`Waited::quiet_share`] with `prior_s` seconds of quiet time counted
    /// in before the first round.
    fn quiet_share_after(&self, prior_s: f64) -> Option<f64> {
        let total = self.round_seconds + self.seconds + prior_s;
        (total > 0.0).then(|| ((self.quiet_round_seconds + prior_s) / total).clamp(0.0, 1.0))
    }
}

/// The gate of one fork: the quiet level it waits for and what it waited.
#[derive(Debug, Clone)]
pub struct Gate {
    enabled: bool,
    /// The quiet level read from the recent readings; None until they
    /// show two levels.
    threshold: Option<f64>,
    /// The fork's whole budget, all its variants together, seconds.
    fork_budget_s: f64,
    /// The share of the fork's variants begun so far ([`Gate::begin`]),
    /// over which the rounds so far are projected to the whole fork.
    begun_share: f64,
    /// Seconds the answer's rows waited past the other rows' allowance,
    /// out of their reserve ([`ANSWER_RESERVE_SHARE`]).
    reserve_spent_s: f64,
    /// Whether a row the answer reads lies ahead in the fork: only then is
    /// its reserve held back from the other rows ([`Gate::hold_reserve`]).
    answer_rows_ahead: bool,
    /// Seconds of rounds the fork is expected to have run by its end: those
    /// run before the probe in hand, and what that probe's and the later
    /// ones' rounds took in the fork before ([`Gate::expect_rounds_ahead`]).
    expected_rounds_s: f64,
    /// Seconds since the fork's first round began, as the scheduler last
    /// told ([`Gate::note_elapsed`]): besides its rounds and waits, a fork
    /// spends time on the canary's readings, the counting rounds and the
    /// probes' set-up, and a budget that counts only rounds and waits ran
    /// the default run past its length.
    elapsed_s: f64,
    pub waited: Waited,
}

/// What a wait should do after a reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Start the round.
    Go,
    /// Wait a step and read again.
    Wait,
    /// Start the round though the machine reads slow.
    GiveUp,
}

impl Gate {
    pub fn new(enabled: bool, fork_budget_s: f64) -> Gate {
        Gate {
            enabled,
            threshold: None,
            fork_budget_s,
            begun_share: 1.0,
            reserve_spent_s: 0.0,
            answer_rows_ahead: false,
            expected_rounds_s: 0.0,
            elapsed_s: 0.0,
            waited: Waited::default(),
        }
    }

    /// Notes that `begun` of the fork's `variants` have begun their rounds.
    pub fn begin(&mut self, begun: usize, variants: usize) {
        self.begun_share = (begun as f64 / variants.max(1) as f64).min(1.0);
    }

    /// Notes that the rounds of the probe about to begin and of the later
    /// ones took `seconds` in the fork before. The projection over the
    /// variants begun counts each variant alike, and early in a fork it
    /// stands on the quick probes alone: the long rounds of the later
    /// ones (a teardown, a 65,536-page TLB) are not in it, and the
    /// allowance it leaves was waited in the first probes
    /// (docs/why-the-code-is-so.md, "A fork's gate expects the rounds the
    /// fork before ran").
    pub fn expect_rounds_ahead(&mut self, seconds: f64) {
        self.expected_rounds_s = self.waited.round_seconds + seconds;
    }

    /// Notes whether a row the answer reads lies ahead in the fork, the
    /// probe about to begin included: while one does, what is left of its
    /// reserve is kept from the other rows' waits; after the last, it is
    /// theirs.
    pub fn hold_reserve(&mut self, answer_rows_ahead: bool) {
        self.answer_rows_ahead = answer_rows_ahead;
    }

    /// Notes that `seconds` have passed since the fork's first round began.
    pub fn note_elapsed(&mut self, seconds: f64) {
        self.elapsed_s = seconds;
    }

    /// Reads the quiet level again from the readings taken in the last
    /// [`WINDOW_S`] before `now_s` (`times` in seconds, as `readings`).
    pub fn refit(&mut self, readings: &[f64], times: &[f64], now_s: f64) {
        let from = times.partition_point(|&t| t < now_s - WINDOW_S);
        let model = StateModel::fit(&readings[from.min(readings.len())..]);
        self.threshold = model.two_states.then_some(model.quiet_threshold);
    }

    /// What each variant's budget is multiplied by: the quiet share of the
    /// fork's time where the gate waits, 1 where it does not.
    pub fn budget_scale(&self) -> f64 {
        if !self.enabled {
            return 1.0;
        }
        self.waited
            .quiet_share_after(PRIOR_SHARE * self.fork_budget_s)
            .map_or(1.0, |q| q.max(LEAST_SCALE))
    }

    /// Seconds a row may still wait: what the fork has free
    /// ([`Gate::free_s`]), less what is left of the answer's reserve while
    /// a row the answer reads lies ahead.
    pub fn allowance_s(&self) -> f64 {
        (self.free_s() - self.reserve_left_s()).max(0.0)
    }

    /// Seconds a row the answer reads may wait, while short of its quiet
    /// rounds: all the fork has free, the reserve with it, or what is left
    /// of the reserve where that is more (early in a fork, before a slow
    /// round has freed any of the budget), at most [`LONGEST_WAIT_S`] a
    /// wait. What it takes beyond the free time, the later rows' rounds
    /// and waits give back: their budgets shrink with the quiet share.
    pub fn answer_allowance_s(&self) -> f64 {
        self.free_s().max(self.reserve_left_s()).min(LONGEST_WAIT_S)
    }

    /// Seconds the fork's revisit of the answer's rows may wait, after its
    /// last probe (`Scheduler::revisit`): all it has free or what is left
    /// of the reserve, whichever is more, in one wait if need be, since a
    /// stretch that outlasted the rows' own waits is what it waits out.
    pub fn revisit_allowance_s(&self) -> f64 {
        self.free_s().max(self.reserve_left_s())
    }

    /// Seconds the fork has free to wait: its budget, less the time it has
    /// spent (its waits and rounds, or the time since its first round
    /// where that is more) and what its rounds ahead will take
    /// ([`Gate::rounds_s`]).
    fn free_s(&self) -> f64 {
        let rounds_run_s = self.waited.round_seconds;
        let spent_s = self.elapsed_s.max(self.waited.seconds + rounds_run_s);
        let rounds_ahead_s = self.rounds_s() - rounds_run_s;
        (self.fork_budget_s - spent_s - rounds_ahead_s).max(0.0)
    }

    /// What is left of the answer's reserve, while a row the answer reads
    /// lies ahead.
    fn reserve_left_s(&self) -> f64 {
        match self.answer_rows_ahead {
            true => (ANSWER_RESERVE_SHARE * self.fork_budget_s - self.reserve_spent_s).max(0.0),
            false => 0.0,
        }
    }

    /// Counts a wait of `seconds`, `from_reserve_s` of them past the
    /// other rows' allowance, out of the answer's reserve.
    pub fn count_wait(&mut self, seconds: f64, from_reserve_s: f64) {
        self.waited.seconds += seconds;
        self.waited.waits += 1;
        self.reserve_spent_s += from_reserve_s;
    }

    /// Seconds the fork's rounds will take: their budget, scaled to the
    /// quiet share; or, where the rounds of the variants begun ran past
    /// theirs, what they project over the whole fork, or what the fork
    /// before says the rounds ahead take ([`Gate::expect_rounds_ahead`]),
    /// whichever is more. A round is at least one item, and a row whose
    /// item is longer than its scaled budget (a teardown, a 256 MiB
    /// mapping) keeps its length: a quick run's rounds stand at that floor,
    /// and the budget the scale freed is not there to wait with.
    fn rounds_s(&self) -> f64 {
        let planned = self.fork_budget_s * self.budget_scale();
        let projected = self.waited.round_seconds / self.begun_share.max(f64::MIN_POSITIVE);
        planned.max(projected).max(self.expected_rounds_s)
    }

    /// Whether a round may start at `reading`, `waited_s` into a wait of
    /// at most [`LONGEST_WAIT_S`].
    pub fn judge(&self, reading: Option<f64>, waited_s: f64) -> Decision {
        self.judge_within(reading, waited_s, self.allowance_s().min(LONGEST_WAIT_S))
    }

    /// [`Gate::judge`] with `allowance_s` the most this wait may take: a
    /// row the answer reads, while short of its quiet rounds, waits past
    /// the other rows' allowance ([`Gate::answer_allowance_s`]), since its
    /// figure is the one a user acts on.
    pub fn judge_within(&self, reading: Option<f64>, waited_s: f64, allowance_s: f64) -> Decision {
        let (Some(threshold), true) = (self.threshold, self.enabled) else {
            return Decision::Go;
        };
        match reading {
            Some(c) if c <= threshold => Decision::Go,
            // No reading (the thread moved): nothing says it is slow.
            None => Decision::Go,
            Some(_) if waited_s >= allowance_s => Decision::GiveUp,
            Some(_) => Decision::Wait,
        }
    }

    /// Whether both of a round's canaries read the gate's quiet level;
    /// before the readings show two levels, every round is at the one.
    pub fn reads_quiet(&self, canaries: [Option<f64>; 2]) -> bool {
        match self.threshold {
            None => true,
            Some(t) => canaries.iter().all(|c| c.is_some_and(|c| c <= t)),
        }
    }

    /// Counts a round of `seconds`, and whether both its canaries were at
    /// the gate's quiet level.
    pub fn count_round(&mut self, seconds: f64, canaries: [Option<f64>; 2]) {
        self.waited.round_seconds += seconds;
        if self.reads_quiet(canaries) {
            self.waited.quiet_round_seconds += seconds;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gate whose recent readings were half at 300 ticks, half at 400.
    fn two_levels(budget_s: f64) -> Gate {
        let mut readings = vec![300.0; 50];
        readings.extend([400.0; 50]);
        let times: Vec<f64> = (0..100).map(|i| f64::from(i) * 0.01).collect();
        let mut gate = Gate::new(true, budget_s);
        gate.refit(&readings, &times, 1.0);
        gate
    }

    #[test]
    fn a_quiet_reading_goes_and_a_slow_one_waits_within_the_allowance() {
        let mut gate = two_levels(100.0);
        assert_eq!(gate.judge(Some(301.0), 0.0), Decision::Go);
        // Nothing measured yet: the budget is whole, so nothing to wait with.
        assert_eq!(gate.judge(Some(400.0), 0.0), Decision::GiveUp);
        gate.count_round(1.0, [Some(300.0), Some(300.0)]);
        gate.count_round(1.0, [Some(400.0), Some(400.0)]);
        // 1 s quiet of 2, after 20 s (a fifth of the budget) counted quiet.
        assert!((gate.budget_scale() - 21.0 / 22.0).abs() < 1e-12);
        assert!((gate.allowance_s() - 100.0 / 22.0).abs() < 1e-9);
        assert_eq!(gate.judge(Some(400.0), 0.0), Decision::Wait);
        assert_eq!(gate.judge(Some(400.0), LONGEST_WAIT_S), Decision::GiveUp);
        assert_eq!(gate.judge(None, 0.0), Decision::Go);
    }

    #[test]
    fn an_answer_row_waits_past_the_allowance_but_not_past_the_longest_wait() {
        let mut gate = two_levels(100.0);
        gate.hold_reserve(true);
        assert_eq!(gate.allowance_s(), 0.0, "nothing measured: no allowance");
        assert_eq!(gate.judge(Some(400.0), 0.0), Decision::GiveUp);
        // A quarter of the fork's 100 s is the answer's reserve.
        let answer = gate.answer_allowance_s();
        assert_eq!(answer, LONGEST_WAIT_S);
        assert_eq!(gate.judge_within(Some(400.0), 1.0, answer), Decision::Wait);
        assert_eq!(
            gate.judge_within(Some(400.0), LONGEST_WAIT_S, answer),
            Decision::GiveUp
        );
        assert_eq!(gate.judge_within(Some(301.0), 1.0, answer), Decision::Go);
    }

    #[test]
    fn the_answers_reserve_is_kept_from_the_other_rows_while_an_answer_row_lies_ahead() {
        // 10 s a fork, 2 s of rounds run (1 s quiet): 3 of 4 quiet with the
        // prior, 7.5 s of rounds planned, 2.5 s free; a reserve of 2.5 s.
        let mut gate = after_two_rounds();
        assert!((gate.allowance_s() - 2.5).abs() < 1e-9);
        gate.hold_reserve(true);
        assert_eq!(gate.allowance_s(), 0.0);
        assert!((gate.answer_allowance_s() - 2.5).abs() < 1e-9);
        assert_eq!(gate.judge_within(Some(400.0), 0.5, 2.5), Decision::Wait);
        assert_eq!(gate.judge_within(Some(400.0), 2.5, 2.5), Decision::GiveUp);
        // An answer row waits 1 s, all of it past the allowance: the quiet
        // share falls to 3 of 5 (6 s of rounds, 3 s free), and 1.5 s of
        // the reserve is left.
        gate.count_wait(1.0, 1.0);
        assert!((gate.answer_allowance_s() - 3.0).abs() < 1e-9);
        assert!((gate.allowance_s() - 1.5).abs() < 1e-9);
        // After the last answer row, the rest is the other rows'; the fork
        // never has more than its budget to wait with.
        gate.hold_reserve(false);
        assert!((gate.allowance_s() - 3.0).abs() < 1e-9);
        assert_eq!(gate.answer_allowance_s(), gate.allowance_s());
    }

    #[test]
    fn the_revisit_at_a_forks_end_may_wait_out_a_stretch_longer_than_one_wait() {
        let mut gate = two_levels(100.0);
        gate.hold_reserve(true);
        // Nothing measured, nothing free: the reserve, a quarter of 100 s,
        // in one wait, where a row's own wait stops at the longest.
        let revisit = gate.revisit_allowance_s();
        assert!((revisit - 25.0).abs() < 1e-9);
        assert_eq!(
            gate.judge_within(Some(400.0), 10.0, revisit),
            Decision::Wait
        );
        assert_eq!(
            gate.judge_within(Some(400.0), 10.0, gate.answer_allowance_s()),
            Decision::GiveUp
        );
        gate.hold_reserve(false);
        assert_eq!(gate.revisit_allowance_s(), 0.0);
    }

    /// A fork of 10 s after a quiet round and a slow one of 1 s each.
    fn after_two_rounds() -> Gate {
        let mut gate = two_levels(10.0);
        gate.count_round(1.0, [Some(300.0), Some(300.0)]);
        gate.count_round(1.0, [Some(300.0), Some(400.0)]);
        gate
    }

    #[test]
    fn waiting_spends_the_allowance_and_the_share_counts_the_wait() {
        let mut gate = after_two_rounds();
        gate.waited.seconds = 6.0;
        // Quiet 1 s of 8, after 2 s counted quiet: 3 of 10.
        assert!((gate.budget_scale() - 0.3).abs() < 1e-12);
        // 7 s freed, 6 waited.
        assert!((gate.allowance_s() - 1.0).abs() < 1e-9);
        gate.waited.seconds = 1.0;
        // 3 of 5: 4 s to wait with, 1 waited.
        assert!((gate.allowance_s() - 3.0).abs() < 1e-9);
        gate.waited.seconds = 18.0;
        assert_eq!(gate.budget_scale(), LEAST_SCALE);
        assert_eq!(gate.allowance_s(), 0.0);
        assert_eq!(gate.judge(Some(400.0), 0.0), Decision::GiveUp);
    }

    #[test]
    fn rounds_past_the_begun_variants_budget_are_not_waited_with() {
        let mut gate = after_two_rounds();
        gate.waited.seconds = 1.0;
        // As in the test above: 3 of 5 quiet, 4 s freed, 1 waited, with
        // every variant begun and its rounds within their budget (6 s).
        assert!((gate.allowance_s() - 3.0).abs() < 1e-9);
        // A tenth of the variants begun: they had 0.6 s and ran 2, which
        // projects 20 s of rounds over a fork of 10.
        gate.begin(1, 10);
        assert_eq!(gate.allowance_s(), 0.0);
        // Half begun: 3 s budgeted, the rounds within it.
        gate.begin(5, 10);
        assert!((gate.allowance_s() - 3.0).abs() < 1e-9);
        // A long item's round of 5 s, quiet: 8 of 10 quiet, so the half
        // had 4 s and the rounds ran 7, 14 over the fork.
        gate.count_round(5.0, [Some(300.0), Some(300.0)]);
        assert!((gate.budget_scale() - 0.8).abs() < 1e-12);
        assert_eq!(gate.allowance_s(), 0.0);
        assert_eq!(gate.judge(Some(400.0), 0.0), Decision::GiveUp);
    }

    #[test]
    fn the_rounds_the_fork_before_ran_ahead_are_not_waited_with() {
        let mut gate = after_two_rounds();
        gate.waited.seconds = 1.0;
        gate.begin(5, 10);
        // Half begun, 3 of 5 quiet: 6 s of rounds planned, 3 s to wait.
        assert!((gate.allowance_s() - 3.0).abs() < 1e-9);
        // The fork before ran 7 s of rounds from this probe on: with the
        // 2 s run, 9 of the fork's 10 s are rounds, and 1 s was waited.
        gate.expect_rounds_ahead(7.0);
        assert_eq!(gate.allowance_s(), 0.0);
        // Where they took less than planned, the plan stands.
        gate.expect_rounds_ahead(3.0);
        assert!((gate.allowance_s() - 3.0).abs() < 1e-9);
    }

    #[test]
    fn time_outside_rounds_and_waits_comes_off_the_allowance() {
        let mut gate = after_two_rounds();
        gate.waited.seconds = 1.0;
        gate.begin(5, 10);
        let counted = gate.allowance_s();
        assert!((counted - 3.0).abs() < 1e-9);
        // 1 s waited and 2 s of rounds: an elapsed time within them adds
        // nothing, and 1.5 s past them (readings, set-up) is taken off.
        gate.note_elapsed(2.5);
        assert_eq!(gate.allowance_s(), counted);
        gate.note_elapsed(4.5);
        assert!((gate.allowance_s() - (counted - 1.5)).abs() < 1e-9);
    }

    #[test]
    fn one_level_or_a_gate_turned_off_never_waits() {
        let mut gate = Gate::new(true, 100.0);
        gate.refit(&[300.0; 40], &[0.0; 40], 0.0);
        assert_eq!(gate.judge(Some(900.0), 0.0), Decision::Go);
        let mut off = two_levels(100.0);
        off.enabled = false;
        off.count_round(1.0, [Some(400.0), Some(400.0)]);
        assert_eq!(off.judge(Some(400.0), 0.0), Decision::Go);
        assert_eq!(off.budget_scale(), 1.0);
    }

    #[test]
    fn the_level_follows_a_shift_that_fills_the_window() {
        // 60 s at 300 ticks, then the level moves to 400 for good.
        let readings: Vec<f64> = (0..100)
            .map(|i| if i < 60 { 300.0 } else { 400.0 })
            .collect();
        let times: Vec<f64> = (0..100).map(f64::from).collect();
        let mut gate = Gate::new(true, 100.0);
        gate.refit(&readings, &times, 70.0);
        gate.count_round(1.0, [Some(300.0), Some(300.0)]);
        gate.count_round(1.0, [Some(400.0), Some(400.0)]);
        assert_eq!(
            gate.judge(Some(400.0), 0.0),
            Decision::Wait,
            "both levels in the window"
        );
        gate.refit(&readings, &times, 99.0);
        assert_eq!(
            gate.judge(Some(400.0), 0.0),
            Decision::Go,
            "only the new level in it"
        );
    }
}
