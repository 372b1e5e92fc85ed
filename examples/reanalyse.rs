//! Reads a stored run's rounds again through today's analysis: the way to
//! try an estimator on real runs offline (the runs in shared/data hold
//! every round with its canaries and reference) before measuring live.
//!
//! usage: cargo run --release --example reanalyse -- [--write DIR] [--history DB [--typical-floor]] RUN.json [RUN.json ...]
//!
//! With `--write DIR`, each run is also written to DIR under its own file
//! name as today's analysis reads it (records, machine states, fits and
//! advice made again), for `mitbench export json` to build its answer.
//! With `--history DB`, each row's usual gap from the quiet rounds of the
//! history's newest runs of the run's conditions (`History::quiet_rounds`)
//! and the floors under the intervals for the next run
//! (`mitbench::run::run_to_run`) are read as a live run reads them; a run
//! stored there counts among them. `--typical-floor` then leaves out the
//! rows' and waits' floors of their own (`RunToRun::rows`, `waits`): the
//! typical row's floor alone, as before they were read.
//!
//! Prints, per run, the machine line and the printed figures' spread as the
//! stored document had them and as the analysis reads them now: the median
//! half-width, rows that missed the target, rows without an interval, and
//! getpid. Each round keeps its median, interval, canaries and reference;
//! what a round does not store (its samples) is not needed by the analysis
//! of rounds.

use mitbench::answer;
use mitbench::measure::harness::Settings;
use mitbench::measure::harness::tsc::TscFrequency;
use mitbench::measure::schedule::forks::Merged;
use mitbench::measure::schedule::{ProbeRounds, Stop, VariantRounds};
use mitbench::store::results::{self, Record, RunDocument, RunFacts};
use std::process::ExitCode;

/// The value of `--flag VALUE` among `args`, taken out of them.
fn option(args: &mut Vec<String>, flag: &str) -> Result<Option<String>, String> {
    match args.iter().position(|a| a == flag) {
        Some(at) if at + 1 < args.len() => {
            let value = args.remove(at + 1);
            args.remove(at);
            Ok(Some(value))
        }
        Some(_) => Err(format!("{flag} needs a value")),
        None => Ok(None),
    }
}

fn main() -> ExitCode {
    let mut paths: Vec<String> = std::env::args().skip(1).collect();
    let typical_floor = match paths.iter().position(|a| a == "--typical-floor") {
        Some(at) => {
            paths.remove(at);
            true
        }
        None => false,
    };
    let (write_to, history) = match (
        option(&mut paths, "--write"),
        option(&mut paths, "--history"),
    ) {
        (Ok(write_to), Ok(history)) => (write_to.map(std::path::PathBuf::from), history),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let history = match history
        .map(|db| mitbench::store::history::History::open(std::path::Path::new(&db), false))
    {
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
        opened => opened.and_then(Result::ok),
    };
    if paths.is_empty() {
        eprintln!(
            "usage: reanalyse [--write DIR] [--history DB [--typical-floor]] RUN.json [RUN.json ...]"
        );
        return ExitCode::from(2);
    }
    for path in &paths {
        let doc: RunDocument = match std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
        {
            Ok(doc) => doc,
            Err(e) => {
                eprintln!("error: {path}: {e}");
                return ExitCode::FAILURE;
            }
        };
        let merged = rounds_of(&doc);
        let tsc = TscFrequency {
            mhz: doc.inventory.tsc().map_or(2600.0, |t| t.mhz),
            source: "stored run".into(),
            calibrated_mhz: None,
        };
        let settings: Settings = doc.settings.harness.clone();
        let conditions = mitbench::store::history::conditions_of(&doc);
        let mut facts = RunFacts {
            usual_gaps: history
                .as_ref()
                .map(|h| mitbench::run::usual_gaps(h, &conditions))
                .unwrap_or_default(),
            run_to_run: history
                .as_ref()
                .and_then(|h| mitbench::run::run_to_run(h, &conditions)),
            ..RunFacts::default()
        };
        if let (true, Some(floors)) = (typical_floor, facts.run_to_run.as_mut()) {
            floors.rows.clear();
            floors.waits.clear();
        }
        let (states, records) = results::analyse(&merged, &tsc, &settings, facts);
        println!("{path}");
        println!("  stored: {}", spread_of(&doc.results));
        println!("  now:    {}", spread_of(&records));
        println!("  now:    {}", states.summary);
        if let Some(dir) = &write_to
            && let Err(e) = write_again(doc, states, records, dir, path)
        {
            eprintln!("error: {path}: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

/// The run's rounds as the schedule handed them to the analysis, every
/// canary reading beside the round it closed.
fn rounds_of(doc: &RunDocument) -> Merged {
    let mut merged = Merged::default();
    let probes = mitbench::measure::probes::select(&[]).unwrap_or_default();
    for probe in probes {
        let declaration = *probe.declaration();
        let variants: Vec<VariantRounds> = probe
            .variants()
            .into_iter()
            .filter_map(|variant| {
                let record = doc
                    .results
                    .iter()
                    .find(|r| r.id == declaration.id && r.variant == variant.name)?;
                let rounds = record
                    .rounds
                    .each
                    .iter()
                    .map(|row| {
                        let mut round = mitbench::synthetic::round_at(
                            row.figure.value,
                            row.pass,
                            row.started_s,
                            row.fork,
                            row.canary_before.unwrap_or(f64::NAN),
                            row.canary_after.unwrap_or(f64::NAN),
                        );
                        round.canary_before = row.canary_before;
                        round.canary_after = row.canary_after;
                        round.reference_before = row.reference_ticks;
                        round.reference_after = row.reference_ticks;
                        let s = &mut round.measured.measurement.per_item;
                        s.n = row.n;
                        s.median.ci95 = Some(row.figure.ends());
                        s.min = row.min_ticks;
                        s.p99 = row.p99_ticks;
                        round
                    })
                    .collect::<Vec<_>>();
                if rounds.is_empty() {
                    return None;
                }
                for round in &rounds {
                    merged.canaries.extend(round.canary_after);
                    merged.canary_times.push(round.started_s);
                }
                Some(VariantRounds {
                    variant,
                    rounds,
                    counting: None,
                    unsupported: None,
                    stopped: record.rounds.stopped.or(Some(Stop::Budget)),
                    elapsed_s: record.rounds.elapsed_s.unwrap_or(0.0),
                    answer: false,
                })
            })
            .collect();
        if !variants.is_empty() {
            merged.probes.push(ProbeRounds {
                declaration,
                toll: probe.toll(),
                variants,
                order_seed: 0,
            });
        }
    }
    merged
}

/// `doc` with today's reading of its rounds, written into `dir` under the
/// file name of `path`.
fn write_again(
    mut doc: RunDocument,
    states: results::MachineStates,
    records: Vec<Record>,
    dir: &std::path::Path,
    path: &str,
) -> Result<(), String> {
    doc.machine_states = states;
    doc.amortization = results::amortization_fits(&records);
    doc.results = records;
    answer::advice::advise_document(&mut doc, answer::advice::DEFAULT_LATENCY_BUDGET);
    answer::returns::note_refill_rows(&mut doc);
    let name = std::path::Path::new(path)
        .file_name()
        .ok_or("a run file has a name")?;
    let text = serde_json::to_string(&doc).map_err(|e| e.to_string())?;
    std::fs::write(dir.join(name), text).map_err(|e| e.to_string())
}

/// The printed figures' spread over a run's records.
fn spread_of(records: &[Record]) -> String {
    let mut halves: Vec<f64> = Vec::new();
    let (mut rows, mut missed, mut bare, mut needles) = (0, 0, 0, 0);
    let mut getpid = String::from("getpid: none");
    for r in records {
        let Some(cost) = &r.cost else { continue };
        rows += 1;
        missed += usize::from(!cost.target_met);
        let shown = cost.shown_ticks();
        match shown.half_width_pct() {
            Some(h) => halves.push(h),
            None => bare += 1,
        }
        // Issue 62's test of a claim: under ±0.1% needs three forks.
        if shown.half_width_pct().is_some_and(|h| h < 0.1) && cost.forks < 3 {
            needles += 1;
        }
        if r.id == "os/getpid" && r.variant == "syscall" {
            getpid = format!(
                "getpid {:.1} ns ±{:.2}%",
                cost.shown_ns().value,
                shown.half_width_pct().unwrap_or(f64::NAN)
            );
        }
    }
    halves.sort_by(f64::total_cmp);
    let at = |p: f64| {
        halves
            .get(((halves.len().max(1) - 1) as f64 * p) as usize)
            .copied()
            .unwrap_or(f64::NAN)
    };
    format!(
        "{rows} rows: half-width median {:.2}% p75 {:.2}% p90 {:.2}%; {missed} missed the target; \
         {bare} without an interval; {needles} under ±0.1% on fewer than 3 forks; {getpid}",
        at(0.5),
        at(0.75),
        at(0.9)
    )
}
