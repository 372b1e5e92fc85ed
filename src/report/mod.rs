//! Results as records (one per probe variant), the run document that holds
//! them, and its two renderings: a terminal table and JSON.

mod listing;
mod phase_table;
mod table;

pub use listing::render_listing;
pub use table::render as render_table;

use crate::harness::phases::PhaseCost;
use crate::harness::rounds::{self, Basis, Pair};
use crate::harness::states::{MachineStates, StateModel};
use crate::harness::stats::{self, Amortization};
use crate::harness::{Settings, tsc::TscFrequency};
use crate::inventory::Inventory;
use crate::probes::{Figure, ProbeInfo};
use crate::schedule::{ProbeRounds, Round, Stop, VariantRounds};
use serde::Serialize;
use serde_json::Value;
use std::io::Write;
use std::path::Path;

/// Bumped whenever a field changes meaning or disappears. 2: figures from
/// rounds (`cost_*` replaces `median_*`), machine states, paired ratios,
/// counters from a counting round.
pub const SCHEMA_VERSION: u32 = 2;

/// One probe variant's result, computed once from its rounds. Statistics
/// are null when it was not measured.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Record {
    pub id: String,
    pub family: String,
    pub variant: String,
    pub params: Value,
    /// What one item is; every per-item figure is per one of these.
    pub item: String,
    /// The variant of the same probe that ratios and deltas are against.
    pub baseline: Option<String>,
    /// Null, or why this machine cannot run the variant.
    pub unsupported: Option<String>,
    /// CPUs the measured work ran on, measuring thread first.
    pub cpus: Vec<usize>,

    /// The headline cost of one item: see `estimator`. Its interval is a
    /// two-level bootstrap over rounds, then samples inside them.
    pub cost_ticks: Option<f64>,
    pub cost_ns: Option<f64>,
    pub cost_ci95_ticks: Option<[f64; 2]>,
    pub cost_ci95_ns: Option<[f64; 2]>,
    /// CI half-width as a percentage of the cost.
    pub cost_ci_half_width_pct: Option<f64>,
    /// Which rounds the cost is the median of.
    pub estimator: Option<Basis>,
    /// Median over every round, whatever the machine's state: what a
    /// workload paid on average over this run. Not for comparing runs.
    pub all_states_median_ticks: Option<f64>,
    /// Median of the rounds the canary classed slow, and their share.
    pub slow_state_ticks: Option<f64>,
    pub slow_round_share: Option<f64>,
    /// Median of the rounds' own CI half-widths, as a percentage of the
    /// cost: the precision inside one round, not across runs.
    pub within_round_ci_half_width_pct: Option<f64>,
    /// Each used round's figure divided by the canary read beside it, the
    /// median over rounds: the cost in null syscalls at the same moment. It
    /// cancels a machine speed that drifts between runs, and it also moves
    /// with anything that changes the syscall path (a mitigation), so it
    /// compares runs of one boot, not boots.
    pub cost_in_canaries: Option<f64>,
    /// Rounds the cost is the median of, and rounds measured.
    pub rounds_used: Option<usize>,
    pub rounds_total: usize,
    /// Samples kept over all rounds.
    pub samples: Option<usize>,

    /// Against the baseline, per pair of rounds adjacent in time (the
    /// variant's round and the baseline's nearest one): the median ratio and
    /// difference, each with a bootstrap 95% interval over the pairs.
    pub ratio_to_baseline: Option<f64>,
    pub ratio_ci95: Option<[f64; 2]>,
    pub delta_ticks: Option<f64>,
    pub delta_ci95_ticks: Option<[f64; 2]>,
    pub pairs: Option<usize>,
    /// "quiet": pairs of two quiet rounds; "all": every pair.
    pub pairs_basis: Option<&'static str>,
    /// For probes with layout controls (the baseline's code at other
    /// alignments, `params.layout_control`): how far placement alone moved
    /// the figure, the largest |ratio - 1| of a control, in percent; and
    /// whether this variant's ratio is within it, so that its difference
    /// from the baseline cannot be told apart from placement.
    pub layout_spread_pct: Option<f64>,
    pub within_layout_spread: Option<bool>,

    /// Millions of items per second from the cost (`rate_unit`, e.g. "Mpps").
    pub rate_unit: Option<String>,
    pub rate_millions_per_s: Option<f64>,
    /// For probes with a toll: the share of the toll (toll variant minus
    /// reference variant) this variant avoids, in percent, and a
    /// conservative 95% interval from the three costs' intervals.
    pub toll_recovered_pct: Option<f64>,
    pub toll_recovered_ci95_pct: Option<[f64; 2]>,
    /// For items that are a buffer of bytes: its size, and the throughput
    /// the cost gives.
    pub bytes_per_item: Option<u64>,
    pub ticks_per_byte: Option<f64>,
    pub mib_per_s: Option<f64>,

    /// Why the variant got no more rounds.
    pub stopped: Option<Stop>,
    pub target_met: bool,
    pub interrupted: bool,
    /// Wall time of its rounds, set-up included, and the budget they had.
    pub elapsed_s: Option<f64>,
    pub budget_s: Option<f64>,
    pub base_batch: Option<u64>,
    pub dropped_migrated: Option<usize>,
    pub dropped_backwards: Option<usize>,
    /// Counter values from the counting round, or a string saying why
    /// there are none.
    pub counters: Value,
    /// "counting round": the counters were attached to a round of their
    /// own; no timed round carried them.
    pub counters_source: Option<&'static str>,
    /// The counting round's own cost per item: beside `cost_ticks` it shows
    /// what attaching the counters does to the figure.
    pub counting_round_ticks: Option<f64>,
    /// Cost per item of each phase the probe marked, and its share of the
    /// item's total: medians over the rounds `estimator` names.
    pub phases: Vec<PhaseCost>,
    /// For phased probes: what the phase marks (a fenced TSC read each)
    /// add to `cost_ticks`, estimated as marks per item times the measured
    /// cost of one mark.
    pub estimated_phase_marks_ticks: Option<f64>,
    /// What the probe said about this measurement.
    pub notes: Vec<String>,
    /// Figures the probe measured beside the cost per item: medians over
    /// the rounds `estimator` names.
    pub figures: Vec<Figure>,
    /// Every round, in the order measured.
    pub rounds: Vec<RoundRow>,
}

impl Record {
    /// The baseline's code at another alignment (`params.layout_control`).
    pub fn is_layout_control(&self) -> bool {
        self.params.get("layout_control") == Some(&Value::Bool(true))
    }
}

/// One round as the JSON carries it.
#[derive(Debug, Clone, Serialize)]
pub struct RoundRow {
    pub pass: usize,
    pub started_s: f64,
    /// The round's median cost per item and its own 95% interval.
    pub ticks: f64,
    pub ci95_ticks: [f64; 2],
    pub n: usize,
    pub min_ticks: f64,
    pub p99_ticks: f64,
    /// The fixed cost per sample the fit removed.
    pub fixed_ticks: f64,
    /// [items per batch, median ticks of its samples] for each batch size
    /// timed, the points the fit went through.
    pub batch_medians_ticks: Vec<[f64; 2]>,
    pub canary_before: Option<f64>,
    pub canary_after: Option<f64>,
    /// "quiet" or "slow", by the run's state model.
    pub state: &'static str,
    pub worker_pid: u32,
}

impl RoundRow {
    fn of(round: &Round, model: &StateModel) -> RoundRow {
        let s = &round.measured.measurement.per_item;
        RoundRow {
            pass: round.pass,
            started_s: round.started_s,
            ticks: s.median,
            ci95_ticks: [s.ci95.0, s.ci95.1],
            n: s.n,
            min_ticks: s.min,
            p99_ticks: s.p99,
            fixed_ticks: round.measured.measurement.fit.intercept,
            batch_medians_ticks: round
                .measured
                .measurement
                .size_medians
                .iter()
                .map(|&(n, m)| [n as f64, m])
                .collect(),
            canary_before: round.canary_before,
            canary_after: round.canary_after,
            state: if round.quiet(model) { "quiet" } else { "slow" },
            worker_pid: round.worker_pid,
        }
    }
}

/// The records of one probe, in its variants' order: each variant's
/// figures from its rounds, then what each is read against.
pub fn probe_records(
    probe: &ProbeRounds,
    model: &StateModel,
    tsc: &TscFrequency,
    settings: &Settings,
) -> Vec<Record> {
    let info = &probe.info;
    let seed = seed_of(info.id);
    let base = probe
        .variants
        .iter()
        .find(|v| v.variant.baseline && !v.rounds.is_empty());
    let mut records: Vec<Record> = probe
        .variants
        .iter()
        .filter(|v| v.unsupported.is_some() || !v.rounds.is_empty())
        .map(|v| {
            let mut record = variant_record(info, v, model, tsc, settings, seed);
            if let Some(base) = base
                && record.cost_ticks.is_some()
            {
                compare(&mut record, v, base, model, seed);
            }
            record
        })
        .collect();
    mark_layout_spread(&mut records);
    if let Some(derived) = &info.derived {
        let cost = |records: &[Record], name: &str| {
            records
                .iter()
                .find(|r| r.variant == name)
                .and_then(|r| Some((r.cost_ticks?, r.cost_ci95_ticks)))
        };
        let toll = cost(&records, derived.toll_variant);
        let reference = cost(&records, derived.reference_variant);
        for r in records.iter_mut() {
            r.rate_millions_per_s = r.cost_ns.filter(|ns| *ns > 0.0).map(|ns| 1000.0 / ns);
            if let (Some(toll), Some(reference), Some(cost)) = (toll, reference, r.cost_ticks)
                && toll.0 > reference.0
            {
                r.toll_recovered_pct = Some((toll.0 - cost) / (toll.0 - reference.0) * 100.0);
                r.toll_recovered_ci95_pct =
                    toll_recovered_interval(toll.1, reference.1, r.cost_ci95_ticks);
            }
        }
    }
    records
}

/// Sets the layout spread on every record of a probe that has layout
/// controls, and on each other measured variant whether it is within it.
fn mark_layout_spread(records: &mut [Record]) {
    let spread = records
        .iter()
        .filter(|r| r.is_layout_control())
        .filter_map(|r| r.ratio_to_baseline)
        .map(|ratio| (ratio - 1.0).abs() * 100.0)
        .reduce(f64::max);
    let Some(spread) = spread else {
        return;
    };
    for r in records.iter_mut() {
        r.layout_spread_pct = Some(spread);
        let is_baseline = r.baseline.as_deref() == Some(r.variant.as_str());
        if !r.is_layout_control() && !is_baseline {
            r.within_layout_spread = r
                .ratio_to_baseline
                .map(|ratio| (ratio - 1.0).abs() * 100.0 <= spread);
        }
    }
}

/// A stable seed per probe, so a re-analysis gives the same intervals.
fn seed_of(id: &str) -> u64 {
    id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

fn variant_record(
    info: &ProbeInfo,
    v: &VariantRounds,
    model: &StateModel,
    tsc: &TscFrequency,
    settings: &Settings,
    seed: u64,
) -> Record {
    let mut record = Record {
        id: info.id.to_string(),
        family: info.family.to_string(),
        variant: v.variant.name.to_string(),
        params: v.variant.params.clone(),
        item: info.item.to_string(),
        baseline: info.baseline().map(|b| b.name.to_string()),
        rate_unit: info.derived.as_ref().map(|d| d.rate_unit.to_string()),
        stopped: v.stopped,
        interrupted: v.stopped == Some(Stop::Interrupted),
        rounds_total: v.rounds.len(),
        ..Record::default()
    };
    if let Some(reason) = &v.unsupported {
        record.unsupported = Some(reason.clone());
        record.counters = Value::String("not measured".into());
        return record;
    }
    let Some(estimate) = rounds::estimate(&v.figures(model), model.two_states, seed) else {
        return record;
    };
    let to_ns = |t: f64| tsc.ticks_to_ns(t);
    let cost = estimate.cost;
    record.cost_ticks = Some(cost);
    record.cost_ns = Some(to_ns(cost));
    if let Some((lo, hi)) = estimate.ci95 {
        record.cost_ci95_ticks = Some([lo, hi]);
        record.cost_ci95_ns = Some([to_ns(lo), to_ns(hi)]);
    }
    let pct = |ticks: f64| (cost.abs() > 0.0).then(|| ticks / cost.abs() * 100.0);
    record.cost_ci_half_width_pct = estimate.half_width().and_then(pct);
    record.within_round_ci_half_width_pct = estimate.within_round_half_width.and_then(pct);
    record.estimator = Some(estimate.basis);
    record.all_states_median_ticks = Some(estimate.all_states);
    record.slow_state_ticks = estimate.slow_state;
    record.slow_round_share = Some(estimate.slow_share);
    record.rounds_used = Some(estimate.rounds_used);
    record.target_met = crate::schedule::meets_target(&estimate, settings);

    let used: Vec<&Round> = v
        .rounds
        .iter()
        .filter(|r| estimate.basis != Basis::QuietRounds || r.quiet(model))
        .collect();
    record.cpus = v.rounds[0].measured.cpus.clone();
    record.notes = first_seen(
        v.rounds
            .iter()
            .flat_map(|r| r.measured.notes.iter().cloned()),
    );
    let in_canaries: Vec<f64> = used
        .iter()
        .filter_map(|r| {
            let canary = (r.canary_before? + r.canary_after?) / 2.0;
            Some(r.measured.measurement.per_item.median / canary)
        })
        .collect();
    record.cost_in_canaries = stats::median_of(&in_canaries);
    record.figures = figures_over(&used);
    record.phases = phases_over(&used, seed);
    let marks: Vec<f64> = used
        .iter()
        .filter_map(|r| r.measured.measurement.phase_marks)
        .map(|m| m.estimated_ticks_per_item())
        .collect();
    record.estimated_phase_marks_ticks = stats::median_of(&marks);
    fn m(r: &Round) -> &crate::harness::Measurement {
        &r.measured.measurement
    }
    record.samples = Some(v.rounds.iter().map(|r| m(r).per_item.n).sum());
    record.dropped_migrated = Some(v.rounds.iter().map(|r| m(r).dropped_migrated).sum());
    record.dropped_backwards = Some(v.rounds.iter().map(|r| m(r).dropped_backwards).sum());
    record.base_batch = Some(m(&v.rounds[0]).base_batch);
    record.elapsed_s = Some(v.elapsed_s);
    record.budget_s = Some(m(&v.rounds[0]).budget_s);
    record.rounds = v.rounds.iter().map(|r| RoundRow::of(r, model)).collect();

    record.bytes_per_item = v
        .variant
        .params
        .get("bytes_per_item")
        .and_then(Value::as_u64);
    if let Some(bytes) = record.bytes_per_item.filter(|&b| b > 0) {
        record.ticks_per_byte = Some(cost / bytes as f64);
        let ns = to_ns(cost);
        record.mib_per_s = (ns > 0.0).then(|| bytes as f64 / ns * 1e9 / (1024.0 * 1024.0));
    }
    match &v.counting {
        Some(counting) => {
            record.counters_source = Some("counting round");
            record.counting_round_ticks = Some(counting.measurement.per_item.median);
            record.counters = match &counting.measurement.counters {
                Some(Ok(report)) => serde_json::to_value(report).unwrap_or(Value::Null),
                Some(Err(reason)) => Value::String(format!("unavailable: {reason}")),
                None => Value::String("not counted".into()),
            };
        }
        None => record.counters = Value::String("not counted: the run was interrupted".into()),
    }
    record
}

/// Ratio and difference against the baseline from pairs of rounds: each
/// round of `v` with the baseline's round that started nearest to it.
fn compare(
    record: &mut Record,
    v: &VariantRounds,
    base: &VariantRounds,
    model: &StateModel,
    seed: u64,
) {
    let pairs: Vec<Pair> = v
        .rounds
        .iter()
        .filter_map(|round| {
            let nearest = base.rounds.iter().min_by(|a, b| {
                (a.started_s - round.started_s)
                    .abs()
                    .total_cmp(&(b.started_s - round.started_s).abs())
            })?;
            Some(Pair {
                variant: round.measured.measurement.per_item.median,
                baseline: nearest.measured.measurement.per_item.median,
                quiet: round.quiet(model) && nearest.quiet(model),
            })
        })
        .collect();
    let Some(p) = rounds::paired(&pairs, model.two_states, seed) else {
        return;
    };
    record.ratio_to_baseline = Some(p.ratio);
    record.ratio_ci95 = p.ratio_ci95.map(|(lo, hi)| [lo, hi]);
    record.delta_ticks = Some(p.delta);
    record.delta_ci95_ticks = p.delta_ci95.map(|(lo, hi)| [lo, hi]);
    record.pairs = Some(p.pairs);
    record.pairs_basis = Some(p.basis);
}

/// (toll - cost) / (toll - reference) with each figure anywhere in its
/// interval: the widest range the three intervals allow. None when an
/// interval is missing or the toll's could be zero.
fn toll_recovered_interval(
    toll: Option<[f64; 2]>,
    reference: Option<[f64; 2]>,
    cost: Option<[f64; 2]>,
) -> Option<[f64; 2]> {
    let ([t_lo, t_hi], [r_lo, r_hi], [c_lo, c_hi]) = (toll?, reference?, cost?);
    let (den_lo, den_hi) = (t_lo - r_hi, t_hi - r_lo);
    if den_lo <= 0.0 {
        return None;
    }
    let (num_lo, num_hi) = (t_lo - c_hi, t_hi - c_lo);
    let candidates = [
        num_lo / den_lo,
        num_lo / den_hi,
        num_hi / den_lo,
        num_hi / den_hi,
    ];
    let lo = candidates.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = candidates.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some([lo * 100.0, hi * 100.0])
}

/// Each figure a probe measured beside the cost, as the median over rounds.
fn figures_over(rounds: &[&Round]) -> Vec<Figure> {
    let all = || rounds.iter().flat_map(|r| r.measured.figures.iter());
    first_seen(all().map(|f| (f.name, f.unit)))
        .into_iter()
        .filter_map(|(name, unit)| {
            let values: Vec<f64> = all().filter(|f| f.name == name).map(|f| f.value).collect();
            Some(Figure::new(name, stats::median_of(&values)?, unit))
        })
        .collect()
}

/// Each item once, in the order first seen.
fn first_seen<T: PartialEq>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut seen = Vec::new();
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}

/// Each phase as the median over rounds of the rounds' phase figures; the
/// interval over rounds from five rounds on, else the hull of the rounds'
/// own intervals.
fn phases_over(rounds: &[&Round], seed: u64) -> Vec<PhaseCost> {
    first_seen(
        rounds
            .iter()
            .flat_map(|r| r.measured.measurement.phases.iter())
            .map(|p| p.name),
    )
    .into_iter()
    .map(|name| {
        let of: Vec<&PhaseCost> = rounds
            .iter()
            .flat_map(|r| r.measured.measurement.phases.iter())
            .filter(|p| p.name == name)
            .collect();
        let hull = |f: fn(&PhaseCost) -> (f64, f64)| {
            of.iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
                    (lo.min(f(p).0), hi.max(f(p).1))
                })
        };
        let ticks: Vec<f64> = of.iter().map(|p| p.median_ticks).collect();
        let shares: Vec<f64> = of.iter().map(|p| p.share_pct).collect();
        let (median_ticks, ticks_ci) = rounds::median_with_ci(&ticks, seed);
        let (share_pct, share_ci) = rounds::median_with_ci(&shares, seed);
        PhaseCost {
            name,
            median_ticks,
            ci95_ticks: ticks_ci.unwrap_or_else(|| hull(|p| p.ci95_ticks)),
            share_pct,
            share_ci95_pct: share_ci.unwrap_or_else(|| hull(|p| p.share_ci95_pct)),
        }
    })
    .collect()
}

/// What built the mitbench that made a run: figures from another commit or
/// compiler may differ for that reason alone.
#[derive(Debug, Clone, Serialize)]
pub struct BuildIdentity {
    pub git_commit: &'static str,
    pub rustc: &'static str,
    pub profile: &'static str,
    /// The C compiler of the cflags family's kernels (their flags are in
    /// each variant's params).
    pub c_compiler: &'static str,
}

impl BuildIdentity {
    pub fn of_this_binary() -> BuildIdentity {
        BuildIdentity {
            git_commit: env!("MITBENCH_GIT_COMMIT"),
            rustc: env!("MITBENCH_RUSTC"),
            profile: env!("MITBENCH_PROFILE"),
            c_compiler: crate::probes::cflags_compiler(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct RunSettings {
    pub quick: bool,
    pub probe_patterns: Vec<String>,
    /// The CPU the measuring thread was pinned to.
    pub cpu: usize,
    pub allowed_cpus: Vec<usize>,
    pub harness: Settings,
    /// Seed of the random order of rounds; probe k uses seed + k.
    pub order_seed: u64,
}

/// Everything one run produced; what `--json` writes.
#[derive(Debug, Clone, Serialize)]
pub struct RunDocument {
    pub schema: u32,
    pub tool_version: &'static str,
    /// What built this mitbench.
    pub build: BuildIdentity,
    pub started_at: String,
    pub finished_at: String,
    /// True when Ctrl-C stopped the run; `results` holds what was measured.
    pub interrupted: bool,
    pub settings: RunSettings,
    /// The machine's speed states over the run, from the canary.
    pub machine_states: MachineStates,
    pub inventory: Inventory,
    pub results: Vec<Record>,
    /// cost(B) = per item + per batch / B, fitted per group of variants
    /// that differ only in their `batch` parameter.
    pub amortization: Vec<AmortizationFit>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AmortizationFit {
    pub id: String,
    /// The variants' common name without the batch size ("" when they are
    /// named "B=<n>" alone).
    pub group: String,
    /// What one item of the probe is.
    pub item: String,
    /// Ticks.
    #[serde(flatten)]
    pub fit: Amortization,
}

/// The variant's name without its batch-size segment: "retpoline/B=64" ->
/// "retpoline", "N=8" -> "".
fn batch_group(variant: &str) -> &str {
    let (prefix, last) = variant.rsplit_once('/').unwrap_or(("", variant));
    let is_size = last.split_once('=').is_some_and(|(key, value)| {
        !key.is_empty()
            && key.chars().all(|c| c.is_ascii_alphabetic())
            && value.parse::<u64>().is_ok()
    });
    if is_size { prefix } else { variant }
}

/// Groups the measured variants of each probe by their name less the
/// batch-size segment, and fits the amortization model to every group of
/// three or more batch sizes.
pub fn amortization_fits(records: &[Record]) -> Vec<AmortizationFit> {
    struct Group {
        id: String,
        name: String,
        item: String,
        points: Vec<(f64, f64)>,
    }
    let mut groups: Vec<Group> = Vec::new();
    for r in records {
        let (Some(batch), Some(median)) =
            (r.params.get("batch").and_then(|b| b.as_f64()), r.cost_ticks)
        else {
            continue;
        };
        let group = batch_group(&r.variant).to_string();
        match groups.iter_mut().find(|g| g.id == r.id && g.name == group) {
            Some(g) => g.points.push((batch, median)),
            None => groups.push(Group {
                id: r.id.clone(),
                name: group,
                item: r.item.clone(),
                points: vec![(batch, median)],
            }),
        }
    }
    groups
        .into_iter()
        .filter_map(|g| {
            let (batches, costs): (Vec<f64>, Vec<f64>) = g.points.into_iter().unzip();
            let fit = stats::fit_amortization(&batches, &costs)?;
            Some(AmortizationFit {
                id: g.id,
                group: g.name,
                item: g.item,
                fit,
            })
        })
        .collect()
}

/// Writes `doc` to a temporary file beside `path` (already created, so an
/// unwritable directory fails before any measuring) and renames it into
/// place: a reader sees the old file or the whole new one, never half.
pub fn write_json(
    doc: &RunDocument,
    temp: tempfile::NamedTempFile,
    path: &Path,
) -> std::io::Result<()> {
    let mut writer = std::io::BufWriter::new(temp);
    serde_json::to_writer_pretty(&mut writer, doc)?;
    writer.write_all(b"\n")?;
    let temp = writer.into_inner().map_err(|e| e.into_error())?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toll_recovered_takes_every_end_of_the_three_intervals() {
        // toll 100 [90, 110], reference 20 [18, 22], cost 60 [55, 65]:
        // (100 - 60) / 80 = 50%, from (90 - 65) / 92 to (110 - 55) / 68.
        let [lo, hi] =
            toll_recovered_interval(Some([90.0, 110.0]), Some([18.0, 22.0]), Some([55.0, 65.0]))
                .unwrap();
        assert!((lo - 25.0 / 92.0 * 100.0).abs() < 1e-9, "{lo}");
        assert!((hi - 55.0 / 68.0 * 100.0).abs() < 1e-9, "{hi}");
        assert!(lo < 50.0 && 50.0 < hi);
        // A toll whose interval reaches the reference's has no interval.
        assert!(
            toll_recovered_interval(Some([10.0, 30.0]), Some([18.0, 22.0]), Some([15.0, 16.0]))
                .is_none()
        );
        assert!(toll_recovered_interval(None, Some([1.0, 2.0]), Some([1.0, 2.0])).is_none());
    }

    fn record(variant: &str, ratio: f64, control: bool) -> Record {
        Record {
            variant: variant.into(),
            baseline: Some("plain".into()),
            ratio_to_baseline: Some(ratio),
            params: serde_json::json!({ "layout_control": control }),
            ..Record::default()
        }
    }

    #[test]
    fn a_difference_within_the_layout_spread_is_marked() {
        let mut records = vec![
            record("plain", 1.0, false),
            record("plain/align-32", 0.97, true),
            record("plain/align-16", 1.02, true),
            record("fortify", 0.98, false),
            record("retpoline", 1.40, false),
        ];
        mark_layout_spread(&mut records);
        assert!((records[0].layout_spread_pct.unwrap() - 3.0).abs() < 1e-9);
        assert_eq!(records[0].within_layout_spread, None, "the baseline");
        assert_eq!(records[1].within_layout_spread, None, "a control");
        assert_eq!(records[3].within_layout_spread, Some(true));
        assert_eq!(records[4].within_layout_spread, Some(false));
        let mut none = vec![record("plain", 1.0, false), record("x", 0.5, false)];
        mark_layout_spread(&mut none);
        assert!(none[1].layout_spread_pct.is_none());
    }
}
