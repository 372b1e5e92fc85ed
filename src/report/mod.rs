//! Results as records (one per probe variant), the run document that holds
//! them, and its two renderings: a terminal table and JSON.

mod listing;
mod phase_table;
mod table;

pub use listing::render_listing;
pub use table::render as render_table;

use crate::harness::phases::PhaseCost;
use crate::harness::stats::{self, Amortization, LineFit, TukeyOutliers};
use crate::harness::{Settings, tsc::TscFrequency};
use crate::inventory::Inventory;
use crate::probes::{Figure, Measured, Outcome, ProbeInfo, Variant};
use serde::Serialize;
use serde_json::Value;
use std::io::Write;
use std::path::Path;

/// Bumped whenever a field changes meaning or disappears.
pub const SCHEMA_VERSION: u32 = 1;

/// One probe variant's result. Statistics are null when it was not measured.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Record {
    pub id: String,
    pub family: String,
    pub variant: String,
    pub params: Value,
    /// What one item is; every per-item figure is per one of these.
    pub item: String,
    /// The variant of the same probe that `ratio_to_baseline` divides by.
    pub baseline: Option<String>,
    pub ratio_to_baseline: Option<f64>,
    /// A conservative 95% interval for that ratio: the two medians'
    /// intervals combined end to end.
    pub ratio_ci95: Option<[f64; 2]>,
    /// Median minus the baseline's median, in ticks, and a conservative 95%
    /// interval for it: the two medians' intervals combined end to end.
    pub delta_ticks: Option<f64>,
    pub delta_ci95_ticks: Option<[f64; 2]>,
    /// Millions of items per second, for probes whose items are a rate
    /// (`rate_unit`, e.g. "Mpps").
    pub rate_unit: Option<String>,
    pub rate_millions_per_s: Option<f64>,
    /// For probes with a toll: the share of the toll (toll variant minus
    /// reference variant) this variant avoids, in percent.
    pub toll_recovered_pct: Option<f64>,
    /// CPUs the measured work ran on, measuring thread first.
    pub cpus: Vec<usize>,
    pub n: Option<usize>,
    pub median_ticks: Option<f64>,
    pub ci95_ticks: Option<[f64; 2]>,
    pub median_ns: Option<f64>,
    pub ci95_ns: Option<[f64; 2]>,
    /// CI half-width as a percentage of the median.
    pub ci_half_width_pct: Option<f64>,
    pub mad_ticks: Option<f64>,
    pub p99_ticks: Option<f64>,
    pub min_ticks: Option<f64>,
    pub max_ticks: Option<f64>,
    pub outliers: Option<TukeyOutliers>,
    /// Medians of the four chronological quarters of the samples.
    pub block_medians_ticks: Option<Vec<f64>>,
    /// Spread of the quarter medians as a percentage of the median.
    pub drift_pct: Option<f64>,
    /// False when the block medians disagree by more than noise explains:
    /// the machine changed state during the measurement.
    pub stationary: Option<bool>,
    /// Ticks per sample against items per sample; the intercept is the fixed
    /// cost removed from every sample.
    pub fit: Option<LineFit>,
    pub base_batch: Option<u64>,
    pub items: Option<u64>,
    pub dropped_migrated: Option<usize>,
    pub elapsed_s: Option<f64>,
    /// The wall-time budget the variant was measured under.
    pub budget_s: Option<f64>,
    pub target_met: bool,
    pub interrupted: bool,
    /// Counter values, or a string saying why there are none.
    pub counters: Value,
    /// Cost per item of each phase the probe marked, and its share of the
    /// item's total (empty for probes without phases).
    pub phases: Vec<PhaseCost>,
    /// Null, or why this machine cannot run the variant.
    pub unsupported: Option<String>,
    /// What the probe said about this measurement.
    pub notes: Vec<String>,
    /// Figures the probe measured beside the cost per item.
    pub figures: Vec<Figure>,
    /// For items that are a buffer of bytes: its size, and the throughput
    /// the median gives.
    pub bytes_per_item: Option<u64>,
    pub ticks_per_byte: Option<f64>,
    pub mib_per_s: Option<f64>,
}

impl Record {
    /// None when the measurement was interrupted before a sample was kept.
    pub fn new(
        info: &ProbeInfo,
        variant: &Variant,
        outcome: Outcome,
        tsc: &TscFrequency,
    ) -> Option<Record> {
        let mut record = Record {
            id: info.id.to_string(),
            family: info.family.to_string(),
            variant: variant.name.to_string(),
            params: variant.params.clone(),
            item: info.item.to_string(),
            baseline: info.baseline().map(|b| b.name.to_string()),
            rate_unit: info.derived.as_ref().map(|d| d.rate_unit.to_string()),
            ..Record::default()
        };
        match outcome {
            Outcome::Interrupted => return None,
            Outcome::Unsupported(reason) => {
                record.unsupported = Some(reason);
                record.counters = Value::String("not measured".into());
            }
            Outcome::Measured(measured) => {
                let Measured {
                    measurement: m,
                    cpus,
                    notes,
                    figures,
                } = *measured;
                let s = &m.per_item;
                record.cpus = cpus;
                record.notes = notes;
                record.figures = figures;
                record.bytes_per_item =
                    variant.params.get("bytes_per_item").and_then(Value::as_u64);
                if let Some(bytes) = record.bytes_per_item.filter(|&b| b > 0) {
                    record.ticks_per_byte = Some(s.median / bytes as f64);
                    let ns = tsc.ticks_to_ns(s.median);
                    record.mib_per_s =
                        (ns > 0.0).then(|| bytes as f64 / ns * 1e9 / (1024.0 * 1024.0));
                }
                record.n = Some(s.n);
                record.median_ticks = Some(s.median);
                record.median_ns = Some(tsc.ticks_to_ns(s.median));
                if s.has_ci() {
                    record.ci95_ticks = Some([s.ci95.0, s.ci95.1]);
                    record.ci95_ns = Some([tsc.ticks_to_ns(s.ci95.0), tsc.ticks_to_ns(s.ci95.1)]);
                    record.ci_half_width_pct =
                        (s.median.abs() > 0.0).then(|| s.ci_half_width() / s.median.abs() * 100.0);
                } else {
                    record.notes.push(format!(
                        "{} samples: too few for a confidence interval",
                        s.n
                    ));
                }
                record.mad_ticks = Some(s.mad);
                record.p99_ticks = Some(s.p99);
                record.min_ticks = Some(s.min);
                record.max_ticks = Some(s.max);
                record.outliers = Some(s.outliers);
                record.block_medians_ticks = Some(s.block_medians.clone());
                record.drift_pct =
                    (s.median.abs() > 0.0).then(|| s.drift() / s.median.abs() * 100.0);
                record.stationary = Some(m.stationary);
                record.fit = Some(m.fit);
                record.base_batch = Some(m.base_batch);
                record.items = Some(m.items);
                record.dropped_migrated = Some(m.dropped_migrated);
                record.elapsed_s = Some(m.elapsed_s);
                record.budget_s = Some(m.budget_s);
                record.target_met = m.target_met;
                record.interrupted = m.interrupted;
                record.counters = match m.counters {
                    Ok(report) => serde_json::to_value(report).unwrap_or(Value::Null),
                    Err(reason) => Value::String(format!("unavailable: {reason}")),
                };
                record.phases = m.phases;
            }
        }
        Some(record)
    }
}

/// Fills in what each record is read against: the ratio and difference to
/// its probe's baseline, the rate, and the share of a toll recovered.
pub fn link(records: &mut [Record], infos: &[ProbeInfo]) {
    let find = |records: &[Record], id: &str, variant: &str| {
        records
            .iter()
            .find(|r| r.id == id && r.variant == variant)
            .and_then(|r| Some((r.median_ticks?, r.ci95_ticks?)))
    };
    for i in 0..records.len() {
        let (Some(median), Some([lo, hi])) = (records[i].median_ticks, records[i].ci95_ticks)
        else {
            continue;
        };
        let id = records[i].id.clone();
        if let Some((base, [base_lo, base_hi])) = records[i]
            .baseline
            .clone()
            .and_then(|b| find(records, &id, &b))
        {
            let r = &mut records[i];
            r.ratio_to_baseline = (base != 0.0).then(|| median / base);
            r.ratio_ci95 = (base_lo > 0.0 && lo >= 0.0).then(|| [lo / base_hi, hi / base_lo]);
            r.delta_ticks = Some(median - base);
            r.delta_ci95_ticks = Some([lo - base_hi, hi - base_lo]);
        }
        let Some(derived) = infos
            .iter()
            .find(|info| info.id == id)
            .and_then(|info| info.derived.as_ref())
        else {
            continue;
        };
        let toll = find(records, &id, derived.toll_variant).map(|t| t.0);
        let reference = find(records, &id, derived.reference_variant).map(|t| t.0);
        let r = &mut records[i];
        r.rate_millions_per_s = r.median_ns.filter(|ns| *ns > 0.0).map(|ns| 1000.0 / ns);
        if let (Some(toll), Some(reference)) = (toll, reference)
            && toll > reference
        {
            r.toll_recovered_pct = Some((toll - median) / (toll - reference) * 100.0);
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
}

/// Everything one run produced; what `--json` writes.
#[derive(Debug, Clone, Serialize)]
pub struct RunDocument {
    pub schema: u32,
    pub tool_version: &'static str,
    pub started_at: String,
    pub finished_at: String,
    /// True when Ctrl-C stopped the run; `results` holds what was measured.
    pub interrupted: bool,
    pub settings: RunSettings,
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
        let (Some(batch), Some(median)) = (
            r.params.get("batch").and_then(|b| b.as_f64()),
            r.median_ticks,
        ) else {
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
