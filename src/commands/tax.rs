//! `mitbench tax`: count a workload's crossings, price them by the tolls of
//! a run of this boot, correct for the counters' own cost, and with
//! `--check` test the estimate against an injected toll.

use super::output::{Exit, fail, page_target, show};
use super::stored_runs::{newest_attribution, open_history};
use crate::answer::advice;
use crate::cli::{HistoryArgs, Page, Printed};
use crate::export;
use crate::inventory::Inventory;
use crate::measure::harness::interrupt;
use crate::run::{self, RunOptions, SetUpError};
use crate::store::results::RunDocument;
use crate::tax::{self, Watched, count::Counted};
use std::path::Path;

/// Counts a workload's crossings and prices them (see `crate::tax`).
/// `check` is (pairs, rules) for `--check`; `correct` measures what the
/// counters cost the workload and takes it out.
pub fn tax(
    store: &HistoryArgs,
    target: &Watched,
    printed: Printed,
    page: Page,
    check: Option<(usize, usize)>,
    correct: bool,
) -> Exit {
    // A page that cannot be written is found out before the workload runs.
    let html = match page_target(page.html.as_deref()) {
        Ok(target) => target,
        Err(message) => return fail(Exit::USAGE, message),
    };
    // During the count Ctrl-C is the workload's (see tax::supervise); after
    // it, a first Ctrl-C only cuts the tolls' measurement short and the
    // counts are still printed, a second exits at once, and must not leave
    // the page's temporary file behind.
    if let Some(temp) = html.as_ref().and_then(|(_, page)| page.temp_path()) {
        interrupt::remove_on_abort(temp);
    }
    interrupt::install();
    let counted = match tax::count(target) {
        Ok(counted) => counted,
        Err(message) => return fail(Exit::USAGE, message),
    };
    // What was counted is priced and printed whatever ended the workload;
    // the exit code says how it ended.
    let ending = ending(&counted);
    match ending {
        Exit::INTERRUPTED => say!("interrupted: the counts are up to then"),
        Exit::TIMED_OUT => say!("timed out: the workload was stopped; the counts are up to then"),
        _ => {}
    }
    let (tolls, from) = match tolls(store) {
        Ok(found) => found,
        Err(message) => {
            return fail(
                Exit::FAILURE,
                format!("measuring the tolls failed: {message}"),
            );
        }
    };
    let check_counts = counted.syscalls_and_switches();
    let mhz = tolls.inventory.tsc_mhz;
    // Skipped after Ctrl-C or a timeout: the user wants out.
    let observer = if !correct {
        Err("not measured: --no-correction".into())
    } else if ending.is_success() {
        say!("measuring what counting cost the workload");
        tax::observer::correct(&counted)
    } else {
        Err("not measured: the count was cut short".into())
    };
    let mut estimate = tax::estimate(counted, &tolls, from, observer);
    let command = match target {
        Watched::Command { command, .. } => Some(command),
        Watched::Running { .. } => None,
    };
    if let (Some((pairs, rules)), Some(command), true) = (check, command, ending.is_success()) {
        check_against_a_filter(&mut estimate, command, check_counts, mhz, pairs, rules);
    }
    let plan = crate::plan::plan(&tolls.inventory, crate::plan::DEFAULT_RUNS);
    let attribution = stored_attribution(store);
    estimate.per_mitigation = Some(tax::parts::per_mitigation(
        &estimate,
        attribution.as_ref(),
        &plan,
    ));
    let shown = show(
        &estimate,
        printed,
        |style, width| export::tax::render(&estimate, style, width),
        html,
        || export::tax::render_html(&estimate),
        "estimate",
    );
    if shown.is_success() { ending } else { shown }
}

/// `--check`: the estimate against what the workload's runs plain and under
/// a seccomp filter of `rules` comparisons measure, `pairs` pairs of them.
fn check_against_a_filter(
    estimate: &mut tax::Tax,
    command: &[String],
    counts: Option<(u64, u64)>,
    mhz: Option<f64>,
    pairs: usize,
    rules: usize,
) {
    match (counts, mhz) {
        (Some(counts), Some(mhz)) => {
            say!(
                "checking: {pairs} pairs of runs, plain and under a {rules}-comparison seccomp filter"
            );
            match tax::check::check(command, counts, rules, pairs, mhz) {
                Ok(result) => estimate.check = Some(result),
                Err(message) => estimate.check_unsupported = Some(message),
            }
        }
        _ => {
            estimate.check_unsupported = Some(
                "it needs the syscall and context-switch counts and the TSC rate, and this machine gave not all three"
                    .into(),
            )
        }
    }
}

/// The newest attribution the history's run sets allow, said as it is
/// found; None, and why, where there is none.
fn stored_attribution(store: &HistoryArgs) -> Option<crate::attribute::Attribution> {
    match newest_attribution(store) {
        Ok(attribution) => {
            say!(
                "pricing each mitigation's part over run sets {}",
                attribution
                    .recognised
                    .sets
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            Some(attribution)
        }
        Err(why) => {
            say!("per mitigation: {why}");
            None
        }
    }
}

/// How the count ended, as the exit status the estimate is printed with.
fn ending(counted: &Counted) -> Exit {
    if counted.interrupted {
        Exit::INTERRUPTED
    } else if counted.timed_out {
        Exit::TIMED_OUT
    } else {
        Exit::SUCCESS
    }
}

/// The run `tax` prices crossings by, and how to name it.
fn tolls(store: &HistoryArgs) -> Result<(RunDocument, String), String> {
    let machine = Inventory::collect(Path::new("/"));
    let stored = match open_history(store) {
        Ok(Some(history)) => tax::tolls_in(&history, &machine.identity.boot_id),
        _ => None,
    };
    stored_or_measured(stored, || {
        say!("no stored run of this boot measured the tolls: measuring them now (quick)");
        measure_tolls(machine)
    })
}

/// The newest stored run of this boot that measured every toll where there
/// is one; else `measure` makes a run now.
fn stored_or_measured(
    stored: Option<(RunDocument, String)>,
    measure: impl FnOnce() -> Result<RunDocument, String>,
) -> Result<(RunDocument, String), String> {
    match stored {
        Some(found) => Ok(found),
        None => Ok((measure()?, "a quick run made for this estimate".to_string())),
    }
}

/// A quick run of the toll probes only.
fn measure_tolls(machine: Inventory) -> Result<RunDocument, String> {
    let options = RunOptions {
        quick: true,
        quiet: true,
        patterns: tax::toll_probes(),
        latency_budget: advice::DEFAULT_LATENCY_BUDGET,
        worker: super::run::worker(),
        wait_for_quiet: true,
        ..RunOptions::default()
    };
    let setup = run::set_up(options).map_err(|e| match e {
        SetUpError::Usage(m) | SetUpError::Machine(m) => m,
    })?;
    run::execute(&setup, machine, &run::Known::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored_run() -> RunDocument {
        crate::store::results::load::document_from_file(Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/run-a.json"
        )))
        .unwrap()
    }

    #[test]
    fn a_stored_run_of_this_boot_is_used_without_measuring() {
        let found = stored_or_measured(Some((stored_run(), "run 7".into())), || {
            panic!("measured although a stored run had the tolls")
        })
        .unwrap();
        assert_eq!(found.1, "run 7");
    }

    #[test]
    fn without_one_the_tolls_are_measured_and_named_so() {
        let mut measured = 0;
        let found = stored_or_measured(None, || {
            measured += 1;
            Ok(stored_run())
        })
        .unwrap();
        assert_eq!(measured, 1);
        assert_eq!(found.1, "a quick run made for this estimate");
        let failed = stored_or_measured(None, || Err("no CPU".into()));
        assert_eq!(failed.err().as_deref(), Some("no CPU"));
    }
}
