//! Probes: each declares what it measures and hands the harness closures.
//! The registry lists them in report order.

/// Declares a probe's variants as a unit enum: each variant's name, the
/// params its JSON carries, and which one is the baseline. `ALL` lists
/// them in report order.
macro_rules! named_configs {
    (
        $(#[$meta:meta])*
        $vis:vis enum $ty:ident (baseline $base:ident) {
            $($variant:ident => $name:literal $params:tt),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        $vis enum $ty {
            $($variant),+
        }

        impl $ty {
            #[allow(dead_code)]
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(match self {
                    $($ty::$variant => $name),+
                })
            }
        }

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let params = match self {
                    $($ty::$variant => serde_json::json!($params)),+
                };
                params.serialize(s)
            }
        }

        impl $crate::probes::Config for $ty {
            fn listed() -> Vec<$ty> {
                $ty::ALL.to_vec()
            }

            fn role(&self) -> $crate::probes::Role {
                $crate::probes::Role::baseline_if(*self == $ty::$base)
            }
        }
    };
}

/// Declares a probe of one instance: its doc comment is its summary, and
/// the id, seed, item and requirements follow the struct's name. A probe of
/// several instances (one per size, sink, ...) holds its declaration in a
/// field and implements `Described` itself.
macro_rules! probe {
    (
        $(#[doc = $doc:literal])+
        $vis:vis struct $name:ident: $id:literal, seed $seed:literal, item $item:literal
        $(, requires [$($requirement:literal),+ $(,)?])? $(,)?;
    ) => {
        $(#[doc = $doc])+
        $vis struct $name;

        impl $crate::probes::Described for $name {
            fn declaration(&self) -> &$crate::probes::Declaration {
                const DECLARATION: $crate::probes::Declaration =
                    $crate::probes::Declaration::new($id, $seed, $item)
                        .summary(concat!($($doc),+))
                        $(.requires(&[$($requirement),+]))?;
                &DECLARATION
            }
        }
    };
}

/// `Described` for a probe of several instances that holds its declaration
/// in a field named `declaration`.
macro_rules! described_by_field {
    ($ty:ty) => {
        impl $crate::probes::Described for $ty {
            fn declaration(&self) -> &$crate::probes::Declaration {
                &self.declaration
            }
        }
    };
}

mod cflags;
mod corunner;
mod doorbell;
pub mod failures;
mod floor;
mod indirect;
pub(crate) mod memory;
mod os;
pub mod section;
pub mod syscall;
pub mod teardown;
pub mod thread;
pub mod wake_latency;

pub use crate::unsupported::{Kind, Unsupported};

use crate::harness::{Harness, Measurement};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

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

/// A probe's static description, declared once as a constant:
/// `Declaration::new(id, seed, item)`, then `.summary(..)`, and
/// `.requires(..)` and `.rate_unit(..)` where they apply. The family is the id's first part.
#[derive(Debug, Clone, Copy)]
pub struct Declaration {
    pub id: &'static str,
    /// The seed document this probe reflects ("all": every seed pays it).
    pub seed: &'static str,
    /// What one item is; costs are per item.
    pub item: &'static str,
    pub summary: &'static str,
    pub requirements: &'static [&'static str],
    /// For probes whose items users count as a rate: items per second, in
    /// millions, under this unit name (e.g. "Mpps").
    pub rate_unit: Option<&'static str>,
}

impl Declaration {
    pub const fn new(id: &'static str, seed: &'static str, item: &'static str) -> Declaration {
        Declaration {
            id,
            seed,
            item,
            summary: "",
            requirements: &[],
            rate_unit: None,
        }
    }

    /// Surrounding white space is dropped, so a doc comment's text serves.
    pub const fn summary(self, summary: &'static str) -> Declaration {
        Declaration {
            summary: summary.trim_ascii(),
            ..self
        }
    }

    /// What the machine must have for some or all variants to run.
    pub const fn requires(self, requirements: &'static [&'static str]) -> Declaration {
        Declaration {
            requirements,
            ..self
        }
    }

    pub const fn rate_unit(self, unit: &'static str) -> Declaration {
        Declaration {
            rate_unit: Some(unit),
            ..self
        }
    }

    pub fn family(&self) -> &'static str {
        self.id
            .split_once('/')
            .map_or(self.id, |(family, _)| family)
    }
}

impl Serialize for Declaration {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = s.serialize_struct("Declaration", 7)?;
        out.serialize_field("id", self.id)?;
        out.serialize_field("family", self.family())?;
        out.serialize_field("seed", self.seed)?;
        out.serialize_field("summary", self.summary)?;
        out.serialize_field("item", self.item)?;
        out.serialize_field("requirements", self.requirements)?;
        out.serialize_field("rate_unit", &self.rate_unit)?;
        out.end()
    }
}

/// What a variant is to the other variants of its probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// The variant the others are compared with; one per probe.
    Baseline,
    /// The baseline's code placed otherwise: how far placement alone moves
    /// the figure, so a difference within it is not attributed.
    LayoutControl,
    /// Compared with the baseline.
    Compared,
}

impl Role {
    /// As the JSON spells it.
    pub fn name(self) -> &'static str {
        match self {
            Role::Baseline => "baseline",
            Role::LayoutControl => "layout-control",
            Role::Compared => "compared",
        }
    }

    /// The baseline where `is_baseline` holds, compared otherwise.
    pub fn baseline_if(is_baseline: bool) -> Role {
        if is_baseline {
            Role::Baseline
        } else {
            Role::Compared
        }
    }
}

/// A variant that belongs to a series of batch sizes: `group` names the
/// series (the variant's name without its batch size), `size` is the
/// items per batch. The amortization fit runs over each series.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Batched {
    pub group: String,
    pub size: u64,
}

impl Batched {
    pub fn new(group: &str, size: u64) -> Batched {
        Batched {
            group: group.to_string(),
            size,
        }
    }
}

/// A variant's place on an axis that trades throughput against a
/// co-runner's wait: `group` names the series, `step` is the work done
/// between two chances for the co-runner to run, in `unit` ("entries",
/// "bytes"). The latency advice runs over each series.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencyStep {
    pub group: String,
    pub step: u64,
    pub unit: String,
}

impl LatencyStep {
    pub fn new(group: &str, step: u64, unit: &str) -> LatencyStep {
        LatencyStep {
            group: group.to_string(),
            step,
            unit: unit.to_string(),
        }
    }
}

/// One variant of a probe, as a value of the probe's own type: its name
/// is its `Display`, its params in the JSON its `Serialize`, and what it is
/// to the others follows from the value.
pub trait Config: fmt::Display + Serialize + PartialEq + Send + Sync {
    /// Every value, in report order, for config types that are a fixed
    /// list; a probe whose variants depend on its own fields lists them in
    /// `Probe::configs` instead.
    fn listed() -> Vec<Self>
    where
        Self: Sized,
    {
        Vec::new()
    }

    fn role(&self) -> Role {
        Role::Compared
    }

    fn batch(&self) -> Option<Batched> {
        None
    }

    /// For items that are a buffer of bytes: its size.
    fn bytes_per_item(&self) -> Option<u64> {
        None
    }

    /// For variants that trade throughput against a co-runner's wait: the
    /// series and the step along it.
    fn latency_step(&self) -> Option<LatencyStep> {
        None
    }

    /// Where this variant is the choice a seed made (bulk 16,
    /// XA_CHECK_SCHED 4096): what the seed called it, to mark on plots.
    fn seed_choice(&self) -> Option<&'static str> {
        None
    }

    /// Whether the variant runs work on a second CPU beside the measuring
    /// one (a cross-CPU partner, a remote thread to shoot down); the
    /// harness then says "needs a second CPU" where there is none, before
    /// the probe's own check.
    fn needs_second_cpu(&self) -> bool {
        false
    }
}

/// The variant whose extra cost over `reference` is the probe's toll;
/// every variant is reported with the share of that toll it avoids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Toll<C> {
    pub toll: C,
    pub reference: C,
}

/// What a probe is, as `mitbench list` and the results describe it.
pub trait Described {
    fn declaration(&self) -> &Declaration;
}

/// What a probe implements: its variants as typed configs, and how to
/// measure one.
pub trait Probe: Described + Sync {
    type Config: Config;

    /// Every variant, in report order.
    fn configs(&self) -> Vec<Self::Config> {
        Self::Config::listed()
    }

    fn toll(&self) -> Option<Toll<Self::Config>> {
        None
    }

    /// Whether this machine can run the variant, and if not, why.
    fn check(&self, _config: &Self::Config, _placement: &Placement) -> Result<(), Unsupported> {
        Ok(())
    }

    /// Measures one variant that `check` accepted. The calling thread is
    /// already pinned to `placement.cpu`; anything the probe starts it also
    /// ends.
    fn measure(&self, config: &Self::Config, placement: &Placement, harness: &Harness) -> Outcome;
}

/// A variant as the scheduler, the results and the listing see it, its
/// config rendered; `index` finds the config again.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Variant {
    #[serde(skip)]
    pub index: usize,
    pub name: String,
    pub role: Role,
    pub params: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch: Option<Batched>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_per_item: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_step: Option<LatencyStep>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed_choice: Option<String>,
}

impl Variant {
    fn of<C: Config>(index: usize, config: &C) -> Variant {
        Variant {
            index,
            name: config.to_string(),
            role: config.role(),
            params: serde_json::to_value(config).unwrap_or(Value::Null),
            batch: config.batch(),
            bytes_per_item: config.bytes_per_item(),
            latency_step: config.latency_step(),
            seed_choice: config.seed_choice().map(str::to_string),
        }
    }

    pub fn is_baseline(&self) -> bool {
        self.role == Role::Baseline
    }
}

/// A probe with its config type erased, as the registry holds it.
pub trait AnyProbe: Sync {
    fn declaration(&self) -> &Declaration;
    fn variants(&self) -> Vec<Variant>;
    /// The toll and reference variants' indices.
    fn toll(&self) -> Option<Toll<usize>>;
    fn check(&self, variant: &Variant, placement: &Placement) -> Result<(), Unsupported>;
    /// Checks, then measures.
    fn run(&self, variant: &Variant, placement: &Placement, harness: &Harness) -> Outcome;
}

impl<P: Probe> AnyProbe for P {
    fn declaration(&self) -> &Declaration {
        Described::declaration(self)
    }

    fn variants(&self) -> Vec<Variant> {
        self.configs()
            .iter()
            .enumerate()
            .map(|(index, config)| Variant::of(index, config))
            .collect()
    }

    fn toll(&self) -> Option<Toll<usize>> {
        let Toll { toll, reference } = Probe::toll(self)?;
        let configs = self.configs();
        let index = |c: &P::Config| configs.iter().position(|x| x == c);
        Some(Toll {
            toll: index(&toll)?,
            reference: index(&reference)?,
        })
    }

    fn check(&self, variant: &Variant, placement: &Placement) -> Result<(), Unsupported> {
        match self.configs().get(variant.index) {
            Some(config) => check_config(self, config, placement),
            None => Err(no_such_variant(variant)),
        }
    }

    fn run(&self, variant: &Variant, placement: &Placement, harness: &Harness) -> Outcome {
        let Some(config) = self.configs().into_iter().nth(variant.index) else {
            return Outcome::Unsupported(no_such_variant(variant));
        };
        match check_config(self, &config, placement) {
            Ok(()) => self.measure(&config, placement, harness),
            Err(why) => Outcome::Unsupported(why),
        }
    }
}

/// What the config declares it needs, then what the probe checks itself.
fn check_config<P: Probe>(
    probe: &P,
    config: &P::Config,
    placement: &Placement,
) -> Result<(), Unsupported> {
    if config.needs_second_cpu() {
        placement.second_cpu()?;
    }
    Probe::check(probe, config, placement)
}

fn no_such_variant(variant: &Variant) -> Unsupported {
    Unsupported::probe_failed(format!("no variant {} at {}", variant.name, variant.index))
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
    pub fn second_cpu(&self) -> Result<usize, Unsupported> {
        self.other_cpu().ok_or_else(|| {
            Unsupported::needs_cpus(
                2,
                self.allowed.len(),
                format!("needs a second CPU; only CPU {} is allowed", self.cpu),
            )
        })
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
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Figure {
    pub name: String,
    pub value: f64,
    pub unit: String,
    /// In a record: the 95% interval of the median over rounds, from five
    /// rounds on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<[f64; 2]>,
    /// What a reader of the results may use the figure for beyond showing it.
    #[serde(default, skip_serializing_if = "FigureRole::is_plain")]
    pub role: FigureRole,
}

/// What a figure is to the results beyond its name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FigureRole {
    #[default]
    Plain,
    /// The 99th percentile of how long a co-runner on the measured CPU
    /// waited for it, in µs: what the latency advice reads.
    CoRunnerWaitP99,
}

impl FigureRole {
    fn is_plain(&self) -> bool {
        *self == FigureRole::Plain
    }
}

impl Figure {
    pub fn new(name: &str, value: f64, unit: &str) -> Figure {
        Figure {
            name: name.to_string(),
            value,
            unit: unit.to_string(),
            ci95: None,
            role: FigureRole::Plain,
        }
    }

    /// The p99 of a same-CPU co-runner's wait, in µs.
    pub fn co_runner_wait_p99(name: &str, us: f64) -> Figure {
        Figure {
            role: FigureRole::CoRunnerWaitP99,
            ..Figure::new(name, us, " us")
        }
    }
}

#[derive(Debug, Clone)]
pub enum Outcome {
    Measured(Box<Measured>),
    Unsupported(Unsupported),
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
    W: FnOnce() -> Result<(Option<Measurement>, Vec<String>), Unsupported> + Send,
{
    let result = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                crate::harness::affinity::pin_current_thread_forever(cpu)
                    .map_err(|e| Unsupported::io("sched_setaffinity", &e))?;
                work()
            })
            .join()
            .unwrap_or_else(|_| Err(Unsupported::probe_failed("the measuring thread panicked")))
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

/// The C compiler of the cflags family, for the run's build identity.
pub fn cflags_compiler() -> &'static str {
    cflags::compiler()
}

pub fn registry() -> Vec<&'static dyn AnyProbe> {
    let mut probes: Vec<&'static dyn AnyProbe> = vec![&floor::Floor];
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
    let timer = (!crate::harness::tsc::rdtscp_available())
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
