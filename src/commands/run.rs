//! `mitbench run` (and mitbench with no command): set up, measure, print the
//! tables, write the outputs asked for, store the run.

use super::output::{Exit, fail, print_table};
use super::stored_runs::{open_history, store_in_history};
use crate::answer::advice;
use crate::cli::RunArgs;
use crate::export::{self, Format};
use crate::inventory::Inventory;
use crate::run::{self, Known, RunOptions, SetUpError};
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
    // The machine and the history are read first (the history read-only),
    // so that what `run` sets up, knows, measures and assembles it does in
    // one pass, handed everything it reads.
    let inventory = Inventory::collect(Path::new("/"));
    let history = (!args.no_history)
        .then(|| open_history(&args.store).ok().flatten())
        .flatten();
    let mut setup = match run::set_up(options(args)) {
        Ok(setup) => setup,
        Err(SetUpError::Usage(message)) => return fail(Exit::USAGE, message),
        Err(SetUpError::Machine(message)) => return fail(Exit::FAILURE, message),
    };
    // What the history knew, read before a round is measured; the
    // report's timeline is of the runs stored before this one.
    let wants_page = setup.outputs.iter().any(|o| o.format == Format::Html);
    let known = history.map_or_else(Known::default, |history| {
        let run = (setup.quick, setup.placement.cpu);
        Known::read(&history, &inventory, run, wants_page)
    });
    let doc = match run::execute(&setup, inventory, &known) {
        Ok(doc) => doc,
        Err(message) => return fail(Exit::FAILURE, message),
    };
    // The answer and its price list, made once for every output.
    let view = crate::export::RunView::of(&doc).with_timeline(known.timeline);
    if let Err(failed) = print_table(&view, args.wide) {
        return (failed, None);
    }
    // One output that cannot be written (a full disk) costs that file, not
    // the others or the history: each is tried, and the run exits 1 after.
    let mut write_failed = false;
    for output in std::mem::take(&mut setup.outputs) {
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
    }
}

/// This program, to run each fork in a fresh process of; None where the
/// kernel cannot say (the forks then run in this process, and the run
/// document says so).
pub(super) fn worker() -> Option<std::path::PathBuf> {
    std::env::current_exe().ok()
}

/// `mitbench __worker`: one fork of a run started by `mitbench run`.
pub fn serve_worker() -> Exit {
    match crate::measure::schedule::forks::serve() {
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
