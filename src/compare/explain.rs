//! Which mitigation a change between two runs is consistent with: each
//! changed row set against the inventory changes whose mitigations
//! (`crate::mitigations`) tax its probe, and the in-run A/B rows that
//! attribute by construction. "Consistent with", never proof.

use super::{Explanation, InRun, InventoryChange, RowChange, Verdict};
use crate::measure::probes::Role;
use crate::mitigations::{switched_by_change, taxes};
use crate::store::results::RunDocument;
/// Marks each changed row with the mitigations an inventory change can
/// explain it by, groups them, and lists the rows nothing explains.
pub(super) fn explain(
    rows: &mut [RowChange],
    inventory: &[InventoryChange],
) -> (Vec<Explanation>, Vec<String>) {
    let mut explained: Vec<Explanation> = Vec::new();
    let mut unexplained = Vec::new();
    let broad: Vec<&InventoryChange> = inventory.iter().filter(|c| c.moves_any_row).collect();
    for row in rows.iter_mut().filter(|r| r.verdict != Verdict::Same) {
        let name = format!("{} {}", row.key.id, row.key.variant);
        for change in inventory {
            for m in switched_by_change(&change.key, &change.old, &change.new) {
                if !taxes(m, &row.key.id) {
                    continue;
                }
                if !row.consistent_with.iter().any(|c| c == m.name) {
                    row.consistent_with.push(m.name.to_string());
                }
                let entry = match explained.iter_mut().find(|e| e.mitigation == m.name) {
                    Some(entry) => entry,
                    None => {
                        explained.push(Explanation {
                            mitigation: m.name.to_string(),
                            why: m.why.to_string(),
                            source: m.source.to_string(),
                            because: Vec::new(),
                            rows: Vec::new(),
                        });
                        explained.last_mut().expect("just pushed")
                    }
                };
                if !entry.because.contains(&change.key) {
                    entry.because.push(change.key.clone());
                }
                if !entry.rows.contains(&name) {
                    entry.rows.push(name.clone());
                }
            }
        }
        if row.consistent_with.is_empty() {
            for change in &broad {
                row.consistent_with.push(change.key.clone());
            }
        }
        if row.consistent_with.is_empty()
            && let Some(host) = on_the_hosts_side(row)
        {
            row.consistent_with.push(host.mitigation.clone());
            explained.push(host);
        }
        if row.consistent_with.is_empty() {
            unexplained.push(name);
        }
    }
    (explained, unexplained)
}

/// A guest's VM exit that moved while nothing the guest records did: its
/// price is the host's (its guest_host mitigations, its hypervisor, its
/// load), so the change is named the host's, with its size per exit.
fn on_the_hosts_side(row: &RowChange) -> Option<Explanation> {
    use crate::measure::probes::guest::{EXIT_PROBE, EXITING};
    if row.key.id != EXIT_PROBE || row.key.variant != EXITING {
        return None;
    }
    Some(Explanation {
        mitigation: format!(
            "the host's side: {:+.0} ticks an exit",
            row.new_ticks - row.old_ticks
        ),
        why: "a VM exit's round trip is the host's: its guest_host mitigations (IBPB or RSB \
              filling on exit, VERW or an L1D flush before entry), its hypervisor's version \
              and its load; the guest's inventory did not change"
            .to_string(),
        source: "docs/the-guest-boundary.md".to_string(),
        because: vec!["the VM exit's price".to_string()],
        rows: vec![format!("{} {}", row.key.id, row.key.variant)],
    })
}

/// Probes (globs) whose compared variants are the same code with one
/// thing changed, in one run: attributed by construction.
pub const IN_RUN_AB: &[&str] = &["cflags/*", "syscall/specctrl-*", "syscall/seccomp"];

/// The new run's compared variants of probes that attribute by
/// construction: the same code with one thing changed, in one run.
pub(super) fn in_run(doc: &RunDocument) -> Vec<InRun> {
    doc.results
        .iter()
        .filter(|r| {
            IN_RUN_AB
                .iter()
                .any(|glob| wildmatch::WildMatch::new(glob).matches(&r.id))
        })
        .filter(|r| r.role == Role::Compared)
        .filter_map(|r| {
            let vs = r.vs_baseline.as_ref()?;
            Some(InRun {
                key: crate::store::results::RowKey::of(r),
                baseline: r.baseline.clone()?,
                ratio: vs.ratio,
            })
        })
        .collect()
}
