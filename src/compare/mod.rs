//! Two runs side by side: what changed on the machine, which rows moved
//! beyond noise, and which mitigation each move is consistent with. The
//! comparison is a model of its own; `export::compare` renders it.

pub mod attribution;
mod change;
mod fleet;
mod inventory_diff;

pub use attribution::{MITIGATIONS, Mitigation};
pub use change::{Verdict, change_interval, verdict, widened};

use attribution::{attribute, in_run};
use change::{interval_from_cis, percent_change};
pub use fleet::{Fleet, FleetCell, FleetRow, FleetRun, fleet};
pub use inventory_diff::{InventoryChange, inventory_changes};

use crate::harness::rounds::Basis;
use crate::results::{Record, RunDocument};
use serde::Serialize;

/// Default: a change below 2% is `~` whatever its interval.
pub const DEFAULT_THRESHOLD_PCT: f64 = 2.0;

/// A run as the comparison names it.
#[derive(Debug, Clone, Serialize)]
pub struct RunLabel {
    /// How the user named it (id, last~1, a path).
    pub name: String,
    pub started_at: String,
    pub host: String,
    pub kernel: String,
    pub quiet_canary_ticks: f64,
}

/// One row present and measured in both runs.
#[derive(Debug, Clone, Serialize)]
pub struct RowChange {
    pub family: String,
    pub id: String,
    pub variant: String,
    pub item: String,
    pub old_ticks: f64,
    pub new_ticks: f64,
    pub old_ns: f64,
    pub new_ns: f64,
    /// new / old - 1, in percent.
    pub change_pct: f64,
    /// 95% interval of the change: a bootstrap over both runs' rounds
    /// widened by both runs' machine drift, or where either has too few
    /// rounds, from their published run-to-run intervals.
    pub change_ci95_pct: Option<[f64; 2]>,
    /// The two runs' machine-drift terms together (in quadrature), in
    /// percent: what the interval was widened by. None where neither run
    /// measured its drift.
    pub machine_drift_pct: Option<f64>,
    /// "rounds" or "intervals": what the interval came from.
    pub interval_from: &'static str,
    pub verdict: Verdict,
    /// Mitigations an inventory change switched that tax this row.
    pub consistent_with: Vec<String>,
}

/// A row that cannot be compared, and why.
#[derive(Debug, Clone, Serialize)]
pub struct RowGap {
    pub id: String,
    pub variant: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

/// Changed rows grouped under the inventory change that can explain them.
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    pub mitigation: String,
    pub why: String,
    pub source: String,
    /// The inventory changes that switch it.
    pub because: Vec<String>,
    /// "probe variant" of each changed row it taxes.
    pub rows: Vec<String>,
}

/// An in-run A/B row of the new run: attributed by construction.
#[derive(Debug, Clone, Serialize)]
pub struct InRun {
    pub id: String,
    pub variant: String,
    pub baseline: String,
    pub ratio: f64,
    pub ratio_ci95: Option<[f64; 2]>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunComparison {
    pub old: RunLabel,
    pub new: RunLabel,
    pub threshold_pct: f64,
    /// Different machines or CPUs, different mitbench builds.
    pub warnings: Vec<String>,
    /// The quiet null-syscall canary's change between the runs, percent:
    /// how far the machine's own speed moved.
    pub canary_change_pct: f64,
    pub inventory: Vec<InventoryChange>,
    pub rows: Vec<RowChange>,
    /// Rows in one run only, or unsupported or unmeasured in one.
    pub gaps: Vec<RowGap>,
    pub explained: Vec<Explanation>,
    /// Changed rows no inventory change explains: noise, firmware, the
    /// host, or a mitigation mitbench does not know yet.
    pub unexplained: Vec<String>,
    pub in_run: Vec<InRun>,
}

impl RunComparison {
    /// Each probe family with a compared row, in the families' order,
    /// beside its rows: the sections every rendering is made of.
    pub fn by_family(&self) -> Vec<(&'static crate::probes::Family, Vec<&RowChange>)> {
        crate::probes::by_family(&self.rows, |r| &r.family)
    }

    /// The largest lower bound of a slower row's change: how much slower
    /// than the old run a row is at least, beyond noise.
    pub fn worst_slowdown_pct(&self) -> Option<f64> {
        self.rows
            .iter()
            .filter(|r| r.verdict == Verdict::Slower)
            .map(|r| r.change_ci95_pct.map_or(r.change_pct, |ci| ci[0]))
            .max_by(f64::total_cmp)
    }
}

pub fn compare(
    old: &RunDocument,
    old_name: &str,
    new: &RunDocument,
    new_name: &str,
    threshold_pct: f64,
) -> RunComparison {
    let inventory = inventory_changes(old, new);
    let mut rows = Vec::new();
    let mut gaps = Vec::new();
    for n in &new.results {
        match old
            .results
            .iter()
            .find(|o| o.id == n.id && o.variant == n.variant)
        {
            Some(o) => match row_change(o, n, threshold_pct) {
                Some(row) => rows.push(row),
                None => gaps.push(gap(Some(o), Some(n))),
            },
            None => gaps.push(gap(None, Some(n))),
        }
    }
    for o in &old.results {
        if !new
            .results
            .iter()
            .any(|n| n.id == o.id && n.variant == o.variant)
        {
            gaps.push(gap(Some(o), None));
        }
    }
    let (explained, unexplained) = attribute(&mut rows, &inventory);
    RunComparison {
        old: label(old, old_name),
        new: label(new, new_name),
        threshold_pct,
        warnings: warnings(old, new),
        canary_change_pct: percent_change(
            old.machine_states.model.quiet_canary,
            new.machine_states.model.quiet_canary,
        ),
        inventory,
        rows,
        gaps,
        explained,
        unexplained,
        in_run: in_run(new),
    }
}

fn label(doc: &RunDocument, name: &str) -> RunLabel {
    RunLabel {
        name: name.to_string(),
        started_at: doc.started_at.clone(),
        host: doc.inventory.identity.hostname.clone(),
        kernel: doc.inventory.kernel.release.clone(),
        quiet_canary_ticks: doc.machine_states.model.quiet_canary,
    }
}

fn warnings(old: &RunDocument, new: &RunDocument) -> Vec<String> {
    let (a, b) = (&old.inventory, &new.inventory);
    let mut warnings = Vec::new();
    if a.identity.machine_id != b.identity.machine_id || a.identity.hostname != b.identity.hostname
    {
        warnings.push(format!(
            "the runs come from different machines ({} and {}): every row may differ for that alone",
            a.identity.hostname, b.identity.hostname
        ));
    }
    if a.cpu.model_name != b.cpu.model_name {
        warnings.push(format!(
            "different CPUs: {} and {}",
            a.cpu.model_name, b.cpu.model_name
        ));
    }
    if old.build.git_commit != new.build.git_commit {
        warnings.push(format!(
            "different mitbench builds ({} and {}): a probe may have changed",
            old.build.git_commit, new.build.git_commit
        ));
    }
    warnings
}

/// The round figures the headline cost is the median of.
fn headline_rounds(record: &Record) -> Vec<f64> {
    let quiet_only = record
        .cost
        .as_ref()
        .is_some_and(|c| c.estimator == Basis::QuietRounds);
    record
        .rounds
        .each
        .iter()
        .filter(|r| !quiet_only || r.state == "quiet")
        .map(|r| r.ticks)
        .filter(|t| t.is_finite() && *t > 0.0)
        .collect()
}

fn row_change(old: &Record, new: &Record, threshold_pct: f64) -> Option<RowChange> {
    let (oc, nc) = (old.cost.as_ref()?, new.cost.as_ref()?);
    let seed = old
        .id
        .bytes()
        .chain(old.variant.bytes())
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
    let from_rounds = change_interval(&headline_rounds(old), &headline_rounds(new), seed);
    let change_pct = percent_change(oc.ticks, nc.ticks);
    let drift = match (oc.machine_drift_pct, nc.machine_drift_pct) {
        (None, None) => None,
        (o, n) => Some(o.unwrap_or(0.0).hypot(n.unwrap_or(0.0))),
    };
    let (ci, interval_from) = match from_rounds {
        Some(ci) => (
            Some(widened(ci, change_pct, drift.unwrap_or(0.0))),
            "rounds",
        ),
        None => (
            interval_from_cis(oc.interval_ticks(), nc.interval_ticks()),
            "intervals",
        ),
    };
    Some(RowChange {
        family: new.family.clone(),
        id: new.id.clone(),
        variant: new.variant.clone(),
        item: new.item.clone(),
        old_ticks: oc.ticks,
        new_ticks: nc.ticks,
        old_ns: oc.ns,
        new_ns: nc.ns,
        change_pct,
        change_ci95_pct: ci,
        machine_drift_pct: drift,
        interval_from,
        verdict: verdict(change_pct, ci, threshold_pct),
        consistent_with: Vec::new(),
    })
}

fn why_not(record: &Record) -> String {
    match &record.unsupported {
        Some(u) => format!("unsupported: {}", u.reason),
        None if record.rounds.interrupted => "interrupted".to_string(),
        None => "not measured".to_string(),
    }
}

fn gap(old: Option<&Record>, new: Option<&Record>) -> RowGap {
    let any = old.or(new).expect("a gap has a side");
    let side = |r: Option<&Record>| match r {
        None => Some("absent".to_string()),
        Some(r) if r.cost.is_none() => Some(why_not(r)),
        Some(_) => None,
    };
    RowGap {
        id: any.id.clone(),
        variant: any.variant.clone(),
        old: side(old),
        new: side(new),
    }
}
