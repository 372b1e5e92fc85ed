//! Commands over stored and saved runs: `history`, `history show`,
//! `report` and `export`, and the history every command shares.

use super::output::{Exit, fail, print_json, print_out, print_shown, print_table};
use crate::analysis::changes::Search;
use crate::answer::advice;
use crate::cli::{HistoryArgs, Printed, StoredRunArgs};
use crate::compare::{MachineTimeline, Timeline};
use crate::export::{self, Format};
use crate::store::history::{History, HistoryError, RunRef};
use crate::store::results::RunDocument;
use std::path::Path;

/// The history, when it exists; `None` where there is none yet (a run
/// named by a file needs none).
pub fn open_history(store: &HistoryArgs) -> Result<Option<History>, HistoryError> {
    let path = store.path()?;
    if !path.exists() {
        return Ok(None);
    }
    History::open(&path, false).map(Some)
}

/// The runs named, in order; the history is opened once, and only when a
/// name is not a file.
pub fn resolve(store: &HistoryArgs, runs: &[&RunRef]) -> Result<Vec<RunDocument>, HistoryError> {
    let history = if runs.iter().any(|r| !matches!(r, RunRef::File(_))) {
        open_history(store)?
    } else {
        None
    };
    runs.iter().map(|r| r.resolve(history.as_ref())).collect()
}

/// Stores a finished run, in run set `set` where given; a history that
/// cannot take it costs a warning, never the run (its tables are printed
/// and its JSON written already). Returns the id it was stored as.
pub fn store_in_history(store: &HistoryArgs, doc: &RunDocument, set: Option<i64>) -> Option<i64> {
    let stored = store
        .path()
        .and_then(|path| History::open(&path, true))
        .and_then(|mut history| {
            let id = history.store_in_set(doc, set)?;
            Ok((id, history.path().to_path_buf()))
        });
    match stored {
        Ok((id, path)) => {
            say!("stored as run {id} in {}", path.display());
            Some(id)
        }
        Err(e) => {
            say!("warning: the run was not stored in the history: {e}");
            None
        }
    }
}

pub fn history_list(store: &HistoryArgs, json: bool) -> Exit {
    let runs = match open_history(store) {
        Ok(Some(history)) => history.list(),
        Ok(None) => Ok(Vec::new()),
        Err(e) => Err(e),
    };
    let runs = match runs {
        Ok(runs) => runs,
        Err(e) => return fail(Exit::FAILURE, e),
    };
    if json {
        return print_json(&runs);
    }
    if runs.is_empty() {
        return print_out("no runs stored yet: `mitbench run` stores each run\n");
    }
    print_out(&export::render_history(
        &runs,
        export::text_table::terminal_width(),
    ))
}

/// Each machine's change points over the histories named (else the one
/// `--history` names).
pub fn history_changes(
    store: &HistoryArgs,
    named: &[std::path::PathBuf],
    threshold: Option<f64>,
    printed: Printed,
) -> Exit {
    let mut paths = named.to_vec();
    if paths.is_empty() || store.history.is_some() {
        match store.path() {
            Ok(path) => paths.insert(0, path),
            Err(e) => return fail(Exit::USAGE, e),
        }
    }
    let mut histories = Vec::new();
    for path in &paths {
        if !path.exists() {
            if named.is_empty() {
                return print_out("no runs stored yet: `mitbench run` stores each run\n");
            }
            return fail(Exit::USAGE, format!("{}: no such history", path.display()));
        }
        match History::open(path, false) {
            Ok(history) => histories.push(history),
            Err(e) => return fail(Exit::USAGE, e),
        }
    }
    let threshold = threshold.unwrap_or(crate::compare::DEFAULT_THRESHOLD_PCT);
    let timeline = match Timeline::of(&histories, threshold, Search::default()) {
        Ok(timeline) => timeline,
        Err(e) => return fail(Exit::USAGE, e),
    };
    print_shown(&timeline, printed, |style, width| {
        export::timeline::render(&timeline, style, width)
    })
}

pub fn history_show(store: &HistoryArgs, run: &RunRef, wide: bool) -> Exit {
    let doc = match resolve(store, &[run]) {
        Ok(mut docs) => docs.remove(0),
        Err(e) => return fail(Exit::USAGE, e),
    };
    match print_table(&export::RunView::of(&doc), wide) {
        Ok(()) => Exit::SUCCESS,
        Err(failed) => failed,
    }
}

/// Writes a stored or saved run in `format`, the advice recomputed for
/// the budget asked for.
pub fn export_run(stored: &StoredRunArgs, run: &RunRef, format: Format, output: &Path) -> Exit {
    let mut doc = match resolve(&stored.store, &[run]) {
        Ok(mut docs) => docs.remove(0),
        Err(e) => return fail(Exit::USAGE, e),
    };
    let budget = stored
        .latency_budget
        .unwrap_or(advice::DEFAULT_LATENCY_BUDGET);
    advice::advise_document(&mut doc, budget);
    let target = match crate::export::destination::Destination::of(output, "output") {
        Ok(target) => target,
        Err(message) => return fail(Exit::USAGE, message),
    };
    let view = export::RunView::of(&doc).with_timeline(match format {
        Format::Html => machine_timeline(&stored.store, &doc),
        _ => None,
    });
    match export::write_to(format.exporter(), &view, target, output) {
        Ok(()) => {
            say!("{} written to {}", format.what(), output.display());
            Exit::SUCCESS
        }
        Err(e) => fail(
            Exit::FAILURE,
            format!("writing {} failed: {e}", output.display()),
        ),
    }
}

/// The timeline of `doc`'s machine over the history, where the history
/// holds runs of it; a history that cannot be read leaves the report
/// without one, said once.
pub fn machine_timeline(store: &HistoryArgs, doc: &RunDocument) -> Option<MachineTimeline> {
    let history = open_history(store).ok().flatten()?;
    crate::run::report_timeline(&history, &doc.inventory.identity, doc.settings.quick)
}

/// The attribution of the history's newest run set of each boot and
/// wrapper of the last run's host and build, as `mitbench attribute` with
/// no set named makes it, or why there is none.
pub fn newest_attribution(store: &HistoryArgs) -> Result<crate::attribute::Attribution, String> {
    let history = match open_history(store) {
        Ok(Some(history)) => history,
        Ok(None) => return Err("no history of run sets to attribute".into()),
        Err(e) => return Err(e.to_string()),
    };
    let conditions = history
        .nth_last(0)
        .and_then(|last| history.load(last))
        .map(|last| crate::store::history::conditions_of(&last))
        .map_err(|e| e.to_string())?;
    crate::attribute::newest_sets(&history, &conditions)
}
