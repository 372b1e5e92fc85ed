//! The toll a crossing leaves in user space: what a syscall made from
//! inside a function pays beyond the raw instruction, per syscall, from the
//! `os/syscall-return` rows (the in-function variant less the inline one,
//! both against the plain call and return they were measured beside).

use super::RunDocument;
use super::floors::{added, less};
use crate::analysis::figure::Figure;
use serde::Serialize;

/// The probe that measures it.
pub const PROBE: &str = "os/syscall-return";

/// The syscalls it measures, by the variants' prefix.
pub const SYSCALLS: &[&str] = &["getpid", "getuid", "getppid", "close-bad-fd"];

/// One syscall's return toll.
#[derive(Debug, Clone, Serialize)]
pub struct ReturnToll {
    pub syscall: &'static str,
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
    if doc.record(PROBE, "call+ret").is_none() {
        return Vec::new();
    }
    let mhz = doc.inventory.tsc_mhz;
    SYSCALLS
        .iter()
        .map(|&syscall| {
            let row = |shape: &str| {
                let variant = format!("{syscall}/{shape}");
                let r = doc
                    .record(PROBE, &variant)
                    .ok_or_else(|| format!("{PROBE} {variant} was not measured"))?;
                added(r, mhz)
            };
            let extra = row("in-fn").and_then(|f| Ok(less(f, row("inline")?)));
            ReturnToll {
                syscall,
                unmeasured: extra.as_ref().err().cloned(),
                extra_ns: extra.ok(),
            }
        })
        .collect()
}
