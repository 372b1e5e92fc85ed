//! Where a row's toll comes from, over run sets made under different boots
//! (or process controls): the whole toll (the present set against the one
//! with every mitigation off), each mitigation's part (the present set
//! against the one without it only), and what the parts leave (they need
//! not add up: mitigations overlap, as IBRS and retpolines do, or cost
//! more together). Each figure is a sum of sets' figures in nanoseconds
//! with weights, and its interval holds the runs' noise (their forks) and
//! the machine's walk between when the sets ran, as a comparison's does.
//!
//! The model: Behrens, Belay and Kaashoek, "Performance Evolution of
//! Mitigating Transient Execution Attacks" (EuroSys 2022), who toggled boot
//! parameters by hand to attribute each workload's slowdown.

pub mod boots;
pub mod floors;
mod newest;

pub use boots::{
    NamedSet, NotSeparated, Recognised, Refusal, Roles, SetConditions, SetRole, Switch, SwitchKind,
    recognise,
};
pub use newest::newest_sets;

pub use crate::analysis::contrast::BootNoise;
use crate::analysis::contrast::{self, Contrast, OutsideEvidence};
use crate::analysis::figure;
use crate::analysis::noise::{self, Evidence, RunFigure, RunTime};
use crate::analysis::rounds::across_forks;
use crate::analysis::verdict::{Verdict, verdict};
use crate::answer::returns::{self, BootWithout, ReturnScores};
use crate::store::results::RowKey;
use crate::store::results::answered::AttributedPart;
use crate::store::results::at_speed::{AtSpeed, RowAtSpeed, common_speed, paired, speeds_at};
use crate::store::results::{EqualSpeed, Record};
use serde::Serialize;

/// Default threshold of a part: below 2% it is `~`.
pub const DEFAULT_THRESHOLD_PCT: f64 = 2.0;

/// A toll attributed over sets (a row's whole toll, a mitigation's part,
/// or what the parts leave): a sum of sets' figures, in nanoseconds with
/// its 95% interval, the same as a percentage of the figure it is read
/// against, and its verdict. The figure is [`figure::Figure`]; this adds
/// what an attribution says of it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Attributed {
    /// ns per item, with its 95% interval (JSON: `ns`, `ci95_ns`).
    #[serde(flatten, with = "crate::store::results::fields::as_ns")]
    pub ns: figure::Figure,
    /// Of the set figure it is a toll on (the all-off set's for the whole,
    /// the set without the mitigation's for a part, the all-off set's for
    /// the residual).
    pub pct: f64,
    /// Beyond noise and the threshold, as a comparison's verdict, and held
    /// to the false discovery rate over its column's rows.
    pub verdict: Verdict,
    /// The two-sided p-value of the figure under none (Student's t at the
    /// noise's degrees of freedom); None without noise, or where the row's
    /// sets are not comparable.
    pub p_value: Option<f64>,
}

/// One row's toll and its parts.
#[derive(Debug, Clone, Serialize)]
pub struct RowParts {
    #[serde(flatten)]
    pub key: RowKey,
    pub present_ns: f64,
    pub all_off_ns: Option<f64>,
    /// The present set against the all-off set.
    pub whole: Option<Attributed>,
    /// Per mitigation, in the attribution's order: the present set against
    /// the set without it; None where no set lacks it alone.
    pub parts: Vec<Option<Attributed>>,
    /// The whole less every part, where all are measured.
    pub residual: Option<Attributed>,
    /// Why a row has figures but no verdicts.
    pub note: Option<String>,
}

/// Each mitigation's reach: the rows its part moves, and its share of each
/// family's toll (the median over the family's rows with a toll beyond
/// noise of the part over the whole).
#[derive(Debug, Clone, Serialize)]
pub struct SwitchReach {
    pub name: String,
    pub moves: Vec<String>,
    pub families: Vec<FamilyShare>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FamilyShare {
    pub family: String,
    pub share_pct: f64,
    /// The family's rows with a whole toll beyond noise the share is read
    /// over.
    pub rows: usize,
}

/// What the attribution counted of a boot's own variance, and from what.
#[derive(Debug, Clone, Serialize)]
pub struct BootVariance {
    /// Boots of the present command line it was read over; 0: not known.
    pub boots: usize,
    /// Rows it was counted in.
    pub rows: usize,
    /// The median over those rows of its standard deviation, percent.
    pub median_pct: Option<f64>,
    /// Whether the sets ran under more than one boot (else it cancels).
    pub sets_span_boots: bool,
    pub summary: String,
}

impl BootVariance {
    fn of(noise: &BootNoise, sets_span_boots: bool) -> BootVariance {
        let sds: Vec<f64> = noise.rows.values().map(|e| e.sd() * 100.0).collect();
        let median_pct = crate::analysis::stats::median_of(&sds);
        let summary = match (sets_span_boots, median_pct) {
            (false, _) => "the sets ran under one boot: the parts are this boot's, and a \
                           boot's own variance is not counted"
                .to_string(),
            (true, Some(pct)) => format!(
                "a boot's own variance counted in every part across boots: from {} boots of \
                 the present command line in the history (median {pct:.1}% over {} rows)",
                noise.boots,
                sds.len()
            ),
            (true, None) => "a boot's own variance is not known (the history holds no two \
                             boots of the present command line): parts across boots hold the \
                             runs' noise only; a run set on a second boot of the present \
                             command line measures it"
                .to_string(),
        };
        BootVariance {
            boots: noise.boots,
            rows: sds.len(),
            median_pct,
            sets_span_boots,
            summary,
        }
    }
}

/// Which boot each set ran under (an index per distinct boot) and a row's
/// boot variance: a boot's draw is a factor on the row in every set of that
/// boot, so sets of one boot move together and a part between them moves by
/// its own size only.
#[derive(Debug, Clone, Copy)]
pub struct BootTerm<'a> {
    pub of_set: &'a [usize],
    /// None where the history holds no two boots of the row.
    pub variance: Option<Evidence>,
    /// Boots the variance was read over.
    pub boots: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Attribution {
    /// The CPU and kernel release the sets share.
    pub machine: String,
    pub threshold_pct: f64,
    pub recognised: Recognised,
    pub rows: Vec<RowParts>,
    pub reach: Vec<SwitchReach>,
    /// Rows not measured in every set.
    pub gaps: Vec<String>,
    pub boot_variance: BootVariance,
    pub discoveries: Discoveries,
    /// The kernel's price list scored against the sets' boots, where the
    /// command scored it (`floors::score`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub floors: Option<floors::FloorScores>,
    /// The return after a syscall made from a function, held against each
    /// boot that turns a candidate cause off; None where the sets did not
    /// measure it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub returns: Option<ReturnScores>,
}

/// The figures with a p-value over every column (the whole toll, each
/// part, what they leave), those marked among them after each column is
/// held to the false discovery rate over its rows, and how many of the
/// marked are expected to be false at most.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Discoveries {
    pub tested: usize,
    pub marked: usize,
    pub false_expected: f64,
}

/// Holds every figure of the table (the whole toll, each mitigation's
/// part, what they leave, on every row) to the false discovery rate as one
/// family, as a comparison holds its rows: the table is the question a
/// reader asks ("what moved, and by which mitigation"), and holding each
/// column apart lets every column spend the rate again (five columns: up
/// to five times the false marks the line under the table allows).
pub fn hold_to_false_discovery_rate(rows: &mut [RowParts]) -> Discoveries {
    let tested = crate::analysis::verdict::hold_to_false_discovery_rate(
        rows.iter_mut()
            .flat_map(|r| r.parts.iter_mut().chain([&mut r.whole, &mut r.residual]))
            .flatten()
            .map(|e| (&mut e.verdict, e.p_value)),
    );
    let marked = rows
        .iter()
        .flat_map(|r| r.parts.iter().chain([&r.whole, &r.residual]))
        .flatten()
        .filter(|e| e.verdict != Verdict::Same)
        .count();
    Discoveries {
        tested,
        marked,
        false_expected: crate::analysis::verdict::FALSE_DISCOVERY_RATE * marked as f64,
    }
}

/// One set's figure for a row: its runs' records, when they ran, and the
/// reference speed each is read at (empty: raw).
#[derive(Clone, Copy)]
pub struct SetRow<'a> {
    pub records: &'a [&'a Record],
    pub times: &'a [RunTime],
    pub speeds: &'a [Option<EqualSpeed>],
}

impl<'a> SetRow<'a> {
    /// Each set's row from its records and its runs' times, set by set,
    /// read raw.
    pub fn each(records: &'a [Vec<&'a Record>], times: &'a [Vec<RunTime>]) -> Vec<SetRow<'a>> {
        records
            .iter()
            .zip(times)
            .map(|(records, times)| SetRow {
                records,
                times,
                speeds: &[],
            })
            .collect()
    }

    /// The same, each set's runs read at the reference speeds `speeds`.
    pub fn each_at(
        records: &'a [Vec<&'a Record>],
        times: &'a [Vec<RunTime>],
        speeds: &'a [Vec<Option<EqualSpeed>>],
    ) -> Vec<SetRow<'a>> {
        SetRow::each(records, times)
            .into_iter()
            .zip(speeds)
            .map(|(set, speeds)| SetRow { speeds, ..set })
            .collect()
    }
}

/// The attribution of sets already recognised.
pub fn attribute(
    sets: &[NamedSet],
    recognised: Recognised,
    threshold_pct: f64,
    boot_noise: &BootNoise,
) -> Attribution {
    let present = &sets[recognised.roles.present].runs;
    let mut boot_ids: Vec<&str> = Vec::new();
    let of_set: Vec<usize> = sets
        .iter()
        .map(|s| {
            let boot = s.runs[0].inventory.identity.boot_id.as_str();
            boot_ids.iter().position(|b| *b == boot).unwrap_or_else(|| {
                boot_ids.push(boot);
                boot_ids.len() - 1
            })
        })
        .collect();
    let spans_boots = boot_ids.len() > 1;
    let times: Vec<Vec<RunTime>> = sets
        .iter()
        .map(|s| crate::store::results::run_times(&s.runs))
        .collect();
    // Every set's runs read at one reference speed where all read one: the
    // reference is no mitigation's, so the boots' own speeds are out.
    let at = common_speed(sets.iter().flat_map(|s| &s.runs));
    let speeds: Vec<Vec<Option<EqualSpeed>>> =
        sets.iter().map(|s| speeds_at(&s.runs, at)).collect();
    let mut rows = Vec::new();
    let mut gaps = Vec::new();
    for r in &present[0].results {
        let per_set: Option<Vec<Vec<&Record>>> = sets
            .iter()
            .map(|s| row_records(s.runs.iter().map(|d| &d.results[..]), &r.id, &r.variant))
            .collect();
        let Some(per_set) = per_set else {
            gaps.push(format!("{} {}", r.id, r.variant));
            continue;
        };
        let boot = Some(BootTerm {
            of_set: &of_set,
            variance: boot_noise
                .rows
                .get(&(r.id.clone(), r.variant.clone()))
                .copied(),
            boots: boot_noise.boots,
        });
        rows.push(row_parts(
            &SetRow::each_at(&per_set, &times, &speeds),
            &recognised,
            threshold_pct,
            boot,
        ));
    }
    let discoveries = hold_to_false_discovery_rate(&mut rows);
    let reach = reach(&recognised.switches, &rows);
    let doc = &present[0];
    let mut attribution = Attribution {
        machine: format!(
            "{}, kernel {}",
            doc.inventory.cpu.model_name, doc.inventory.kernel.release
        ),
        threshold_pct,
        recognised,
        rows,
        reach,
        gaps,
        boot_variance: BootVariance::of(boot_noise, spans_boots),
        discoveries,
        floors: None,
        returns: None,
    };
    attribution.returns = return_scores(&attribution, sets);
    attribution
}

/// The return toll scored against each boot of `sets` that turns
/// something off (`answer::returns::scored`): the sets the boots
/// recognised as without a switch, and the one with every switch off.
fn return_scores(a: &Attribution, sets: &[NamedSet]) -> Option<ReturnScores> {
    let roles = &a.recognised.roles;
    let boot = |set: usize| sets[set].runs[0].inventory.identity.boot_id.clone();
    let without = a
        .recognised
        .switches
        .iter()
        .zip(&roles.without)
        .filter_map(|(switch, set)| Some((switch.name.clone(), (*set)?)))
        .chain(roles.all_off.map(|set| ("all".to_string(), set)))
        .filter(|&(_, set)| set != roles.present)
        .map(|(without, set)| BootWithout {
            without,
            boot: boot(set),
            runs: &sets[set].runs,
        })
        .collect();
    returns::scored(&sets[roles.present].runs, without)
}

/// Every run's record of a row (`id`, `variant`) with a figure, where
/// every run of a set has one.
pub fn row_records<'a>(
    runs: impl Iterator<Item = &'a [Record]>,
    id: &str,
    variant: &str,
) -> Option<Vec<&'a Record>> {
    runs.map(|records| {
        records
            .iter()
            .find(|x| x.id == id && x.variant == variant && x.cost.is_some())
    })
    .collect()
}

/// A set's figure for a row, after the runs the slow state held throughout
/// are left out where its other runs are quiet (as a comparison does).
struct SetFigure {
    ns: f64,
    runs: Vec<RunFigure>,
    times: Vec<RunTime>,
    slow_state: bool,
    /// The mean log distance of its runs from the common reference speed.
    distance: f64,
}

impl SetFigure {
    /// Every set's figure of a row, read at one reference speed where all
    /// its runs can be.
    fn each<'a>(sets: &[SetRow<'a>]) -> (Vec<SetFigure>, RowAtSpeed<'a>) {
        let quiet: Vec<(Vec<AtSpeed>, Vec<RunTime>)> = sets
            .iter()
            .map(|s| {
                noise::quiet_runs(
                    &paired(s.records, s.speeds),
                    |(r, _)| r.slow_state(),
                    s.times,
                )
            })
            .collect();
        let row = RowAtSpeed::of(quiet.iter().map(|(runs, _)| runs.clone()).collect());
        let figures = quiet
            .into_iter()
            .enumerate()
            .map(|(i, (runs, times))| {
                let figures = row.figures(i);
                SetFigure {
                    ns: across_forks(&figures.iter().map(|f| f.ns).collect::<Vec<_>>()),
                    slow_state: runs.iter().any(|(r, _)| r.slow_state()),
                    times: if times.len() == runs.len() {
                        times
                    } else {
                        Vec::new()
                    },
                    runs: figures,
                    distance: row.distance(i),
                }
            })
            .collect();
        (figures, row)
    }
}

/// The breakdown of one row over its sets (each with the row's records in
/// every run), whose roles `recognised` says; `boot` says each set's boot
/// and a boot's own variance where the history knows it (None: one boot).
pub fn row_parts(
    sets: &[SetRow],
    recognised: &Recognised,
    threshold_pct: f64,
    boot: Option<BootTerm>,
) -> RowParts {
    let (figures, row) = SetFigure::each(sets);
    let contrast_sets: Vec<contrast::Set> = figures
        .iter()
        .enumerate()
        .map(|(i, f)| contrast::Set {
            runs: &f.runs,
            times: &f.times,
            distance: f.distance,
            boot: boot.map_or(0, |b| b.of_set[i]),
        })
        .collect();
    let outside = OutsideEvidence {
        carried_se: row.joint.map(|j| j.se).filter(|_| row.equal_speed),
        history: None,
        boot: boot.and_then(|b| Some((b.variance?, b.boots))),
    };
    let sum = |terms: &[(usize, f64)], base: usize| -> Attributed {
        estimate(
            &figures,
            &contrast_sets,
            terms,
            base,
            &outside,
            threshold_pct,
        )
    };
    let p = recognised.roles.present;
    let whole = recognised
        .roles
        .all_off
        .map(|off| sum(&[(p, 1.0), (off, -1.0)], off));
    let parts: Vec<Option<Attributed>> = recognised
        .roles
        .without
        .iter()
        .map(|w| w.map(|w| sum(&[(p, 1.0), (w, -1.0)], w)))
        .collect();
    // whole - Σ parts = (1 - k)·present - all_off + Σ without_k; with one
    // mitigation it is nothing by construction.
    let residual = match (recognised.roles.all_off, parts.iter().all(Option::is_some)) {
        (Some(off), true) if parts.len() > 1 => {
            let mut terms = vec![(p, 1.0 - parts.len() as f64), (off, -1.0)];
            terms.extend(recognised.roles.without.iter().flatten().map(|&w| (w, 1.0)));
            Some(sum(&terms, off))
        }
        _ => None,
    };
    let slow: Vec<bool> = figures.iter().map(|f| f.slow_state).collect();
    let note = (slow.iter().any(|&s| s) && !slow.iter().all(|&s| s)).then(|| {
        "some sets' figure is the slow state's (no quiet round), others' the quiet state's: \
         the parts are not comparable"
            .to_string()
    });
    let strip = |e: Attributed| match note {
        Some(_) => Attributed {
            verdict: Verdict::Same,
            p_value: None,
            ..e
        },
        None => e,
    };
    let first = sets[p].records[0];
    RowParts {
        key: RowKey::of(first),
        present_ns: figures[p].ns,
        all_off_ns: recognised.roles.all_off.map(|off| figures[off].ns),
        whole: whole.map(strip),
        parts: parts.into_iter().map(|e| e.map(strip)).collect(),
        residual: residual.map(strip),
        note,
    }
}

/// Σ weight·figure over `terms` (set, weight), read against set `base`,
/// by one contrast ([`contrast::read`]) whose terms are each set's weight
/// times its figure in nanoseconds.
fn estimate(
    figures: &[SetFigure],
    sets: &[contrast::Set],
    terms: &[(usize, f64)],
    base: usize,
    outside: &OutsideEvidence,
    threshold_pct: f64,
) -> Attributed {
    let mut merged: Vec<(usize, f64)> = Vec::new();
    for &(set, w) in terms {
        match merged.iter_mut().find(|(s, _)| *s == set) {
            Some((_, total)) => *total += w,
            None => merged.push((set, w)),
        }
    }
    let ns: f64 = merged.iter().map(|&(s, w)| w * figures[s].ns).sum();
    let scaled: Vec<(usize, f64)> = merged
        .iter()
        .map(|&(s, w)| (s, w * figures[s].ns))
        .collect();
    let read: Contrast = contrast::read(sets, &scaled, outside);
    let half = read.half_width();
    let of_base = |v: f64| v / figures[base].ns * 100.0;
    let figure = figure::Figure::within(ns, half);
    let spread = read.spread;
    Attributed {
        ns: figure,
        pct: of_base(ns),
        verdict: verdict(of_base(ns), figure.map(of_base).ci95, threshold_pct),
        p_value: spread.map(|s| s.p_value(ns, threshold_pct / 100.0 * figures[base].ns)),
    }
}

/// Per mitigation, the rows its part moves and its median share of each
/// family's rows whose whole toll is beyond noise.
fn reach(switches: &[Switch], rows: &[RowParts]) -> Vec<SwitchReach> {
    switches
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let moves = rows
                .iter()
                .filter(|r| r.parts[k].is_some_and(|p| p.verdict != Verdict::Same))
                .map(|r| format!("{} {}", r.key.id, r.key.variant))
                .collect();
            let families = crate::measure::probes::by_family(rows, |r| &r.key.family)
                .into_iter()
                .filter_map(|(family, members)| {
                    let shares: Vec<f64> = members
                        .iter()
                        .filter_map(|r| {
                            let whole = r.whole.filter(|w| w.verdict == Verdict::Slower)?;
                            Some(r.parts[k]?.ns.value / whole.ns.value * 100.0)
                        })
                        .collect();
                    crate::analysis::stats::median_of(&shares).map(|share_pct| FamilyShare {
                        family: family.name.to_string(),
                        share_pct,
                        rows: shares.len(),
                    })
                })
                .collect();
            SwitchReach {
                name: s.name.clone(),
                moves,
                families,
            }
        })
        .collect()
}

/// The parts beyond noise of the rows a run's summary reads, as the
/// summary names them (`results::answered::AttributedPart`).
pub fn summary_parts(a: &Attribution) -> Vec<AttributedPart> {
    let read = crate::answer::summary::rows_read();
    let sets: Vec<&str> = a.recognised.sets.iter().map(|s| s.name.as_str()).collect();
    let mut parts = Vec::new();
    for row in a
        .rows
        .iter()
        .filter(|r| read.contains(&(r.key.id.as_str(), r.key.variant.as_str())))
    {
        for (switch, part) in a.recognised.switches.iter().zip(&row.parts) {
            let Some(part) = part.filter(|p| p.verdict == Verdict::Slower) else {
                continue;
            };
            // With one mitigation separated its part is the whole toll:
            // the row's cost says more.
            let whole = row
                .whole
                .filter(|w| w.ns.value > 0.0 && a.recognised.switches.len() > 1);
            let (base, of) = match whole {
                Some(whole) => (whole.ns.value, "toll"),
                None => (row.present_ns, "cost"),
            };
            let pct = |ns: f64| ns / base * 100.0;
            let share = part.ns.map(pct);
            let ci_text = share
                .ci95
                .map_or_else(String::new, |[lo, hi]| format!(" [{lo:.0}, {hi:.0}]"));
            parts.push(AttributedPart {
                mitigation: switch.name.clone(),
                probe: row.key.id.clone(),
                variant: row.key.variant.clone(),
                share,
                of: of.to_string(),
                sets: sets.join(", "),
                text: format!(
                    "{}: {:.0}%{ci_text} of {} {}'s {of} here",
                    switch.name, share.value, row.key.id, row.key.variant
                ),
            });
        }
    }
    parts
}
