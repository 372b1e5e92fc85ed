//! A run: validate everything up front, then measure each selected probe
//! variant on a pinned thread, then hand back the document to report,
//! assembled here of the rounds and of what the history knew before the
//! first of them (`known`, which the caller reads).

mod known;

pub use known::{Known, report_timeline, run_to_run, usual_gaps};

use crate::export::Format;
use crate::export::destination::Destination;
use crate::inventory::Inventory;
use crate::measure::harness::steal;
use crate::measure::harness::{Settings, affinity, interrupt, tsc};
use crate::measure::probes::{self, AnyProbe, Placement};
use crate::measure::schedule::forks::{self, Job, Merged};
use crate::store::results::{self, RunDocument, RunSettings};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;

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
    /// Passes over the probes, each in a fresh process; None: the
    /// default for the run's kind (standard or quick).
    pub forks: Option<usize>,
    /// Whether rounds wait for the quiet level (`crate::measure::schedule::gate`).
    pub wait_for_quiet: bool,
    /// The program a fork runs as (`PROGRAM __worker`): mitbench itself.
    /// None runs the forks one after another in this process.
    pub worker: Option<PathBuf>,
}

/// Why a run could not start. `Usage` errors are the user's to fix (exit 2);
/// `Machine` errors mean this machine cannot run mitbench at all.
#[derive(Debug)]
pub enum SetUpError {
    Usage(String),
    Machine(String),
}

/// A file the results go to once the run ends, through `target`.
pub struct PendingOutput {
    pub format: Format,
    pub path: PathBuf,
    pub target: Destination,
}

/// A validated run, ready to execute: every option resolved (the CPU,
/// the budget, the forks, the outputs and the order's seed).
pub struct RunSetup {
    pub probes: Vec<&'static dyn AnyProbe>,
    pub placement: Placement,
    pub settings: Settings,
    pub forks: usize,
    pub quick: bool,
    /// The probe patterns the run was asked for, as its document records.
    pub patterns: Vec<String>,
    /// No progress bar and no line a fork.
    pub quiet: bool,
    /// Seed of the rounds' order.
    pub order_seed: u64,
    /// The latency budget the advice is given for.
    pub latency_budget: std::time::Duration,
    /// The program a fork runs as; None runs the forks in this process.
    pub worker: Option<PathBuf>,
    /// Each output and its temporary sibling, created already.
    pub outputs: Vec<PendingOutput>,
    pub round_log: Option<RoundLog>,
}

/// The --round-log file: its path, which each fork appends to and closes,
/// and the file opened for appending already and held open for the whole
/// run though nothing writes it here: a reader of a FIFO there would see
/// the end of the log between forks were no writer left open.
pub struct RoundLog {
    pub path: PathBuf,
    _held: std::fs::File,
}

/// Forks of a standard and of a quick run: enough processes for their
/// spread to say how far the next run may land, few enough that each
/// fork's share of a variant's budget still makes several rounds.
pub const STANDARD_FORKS: usize = 3;
pub const QUICK_FORKS: usize = 2;

/// The most time a standard and a quick run spend in rounds, all variants
/// together, unless `--budget` sets each variant's: each variant's budget
/// is at most its share of this. The rest of a run (starting the forks,
/// the counting rounds, the analysis) comes on top: a default run in 4
/// minutes, a quick one in 60 s.
pub const STANDARD_MEASURING_S: f64 = 220.0;
pub const QUICK_MEASURING_S: f64 = 36.0;

/// The least time a selection of probes shares, standard and quick: a
/// handful of variants gets more than its share of the whole suite's time
/// (up to the harness's own per-variant budget), a large one keeps that
/// share, so a family measures in about its part of the suite's minutes.
pub const STANDARD_SELECTION_S: f64 = 30.0;
pub const QUICK_SELECTION_S: f64 = 8.0;

/// Each variant's budget: its share of the whole suite's measuring time,
/// or of the selection's least time when that is more, and never more than
/// the harness's own `most_s`.
pub fn variant_budget_s(selected: usize, suite: usize, quick: bool, most_s: f64) -> f64 {
    let (suite_s, selection_s) = if quick {
        (QUICK_MEASURING_S, QUICK_SELECTION_S)
    } else {
        (STANDARD_MEASURING_S, STANDARD_SELECTION_S)
    };
    let in_suite = suite_s / suite.max(1) as f64;
    let in_selection = selection_s / selected.max(1) as f64;
    most_s.min(in_suite.max(in_selection))
}

pub fn set_up(options: RunOptions) -> Result<RunSetup, SetUpError> {
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
        SetUpError::Usage(format!("no probe matches '{}'; {hint}", miss.pattern))
    })?;
    if !tsc::rdtscp_available() {
        return Err(SetUpError::Machine(
            "this CPU has no rdtscp instruction; mitbench times with it".into(),
        ));
    }
    let (cpu, allowed) = measuring_cpu(options.cpu)?;
    let mut settings = if options.quick {
        Settings::quick()
    } else {
        Settings::standard()
    };
    if let Some(pct) = options.target_ci {
        settings.target_ci_pct = pct;
    }
    settings.wait_for_quiet = options.wait_for_quiet;
    let budget = match options.budget {
        Some(seconds) => Some(seconds),
        None => {
            let variants = |probes: &[&dyn probes::AnyProbe]| -> usize {
                probes.iter().map(|p| p.variants().len()).sum()
            };
            let suite = probes::select(&[]).map_or(0, |all| variants(&all));
            Some(variant_budget_s(
                variants(&probes),
                suite,
                options.quick,
                settings.budget_s,
            ))
        }
    };
    if let Some(seconds) = budget {
        settings = settings.with_budget_s(seconds);
    }
    let outputs = pending_outputs(&options.outputs)?;
    let round_log = match options.round_log {
        Some(path) => Some(RoundLog {
            _held: std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| {
                    SetUpError::Usage(format!("cannot write --round-log {}: {e}", path.display()))
                })?,
            path,
        }),
        None => None,
    };
    let forks = options.forks.unwrap_or(if options.quick {
        QUICK_FORKS
    } else {
        STANDARD_FORKS
    });
    let order_seed = options.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    Ok(RunSetup {
        probes,
        placement: Placement { cpu, allowed },
        settings,
        forks,
        quick: options.quick,
        patterns: options.patterns,
        quiet: options.quiet,
        order_seed,
        latency_budget: options.latency_budget,
        worker: options.worker,
        outputs,
        round_log,
    })
}

/// The CPU the measuring thread runs on (`asked`, else the highest one this
/// process may run on) and every CPU it may run on.
fn measuring_cpu(asked: Option<usize>) -> Result<(usize, Vec<usize>), SetUpError> {
    let allowed = affinity::allowed_cpus()
        .map_err(|e| SetUpError::Machine(format!("sched_getaffinity failed: {e}")))?;
    let cpu = match asked {
        Some(cpu) if allowed.contains(&cpu) => cpu,
        Some(cpu) => {
            return Err(SetUpError::Usage(format!(
                "invalid value for --cpu: CPU {cpu} is not one this process may run on (allowed: {})",
                affinity::format_cpu_list(&allowed)
            )));
        }
        // The highest-numbered CPU: CPU 0 usually takes more of the
        // machine's interrupts and housekeeping.
        None => *allowed
            .last()
            .ok_or_else(|| SetUpError::Machine("no CPU is allowed".into()))?,
    };
    Ok((cpu, allowed))
}

/// The files the run writes when it ends, each checked now: a path named
/// twice, or one that cannot be written, is refused before any round.
fn pending_outputs(named: &[(Format, PathBuf)]) -> Result<Vec<PendingOutput>, SetUpError> {
    let mut outputs = Vec::new();
    for (format, path) in named {
        if outputs.iter().any(|o: &PendingOutput| o.path == *path) {
            return Err(SetUpError::Usage(format!(
                "{} is named by two outputs",
                path.display()
            )));
        }
        outputs.push(PendingOutput {
            format: *format,
            path: path.clone(),
            target: Destination::of(path, format.flag()).map_err(SetUpError::Usage)?,
        });
    }
    Ok(outputs)
}

/// Measures every selected variant in rounds (see [`crate::measure::schedule`]),
/// and makes the run's document of them and of what the history `known`
/// before. Ctrl-C ends the run after the round in flight; what was
/// measured until then is returned.
pub fn execute(
    setup: &RunSetup,
    inventory: Inventory,
    known: &Known,
) -> Result<RunDocument, String> {
    for temp in setup.outputs.iter().filter_map(|o| o.target.temp_path()) {
        interrupt::remove_on_abort(temp);
    }
    interrupt::install();
    let started_at = chrono::Local::now().to_rfc3339();
    let tsc = inventory
        .tsc()
        .ok_or("the TSC frequency is unknown: no kernel figure and calibration failed")?;
    // The forks measure in workers pinned to the CPU; this process only
    // waits for them, and pinned there it would wake on the measured CPU.
    let _pinned = match setup.worker {
        Some(_) => None,
        None => Some(
            affinity::pin_current_thread(setup.placement.cpu)
                .map_err(|e| format!("pinning to CPU {} failed: {e}", setup.placement.cpu))?,
        ),
    };
    let steal_before = steal::cpu_steal(setup.placement.cpu);

    let per_fork: u64 = setup.probes.iter().map(|p| p.variants().len() as u64).sum();
    let progress = progress_bar(per_fork * setup.forks as u64, setup.quiet);
    // Without a bar (a pipe, a CI log) a line a fork, from this process
    // between forks: a reader of the log sees the run move, and the
    // measuring CPU is not woken for it.
    let log_lines = progress.is_hidden() && !setup.quiet;
    if log_lines {
        eprintln!(
            "mitbench: measuring {per_fork} variants in {} forks on CPU {}",
            setup.forks, setup.placement.cpu
        );
    }
    let run_clock = std::time::Instant::now();
    let mut merged = Merged::default();
    let mut previous_round_s = Vec::new();
    for fork in 0..setup.forks {
        if interrupt::requested() {
            break;
        }
        let mut job = fork_job(setup, known, tsc.mhz, fork, !progress.is_hidden());
        job.previous_round_s = std::mem::take(&mut previous_round_s);
        progress.set_message(format!("fork {} of {}", fork + 1, setup.forks));
        let done_before = per_fork * fork as u64;
        let on_progress = |done: u64| progress.set_position(done_before + done);
        let offset_s = run_clock.elapsed().as_secs_f64();
        let rounds = match &setup.worker {
            Some(exe) => forks::spawn(exe, &job, on_progress)?,
            None => forks::work(&job, on_progress)?,
        };
        if log_lines {
            eprintln!(
                "mitbench: fork {} of {} done at {:.0} s (waited {:.1} s for the quiet level)",
                fork + 1,
                setup.forks,
                run_clock.elapsed().as_secs_f64(),
                rounds.waited.seconds
            );
        }
        previous_round_s = rounds.round_seconds();
        merged.add(&setup.probes, fork, offset_s, rounds);
    }
    progress.finish_and_clear();

    let steal_pct = steal_before
        .zip(steal::cpu_steal(setup.placement.cpu))
        .and_then(|(before, after)| steal::share_pct(before, after));
    let measured = Measured {
        started_at,
        merged,
        steal_pct,
    };
    Ok(document(setup, known, measured, &tsc, inventory))
}

/// What the forks measured, and when.
struct Measured {
    started_at: String,
    merged: Merged,
    steal_pct: Option<f64>,
}

/// The run's document, the one place it is assembled: the analysis of
/// what was `measured`, the advice, and what the history `known` before.
fn document(
    setup: &RunSetup,
    known: &Known,
    measured: Measured,
    tsc: &crate::measure::harness::tsc::TscFrequency,
    inventory: Inventory,
) -> RunDocument {
    let facts = setup.facts(measured.steal_pct, known);
    let (machine_states, records) = results::analyse(&measured.merged, tsc, &setup.settings, facts);
    let mut doc = RunDocument {
        schema: results::SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        build: results::BuildIdentity::of_this_binary(),
        started_at: measured.started_at,
        finished_at: chrono::Local::now().to_rfc3339(),
        interrupted: interrupt::requested(),
        settings: setup.run_settings(),
        machine_states,
        inventory,
        amortization: results::amortization_fits(&records),
        results: records,
        advice: Vec::new(),
        latency_advice: Vec::new(),
        attributed: Vec::new(),
        hook_toll: None,
        audit_enabled_in_run: None,
    };
    crate::answer::advice::advise_document(&mut doc, setup.latency_budget);
    crate::answer::note_rows_a_reader_could_misread(&mut doc);
    known.complete(&mut doc);
    doc
}

impl RunSetup {
    /// What the run's analysis reads besides its rounds: `steal_pct` over
    /// the run, and what the history knew before it.
    fn facts(&self, steal_pct: Option<f64>, known: &Known) -> results::RunFacts {
        results::RunFacts {
            steal_pct,
            cpu: self.placement.cpu,
            known_quiet: known.quiet,
            run_to_run: known.run_to_run.clone(),
            usual_gaps: known.usual_gaps.clone(),
        }
    }

    /// The settings the run's document records.
    fn run_settings(&self) -> RunSettings {
        RunSettings {
            quick: self.quick,
            probe_patterns: self.patterns.clone(),
            cpu: self.placement.cpu,
            allowed_cpus: self.placement.allowed.clone(),
            harness: self.settings.clone(),
            order_seed: self.order_seed,
            forks: self.forks,
            fresh_processes: self.worker.is_some(),
        }
    }
}

/// What fork `fork` of the run is asked to measure, and how.
fn fork_job(setup: &RunSetup, known: &Known, tsc_mhz: f64, fork: usize, progress: bool) -> Job {
    Job {
        probes: setup
            .probes
            .iter()
            .map(|p| p.declaration().id.to_string())
            .collect(),
        settings: Job::share(&setup.settings, setup.forks),
        placement: setup.placement.clone(),
        tsc_mhz,
        // Each fork draws its own order of rounds.
        order_seed: setup.order_seed.wrapping_add((fork as u64) << 32),
        fork,
        counting: fork + 1 == setup.forks,
        progress,
        round_log: setup.round_log.as_ref().map(|log| log.path.clone()),
        known_quiet: known.quiet,
        watches_known_level: Job::watching_fork(setup.settings.wait_for_quiet, fork, setup.forks),
        answer_rows: crate::answer::summary::answer_rows(),
        previous_round_s: Vec::new(),
    }
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
        "{bar:30.cyan/blue} {pos}/{len} variant rounds done [{elapsed}, about {eta} left] {msg}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_whole_suite_keeps_its_share_and_a_selection_its_least_time() {
        let (suite, most) = (378, 3.0);
        for quick in [false, true] {
            let (suite_s, selection_s) = if quick {
                (QUICK_MEASURING_S, QUICK_SELECTION_S)
            } else {
                (STANDARD_MEASURING_S, STANDARD_SELECTION_S)
            };
            let whole = variant_budget_s(suite, suite, quick, most);
            assert!((whole * suite as f64 - suite_s).abs() < 1e-9);
            let mut previous = f64::INFINITY;
            for selected in 1..=suite {
                let each = variant_budget_s(selected, suite, quick, most);
                assert!(
                    each <= most && each <= previous,
                    "{selected} variants: {each}"
                );
                assert!(
                    each >= whole,
                    "a selection never measures less than in the suite"
                );
                // All the selection's variants together: the larger of its
                // least time and its part of the suite's, no more.
                let total = each * selected as f64;
                let share = suite_s * selected as f64 / suite as f64;
                assert!(
                    total <= selection_s.max(share) + 1e-9,
                    "{selected}: {total}"
                );
                previous = each;
            }
        }
    }
}
