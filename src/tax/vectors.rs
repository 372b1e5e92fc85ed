//! A workload's crossing time split by attack vector: for each vector the
//! command line leaves enabled, the syscalls counted times the floor the
//! mitigations `no_<vector>` would turn off take of one (replayed by the
//! tolls' run, `answer::vectors`), and the context switches counted times
//! what they add to one. A floor and a replay, never a measured part: a
//! boot with the vector off measures that (`mitbench plan`).

use super::count::Counted;
use crate::analysis::figure::Figure;
use crate::answer::prices::{self, sum_of_one_run};
use crate::mitigations::crossing::Crossing;
use crate::mitigations::vectors::Vector;
use crate::store::results::RunDocument;
use serde::Serialize;

/// One enabled vector's part of the workload's CPU time.
#[derive(Debug, Clone, Serialize)]
pub struct VectorShare {
    pub vector: Vector,
    /// The mitigations in force `no_<vector>` would turn off.
    pub turns_off: Vec<&'static str>,
    /// Their time in the workload's counted crossings, ms, at least
    /// (floors per syscall, prices per switch), with the 95% interval.
    pub ms: Option<Figure>,
    /// The same as a percent of the CPU time the shares are of.
    pub share_pct: Option<Figure>,
    /// What it stands on, or why there is none.
    pub from: String,
}

/// Each enabled vector of the tolls' boot (`prices`: the tolls' run's
/// price list), priced over `counted`'s syscalls and switches, as shares
/// of `cpu_s`.
pub fn per_vector(
    tolls: &RunDocument,
    prices: &prices::KernelPrices,
    counted: &Counted,
    cpu_s: f64,
) -> Vec<VectorShare> {
    let (syscalls, switches) = (
        counted.count_of(Crossing::Syscall),
        counted.count_of(Crossing::ContextSwitch),
    );
    let vectors = crate::answer::vectors::of(&tolls.inventory, prices);
    vectors
        .vectors
        .into_iter()
        .map(|v| {
            // Each part: its count times its price per crossing, ns -> ms.
            let parts = [(syscalls, v.getpid_floor_ns), (switches, v.per_switch_ns)];
            let ms = sum_of_one_run(parts.iter().filter_map(|(n, price)| {
                let (n, f) = ((*n)? as f64, (*price)?);
                Some(f.map(|ns| super::share::total_ms(n, ns)))
            }));
            let share_pct = ms
                .filter(|_| cpu_s > 0.0)
                .map(|f| f.map(|ms| super::share::pct_of_cpu(ms, cpu_s)));
            let from = match (&ms, v.turns_off.is_empty()) {
                (_, true) => "turns nothing in force off alone".to_string(),
                (None, false) => format!(
                    "not priced: the tolls' run priced none of {} over a counted crossing",
                    v.turns_off.join(", ")
                ),
                (Some(_), false) => format!(
                    "syscalls x the floor of getpid, switches x the price per switch, \
                     replayed by {}",
                    crate::mitigations::sequences::PROBE
                ),
            };
            VectorShare {
                vector: v.vector,
                turns_off: v.turns_off,
                ms,
                share_pct,
                from,
            }
        })
        .collect()
}
