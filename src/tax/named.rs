//! Which named mitigations are in force in the tolls `mitbench tax`
//! prices, and the part of a toll an in-run A/B of this machine measured
//! for one. Machine-wide mitigations (the kernel's, from its vulnerability
//! files) are in every crossing and cannot be switched inside one boot: a
//! toll holds them, and only `mitbench compare` against a boot without one
//! separates it. Per-process controls (seccomp filters, speculation
//! controls) are read from the workload's own status; where the tolls' run
//! measured that control on and off, its part is given. Attribution says
//! "consistent with", never more: it comes from the catalogue in
//! [`crate::mitigations`].

use super::TOLLS;
use super::count::Counted;
use crate::analysis::figure::Figure;
use crate::answer::prices::{self, KernelPrice, KernelPrices};
use crate::mitigations::process::{self, INDIRECT_BRANCH, SECCOMP, SSBD};
use crate::mitigations::{self, Id, Mitigation, kernel};
use crate::store::results::RunDocument;
use crate::tax::crossing::Crossing;
use serde::Serialize;

/// One mitigation in force for the workload and the tolls it is part of
/// (the kernel's are [`kernel::InForce`], read from the same files).
#[derive(Debug, Clone, Serialize)]
pub struct Named {
    /// The catalogue's key of the mitigation, and its name.
    pub id: Id,
    pub mitigation: &'static str,
    /// The sysfs vulnerability files it serves (the key of
    /// `summary.in_force`); none for a process control.
    pub vulnerabilities: &'static [&'static str],
    /// The kinds of crossing whose toll it is part of; empty where it
    /// taxes none of the crossings counted (`part_from` says why).
    pub kinds: Vec<Crossing>,
    /// What says it is in force: a vulnerability file's line, or a line of
    /// the workload's /proc status.
    pub evidence: String,
    /// Its part of one crossing, ns, where an in-run A/B measured it here,
    /// with the interval another run's may land in.
    pub part_ns: Option<Figure>,
    /// Which rows measured that part, or why nothing here can.
    pub part_from: String,
    /// The kernel's sequences for it, each priced per occurrence from the
    /// tolls' run (`answer::prices`): floors and prices, not parts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kernel_prices: Vec<KernelPrice>,
}

/// The mitigations in force for a workload with these process `controls`
/// (from its /proc status), with the tolls from `tolls` and their run's
/// price list `prices`.
pub fn in_force(tolls: &RunDocument, prices: &KernelPrices, counted: &Counted) -> Vec<Named> {
    let controls = &counted.controls;
    let kinds: Vec<Crossing> = counted.counts.iter().map(|c| c.kind).collect();
    let mut found = Vec::new();
    for f in kernel::in_force(&tolls.inventory.cpu.vulnerabilities) {
        for m in f.mitigations.iter().map(|id| id.entry()) {
            let kinds = taxed(m, &kinds);
            let from = if kinds.is_empty() {
                format!("none: it taxes no crossing counted here ({})", m.why)
            } else {
                machine_wide()
            };
            let evidence = format!("{}: {}", f.vulnerability, f.line);
            push(&mut found, m, kinds, evidence, None, from);
        }
    }
    for (control, value) in process::on(controls) {
        let evidence = format!("{}: {value}", control.status_line);
        let m = control.mitigation.entry();
        if control.status_line == SECCOMP.status_line {
            push(
                &mut found,
                m,
                // A filter runs on syscalls only; the other tolls' probes
                // make syscalls to cross, but the crossing they price is
                // not one.
                vec![Crossing::Syscall],
                format!("{evidence} (inherited by the workload)"),
                None,
                "a filter cannot be taken off a process, so its part is not separable here; \
                 `--check` measures what one more filter adds"
                    .into(),
            );
        } else if control.status_line == SSBD.status_line {
            let (probe, variant) = SSBD_ROW;
            let part = tolls
                .record(probe, variant)
                .ok_or_else(|| format!("the tolls' run has no {probe} rows"))
                .and_then(|r| prices::added(r, tolls.inventory.tsc_mhz));
            let from = match &part {
                Ok(_) => format!("{probe}: {variant} against unchanged"),
                Err(why) => format!("not measured: {why}"),
            };
            let part = part.ok();
            // What its A/B here measures: a syscall with it on and off.
            push(&mut found, m, vec![Crossing::Syscall], evidence, part, from);
        } else if control.status_line == INDIRECT_BRANCH.status_line {
            // The price list's IBPB is this control's in-run A/B: a round
            // trip to another process with it set, less without, per switch.
            let ibpb = prices.prices.iter().find(|p| p.id == m.id);
            let part = ibpb.and_then(|p| p.price_ns);
            let from = match ibpb {
                Some(p) if part.is_some() => format!(
                    "per switch of address space: {}: {} against unchanged, halved",
                    p.probe, p.variant
                ),
                Some(p) => format!("not measured: {}", p.unpriced.as_deref().unwrap_or("")),
                None => "not measured: the tolls' kernel offers no IBPB on request".into(),
            };
            push(&mut found, m, taxed(m, &kinds), evidence, part, from);
        }
    }
    for named in &mut found {
        named.kernel_prices = prices
            .prices
            .iter()
            .filter(|p| p.id == named.id)
            .cloned()
            .collect();
    }
    found
}

fn machine_wide() -> String {
    "machine-wide: only `mitbench compare` with a boot without it separates it".into()
}

/// The kinds of crossing counted (`kinds`) whose toll's probe `m` taxes.
fn taxed(m: &Mitigation, kinds: &[Crossing]) -> Vec<Crossing> {
    TOLLS
        .iter()
        .filter(|t| kinds.contains(&t.kind) && mitigations::taxes(m, t.probe))
        .map(|t| t.kind)
        .collect()
}

/// Adds `m`, in the tolls of `kinds`; one entry per mitigation, the first
/// evidence kept and the others appended, a measured part kept.
fn push(
    found: &mut Vec<Named>,
    m: &'static Mitigation,
    kinds: Vec<Crossing>,
    evidence: String,
    part_ns: Option<Figure>,
    part_from: String,
) {
    match found.iter_mut().find(|f| f.id == m.id) {
        Some(seen) => {
            seen.evidence.push_str(&format!("; {evidence}"));
            // A part measured here says more than "machine-wide".
            if seen.part_ns.is_none() && part_ns.is_some() {
                (seen.part_ns, seen.part_from) = (part_ns, part_from);
            }
        }
        None => found.push(Named {
            id: m.id,
            mitigation: m.name,
            vulnerabilities: m.files,
            kinds,
            evidence,
            part_ns,
            part_from,
            kernel_prices: Vec::new(),
        }),
    }
}

/// The in-run A/B row that measures SSBD's part of a syscall: (probe,
/// variant), checked against the registry by tests/suite/store/results/names.rs.
pub const SSBD_ROW: (&str, &str) = ("syscall/specctrl-getpid", "store_bypass=disable");

#[cfg(test)]
mod tests {
    use super::*;

    /// As `in_force`, with the price list of the tolls' own run.
    fn in_force_here(tolls: &RunDocument, counted: &Counted) -> Vec<Named> {
        in_force(tolls, &prices::of(tolls), counted)
    }

    fn fixture() -> RunDocument {
        crate::store::results::load::document_from_str(
            include_str!("../../tests/fixtures/run-a.json"),
            "run-a.json",
        )
        .unwrap()
    }

    /// A workload of syscalls and context switches under `controls`.
    fn counted(controls: &[(&str, &str)]) -> Counted {
        let count = |kind| super::super::count::Count {
            kind,
            source: "a test".into(),
            count: Some(10),
            unsupported: None,
        };
        Counted::of(
            vec![count(Crossing::Syscall), count(Crossing::ContextSwitch)],
            crate::mitigations::lines_of(controls),
        )
    }

    #[test]
    fn the_workloads_own_controls_are_named_with_the_tolls_they_are_in() {
        let controls = counted(&[
            ("Seccomp_filters", "2"),
            ("Speculation_Store_Bypass", "thread force mitigated"),
            ("SpeculationIndirectBranch", "conditional force disabled"),
        ]);
        let found = in_force_here(&fixture(), &controls);
        let get = |id: Id| found.iter().find(|f| f.id == id);
        let seccomp = get(Id::SeccompFilters).expect("seccomp named");
        assert_eq!(seccomp.kinds, [Crossing::Syscall]);
        assert!(seccomp.part_ns.is_none());
        let ibpb = get(Id::Ibpb).expect("IBPB named");
        assert!(ibpb.kinds.contains(&Crossing::ContextSwitch));
        assert!(ibpb.evidence.contains("conditional force disabled"));
        let ssbd = get(Id::Ssbd).expect("SSBD named");
        assert_eq!(ssbd.kinds, [Crossing::Syscall]);
        // Not in force: nothing said of it.
        let quiet = counted(&[("Seccomp_filters", "0")]);
        let machine_only = in_force_here(&fixture(), &quiet);
        assert!(
            machine_only
                .iter()
                .all(|f| f.mitigation != "seccomp filters")
        );
        assert!(
            machine_only
                .iter()
                .all(|f| f.part_from.starts_with("machine-wide"))
        );
    }

    #[test]
    fn every_kernel_mitigation_the_summary_lists_is_named_with_its_part_or_why_none() {
        let mut tolls = fixture();
        tolls.inventory.cpu.vulnerabilities = kernel::SWITCHES
            .iter()
            .map(|(file, _)| (file.to_string(), "Mitigation: test".to_string()))
            .collect();
        let listed = crate::answer::summary::of(&tolls).in_force;
        assert_eq!(listed.len(), kernel::SWITCHES.len());
        let found = in_force_here(&tolls, &counted(&[]));
        for f in &listed {
            let named = found
                .iter()
                .find(|n| n.evidence.contains(&format!("{}: ", f.vulnerability)))
                .unwrap_or_else(|| panic!("tax names nothing for {}", f.vulnerability));
            assert!(!named.part_from.is_empty());
        }
        let srbds = found
            .iter()
            .find(|n| n.evidence.starts_with("srbds"))
            .unwrap();
        assert!(srbds.kinds.is_empty() && srbds.part_from.starts_with("none"));
    }

    #[test]
    fn a_kernel_mitigation_carries_its_prices_and_ibpb_on_request_its_a_b() {
        let mut tolls = crate::answer::prices::run_with(&[
            ("srso-untrain", 20.0),
            ("syscall/specctrl-switch indirect_branch=disable", 2000.0),
        ]);
        tolls.inventory.cpu.vulnerabilities.insert(
            "spectre_v2".into(),
            "Mitigation: Retpolines; IBPB: conditional; STIBP: disabled; RSB filling".into(),
        );
        let asked = counted(&[("SpeculationIndirectBranch", "conditional force disabled")]);
        let found = in_force_here(&tolls, &asked);
        let get = |id: Id| found.iter().find(|f| f.id == id).unwrap();
        let srso = get(Id::ReturnThunks);
        let untrain = srso
            .kernel_prices
            .iter()
            .find(|p| p.variant == "srso-untrain");
        assert!((untrain.unwrap().price_ns.unwrap().value - 20.0).abs() < 1e-6);
        // Its part stays unmeasured: a price is a floor, not a part.
        assert!(srso.part_ns.is_none());
        // IBPB on request: the round trip's difference, per switch.
        let ibpb = get(Id::Ibpb);
        assert!(
            (ibpb.part_ns.unwrap().value - 1000.0).abs() < 1e-6,
            "{ibpb:?}"
        );
        assert!(
            ibpb.part_from.contains("syscall/specctrl-switch"),
            "{}",
            ibpb.part_from
        );
    }
}
