//! The toll a crossing leaves in user space: what a syscall made from
//! inside a function pays beyond the raw instruction, per syscall, from the
//! `os/syscall-return` rows (the in-function variant less the inline one,
//! both against the plain call and return they were measured beside), and
//! the same for the other crossings it times (a page fault, a signal, a
//! switch).

use super::RunDocument;
use super::floors::{added, less};
use crate::analysis::figure::Figure;
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
}

/// Each syscall's toll in `doc`; empty where the run did not measure the
/// probe.
pub fn of(doc: &RunDocument) -> Vec<ReturnToll> {
    tolls(doc, SYSCALLS)
}

/// One crossing's toll in `doc` (a syscall's or another's, by its
/// variants' prefix); None where the run did not measure the probe.
pub fn of_one(doc: &RunDocument, crossing: &'static str) -> Option<ReturnToll> {
    tolls(doc, &[crossing]).pop()
}

/// Each other crossing's toll in `doc`, as [`of`].
pub fn of_other_crossings(doc: &RunDocument) -> Vec<ReturnToll> {
    tolls(doc, OTHER_CROSSINGS)
}

fn tolls(doc: &RunDocument, crossings: &[&'static str]) -> Vec<ReturnToll> {
    if doc.record(PROBE, "call+ret").is_none() {
        return Vec::new();
    }
    let mhz = doc.inventory.tsc_mhz;
    crossings
        .iter()
        .map(|&crossing| {
            let row = |shape: &str| {
                let variant = format!("{crossing}/{shape}");
                let r = doc
                    .record(PROBE, &variant)
                    .ok_or_else(|| format!("{PROBE} {variant} was not measured"))?;
                added(r, mhz)
            };
            let extra = row("in-fn").and_then(|f| Ok(less(f, row("inline")?)));
            ReturnToll {
                crossing,
                unmeasured: extra.as_ref().err().cloned(),
                extra_ns: extra.ok(),
            }
        })
        .collect()
}
