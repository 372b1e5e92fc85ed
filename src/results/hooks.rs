//! The hooks on the syscall path as a run's answer states them: those in
//! force (`inventory::hooks::OnPath`) and, where the history held a run of
//! this boot without them, what they cost one syscall (compare reads it:
//! `compare::hook_toll`).

use crate::analysis::figure::Figure;
use serde::{Deserialize, Serialize};

/// The price of the hook changes between two runs, per syscall.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookToll {
    /// The hook changes, "trace events enabled: none -> raw_syscalls:sys_enter".
    pub changed: Vec<String>,
    /// "probe variant" of the row it is read from: the raw null syscall.
    pub row: String,
    /// What one syscall paid more on the new side than on the old, in
    /// ticks and ns, and as percent of the old, each with the row's
    /// change interval.
    pub ticks: Figure,
    pub ns: Figure,
    pub pct: Figure,
}

impl HookToll {
    /// "+434 ticks [+410, +458] (+161% [+152, +170]) per syscall".
    pub fn priced(&self) -> String {
        let signed = |x: f64| format!("{x:+.0}");
        let interval = |f: &Figure| match f.ci95 {
            Some([lo, hi]) => format!(" [{}, {}]", signed(lo), signed(hi)),
            None => String::new(),
        };
        format!(
            "{} ticks{} ({}%{}) per syscall",
            signed(self.ticks.value),
            interval(&self.ticks),
            signed(self.pct.value),
            interval(&self.pct)
        )
    }
}
