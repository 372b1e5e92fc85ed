//! Two runs side by side: what changed on the machine, which rows moved
//! beyond noise, and which mitigation each move is consistent with. The
//! comparison is a model of its own; `export::compare` renders it.

mod explain;
mod fleet;
mod history_noise;
mod hook_toll;
mod inventory_diff;
mod shift;
mod summary;
mod timeline;

use crate::analysis::contrast;
pub use crate::analysis::contrast::OutsideEvidence;
pub use crate::analysis::contrast::{BootNoise, Decided, NoiseLevel};
use crate::analysis::figure::{Figure, Reported};
use crate::analysis::noise::{self, RunFigure, Spread};
pub use crate::analysis::noise::{Evidence, Learned, RunTime};
pub use crate::analysis::verdict::{Verdict, verdict};
use crate::store::results::RowKey;

use crate::analysis::verdict::percent_change;
pub use explain::IN_RUN_AB;
use explain::{explain, in_run};
pub use fleet::{Fleet, FleetCell, FleetRow, FleetRun, fleet};
pub use history_noise::HistoryNoise;
pub use hook_toll::HookToll;
pub use inventory_diff::{InventoryChange, inventory_changes};
pub use shift::{LevelShift, ShiftCause};
pub use summary::{CHANGES_LISTED, Finding, FindingKind};
pub use timeline::{
    Event, HostMove, MachineTimeline, RowStep, SharedCause, Timeline, machine_timeline,
    report_timeline,
};

use crate::analysis::rounds::across_forks;
use crate::store::results::at_speed::{RowAtSpeed, common_speed, paired, speeds_at};
use crate::store::results::{EqualSpeed, Record, RunDocument};
use serde::Serialize;

/// Default: a change below 1% is `~` whatever its interval. Read at one
/// reference speed, a comparison of a few runs a side resolves changes of
/// a few percent, and the issue it answers asks for 1%.
pub const DEFAULT_THRESHOLD_PCT: f64 = 1.0;

pub use crate::analysis::verdict::FALSE_DISCOVERY_RATE;

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
    #[serde(flatten)]
    pub key: RowKey,
    pub old_ticks: f64,
    pub new_ticks: f64,
    pub old_ns: f64,
    pub new_ns: f64,
    /// new / old - 1, in percent (each side's geometric mean over its
    /// runs), with its 95% interval: the change plus and minus how far the
    /// row moves between runs when nothing changed (see [`noise`]). The
    /// JSON writes it as `figure`.
    #[serde(skip)]
    pub change_pct: Figure,
    /// The change in the one shape every document writes a figure in:
    /// percent, `basis` `change`, the degrees of freedom of the spread it
    /// was held to, and the levels of noise it counted (`noise_from`'s).
    pub figure: Reported,
    /// The smallest true change this comparison marks in 80% of
    /// repetitions, percent, as its verdict is applied: the estimate past
    /// the threshold and past the noise's cut at the level the false
    /// discovery control over the comparison's rows asks of one changed
    /// row (`noise::Judged::detectable`).
    pub smallest_detectable_pct: Option<f64>,
    /// Where the noise's cut lies beyond the threshold: runs a side would
    /// need for a change of the threshold, once seen, to be marked, beside
    /// the noise more runs do not average away (1000,
    /// `noise::OUT_OF_REACH`: no number of runs would).
    pub runs_to_resolve: Option<usize>,
    /// The two-sided p-value of the change under no change, from the noise
    /// that decided; the comparison's rows are held to a false discovery
    /// rate over all of them (Benjamini-Hochberg) with it.
    pub p_value: Option<f64>,
    /// Every level of noise the comparison counted for the row, or says
    /// it could not (`contrast::NoiseLevel`).
    pub noise_from: Vec<NoiseLevel>,
    /// Runs on each side.
    pub runs: [usize; 2],
    /// Which level set the spread the verdict is held to: within runs,
    /// within and between pooled, or between runs alone.
    pub decided_by: Option<Decided>,
    /// The machine's drift between when the two sides ran, as a 95%
    /// half-width in percent: part of the noise, and one that more runs a
    /// side do not average away unless the sides alternate.
    pub walk_pct: Option<f64>,
    /// Why the row cannot have a verdict although it has figures (one side
    /// the slow state's figure, the other the quiet state's).
    pub note: Option<String>,
    pub verdict: Verdict,
    /// Mitigations an inventory change switched that tax this row.
    pub consistent_with: Vec<String>,
    /// The noise the verdict was held to, which the power is read from
    /// once the comparison knows how many rows it tests.
    #[serde(skip)]
    power: Option<PowerNoise>,
    /// Where one side's figure is the slow state's and the other's the
    /// quiet state's (`note`): the verdict and p-value as measured, which
    /// stand where the levels moved by a change between the runs
    /// ([`RowChange::compare_at_levels`]).
    #[serde(skip)]
    at_levels: Option<AtLevels>,
}

/// A row held apart as slow against quiet, as it would read compared.
#[derive(Debug, Clone, Copy)]
struct AtLevels {
    verdict: Verdict,
    p_value: Option<f64>,
    /// Whether the new side's figure is the slow state's.
    new_slow: bool,
}

impl AtLevels {
    /// Why the row is held apart: one side's figure the slow state's and
    /// the other's the quiet state's (`old` the old side's records).
    fn held_apart(&self, old: &[&Record]) -> Option<String> {
        (old.iter().any(|r| r.slow_state()) != self.new_slow).then(|| {
            "one side's figure is the slow state's (no quiet round), the other's the quiet \
             state's: not comparable"
                .to_string()
        })
    }
}

/// What a row's power is read from: the spread its verdict was held to,
/// the evidence more runs would average, and the noise they would not.
#[derive(Debug, Clone, Copy)]
struct PowerNoise {
    spread: Spread,
    evidence: Option<Evidence>,
    fixed: noise::Walk,
}

impl RowChange {
    /// Compares a row held apart as slow against quiet at the levels its
    /// sides stood on, where the syscall path's level moved up by a change
    /// between the runs (a seccomp filter, a hook) on the side whose
    /// figure is the slow state's (`new_went_up`: the new side's level is
    /// the higher): that side's rounds stood at its run's own level, which
    /// is the change. A slow figure on the lower side is a host's slow
    /// stretch and stays apart.
    fn compare_at_levels(&mut self, new_went_up: bool) {
        match self.at_levels {
            Some(at) if at.new_slow == new_went_up => {
                self.verdict = at.verdict;
                self.p_value = at.p_value;
                self.note = None;
                self.at_levels = None;
            }
            _ => {}
        }
    }

    /// Whether the row's noise counts how far a whole run moves, so that a
    /// smallest detectable change can be backed.
    pub fn power_is_known(&self) -> bool {
        !self.noise_from.contains(&NoiseLevel::RunLevelUnknown)
    }

    /// Sets the smallest detectable change and the runs to resolve the
    /// threshold for the verdict as applied: `threshold_pct`, and the false
    /// discovery control over `tests` rows. Where how far a whole run moves
    /// is not known (one run a side and no history: `RunLevelUnknown`),
    /// none is claimed: the verdict stands on the forks alone, and a rate
    /// read from them was not what a repetition found (live, one run a
    /// side, rows moved by the printed 80% change were marked in 100% of
    /// 42).
    fn set_power(&mut self, threshold_pct: f64, tests: usize) {
        let Some(noise) = self.power else {
            return;
        };
        if !self.power_is_known() {
            return;
        }
        let judged = noise::Judged {
            threshold_log: (threshold_pct / 100.0).ln_1p(),
            tests,
        };
        self.smallest_detectable_pct = Some(judged.detectable(&noise.spread).exp_m1() * 100.0);
        self.runs_to_resolve = noise
            .evidence
            .filter(|_| judged.detectable(&noise.spread) > judged.resolved())
            .and_then(|e| e.runs_to_resolve(judged, noise.fixed));
    }
}

/// The levels of noise a change counted, by their JSON names, in order.
fn levels_named(levels: &[NoiseLevel]) -> String {
    let name = |level: &NoiseLevel| {
        let value = serde_json::to_value(level).ok()?;
        Some(value.get("level")?.as_str()?.to_string())
    };
    levels
        .iter()
        .filter_map(name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a comparison counted of a boot's own variance: a boot settles
/// layouts and page allocations that move a row as a change would.
#[derive(Debug, Clone, Serialize)]
pub struct Boots {
    pub sides_span_boots: bool,
    /// Boots of the old side's command line the history read it over.
    pub boots_seen: usize,
    /// Rows it was counted in.
    pub rows_counted: usize,
    pub summary: String,
}

impl Boots {
    fn of(span: bool, noise: &BootNoise, rows: &[RowChange]) -> Boots {
        let rows_counted = rows
            .iter()
            .filter(|r| {
                r.noise_from
                    .iter()
                    .any(|l| matches!(l, NoiseLevel::Boots { .. }))
            })
            .count();
        let summary = match (span, rows_counted) {
            (false, _) => "one boot: whatever a boot settles is the same on both sides".to_string(),
            (true, 0) => "the sides ran under different boots, and a boot's own variance is not \
                          known (the history holds no two boots of the old side's command line \
                          with these rows): each verdict holds within one boot's knowledge; a \
                          run on one more boot of that command line measures it"
                .to_string(),
            (true, n) => format!(
                "the sides ran under different boots: a boot's own variance counted in {n} of {} \
                 rows, from {} boots of the old side's command line in the history",
                rows.len(),
                noise.boots
            ),
        };
        Boots {
            sides_span_boots: span,
            boots_seen: noise.boots,
            rows_counted,
            summary,
        }
    }
}

/// A row that cannot be compared, and why.
#[derive(Debug, Clone, Serialize)]
pub struct RowGap {
    #[serde(flatten)]
    pub key: RowKey,
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
    #[serde(flatten)]
    pub key: RowKey,
    pub baseline: String,
    #[serde(flatten, with = "crate::store::results::fields::as_ratio")]
    pub ratio: Figure,
}

/// A figure of each side of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sides {
    pub old: f64,
    pub new: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunComparison {
    /// What it found, one line a finding, first and short ([`summary`]).
    pub summary: Vec<Finding>,
    pub old: RunLabel,
    pub new: RunLabel,
    pub threshold_pct: f64,
    /// Different machines or CPUs, different mitbench builds.
    pub warnings: Vec<String>,
    /// The quiet null-syscall canary's change between the runs, percent:
    /// how far the machine's own speed moved.
    pub canary_change_pct: f64,
    /// The machine's own speed on each side (the reference: work no
    /// mitigation touches, ticks per step, each side's geometric mean) and
    /// its change, percent: how much faster or slower the machine itself
    /// ran. Where every run has one, rows are compared at one reference
    /// speed, so this change is out of them. None for older documents.
    pub reference_ticks: Option<Sides>,
    pub reference_change_pct: Option<f64>,
    /// The syscall path's level read apart on the two sides, where it was:
    /// one finding, with what the runs tell of it and the rows that moved
    /// with it ([`shift`]).
    pub level_shift: Option<LevelShift>,
    pub inventory: Vec<InventoryChange>,
    /// Where the hooks on the syscall path are all that changed: what they
    /// cost one syscall ([`hook_toll`]).
    pub hook_toll: Option<HookToll>,
    /// How far this machine's figures move between runs, as the history
    /// has seen it: the median row's 95% half-width, percent, over the
    /// most earlier runs of the old side's conditions any row had. None
    /// where the history knows fewer than three such runs.
    pub between_runs_pct: Option<f64>,
    pub history_runs: Option<usize>,
    /// Whether the sides ran under different boots and what the
    /// comparison knew of a boot's own variance.
    pub boots: Boots,
    pub rows: Vec<RowChange>,
    /// Rows in one run only, or unsupported or unmeasured in one.
    pub gaps: Vec<RowGap>,
    pub explained: Vec<Explanation>,
    /// Changed rows no inventory change explains: noise, firmware, the
    /// host, or a mitigation mitbench does not know yet.
    pub unexplained: Vec<String>,
    pub in_run: Vec<InRun>,
    /// Rows with a p-value (every compared row with noise and no note),
    /// those marked among them, and how many of the marked are expected to
    /// be false at most (the false discovery rate times the marked).
    pub rows_tested: usize,
    pub rows_marked: usize,
    pub false_rows_expected: f64,
}

impl RunComparison {
    /// Each probe family with a compared row, in the families' order,
    /// beside its rows: the sections every rendering is made of.
    pub fn by_family(&self) -> Vec<(&'static crate::measure::probes::Family, Vec<&RowChange>)> {
        crate::measure::probes::by_family(&self.rows, |r| &r.key.family)
    }

    /// Changed rows no mitigation of an inventory change explains, but a
    /// change that can move any row can (`consistent_with` names it).
    pub fn broad_rows(&self) -> Vec<&RowChange> {
        self.rows
            .iter()
            .filter(|r| r.verdict != Verdict::Same && !r.consistent_with.is_empty())
            .filter(|r| {
                let name = format!("{} {}", r.key.id, r.key.variant);
                !self.explained.iter().any(|e| e.rows.contains(&name))
            })
            .collect()
    }

    /// Rows whose noise does not count how far a whole run moves (one run
    /// a side and no history of these conditions: `RunLevelUnknown`).
    pub fn rows_without_run_noise(&self) -> usize {
        self.rows.iter().filter(|r| !r.power_is_known()).count()
    }

    /// The largest lower bound of a slower row's change: how much slower
    /// than the old run a row is at least, beyond noise.
    pub fn worst_slowdown_pct(&self) -> Option<f64> {
        self.rows
            .iter()
            .filter(|r| r.verdict == Verdict::Slower)
            .map(|r| r.change_pct.ends()[0])
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
    compare_sets(
        &Side::one(old, old_name),
        &Side::one(new, new_name),
        threshold_pct,
        &|_, _| None,
        &BootNoise::default(),
    )
}

/// One side of a comparison: one run, or a set of runs of the same
/// selection, and how the user named it.
pub struct Side<'a> {
    pub name: String,
    pub runs: Vec<&'a RunDocument>,
}

impl<'a> Side<'a> {
    pub fn one(doc: &'a RunDocument, name: &str) -> Side<'a> {
        Side {
            name: name.to_string(),
            runs: vec![doc],
        }
    }

    fn first(&self) -> &'a RunDocument {
        self.runs[0]
    }

    /// When each run ran; empty unless every run says.
    fn times(&self) -> Vec<RunTime> {
        crate::store::results::run_times(self.runs.iter().copied())
    }

    /// Each run's machine states as the analysis modelled them.
    fn models(&self) -> impl Iterator<Item = &'a crate::analysis::states::StateModel> {
        self.runs.iter().map(|d| &d.machine_states.model)
    }

    /// The side's reference speed: its runs' geometric mean, where every
    /// run read one.
    fn reference(&self) -> Option<f64> {
        common_speed(self.runs.iter().copied())
    }
}

/// Two sides of one run or more each. `learned` gives, per (probe,
/// variant), what the history has seen the row do between runs of the
/// same conditions (see [`noise`]); `boot_noise` a boot's own variance per
/// row, as the history has seen it between boots of the old side's
/// command line (counted where the sides ran under different boots).
pub fn compare_sets(
    old: &Side,
    new: &Side,
    threshold_pct: f64,
    learned: &dyn Fn(&str, &str) -> Option<Learned>,
    boot_noise: &BootNoise,
) -> RunComparison {
    let mut comparison = compare_before_fdr([old, new], threshold_pct, learned, boot_noise);
    hold_to_one_family(std::slice::from_mut(&mut comparison), threshold_pct, true);
    comparison
}

/// [`compare_sets`] before its rows are held to the false discovery rate
/// (each row's verdict its own 5% test's): for a family of comparisons
/// held together ([`hold_to_one_family`]).
fn compare_before_fdr(
    [old, new]: [&Side; 2],
    threshold_pct: f64,
    learned: &dyn Fn(&str, &str) -> Option<Learned>,
    boot_noise: &BootNoise,
) -> RunComparison {
    let (first_old, first_new) = (old.first(), new.first());
    let boot_of = |doc: &RunDocument| doc.inventory.identity.boot_id.clone();
    let boots = [0, usize::from(boot_of(first_old) != boot_of(first_new))];
    let inventory = inventory_changes(first_old, first_new);
    let (old_times, new_times) = (old.times(), new.times());
    let at = common_speed(old.runs.iter().chain(&new.runs).copied());
    let (old_speeds, new_speeds) = (
        speeds_at(old.runs.iter().copied(), at),
        speeds_at(new.runs.iter().copied(), at),
    );
    let mut rows = Vec::new();
    let mut gaps = Vec::new();
    for n in &first_new.results {
        let olds: Vec<Option<&Record>> = old
            .runs
            .iter()
            .map(|d| d.record(&n.id, &n.variant))
            .collect();
        let news: Vec<Option<&Record>> = new
            .runs
            .iter()
            .map(|d| d.record(&n.id, &n.variant))
            .collect();
        match (present(&olds), present(&news)) {
            (Some(o), Some(nw)) => rows.push(row_change(
                &o,
                &nw,
                threshold_pct,
                OutsideEvidence {
                    history: learned(&n.id, &n.variant),
                    boot: boot_noise
                        .rows
                        .get(&(n.id.clone(), n.variant.clone()))
                        .map(|&e| (e, boot_noise.boots)),
                    ..OutsideEvidence::default()
                },
                boots,
                [&old_times, &new_times],
                [&old_speeds, &new_speeds],
            )),
            _ => gaps.push(gap(olds[0], news[0])),
        }
    }
    for o in &first_old.results {
        if first_new.record(&o.id, &o.variant).is_none() {
            gaps.push(gap(Some(o), None));
        }
    }
    let level_shift = shift::between(old, new, &inventory);
    if let Some(shift) = level_shift.as_ref().filter(|s| s.is_a_change()) {
        for row in &mut rows {
            row.compare_at_levels(shift.change_pct > 0.0);
        }
    }
    let (between_runs_pct, history_runs) = between_runs(first_new, learned);
    let mut warnings = warnings(first_old, first_new);
    for side in [old, new] {
        warnings.extend(set_warnings(side));
    }
    RunComparison {
        summary: Vec::new(),
        old: label(first_old, &old.name),
        new: label(first_new, &new.name),
        threshold_pct,
        warnings,
        canary_change_pct: percent_change(
            first_old.machine_states.model.level(),
            first_new.machine_states.model.level(),
        ),
        level_shift,
        reference_ticks: at.and(
            old.reference()
                .zip(new.reference())
                .map(|(old, new)| Sides { old, new }),
        ),
        reference_change_pct: at
            .and(old.reference().zip(new.reference()))
            .map(|(o, n)| percent_change(o, n)),
        inventory,
        hook_toll: None,
        between_runs_pct,
        history_runs,
        boots: Boots::of(boots[1] == 1, boot_noise, &rows),
        rows,
        gaps,
        explained: Vec::new(),
        unexplained: Vec::new(),
        in_run: in_run(first_new),
        rows_tested: 0,
        rows_marked: 0,
        false_rows_expected: 0.0,
    }
}

/// What the history learned of how far `run`'s rows move between runs:
/// the rows' median spread (95% half-width, percent) and the most runs a
/// row's spread stood on.
fn between_runs(
    run: &RunDocument,
    learned: &dyn Fn(&str, &str) -> Option<Learned>,
) -> (Option<f64>, Option<usize>) {
    let rows: Vec<Learned> = run
        .results
        .iter()
        .filter_map(|r| learned(&r.id, &r.variant))
        .collect();
    let spreads: Vec<f64> = rows
        .iter()
        .map(|l| l.evidence.half_width() * 100.0)
        .collect();
    (
        crate::analysis::stats::median_of(&spreads),
        rows.iter().map(|l| l.runs).max(),
    )
}

/// Holds the rows of `comparisons` to [`FALSE_DISCOVERY_RATE`] as one
/// family (a fleet's columns are one question: which rows differ from the
/// first host anywhere) and explains the marked rows; with `power`, reads
/// each row's power for the verdict as applied over them (a fleet shows
/// none, and 99 columns of it were half its time).
pub fn hold_to_one_family(comparisons: &mut [RunComparison], threshold_pct: f64, power: bool) {
    let rows = comparisons.iter_mut().flat_map(|c| c.rows.iter_mut());
    if power {
        hold_to_false_discovery_rate(rows, threshold_pct);
    } else {
        crate::analysis::verdict::hold_to_false_discovery_rate(
            rows.map(|r| (&mut r.verdict, r.p_value)),
        );
    }
    for c in comparisons {
        c.rows_tested = c.rows.iter().filter(|r| r.p_value.is_some()).count();
        c.rows_marked = c.rows.iter().filter(|r| r.verdict != Verdict::Same).count();
        c.false_rows_expected = FALSE_DISCOVERY_RATE * c.rows_marked as f64;
        (c.explained, c.unexplained) = explain(&mut c.rows, &c.inventory);
        if let Some(shift) = &mut c.level_shift {
            shift.gather(&c.rows, &mut c.unexplained);
        }
        c.hook_toll = hook_toll::of(&c.rows, &c.inventory);
        c.summary = summary::findings(c);
    }
}

/// Holds the rows' verdicts to [`FALSE_DISCOVERY_RATE`] over every row a
/// comparison tests (each row's own 5% test, run over some 300 rows, would
/// mark a dozen that did not change). Returns how many rows were tested.
/// Each row's power is then read for the verdict as applied over them
/// ([`RowChange::set_power`]).
pub fn hold_to_false_discovery_rate<'r>(
    rows: impl IntoIterator<Item = &'r mut RowChange>,
    threshold_pct: f64,
) -> usize {
    let mut rows: Vec<&mut RowChange> = rows.into_iter().collect();
    let tested = crate::analysis::verdict::hold_to_false_discovery_rate(
        rows.iter_mut().map(|r| (&mut r.verdict, r.p_value)),
    );
    for row in rows {
        row.set_power(threshold_pct, tested);
    }
    tested
}

/// Every run's record of a row, where every run measured it.
fn present<'d>(side: &[Option<&'d Record>]) -> Option<Vec<&'d Record>> {
    side.iter()
        .map(|r| r.filter(|r| r.cost.is_some()))
        .collect()
}

/// A set whose runs differ in machine, boot or build is not one set.
fn set_warnings(side: &Side) -> Vec<String> {
    let first = side.first();
    side.runs[1..]
        .iter()
        .flat_map(|doc| warnings(first, doc))
        .map(|w| format!("within {}: {w}", side.name))
        .collect()
}

fn label(doc: &RunDocument, name: &str) -> RunLabel {
    RunLabel {
        name: name.to_string(),
        started_at: doc.started_at.clone(),
        host: doc.inventory.identity.hostname.clone(),
        kernel: doc.inventory.kernel.release.clone(),
        quiet_canary_ticks: doc.machine_states.model.level(),
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

/// One row's change between a side of runs and another (each a record of
/// the row per run, every one with a figure), read by one contrast
/// ([`contrast::read`]): new less old in logs.
/// `outside` is what the comparison knows beyond the two sides (the
/// history's run-to-run noise of the row, a boot's variance) and `boots`
/// each side's boot (an index per boot).
/// `times` are when each side's runs ran (empty where unknown): the
/// machine's walk between them is part of the noise.
/// `speeds` say, run by run, the reference speed each side's figures are
/// read at (None throughout: the raw figures). Read at one reference speed
/// the machine's own speed is out of the figures, and with it the walk
/// between when the sides ran.
pub fn row_change(
    old: &[&Record],
    new: &[&Record],
    threshold_pct: f64,
    outside: OutsideEvidence,
    boots: [usize; 2],
    times: [&[RunTime]; 2],
    speeds: [&[Option<EqualSpeed>]; 2],
) -> RowChange {
    let (old, old_times) =
        noise::quiet_runs(&paired(old, speeds[0]), |(r, _)| r.slow_state(), times[0]);
    let (new, new_times) =
        noise::quiet_runs(&paired(new, speeds[1]), |(r, _)| r.slow_state(), times[1]);
    let times = [&old_times[..], &new_times[..]];
    let row = RowAtSpeed::of(vec![old, new]);
    let equal_speed = row.equal_speed;
    let (old_figures, new_figures) = (row.figures(0), row.figures(1));
    let (old, new) = (row.records(0), row.records(1));
    let (old, new) = (&old[..], &new[..]);
    // A side's figure is its runs' geometric mean, as a run's is its forks'.
    let side_figure = |side: &[RunFigure], of: fn(&RunFigure) -> f64| {
        across_forks(&side.iter().map(of).collect::<Vec<_>>())
    };
    let old_ticks = side_figure(&old_figures, |f| f.ticks.value);
    let new_ticks = side_figure(&new_figures, |f| f.ticks.value);
    let old_ns = side_figure(&old_figures, |f| f.ns);
    let new_ns = side_figure(&new_figures, |f| f.ns);
    let sets: Vec<contrast::Set> = [&old_figures, &new_figures]
        .into_iter()
        .enumerate()
        .map(|(i, runs)| contrast::Set {
            runs,
            times: times[i],
            distance: row.distance(i),
            boot: boots[i],
        })
        .collect();
    let read = contrast::read(
        &sets,
        &[(0, -1.0), (1, 1.0)],
        &OutsideEvidence {
            carried_se: row.joint.map(|j| j.se).filter(|_| equal_speed),
            ..outside
        },
    );
    // The change is read on the log scale, where the noise is.
    let change_log = (new_ticks / old_ticks).ln();
    let change = Figure::new(
        change_log.exp_m1() * 100.0,
        read.half_width()
            .map(|n| [change_log - n, change_log + n].map(|l| l.exp_m1() * 100.0)),
    );
    let at_levels = AtLevels {
        verdict: verdict(change.value, change.ci95, threshold_pct),
        p_value: read.p_value(change_log, (threshold_pct / 100.0).ln_1p()),
        new_slow: new.iter().any(|r| r.slow_state()),
    };
    let note = at_levels.held_apart(old);
    let (verdict, p_value) = (at_levels.verdict, at_levels.p_value);
    let (verdict, at_levels) = match note {
        Some(_) => (Verdict::Same, Some(at_levels)),
        None => (verdict, None),
    };
    // Its power is read once the comparison holds its rows to the false
    // discovery rate over all of them (`hold_to_false_discovery_rate`).
    RowChange {
        key: RowKey::of(new[0]),
        old_ticks,
        new_ticks,
        old_ns,
        new_ns,
        change_pct: change,
        figure: Reported {
            df: read.spread.map(|s| s.df),
            ..Reported::of(change, "%", "change", levels_named(&read.levels))
        },
        smallest_detectable_pct: None,
        runs_to_resolve: None,
        p_value: p_value.filter(|_| note.is_none()),
        walk_pct: (read.drift.var > 0.0).then(|| read.drift.half_width() * 100.0),
        noise_from: read.levels.clone(),
        decided_by: read.decided_by,
        runs: [old.len(), new.len()],
        note,
        verdict,
        consistent_with: Vec::new(),
        power: read.spread.map(|spread| PowerNoise {
            spread,
            evidence: read.per_run,
            fixed: read.fixed,
        }),
        at_levels,
    }
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
        key: RowKey::of(any),
        old: side(old),
        new: side(new),
    }
}
