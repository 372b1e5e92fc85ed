//! One figure per row: the number the run's table prints is the number the
//! CSV, the JSON's summary, the OpenMetrics export, the amortization fits
//! (and so the plots and advice) and tax's prices read. A stored run whose
//! rows carry a figure at the reference speed apart from the raw one
//! (here set 10% above it) tells a renderer that reads the raw one.

use crate::common;

use mitbench::analysis::figure::Figure;
use mitbench::export::Exporter;
use mitbench::export::format_cost;
use mitbench::export::run::terminal::cells;
use mitbench::export::run::{CsvExporter, JsonExporter, OpenMetricsExporter};
use mitbench::store::results::RunDocument;
use mitbench::store::results::record::AtReference;

/// The default-run fixture with every cost's figure at the reference speed
/// set apart from the raw one, as a run that read a reference has it.
fn run_at_a_reference_speed() -> RunDocument {
    let mut doc: RunDocument = common::stored_run("default-run.json");
    for r in &mut doc.results {
        if let Some(c) = r.cost.as_mut() {
            let at_speed = c.ticks() * 1.1;
            c.at_reference = Some(AtReference {
                ticks: Figure::new(at_speed, Some([at_speed * 0.98, at_speed * 1.03])),
                df: None,
                coefficient: 1.0,
                coefficient_fitted: None,
                coefficient_se: None,
                explained_pct: None,
            });
        }
    }
    doc
}

fn getpid(doc: &RunDocument) -> &mitbench::store::results::Record {
    doc.results
        .iter()
        .find(|r| r.id == "os/getpid" && r.variant == "syscall")
        .expect("the fixture measured getpid")
}

#[test]
fn every_export_of_getpid_reads_the_tables_figure() {
    let doc = run_at_a_reference_speed();
    let row = getpid(&doc);
    let [_, _, ns_cell, ticks_cell, ci_cell, ..] = cells(row);
    let shown = row.shown_ns().unwrap();
    assert_eq!(ns_cell, format_cost(shown.value));
    assert_ne!(ns_cell, format_cost(row.cost.as_ref().unwrap().ns()));

    // CSV: `ns` and `ticks` print as the table's cells; the raw figure is
    // under its own name.
    let csv = CsvExporter
        .render(&mitbench::export::RunView::of(&doc))
        .unwrap();
    let mut reader = csv::Reader::from_reader(&csv[..]);
    let headers = reader.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let record = reader
        .records()
        .map(Result::unwrap)
        .find(|r| &r[column("probe")] == "os/getpid" && &r[column("variant")] == "syscall")
        .unwrap();
    let number = |name: &str| record[column(name)].parse::<f64>().unwrap();
    assert_eq!(format_cost(number("ns")), ns_cell);
    assert_eq!(format_cost(number("ticks")), ticks_cell);
    assert_eq!(ci_cell, format!("±{:.2}%", number("ci95_half_width_pct")));
    assert_eq!(number("raw_ns"), row.cost.as_ref().unwrap().ns());

    // The JSON's summary (its headline) reads getpid at the same figure.
    let json: serde_json::Value = serde_json::from_slice(
        &JsonExporter
            .render(&mitbench::export::RunView::of(&doc))
            .unwrap(),
    )
    .unwrap();
    let first = &json["summary"]["tolls"][0]["figures"][0];
    assert_eq!(first["what"], "getpid");
    assert_eq!(format_cost(first["value"].as_f64().unwrap()), ns_cell);

    // OpenMetrics: the cost in ticks.
    let text = String::from_utf8(
        OpenMetricsExporter
            .render(&mitbench::export::RunView::of(&doc))
            .unwrap(),
    )
    .unwrap();
    let line = text
        .lines()
        .find(|l| {
            l.starts_with("mitbench_cost_ticks{")
                && l.contains("probe=\"os/getpid\"")
                && l.contains("variant=\"syscall\"")
        })
        .expect("a getpid cost line");
    let value: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    assert_eq!(format_cost(value), ticks_cell);
}

#[test]
fn the_fits_and_advice_the_plots_draw_stand_on_the_tables_figures() {
    let doc = run_at_a_reference_speed();
    let raw: RunDocument = common::stored_run("default-run.json");
    let fits = mitbench::store::results::amortization_fits(&doc.results);
    let raw_fits = mitbench::store::results::amortization_fits(&raw.results);
    assert!(!fits.is_empty(), "the fixture has batch series");
    for (fit, raw_fit) in fits.iter().zip(&raw_fits) {
        // Every point 10% up: the fitted per-item cost too.
        let ratio = fit.fit.per_item.value / raw_fit.fit.per_item.value;
        assert!((ratio - 1.1).abs() < 1e-6, "{}: {ratio}", fit.id);
    }
}
