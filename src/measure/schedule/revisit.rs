//! The answer's rows come back at a fork's end. A slow stretch longer than
//! the answer's waits (a trace event toggled for 20 s, a neighbour's batch
//! job) can cover every round a row the answer reads has in a fork, and
//! that fork then gives the row no figure at the quiet level: the row
//! stands on the other forks, or on none. Rounds are cheap beside the
//! stretch, so the fork does not end there: after its last probe, what is
//! left of the answer's reserve and of the fork's budget is spent waiting
//! for the quiet level and measuring those rows again, rather than on
//! rounds for rows that already have theirs. The fork's gate reads its
//! quiet level from the fork's own readings, so a stretch that began with
//! the fork is told from the quiet level only once it has ended: whether a
//! row has a quiet round is asked again at the fork's end, against the
//! level the gate reads then.

use super::{QUIET_ROUNDS_PER_FORK, Scheduler, VariantRounds, forks::ForkProbe};
use crate::measure::probes::AnyProbe;

/// How many passes a revisit makes at most over one probe's answer rows:
/// enough for [`QUIET_ROUNDS_PER_FORK`] quiet rounds twice over, so a row
/// whose rounds the canary reads slow for reasons of its own (its closing
/// canary reads its own teardown) cannot hold the fork.
const MOST_PASSES: usize = 2 * QUIET_ROUNDS_PER_FORK;

/// How a wait for the quiet level may spend the fork's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Patience {
    /// Any row: the fork's free time, [`super::gate::LONGEST_WAIT_S`] at
    /// most.
    Shared,
    /// A row the answer reads, short of its quiet rounds: the answer's
    /// reserve too ([`super::gate::Gate::answer_allowance_s`]).
    Answer,
    /// The revisit at the fork's end: all the fork has left
    /// ([`super::gate::Gate::revisit_allowance_s`]), in one wait.
    Revisit,
}

impl Scheduler<'_> {
    /// A row's rounds in this fork whose canaries read the gate's quiet
    /// level and whose partner stayed: what the answer's waits count.
    pub(super) fn quiet_rounds(&self, v: &VariantRounds) -> usize {
        v.rounds
            .iter()
            .filter(|r| {
                !r.partner_away() && self.gate.reads_quiet([r.canary_before, r.canary_after])
            })
            .count()
    }

    /// Whether a row the answer reads has rounds in this fork and none of
    /// them quiet.
    fn without_a_quiet_round(&self, v: &VariantRounds) -> bool {
        v.answer && v.unsupported.is_none() && !v.rounds.is_empty() && self.quiet_rounds(v) == 0
    }

    /// Whether any probe measured so far has such a row: the answer's
    /// reserve is then held for [`Scheduler::revisit`].
    pub fn answer_rows_without_quiet(&self, measured: &[ForkProbe]) -> bool {
        measured
            .iter()
            .any(|p| p.variants.iter().any(|v| self.without_a_quiet_round(v)))
    }

    /// After the fork's last probe: each probe whose answer rows include
    /// one without a quiet round in this fork is measured again, its
    /// answer rows and baseline in passes of a random order as in
    /// [`Scheduler::run_probe`], each pass after a wait for the quiet
    /// level that may take all the fork has left, until every answer row
    /// has [`QUIET_ROUNDS_PER_FORK`] quiet rounds or the time is spent.
    /// Returns how many rounds it added.
    pub fn revisit(&mut self, probes: &[&dyn AnyProbe], measured: &mut [ForkProbe]) -> usize {
        let mut added = 0;
        for fork_probe in measured.iter_mut() {
            if !fork_probe
                .variants
                .iter()
                .any(|v| self.without_a_quiet_round(v))
            {
                continue;
            }
            let Some(probe) = probes.iter().find(|p| p.declaration().id == fork_probe.id) else {
                continue;
            };
            match self.revisit_probe(*probe, fork_probe) {
                Some(rounds) => added += rounds,
                None => return added,
            }
        }
        added
    }

    /// [`Scheduler::revisit`] for one probe; None where the fork's time
    /// ran out still slow, so no later probe is waited for.
    fn revisit_probe(&mut self, probe: &dyn AnyProbe, fork_probe: &mut ForkProbe) -> Option<usize> {
        let machine = self.harness.machine.clone();
        let rows: Vec<usize> = (0..fork_probe.variants.len())
            .filter(|&i| {
                let v = &fork_probe.variants[i];
                v.answer && v.unsupported.is_none() && !v.rounds.is_empty()
            })
            .collect();
        let mut rng = fastrand::Rng::with_seed(fork_probe.order_seed ^ REVISIT_SEED);
        let first_pass = fork_probe
            .variants
            .iter()
            .flat_map(|v| v.rounds.iter().map(|r| r.pass + 1))
            .max()
            .unwrap_or(0);
        let mut added = 0;
        for pass in first_pass..first_pass + MOST_PASSES {
            let short = rows
                .iter()
                .any(|&i| self.quiet_rounds(&fork_probe.variants[i]) < QUIET_ROUNDS_PER_FORK);
            if !short || machine.stop_requested() {
                break;
            }
            if !self.wait_before_revisit() {
                return None;
            }
            let mut order = rows.clone();
            rng.shuffle(&mut order);
            for i in order {
                if machine.stop_requested() {
                    break;
                }
                let v = &mut fork_probe.variants[i];
                let before = v.rounds.len();
                self.one_round(probe, v, pass);
                added += v.rounds.len() - before;
            }
        }
        Some(added)
    }

    /// Waits for the quiet level before a pass of a revisit, as long as
    /// the fork has left; says whether it came.
    fn wait_before_revisit(&mut self) -> bool {
        let reading = match self.last_canary {
            Some(reading) => Some(reading),
            None => self.canary(),
        };
        let reading = self.wait_for_quiet(reading, Patience::Revisit);
        self.gate.reads_quiet([reading, reading])
    }
}

/// Mixed into the probe's order seed for its revisit's order, which then
/// differs from its first passes' and is still drawn from the recorded
/// seed.
const REVISIT_SEED: u64 = 0x7e71_5175;
