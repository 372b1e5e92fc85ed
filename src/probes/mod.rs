//! Probes: each declares what it measures and hands the harness closures.
//! The registry lists them in report order.

mod cflags;
mod corunner;
mod doorbell;
pub mod failures;
mod floor;
mod indirect;
mod memory;
mod os;
pub mod section;
pub mod syscall;
pub mod teardown;
pub mod thread;
pub mod wake_latency;

use crate::harness::{Harness, Measurement};
use serde::Serialize;
use serde_json::Value;

/// A variant name built at run time ("retpoline/B=64"), kept for the life
/// of the process as variant names are `&'static str`; each distinct name is
/// stored once however often a probe describes itself.
pub fn static_name(name: String) -> &'static str {
    static NAMES: std::sync::Mutex<std::collections::BTreeSet<&'static str>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let mut names = NAMES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(&known) = names.get(name.as_str()) {
        return known;
    }
    let kept: &'static str = Box::leak(name.into_boxed_str());
    names.insert(kept);
    kept
}

/// A family groups probes that reproduce one seed document.
#[derive(Debug, Clone, Copy, Serialize)]
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
];

#[derive(Debug, Clone, Serialize)]
pub struct Variant {
    pub name: &'static str,
    /// The variant the probe's other variants are compared with.
    pub baseline: bool,
    pub params: Value,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProbeInfo {
    pub id: &'static str,
    pub family: &'static str,
    /// The seed document this probe reflects ("all": every seed pays it).
    pub seed: &'static str,
    pub summary: &'static str,
    /// What one item is; costs are per item.
    pub item: &'static str,
    pub requirements: Vec<&'static str>,
    pub variants: Vec<Variant>,
    pub derived: Option<Derived>,
}

/// Figures the report derives from a probe's medians.
#[derive(Debug, Clone, Serialize)]
pub struct Derived {
    /// Items per second, in millions, under this unit name (e.g. "Mpps").
    pub rate_unit: &'static str,
    /// The variant whose extra cost over `reference` is the toll; every
    /// variant is reported with the share of that toll it avoids.
    pub toll_variant: &'static str,
    pub reference_variant: &'static str,
}

impl ProbeInfo {
    pub fn baseline(&self) -> Option<&Variant> {
        self.variants.iter().find(|v| v.baseline)
    }
}

/// The CPUs a run may use.
#[derive(Debug, Clone)]
pub struct Placement {
    /// Where the measuring thread is pinned.
    pub cpu: usize,
    pub allowed: Vec<usize>,
}

impl Placement {
    /// A CPU for a co-runner that must not share the measuring CPU.
    pub fn other_cpu(&self) -> Option<usize> {
        self.allowed.iter().copied().find(|&c| c != self.cpu)
    }

    /// That CPU, or why a probe needing one cannot run here.
    pub fn second_cpu(&self) -> Result<usize, String> {
        self.other_cpu()
            .ok_or_else(|| format!("needs a second CPU; only CPU {} is allowed", self.cpu))
    }
}

/// A successful measurement and the facts needed to read it.
#[derive(Debug, Clone)]
pub struct Measured {
    pub measurement: Measurement,
    /// Every CPU the measured work ran on, measuring thread first.
    pub cpus: Vec<usize>,
    /// What the reader should know about this measurement.
    pub notes: Vec<String>,
    /// Figures measured beside the cost per item (a co-runner's latency,
    /// yields per item), each named with its unit.
    pub figures: Vec<Figure>,
}

/// A figure a probe measured beside the harness's cost per item.
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    pub name: &'static str,
    pub value: f64,
    pub unit: &'static str,
}

impl Figure {
    pub fn new(name: &'static str, value: f64, unit: &'static str) -> Figure {
        Figure { name, value, unit }
    }
}

#[derive(Debug, Clone)]
pub enum Outcome {
    Measured(Box<Measured>),
    Unsupported(String),
    Interrupted,
}

impl Outcome {
    /// The usual outcome: a harness result on the measuring CPU alone.
    pub fn on_cpus(measurement: Option<Measurement>, cpus: Vec<usize>) -> Outcome {
        match measurement {
            Some(measurement) => Outcome::Measured(Box::new(Measured {
                measurement,
                cpus,
                notes: Vec::new(),
                figures: Vec::new(),
            })),
            None => Outcome::Interrupted,
        }
    }
}

/// Measures on a thread of its own, pinned to `cpu`, for probes that change
/// per-task state (a seccomp filter, a speculation control): the state ends
/// with the thread, and the process that goes on measuring never carries
/// it. `work` returns the measurement (None when interrupted) and notes, or
/// why it could not run.
pub fn measure_in_own_thread<W>(cpu: usize, work: W) -> Outcome
where
    W: FnOnce() -> Result<(Option<Measurement>, Vec<String>), String> + Send,
{
    let result = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                crate::harness::affinity::pin_current_thread_forever(cpu)
                    .map_err(|e| format!("pinning to CPU {cpu} failed: {e}"))?;
                work()
            })
            .join()
            .unwrap_or_else(|_| Err("the measuring thread panicked".into()))
    });
    match result {
        Ok((Some(measurement), notes)) => Outcome::Measured(Box::new(Measured {
            measurement,
            cpus: vec![cpu],
            notes,
            figures: Vec::new(),
        })),
        Ok((None, _)) => Outcome::Interrupted,
        Err(reason) => Outcome::Unsupported(reason),
    }
}

pub trait Probe: Sync {
    fn info(&self) -> ProbeInfo;

    /// Whether this machine can run the variant, and if not, why.
    fn check(&self, _variant: &Variant, _placement: &Placement) -> Result<(), String> {
        Ok(())
    }

    /// Measures one variant that `check` accepted. The calling thread is
    /// already pinned to `placement.cpu`; anything the probe starts it also
    /// ends.
    fn measure(&self, variant: &Variant, placement: &Placement, harness: &Harness) -> Outcome;

    /// Checks, then measures: what callers use.
    fn run(&self, variant: &Variant, placement: &Placement, harness: &Harness) -> Outcome {
        match self.check(variant, placement) {
            Ok(()) => self.measure(variant, placement, harness),
            Err(reason) => Outcome::Unsupported(reason),
        }
    }
}

/// The C compiler of the cflags family, for the run's build identity.
pub fn cflags_compiler() -> &'static str {
    cflags::compiler()
}

pub fn registry() -> Vec<&'static dyn Probe> {
    let mut probes: Vec<&'static dyn Probe> = vec![&floor::Floor];
    probes.extend(os::probes());
    probes.extend(indirect::probes());
    probes.extend(cflags::probes());
    probes.extend(memory::probes());
    probes.extend(syscall::probes());
    probes.extend(thread::probes());
    probes.extend(section::probes());
    probes.extend(teardown::probes());
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
pub fn select(patterns: &[String]) -> Result<Vec<&'static dyn Probe>, NoMatch> {
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
    let ids: Vec<&'static str> = probes.iter().map(|p| p.info().id).collect();
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
        .filter(|p| matchers.iter().any(|(_, m)| m.matches(p.info().id)))
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

/// One probe as `mitbench list` shows it: its declaration, and per variant
/// whether this machine can run it.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    #[serde(flatten)]
    pub info: ProbeInfo,
    /// Variant name -> null when supported, else why not.
    pub unsupported: std::collections::BTreeMap<&'static str, Option<String>>,
}

pub fn listing(placement: &Placement) -> Vec<Listed> {
    let timer =
        (!crate::harness::tsc::rdtscp_available()).then(|| "this CPU has no rdtscp".to_string());
    registry()
        .into_iter()
        .map(|probe| {
            let info = probe.info();
            let unsupported = info
                .variants
                .iter()
                .map(|v| {
                    (
                        v.name,
                        timer.clone().or_else(|| probe.check(v, placement).err()),
                    )
                })
                .collect();
            Listed { info, unsupported }
        })
        .collect()
}
