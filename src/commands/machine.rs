//! Commands about the machine rather than a run: `list`, `inventory`, and
//! the shipped `workload`s.

use super::output::{Exit, fail, print_json, print_out};
use crate::cli::HistoryArgs;
use crate::export;
use crate::inventory::Inventory;
use crate::measure::harness::affinity;
use crate::measure::probes::{self, Placement};
use crate::tax::workloads::Workload;
use std::path::Path;

pub fn list(json: bool) -> Exit {
    let allowed = affinity::allowed_cpus().unwrap_or_default();
    let placement = Placement {
        cpu: allowed.last().copied().unwrap_or(0),
        allowed,
    };
    let listing = probes::listing(&placement);
    if json {
        return print_json(&listing);
    }
    print_out(&export::render_listing(
        &listing,
        export::text_table::terminal_width(),
    ))
}

/// The machine under `root` (a fixture tree, or /), where it is a directory.
fn machine_at(root: &Path) -> Result<Inventory, Exit> {
    if !root.is_dir() {
        return Err(fail(
            Exit::USAGE,
            format!(
                "invalid value for --root: {} is not a directory",
                root.display()
            ),
        ));
    }
    Ok(Inventory::collect(root))
}

pub fn inventory(json: bool, root: &Path) -> Exit {
    let inventory = match machine_at(root) {
        Ok(inventory) => inventory,
        Err(exit) => return exit,
    };
    if json {
        return print_json(&inventory);
    }
    print_out(&export::inventory::render(&inventory))
}

pub fn plan(json: bool, runs: usize, root: &Path, store: &HistoryArgs) -> Exit {
    let inventory = match machine_at(root) {
        Ok(inventory) => inventory,
        Err(exit) => return exit,
    };
    let mut plan = crate::plan::plan(&inventory, runs.max(1));
    // Which boots the history holds a set of: those of the last run's host
    // and build. No history, or one that cannot be read, marks none.
    // The last run's price list predicts what each vector boot saves.
    if let Ok(Some(history)) = super::stored_runs::open_history(store)
        && let Ok((id, last)) = history
            .nth_last(0)
            .and_then(|id| Ok((id, history.load(id)?)))
    {
        if let Ok(sets) = history.latest_sets(&last) {
            plan.mark_measured(&sets);
        }
        plan.predict(id, &last);
        plan.audit_enabled_earlier(&inventory, id, &last);
    }
    if json {
        return print_json(&plan);
    }
    print_out(&export::plan::render(
        &plan,
        export::text_table::terminal_width(),
    ))
}

pub fn workload(kind: Workload, count: Option<u64>) -> Exit {
    match kind.run(count.unwrap_or_else(|| kind.default_count())) {
        Ok(()) => Exit::SUCCESS,
        Err(e) => fail(
            Exit::FAILURE,
            format!("the {} workload failed: {e}", kind.name()),
        ),
    }
}
