//! The toll a crossing leaves in user space: what a syscall made from
//! inside a function pays beyond the raw instruction, per syscall, from the
//! `os/syscall-return` rows (the in-function variant less the inline one),
//! and the same for the other crossings it times (a page fault, a signal,
//! a switch).
//!
//! Both variants ran in the same passes of the same forks, so the toll is
//! read from pairs of their rounds, as × base is: its interval is as wide
//! as the difference varies. Read as the difference of the two rows'
//! differences from the plain call, each with its own next-run interval,
//! its interval is many times as wide as the toll moves from run to run
//! (docs/probes.md, "the return after a crossing", has the figures).

use super::RunDocument;
use super::prices::{added, measured};
use super::record::Record;
use crate::analysis::apart;
use crate::analysis::figure::Figure;
use crate::analysis::rounds::{self, PassRound, RoundState};
use crate::analysis::spread::{ForkSpread, VariantSpread, pooled_in_probe};
use serde::Serialize;

/// The probe that measures it.
pub const PROBE: &str = "os/syscall-return";

/// The syscalls it measures, by the variants' prefix.
pub const SYSCALLS: &[&str] = &["getpid", "getuid", "getppid", "close-bad-fd"];

/// The other crossings it measures, by the variants' prefix: a page fault,
/// a signal handled and returned from, a yield that switches and back.
pub const OTHER_CROSSINGS: &[&str] = &["fault", "signal", "yield-switch"];

/// One crossing's return toll.
#[derive(Debug, Clone, Serialize)]
pub struct ReturnToll {
    /// The syscall, or the other crossing, by its variants' prefix.
    pub crossing: &'static str,
    /// What the call from inside a function adds to the inline one, ns,
    /// with the interval another run's may land in.
    pub extra_ns: Option<Figure>,
    /// Why there is none, where there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unmeasured: Option<String>,
}

/// Each syscall's toll in `doc`; empty where the run did not measure the
/// probe.
pub fn of(doc: &RunDocument) -> Vec<ReturnToll> {
    tolls(doc, SYSCALLS)
}

/// One crossing's toll in `doc` (a syscall's or another's, by its
/// variants' prefix); None where the run did not measure the probe. Read
/// beside the others of its kind, as [`of`] reads it.
pub fn of_one(doc: &RunDocument, crossing: &'static str) -> Option<ReturnToll> {
    let kind = [SYSCALLS, OTHER_CROSSINGS]
        .into_iter()
        .find(|kind| kind.contains(&crossing))
        .unwrap_or(&[]);
    tolls(doc, kind)
        .into_iter()
        .find(|t| t.crossing == crossing)
}

/// Each other crossing's toll in `doc`, as [`of`].
pub fn of_other_crossings(doc: &RunDocument) -> Vec<ReturnToll> {
    tolls(doc, OTHER_CROSSINGS)
}

/// The tolls of `crossings`, one kind of crossing: each one's forks'
/// differences pooled with the others' for the next run's interval, as a
/// probe's variants' differences from its baseline are. A document that
/// kept no rounds (written before they were stored) gives the two rows'
/// differences from the plain call, less each other
/// (`analysis::apart::difference`).
fn tolls(doc: &RunDocument, crossings: &[&'static str]) -> Vec<ReturnToll> {
    if doc.record(PROBE, "call+ret").is_none() {
        return Vec::new();
    }
    let mhz = doc.inventory.tsc_mhz.filter(|m| *m > 0.0);
    let read: Vec<Result<Read, String>> = crossings
        .iter()
        .map(|crossing| Read::of(doc, crossing))
        .collect();
    let spreads: Vec<VariantSpread> = crossings
        .iter()
        .zip(&read)
        .filter_map(|(crossing, r)| match r {
            Ok(Read::Pairs(r)) => Some(VariantSpread {
                name: crossing.to_string(),
                forks: r.paired.fork_deltas.len(),
                spread: ForkSpread::of_differences(&r.paired.fork_deltas),
            }),
            _ => None,
        })
        .collect();
    let next = pooled_in_probe(&spreads, None);
    crossings
        .iter()
        .zip(read)
        .map(|(&crossing, r)| {
            let extra = r.and_then(|r| {
                let mhz = mhz.ok_or("the TSC's rate is unknown")?;
                Ok(match r {
                    Read::Rows { in_fn, inline } => {
                        apart::difference(added(in_fn, Some(mhz))?, added(inline, Some(mhz))?)
                    }
                    Read::Pairs(r) => {
                        let delta = Figure::new(
                            r.paired.delta,
                            r.paired.delta_ci95.map(|(lo, hi)| [lo, hi]),
                        );
                        let interval = next
                            .iter()
                            .find(|(name, _)| *name == crossing)
                            .map(|(_, n)| n.difference_interval(delta, r.drift_pct, r.tick))
                            .or(delta.ci95);
                        Figure::new(delta.value, interval).map(|t| t * 1000.0 / mhz)
                    }
                })
            });
            ReturnToll {
                crossing,
                unmeasured: extra.as_ref().err().cloned(),
                extra_ns: extra.ok(),
            }
        })
        .collect()
}

/// How a crossing's toll is read from a document.
enum Read<'d> {
    /// From pairs of the two shapes' rounds.
    Pairs(InRounds),
    /// From the two rows, where the document kept no rounds.
    Rows {
        in_fn: &'d Record,
        inline: &'d Record,
    },
}

/// One crossing's in-function rounds against its inline ones, paired.
struct InRounds {
    paired: rounds::Paired,
    drift_pct: Option<f64>,
    /// The clock's step over a batch's items, ticks.
    tick: f64,
}

impl<'d> Read<'d> {
    fn of(doc: &'d RunDocument, crossing: &str) -> Result<Read<'d>, String> {
        let row = |shape: &str| -> Result<&Record, String> {
            let variant = format!("{crossing}/{shape}");
            let r = doc
                .record(PROBE, &variant)
                .ok_or_else(|| format!("{PROBE} {variant} was not measured"))?;
            measured(r)?;
            Ok(r)
        };
        let (in_fn, inline) = (row("in-fn")?, row("inline")?);
        if in_fn.rounds.each.is_empty() || inline.rounds.each.is_empty() {
            return Ok(Read::Rows { in_fn, inline });
        }
        let by_pass = |r: &Record| -> Vec<PassRound> {
            r.rounds
                .each
                .iter()
                .map(|round| PassRound {
                    fork: round.fork,
                    pass: round.pass,
                    figure: round.ticks,
                    quiet: round.state == RoundState::Quiet,
                })
                .collect()
        };
        let pairs = rounds::pair_by_pass(by_pass(in_fn), &by_pass(inline));
        let two_states = doc.machine_states.model.two_states;
        let paired = rounds::paired(&pairs, two_states, rounds::seed_of(crossing))
            .ok_or_else(|| format!("{PROBE} {crossing}: no round of both shapes in one pass"))?;
        Ok(Read::Pairs(InRounds {
            paired,
            drift_pct: in_fn.cost.as_ref().and_then(|c| c.machine_drift_pct),
            tick: 1.0 / in_fn.rounds.base_batch.unwrap_or(1).max(1) as f64,
        }))
    }
}
