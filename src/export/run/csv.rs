//! One row per record in CSV, with stable column names (docs/json-and-csv.md
//! lists them): what a spreadsheet or a script reads. `ns`, `ticks` and the
//! `ci95_*` columns are the figure and interval the table prints (at the
//! run's reference speed where it read one); the `raw_*` columns are the
//! figure as timed; empty cells are figures the record does not have.

use crate::export::{ExportError, Exporter, RunView};
use crate::store::results::{Cost, Record};
use serde::Serialize;

pub struct CsvExporter;

/// The columns, in order; renaming or removing one breaks readers, so
/// only add at the end.
#[derive(Serialize)]
struct Row<'a> {
    probe: &'a str,
    family: &'a str,
    variant: &'a str,
    role: &'static str,
    batch_group: Option<&'a str>,
    batch_size: Option<u64>,
    item: &'a str,
    unsupported_kind: Option<String>,
    unsupported_reason: Option<&'a str>,
    ns: Option<f64>,
    ticks: Option<f64>,
    ci95_low_ticks: Option<f64>,
    ci95_high_ticks: Option<f64>,
    ci95_half_width_pct: Option<f64>,
    rounds_used: Option<usize>,
    rounds_total: usize,
    estimator: Option<String>,
    ratio: Option<f64>,
    ratio_ci95_low: Option<f64>,
    ratio_ci95_high: Option<f64>,
    delta_ticks: Option<f64>,
    delta_ci95_low_ticks: Option<f64>,
    delta_ci95_high_ticks: Option<f64>,
    all_states_median_ticks: Option<f64>,
    slow_round_share: Option<f64>,
    machine_drift_pct: Option<f64>,
    co_runner_wait_p99_us: Option<f64>,
    notes: String,
    speed_coefficient: Option<f64>,
    speed_normalized_ns: Option<f64>,
    speed_normalized_ticks: Option<f64>,
    speed_normalized_ci95_low_ticks: Option<f64>,
    speed_normalized_ci95_high_ticks: Option<f64>,
    raw_ns: Option<f64>,
    raw_ticks: Option<f64>,
    raw_ci95_low_ticks: Option<f64>,
    raw_ci95_high_ticks: Option<f64>,
    raw_ci95_half_width_pct: Option<f64>,
}

fn row(r: &Record) -> Row<'_> {
    let cost = r.cost.as_ref();
    let shown = r.shown_ticks();
    let interval = shown.and_then(|s| s.ci95);
    let raw_interval = cost.and_then(|c| c.raw_ticks().ci95);
    let at_reference = cost.and_then(|c| c.at_reference);
    let vs = r.vs_baseline.as_ref();
    Row {
        probe: &r.id,
        family: &r.family,
        variant: &r.variant,
        role: r.role.name(),
        batch_group: r.batch.as_ref().map(|b| b.group.as_str()),
        batch_size: r.batch.as_ref().map(|b| b.size),
        item: &r.item,
        unsupported_kind: r.unsupported.as_ref().map(|u| kebab(&u.kind)),
        unsupported_reason: r.unsupported.as_ref().map(|u| u.reason.as_str()),
        ns: r.shown_ns().map(|s| s.value),
        ticks: shown.map(|s| s.value),
        ci95_low_ticks: interval.map(|i| i[0]),
        ci95_high_ticks: interval.map(|i| i[1]),
        ci95_half_width_pct: shown.and_then(|s| s.half_width_pct()),
        rounds_used: cost.map(|c| c.rounds_used),
        rounds_total: r.rounds.total,
        estimator: cost.map(|c| kebab(&c.estimator)),
        ratio: vs.map(|c| c.ratio.value),
        ratio_ci95_low: vs.and_then(|c| c.ratio.ci95).map(|i| i[0]),
        ratio_ci95_high: vs.and_then(|c| c.ratio.ci95).map(|i| i[1]),
        delta_ticks: vs.map(|c| c.delta.value),
        delta_ci95_low_ticks: vs.and_then(|c| c.delta.ci95).map(|i| i[0]),
        delta_ci95_high_ticks: vs.and_then(|c| c.delta.ci95).map(|i| i[1]),
        all_states_median_ticks: cost.map(|c| c.all_states_median_ticks),
        slow_round_share: cost.map(|c| c.slow_round_share),
        machine_drift_pct: cost.and_then(|c| c.machine_drift_pct),
        co_runner_wait_p99_us: r.co_runner_wait_p99().map(|f| f.figure.value),
        notes: r.notes.join("; "),
        speed_coefficient: at_reference.map(|a| a.coefficient),
        speed_normalized_ns: cost.zip(at_reference).map(|(c, a)| c.in_ns(a.ticks).value),
        speed_normalized_ticks: at_reference.map(|a| a.ticks.value),
        speed_normalized_ci95_low_ticks: at_reference.and_then(|a| a.ticks.ci95).map(|i| i[0]),
        speed_normalized_ci95_high_ticks: at_reference.and_then(|a| a.ticks.ci95).map(|i| i[1]),
        raw_ns: cost.map(Cost::ns),
        raw_ticks: cost.map(Cost::ticks),
        raw_ci95_low_ticks: raw_interval.map(|i| i[0]),
        raw_ci95_high_ticks: raw_interval.map(|i| i[1]),
        raw_ci95_half_width_pct: cost.and_then(|c| c.raw_ticks().half_width_pct()),
    }
}

/// A unit enum's name as the JSON spells it.
fn kebab(value: &impl Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

impl Exporter for CsvExporter {
    fn render(&self, run: &RunView) -> Result<Vec<u8>, ExportError> {
        let doc = run.doc;
        let mut writer = ::csv::Writer::from_writer(Vec::new());
        for r in &doc.results {
            writer.serialize(row(r)).map_err(csv_error)?;
        }
        writer
            .into_inner()
            .map_err(|e| ExportError::Io(std::io::Error::other(e.to_string())))
    }
}

fn csv_error(e: ::csv::Error) -> ExportError {
    ExportError::Io(std::io::Error::other(format!("writing CSV: {e}")))
}
