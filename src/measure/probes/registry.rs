//! Every probe, in report order: the families they belong to, selection by
//! id, glob or family, and the listing `mitbench list` prints.

use super::{AnyProbe, Placement, Unsupported, Variant};
use super::{
    Declaration, cflags, floor, guest, indirect, kernel, memory, os, section, syscall, teardown,
    thread,
};
use serde::{Deserialize, Serialize};

/// `items` grouped by their probe family, in the families' order, families
/// without an item left out: the sections of every rendering.
pub fn by_family<T>(
    items: &[T],
    family_of: impl Fn(&T) -> &str,
) -> Vec<(&'static Family, Vec<&T>)> {
    FAMILIES
        .iter()
        .map(|family| {
            let members: Vec<&T> = items
                .iter()
                .filter(|item| family_of(item) == family.name)
                .collect();
            (family, members)
        })
        .filter(|(_, members)| !members.is_empty())
        .collect()
}

/// A family groups probes that reproduce one seed document.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Family {
    pub name: &'static str,
    pub title: &'static str,
}

pub const FAMILIES: &[Family] = &[
    Family {
        name: "harness",
        title: "harness self-check: what an empty item costs after the fit",
    },
    Family {
        name: "os",
        title: "OS crossings: syscalls, the vDSO, context switches, thread and process creation",
    },
    Family {
        name: "kernel",
        title: "the kernel's own mitigation sequences, replayed in user mode: each one's price",
    },
    Family {
        name: "indirect",
        title: "indirect calls: retpoline and return thunks, the INDIRECT_CALL wrapper, barriers, bulking",
    },
    Family {
        name: "cflags",
        title: "compiler hardening: the same C kernels built with each flag set",
    },
    Family {
        name: "memory",
        title: "page faults, page-table changes, TLB flushes and shootdowns, range batching",
    },
    Family {
        name: "syscall",
        title: "kernel entry: N operations per crossing with write, writev, io_uring",
    },
    Family {
        name: "thread",
        title: "thread churn with a per-thread signal channel, up to TLS 1.3",
    },
    Family {
        name: "section",
        title: "crypto per byte; long sections chunked, yielding never, always or when a task waits",
    },
    Family {
        name: "teardown",
        title: "releasing a large index under a lock: every K entries or when a lookup waits",
    },
    Family {
        name: "guest",
        title: "the guest/host boundary: what a VM exit costs this guest",
    },
];

/// The C compiler of the cflags family, for the run's build identity.
pub fn cflags_compiler() -> &'static str {
    cflags::compiler()
}

pub fn registry() -> Vec<&'static dyn AnyProbe> {
    let mut probes: Vec<&'static dyn AnyProbe> = vec![&floor::Floor];
    probes.extend(os::probes());
    probes.extend(kernel::probes());
    probes.extend(indirect::probes());
    probes.extend(cflags::probes());
    probes.extend(memory::probes());
    probes.extend(syscall::probes());
    probes.extend(thread::probes());
    probes.extend(section::probes());
    probes.extend(teardown::probes());
    probes.push(&guest::Exit);
    probes
}

/// A pattern that matched no probe, with the ids closest to it.
#[derive(Debug, Clone)]
pub struct NoMatch {
    pub pattern: String,
    pub closest: Vec<&'static str>,
}

/// The probes matching any pattern (a probe id, a glob such as `os/*`, or a
/// bare family name), in registry order; all probes when none is given.
pub fn select(patterns: &[String]) -> Result<Vec<&'static dyn AnyProbe>, NoMatch> {
    let probes = registry();
    if patterns.is_empty() {
        return Ok(probes);
    }
    let matchers: Vec<(String, wildmatch::WildMatch)> = patterns
        .iter()
        .map(|p| {
            let glob = if FAMILIES.iter().any(|f| f.name == p) {
                format!("{p}/*")
            } else {
                p.clone()
            };
            (p.clone(), wildmatch::WildMatch::new(&glob))
        })
        .collect();
    let ids: Vec<&'static str> = probes.iter().map(|p| p.declaration().id).collect();
    if let Some((pattern, _)) = matchers
        .iter()
        .find(|(_, m)| !ids.iter().any(|id| m.matches(id)))
    {
        return Err(NoMatch {
            pattern: pattern.clone(),
            closest: closest(pattern, &ids),
        });
    }
    Ok(probes
        .into_iter()
        .filter(|p| matchers.iter().any(|(_, m)| m.matches(p.declaration().id)))
        .collect())
}

/// Up to three ids most similar to `pattern`, judged against the whole id
/// and against the name after the family, so `getpid` finds `os/getpid`;
/// an id the pattern begins ranks first.
fn closest(pattern: &str, ids: &[&'static str]) -> Vec<&'static str> {
    let similarity = |id: &str| {
        let name = id.split_once('/').map_or(id, |(_, name)| name);
        if id.starts_with(pattern) || name.starts_with(pattern) {
            return 1.0;
        }
        strsim::normalized_damerau_levenshtein(pattern, id)
            .max(strsim::normalized_damerau_levenshtein(pattern, name))
    };
    let mut scored: Vec<(f64, &'static str)> = ids
        .iter()
        .map(|id| (similarity(id), *id))
        .filter(|(score, _)| *score >= 0.6)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().take(3).map(|(_, id)| id).collect()
}

/// One probe as `mitbench list` shows it: its declaration, its variants,
/// and per variant whether this machine can run it.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    #[serde(flatten)]
    pub declaration: Declaration,
    pub variants: Vec<Variant>,
    /// Variant name -> null when supported, else why not.
    pub unsupported: std::collections::BTreeMap<String, Option<Unsupported>>,
}

pub fn listing(placement: &Placement) -> Vec<Listed> {
    let timer = (!crate::measure::harness::tsc::rdtscp_available())
        .then(|| Unsupported::missing("rdtscp", "this CPU has no rdtscp"));
    registry()
        .into_iter()
        .map(|probe| {
            let variants = probe.variants();
            let unsupported = variants
                .iter()
                .map(|v| {
                    let why = timer.clone().or_else(|| probe.check(v, placement).err());
                    (v.name.clone(), why)
                })
                .collect();
            Listed {
                declaration: *probe.declaration(),
                variants,
                unsupported,
            }
        })
        .collect()
}
