//! Synthetic runs compared as `mitbench compare` compares stored ones: each
//! run read at the runs' common reference speed (or raw), with what a
//! history of runs and of boots has seen, the rows held to the false
//! discovery rate over the comparison.

use mitbench::compare::{self, BootNoise, OutsideEvidence};
use mitbench::store::results::{EqualSpeed, Record};
use mitbench::synthetic::{Probe, Run, guest_probes};
use std::collections::BTreeMap;

pub type Key = (String, String);
pub type Rows<'a> = BTreeMap<Key, &'a Record>;

/// Each run's rows with a figure, by (probe, variant).
pub fn rows_of(runs: &[Run]) -> Vec<Rows<'_>> {
    runs.iter()
        .map(|run| {
            run.records
                .iter()
                .filter(|r| r.cost.is_some())
                .map(|r| ((r.id.clone(), r.variant.clone()), r))
                .collect()
        })
        .collect()
}

/// Each run's record of `key`, where every run has one.
pub fn records<'a>(side: &[Rows<'a>], key: &Key) -> Option<Vec<&'a Record>> {
    side.iter().map(|r| r.get(key).copied()).collect()
}

/// Each row's figures over `runs` in the order they ran, carried to their
/// common reference speed, as the history keeps them (a figure the slow
/// state took is not one of them).
pub fn figures_at_one_speed(runs: &[Run]) -> BTreeMap<Key, Vec<f64>> {
    let speeds: Vec<f64> = runs.iter().filter_map(|r| r.reference).collect();
    let at = mitbench::analysis::rounds::across_forks(&speeds);
    let mut figures: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
    for run in runs {
        for r in run
            .records
            .iter()
            .filter(|r| r.cost.is_some() && !r.slow_state())
        {
            let speed = run.reference.map(|run| EqualSpeed {
                at,
                run,
                carry: None,
            });
            if let Some(figure) = r.run_figure(speed) {
                figures
                    .entry((r.id.clone(), r.variant.clone()))
                    .or_default()
                    .push(figure.ticks.value);
            }
        }
    }
    figures
}

/// Each row's noise as `compare` learns it from the history's runs: one
/// stretch a row, the synthetic machine's runs holding one quiet level (it
/// drifts, and never shifts the syscall path alone).
pub fn learned_from(history: &[Run]) -> BTreeMap<Key, compare::Learned> {
    mitbench::analysis::noise::learned(one_stretch(figures_at_one_speed(history)))
}

/// Each row's series as one stretch at one quiet level.
pub fn one_stretch(figures: BTreeMap<Key, Vec<f64>>) -> BTreeMap<Key, Vec<Vec<f64>>> {
    figures.into_iter().map(|(k, f)| (k, vec![f])).collect()
}

/// A boot's own variance per row from runs of several boots (each a
/// machine of its own), as `History::boot_figures` reads the history.
pub fn boot_noise_from(boots: &[Vec<Run>]) -> BootNoise {
    let per_boot: Vec<BTreeMap<Key, Vec<f64>>> = boots
        .iter()
        .map(|runs| figures_at_one_speed(runs))
        .collect();
    let mut figures: BTreeMap<Key, Vec<Vec<f64>>> = BTreeMap::new();
    for boot in per_boot {
        for (key, f) in boot {
            figures.entry(key).or_default().push(f);
        }
    }
    BootNoise::of(&figures)
}

/// Whether the sides ran under one boot, or under two with what the
/// history has seen of a boot's own variance (empty: nothing).
pub enum Boots<'a> {
    One,
    Two(&'a BootNoise),
}

/// A side of runs against another, each run read at the runs' common
/// reference speed (`at_speed`; else raw), the rows held to the
/// comparison's false discovery rate, with what `learned` has seen.
pub fn compare_sides(
    old: &[Run],
    new: &[Run],
    at_speed: bool,
    learned: &BTreeMap<Key, compare::Learned>,
    boots: Boots,
) -> Vec<compare::RowChange> {
    let speeds: Vec<f64> = old.iter().chain(new).filter_map(|r| r.reference).collect();
    let at = mitbench::analysis::rounds::across_forks(&speeds);
    let speeds_of = |runs: &[Run]| -> Vec<Option<EqualSpeed>> {
        runs.iter()
            .map(|run| {
                Some(EqualSpeed {
                    at,
                    run: run.reference.filter(|_| at_speed)?,
                    carry: None,
                })
            })
            .collect()
    };
    let times =
        |runs: &[Run]| -> Vec<compare::RunTime> { runs.iter().filter_map(|r| r.time).collect() };
    let (old_times, new_times) = (times(old), times(new));
    let (old_rows, new_rows) = (rows_of(old), rows_of(new));
    let (old_speeds, new_speeds) = (speeds_of(old), speeds_of(new));
    let (boot_of_sides, boot_noise) = match boots {
        Boots::One => ([0, 0], None),
        Boots::Two(noise) => ([0, 1], Some(noise)),
    };
    let mut rows = Vec::new();
    for key in old_rows[0].keys() {
        let (Some(o), Some(n)) = (records(&old_rows, key), records(&new_rows, key)) else {
            continue;
        };
        let outside = OutsideEvidence {
            history: learned.get(key).copied(),
            boot: boot_noise.and_then(|b| Some((*b.rows.get(key)?, b.boots))),
            ..OutsideEvidence::default()
        };
        rows.push(compare::row_change(
            &o,
            &n,
            compare::DEFAULT_THRESHOLD_PCT,
            outside,
            boot_of_sides,
            [&old_times, &new_times],
            [&old_speeds, &new_speeds],
        ));
    }
    compare::hold_to_false_discovery_rate(&mut rows, compare::DEFAULT_THRESHOLD_PCT);
    rows
}

/// What a seed adds for a repetition with fresh noise (a power check's
/// second draw): beyond any seed a test draws from, and a multiple of the
/// seven slow shares a seed picks from, so it runs on a host of the kind.
pub const FRESH_SEEDS: u64 = 7 * 150_000;

/// The synthetic guest's probes with `row`'s variant `pct` percent dearer:
/// a change of a printed size laid on one row.
pub fn probes_moving(row: &compare::RowChange, pct: f64) -> Vec<Probe> {
    let mut moved = guest_probes();
    for probe in moved.iter_mut().filter(|p| p.declaration.id == row.key.id) {
        for v in probe
            .variants
            .iter_mut()
            .filter(|v| v.name == row.key.variant)
        {
            v.ticks *= 1.0 + pct / 100.0;
        }
    }
    moved
}

/// The share of comparisons that mark a change of the size they printed
/// as detectable, and how many printed one: for each seed, the rows of a
/// comparison (`compared(seed, probes)`, its new side running `probes`);
/// one row of them in turn is moved by its printed detectable change and
/// compared again on a machine of the same kind drawing fresh noise (a
/// user who repeats the runs gets new draws, not the ones the printed
/// figure was read from).
pub fn printed_power(
    seeds: std::ops::Range<u64>,
    compared: impl Fn(u64, &[Probe]) -> Vec<compare::RowChange> + Sync,
) -> (f64, usize) {
    let plain = guest_probes();
    let first = seeds.start;
    let outcomes = super::in_parallel(seeds, |seed| {
        let rows = compared(seed, &plain);
        let row = &rows[(seed - first) as usize % rows.len()];
        let detectable = row.smallest_detectable_pct?;
        let again = compared(seed + FRESH_SEEDS, &probes_moving(row, detectable));
        Some(marked_slower(&again, row))
    });
    let tried = outcomes.iter().flatten().count();
    let marked = outcomes.iter().flatten().filter(|&&m| m).count();
    (marked as f64 / tried.max(1) as f64, tried)
}

/// The synthetic guest's probes with its `synthetic/syscall` rows (the
/// first probe's) `toll` times as dear: a toll on the syscall path.
pub fn syscall_rows_times(toll: f64) -> Vec<Probe> {
    let mut tolled = guest_probes();
    for v in &mut tolled[0].variants {
        v.ticks *= toll;
    }
    tolled
}

/// Whether `rows` mark `row` slower.
pub fn marked_slower(rows: &[compare::RowChange], row: &compare::RowChange) -> bool {
    rows.iter()
        .find(|r| r.key.id == row.key.id && r.key.variant == row.key.variant)
        .is_some_and(|r| r.verdict == compare::Verdict::Slower)
}
