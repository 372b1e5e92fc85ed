//! The kernel's price list scored against boots: a synthetic history of
//! run sets on this AMD guest's fixture, the present boot (SRSO's safe RET
//! in force, its untraining replayed at a known price) and boots with
//! `spec_rstack_overflow=off` whose getpid is a known part cheaper. Each
//! attribution must set the measured part beside the floor and the
//! prediction, say which it honours, and keep the record per CPU model.

use crate::common;

use common::{mitbench, scale_rows};
use mitbench::answer::prices::lay_price;
use mitbench::store::history::History;
use mitbench::store::results::RunDocument;

/// The replayed sequences' prices, ns: SRSO's untraining at entry (a
/// floor of getpid), its return thunk per kernel return (count unknown).
const UNTRAIN_NS: f64 = 20.0;
const RETURN_THUNK_NS: f64 = 6.0;

/// The present boot's run: the fixture with the price list replayed.
fn present() -> RunDocument {
    let mut doc = common::stored_run("default-run.json");
    for (variant, ns) in [
        ("srso-untrain", UNTRAIN_NS),
        ("srso-return-thunk", RETURN_THUNK_NS),
    ] {
        lay_price(&mut doc, ("kernel/sequences", variant), ns);
    }
    doc
}

/// The same machine booted with `spec_rstack_overflow=off` (boot `boot`),
/// its getpid `part_ns` cheaper.
fn without_srso(boot: &str, part_ns: f64) -> RunDocument {
    let mut doc = present();
    let plan = mitbench::plan::plan(&doc.inventory, 3);
    let off = plan
        .boots
        .iter()
        .find(|b| b.adds.as_deref() == Some("spec_rstack_overflow=off"))
        .expect("the plan has a boot without SRSO's mitigation");
    doc.inventory.kernel.cmdline = off.cmdline.clone();
    doc.inventory
        .cpu
        .vulnerabilities
        .insert("spec_rstack_overflow".into(), "Vulnerable".into());
    doc.inventory.identity.boot_id = boot.into();
    let getpid_ns = doc
        .results
        .iter()
        .find(|r| r.id == "os/getpid" && r.variant == "syscall")
        .and_then(|r| r.shown_ns())
        .unwrap()
        .value;
    scale_rows(&mut doc, "os/getpid", 1.0 - part_ns / getpid_ns);
    doc
}

/// Stores `doc` three times as one set; returns "first..last".
fn store_set(history: &mut History, doc: &RunDocument, minute: usize) -> String {
    let mut first = None;
    let mut last = 0;
    for i in 0..3 {
        let mut doc = doc.clone();
        doc.started_at = format!("2026-11-26T10:{:02}:00+00:00", minute + i);
        last = history.store_in_set(&doc, first).unwrap();
        first.get_or_insert(last);
    }
    format!("{}..{last}", first.unwrap())
}

fn attribute(h: &str, sets: &[&str], extra: &[&str]) -> serde_json::Value {
    let args = [&["attribute", "--history", h, "--json"][..], sets, extra].concat();
    let out = mitbench(&args);
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn srso_score(json: &serde_json::Value) -> &serde_json::Value {
    json["floors"]["scores"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["switch"] == "spec_rstack_overflow")
        .unwrap_or_else(|| panic!("no score for SRSO: {}", json["floors"]))
}

#[test]
fn attribute_scores_the_floor_and_a_prediction_against_each_boot_and_keeps_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    let h = path.to_str().unwrap();
    let mut history = History::open(&path, true).unwrap();
    let on = store_set(&mut history, &present(), 0);
    // A boot whose part is above the floor, one whose part is below it.
    let above = store_set(&mut history, &without_srso("boot-above", 30.0), 10);
    let below = store_set(&mut history, &without_srso("boot-below", 10.0), 20);
    drop(history);

    // 30 ns measured against a floor of 20: honoured, 10 ns beyond it. With
    // five kernel returns a getpid, the prediction is 20 + 5 x 6 = 50 ns,
    // which the part does not reach.
    let json = attribute(h, &[&on, &above], &["--count", "per-kernel-return=5"]);
    let s = srso_score(&json);
    let ns = |v: &serde_json::Value| v["value"].as_f64().unwrap();
    assert!((ns(&s["part_ns"]) - 30.0).abs() < 0.5, "{s}");
    assert!((ns(&s["floor_ns"]) - UNTRAIN_NS).abs() < 1e-6, "{s}");
    assert!((ns(&s["predicted_ns"]) - (UNTRAIN_NS + 5.0 * RETURN_THUNK_NS)).abs() < 1e-6);
    assert_eq!(s["honours_floor"], true);
    assert_eq!(s["honours_prediction"], false);
    assert!((ns(&s["beyond_floor_ns"]) - 10.0).abs() < 0.5, "{s}");
    assert_eq!(json["floors"]["cpu_model"], "AMD EPYC");
    let record = &json["floors"]["record"][0];
    assert_eq!(
        (record["scored"].as_u64(), record["honoured"].as_u64()),
        (Some(1), Some(1))
    );

    // 10 ns measured against the same floor: not honoured, and said so.
    let json = attribute(h, &[&on, &below], &[]);
    let s = srso_score(&json);
    assert_eq!(s["honours_floor"], false, "{s}");
    assert!(
        s.get("predicted_ns").is_none(),
        "no count given, no prediction"
    );
    let record = &json["floors"]["record"][0];
    assert_eq!(
        (record["scored"].as_u64(), record["honoured"].as_u64()),
        (Some(2), Some(1))
    );

    // Scoring the same boots again replaces their score; the text says it.
    let out = mitbench(&["attribute", "--history", h, &on, &below]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(text.contains("NOT honoured"), "{text}");
    assert!(text.contains("spec_rstack_overflow 1 of 2"), "{text}");
}
