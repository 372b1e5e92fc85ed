//! A run: validate everything up front, then measure each selected probe
//! variant on a pinned thread, then hand back the document to report.

use crate::export::Format;
use crate::harness::states::{self, MachineStates, StateModel};
use crate::harness::{Harness, Settings, affinity, interrupt, tsc};
use crate::inventory::Inventory;
use crate::probes::{self, AnyProbe, Placement};
use crate::results::{self, RunDocument, RunSettings};
use crate::schedule::Scheduler;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub quick: bool,
    pub patterns: Vec<String>,
    /// The files to write the results to, each in its format.
    pub outputs: Vec<(Format, PathBuf)>,
    pub cpu: Option<usize>,
    /// Percent.
    pub target_ci: Option<f64>,
    /// Seconds per variant.
    pub budget: Option<f64>,
    pub quiet: bool,
    /// Seed of the rounds' order; None: from the clock.
    pub seed: Option<u64>,
    /// Where to append one JSON line per finished round.
    pub round_log: Option<PathBuf>,
    /// The latency budget the advice is given for.
    pub latency_budget: std::time::Duration,
}

/// Why a run could not start. `Usage` errors are the user's to fix (exit 2);
/// `Machine` errors mean this machine cannot run mitbench at all.
#[derive(Debug)]
pub enum PlanError {
    Usage(String),
    Machine(String),
}

/// A file the results go to once the run ends: rendered into `temp`, then
/// renamed onto `path`.
pub struct PendingOutput {
    pub format: Format,
    pub path: PathBuf,
    pub temp: tempfile::NamedTempFile,
}

/// A validated run, ready to execute.
pub struct Plan {
    pub probes: Vec<&'static dyn AnyProbe>,
    pub placement: Placement,
    pub settings: Settings,
    pub options: RunOptions,
    /// Each output and its temporary sibling, created already.
    pub outputs: Vec<PendingOutput>,
    /// The --round-log file, opened for appending already.
    pub round_log: Option<std::fs::File>,
}

pub fn plan(options: RunOptions) -> Result<Plan, PlanError> {
    let probes = probes::select(&options.patterns).map_err(|miss| {
        let hint = if miss.closest.is_empty() {
            let families: Vec<&str> = probes::FAMILIES.iter().map(|f| f.name).collect();
            format!(
                "families: {}; `mitbench list` shows every probe",
                families.join(", ")
            )
        } else {
            format!("closest: {}", miss.closest.join(", "))
        };
        PlanError::Usage(format!("no probe matches '{}'; {hint}", miss.pattern))
    })?;
    if !tsc::rdtscp_available() {
        return Err(PlanError::Machine(
            "this CPU has no rdtscp instruction; mitbench times with it".into(),
        ));
    }
    let allowed = affinity::allowed_cpus()
        .map_err(|e| PlanError::Machine(format!("sched_getaffinity failed: {e}")))?;
    let cpu = match options.cpu {
        Some(cpu) if allowed.contains(&cpu) => cpu,
        Some(cpu) => {
            return Err(PlanError::Usage(format!(
                "invalid value for --cpu: CPU {cpu} is not one this process may run on (allowed: {})",
                affinity::format_cpu_list(&allowed)
            )));
        }
        // The highest-numbered CPU: CPU 0 usually takes more of the
        // machine's interrupts and housekeeping.
        None => *allowed
            .last()
            .ok_or_else(|| PlanError::Machine("no CPU is allowed".into()))?,
    };
    let mut settings = if options.quick {
        Settings::quick()
    } else {
        Settings::standard()
    };
    if let Some(pct) = options.target_ci {
        settings.target_ci_pct = pct;
    }
    if let Some(seconds) = options.budget {
        settings.budget_s = seconds;
        settings.warmup_s = settings.warmup_s.min(seconds / 5.0);
    }
    let mut outputs = Vec::new();
    for (format, path) in &options.outputs {
        if outputs.iter().any(|o: &PendingOutput| o.path == *path) {
            return Err(PlanError::Usage(format!(
                "{} is named by two outputs",
                path.display()
            )));
        }
        outputs.push(PendingOutput {
            format: *format,
            path: path.clone(),
            temp: temp_file_beside(path, format.flag()).map_err(PlanError::Usage)?,
        });
    }
    let round_log = match &options.round_log {
        Some(path) => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| {
                    PlanError::Usage(format!("cannot write --round-log {}: {e}", path.display()))
                })?,
        ),
        None => None,
    };
    Ok(Plan {
        probes,
        placement: Placement { cpu, allowed },
        settings,
        options,
        outputs,
        round_log,
    })
}

/// Creates the temporary file an output (`--json`, `--html`, ...) is written to,
/// beside the target so the final rename stays on one filesystem; made
/// before measuring, so an unwritable place fails at once.
pub fn temp_file_beside(path: &Path, flag: &str) -> Result<tempfile::NamedTempFile, String> {
    if path.is_dir() {
        return Err(format!(
            "cannot write --{flag} {}: it is a directory",
            path.display()
        ));
    }
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    tempfile::Builder::new()
        .prefix(".mitbench-")
        .suffix(&format!(".{flag}.tmp"))
        .tempfile_in(dir)
        .map_err(|e| {
            // tempfile appends ` at path "<its temporary file>"` to the OS's
            // reason (and keeps no errno to rebuild it from); the user named
            // the output, not that file.
            let text = e.to_string();
            let reason = text.split(" at path \"").next().unwrap_or(&text);
            format!("cannot write --{flag} {}: {reason}", path.display())
        })
}

/// Measures every selected variant in rounds (see [`crate::schedule`]).
/// Ctrl-C ends the run after the round in flight; what was measured until
/// then is returned.
pub fn execute(plan: &Plan, inventory: Inventory) -> Result<RunDocument, String> {
    for output in &plan.outputs {
        interrupt::remove_on_abort(output.temp.path());
    }
    interrupt::install();
    let started_at = chrono::Local::now().to_rfc3339();
    let tsc = inventory
        .tsc()
        .ok_or("the TSC frequency is unknown: no kernel figure and calibration failed")?;
    let harness = Harness::new(plan.settings.clone(), tsc.mhz);
    let _pinned = affinity::pin_current_thread(plan.placement.cpu)
        .map_err(|e| format!("pinning to CPU {} failed: {e}", plan.placement.cpu))?;
    let round_log = plan
        .round_log
        .as_ref()
        .map(|file| Box::new(file) as Box<dyn std::io::Write + '_>);
    let order_seed = plan.options.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    let steal_before = states::cpu_steal(plan.placement.cpu);

    let total = plan.probes.iter().map(|p| p.variants().len() as u64).sum();
    let progress = progress_bar(total, plan.options.quiet);
    let mut scheduler = Scheduler::new(&harness, &plan.placement, round_log);
    let mut measured = Vec::new();
    for (index, probe) in plan.probes.iter().enumerate() {
        if interrupt::requested() {
            break;
        }
        progress.set_message(probe.declaration().id.to_string());
        let done_before = progress.position();
        let probe_seed = order_seed.wrapping_add(index as u64);
        let rounds = scheduler.run_probe(*probe, probe_seed, |stopped| {
            progress.set_position(done_before + stopped as u64);
        });
        progress.set_position(done_before + rounds.variants.len() as u64);
        measured.push(rounds);
    }
    progress.finish_and_clear();

    let model = StateModel::fit(&scheduler.canaries);
    let steal_pct = steal_before
        .zip(states::cpu_steal(plan.placement.cpu))
        .and_then(|((s0, t0), (s1, t1))| {
            (t1 > t0).then(|| (s1.saturating_sub(s0)) as f64 / (t1 - t0) as f64 * 100.0)
        });
    let machine_states = MachineStates::new(
        model,
        &scheduler.canaries,
        &scheduler.canary_times,
        steal_pct,
        plan.placement.cpu,
    );
    let context = results::Context {
        model: &machine_states.model,
        tsc: &tsc,
        settings: &plan.settings,
        drift_interval_pct: machine_states.drift_interval_pct,
    };
    let records: Vec<_> = measured
        .iter()
        .flat_map(|p| results::probe_records(p, &context))
        .collect();
    let mut doc = RunDocument {
        schema: results::SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        build: results::BuildIdentity::of_this_binary(),
        started_at,
        finished_at: chrono::Local::now().to_rfc3339(),
        interrupted: interrupt::requested(),
        settings: RunSettings {
            quick: plan.options.quick,
            probe_patterns: plan.options.patterns.clone(),
            cpu: plan.placement.cpu,
            allowed_cpus: plan.placement.allowed.clone(),
            harness: plan.settings.clone(),
            order_seed,
        },
        machine_states,
        inventory,
        amortization: results::amortization_fits(&records),
        results: records,
        advice: Vec::new(),
        latency_advice: Vec::new(),
    };
    results::advice::advise_document(&mut doc, plan.options.latency_budget);
    Ok(doc)
}

/// Drawn on stderr only when it is a terminal. No steady-tick thread: a
/// redraw thread would compete with the measured threads for the CPUs, so
/// the bar moves only between passes over a probe's rounds.
fn progress_bar(len: u64, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{bar:30.cyan/blue} {pos}/{len} variants done [{elapsed}] {msg}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}
