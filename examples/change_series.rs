//! The synthetic series of issue 75's cases (`synthetic::series::CASES`),
//! written as CSV for Apache Otava to read, with the change points
//! mitbench finds in each: what bench/otava.sh compares.
//!
//! usage: cargo run --release --example change_series -- DIR [TRIALS] [RUNS]
//!
//! Writes DIR/<case>-<trial>.csv (`time,value`, one row a run, a day
//! apart) and DIR/mitbench.tsv (case, trial, mitbench's change points as
//! the indices of the first run after each, comma-separated).

use mitbench::analysis::changes::{Search, change_points};
use mitbench::synthetic::series::CASES;
use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let count = |at: usize, default: usize| -> Option<usize> {
        args.get(at).map_or(Some(default), |a| a.parse().ok())
    };
    let (Some(dir), Some(trials), Some(runs)) = (args.first(), count(1, 100), count(2, 40)) else {
        eprintln!("usage: change_series DIR [TRIALS] [RUNS]");
        return ExitCode::from(2);
    };
    let dir = Path::new(dir);
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("error: {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    let mut found = String::from("case\ttrial\tchange_points\n");
    for case in &CASES {
        for trial in 0..trials as u64 {
            let series = case.draw(runs, trial);
            let mut csv = String::from("time,value\n");
            for (i, value) in series.iter().enumerate() {
                // Otava reads a time column; a run a day from 2026-01-01.
                let day = chrono::NaiveDate::from_ymd_opt(2026, 1, 1).unwrap()
                    + chrono::Days::new(i as u64);
                let _ = writeln!(csv, "{day} 00:00:00 +0000,{value}");
            }
            let at: Vec<String> = change_points(&series, Search::default())
                .iter()
                .map(|c| c.at.to_string())
                .collect();
            let _ = writeln!(found, "{}\t{trial}\t{}", case.name, at.join(","));
            let file = dir.join(format!("{}-{trial}.csv", case.name));
            if let Err(e) = std::fs::write(&file, csv) {
                eprintln!("error: {}: {e}", file.display());
                return ExitCode::FAILURE;
            }
        }
    }
    if let Err(e) = std::fs::write(dir.join("mitbench.tsv"), found) {
        eprintln!("error: {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    println!(
        "{} series of {runs} runs in {}",
        CASES.len() * trials,
        dir.display()
    );
    ExitCode::SUCCESS
}
