//! What the hooks that changed between two runs cost one syscall: where
//! the hooks on the syscall path are all that mitbench records changed,
//! the null syscall's change is theirs (a trace event, an audit rule or a
//! BPF program adds its cost to every crossing). Read from the row's own
//! comparison, so its interval counts what that counts: the forks, the
//! runs and the history's between-run noise.

use super::RowChange;
use super::inventory_diff::InventoryChange;
use crate::mitigations::crossing::SYSCALL;
pub use crate::store::results::answered::HookToll;

/// The toll of the hook changes among `inventory`, read from the null
/// syscall's row of `rows`; None where something besides the hooks changed
/// (its share of the change could not be told apart), no hook changed, or
/// the row was not compared.
pub fn of(rows: &[RowChange], inventory: &[InventoryChange]) -> Option<HookToll> {
    let only_hooks = inventory.iter().all(|c| c.hook().is_some());
    if inventory.is_empty() || !only_hooks {
        return None;
    }
    let row = rows
        .iter()
        .find(|r| r.key.id == SYSCALL.probe && r.key.variant == SYSCALL.variant)?;
    let of_old = |old: f64| row.change_pct.map(|pct| old * pct / 100.0);
    Some(HookToll {
        changed: inventory
            .iter()
            .filter_map(InventoryChange::hook_change)
            .collect(),
        row: format!("{} {}", SYSCALL.probe, SYSCALL.variant),
        ticks: of_old(row.old_ticks),
        ns: of_old(row.old_ns),
        pct: row.change_pct,
    })
}
