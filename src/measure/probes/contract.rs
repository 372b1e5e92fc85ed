//! What a probe is and promises: its declaration, its variants as typed
//! configs and the roles they play, the `Probe` trait a probe implements
//! and the type-erased `AnyProbe` the registry and scheduler hold, and the
//! CPUs it may use.

use super::{Outcome, Unsupported};
use crate::measure::harness::Harness;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

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
    pub unit: StepUnit,
}

impl LatencyStep {
    pub fn new(group: &str, step: u64, unit: StepUnit) -> LatencyStep {
        LatencyStep {
            group: group.to_string(),
            step,
            unit,
        }
    }
}

/// What a latency step counts; the JSON writes it as its plural.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepUnit {
    Entries,
    Bytes,
}

impl StepUnit {
    pub fn plural(self) -> &'static str {
        match self {
            StepUnit::Entries => "entries",
            StepUnit::Bytes => "bytes",
        }
    }

    pub fn singular(self) -> &'static str {
        match self {
            StepUnit::Entries => "entry",
            StepUnit::Bytes => "byte",
        }
    }
}

impl fmt::Display for StepUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.plural())
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TollPair<C> {
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

    fn toll(&self) -> Option<TollPair<Self::Config>> {
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
    fn toll(&self) -> Option<TollPair<usize>>;
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

    fn toll(&self) -> Option<TollPair<usize>> {
        let TollPair { toll, reference } = Probe::toll(self)?;
        let configs = self.configs();
        let index = |c: &P::Config| configs.iter().position(|x| x == c);
        Some(TollPair {
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
#[derive(Debug, Clone, Serialize, Deserialize)]
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
