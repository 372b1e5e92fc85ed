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
//!
//! A replay only suggests the toll's cause; [`scored`] is the measurement
//! that can name one: each boot without a candidate mitigation predicts,
//! if that one is the cause, that the toll is gone there, and its runs'
//! toll is held against the present boot's.

use super::prices::{added, measured};
use crate::analysis::combine;
use crate::analysis::figure::Figure;
use crate::analysis::rounds::{self, PairBasis};
use crate::analysis::spread::{VariantSpread, pooled_in_probe};
use crate::analysis::stats::student_t_975;
use crate::mitigations::crossing;
use crate::store::results::RunDocument;
use crate::store::results::record::Record;
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
    /// The pairs of rounds it was read from; absent where the document
    /// kept no rounds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_pairs: Option<FromPairs>,
    /// The least toll the rows can tell from none, ns: the next run's
    /// floor of the row it is read from (`Record::next_run_floor`), which
    /// a tick-exact row's interval shrinks to.
    pub resolution_ns: f64,
    /// What pushing return-stack entries after the crossing wins back, by
    /// how many were pushed; empty where the run did not measure the
    /// refills.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refills: Vec<Refill>,
}

/// The return stack refilled after the crossing with `entries` user
/// addresses (`os/syscall-return` SYSCALL/refill-N): what it wins back of
/// the toll and what it leaves of it, ns.
#[derive(Debug, Clone, Serialize)]
pub struct Refill {
    pub entries: usize,
    /// The call from a function less the same call with the refill: the
    /// pushes' own cost is paid inside it, so this is the net win.
    pub won_back_ns: Option<Figure>,
    /// What is left of the toll: the refilled call less the inline one,
    /// less what the pushes cost alone (their function less `call+ret`).
    pub left_ns: Option<Figure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unmeasured: Option<String>,
    /// The pairs of rounds the win was read from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_pairs: Option<FromPairs>,
    /// Whether the answer, `tax` and the metrics name this win
    /// ([`ReturnToll::win_of`]).
    pub named: bool,
}

/// The pairs of rounds (one of each row, in one pass) a difference was read
/// from.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct FromPairs {
    pub used: usize,
    /// `quiet`: pairs of two quiet rounds; `all`: every pair, where the run
    /// saw one state or had too few quiet pairs. The toll can differ
    /// between the states (docs/the-return-after-a-crossing.md), so `all`
    /// in a run of two states is not the quiet level's figure.
    pub basis: PairBasis,
    /// Whether the run saw two states (a quiet level and slow ones).
    #[serde(skip)]
    two_states: bool,
}

impl FromPairs {
    /// Whether a run of two states had too few quiet pairs, so the
    /// difference stands on pairs of every state.
    pub fn off_the_quiet_level(&self) -> bool {
        self.basis.off_the_quiet_level(self.two_states)
    }
}

/// One difference of two rows, and the pairs it was read from.
#[derive(Debug, Clone, Copy)]
struct Difference {
    figure: Figure,
    from_pairs: Option<FromPairs>,
}

/// The refills the probe measures, by entries pushed.
pub const REFILLS: [usize; 3] = [2, 4, 16];

/// The refill the answer names: two already take most of the toll back on
/// the guests measured, sixteen leave less but cost more themselves.
pub const ANSWERED_REFILL: usize = 4;

/// The rows of [`PROBE`] the answer reads: the null syscall's call from a
/// function, inline, and with the refill it names.
pub fn rows_answered() -> Vec<(&'static str, String)> {
    ["in-fn", "inline", &format!("refill-{ANSWERED_REFILL}")]
        .iter()
        .map(|v| (PROBE, format!("{}/{v}", crossing::RETURN_TOLL_SYSCALL)))
        .collect()
}

impl ReturnToll {
    /// Whether the toll is there to win back: its one-sided lower bound
    /// clears the rows' resolution, not just 0. On the Zen 2 guest of
    /// 2026-12-01, whose kernel returns through a plain `ret`, getpid from
    /// a function read +0.30 ns [-0.02, +0.88] over inline: a lower bound
    /// of +0.03 ns, a fifth of what the row can tell.
    pub fn is_paid(&self) -> bool {
        self.extra_ns
            .and_then(|f| f.lower_bound_95())
            .is_some_and(|lo| lo > self.resolution_ns)
    }

    /// The one rule for naming what a refill wins back, wherever it is
    /// named (the answer, `tax`, the metrics, the JSON's `named`): the
    /// toll is there ([`ReturnToll::is_paid`]), the win's own interval lies
    /// above 0, and it was read at the quiet level. A win of a toll not
    /// found is the pushes' own cost with its sign turned; one read from
    /// pairs of every state is not the quiet level's figure.
    pub fn win_of(&self, refill: &Refill) -> Option<Figure> {
        let on_the_quiet_level = !refill.from_pairs.is_some_and(|p| p.off_the_quiet_level());
        let above_zero = |won: &Figure| won.ci95.is_some_and(|[lo, _]| lo > 0.0);
        refill
            .won_back_ns
            .filter(|won| self.is_paid() && on_the_quiet_level && above_zero(won))
    }

    /// What the refill the answer and tax name ([`ANSWERED_REFILL`]) wins
    /// back, by [`ReturnToll::win_of`].
    pub fn named_refill_win(&self) -> Option<Figure> {
        let refill = self.refills.iter().find(|r| r.entries == ANSWERED_REFILL)?;
        self.win_of(refill)
    }
}

/// Notes on each refill row what a reader could misread it by: that its
/// run did not find the crossing's toll (its interval reaches 0: a CPU or
/// kernel without it, or a run too noisy to see it), so the row is not a
/// win of a toll that is there; and that its win stands on pairs of every
/// state, not the quiet level's.
pub fn note_refill_rows(doc: &mut RunDocument) {
    let mut notes: Vec<(String, String)> = Vec::new();
    for t in of(doc).into_iter().chain(of_other_crossings(doc)) {
        if let Some(extra) = t.extra_ns.filter(|_| !t.is_paid()) {
            let note = format!(
                "this run found no return toll to win back: {} from a function less inline \
                 reads {} (a CPU or kernel without it, or too few quiet rounds to see it)",
                t.crossing,
                toll_read(extra)
            );
            notes.extend(t.refills.iter().map(|f| (row(t.crossing, f), note.clone())));
        }
        for f in &t.refills {
            if let Some(pairs) = f.from_pairs.filter(FromPairs::off_the_quiet_level) {
                let note = format!(
                    "won back read from {} pairs of rounds in every state, too few of them \
                     quiet: not the quiet level's figure",
                    pairs.used
                );
                notes.push((row(t.crossing, f), note));
            }
        }
    }
    for (variant, note) in notes {
        if let Some(r) = doc
            .results
            .iter_mut()
            .find(|r| r.id == PROBE && r.variant == variant)
        {
            r.notes.push(note);
        }
    }
}

/// The variant of a crossing's refill.
fn row(crossing: &str, refill: &Refill) -> String {
    format!("{crossing}/refill-{}", refill.entries)
}

/// A toll not found, in the words of the refill rows' note.
fn toll_read(extra: Figure) -> String {
    match extra.ci95 {
        Some([lo, hi]) => format!("{:+.1} ns [{lo:+.1}, {hi:+.1}], not above 0", extra.value),
        None => format!("{:+.1} ns with no interval", extra.value),
    }
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

/// The tolls of `crossings`, one kind of crossing, and their refills
/// where the run measured them.
fn tolls(doc: &RunDocument, crossings: &[&'static str]) -> Vec<ReturnToll> {
    if doc.record(PROBE, "call+ret").is_none() {
        return Vec::new();
    }
    let pairs = |dearer: &str, cheaper: &str| -> Vec<(String, String)> {
        crossings
            .iter()
            .map(|c| (format!("{c}/{dearer}"), format!("{c}/{cheaper}")))
            .collect()
    };
    let extra = differences(doc, &pairs("in-fn", "inline"));
    let refills: Vec<[Vec<Result<Difference, String>>; 2]> = REFILLS
        .iter()
        .map(|n| {
            let refill = format!("refill-{n}");
            [
                differences(doc, &pairs("in-fn", &refill)),
                differences(doc, &pairs(&refill, "inline")),
            ]
        })
        .collect();
    let pushes = differences(
        doc,
        &REFILLS.map(|n| (format!("refill-{n}/alone"), "call+ret".to_string())),
    );
    crossings
        .iter()
        .zip(extra)
        .enumerate()
        .map(|(i, (&crossing, extra))| {
            let mut toll = ReturnToll {
                crossing,
                unmeasured: extra.as_ref().err().cloned(),
                extra_ns: extra.as_ref().ok().map(|d| d.figure),
                from_pairs: extra.ok().and_then(|d| d.from_pairs),
                resolution_ns: resolution_ns(doc, crossing),
                refills: refills_of(i, &refills, &pushes),
            };
            let named: Vec<bool> = toll
                .refills
                .iter()
                .map(|r| toll.win_of(r).is_some())
                .collect();
            for (refill, named) in toll.refills.iter_mut().zip(named) {
                refill.named = named;
            }
            toll
        })
        .collect()
}

/// What a crossing's in-function row can tell from none, ns: its next
/// run's floor; 0 where the row or the clock's rate is missing.
fn resolution_ns(doc: &RunDocument, crossing: &str) -> f64 {
    let mhz = doc.inventory.tsc_mhz.filter(|m| *m > 0.0);
    doc.record(PROBE, &format!("{crossing}/in-fn"))
        .zip(mhz)
        .map_or(0.0, |(r, mhz)| {
            r.next_run_floor(doc.machine_states.floor_share()) * 1000.0 / mhz
        })
}

/// The `i`th crossing's refills, where the run measured them.
fn refills_of(
    i: usize,
    refills: &[[Vec<Result<Difference, String>>; 2]],
    pushes: &[Result<Difference, String>],
) -> Vec<Refill> {
    REFILLS
        .iter()
        .zip(refills)
        .zip(pushes)
        .filter(|((_, [won, _]), _)| !matches!(&won[i], Err(why) if why.ends_with(NOT_MEASURED)))
        .map(|((&entries, [won, over_inline]), pushes)| {
            let left = over_inline[i]
                .clone()
                .and_then(|over| Ok(combine::difference(over.figure, pushes.clone()?.figure)));
            Refill {
                entries,
                unmeasured: won[i].as_ref().err().or(left.as_ref().err()).cloned(),
                won_back_ns: won[i].as_ref().ok().map(|d| d.figure),
                left_ns: left.ok(),
                from_pairs: won[i].as_ref().ok().and_then(|d| d.from_pairs),
                named: false,
            }
        })
        .collect()
}

/// The end of the reason a row is missing: the run did not measure it.
const NOT_MEASURED: &str = "was not measured";

/// Each pair's difference (`dearer` less `cheaper`, variants of the
/// probe), ns: from pairs of their rounds in one pass, each one's forks'
/// differences pooled with the others' for the next run's interval, as a
/// probe's variants' differences from its baseline are. A document that
/// kept no rounds (written before they were stored) gives the two rows'
/// differences from the plain call, less each other
/// (`analysis::combine::difference`).
fn differences(doc: &RunDocument, pairs: &[(String, String)]) -> Vec<Result<Difference, String>> {
    let mhz = doc.inventory.tsc_mhz.filter(|m| *m > 0.0);
    let two_states = doc.machine_states.model.two_states;
    let read: Vec<Result<Read, String>> = pairs
        .iter()
        .map(|(dearer, cheaper)| Read::of(doc, dearer, cheaper))
        .collect();
    let spreads: Vec<VariantSpread> = pairs
        .iter()
        .zip(&read)
        .filter_map(|((dearer, _), r)| match r {
            Ok(Read::Pairs(r)) => Some(VariantSpread::of_paired(dearer.clone(), &r.paired)),
            _ => None,
        })
        .collect();
    let next = pooled_in_probe(&spreads, None);
    pairs
        .iter()
        .zip(read)
        .map(|((dearer, _), r)| {
            let mhz = mhz.ok_or("the TSC's rate is unknown")?;
            Ok(match r? {
                Read::Rows { dearer, cheaper } => Difference {
                    figure: combine::difference(
                        added(dearer, Some(mhz))?,
                        added(cheaper, Some(mhz))?,
                    ),
                    from_pairs: None,
                },
                Read::Pairs(r) => {
                    let delta = r.paired.delta;
                    let interval = next
                        .iter()
                        .find(|(name, _)| name == dearer)
                        .map(|(_, n)| n.difference_interval(delta, r.drift_pct, r.floor))
                        .or(delta.ci95);
                    Difference {
                        figure: Figure::new(delta.value, interval).map(|t| t * 1000.0 / mhz),
                        from_pairs: Some(FromPairs {
                            used: r.paired.pairs,
                            basis: r.paired.basis,
                            two_states,
                        }),
                    }
                }
            })
        })
        .collect()
}

/// How a difference of two rows is read from a document.
enum Read<'d> {
    /// From pairs of the two rows' rounds.
    Pairs(InRounds),
    /// From the two rows, where the document kept no rounds.
    Rows {
        dearer: &'d Record,
        cheaper: &'d Record,
    },
}

/// One row's rounds against another's of the same passes, paired.
struct InRounds {
    paired: rounds::Paired,
    drift_pct: Option<f64>,
    /// The least half-width of the next run's difference, ticks
    /// ([`Record::next_run_floor`] of the dearer row).
    floor: f64,
}

impl<'d> Read<'d> {
    fn of(doc: &'d RunDocument, dearer: &str, cheaper: &str) -> Result<Read<'d>, String> {
        let row = |variant: &str| -> Result<&Record, String> {
            let r = doc
                .record(PROBE, variant)
                .ok_or_else(|| format!("{PROBE} {variant} {NOT_MEASURED}"))?;
            measured(r)?;
            Ok(r)
        };
        let (dearer_row, cheaper_row) = (row(dearer)?, row(cheaper)?);
        if dearer_row.rounds.each.is_empty() || cheaper_row.rounds.each.is_empty() {
            return Ok(Read::Rows {
                dearer: dearer_row,
                cheaper: cheaper_row,
            });
        }
        let pairs = rounds::pair_by_pass(dearer_row.pass_rounds(), &cheaper_row.pass_rounds());
        let two_states = doc.machine_states.model.two_states;
        // The crossing's own seed where the pair is its toll, as before.
        let seed = dearer.strip_suffix("/in-fn").unwrap_or(dearer);
        let paired = rounds::paired(&pairs, two_states, rounds::seed_of(seed))
            .ok_or_else(|| format!("{PROBE} {dearer}: no round of it and {cheaper} in one pass"))?;
        Ok(Read::Pairs(InRounds {
            paired,
            drift_pct: dearer_row.cost.as_ref().and_then(|c| c.machine_drift_pct),
            floor: dearer_row.next_run_floor(doc.machine_states.floor_share()),
        }))
    }
}

/// What the toll did in a boot without a candidate cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TollMove {
    /// Below the present toll, and what is left under [`GONE_SHARE`] of
    /// it: the candidate explains the toll.
    Gone,
    /// Below the present toll, and above zero: part of it.
    Fell,
    /// Below the present toll, what is left neither shown above zero nor
    /// under [`GONE_SHARE`] of it: a part, perhaps all (more runs tell).
    FellUnresolved,
    /// Not below the present toll: the candidate does not explain it.
    Stays,
}

/// One boot's score.
#[derive(Debug, Clone, Serialize)]
pub struct ReturnScore {
    /// The switch the boot turns off (a vulnerability file), or "all".
    pub without: String,
    pub boot: String,
    /// The toll in that boot's set, ns (the mean of its runs).
    pub toll_ns: Figure,
    /// The present toll less this one: what the candidate explains.
    pub fell_ns: Figure,
    pub outcome: TollMove,
}

/// The toll of the present set and each boot's score.
#[derive(Debug, Clone, Serialize)]
pub struct ReturnScores {
    pub syscall: &'static str,
    pub present_ns: Figure,
    pub scores: Vec<ReturnScore>,
}

/// A set of runs made in one boot without a candidate: what it turns off
/// (a switch's name, or "all"), its boot id, and its runs.
pub struct BootWithout<'a> {
    pub without: String,
    pub boot: String,
    pub runs: &'a [RunDocument],
}

/// The toll of [`crossing::RETURN_TOLL_SYSCALL`] in the `present` runs and
/// each boot's score against it; None where the present runs did not
/// measure the toll, or no boot did.
pub fn scored(present: &[RunDocument], boots: Vec<BootWithout>) -> Option<ReturnScores> {
    let present_ns = set_toll(present)?;
    let mut scores: Vec<ReturnScore> = Vec::new();
    for boot in boots {
        // With one switch the all-off set is that switch's set too.
        if boot.without == "all" && scores.iter().any(|s| s.boot == boot.boot) {
            continue;
        }
        let Some(toll_ns) = set_toll(boot.runs) else {
            continue;
        };
        scores.push(ReturnScore {
            without: boot.without,
            boot: boot.boot,
            fell_ns: combine::difference(present_ns, toll_ns),
            outcome: outcome(present_ns, toll_ns),
            toll_ns,
        });
    }
    (!scores.is_empty()).then_some(ReturnScores {
        syscall: crossing::RETURN_TOLL_SYSCALL,
        present_ns,
        scores,
    })
}

/// The scored syscall's toll over a set's runs: their mean, with the 95%
/// interval of a mean (Student's t over the runs), never narrower than
/// the runs' own intervals allow for a mean of that many; one run gives
/// its own figure and the interval where another run's may land.
fn set_toll(runs: &[RunDocument]) -> Option<Figure> {
    let each: Vec<Figure> = runs
        .iter()
        .map(|doc| of_one(doc, crossing::RETURN_TOLL_SYSCALL)?.extra_ns)
        .collect::<Option<_>>()?;
    match each.as_slice() {
        [] => None,
        [one] => Some(*one),
        many => {
            let n = many.len() as f64;
            let mean = many.iter().map(|f| f.value).sum::<f64>() / n;
            let var = many.iter().map(|f| (f.value - mean).powi(2)).sum::<f64>() / (n - 1.0);
            let own = many.iter().filter_map(Figure::half_width).sum::<f64>() / n;
            let half = (student_t_975(n - 1.0) * var.sqrt()).max(own) / n.sqrt();
            Some(Figure::within(mean, Some(half)))
        }
    }
}

/// What is left of a toll that fell may be at most this share of the
/// present one for the toll to be called gone.
pub const GONE_SHARE: f64 = 0.1;

/// One-sided tests at 5%: did the toll fall (present less this one above
/// zero), is what is left above zero, or under [`GONE_SHARE`] of the
/// present toll. That nothing left was shown is no evidence that nothing
/// is left: `gone` needs the bound.
fn outcome(present: Figure, without: Figure) -> TollMove {
    let fell = combine::difference(present, without)
        .lower_bound_95()
        .is_some_and(|lo| lo > 0.0);
    let left = without.lower_bound_95().is_some_and(|lo| lo > 0.0);
    let under_share = without
        .upper_bound_95()
        .is_some_and(|hi| hi < GONE_SHARE * present.value);
    match (fell, left, under_share) {
        (false, _, _) => TollMove::Stays,
        (true, true, _) => TollMove::Fell,
        (true, false, true) => TollMove::Gone,
        (true, false, false) => TollMove::FellUnresolved,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toll(extra: Figure, resolution_ns: f64, won: Figure) -> ReturnToll {
        ReturnToll {
            crossing: "getpid",
            extra_ns: Some(extra),
            unmeasured: None,
            from_pairs: None,
            resolution_ns,
            refills: vec![Refill {
                entries: ANSWERED_REFILL,
                won_back_ns: Some(won),
                left_ns: None,
                unmeasured: None,
                from_pairs: None,
                named: false,
            }],
        }
    }

    #[test]
    fn a_win_is_named_only_where_the_toll_clears_the_resolution_and_the_win_clears_zero() {
        let paid = Figure::new(40.0, Some([30.0, 50.0]));
        let won = Figure::new(20.0, Some([5.0, 35.0]));
        assert!(toll(paid, 0.17, won).named_refill_win().is_some());
        // The Zen 2 guest's: a lower bound of +0.03 ns, under what the row
        // can tell; the refill's "win" there was its own cost, -10.8 ns.
        let zen2 = Figure::new(0.30, Some([-0.02, 0.88]));
        let t = toll(zen2, 0.17, Figure::new(-10.8, Some([-13.6, -8.0])));
        assert!(!t.is_paid() && t.named_refill_win().is_none());
        assert!(
            toll(zen2, 0.0, won).is_paid(),
            "above 0, not above the resolution"
        );
        assert!(toll(zen2, 0.17, won).named_refill_win().is_none());
        // A toll that is there, and a win whose interval reaches 0, or none.
        let unsure = Figure::new(5.0, Some([-1.0, 11.0]));
        assert!(toll(paid, 0.17, unsure).named_refill_win().is_none());
        assert!(
            toll(paid, 0.17, Figure::new(5.0, None))
                .named_refill_win()
                .is_none()
        );
    }

    #[test]
    fn a_toll_is_gone_fell_or_stays_by_one_sided_tests() {
        let figure = |value: f64, half: f64| Figure::within(value, Some(half));
        let present = figure(33.0, 2.0);
        assert_eq!(outcome(present, figure(0.5, 2.0)), TollMove::Gone);
        // Not shown above zero, but up to 6 ns may be left: not gone.
        assert_eq!(outcome(present, figure(1.0, 6.0)), TollMove::FellUnresolved);
        assert_eq!(outcome(present, figure(15.0, 2.0)), TollMove::Fell);
        assert_eq!(outcome(present, figure(32.0, 2.0)), TollMove::Stays);
        // Above the present one is not a fall either.
        assert_eq!(outcome(present, figure(40.0, 2.0)), TollMove::Stays);
        // Without an interval nothing is shown to fall.
        assert_eq!(
            outcome(Figure::new(33.0, None), figure(0.0, 1.0)),
            TollMove::Stays
        );
    }
}
