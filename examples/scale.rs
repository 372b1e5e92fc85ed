//! A history of many runs, to time what reads it: builds one from a run
//! document (copies of it, each a run of its own, in sets of five, the last
//! set under another boot and command line), then times the history step of
//! `mitbench run` (the quiet level it is held against, the newest set of
//! each boot, their runs and each row's boot figures) on it. compare,
//! attribute and fleet are timed through the command line on the same file.
//!
//! usage: cargo run --release --example scale -- RUN.json HISTORY.sqlite RUNS
//!
//! e.g. with tests/fixtures/default-run.json and 5000 runs, then
//! `time mitbench compare --history H 4991..4995 4996..5000`,
//! `time mitbench attribute --history H` and
//! `time mitbench fleet --history H $(seq 1 100)`.

use mitbench::store::history::History;
use mitbench::store::results::RunDocument;
use std::process::ExitCode;
use std::time::Instant;

const SET: usize = 5;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [template, path, runs] = &args[..] else {
        eprintln!("usage: scale RUN.json HISTORY.sqlite RUNS");
        return ExitCode::from(2);
    };
    let Ok(runs) = runs.parse::<usize>() else {
        eprintln!("error: RUNS must be a count, not {runs}");
        return ExitCode::from(2);
    };
    let doc: RunDocument = match std::fs::read_to_string(template)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
    {
        Ok(doc) => doc,
        Err(e) => {
            eprintln!("error: {template}: {e}");
            return ExitCode::FAILURE;
        }
    };
    match build_and_time(&doc, path, runs) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn build_and_time(template: &RunDocument, path: &str, runs: usize) -> Result<(), String> {
    let mut history = History::open(std::path::Path::new(path), true).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let mut set_id = None;
    let mut last = template.clone();
    for i in 0..runs {
        let mut doc = template.clone();
        doc.started_at = format!("2026-01-01T00:00:00.{i:06}Z");
        if i >= runs - SET {
            // The last set: another boot, every mitigation off.
            doc.inventory.identity.boot_id = format!("{}-off", doc.inventory.identity.boot_id);
            doc.inventory.kernel.cmdline =
                mitbench::plan::with_word(&doc.inventory.kernel.cmdline, "mitigations=off");
            for says in doc.inventory.cpu.vulnerabilities.values_mut() {
                if says != "Not affected" {
                    *says = "Vulnerable".to_string();
                }
            }
        }
        if i % SET == 0 {
            set_id = None;
        }
        let id = history
            .store_in_set(&doc, set_id)
            .map_err(|e| e.to_string())?;
        set_id.get_or_insert(id);
        last = doc;
    }
    println!(
        "stored {runs} runs in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // What `mitbench run` reads of the history around a run.
    let timed = |what: &str, started: Instant| {
        println!("  {what}: {:.3} s", started.elapsed().as_secs_f64());
    };
    let step = Instant::now();
    let t = Instant::now();
    history
        .quiet_level_like(&last.inventory.identity, last.settings.cpu)
        .map_err(|e| e.to_string())?;
    timed("the quiet level of this boot", t);
    let t = Instant::now();
    let sets = history.latest_sets(&last).map_err(|e| e.to_string())?;
    timed(&format!("the newest set of each boot ({})", sets.len()), t);
    let t = Instant::now();
    for set in &sets {
        for &id in &set.ids {
            history.load(id).map_err(|e| e.to_string())?;
        }
    }
    timed("their runs", t);
    let t = Instant::now();
    let boots = history.boot_figures(template).map_err(|e| e.to_string())?;
    timed(
        &format!("each row's figures per boot ({} rows)", boots.len()),
        t,
    );
    println!(
        "the history step of `mitbench run`: {:.3} s",
        step.elapsed().as_secs_f64()
    );
    Ok(())
}
