//! What changed, and when, over a machine's stored runs: each row's change
//! points (`analysis::changes`), the rows that moved at one run gathered
//! into one event, and each event tied to what the inventory says changed
//! between the run before it and the run it starts at. Over many machines'
//! histories (a fleet's), the events that share their cause gathered too.

use super::inventory_diff::{InventoryChange, inventory_changes};
use crate::analysis::changes::{
    Search, change_points_of_runs, lone_runs, own_floor, precise_enough, read_as_neighbours, step,
    without_lone_runs,
};
use crate::analysis::figure::Figure;
use crate::analysis::stats::{mean, median_of, student_t_975};
use crate::analysis::verdict::percent_change;
use crate::inventory::identity::Identity;
use crate::store::history::{
    History, HistoryError, MachineKey, MachineSeries, RowSeries, SeriesRun,
};
use serde::Serialize;
use std::collections::BTreeMap;

/// The change points over every machine of the histories read.
#[derive(Debug, Clone, Serialize)]
pub struct Timeline {
    /// A change smaller than this is not an event's row, whatever its test.
    pub threshold_pct: f64,
    /// The significance each split is held to.
    pub alpha: f64,
    /// The fewest runs on either side of a change.
    pub min_side: usize,
    pub machines: Vec<MachineTimeline>,
    /// Where two machines or more moved at events with the same inventory
    /// change: the fleet's view of one cause.
    pub shared: Vec<SharedCause>,
}

/// One machine's runs and the events over them.
#[derive(Debug, Clone, Serialize)]
pub struct MachineTimeline {
    pub machine: MachineKey,
    /// Which history it was read from.
    pub history: String,
    pub runs: Vec<SeriesRun>,
    /// Older runs of the machine not read (`history::SERIES_RUNS`).
    pub older_left_out: usize,
    /// Rows with a figure in at least one run.
    pub rows: usize,
    pub events: Vec<Event>,
    /// Each row's figure over the runs, for a plot: (row, run index,
    /// figure in ticks).
    #[serde(skip)]
    pub series: BTreeMap<(String, String), RowSeries>,
}

/// Rows whose level moved at one run, and what changed there.
#[derive(Debug, Clone, Serialize)]
pub struct Event {
    /// The run the new level starts at.
    pub run: i64,
    pub started_at: String,
    /// The last run before it that measured one of its rows: what the
    /// inventory is compared with.
    pub since_run: i64,
    pub rows: Vec<RowStep>,
    /// What the inventory says changed from `since_run` to `run`; empty
    /// where nothing it records did.
    pub changed: Vec<InventoryChange>,
    /// mitbench's own build, where it changed.
    pub build: Option<(String, String)>,
    /// The quiet canary's median from the runs before to the runs after
    /// (up to the events around), in percent: the host's own level, which
    /// moves with a busy neighbour and with a hook on every syscall alike.
    pub canary_change_pct: Option<f64>,
}

/// One row's change at an event.
#[derive(Debug, Clone, Serialize)]
pub struct RowStep {
    pub probe: String,
    pub variant: String,
    pub family: String,
    /// Geometric means of the two sides, in ticks.
    pub before_ticks: f64,
    pub after_ticks: f64,
    /// after / before - 1, in percent, with its 95% interval.
    #[serde(flatten, with = "crate::store::results::fields::as_change_pct")]
    pub change: Figure,
    pub runs_before: usize,
    pub runs_after: usize,
    pub p_value: f64,
}

/// Events on several machines with the same inventory change.
#[derive(Debug, Clone, Serialize)]
pub struct SharedCause {
    pub changed: Vec<InventoryChange>,
    pub hosts: Vec<HostMove>,
}

/// One machine's event under a shared cause.
#[derive(Debug, Clone, Serialize)]
pub struct HostMove {
    pub host: String,
    pub run: i64,
    pub rows: usize,
    /// The median of its rows' changes, in percent.
    pub median_change_pct: f64,
}

impl Timeline {
    /// The change points of every machine in `histories`, at `threshold_pct`.
    pub fn of(
        histories: &[History],
        threshold_pct: f64,
        search: Search,
    ) -> Result<Timeline, HistoryError> {
        let mut machines = Vec::new();
        for history in histories {
            for series in history.machine_series()? {
                machines.push(machine_timeline(history, series, threshold_pct, search)?);
            }
        }
        let shared = shared_causes(&machines);
        Ok(Timeline {
            threshold_pct,
            alpha: search.alpha,
            min_side: search.min_side,
            machines,
            shared,
        })
    }
}

/// The report's timeline: the events of the stored runs of the machine
/// `id`, quick or standard as the run is (the history may hold many
/// machines). None where it holds none of them.
pub fn report_timeline(
    history: &History,
    id: &Identity,
    quick: bool,
) -> Result<Option<MachineTimeline>, HistoryError> {
    history.machine_series().and_then(|all| {
        all.into_iter()
            .find(|m| {
                m.machine.hostname == id.hostname
                    && m.machine.machine_id == id.machine_id
                    && m.machine.quick == quick
            })
            .map(|series| {
                machine_timeline(
                    history,
                    series,
                    super::DEFAULT_THRESHOLD_PCT,
                    Search::default(),
                )
            })
            .transpose()
    })
}

/// The events of one machine's `series`, read from `history`.
pub fn machine_timeline(
    history: &History,
    series: MachineSeries,
    threshold_pct: f64,
    search: Search,
) -> Result<MachineTimeline, HistoryError> {
    let MachineSeries {
        machine,
        runs,
        older_left_out,
        rows,
    } = series;
    // (run index of the new level) -> (the row steps, the latest run index
    // before it that measured one of them).
    let mut at: BTreeMap<usize, (Vec<RowStep>, usize)> = BTreeMap::new();
    let lone = lone_hosts(&runs);
    for (key, row) in &rows {
        for (run, since, step) in row_steps(key, row, &lone, threshold_pct, search) {
            let entry = at.entry(run).or_insert_with(|| (Vec::new(), since));
            entry.1 = entry.1.max(since);
            entry.0.push(step);
        }
    }
    let boundaries: Vec<usize> = at.keys().copied().collect();
    let mut events = Vec::new();
    for (k, (run, (steps, since))) in at.into_iter().enumerate() {
        let (old, new) = (history.load(runs[since].id)?, history.load(runs[run].id)?);
        let build = (old.build.git_commit != new.build.git_commit)
            .then(|| (old.build.git_commit.clone(), new.build.git_commit.clone()));
        let from = if k == 0 { 0 } else { boundaries[k - 1] };
        let to = boundaries.get(k + 1).copied().unwrap_or(runs.len());
        events.push(Event {
            run: runs[run].id,
            started_at: runs[run].started_at.clone(),
            since_run: runs[since].id,
            rows: steps,
            changed: inventory_changes(&old, &new),
            build,
            canary_change_pct: canary_change(&runs[from..run], &runs[run..to]),
        });
    }
    Ok(MachineTimeline {
        machine,
        history: history.path().display().to_string(),
        runs,
        older_left_out,
        rows: rows.len(),
        events,
        series: rows,
    })
}

/// A row's change points as (run index of the new level, run index of the
/// point before it, the step) for each change of at least the threshold.
fn row_steps(
    (probe, variant): &(String, String),
    row: &RowSeries,
    lone_host: &[bool],
    threshold_pct: f64,
    search: Search,
) -> Vec<(usize, usize, RowStep)> {
    // A run's own sampling variance of the log of its figure, from its
    // rounds' interval (zero where it has none); runs far less precise than
    // the row's typical one are not read.
    let own_of = |f: &Figure| -> f64 {
        f.ci95.map_or(0.0, |[lo, hi]| {
            let sd = (hi.max(f64::MIN_POSITIVE).ln() - lo.max(f64::MIN_POSITIVE).ln())
                / (2.0 * student_t_975(f64::INFINITY));
            if sd.is_finite() { sd * sd } else { 0.0 }
        })
    };
    let all_own: Vec<f64> = row.points.iter().map(|(_, f)| own_of(f)).collect();
    let (points, own): (Vec<&(usize, Figure)>, Vec<f64>) = row
        .points
        .iter()
        .zip(all_own.iter().copied())
        .zip(precise_enough(&all_own))
        .filter_map(|(point, precise)| precise.then_some(point))
        .unzip();
    let logs: Vec<f64> = points.iter().map(|(_, f)| f.value.ln()).collect();
    // A run where the host stood alone is no level of any row, however
    // little the row's own series shows it.
    let host_alone: Vec<bool> = points.iter().map(|(run, _)| lone_host[*run]).collect();
    let logs = read_as_neighbours(&logs, &host_alone);
    // The series as the search read it: a lone run is no side's level.
    let read = without_lone_runs(&logs);
    let found = change_points_of_runs(&logs, &own, search);
    let mut steps = Vec::new();
    for (i, change) in found.iter().enumerate() {
        let from = if i == 0 { 0 } else { found[i - 1].at };
        let to = found.get(i + 1).map_or(read.len(), |c| c.at);
        let (before, after) = (&read[from..change.at], &read[change.at..to]);
        let floor = [
            own_floor(&own, from..change.at),
            own_floor(&own, change.at..to),
        ];
        let (size, p_value) = step(before, after, floor);
        let change_pct = size.map(|log| log.exp_m1() * 100.0);
        if change_pct.value.abs() < threshold_pct {
            continue;
        }
        steps.push((
            points[change.at].0,
            points[change.at - 1].0,
            RowStep {
                probe: probe.clone(),
                variant: variant.clone(),
                family: row.family.clone(),
                before_ticks: mean(before).exp(),
                after_ticks: mean(after).exp(),
                change: change_pct,
                runs_before: before.len(),
                runs_after: after.len(),
                p_value,
            },
        ));
    }
    steps
}

/// Which of the machine's runs stood alone by their quiet canary (the
/// host's own level: a busy hour, a compile beside the run), as a row's
/// lone run is read (`changes::lone_runs`); runs without one are not.
fn lone_hosts(runs: &[SeriesRun]) -> Vec<bool> {
    let with_canary: Vec<(usize, f64)> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.quiet_canary.filter(|c| *c > 0.0).map(|c| (i, c.ln())))
        .collect();
    let canaries: Vec<f64> = with_canary.iter().map(|(_, c)| *c).collect();
    let mut lone = vec![false; runs.len()];
    for ((i, _), alone) in with_canary.iter().zip(lone_runs(&canaries)) {
        lone[*i] = alone;
    }
    lone
}

/// The quiet canary's median after over before, less one, in percent.
fn canary_change(before: &[SeriesRun], after: &[SeriesRun]) -> Option<f64> {
    let median = |runs: &[SeriesRun]| {
        median_of(
            &runs
                .iter()
                .filter_map(|r| r.quiet_canary)
                .collect::<Vec<_>>(),
        )
    };
    Some(percent_change(median(before)?, median(after)?))
}

/// Events of two machines or more whose inventory changed alike.
fn shared_causes(machines: &[MachineTimeline]) -> Vec<SharedCause> {
    let mut by_cause: BTreeMap<String, SharedCause> = BTreeMap::new();
    for machine in machines {
        for event in machine.events.iter().filter(|e| !e.changed.is_empty()) {
            let key = event
                .changed
                .iter()
                .map(|c| format!("{}: {} -> {}", c.key, c.old, c.new))
                .collect::<Vec<_>>()
                .join("; ");
            let changes: Vec<f64> = event.rows.iter().map(|r| r.change.value).collect();
            by_cause
                .entry(key)
                .or_insert_with(|| SharedCause {
                    changed: event.changed.clone(),
                    hosts: Vec::new(),
                })
                .hosts
                .push(HostMove {
                    host: machine.machine.hostname.clone(),
                    run: event.run,
                    rows: event.rows.len(),
                    median_change_pct: median_of(&changes).unwrap_or(0.0),
                });
        }
    }
    by_cause
        .into_values()
        .filter(|cause| cause.hosts.len() >= 2)
        .collect()
}
