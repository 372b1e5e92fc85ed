//! The kernel's own mitigations priced without a reboot: each sequence the
//! running kernel runs for a mitigation in force (the catalogue's
//! [`crate::mitigations::sequences`]), its price per occurrence from the
//! run's replay, and what that makes of the null syscall: the part it
//! takes at least (a floor) where the kernel runs it a known number of
//! times per crossing, a price per occurrence with the count unknown where
//! not. Never a measured part: only a boot without the mitigation measures
//! that (`mitbench attribute`).

use crate::analysis::combine;
use crate::analysis::figure::Figure;
use crate::mitigations::Id;
use crate::mitigations::crossing::SYSCALL;
use crate::mitigations::sequences::{
    NOT_ON_THIS_CPU, Occurs, OnCpu, Read, SEQUENCES, Sequence, runs_for, runs_here, why_no_replay,
};
use crate::store::results::{Record, RunDocument};
use serde::Serialize;

/// One sequence the running kernel runs, priced.
#[derive(Debug, Clone, Serialize)]
pub struct KernelPrice {
    /// The catalogue's key of the mitigation, and its name.
    pub id: Id,
    pub mitigation: &'static str,
    /// The vulnerability files (under /sys/devices/system/cpu/
    /// vulnerabilities/) the mitigation serves: the key `summary.in_force`
    /// and the inventory use, which a machine reader joins the price on.
    pub vulnerabilities: &'static [&'static str],
    /// The row that prices it: probe and variant.
    pub probe: &'static str,
    pub variant: &'static str,
    pub occurs: Occurs,
    /// The kernel source the replay follows, and where user mode differs.
    pub source: &'static str,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub user_mode: &'static str,
    /// ns each time the kernel runs it: the row less its baseline, with
    /// the 95% interval another run's difference may land in.
    pub price_ns: Option<Figure>,
    /// The part of one null syscall it takes at least, ns: the price times
    /// the times a syscall runs it, where that count is known.
    pub getpid_floor_ns: Option<Figure>,
    /// Why there is no price, where there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unpriced: Option<String>,
}

/// The price list of the kernel's mitigations in force, and the floor of
/// the null syscall they make together.
#[derive(Debug, Clone, Default, Serialize)]
pub struct KernelPrices {
    pub prices: Vec<KernelPrice>,
    /// Sequences the catalogue knows that this kernel does not run here,
    /// and why: their rows price them for a boot or CPU that would.
    pub not_run: Vec<NotRun>,
    /// The null syscall as the run's table prints it, ns.
    pub getpid_ns: Option<Figure>,
    /// The floors together, ns (half-widths added: they come from rows of
    /// one run).
    pub getpid_floor_ns: Option<Figure>,
    /// Each mitigation in force that no sequence here prices, by the file
    /// whose line puts it in force, and why.
    pub unreplayed: Vec<Unreplayed>,
}

/// A mitigation in force with no replayed price, and why: once for every
/// vulnerability file whose line puts it in force for that reason (SRSO
/// in IBPB mode makes retbleed's IBPB too, one barrier on each entry).
#[derive(Debug, Clone, Serialize)]
pub struct Unreplayed {
    pub id: Id,
    pub mitigation: &'static str,
    /// The files, and each one's line.
    pub vulnerabilities: Vec<String>,
    pub lines: Vec<String>,
    pub why: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct NotRun {
    pub id: Id,
    pub mitigation: &'static str,
    /// As [`KernelPrice::vulnerabilities`].
    pub vulnerabilities: &'static [&'static str],
    pub variant: &'static str,
    pub why: String,
    /// Whether its mitigation is in force here all the same, by another
    /// line of its files or on a CPU that needs no such sequence.
    pub in_force: bool,
    /// Whether the kernel skips it on this CPU's vendor.
    pub cpu_needs_none: bool,
    /// The process control that would ask the kernel for it, where a task
    /// asks (IBPB on its switches).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asked_by: Option<&'static str>,
}

/// The price list of `doc`.
pub fn of(doc: &RunDocument) -> KernelPrices {
    let mut list = KernelPrices {
        getpid_ns: doc
            .record(SYSCALL.probe, SYSCALL.variant)
            .and_then(Record::shown_ns),
        ..KernelPrices::default()
    };
    let cpu = &doc.inventory.cpu;
    let on = OnCpu {
        vendor: &cpu.vendor,
        family: &cpu.family,
        bugs: &cpu.bugs,
    };
    for s in SEQUENCES {
        if let Err(why) = runs_here(s, &cpu.vulnerabilities, on) {
            let in_force = s.files().iter().any(|f| {
                cpu.vulnerabilities.get(*f).is_some_and(|line| {
                    crate::mitigations::of_file(f, line)
                        .iter()
                        .any(|m| m.id == s.mitigation)
                })
            });
            list.not_run.push(NotRun {
                id: s.mitigation,
                mitigation: s.mitigation.entry().name,
                vulnerabilities: s.files(),
                variant: s.row.1,
                cpu_needs_none: why.starts_with(NOT_ON_THIS_CPU),
                why,
                in_force,
                asked_by: s.asked_by,
            });
            continue;
        }
        let price = doc.record(s.row.0, s.row.1).map(|r| price(s, r, doc));
        list.prices.push(priced(s, price));
    }
    list.getpid_floor_ns = sum_of_one_run(list.prices.iter().filter_map(|p| p.getpid_floor_ns));
    list.unreplayed = unreplayed_in_force(&list, &cpu.vulnerabilities);
    list
}

/// Every mitigation in force, by each file whose line puts it in force,
/// that neither a sequence priced here runs for nor the CPU skips: with
/// why, so that none in force is left unsaid.
fn unreplayed_in_force(
    list: &KernelPrices,
    vulnerabilities: &std::collections::BTreeMap<String, String>,
) -> Vec<Unreplayed> {
    let mut found: Vec<Unreplayed> = Vec::new();
    for f in crate::mitigations::kernel::in_force(vulnerabilities) {
        for &id in &f.mitigations {
            let ran = |variant: &str| {
                SEQUENCES
                    .iter()
                    .any(|s| s.row.1 == variant && runs_for(s, &f.vulnerability, &f.line))
            };
            let priced = list.prices.iter().any(|p| p.id == id && ran(p.variant));
            let skipped = list
                .not_run
                .iter()
                .any(|n| n.id == id && n.cpu_needs_none && ran(n.variant));
            if priced || skipped {
                continue;
            }
            let why = why_no_replay(&f.vulnerability, &f.line, id);
            match found.iter_mut().find(|u| u.id == id && u.why == why) {
                Some(u) => {
                    u.vulnerabilities.push(f.vulnerability.clone());
                    u.lines.push(f.line.clone());
                }
                None => found.push(Unreplayed {
                    id,
                    mitigation: id.entry().name,
                    vulnerabilities: vec![f.vulnerability.clone()],
                    lines: vec![f.line.clone()],
                    why,
                }),
            }
        }
    }
    found
}

/// Notes on each replayed row whose sequence this kernel does not run on
/// this CPU, why: the family table prints every row, and a price of
/// another CPU's sequence must not be read as this one's.
pub fn note_replays(doc: &mut RunDocument) {
    let list = of(doc);
    for n in list.not_run {
        let Some(s) = SEQUENCES.iter().find(|s| s.row.1 == n.variant) else {
            continue;
        };
        // A row that prices another sequence the kernel runs here (the
        // IBPB a switch pays, where only the one on entry is not run).
        if list.prices.iter().any(|p| p.variant == n.variant) {
            continue;
        }
        if let Some(r) = doc
            .results
            .iter_mut()
            .find(|r| r.id == s.row.0 && r.variant == s.row.1)
        {
            r.notes
                .push(format!("a replay this kernel does not run here: {}", n.why));
        }
    }
}

/// Prices of rows of one run added up: each side of their intervals adds
/// (`combine::Sum::of_same_sets`). A price is a cost, never below nothing,
/// so each part's lower end is read at zero or above: the sum's floor is
/// then never below a part's. None where there are none.
pub fn sum_of_one_run(figures: impl IntoIterator<Item = Figure>) -> Option<Figure> {
    let mut sum = crate::analysis::combine::Sum::of_same_sets();
    for f in figures {
        let at_least_nothing = f.ci95.map(|[lo, hi]| [lo.clamp(0.0, f.value.max(0.0)), hi]);
        sum.add_figure(Figure::new(f.value, at_least_nothing));
    }
    sum.read()
}

/// What one occurrence of `s` costs by its row `r` of `doc`, ns, with the
/// interval another run's price may land in; Err: why there is none.
fn price(s: &Sequence, r: &Record, doc: &RunDocument) -> Result<Figure, String> {
    let mhz = doc.inventory.tsc_mhz;
    let per_item = match s.read {
        Read::AddedTo(other) => {
            let other = doc
                .record(s.row.0, other)
                .ok_or_else(|| format!("{} {other}, its reference, was not measured", s.row.0))?;
            // Two rows less one baseline: `combine::difference`'s bound.
            combine::difference(added(r, mhz)?, added(other, mhz)?)
        }
        Read::AddedToBaseline => added(r, mhz)?,
        Read::OwnCost => own(r)?,
    };
    Ok(per_item.map(|v| v / f64::from(s.per_item)))
}

/// A row's own figure, ns, with its interval; Err: why there is none.
fn own(r: &Record) -> Result<Figure, String> {
    measured(r)?;
    r.shown_ns()
        .ok_or_else(|| format!("{} {} was not measured", r.id, r.variant))
}

/// What a row adds to its baseline, ns, with the interval another run's
/// difference may land in; Err: why there is none.
pub(crate) fn added(r: &Record, tsc_mhz: Option<f64>) -> Result<Figure, String> {
    measured(r)?;
    let vs = r.vs_baseline.as_ref().ok_or_else(|| {
        format!(
            "{} {} was not measured beside its baseline",
            r.id, r.variant
        )
    })?;
    let mhz = tsc_mhz
        .filter(|m| *m > 0.0)
        .ok_or("the TSC's rate is unknown")?;
    Ok(vs.next_run_delta().map(|t| t * 1000.0 / mhz))
}

/// Ok where the row was measured; Err: the machine's reason it was not.
pub(crate) fn measured(r: &Record) -> Result<(), String> {
    match &r.unsupported {
        Some(u) => Err(format!("unsupported: {}", u.reason)),
        None => Ok(()),
    }
}

fn priced(s: &Sequence, price: Option<Result<Figure, String>>) -> KernelPrice {
    let (price_ns, unpriced) = match price {
        Some(Ok(f)) => (Some(f), None),
        Some(Err(why)) => (None, Some(why)),
        None => (
            None,
            Some(format!(
                "not priced in this run: `mitbench run --probe {}` prices it",
                s.row.0
            )),
        ),
    };
    let count = s.occurs.per_syscall().filter(|n| *n > 0);
    KernelPrice {
        id: s.mitigation,
        mitigation: s.mitigation.entry().name,
        vulnerabilities: s.files(),
        probe: s.row.0,
        variant: s.row.1,
        occurs: s.occurs,
        source: s.source,
        user_mode: s.user_mode,
        price_ns,
        getpid_floor_ns: price_ns
            .zip(count)
            .map(|(f, n)| f.map(|v| v * f64::from(n))),
        unpriced,
    }
}

/// Lays a price on `doc`: a row `probe variant`, cloned from its getpid
/// record, `ns` above its baseline (this run's interval ±1%, the next
/// run's ±5%). For the tests of what reads the price list.
#[doc(hidden)]
pub fn lay_price(doc: &mut RunDocument, (probe, variant): (&str, &str), ns: f64) {
    let mut r = doc
        .record(SYSCALL.probe, SYSCALL.variant)
        .expect("a run with the null syscall")
        .clone();
    let ticks = ns * doc.inventory.tsc_mhz.expect("a run with its TSC's rate") / 1000.0;
    r.id = probe.to_string();
    r.family = probe.split('/').next().unwrap_or(probe).to_string();
    r.variant = variant.to_string();
    r.vs_baseline = Some(crate::store::results::Comparison {
        ratio: Figure::new(2.0, None),
        delta: Figure::new(ticks, Some([ticks * 0.99, ticks * 1.01])),
        next_run_delta_ticks: Some(Figure::new(ticks, Some([ticks * 0.95, ticks * 1.05]))),
        pairs: 30,
        basis: crate::analysis::rounds::PairBasis::All,
        headline_ratio: None,
        holds_headline_ratio: None,
    });
    doc.results.push(r);
}

/// The default-run fixture on this AMD guest's lines, with a row of
/// `kernel/sequences` (or of the probe named before a space) adding
/// `ns` to its baseline.
#[cfg(test)]
pub(crate) fn run_with(rows: &[(&str, f64)]) -> RunDocument {
    let mut doc: RunDocument = crate::store::results::load::document_from_str(
        include_str!("../../tests/fixtures/default-run.json"),
        "default-run.json",
    )
    .unwrap();
    for (row, ns) in rows {
        let row = row
            .split_once(' ')
            .unwrap_or((crate::mitigations::sequences::PROBE, row));
        lay_price(&mut doc, row, *ns);
    }
    doc.inventory.cpu.vendor = "AuthenticAMD".into();
    doc.inventory.cpu.vulnerabilities =
        crate::mitigations::lines_of(crate::mitigations::sequences::AMD_GUEST);
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_sequence_floors_getpid_and_a_per_return_one_is_priced_per_occurrence() {
        let doc = run_with(&[
            ("srso-untrain", 20.0),
            ("srso-return-thunk", 6.0),
            ("rsb-fill", 30.0),
        ]);
        let k = of(&doc);
        let get = |v: &str| k.prices.iter().find(|p| p.variant == v).unwrap();
        let untrain = get("srso-untrain").getpid_floor_ns.expect("an entry floor");
        assert!((untrain.value - 20.0).abs() < 1e-6, "{untrain:?}");
        assert!(get("srso-return-thunk").getpid_floor_ns.is_none());
        assert!((get("srso-return-thunk").price_ns.unwrap().value - 6.0).abs() < 1e-6);
        // A null syscall switches no task: RSB filling floors none of it.
        assert!(get("rsb-fill").getpid_floor_ns.is_none());
        // A sequence priced by a row of another probe: indirect/call retpoline.
        assert!(
            get("retpoline").price_ns.is_some(),
            "indirect/call is in the fixture"
        );
        let floor = k.getpid_floor_ns.unwrap();
        assert!(floor.value < k.getpid_ns.unwrap().value);
        // What this CPU or kernel does not run is said, and why.
        let not_run = |v: &str| k.not_run.iter().find(|n| n.variant == v).unwrap();
        let lfence = not_run("lfence");
        assert!(lfence.in_force && lfence.cpu_needs_none && lfence.why.contains("GenuineIntel"));
        assert!(!not_run("bhb-clear").in_force && !not_run("verw").in_force);
    }

    #[test]
    fn a_replay_of_another_cpus_sequence_is_noted_as_one() {
        let mut doc = run_with(&[("srso-untrain", 20.0), ("srso-untrain-zen1-2", 25.0)]);
        assert_eq!(doc.inventory.cpu.family, "25", "a Zen 3 guest's run");
        note_replays(&mut doc);
        let noted = |variant: &str| {
            let r = doc
                .record(crate::mitigations::sequences::PROBE, variant)
                .unwrap();
            r.notes
                .iter()
                .any(|n| n.starts_with("a replay this kernel does not run"))
        };
        assert!(noted("srso-untrain-zen1-2") && !noted("srso-untrain"));
        let k = of(&doc);
        assert!(k.prices.iter().all(|p| p.variant != "srso-untrain-zen1-2"));
    }

    #[test]
    fn ibpb_on_request_is_priced_per_switch_where_the_kernel_offers_it() {
        let row = "syscall/specctrl-switch indirect_branch=disable";
        let mut doc = run_with(&[(row, 2000.0)]);
        // This AMD guest's kernel offers no IBPB: said, and why.
        let ibpb = |k: &KernelPrices| k.prices.iter().find(|p| p.id == Id::Ibpb).cloned();
        let k = of(&doc);
        assert!(ibpb(&k).is_none());
        let refused = k.not_run.iter().find(|n| n.id == Id::Ibpb).unwrap();
        assert!(
            !refused.in_force && refused.asked_by.is_some(),
            "{refused:?}"
        );
        assert!(refused.why.contains("spectre_v2"), "{}", refused.why);
        // A kernel that does: a round trip switches twice, so half of it.
        doc.inventory.cpu.vulnerabilities.insert(
            "spectre_v2".into(),
            "Mitigation: Retpolines; IBPB: conditional; STIBP: disabled; RSB filling".into(),
        );
        let price = ibpb(&of(&doc)).unwrap();
        assert_eq!(price.occurs, Occurs::PerSwitch);
        assert!(
            (price.price_ns.unwrap().value - 1000.0).abs() < 1e-6,
            "{price:?}"
        );
        assert!(
            price.getpid_floor_ns.is_none(),
            "a null syscall switches no task"
        );
        // Its row is the IBPB's price here: no note calls it another
        // CPU's replay, though the barrier on entry is not run.
        note_replays(&mut doc);
        let record = doc.record("syscall/specctrl-switch", "indirect_branch=disable");
        assert!(record.unwrap().notes.is_empty());
        // The same barrier on every entry (spec_rstack_overflow=ibpb) is
        // priced by it, per entry, into getpid's floor.
        doc.inventory
            .cpu
            .vulnerabilities
            .insert("spec_rstack_overflow".into(), "Mitigation: IBPB".into());
        let k = of(&doc);
        let entry = k.prices.iter().find(|p| p.id == Id::ReturnThunks).unwrap();
        assert_eq!(entry.occurs, Occurs::PerEntry);
        assert!((entry.getpid_floor_ns.unwrap().value - 1000.0).abs() < 1e-6);
        assert!(k.unreplayed.iter().all(|u| u.id != Id::ReturnThunks));
    }

    #[test]
    fn an_its_thunk_is_priced_against_the_plain_indirect_call_on_an_intel_kernel_that_runs_it() {
        let mut doc = run_with(&[("its-indirect-thunk", 10.0), ("indirect-call", 4.0)]);
        let its = |doc: &RunDocument| {
            of(doc)
                .prices
                .into_iter()
                .find(|p| p.variant == "its-indirect-thunk")
        };
        // The AMD guest: ITS is not in force, and no price is claimed.
        assert!(its(&doc).is_none());
        doc.inventory.cpu.vendor = "GenuineIntel".into();
        doc.inventory.cpu.vulnerabilities.insert(
            "indirect_target_selection".into(),
            "Mitigation: Aligned branch/return thunks".into(),
        );
        let price = its(&doc).expect("priced on an Intel kernel with ITS thunks");
        let f = price.price_ns.unwrap();
        assert!((f.value - 6.0).abs() < 1e-6, "{f:?}");
        // Two rows less one baseline: their half-widths (5% each) in
        // quadrature, a bound for errors that covary positively.
        assert!(
            (f.half_width().unwrap() - 0.5f64.hypot(0.2)).abs() < 1e-6,
            "{f:?}"
        );
        assert_eq!(price.occurs, Occurs::PerKernelIndirectCall);
        // Without its reference row, it says so.
        doc.results.retain(|r| r.variant != "indirect-call");
        let unpriced = its(&doc).unwrap().unpriced.unwrap();
        assert!(unpriced.contains("indirect-call"), "{unpriced}");
    }

    #[test]
    fn a_sequence_the_run_did_not_replay_says_how_to_price_it() {
        let k = of(&run_with(&[]));
        let untrain = k
            .prices
            .iter()
            .find(|p| p.variant == "srso-untrain")
            .unwrap();
        assert!(untrain.price_ns.is_none() && untrain.getpid_floor_ns.is_none());
        assert!(
            untrain
                .unpriced
                .as_deref()
                .unwrap()
                .contains("--probe kernel/sequences")
        );
        assert!(k.getpid_floor_ns.is_none());
    }
}
