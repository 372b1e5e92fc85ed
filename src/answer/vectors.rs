//! What each attack vector costs here: for every vector the command line
//! leaves enabled, the mitigations in force it keeps, those `no_<vector>`
//! would turn off, and their price from the run's replay of the kernel's
//! sequences ([`super::prices`]): a floor per crossing and a price per
//! context switch. Replayed, never measured: only a boot with the vector
//! off measures what it saves (`mitbench plan` names that boot).

use super::prices::{KernelPrice, KernelPrices, sum_of_one_run};
use crate::analysis::figure::Figure;
use crate::inventory::Inventory;
use crate::mitigations::sequences::Occurs;
use crate::mitigations::vectors::{self, Controls, Vector};
use crate::mitigations::{self, Mitigation};
use serde::Serialize;

/// The vector controls of the running kernel and what each costs.
#[derive(Debug, Clone, Serialize)]
pub struct AttackVectors {
    pub controls: Controls,
    /// Whether this machine can run guests, which makes the guest vectors
    /// relevant (the inventory's `facilities.guests`).
    pub guests: String,
    pub vectors: Vec<VectorCost>,
    /// Mitigations in force that no enabled vector keeps: held by their
    /// own option (`spectre_v2=retpoline`), or outside the vector controls.
    pub unkept: Vec<&'static str>,
    /// On a guest whose run priced a VM exit: its host's own guest_host
    /// mitigations run on each exit, set by the host's boot, not this
    /// kernel's command line (false, and absent, elsewhere).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pays_its_host: bool,
}

/// One enabled vector, priced.
#[derive(Debug, Clone, Serialize)]
pub struct VectorCost {
    pub vector: Vector,
    /// What it protects, so that the price is not read as advice.
    pub protects: &'static str,
    /// The mitigations in force it needs (the catalogue's names).
    pub keeps: Vec<&'static str>,
    /// Those `no_<vector>` would turn off here.
    pub turns_off: Vec<&'static str>,
    /// What of those a vector still enabled keeps in a weaker mode
    /// (`vectors::WEAKER_MODES`: SRSO's microcode-only mode).
    pub leaves: Vec<&'static str>,
    /// The part of one null syscall they take at least, ns (floors of
    /// sequences run a known number of times per crossing).
    pub getpid_floor_ns: Option<Figure>,
    /// What they add to a context switch, ns.
    pub per_switch_ns: Option<Figure>,
    /// "replayed": the figures price the kernel's sequences in user mode.
    pub source: &'static str,
    /// Prices per occurrence whose count per crossing is unknown, and
    /// mitigations it would turn off that no row prices, with why.
    pub unpriced: Vec<String>,
}

/// The vectors of `inventory`'s command line, priced by `prices`.
pub fn of(inventory: &Inventory, prices: &KernelPrices) -> AttackVectors {
    let cmdline = &inventory.kernel.cmdline;
    let controls = vectors::read(cmdline, &inventory.kernel.release);
    let in_force = in_force(inventory);
    let vectors = match controls.unavailable {
        Some(_) => Vec::new(),
        None => vectors::kept(&controls, &in_force, cmdline)
            .into_iter()
            .map(|k| priced(k, &controls, prices, inventory))
            .collect(),
    };
    let unkept = in_force
        .iter()
        .filter(|m| {
            !vectors
                .iter()
                .any(|v: &VectorCost| v.keeps.contains(&m.name))
        })
        .map(|m| m.name)
        .collect();
    AttackVectors {
        unkept,
        controls,
        guests: match inventory.facilities.guests.as_str() {
            "" => crate::inventory::UNKNOWN.to_string(),
            g => g.to_string(),
        },
        vectors,
        pays_its_host: false,
    }
}

/// The catalogue's mitigations the vulnerability files say run, once each.
pub fn in_force(inventory: &Inventory) -> Vec<&'static Mitigation> {
    let mut found: Vec<&'static Mitigation> = Vec::new();
    for f in mitigations::kernel::in_force(&inventory.cpu.vulnerabilities) {
        for m in f.mitigations.iter().map(|id| id.entry()) {
            if !found.iter().any(|known| known.id == m.id) {
                found.push(m);
            }
        }
    }
    found
}

fn priced(
    kept: vectors::Kept,
    controls: &Controls,
    prices: &KernelPrices,
    inventory: &Inventory,
) -> VectorCost {
    let names = |ms: &[&'static Mitigation]| ms.iter().map(|m| m.name).collect::<Vec<_>>();
    let its: Vec<&KernelPrice> = prices
        .prices
        .iter()
        .filter(|p| kept.turns_off.iter().any(|m| m.id == p.id))
        .collect();
    let getpid_floor_ns = sum_of_one_run(its.iter().filter_map(|p| p.getpid_floor_ns));
    let per_switch_ns = sum_of_one_run(
        its.iter()
            .filter(|p| p.occurs == Occurs::PerSwitch)
            .filter_map(|p| p.price_ns),
    );
    let mut unpriced: Vec<String> = its
        .iter()
        .filter(|p| p.occurs.per_syscall().is_none())
        .filter_map(|p| {
            let price = p.price_ns?;
            Some(format!(
                "{}: +{:.3} ns {}, how often a crossing runs it unknown",
                p.mitigation,
                price.value,
                p.occurs.describe()
            ))
        })
        .collect();
    for m in &kept.turns_off {
        if !its.iter().any(|p| p.id == m.id && p.price_ns.is_some()) {
            let why = prices
                .unreplayed
                .iter()
                .find(|u| u.id == m.id)
                .map(|u| u.why.as_str())
                .or_else(|| {
                    let not_run = prices.not_run.iter().find(|n| n.id == m.id);
                    not_run.map(|n| n.why.as_str())
                })
                .unwrap_or("no sequence of the price list replays it");
            unpriced.push(format!("{}: {why}", m.name));
        }
    }
    if kept.vector == Vector::CrossThread {
        unpriced.push(format!(
            "its mitigations act between the hyperthreads of a core (STIBP, SMT off under \
             auto,nosmt): SMT active here: {}",
            inventory.cpu.smt_active
        ));
    }
    VectorCost {
        vector: kept.vector,
        protects: kept.vector.protects(),
        keeps: names(&kept.keeps),
        turns_off: names(&kept.turns_off),
        leaves: vectors::left_weaker(
            controls,
            &kept.turns_off,
            kept.vector,
            &inventory.cpu.vulnerabilities,
        ),
        getpid_floor_ns,
        per_switch_ns,
        source: "replayed",
        unpriced,
    }
}
