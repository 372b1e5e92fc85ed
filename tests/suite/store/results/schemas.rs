//! Run documents of schemas 3, 4 and 5 read as one shape and give the
//! figures they were written with: schema 3's flat fields, schema 4's
//! `figure` objects, and the same run written in schema 4 and in schema 5
//! export alike (tests/fixtures: default-run.json and run-a.json are of
//! schema 3, answer-run.json of schema 4, answer-run-schema5.json the same
//! run as this mitbench writes it).

use crate::common;

use mitbench::export::run::terminal::cells;
use mitbench::export::run::{CsvExporter, JsonExporter};
use mitbench::export::{Exporter, RunView};
use mitbench::store::results::{RunDocument, SCHEMA_VERSION};
use serde_json::Value;
use std::path::Path;

fn stored_json(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(common::fixture_path(name)).unwrap()).unwrap()
}

fn near(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12)
}

/// The figure as stored, `value` and `ci95`, against the one read.
fn same_figure(stored: &Value, value: f64, ci95: Option<[f64; 2]>) -> bool {
    let stored_ci = stored["ci95"]
        .as_array()
        .map(|c| [c[0].as_f64().unwrap(), c[1].as_f64().unwrap()]);
    near(stored["value"].as_f64().unwrap(), value)
        && match (stored_ci, ci95) {
            (Some([a, b]), Some([c, d])) => near(a, c) && near(b, d),
            (None, None) => true,
            _ => false,
        }
}

#[test]
fn every_stored_schema_reads_as_this_one() {
    for (name, schema) in [
        ("default-run.json", 3),
        ("run-a.json", 3),
        ("syscall-return-run.json", 3),
        ("answer-run.json", 4),
        ("answer-run-schema5.json", 5),
    ] {
        assert_eq!(stored_json(name)["schema"], schema, "{name}");
        let doc = common::stored_run(name);
        assert_eq!(doc.schema, SCHEMA_VERSION, "{name}");
        assert!(doc.results.iter().any(|r| r.cost.is_some()), "{name}");
    }
}

/// Each cost of the stored run `name` as its file holds it (JSON) beside
/// the cost mitbench reads, with its row's name; a record without a cost
/// is one in the file too.
fn costs_of(name: &str) -> Vec<(Value, mitbench::store::results::Cost, String)> {
    let stored = stored_json(name);
    let doc = common::stored_run(name);
    let records = stored["results"].as_array().unwrap();
    assert_eq!(records.len(), doc.results.len());
    records
        .iter()
        .zip(doc.results)
        .filter_map(|(json, record)| {
            let Some(cost) = record.cost else {
                assert!(json["cost"].is_null(), "{}", record.id);
                return None;
            };
            Some((
                json["cost"].clone(),
                cost,
                record.id + " " + &record.variant,
            ))
        })
        .collect()
}

/// A schema 3 cost's raw figure and its interval for the next run are the
/// flat fields it was written with, in ticks and in ns.
#[test]
fn a_schema_3_cost_keeps_its_flat_figures() {
    let costs = costs_of("default-run.json");
    assert!(costs.len() > 100, "{} costs read", costs.len());
    for (flat, cost, row) in &costs {
        assert!(near(flat["ticks"].as_f64().unwrap(), cost.ticks()));
        assert!(near(flat["ns"].as_f64().unwrap(), cost.ns()), "{row}");
        let raw = cost.raw_ticks();
        let interval = match &flat["run_to_run_ci95_ticks"] {
            Value::Null => &flat["ci95_ticks"],
            interval => interval,
        };
        let stored_raw = serde_json::json!({"value": flat["ticks"], "ci95": interval});
        assert!(same_figure(&stored_raw, raw.value, raw.ci95), "{row}");
        // The old documents wrote six significant digits of each.
        if let Some(ns) = flat["run_to_run_ci95_ns"].as_array() {
            let in_ns = cost.in_ns(raw).ci95.unwrap();
            for (stored, read) in ns.iter().zip(in_ns) {
                let stored = stored.as_f64().unwrap();
                assert!((stored - read).abs() <= 1e-5 * stored.abs(), "{row}");
            }
        }
    }
}

/// A schema 4 document's `figure` objects are what reading it makes again.
#[test]
fn a_schema_4_documents_figures_are_made_again_alike() {
    let costs = costs_of("answer-run.json");
    assert!(costs.len() > 10, "{} figures read", costs.len());
    for (json, cost, row) in &costs {
        let made = cost.figure.as_ref().unwrap();
        let kept = &json["figure"];
        assert!(same_figure(kept, made.value, made.ci95), "{row}");
        assert_eq!(kept["basis"], made.basis.as_str());
        assert_eq!(kept["stands_on"], made.stands_on.as_str());
    }
}

fn csv_of(doc: &RunDocument) -> Vec<u8> {
    CsvExporter.render(&RunView::of(doc)).unwrap()
}

/// One run written in schema 4 and in schema 5 gives the same table cells
/// and the same CSV; writing any stored run gives a document of this schema
/// without schema 4's flat fields that reads back to the same figures.
#[test]
fn the_same_run_in_schemas_4_and_5_exports_alike() {
    let four = common::stored_run("answer-run.json");
    let five = common::stored_run("answer-run-schema5.json");
    assert_eq!(csv_of(&four), csv_of(&five));
    for (a, b) in four.results.iter().zip(&five.results) {
        assert_eq!(cells(a), cells(b), "{} {}", a.id, a.variant);
    }
    for name in ["default-run.json", "answer-run.json"] {
        let doc = common::stored_run(name);
        let written = JsonExporter.render(&RunView::of(&doc)).unwrap();
        let json: Value = serde_json::from_slice(&written).unwrap();
        assert_eq!(json["schema"], SCHEMA_VERSION);
        for r in json["results"].as_array().unwrap() {
            for gone in ["ticks", "ns", "ci95_ticks", "run_to_run_ci95_ns"] {
                assert!(r["cost"].get(gone).is_none(), "{name}: cost.{gone}");
            }
        }
        let again = mitbench::store::results::load::document_from_str(
            std::str::from_utf8(&written).unwrap(),
            name,
        )
        .unwrap();
        assert_eq!(csv_of(&again), csv_of(&doc), "{name}");
    }
}

/// Every output mitbench makes of the stored fixtures, as its bytes'
/// SHA-256 in a snapshot: a change that should leave the outputs alone (a
/// refactoring, a rename) is held to byte-identical output by it, and one
/// that means to change them shows which. The outputs themselves are
/// written under the test's target directory (`outputs/`): keep a copy
/// from before a change and `diff -r` it after to see what moved.
#[test]
fn every_output_of_the_stored_runs_is_what_it_was() {
    const RUNS: [&str; 6] = [
        "default-run.json",
        "run-a.json",
        "answer-run.json",
        "answer-run-schema5.json",
        "refill-run.json",
        "syscall-return-run.json",
    ];
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("outputs");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // Run where the fixtures are and named by their file names alone: a
    // compare or a fleet names its runs by the paths given.
    let fixtures = common::fixture_path(RUNS[0]);
    let fixtures = fixtures.parent().unwrap();
    let fixture = |name: &str| name.to_string();
    // (output's name, arguments, whether it is written to a file)
    let mut outputs: Vec<(String, Vec<String>, bool)> = Vec::new();
    for run in RUNS {
        let stem = run.trim_end_matches(".json");
        outputs.push((
            format!("{stem}.txt"),
            vec!["history".into(), "show".into(), fixture(run)],
            false,
        ));
        for format in ["json", "csv", "markdown", "openmetrics", "html"] {
            outputs.push((
                format!("{stem}.{format}"),
                vec!["export".into(), format.into(), fixture(run)],
                true,
            ));
        }
    }
    for (name, command) in [
        ("compare", vec!["compare", "run-a.json", "default-run.json"]),
        (
            "compare-answer",
            vec!["compare", "answer-run.json", "default-run.json"],
        ),
        (
            "fleet",
            vec!["fleet", "default-run.json", "run-a.json", "answer-run.json"],
        ),
    ] {
        let args = |json: bool| -> Vec<String> {
            let mut args = vec![command[0].to_string()];
            args.extend(command[1..].iter().map(|run| fixture(run)));
            if json {
                args.push("--json".into());
            }
            args
        };
        outputs.push((format!("{name}.txt"), args(false), false));
        outputs.push((format!("{name}.json"), args(true), false));
    }
    let mut digests = String::new();
    for (name, mut args, to_file) in outputs {
        let path = dir.join(&name);
        if to_file {
            args.push(path.display().to_string());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        // Times are printed in the local zone and tables at the terminal's
        // width: both fixed, so the bytes are the document's alone.
        let out = common::command(&args)
            .current_dir(fixtures)
            .env("TZ", "UTC")
            .env_remove("COLUMNS")
            .output()
            .expect("run mitbench");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if !to_file {
            std::fs::write(&path, &out.stdout).unwrap();
        }
        let bytes = std::fs::read(&path).unwrap();
        let digest: String = openssl::sha::sha256(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        digests.push_str(&format!("{name:<34} {:>9} {digest}\n", bytes.len()));
    }
    insta::assert_snapshot!("outputs", digests);
}
