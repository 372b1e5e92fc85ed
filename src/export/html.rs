//! The HTML report: one self-contained page (inline CSS and SVG, no script,
//! nothing fetched) with the machine, the advice, each family's table as the
//! terminal prints it, and a plot per amortization curve. The page is a
//! minijinja template; the plots are drawn by plotters' SVG backend. Every
//! figure shown comes from the run document.

use super::table::{COLUMNS, LEGEND, cells};
use super::{ExportError, Exporter};
use crate::results::{AmortizationFit, RunDocument, advice::Advice};
use plotters::prelude::*;
use serde::Serialize;

const TEMPLATE: &str = include_str!("templates/report.html");

/// Plot size in SVG user units; the page scales it to its width.
const PLOT_SIZE: (u32, u32) = (720, 400);

pub struct HtmlExporter;

#[derive(Serialize)]
struct Page {
    host: String,
    tool_version: String,
    started_at: String,
    finished_at: String,
    interrupted: bool,
    machine_states: String,
    inventory: String,
    unsupported: Vec<UnsupportedRow>,
    budget_us: String,
    advice: Vec<Advice>,
    columns: [&'static str; 9],
    families: Vec<FamilySection>,
    legend: &'static str,
}

#[derive(Serialize)]
struct UnsupportedRow {
    row: String,
    reason: String,
}

#[derive(Serialize)]
struct FamilySection {
    name: &'static str,
    title: &'static str,
    rows: Vec<[String; 9]>,
    plots: Vec<Plot>,
}

#[derive(Serialize)]
struct Plot {
    svg: String,
    caption: String,
}

impl Exporter for HtmlExporter {
    fn render(&self, doc: &RunDocument) -> Result<Vec<u8>, ExportError> {
        let mut env = minijinja::Environment::new();
        env.add_template("report.html", TEMPLATE)
            .map_err(template_error)?;
        let page = page(doc)?;
        let html = env
            .get_template("report.html")
            .and_then(|t| t.render(&page))
            .map_err(template_error)?;
        Ok(html.into_bytes())
    }
}

fn template_error(e: minijinja::Error) -> ExportError {
    ExportError::Io(std::io::Error::other(format!("the report template: {e}")))
}

fn page(doc: &RunDocument) -> Result<Page, ExportError> {
    let mut families = Vec::new();
    for (family, records) in doc.by_family() {
        let mut plots = Vec::new();
        for fit in doc.fits_among(&records) {
            let advice = doc
                .advice
                .iter()
                .find(|a| a.id == fit.id && a.group == fit.group);
            plots.push(amortization_plot(doc, fit, advice)?);
        }
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
        .map_or(String::new(), |a| format!("{:.0}", a.latency_budget_us));
    Ok(Page {
        host: doc.inventory.identity.hostname.clone(),
        tool_version: doc.tool_version.clone(),
        started_at: doc.started_at.clone(),
        finished_at: doc.finished_at.clone(),
        interrupted: doc.interrupted,
        machine_states: doc.machine_states.summary.clone(),
        inventory: doc.inventory.render(),
        unsupported: doc
            .results
            .iter()
            .filter_map(|r| {
                r.unsupported.as_ref().map(|u| UnsupportedRow {
                    row: format!("{} {}", r.id, r.variant),
                    reason: u.reason.clone(),
                })
            })
            .collect(),
        budget_us,
        advice: doc.advice.clone(),
        columns: COLUMNS,
        families,
        legend: LEGEND,
    })
}

/// Cost per item against batch size on log axes: each measured batch with
/// its run-to-run interval, the fitted `work + toll/B` over them, and the
/// advice's two batch sizes where there is advice.
fn amortization_plot(
    doc: &RunDocument,
    fit: &AmortizationFit,
    advice: Option<&Advice>,
) -> Result<Plot, ExportError> {
    // (batch, cost, low, high), ticks per item.
    let points: Vec<(f64, f64, f64, f64)> = doc
        .results
        .iter()
        .filter(|r| r.id == fit.id)
        .filter_map(|r| {
            let batch = r.batch.as_ref().filter(|b| b.group == fit.group)?;
            let cost = r.cost.as_ref()?;
            let [lo, hi] = cost.interval_ticks().unwrap_or([cost.ticks, cost.ticks]);
            Some((batch.size as f64, cost.ticks, lo, hi))
        })
        .filter(|p| p.0 > 0.0 && p.1 > 0.0)
        .collect();
    let name = if fit.group.is_empty() {
        fit.id.clone()
    } else {
        format!("{} {}", fit.id, fit.group)
    };
    let (b_lo, b_hi) = points.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), p| {
        (lo.min(p.0), hi.max(p.0))
    });
    let (c_lo, c_hi) = points.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), p| {
        (lo.min(p.2.max(p.1 * 0.5)), hi.max(p.3))
    });
    let f = &fit.fit;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, PLOT_SIZE).into_drawing_area();
        let drawn: Result<(), Box<dyn std::error::Error>> = (|| {
            root.fill(&WHITE)?;
            let x_range = (b_lo / 1.5).max(0.5)..b_hi * 1.5;
            let y_range = (c_lo / 1.3).max(1e-3)..c_hi * 1.3;
            let mut chart = ChartBuilder::on(&root)
                .caption(&name, ("sans-serif", 18))
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(70)
                .build_cartesian_2d(x_range.clone().log_scale(), y_range.clone().log_scale())?;
            chart
                .configure_mesh()
                .x_desc("batch size B (items per batch)")
                .y_desc(format!("ticks per {}", fit.item))
                .light_line_style(WHITE.mix(0.0))
                .draw()?;
            let curve: Vec<(f64, f64)> = (0..=120)
                .map(|i| {
                    let b = x_range.start * (x_range.end / x_range.start).powf(i as f64 / 120.0);
                    (b, f.per_item + f.per_batch / b)
                })
                .filter(|&(_, c)| c > 0.0)
                .collect();
            chart
                .draw_series(LineSeries::new(curve, BLUE.stroke_width(2)))?
                .label(format!(
                    "fit: {:.1} + {:.1}/B ticks (R² {:.3})",
                    f.per_item, f.per_batch, f.r2
                ))
                .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], BLUE.stroke_width(2)));
            chart.draw_series(points.iter().map(|&(b, _, lo, hi)| {
                PathElement::new([(b, lo.max(y_range.start)), (b, hi)], BLACK.stroke_width(1))
            }))?;
            chart
                .draw_series(
                    points
                        .iter()
                        .map(|&(b, c, _, _)| Circle::new((b, c), 4, BLACK.filled())),
                )?
                .label("measured, with its 95% interval")
                .legend(|(x, y)| Circle::new((x + 9, y), 4, BLACK.filled()));
            if let Some(a) = advice {
                let mark = |b: f64, colour: RGBColor| {
                    PathElement::new(
                        [(b, y_range.start), (b, y_range.end)],
                        colour.stroke_width(2),
                    )
                };
                let win = a.batch_to_win_back as f64;
                if x_range.contains(&win) {
                    chart
                        .draw_series([mark(win, GREEN)])?
                        .label(format!("B={} wins back 90%", a.batch_to_win_back))
                        .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], GREEN));
                }
                if let Some(limit) = a.largest_within_budget {
                    let limit_f = limit as f64;
                    if x_range.contains(&limit_f) {
                        chart
                            .draw_series([mark(limit_f, RED)])?
                            .label(format!(
                                "B={limit}: largest within {:.0} us",
                                a.latency_budget_us
                            ))
                            .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], RED));
                    }
                }
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK.mix(0.3))
                .position(SeriesLabelPosition::UpperRight)
                .draw()?;
            root.present()?;
            Ok(())
        })();
        drawn.map_err(|e| std::io::Error::other(format!("drawing the plot of {name}: {e}")))?;
    }
    Ok(Plot {
        svg,
        caption: format!(
            "{name}: cost per {} against batch size, log axes; {} batch sizes measured",
            fit.item,
            points.len()
        ),
    })
}
