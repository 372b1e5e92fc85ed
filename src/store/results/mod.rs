//! The results model: the run document (machine and build identity,
//! settings, inventory, machine states) and one [`Record`] per variant,
//! each computed once from the rounds in [`build`]. Exporters
//! ([`crate::export`]) read it and compute nothing.

pub mod answered;
pub mod at_speed;
mod build;
pub mod fields;
pub mod load;
mod machine_states;
pub mod record;
mod speed;
pub mod spread;
mod upgrade;

pub use build::{Context, probe_records};
pub use record::{Comparison, Cost, Counters, EqualSpeed, Record, RowKey};

use crate::analysis::noise::RunTime;
use crate::analysis::stats::{self, Amortization};
use crate::inventory::Inventory;
use crate::measure::harness::Settings;
use crate::measure::harness::tsc::TscFrequency;
pub use machine_states::{MachineStates, ReferenceSpeed};
use serde::{Deserialize, Serialize};

/// Bumped whenever a field changes meaning or disappears. 2: figures from
/// rounds (`cost_*` replaces `median_*`), machine states, paired ratios,
/// counters from a counting round. 3: records in typed parts (`cost`,
/// `vs_baseline`, `layout`, `derived`, `rounds`, `counters`), `role` for
/// the baseline and layout controls, `unsupported` as {kind, reason}.
/// 4: a `figure` object per record, compare row and tax row, one shape
/// everywhere (`figure::Reported`); the fields it replaces stay for one
/// version, deprecated. 5: a record's cost holds its figures typed, in
/// ticks (`rounds_ticks`, `next_run_ticks`, `at_reference`) with one
/// `ns_per_tick`; the flat twins of schema 4 are gone.
pub const SCHEMA_VERSION: u32 = 5;

/// The schemas this mitbench reads: 3 and 4 are made this one's shape as
/// they are read (`upgrade`), and 3 is given its `figure` objects.
pub const READS_SCHEMAS: [u32; 3] = [3, 4, SCHEMA_VERSION];

/// What built the mitbench that made a run: figures from another commit or
/// compiler may differ for that reason alone.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BuildIdentity {
    pub git_commit: String,
    pub rustc: String,
    pub profile: String,
    /// The C compiler of the cflags family's kernels (their flags are in
    /// each variant's params).
    pub c_compiler: String,
}

impl BuildIdentity {
    pub fn of_this_binary() -> BuildIdentity {
        BuildIdentity {
            git_commit: env!("MITBENCH_GIT_COMMIT").to_string(),
            rustc: env!("MITBENCH_RUSTC").to_string(),
            profile: env!("MITBENCH_PROFILE").to_string(),
            c_compiler: crate::measure::probes::cflags_compiler().to_string(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunSettings {
    pub quick: bool,
    pub probe_patterns: Vec<String>,
    /// The CPU the measuring thread was pinned to.
    pub cpu: usize,
    pub allowed_cpus: Vec<usize>,
    pub harness: Settings,
    /// Seed of the random order of rounds; probe k uses seed + k.
    pub order_seed: u64,
    /// Passes over the probes, each in a process of its own (see
    /// `crate::measure::schedule::forks`); 1 in documents that predate forks.
    #[serde(default = "one")]
    pub forks: usize,
    /// Whether each fork was a fresh process (`mitbench __worker`), or the
    /// forks ran one after another in the measuring process (the library
    /// called without a worker program, as tests do).
    #[serde(default)]
    pub fresh_processes: bool,
}

fn one() -> usize {
    1
}

/// Everything one run produced; what `--json` writes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunDocument {
    pub schema: u32,
    pub tool_version: String,
    /// What built this mitbench.
    pub build: BuildIdentity,
    pub started_at: String,
    pub finished_at: String,
    /// True when Ctrl-C stopped the run; `results` holds what was measured.
    pub interrupted: bool,
    pub settings: RunSettings,
    /// The machine's speed states over the run, from the canary.
    pub machine_states: MachineStates,
    pub inventory: Inventory,
    pub results: Vec<Record>,
    /// cost(B) = per item + per batch / B, fitted per group of variants
    /// that differ only in their `batch` parameter.
    pub amortization: Vec<AmortizationFit>,
    /// For each fit, the batch size a latency budget allows (see
    /// `answer::advice`); empty in documents that predate it.
    #[serde(default)]
    pub advice: Vec<answered::Advice>,
    /// For each series with a measured co-runner wait, the step the budget
    /// allows by that wait; empty in documents that predate it.
    #[serde(default)]
    pub latency_advice: Vec<answered::LatencyAdvice>,
    /// What an attribution over the history's run sets of this machine's
    /// boots and wrappers said of the summary's rows when this run was
    /// made (`mitbench attribute`); empty where the history held none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attributed: Vec<answered::AttributedPart>,
    /// What the hooks on the syscall path in force cost one syscall, read
    /// against the history's newest run of this boot without them when
    /// this run was made; None where there was none to read against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook_toll: Option<answered::HookToll>,
    /// Where audit is off now and no `never,task` rule keeps new processes
    /// off its path: the stored run of this boot that read it enabled. The
    /// kernel keeps having enabled it to itself, and every process started
    /// since pays the audit path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_enabled_in_run: Option<i64>,
}

impl RunDocument {
    /// The hooks every syscall of this run paid for: those its inventory
    /// read on the syscall path, and audit enabled earlier in its boot
    /// where the history told (`audit_enabled_in_run`).
    pub fn hooks_on_path(&self) -> Vec<crate::inventory::hooks::OnPath> {
        self.inventory
            .hooks
            .on_syscall_path()
            .into_iter()
            .chain(
                self.audit_enabled_in_run
                    .map(crate::inventory::hooks::audit_enabled_earlier),
            )
            .collect()
    }

    /// The record of the row (probe, variant), where the run has one: the
    /// one look-up every reader of a run makes by its key.
    pub fn record(&self, probe: &str, variant: &str) -> Option<&Record> {
        self.results
            .iter()
            .find(|r| r.id == probe && r.variant == variant)
    }

    /// The records of one amortization series: `probe`'s batched variants
    /// named `group` ([`AmortizationFit::group`]), measured or not.
    pub fn series<'a>(
        &'a self,
        probe: &'a str,
        group: &'a str,
    ) -> impl Iterator<Item = &'a Record> {
        self.results
            .iter()
            .filter(move |r| r.id == probe && r.batch.as_ref().is_some_and(|b| b.group == group))
    }

    /// The batch sizes a series measured (its records with a cost).
    pub fn measured_sizes<'a>(
        &'a self,
        probe: &'a str,
        group: &'a str,
    ) -> impl Iterator<Item = u64> + 'a {
        self.series(probe, group)
            .filter(|r| r.cost.is_some())
            .filter_map(|r| Some(r.batch.as_ref()?.size))
    }

    /// The amortization fit over `probe`'s series `group`.
    pub fn fit_of(&self, probe: &str, group: &str) -> Option<&AmortizationFit> {
        self.amortization
            .iter()
            .find(|f| f.id == probe && f.group == group)
    }

    /// The run's reference speed (ticks per reference step), where it
    /// read the reference.
    pub fn reference_ticks(&self) -> Option<f64> {
        self.machine_states.reference.as_ref().map(|r| r.ticks)
    }

    /// Each probe family with a record in this run, in the families'
    /// order, beside its records: the sections every rendering is made of.
    pub fn by_family(&self) -> Vec<(&'static crate::measure::probes::Family, Vec<&Record>)> {
        crate::measure::probes::by_family(&self.results, |r| &r.family)
    }

    /// The rows this machine could not measure, grouped by reason in the
    /// order each reason first appears: one line per reason, not per row
    /// (sixteen rows of one speculation control share one).
    pub fn unsupported_by_reason(&self) -> Vec<(String, Vec<String>)> {
        let mut groups: Vec<(String, Vec<String>)> = Vec::new();
        for r in &self.results {
            let Some(why) = &r.unsupported else {
                continue;
            };
            let row = format!("{} {}", r.id, r.variant);
            match groups.iter_mut().find(|(reason, _)| *reason == why.reason) {
                Some((_, rows)) => rows.push(row),
                None => groups.push((why.reason.clone(), vec![row])),
            }
        }
        groups
    }

    /// The amortization fits of the probes among `records`.
    pub fn fits_among<'a>(
        &'a self,
        records: &'a [&Record],
    ) -> impl Iterator<Item = &'a AmortizationFit> {
        self.amortization
            .iter()
            .filter(|a| records.iter().any(|r| r.id == a.id))
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AmortizationFit {
    pub id: String,
    /// The variants' common name without the batch size ("" when they are
    /// named "B=<n>" alone).
    pub group: String,
    /// What one item of the probe is.
    pub item: String,
    /// Ticks.
    #[serde(flatten, with = "fields::AmortizationFields")]
    pub fit: Amortization,
}

/// When each of `runs` ran, with the machine's walk it read; empty unless
/// every run says.
pub fn run_times<'a>(runs: impl IntoIterator<Item = &'a RunDocument>) -> Vec<RunTime> {
    let seconds = |text: &str| {
        chrono::DateTime::parse_from_rfc3339(text)
            .ok()
            .map(|t| t.timestamp_millis() as f64 / 1000.0)
    };
    runs.into_iter()
        .map(|doc| {
            doc.machine_states.run_time(
                seconds(&doc.started_at)?..seconds(&doc.finished_at)?,
                doc.settings.forks,
            )
        })
        .collect::<Option<Vec<_>>>()
        .unwrap_or_default()
}

/// What a run's analysis reads besides its rounds: the steal time over it,
/// the CPU it measured on, and what the history knew before it: the quiet
/// level of its boot, how far its earlier runs moved, and how far above
/// their fastest samples their rows' quiet rounds stood.
#[derive(Debug, Clone, Default)]
pub struct RunFacts {
    pub steal_pct: Option<f64>,
    pub cpu: usize,
    pub known_quiet: Option<crate::analysis::states::QuietLevel>,
    pub run_to_run: Option<crate::analysis::spread::RunToRun>,
    pub usual_gaps: crate::analysis::rounds::UsualGaps,
}

/// The machine's states over a run and every variant's record, from the
/// run's rounds and canary readings (its forks merged): the one analysis a
/// live run and the synthetic machine share.
pub fn analyse(
    run: &crate::measure::schedule::forks::Merged,
    tsc: &TscFrequency,
    settings: &Settings,
    facts: RunFacts,
) -> (MachineStates, Vec<Record>) {
    let model = crate::analysis::states::StateModel::fit_against(
        &run.canaries,
        facts.known_quiet,
        run.waited.known_level_not_reached,
    );
    let mut machine_states = MachineStates::new(
        model,
        &run.canaries,
        &run.canary_times,
        facts.steal_pct,
        facts.cpu,
    );
    let probes = interrupted_marked(&run.probes, &machine_states.model, &facts.usual_gaps);
    let speed = speed::RunSpeed::of(&probes, &machine_states.model);
    let context = Context {
        model: &machine_states.model,
        tsc,
        settings,
        drift_interval_pct: machine_states.drift_interval_pct,
        run_to_run: facts.run_to_run.as_ref(),
        spread: &spread::run_spread(
            &probes,
            &machine_states.model,
            |v| spread::used_rounds(v, &machine_states.model),
            |_, _, r| Some(r.measured.measurement.per_item.median.value),
        ),
        speed: &speed,
    };
    let mut records: Vec<Record> = probes
        .iter()
        .flat_map(|p| probe_records(p, &context))
        .collect();
    with_figures(&mut records);
    if let Some(reference) = ReferenceSpeed::of(&speed, &records) {
        machine_states.set_reference(reference);
    }
    machine_states.set_waited(run.waited);
    machine_states.set_run_to_run(facts.run_to_run);
    (machine_states, records)
}

/// The run's rounds with those interrupted inside them marked, each row's
/// read over all its forks, against the run's quiet band and the row's
/// usual gap in earlier runs (`usual_gaps`): the marks a fork made while
/// it ran saw its own rounds and an earlier model only.
fn interrupted_marked(
    probes: &[crate::measure::schedule::ProbeRounds],
    model: &crate::analysis::states::StateModel,
    usual_gaps: &crate::analysis::rounds::UsualGaps,
) -> Vec<crate::measure::schedule::ProbeRounds> {
    let mut probes = probes.to_vec();
    for p in probes.iter_mut() {
        let probe = p.declaration.id.to_string();
        for v in p.variants.iter_mut() {
            let earlier = usual_gaps.get(&(probe.clone(), v.variant.name.clone()));
            v.mark_interrupted(model, earlier.copied());
        }
    }
    probes
}

/// Sets each record's `figure` object from its cost: where a run is made,
/// and where one is read (a document before the object, or one a test
/// or a tool changed, gets the figure its fields hold).
pub fn with_figures(records: &mut [Record]) {
    for cost in records.iter_mut().filter_map(|r| r.cost.as_mut()) {
        cost.figure = Some(cost.reported());
    }
}

/// Fits the amortization model to every series of three or more batch
/// sizes: the measured variants of one probe that share a batch group.
pub fn amortization_fits(records: &[Record]) -> Vec<AmortizationFit> {
    /// The batch sizes and costs per item of one probe's group.
    struct Series<'a> {
        id: &'a str,
        group: &'a str,
        item: &'a str,
        batches: Vec<f64>,
        costs: Vec<f64>,
    }
    let mut series: Vec<Series> = Vec::new();
    for r in records {
        let (Some(ticks), Some(batch)) = (r.cost_ticks(), &r.batch) else {
            continue;
        };
        let size = batch.size as f64;
        match series
            .iter_mut()
            .find(|s| s.id == r.id && s.group == batch.group)
        {
            Some(s) => {
                s.batches.push(size);
                s.costs.push(ticks);
            }
            None => series.push(Series {
                id: &r.id,
                group: &batch.group,
                item: &r.item,
                batches: vec![size],
                costs: vec![ticks],
            }),
        }
    }
    series
        .into_iter()
        .filter_map(|s| {
            let fit = stats::fit_amortization(&s.batches, &s.costs)?;
            Some(AmortizationFit {
                id: s.id.to_string(),
                group: s.group.to_string(),
                item: s.item.to_string(),
                fit,
            })
        })
        .collect()
}
