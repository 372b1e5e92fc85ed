//! Forks: a run is several passes over its probes, each in a fresh worker
//! process (JMH's forks). What one process fixes for its whole life, its
//! address-space layout, where its code and buffers fall in the caches, a
//! predictor mode it settles into, is drawn anew in each, and the passes
//! are spread over the run's minutes, so a variant's rounds see what the
//! next run will see: other processes and other moments. The figure's
//! interval is then read across forks (see `crate::analysis::spread`).
//!
//! A worker is mitbench itself (`mitbench __worker`, not shown in help): it
//! reads its [`Job`] as JSON on stdin, writes one progress line per pass
//! and then its [`ForkRounds`] as one JSON line on stdout. It dies with the
//! parent (PR_SET_PDEATHSIG) and has a process group of its own; the first
//! Ctrl-C mitbench gets is passed on to it, so the worker ends its round in
//! flight and returns what it measured, and the parent starts no further
//! fork.

use super::{ProbeRounds, Scheduler, VariantRounds};
use crate::analysis::states::QuietLevel;
use crate::measure::harness::{Harness, Settings, affinity, interrupt};
use crate::measure::probes::{self, AnyProbe, Placement, TollPair};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The hidden subcommand a worker process is started with.
pub const WORKER_COMMAND: &str = "__worker";

/// What one fork measures, and how.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    /// Probe ids, in the run's order.
    pub probes: Vec<String>,
    /// The run's settings with this fork's share of the budget.
    pub settings: Settings,
    pub placement: Placement,
    pub tsc_mhz: f64,
    pub order_seed: u64,
    pub fork: usize,
    /// Whether each measured variant gets its counting round in this fork
    /// (the last one: counters are read once per variant, not per fork).
    pub counting: bool,
    /// `--round-log`, appended to by the worker.
    pub round_log: Option<PathBuf>,
    /// Whether a progress line goes to the parent after every pass (only
    /// where a bar shows it: each line wakes the parent).
    pub progress: bool,
    /// The quiet level the boot's recent runs read; None where the history
    /// holds none.
    #[serde(default)]
    pub known_quiet: Option<QuietLevel>,
    /// Whether this fork watches the canary for `known_quiet`: where the
    /// run waits for the quiet level, the first fork before its first round
    /// (`Scheduler::wait_for_known_level`); where it does not, the last
    /// after its last (`Scheduler::watch_for_known_level`).
    #[serde(default)]
    pub watches_known_level: bool,
    /// The rows the answer reads, (probe, variant): they go on at the
    /// quiet level past their budget (`Scheduler::decide`).
    #[serde(default)]
    pub answer_rows: Vec<(String, String)>,
    /// Seconds each probe's rounds took in the fork before, in `probes`'
    /// order ([`ForkRounds::round_seconds`]); empty in the first fork.
    /// Every fork runs the probes in one order, and a probe's rounds take
    /// about as long in each (a quick run's stand at their floor: a round
    /// is at least one item), so the gate reads what the rounds ahead will
    /// take from it; the last fork's counting rounds come on top.
    #[serde(default)]
    pub previous_round_s: Vec<f64>,
}

impl Job {
    /// Whether fork `fork` of `forks` watches the canary for the boot's
    /// known level: where the run waits for the quiet level, the first
    /// (before its first round); where it does not, the last (after its
    /// last), so a level that moved is told on the same evidence both ways.
    pub fn watching_fork(wait_for_quiet: bool, fork: usize, forks: usize) -> bool {
        match wait_for_quiet {
            true => fork == 0,
            false => fork + 1 == forks,
        }
    }

    /// The settings of one of `forks` forks: the run's budget, rounds and
    /// span shared out among them, so the whole run keeps its time.
    pub fn share(settings: &Settings, forks: usize) -> Settings {
        let forks = forks.max(1);
        Settings {
            min_rounds: settings.min_rounds.div_ceil(forks).max(2),
            max_rounds: settings.max_rounds.div_ceil(forks).max(2),
            min_span_s: settings.min_span_s / forks as f64,
            ..settings.with_budget_s(settings.budget_s / forks as f64)
        }
    }
}

/// One probe's rounds from one fork.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ForkProbe {
    pub id: String,
    pub toll: Option<TollPair<usize>>,
    pub variants: Vec<VariantRounds>,
    pub order_seed: u64,
    /// Seconds its rounds took in this fork, waits not counted.
    #[serde(default)]
    pub round_s: f64,
}

/// Everything one fork measured, its times in seconds since the fork began.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ForkRounds {
    pub probes: Vec<ForkProbe>,
    pub canaries: Vec<f64>,
    pub canary_times: Vec<f64>,
    /// How long it waited for the quiet level (none in documents before).
    #[serde(default)]
    pub waited: super::gate::Waited,
}

impl ForkRounds {
    /// Seconds each probe's rounds took, in the fork's order: what the
    /// next fork's gate expects of them ([`Job::previous_round_s`]).
    pub fn round_seconds(&self) -> Vec<f64> {
        self.probes.iter().map(|p| p.round_s).collect()
    }
}

/// A line a worker writes on stdout.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Line {
    /// Variants of this fork stopped so far.
    Progress(u64),
    Done(Box<ForkRounds>),
}

/// Measures `job` in this process. `on_progress` is told how many of the
/// job's variants have stopped, after every pass.
pub fn work(job: &Job, on_progress: impl FnMut(u64)) -> Result<ForkRounds, String> {
    let selected: Vec<&'static dyn AnyProbe> = job
        .probes
        .iter()
        .map(|id| {
            probes::registry()
                .into_iter()
                .find(|p| p.declaration().id == id)
                .ok_or_else(|| format!("no probe {id}"))
        })
        .collect::<Result<_, _>>()?;
    let harness = Harness::new(job.settings.clone(), job.tsc_mhz);
    // The run holds the log open all along, so on a FIFO whose reader
    // quit a blocking open would wait for a new reader for ever.
    let round_log = match &job.round_log {
        Some(path) => crate::sys::append_if_read(path)
            .map_err(|e| format!("cannot append to {}: {e}", path.display()))?
            .or_else(|| {
                eprintln!(
                    "mitbench: --round-log {}: its reader is gone; fork {}'s rounds are not logged",
                    path.display(),
                    job.fork + 1
                );
                None
            }),
        None => None,
    };
    Ok(measure(
        job,
        &harness,
        &selected,
        round_log.map(|f| Box::new(f) as Box<dyn Write>),
        on_progress,
    ))
}

/// Measures `probes` as the fork `job` describes, on `harness`'s machine:
/// the gate's budget, the wait for the boot's known level before the first
/// round or the watch for it after the last, the probes in order. A live
/// fork's and the synthetic host's runs go through this one function.
pub fn measure(
    job: &Job,
    harness: &Harness,
    probes: &[&dyn AnyProbe],
    round_log: Option<Box<dyn Write>>,
    mut on_progress: impl FnMut(u64),
) -> ForkRounds {
    let mut scheduler = Scheduler::new(harness, &job.placement, round_log);
    scheduler.fork = job.fork;
    scheduler.counting = job.counting;
    scheduler.answer_rows = job.answer_rows.clone();
    let variants: usize = probes.iter().map(|p| p.variants().len()).sum();
    scheduler.gate = super::gate::Gate::new(
        job.settings.wait_for_quiet,
        job.settings.budget_s * variants as f64,
    );
    let watched = job
        .known_quiet
        .filter(|_| job.watches_known_level)
        .map(|k| k.threshold());
    if let Some(threshold) = watched.filter(|_| job.settings.wait_for_quiet) {
        scheduler.wait_for_known_level(threshold);
    }
    // The fork before's seconds a probe; none where that fork ended early.
    let previous_round_s =
        (job.previous_round_s.len() == probes.len()).then_some(&job.previous_round_s);
    let mut done = 0;
    let mut measured = Vec::new();
    for (index, probe) in probes.iter().enumerate() {
        if harness.machine.stop_requested() {
            break;
        }
        let seed = job.order_seed.wrapping_add(index as u64);
        scheduler
            .gate
            .begin(done as usize + probe.variants().len(), variants);
        if let Some(previous) = previous_round_s {
            scheduler
                .gate
                .expect_rounds_ahead(previous[index..].iter().sum());
        }
        let answer_rows_ahead = probes[index..].iter().any(|p| {
            let id = p.declaration().id;
            job.answer_rows.iter().any(|(probe, _)| probe == id)
        });
        // A row already measured without a quiet round holds the reserve
        // too: the fork's end revisits it.
        let revisit_ahead = scheduler.answer_rows_without_quiet(&measured);
        scheduler
            .gate
            .hold_reserve(answer_rows_ahead || revisit_ahead);
        let rounds_before_s = scheduler.gate.waited.round_seconds;
        let rounds = scheduler.run_probe(*probe, seed, |stopped| {
            on_progress(done + stopped as u64);
        });
        done += rounds.variants.len() as u64;
        on_progress(done);
        measured.push(ForkProbe {
            id: rounds.declaration.id.to_string(),
            toll: rounds.toll,
            variants: rounds.variants,
            order_seed: rounds.order_seed,
            round_s: scheduler.gate.waited.round_seconds - rounds_before_s,
        });
    }
    if job.settings.wait_for_quiet && !harness.machine.stop_requested() {
        scheduler
            .gate
            .hold_reserve(scheduler.answer_rows_without_quiet(&measured));
        let revisited = scheduler.revisit(probes, &mut measured);
        scheduler.gate.waited.revisited_rounds += revisited as u64;
    }
    if let Some(threshold) = watched.filter(|_| !job.settings.wait_for_quiet) {
        scheduler.watch_for_known_level(threshold);
    }
    ForkRounds {
        probes: measured,
        waited: scheduler.gate.waited,
        canaries: scheduler.canaries,
        canary_times: scheduler.canary_times,
    }
}

/// `mitbench __worker`: one fork, its job on stdin, its lines on stdout.
pub fn serve() -> Result<(), String> {
    let job: Job = serde_json::from_reader(std::io::stdin().lock())
        .map_err(|e| format!("reading the worker's job: {e}"))?;
    interrupt::install();
    let cpu = job.placement.cpu;
    let _pinned = affinity::pin_current_thread(cpu)
        .map_err(|e| format!("pinning to CPU {cpu} failed: {e}"))?;
    let mut stdout = std::io::stdout().lock();
    let mut write = |line: &Line| -> Result<(), String> {
        let text = serde_json::to_string(line).map_err(|e| e.to_string())?;
        writeln!(stdout, "{text}")
            .and_then(|()| stdout.flush())
            .map_err(|e| format!("writing to the parent: {e}"))
    };
    let mut failed = None;
    let rounds = work(&job, |done| {
        if job.progress && failed.is_none() {
            failed = write(&Line::Progress(done)).err();
        }
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    write(&Line::Done(Box::new(rounds)))
}

/// Runs `job` in a fresh process of `exe`, passing its progress on.
pub fn spawn(
    exe: &Path,
    job: &Job,
    mut on_progress: impl FnMut(u64),
) -> Result<ForkRounds, String> {
    let mut command = Command::new(exe);
    command
        .arg(WORKER_COMMAND)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let measuring_cpu = affinity::only(job.placement.cpu).map_err(|e| e.to_string())?;
    // SAFETY: setpgid, prctl and sched_setaffinity are async-signal-safe;
    // nothing else runs between fork and exec.
    unsafe {
        command.pre_exec(move || {
            // A group of its own: the terminal's Ctrl-C reaches mitbench
            // only, which passes one on (see harness::interrupt).
            if libc::setpgid(0, 0) != 0 || libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // On the measuring CPU before exec makes the worker's address
            // space: one made on another CPU keeps that CPU in its mask,
            // and the flushes of `alone` rows then reach it too (see
            // docs/why-the-code-is-so.md, bench/alone_after_a_thread.c).
            let size = std::mem::size_of::<libc::cpu_set_t>();
            if libc::sched_setaffinity(0, size, &measuring_cpu) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("starting a worker ({}) failed: {e}", exe.display()))?;
    interrupt::forward_to(i32::try_from(child.id()).ok());
    let rounds = read_worker(&mut child, job, &mut on_progress);
    interrupt::forward_to(None);
    rounds
}

/// Sends `job` to a started worker and reads its lines to its end.
fn read_worker(
    child: &mut std::process::Child,
    job: &Job,
    on_progress: &mut impl FnMut(u64),
) -> Result<ForkRounds, String> {
    let job_text = serde_json::to_vec(job).map_err(|e| e.to_string())?;
    let written = child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(&job_text);
    let mut result = None;
    if written.is_ok() {
        let stdout = child.stdout.take().expect("stdout is piped");
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            match serde_json::from_str::<Line>(&line) {
                Ok(Line::Progress(done)) => on_progress(done),
                Ok(Line::Done(rounds)) => result = Some(*rounds),
                Err(e) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!("a worker wrote what mitbench cannot read: {e}"));
                }
            }
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("waiting for a worker failed: {e}"))?;
    match result {
        Some(rounds) => Ok(rounds),
        None => Err(format!("a worker ended without its rounds ({status})")),
    }
}

/// The forks' rounds folded into one [`ProbeRounds`] per probe, in the
/// plan's order, every time on the run's clock.
#[derive(Default)]
pub struct Merged {
    pub probes: Vec<ProbeRounds>,
    pub canaries: Vec<f64>,
    pub canary_times: Vec<f64>,
    /// The forks' waits for the quiet level, added up.
    pub waited: super::gate::Waited,
}

impl Merged {
    /// Adds fork `fork`, which began `offset_s` seconds into the run.
    pub fn add(&mut self, plan: &[&dyn AnyProbe], fork: usize, offset_s: f64, rounds: ForkRounds) {
        self.waited.add(&rounds.waited);
        self.canaries.extend(rounds.canaries);
        self.canary_times
            .extend(rounds.canary_times.iter().map(|t| t + offset_s));
        for measured in rounds.probes {
            let Some(probe) = plan.iter().find(|p| p.declaration().id == measured.id) else {
                continue;
            };
            let index = match self
                .probes
                .iter()
                .position(|p| p.declaration.id == measured.id)
            {
                Some(index) => index,
                None => {
                    self.probes.push(ProbeRounds {
                        declaration: *probe.declaration(),
                        toll: measured.toll,
                        variants: Vec::new(),
                        order_seed: measured.order_seed,
                    });
                    self.probes.len() - 1
                }
            };
            let merged = &mut self.probes[index];
            for mut variant in measured.variants {
                for round in &mut variant.rounds {
                    round.started_s += offset_s;
                    round.fork = fork;
                }
                match merged
                    .variants
                    .iter_mut()
                    .find(|v| v.variant.name == variant.variant.name)
                {
                    Some(existing) => existing.absorb(variant),
                    None => merged.variants.push(variant),
                }
            }
        }
        // The plan's order, whatever order the forks finished probes in.
        self.probes.sort_by_key(|p| {
            plan.iter()
                .position(|q| q.declaration().id == p.declaration.id)
        });
    }
}

impl VariantRounds {
    /// Takes a later fork's rounds of the same variant: the rounds appended,
    /// time added, the counting round and why it stopped from the later
    /// fork where it has them, the first reason it could not run kept.
    fn absorb(&mut self, later: VariantRounds) {
        self.rounds.extend(later.rounds);
        self.elapsed_s += later.elapsed_s;
        self.counting = later.counting.or(self.counting.take());
        self.stopped = later.stopped.or(self.stopped);
        if self.unsupported.is_none() {
            self.unsupported = later.unsupported;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::harness::WARMUP_SHARE;

    #[test]
    fn a_forks_share_of_the_budget_keeps_the_warm_up_within_its_share() {
        for settings in [Settings::standard(), Settings::quick()] {
            // A budget a variant under ten times the warm-up, as a run of
            // the whole suite gives each (a thirty-sixth of the harness's own).
            let run = settings.with_budget_s(settings.budget_s / 36.0);
            for forks in 1..=3 {
                let fork = Job::share(&run, forks);
                assert!((fork.budget_s * forks as f64 - run.budget_s).abs() < 1e-12);
                assert!(fork.warmup_s <= WARMUP_SHARE * fork.budget_s + 1e-15);
                assert!(fork.warmup_s > 0.0, "{forks} forks: no warm-up");
            }
        }
        // A budget larger than the warm-up's share leaves it as it was.
        let long = Settings::standard().with_budget_s(10.0);
        assert_eq!(long.warmup_s, Settings::standard().warmup_s);
    }
}
