//! `mitbench run` (and mitbench with no command): plan, measure, print the
//! tables, write the outputs asked for, store the run.

use super::output::{Exit, fail, print_table};
use super::stored_runs::store_in_history;
use crate::analysis::spread::RunToRun;
use crate::analysis::states::QuietLevel;
use crate::cli::{HistoryArgs, RunArgs};
use crate::export::{self, Format};
use crate::inventory::Inventory;
use crate::inventory::identity::Identity;
use crate::mitigations::crossing::SYSCALL;
use crate::results::{RunDocument, advice};
use crate::run::{self, PlanError, RunOptions};
use std::path::Path;

pub fn run(args: RunArgs) -> Exit {
    let runs = args.runs.map_or(1, usize::from);
    if runs == 1 {
        return run_once(&args, None).0;
    }
    if args.no_history {
        return fail(
            Exit::USAGE,
            "--runs stores its runs in the history as one set; it cannot go with --no-history",
        );
    }
    if !options(&args).outputs.is_empty() {
        return fail(
            Exit::USAGE,
            "--runs makes several runs and an output file holds one: write any of them from the \
             history with `mitbench export FORMAT RUN FILE`",
        );
    }
    let (mut set, mut last) = (None, None);
    for i in 1..=runs {
        say!("run {i} of {runs}");
        let (exit, stored) = run_once(&args, set);
        set = set.or(stored);
        last = stored.or(last);
        if !exit.is_success() {
            return exit;
        }
    }
    if let (Some(first), Some(last)) = (set, last) {
        say!("run set stored as runs {first}..{last}: `mitbench compare {first}..{last} OTHER`");
    }
    Exit::SUCCESS
}

/// One run, stored as part of `set` where given; its exit status and the
/// id it was stored as.
fn run_once(args: &RunArgs, set: Option<i64>) -> (Exit, Option<i64>) {
    let fail = |code, message: String| (fail(code, message), None);
    let mut plan = match run::plan(options(args)) {
        Ok(plan) => plan,
        Err(PlanError::Usage(message)) => return fail(Exit::USAGE, message),
        Err(PlanError::Machine(message)) => return fail(Exit::FAILURE, message),
    };
    let inventory = Inventory::collect(Path::new("/"));
    if !args.no_history {
        (plan.options.known_quiet, plan.options.run_to_run) =
            known_before(args, &inventory.identity, plan.placement.cpu);
    }
    let mut doc = match run::execute(&plan, inventory) {
        Ok(doc) => doc,
        Err(message) => return fail(Exit::FAILURE, message),
    };
    // What stored run sets of other boots and wrappers say of the
    // summary's rows, where the history holds them.
    if !args.no_history
        && let Ok(attribution) = super::stored_runs::newest_attribution(&args.store, Some(&doc))
    {
        doc.attributed = crate::attribute::summary_parts(&attribution);
    }
    if !args.no_history {
        doc.audit_enabled_in_run = audit_enabled_earlier(&args.store, &doc);
        doc.hook_toll = hook_toll(&args.store, &doc);
    }
    // The answer and its price list, made once for every output; the
    // report's timeline of the runs stored before this one.
    let wants_page = plan.outputs.iter().any(|o| o.format == Format::Html);
    let view = crate::export::RunView::of(&doc).with_timeline(if wants_page && !args.no_history {
        super::stored_runs::machine_timeline(&args.store, &doc)
    } else {
        None
    });
    if let Err(failed) = print_table(&view, args.wide) {
        return (failed, None);
    }
    // One output that cannot be written (a full disk) costs that file, not
    // the others or the history: each is tried, and the run exits 1 after.
    let mut write_failed = false;
    for output in std::mem::take(&mut plan.outputs) {
        let (format, path) = (output.format, output.path);
        if withheld(format, doc.interrupted) {
            say!(
                "{} not written: the run was interrupted, so {} keeps the last whole run's metrics",
                format.what(),
                path.display()
            );
            continue;
        }
        match export::write_to(format.exporter(), &view, output.target, &path) {
            Ok(()) => say!("{} written to {}", format.what(), path.display()),
            Err(e) => {
                say!(
                    "error: writing {} failed, nothing was left there: {e}",
                    path.display()
                );
                write_failed = true;
            }
        }
    }
    let stored = if args.no_history {
        None
    } else {
        store_in_history(&args.store, &doc, set)
    };
    (ending(write_failed, doc.interrupted), stored)
}

/// The run's options from its command line.
fn options(args: &RunArgs) -> RunOptions {
    RunOptions {
        quick: args.quick,
        patterns: args.probes.clone(),
        outputs: [
            (Format::Json, &args.json),
            (Format::Html, &args.html),
            (Format::Csv, &args.export_csv),
            (Format::Markdown, &args.export_markdown),
            (Format::OpenMetrics, &args.openmetrics),
        ]
        .into_iter()
        .filter_map(|(format, path)| Some((format, path.clone()?)))
        .collect(),
        cpu: args.cpu,
        target_ci: args.target_ci,
        budget: args.budget,
        quiet: args.quiet,
        seed: args.seed,
        round_log: args.round_log.clone(),
        latency_budget: args
            .latency_budget
            .unwrap_or(advice::DEFAULT_LATENCY_BUDGET),
        forks: args.forks.map(usize::from),
        wait_for_quiet: !args.no_wait,
        worker: worker(),
        known_quiet: None,
        run_to_run: None,
    }
}

/// What the history knew before the run, read from one opening of it: the
/// quiet level it read on this boot under the same process controls, and
/// how far rows moved between its earlier runs of the conditions this run
/// will have (`history::conditions`). Nothing where the boot is unknown or
/// the history cannot be read: the run is left to its own readings and the
/// stated floor.
fn known_before(
    args: &RunArgs,
    like: &Identity,
    cpu: usize,
) -> (Option<QuietLevel>, Option<RunToRun>) {
    if like.boot_id == crate::inventory::UNKNOWN {
        return (None, None);
    }
    let Some(history) = super::stored_runs::open_history(&args.store).ok().flatten() else {
        return (None, None);
    };
    let quiet = history.quiet_level_like(like, cpu).ok().flatten();
    let build = crate::results::BuildIdentity::of_this_binary();
    let conditions = crate::history::conditions(like, &build.git_commit, args.quick);
    let moved = history
        .row_figures(&conditions, &[])
        .ok()
        .and_then(|rows| RunToRun::of(&rows))
        .map(|moved| {
            let waits = history.wait_figures(&conditions);
            waits.map_or(moved, |waits| moved.with_waits(&waits))
        });
    (quiet, moved)
}

/// Runs of this boot looked through for one without the hooks: a few, so
/// that a run is not held against one from hours of other conditions.
const HOOKLESS_RUNS_LOOKED_AT: usize = 10;

/// What the hooks on the syscall path in force cost one syscall: `doc`
/// compared with the newest stored run of its boot that had none of them
/// (`compare::hook_toll`, which reads a price only where the hooks are all
/// that changed); None where no hook is in force or no such run is stored.
fn hook_toll(store: &HistoryArgs, doc: &RunDocument) -> Option<crate::results::hooks::HookToll> {
    let hookless = |d: &RunDocument| d.hooks_on_path().is_empty();
    if hookless(doc) {
        return None;
    }
    let history = super::stored_runs::open_history(store).ok()??;
    let row = (SYSCALL.probe, SYSCALL.variant);
    let ids = history
        .newest_of_boot(
            &doc.inventory.identity.boot_id,
            row,
            HOOKLESS_RUNS_LOOKED_AT,
        )
        .ok()?;
    let (id, old) = ids
        .into_iter()
        .filter_map(|id| Some((id, history.load(id).ok()?)))
        .find(|(_, old)| hookless(old))?;
    let against = format!("run {id}");
    let this = std::slice::from_ref(doc);
    super::compare::with_history_noise(
        Some(&history),
        [(std::slice::from_ref(&old), &against), (this, "this run")],
        crate::compare::DEFAULT_THRESHOLD_PCT,
    )
    .hook_toll
}

/// Where audit is off and no `never,task` rule keeps new processes off its
/// path, the stored run of this boot that read it enabled (see
/// `RunDocument::audit_enabled_in_run`).
fn audit_enabled_earlier(store: &HistoryArgs, doc: &RunDocument) -> Option<i64> {
    if !doc.inventory.hooks.audit.read()?.off_and_unkept() {
        return None;
    }
    let history = super::stored_runs::open_history(store).ok()??;
    history
        .audit_enabled_in_boot(&doc.inventory.identity.boot_id)
        .ok()?
}

/// This program, to run each fork in a fresh process of; None where the
/// kernel cannot say (the forks then run in this process, and the run
/// document says so).
pub(super) fn worker() -> Option<std::path::PathBuf> {
    std::env::current_exe().ok()
}

/// `mitbench __worker`: one fork of a run started by `mitbench run`.
pub fn serve_worker() -> Exit {
    match crate::schedule::forks::serve() {
        Ok(()) => Exit::SUCCESS,
        Err(message) => fail(Exit::FAILURE, message),
    }
}

/// Whether an output is left unwritten because the run was interrupted:
/// a scrape would read a partial run as the host's figures, so the metrics
/// file keeps the last whole run's; every other file says in its content
/// that the run was interrupted.
fn withheld(format: Format, interrupted: bool) -> bool {
    interrupted && format == Format::OpenMetrics
}

/// How a run ends: an output that failed outweighs an interruption.
fn ending(write_failed: bool, interrupted: bool) -> Exit {
    if write_failed {
        Exit::FAILURE
    } else if interrupted {
        Exit::INTERRUPTED
    } else {
        Exit::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::Parser;

    #[test]
    fn an_interrupted_run_withholds_only_its_metrics() {
        for format in [Format::Json, Format::Html, Format::Csv, Format::Markdown] {
            assert!(!withheld(format, true), "{format:?}");
        }
        assert!(withheld(Format::OpenMetrics, true));
        assert!(!withheld(Format::OpenMetrics, false));
    }

    #[test]
    fn a_failed_write_outweighs_an_interruption() {
        assert_eq!(ending(false, false), Exit::SUCCESS);
        assert_eq!(ending(false, true), Exit::INTERRUPTED);
        assert_eq!(ending(true, true), Exit::FAILURE);
        assert_eq!(ending(true, false), Exit::FAILURE);
    }

    #[test]
    fn every_output_flag_becomes_one_output_in_its_format() {
        let cli = Cli::try_parse_from([
            "mitbench",
            "--json",
            "a.json",
            "--html",
            "a.html",
            "--export-csv",
            "a.csv",
            "--export-markdown",
            "a.md",
            "--openmetrics",
            "a.prom",
        ])
        .unwrap();
        let outputs = options(&cli.run).outputs;
        let formats: Vec<Format> = outputs.iter().map(|(f, _)| *f).collect();
        assert_eq!(
            formats,
            [
                Format::Json,
                Format::Html,
                Format::Csv,
                Format::Markdown,
                Format::OpenMetrics
            ]
        );
        assert_eq!(outputs[4].1, Path::new("a.prom"));
        let bare = options(&Cli::try_parse_from(["mitbench"]).unwrap().run);
        assert!(bare.outputs.is_empty());
        assert_eq!(bare.latency_budget, advice::DEFAULT_LATENCY_BUDGET);
    }
}
