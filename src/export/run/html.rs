//! The HTML report: one self-contained page (inline CSS and SVG, no script,
//! nothing fetched) with the machine, the advice, each family's table as the
//! terminal prints it, and a plot per amortization curve. The page is a
//! minijinja template; the plots are drawn by plotters' SVG backend. Every
//! figure shown comes from the run document.

use super::terminal::{COLUMNS, LEGEND, cells};
use crate::export::page::render_page;
use crate::export::plots::{self, Plot};
use crate::export::{ExportError, Exporter, RunView};
use crate::store::results::answered::{Advice, LatencyAdvice};
use crate::store::results::{Record, RunDocument};
use serde::Serialize;

pub struct HtmlExporter;

#[derive(Serialize)]
struct Page<'r> {
    host: String,
    tool_version: String,
    started_at: String,
    finished_at: String,
    interrupted: bool,
    machine_states: String,
    summary: &'r crate::answer::summary::Answer,
    summary_rows: Vec<[String; 3]>,
    /// The answer as one chart, first on the page.
    answer_plot: Option<Plot>,
    /// The kernel's mitigations priced per occurrence, and what one run
    /// cannot tell of them.
    kernel_prices: Option<String>,
    attack_vectors: String,
    /// The hooks every syscall pays for and their price, where any.
    hooks: Option<String>,
    /// The machine's history, where the run is in one of two runs or more.
    timeline: Option<TimelineSection>,
    not_measured: String,
    inventory: String,
    unsupported: Vec<UnsupportedRows>,
    budget_us: String,
    advice: Vec<Advice>,
    latency_advice: Vec<LatencyAdvice>,
    columns: [&'static str; 9],
    families: Vec<FamilySection>,
    legend: &'static str,
}

#[derive(Serialize)]
struct TimelineSection {
    runs: usize,
    plot: Plot,
    /// Each event's lines, as the terminal says them.
    events: Vec<Vec<String>>,
}

/// Rows this machine could not measure for one reason.
#[derive(Serialize)]
struct UnsupportedRows {
    rows: Vec<String>,
    reason: String,
}

#[derive(Serialize)]
struct FamilySection {
    name: &'static str,
    title: &'static str,
    rows: Vec<[String; 9]>,
    plots: Vec<Plot>,
}

impl Exporter for HtmlExporter {
    fn render(&self, run: &RunView) -> Result<Vec<u8>, ExportError> {
        render_page("report.html", page(run)?)
    }
}

/// Per probe of the family, in order: its amortization curves, its trade
/// of throughput against a co-runner's wait, its ratios to the baseline
/// (for probes without a batch axis, whose curve says more), and its phase
/// shares.
fn family_plots(doc: &RunDocument, records: &[&Record]) -> Result<Vec<Plot>, ExportError> {
    let mut ids: Vec<&str> = Vec::new();
    for r in records {
        if !ids.contains(&r.id.as_str()) {
            ids.push(&r.id);
        }
    }
    let mut plots = Vec::new();
    for id in ids {
        let of_probe: Vec<&Record> = records.iter().copied().filter(|r| r.id == id).collect();
        for fit in doc.fits_among(&of_probe) {
            let advice: Option<&Advice> = doc
                .advice
                .iter()
                .find(|a| a.id == fit.id && a.group == fit.group);
            plots.push(plots::amortization(doc, fit, advice)?);
        }
        let latency: Vec<_> = doc.latency_advice.iter().filter(|a| a.id == id).collect();
        if !latency.is_empty() {
            plots.push(plots::latency(id, &latency)?);
        }
        let on_an_axis = of_probe
            .iter()
            .any(|r| r.batch.is_some() || r.latency_step.is_some());
        let compared = of_probe.iter().filter(|r| r.vs_baseline.is_some()).count();
        if !on_an_axis && compared >= 1 {
            plots.push(plots::ratios(id, &of_probe)?);
        }
        if of_probe.iter().any(|r| !r.phases.is_empty()) {
            plots.push(plots::phase_shares(id, &of_probe)?);
        }
    }
    Ok(plots)
}

fn timeline_section(run: &RunView) -> Result<Option<TimelineSection>, ExportError> {
    let Some(timeline) = run.timeline.as_ref().filter(|t| t.runs.len() >= 2) else {
        return Ok(None);
    };
    Ok(Some(TimelineSection {
        runs: timeline.runs.len(),
        plot: plots::timeline(timeline)?,
        events: timeline
            .events
            .iter()
            .map(|e| crate::export::timeline::event_lines(e, timeline.rows))
            .collect(),
    }))
}

fn page<'r>(run: &'r RunView) -> Result<Page<'r>, ExportError> {
    let (doc, summary) = (run.doc, &run.summary);
    let mut families = Vec::new();
    for (family, records) in doc.by_family() {
        let plots = family_plots(doc, &records)?;
        families.push(FamilySection {
            name: family.name,
            title: family.title,
            rows: records.iter().map(|r| cells(r)).collect(),
            plots,
        });
    }
    let budget_us = doc
        .advice
        .first()
        .map(|a| a.latency_budget_us)
        .or(doc.latency_advice.first().map(|a| a.latency_budget_us))
        .map_or(String::new(), |us| format!("{us:.0}"));
    Ok(Page {
        host: doc.inventory.identity.hostname.clone(),
        tool_version: doc.tool_version.clone(),
        // For people, as `history` and `compare` print them; the JSON
        // keeps the stored RFC 3339.
        started_at: crate::export::number::local_time(&doc.started_at),
        finished_at: crate::export::number::local_time(&doc.finished_at),
        interrupted: doc.interrupted,
        machine_states: doc.machine_states.summary.clone(),
        summary_rows: super::summary::rows(summary),
        answer_plot: plots::answer(summary)?,
        kernel_prices: super::summary::kernel_prices(&summary.kernel),
        attack_vectors: super::summary::attack_vectors(&summary.attack_vectors),
        hooks: super::summary::hooks(summary),
        timeline: timeline_section(run)?,
        not_measured: super::summary::not_measured(summary),
        summary,
        inventory: crate::export::inventory::render(&doc.inventory),
        unsupported: doc
            .unsupported_by_reason()
            .into_iter()
            .map(|(reason, rows)| UnsupportedRows { rows, reason })
            .collect(),
        budget_us,
        advice: doc.advice.clone(),
        latency_advice: doc.latency_advice.clone(),
        columns: COLUMNS,
        families,
        legend: LEGEND,
    })
}
