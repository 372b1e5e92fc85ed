//! Records from rounds: each variant's figures computed once, in one
//! place, then what each is read against (its baseline, the layout
//! controls, the probe's toll). Exporters read the result and compute
//! nothing.

use super::record::{
    AtReference, BatchMedian, Comparison, Cost, Counters, Derived, Layout, Rate, Record, RoundRow,
    Rounds, Throughput, TollRecovered,
};
use super::speed::RunSpeed;
use super::spread;
use crate::analysis::figure::{self, Figure};
use crate::analysis::phases::PhaseCost;
use crate::analysis::rounds::{self, Basis, RoundFigure, RoundState};
use crate::analysis::spread::{NextRun, RunSpread, RunToRun, VariantSpread, pooled_in_probe};
use crate::analysis::states::StateModel;
use crate::analysis::stats;
use crate::measure::harness::{Settings, tsc::TscFrequency};
use crate::measure::probes::{FigureRole, NamedFigure, Role};
use crate::measure::schedule::{ProbeRounds, Round, Stop, VariantRounds};

/// What records are computed with: the run's state model, clock and
/// settings.
pub struct Context<'a> {
    pub model: &'a StateModel,
    pub tsc: &'a TscFrequency,
    pub settings: &'a Settings,
    /// The run's [`crate::analysis::states::MachineStates::drift_interval_pct`].
    pub drift_interval_pct: Option<f64>,
    /// How far rows and co-runners' waits moved between the history's
    /// runs of these conditions, where it read that: what no interval for
    /// the next run is narrower than ([`Context::floor_share`],
    /// [`Context::wait_floor`]).
    pub run_to_run: Option<&'a RunToRun>,
    /// Every variant's spread across forks.
    pub spread: &'a RunSpread,
    /// The run's reference speed, each variant's speed coefficient and the
    /// spread of the figures at that speed.
    pub speed: &'a RunSpeed,
}

impl Context<'_> {
    /// The share of a row no next run's interval is narrower than
    /// ([`RunToRun::row_floor_share`]).
    fn floor_share(&self, probe: &str, variant: &str) -> f64 {
        RunToRun::row_floor_share(self.run_to_run, probe, variant)
    }

    /// The least log half-width of a co-runner's p99 wait's interval
    /// (`wait`: "variant: figure"), where the history read one
    /// ([`RunToRun::wait_floor_of`]).
    fn wait_floor(&self, probe: &str, wait: &str) -> Option<f64> {
        self.run_to_run?.wait_floor_of(probe, wait)
    }
}

/// The records of one probe, in its variants' order: each variant's
/// figures from its rounds, then what each is read against.
pub fn probe_records(probe: &ProbeRounds, cx: &Context) -> Vec<Record> {
    let seed = rounds::seed_of(probe.declaration.id);
    let base = probe
        .variants
        .iter()
        .find(|v| v.variant.is_baseline() && !v.rounds.is_empty());
    // Each record beside the index of its variant, which the toll names.
    let mut differences = Vec::new();
    let (indices, mut records): (Vec<usize>, Vec<Record>) = probe
        .variants
        .iter()
        .enumerate()
        .filter(|(_, v)| v.unsupported.is_some() || !v.rounds.is_empty())
        .map(|(index, v)| {
            let mut record = variant_record(probe, v, cx, seed);
            if let Some(base) = base
                && record.cost.is_some()
                && !v.variant.is_baseline()
                && let Some((comparison, spread)) = compare(v, base, cx.model, seed)
            {
                record.vs_baseline = Some(comparison);
                differences.push(spread);
            }
            (index, record)
        })
        .unzip();
    set_next_run_differences(
        &mut records,
        &differences,
        cx.drift_interval_pct,
        RunToRun::floor_share(cx.run_to_run),
    );
    set_headline_ratios(&mut records);
    mark_layout_spread(&mut records);
    if let Some(toll) = probe.toll {
        let cost_of = |index: usize| {
            let at = indices.iter().position(|&i| i == index)?;
            let cost = records[at].cost.as_ref()?;
            Some(cost.rounds_ticks)
        };
        if let (Some(toll), Some(reference)) = (cost_of(toll.toll), cost_of(toll.reference))
            && toll.value > reference.value
        {
            for r in records.iter_mut() {
                let Some(cost) = &r.cost else { continue };
                r.derived.toll_recovered = Some(TollRecovered {
                    pct: Figure::new(
                        (toll.value - cost.ticks()) / (toll.value - reference.value) * 100.0,
                        figure::toll_recovered_interval(
                            toll.ci95,
                            reference.ci95,
                            cost.rounds_ticks.ci95,
                        ),
                    ),
                });
            }
        }
    }
    records
}

/// Sets each comparison's headline ratio beside its paired one, and where
/// the paired interval does not hold it, widens × base's and Δ's
/// intervals to the figures the table prints, and says why: the pairs are
/// read in time and process beside each other, the headline figures each
/// over all of their own rounds, so the two differ where the variant and
/// its baseline did not have their rounds in the same states or forks. A
/// reader is never shown a ratio of the printed figures outside its
/// printed × base (49 of 280 row-runs were, on the busy Zen 3).
fn set_headline_ratios(records: &mut [Record]) {
    let Some(base) = records
        .iter()
        .find(|r| r.role == Role::Baseline)
        .and_then(|r| r.cost.as_ref())
        .map(|c| c.shown_ticks().value)
        .filter(|&t| t > 0.0)
    else {
        return;
    };
    for r in records.iter_mut() {
        let (Some(cost), Some(vs)) = (&r.cost, r.vs_baseline.as_mut()) else {
            continue;
        };
        let shown = cost.shown_ticks().value;
        let (ratio, delta) = (shown / base, shown - base);
        let holds = vs.ratio.ci95.map(|[lo, hi]| lo <= ratio && ratio <= hi);
        vs.headline_ratio = Some(ratio);
        vs.holds_headline_ratio = holds;
        if holds == Some(false) {
            vs.ratio = vs.ratio.holding(ratio);
            vs.delta = vs.delta.holding(delta);
            r.notes.push(format!(
                "x base is the median over {} pairs of rounds run side by side ({}); the \
                 printed figures' ratio, {ratio:.3}, lay outside its interval, which is widened \
                 to hold it: the two headlines come from rounds in other states or forks",
                vs.pairs, vs.basis
            ));
        }
    }
}

/// Sets the layout spread on every record of a probe that has layout
/// controls, and on each compared variant whether it is within it.
fn mark_layout_spread(records: &mut [Record]) {
    let spread = records
        .iter()
        .filter(|r| r.role == Role::LayoutControl)
        .filter_map(|r| r.vs_baseline.as_ref())
        .map(|c| (c.ratio.value - 1.0).abs() * 100.0)
        .reduce(f64::max);
    let Some(spread_pct) = spread else {
        return;
    };
    for r in records.iter_mut() {
        let within_spread = match r.role {
            Role::Compared => r
                .vs_baseline
                .as_ref()
                .map(|c| (c.ratio.value - 1.0).abs() * 100.0 <= spread_pct),
            Role::Baseline | Role::LayoutControl => None,
        };
        r.layout = Some(Layout {
            spread_pct,
            within_spread,
        });
    }
}

fn variant_record(probe: &ProbeRounds, v: &VariantRounds, cx: &Context, seed: u64) -> Record {
    let declaration = &probe.declaration;
    let mut record = unmeasured_record(probe, v);
    if v.unsupported.is_some() {
        return record;
    }
    let quiet = spread::QuietForRow::of(v, cx.model);
    let Some(estimate) = rounds::estimate(&quiet.figures(v), cx.model.two_states, seed) else {
        return record;
    };
    let used = spread::used_rounds(v, cx.model);
    if let Some(note) = unmoved_note(&quiet, v) {
        record.notes.push(note);
    }
    let next_run = cx.spread.get(declaration.id, &v.variant.name);
    let floor_share = cx.floor_share(declaration.id, &v.variant.name);
    let mut cost = cost(&estimate, &used, next_run, floor_share, cx);
    set_at_reference(&mut cost, declaration.id, v, cx, seed);
    if estimate.basis == Basis::NoQuietRound {
        let excess = slow_level_excess(&used, cx.model);
        reach_down_to_quiet(&mut cost, excess, cx);
        record.notes.push(format!(
            "no round reached the quiet level: the figure is a slow level's (the canary \
             {:+.0}% above the quiet one), and its interval reaches down to where the quiet \
             figure may lie",
            excess * 100.0
        ));
    }
    if cost.shown_ticks().ci95.is_none() {
        record.notes.push(format!(
            "no interval: {} of its {} rounds were at the quiet level, fewer than the {} an \
             interval needs, and not two forks' worth to read a spread from",
            estimate.rounds_used,
            estimate.rounds,
            rounds::MIN_ROUNDS_FOR_CI
        ));
    }
    record.cost = Some(cost);
    record.notes.extend(interrupted_note(v));
    if let Some(note) = partner_away_note(v, cx.tsc) {
        record.notes.push(note);
    }
    let all: Vec<&Round> = v.rounds.iter().collect();
    let (forks_used, forks_run) = (fork_count(&used), fork_count(&all));
    if record.shown_ticks().is_some_and(|f| f.too_wide_to_read()) {
        record.notes.push(format!(
            "interval {}: run the default or `--runs 3`",
            crate::analysis::interval::too_wide_reason(Some((forks_used, forks_run)))
        ));
    }
    if forks_used < forks_run {
        record.notes.push(format!(
            "the headline stands on {forks_used} of the {forks_run} forks: the others' rounds \
             were all in the slow state or interrupted, and a process-level effect of theirs \
             is not in it"
        ));
    }
    // A fork of fewer than three rounds is said in the JSON only
    // (`cost.thin_forks`): the table's rounds column shows how few there
    // were, and a quick run on a busy host has such a fork in nearly every
    // row (228 of 420 rows' notes on the Zen 3 guest of 2026-12-01).
    // A row of one process says so, whatever the run's forks: its interval
    // cannot have measured how far another process lands.
    if forks_used == 1
        && let Some(from) = record.cost.as_ref().map(|c| c.next_run_from)
    {
        record
            .notes
            .push(format!("one fork; interval from {}", from.describe()));
    }
    record.cpus = v.rounds[0].measured.cpus.clone();
    // The rounds' own notes first, then what the analysis said above
    // (these were once overwritten here, and the analysis's notes lost).
    let round_notes = first_seen(
        v.rounds
            .iter()
            .flat_map(|r| r.measured.notes.iter().cloned()),
    );
    record.notes.splice(0..0, round_notes);
    record.figures = figures_over(&used, &all, seed, |wait| {
        cx.wait_floor(declaration.id, &format!("{}: {wait}", v.variant.name))
    });
    record.phases = phases_over(&used, seed);
    let marks: Vec<f64> = used
        .iter()
        .filter_map(|r| r.measured.measurement.phase_marks)
        .map(|m| m.estimated_ticks_per_item())
        .collect();
    record.estimated_phase_marks_ticks = stats::median_of(&marks);
    record.rounds = rounds_of(v, cx.model);
    record.derived = derived(v, estimate.cost.value, declaration.rate_unit, cx.tsc);
    record.counters = counters_of(v);
    record
}

/// The record of a variant before its figures: who it is, and no cost.
fn unmeasured_record(probe: &ProbeRounds, v: &VariantRounds) -> Record {
    let declaration = &probe.declaration;
    Record {
        id: declaration.id.to_string(),
        family: declaration.family().to_string(),
        variant: v.variant.name.clone(),
        role: v.variant.role,
        params: v.variant.params.clone(),
        batch: v.variant.batch.clone(),
        latency_step: v.variant.latency_step.clone(),
        seed_choice: v.variant.seed_choice.clone(),
        item: declaration.item.to_string(),
        baseline: probe
            .variants
            .iter()
            .find(|b| b.variant.is_baseline())
            .map(|b| b.variant.name.clone()),
        unsupported: v.unsupported.clone(),
        cpus: Vec::new(),
        cost: None,
        vs_baseline: None,
        layout: None,
        derived: Derived::default(),
        rounds: Rounds {
            stopped: v.stopped,
            interrupted: v.stopped == Some(Stop::Interrupted),
            total: v.rounds.len(),
            ..Rounds::default()
        },
        counters: Counters::NotCounted {
            reason: "not measured".into(),
        },
        phases: Vec::new(),
        estimated_phase_marks_ticks: None,
        notes: Vec::new(),
        figures: Vec::new(),
    }
}

/// The counting round's counters, or why there are none.
fn counters_of(v: &VariantRounds) -> Counters {
    match &v.counting {
        Some(counting) => {
            let counting_round_ticks = counting.measurement.per_item.median.value;
            match &counting.measurement.counters {
                Some(Ok(values)) => Counters::Counted {
                    counting_round_ticks,
                    values: values.clone(),
                },
                Some(Err(why)) => Counters::Unavailable {
                    why: why.clone(),
                    counting_round_ticks,
                },
                None => Counters::NotCounted {
                    reason: "the counting round opened no counters".into(),
                },
            }
        }
        None => Counters::NotCounted {
            reason: "the run was interrupted before the counting round".into(),
        },
    }
}

/// The headline cost from the rounds' estimate, and the figures beside it;
/// no interval for the next run narrower than `floor_share` of it.
fn cost(
    estimate: &rounds::Estimate,
    used: &[&Round],
    next_run: Option<NextRun>,
    floor_share: f64,
    cx: &Context,
) -> Cost {
    let ticks = estimate.cost.value;
    let in_canaries: Vec<f64> = used
        .iter()
        .filter_map(|r| Some(r.measured.measurement.per_item.median.value / r.canary()?))
        .collect();
    let (next_run_interval, next_run_from) = figure::next_run_interval(
        estimate.cost,
        estimate.redrawn(),
        next_run,
        cx.drift_interval_pct,
        floor_share,
    );
    Cost {
        figure: None,
        ns_per_tick: cx.tsc.ticks_to_ns(1.0),
        rounds_ticks: estimate.cost,
        next_run_ticks: next_run_interval.map(|i| Figure::new(ticks, Some(i))),
        at_reference: None,
        machine_drift_pct: cx.drift_interval_pct,
        estimator: estimate.basis,
        rounds_used: estimate.rounds_used,
        interrupted_rounds: estimate.interrupted_rounds,
        thin_forks: estimate.thin_forks,
        target_met: crate::measure::schedule::meets_target(estimate, cx.settings),
        all_states_median_ticks: estimate.all_states,
        slow_state_ticks: estimate.slow_state,
        slow_round_share: estimate.slow_share,
        within_round_ci_half_width_pct: estimate
            .within_round_half_width
            .and_then(|half| (ticks.abs() > 0.0).then(|| half / ticks.abs() * 100.0)),
        in_canaries: stats::median_of(&in_canaries),
        forks: next_run.map_or_else(|| fork_count(used), |n| n.forks),
        between_forks_pct: next_run.map(|n| n.sd * 100.0),
        between_forks_df: next_run.map(|n| n.df),
        next_run_from,
    }
}

/// The figure at the run's reference speed beside the raw one, where the
/// variant has a speed coefficient: its rounds carried to the run's
/// reference speed and read as the raw ones are (the slow state's rounds
/// too, where the reference saw that state: `RunSpeed::counts`); its
/// interval for the next run from the forks' spread of those figures and
/// the rounds' interval (the machine's drift, which the reference takes
/// out, is not added).
fn set_at_reference(cost: &mut Cost, id: &str, v: &VariantRounds, cx: &Context, seed: u64) {
    let Some(fit) = cx.speed.fit(id, &v.variant.name) else {
        return;
    };
    let quiet = spread::QuietForRow::of(v, cx.model);
    let figures: Vec<RoundFigure> = v
        .rounds
        .iter()
        .filter_map(|r| {
            let raw = r.figure(cx.model);
            Some(RoundFigure {
                // The round's own interval stays the raw median's: only the
                // headline's figure and interval are read from these rounds.
                figure: Figure {
                    value: cx.speed.figure(id, v, r)?,
                    ..raw.figure
                },
                quiet: cx.speed.counts(r, &quiet),
                ..raw
            })
        })
        .collect();
    let Some(estimate) = rounds::estimate(&figures, cx.model.two_states, seed) else {
        return;
    };
    let next_run = cx.speed.spread.get(id, &v.variant.name);
    let floor_share = cx.floor_share(id, &v.variant.name);
    let (interval, _) = figure::next_run_interval(
        estimate.cost,
        estimate.redrawn(),
        next_run,
        None,
        floor_share,
    );
    let ticks = estimate.cost.value;
    // The coefficient's own uncertainty, over as far as the speed moves.
    let carrying = cx.speed.carrying(&fit);
    let interval = interval.map(|i| figure::widened_in_logs(ticks, i, carrying));
    cost.at_reference = Some(AtReference {
        ticks: Figure::new(ticks, interval),
        df: next_run.map(|n| n.df),
        coefficient: fit.coefficient,
        coefficient_fitted: fit.fitted.is_finite().then_some(fit.fitted),
        coefficient_se: cx.speed.coefficient_se(&fit),
        explained_pct: fit.fitted.is_finite().then_some(fit.explained * 100.0),
    });
}

/// Where rounds of the row were interrupted inside them: how many were
/// left out, and why.
fn interrupted_note(v: &VariantRounds) -> Option<String> {
    let interrupted = v.rounds.iter().filter(|r| r.interrupted).count();
    (interrupted > 0).then(|| {
        format!(
            "{} of its {} rounds left out as interrupted inside them: their median stood well \
             above the row's and above their own fastest sample, a burst their canaries did \
             not see",
            interrupted,
            v.rounds.len()
        )
    })
}

/// Where the slow state was shown not to move the row and some of its
/// rounds were read in it: that they count with the quiet ones, and why.
fn unmoved_note(quiet: &spread::QuietForRow, v: &VariantRounds) -> Option<String> {
    let slow = v
        .rounds
        .iter()
        .filter(|r| !r.of_no_level() && !r.quiet(quiet.model))
        .count();
    (quiet.unmoved && slow > 0).then(|| {
        format!(
            "the slow state did not move it (its slow rounds within ±{:.0}% of its quiet ones, \
             95%): its {slow} rounds in the slow state count with the quiet ones",
            crate::analysis::slow_state::UNMOVED_WITHIN * 100.0
        )
    })
}

/// How far the canary beside `rounds` sat above the quiet canary, as a
/// fraction: the median over the rounds of their canaries' mean.
fn slow_level_excess(rounds: &[&Round], model: &StateModel) -> f64 {
    let canaries: Vec<f64> = rounds.iter().filter_map(|r| r.canary()).collect();
    stats::median_of(&canaries).map_or(0.0, |c| (c / model.quiet_canary - 1.0).max(0.0))
}

/// A figure that stands on slow rounds only: each interval it prints
/// reaches down to the quiet level (`figure::reaching_down_to_quiet`), the
/// one at the reference speed too unless the reference saw the slow
/// levels (then a slow round read at that speed is as good as a quiet one).
fn reach_down_to_quiet(cost: &mut Cost, excess: f64, cx: &Context) {
    let down = |f: Figure| Figure {
        ci95: f
            .ci95
            .map(|interval| figure::reaching_down_to_quiet(interval, excess)),
        ..f
    };
    cost.rounds_ticks = down(cost.rounds_ticks);
    cost.next_run_ticks = cost.next_run_ticks.map(down);
    if cx.speed.sees_slow_state() {
        return;
    }
    if let Some(at) = cost.at_reference.as_mut() {
        at.ticks = down(at.ticks);
    }
}

fn fork_count(rounds: &[&Round]) -> usize {
    rounds::fork_count(rounds.iter().map(|r| r.fork))
}

fn rounds_of(v: &VariantRounds, model: &StateModel) -> Rounds {
    fn m(r: &Round) -> &crate::measure::harness::Measurement {
        &r.measured.measurement
    }
    let first = m(&v.rounds[0]);
    Rounds {
        stopped: v.stopped,
        interrupted: v.stopped == Some(Stop::Interrupted),
        total: v.rounds.len(),
        samples: v.rounds.iter().map(|r| m(r).per_item.n).sum(),
        elapsed_s: Some(v.elapsed_s),
        budget_s: Some(first.budget_s),
        base_batch: Some(first.base_batch),
        dropped_migrated: v.rounds.iter().map(|r| m(r).dropped_migrated).sum(),
        dropped_backwards: v.rounds.iter().map(|r| m(r).dropped_backwards).sum(),
        each: v.rounds.iter().map(|r| round_row(r, model)).collect(),
    }
}

fn round_row(round: &Round, model: &StateModel) -> RoundRow {
    let measurement = &round.measured.measurement;
    let s = &measurement.per_item;
    RoundRow {
        pass: round.pass,
        fork: round.fork,
        started_s: round.started_s,
        figure: s.median,
        n: s.n,
        min_ticks: s.min,
        p99_ticks: s.p99,
        fixed_ticks: measurement.fit.intercept,
        batch_medians_ticks: measurement
            .size_medians
            .iter()
            .map(|&(n, m)| BatchMedian(n as f64, m))
            .collect(),
        canary_before: round.canary_before,
        canary_after: round.canary_after,
        reference_ticks: round.reference().filter(|_| round.reference_steady()),
        partner_stalled_pct: round.measured.partner_stalled.map(|share| share * 100.0),
        figures: round
            .measured
            .figures
            .iter()
            .map(|f| (f.name.clone(), f.figure.value))
            .collect(),
        state: if round.interrupted {
            RoundState::Interrupted
        } else if round.partner_away() {
            RoundState::PartnerAway
        } else if round.quiet(model) {
            RoundState::Quiet
        } else {
            RoundState::Slow
        },
        worker_pid: round.worker_pid,
    }
}

/// What a row's rounds with the partner thread away say, apart from its
/// figure: how many, and from [`rounds::ROUNDS_A_FORK_STANDS_ON`] of
/// them on, the median they read, the other host state's figure.
fn partner_away_note(v: &VariantRounds, tsc: &TscFrequency) -> Option<String> {
    let away: Vec<f64> = v
        .rounds
        .iter()
        .filter(|r| r.partner_away() && !r.interrupted)
        .map(|r| r.measured.measurement.per_item.median.value)
        .collect();
    if away.is_empty() {
        return None;
    }
    // The spinner cannot tell who took its CPU: on a quiet guest the host
    // (a flush then skips the IPI), beside a load of this machine's own its
    // scheduler.
    let state = "the thread on the other CPU stalled (its CPU taken by the host or by this \
                 machine's own load) for more than a tenth of the round";
    let read = stats::median_of(&away)
        .filter(|_| away.len() >= rounds::ROUNDS_A_FORK_STANDS_ON)
        .map_or(String::new(), |ticks| {
            format!("; in that state it reads {:.1} ns", tsc.ticks_to_ns(ticks))
        });
    Some(format!(
        "{} of its {} rounds left out, run with {state}{read}",
        away.len(),
        v.rounds.len()
    ))
}

/// The rate and throughput the cost gives.
fn derived(
    v: &VariantRounds,
    ticks: f64,
    rate_unit: Option<&'static str>,
    tsc: &TscFrequency,
) -> Derived {
    let ns = tsc.ticks_to_ns(ticks);
    Derived {
        rate: rate_unit.filter(|_| ns > 0.0).map(|unit| Rate {
            unit: unit.to_string(),
            millions_per_s: 1000.0 / ns,
        }),
        toll_recovered: None,
        throughput: v
            .variant
            .bytes_per_item
            .filter(|&b| b > 0 && ns > 0.0)
            .map(|bytes| Throughput {
                bytes_per_item: bytes,
                ticks_per_byte: ticks / bytes as f64,
                mib_per_s: bytes as f64 / ns * 1e9 / (1024.0 * 1024.0),
            }),
    }
}

/// A variant against its baseline from pairs of rounds
/// ([`rounds::pair_by_pass`]), and the spread of its forks' differences.
fn compare(
    v: &VariantRounds,
    base: &VariantRounds,
    model: &StateModel,
    seed: u64,
) -> Option<(Comparison, VariantSpread)> {
    let by_pass = |rounds: &VariantRounds| -> Vec<rounds::PassRound> {
        rounds
            .rounds
            .iter()
            .map(|round| rounds::PassRound {
                fork: round.fork,
                pass: round.pass,
                ticks: round.measured.measurement.per_item.median.value,
                quiet: round.quiet(model),
                interrupted: round.of_no_level(),
            })
            .collect()
    };
    let pairs = rounds::pair_by_pass(by_pass(v), &by_pass(base));
    let p = rounds::paired(&pairs, model.two_states, seed)?;
    let spread = VariantSpread::of_paired(v.variant.name.clone(), &p);
    let comparison = Comparison {
        ratio: p.ratio,
        delta: p.delta,
        next_run_delta_ticks: None,
        pairs: p.pairs,
        basis: p.basis,
        headline_ratio: None,
        holds_headline_ratio: None,
    };
    Some((comparison, spread))
}

/// Sets each comparison's interval for the next run's difference
/// ([`NextRun::difference_interval`]): its forks' prediction is their
/// differences pooled with the probe's other variants', without a run
/// prior (differences of other probes are of other sizes). The floor is
/// the typical row's share of the row: a row's own floor is of its cost,
/// which moves with its baseline's, not of their difference.
fn set_next_run_differences(
    records: &mut [Record],
    differences: &[VariantSpread],
    drift_pct: Option<f64>,
    floor_share: f64,
) {
    for (name, next) in pooled_in_probe(differences, None) {
        let record = records
            .iter_mut()
            .find(|r| r.variant == name && r.vs_baseline.is_some());
        if let Some(record) = record {
            let floor = record.next_run_floor(floor_share);
            let Some(vs) = record.vs_baseline.as_mut() else {
                continue;
            };
            let interval = next.difference_interval(vs.delta, drift_pct, floor);
            vs.next_run_delta_ticks = Some(Figure::new(vs.delta.value, Some(interval)));
        }
    }
    // No variant of the probe had two forks of differences (`--forks 1`):
    // nothing to borrow a spread between processes from, and the Δ's
    // interval is this run's pairs alone. Said on the row, as a cost's is.
    for record in records.iter_mut() {
        if record
            .vs_baseline
            .as_ref()
            .is_some_and(|vs| vs.next_run_delta_ticks.is_none())
        {
            record.notes.push(ONE_PROCESS_PRICE.to_string());
        }
    }
}

/// The note on a row whose difference from its baseline no fork spread
/// stands behind.
pub const ONE_PROCESS_PRICE: &str = "Δ from one process: its interval is this run's pairs of \
                                     rounds only, which cannot see how far another process or \
                                     minute moves it";

/// Each figure a probe measured beside the cost, as the median over rounds
/// with the interval of the next run's median from five rounds on
/// ([`figure::next_run_of_median`]): over the `used` rounds, the
/// headline's, except a co-runner's wait, which is over `all` rounds: a
/// co-runner waits in the slow state too, and the latency advice must not
/// leave those waits out.
///
/// A co-runner's wait moves between runs with how the host schedules the
/// co-runner, more than its rounds show: where the history read how far
/// (`wait_floor` of the wait's name, log scale), its interval is at least
/// that wide, and a wait of too few rounds for an interval of its own gets
/// that one.
fn figures_over(
    used: &[&Round],
    all: &[&Round],
    seed: u64,
    wait_floor: impl Fn(&str) -> Option<f64>,
) -> Vec<NamedFigure> {
    let seen = || all.iter().flat_map(|r| r.measured.figures.iter());
    first_seen(seen().map(|f| (f.name.as_str(), f.unit.as_str(), f.role)))
        .into_iter()
        .filter_map(|(name, unit, role)| {
            let over = match role {
                FigureRole::CoRunnerWaitP99 => all,
                FigureRole::Plain => used,
            };
            let values: Vec<f64> = over
                .iter()
                .flat_map(|r| r.measured.figures.iter())
                .filter(|f| f.name == name)
                .map(|f| f.figure.value)
                .filter(|v| v.is_finite())
                .collect();
            if values.is_empty() {
                return None;
            }
            let median = rounds::median_with_ci(&values, seed);
            let value = median.value;
            let mut next_run = figure::next_run_of_median(&values, median);
            if let (FigureRole::CoRunnerWaitP99, Some(floor)) = (role, wait_floor(name)) {
                next_run = figure::at_least_log(next_run, value, floor);
            }
            Some(NamedFigure {
                figure: crate::analysis::figure::Figure::new(value, next_run),
                role,
                ..NamedFigure::new(name, value, unit)
            })
        })
        .collect()
}

/// Each item once, in the order first seen.
fn first_seen<T: PartialEq>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut seen = Vec::new();
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}

/// Each phase over the rounds the headline uses (`analysis::phases`).
fn phases_over(rounds: &[&Round], seed: u64) -> Vec<PhaseCost> {
    let each: Vec<&[PhaseCost]> = rounds
        .iter()
        .map(|r| &r.measured.measurement.phases[..])
        .collect();
    crate::analysis::phases::over_rounds(&each, seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::spread::{ForkSpread, NEXT_RUN_FLOOR_SHARE};

    fn record(variant: &str, role: Role, ratio: f64) -> Record {
        Record {
            id: "cflags/pipeline".into(),
            family: "cflags".into(),
            variant: variant.into(),
            role,
            params: serde_json::Value::Null,
            batch: None,
            latency_step: None,
            seed_choice: None,
            item: "packet".into(),
            baseline: Some("plain".into()),
            unsupported: None,
            cpus: vec![0],
            cost: None,
            vs_baseline: (role != Role::Baseline).then_some(Comparison {
                ratio: Figure::new(ratio, None),
                delta: Figure::new(0.0, None),
                next_run_delta_ticks: None,
                pairs: 10,
                basis: rounds::PairBasis::All,
                headline_ratio: None,
                holds_headline_ratio: None,
            }),
            layout: None,
            derived: Derived::default(),
            rounds: Rounds::default(),
            counters: Counters::NotCounted {
                reason: "test".into(),
            },
            phases: Vec::new(),
            estimated_phase_marks_ticks: None,
            notes: Vec::new(),
            figures: Vec::new(),
        }
    }

    #[test]
    fn a_difference_within_the_layout_spread_is_marked() {
        let mut records = vec![
            record("plain", Role::Baseline, 1.0),
            record("plain/align-32", Role::LayoutControl, 0.97),
            record("plain/align-16", Role::LayoutControl, 1.02),
            record("fortify", Role::Compared, 0.98),
            record("retpoline", Role::Compared, 1.40),
        ];
        mark_layout_spread(&mut records);
        let layout = |i: usize| records[i].layout.as_ref().unwrap();
        assert!((layout(0).spread_pct - 3.0).abs() < 1e-9);
        assert_eq!(layout(0).within_spread, None, "the baseline");
        assert_eq!(layout(1).within_spread, None, "a control");
        assert_eq!(layout(3).within_spread, Some(true));
        assert_eq!(layout(4).within_spread, Some(false));
        let mut none = vec![
            record("plain", Role::Baseline, 1.0),
            record("x", Role::Compared, 0.5),
        ];
        mark_layout_spread(&mut none);
        assert!(none[1].layout.is_none());
    }

    #[test]
    fn a_price_without_a_spread_between_processes_says_so() {
        let spread = |name: &str, forks: usize, differences: &[f64]| VariantSpread {
            name: name.into(),
            forks,
            spread: ForkSpread::of_differences(differences),
            lends: true,
        };
        let priced = |records: &[Record]| -> Vec<bool> {
            records
                .iter()
                .map(|r| r.notes.iter().any(|n| n == ONE_PROCESS_PRICE))
                .collect()
        };
        let run = |differences: &[VariantSpread]| {
            let mut records = vec![
                record("plain", Role::Baseline, 1.0),
                record("retpoline", Role::Compared, 1.4),
            ];
            set_next_run_differences(&mut records, differences, None, NEXT_RUN_FLOOR_SHARE);
            records
        };
        // One fork of differences: nothing to borrow; three: a spread.
        for (differences, noted) in [(&[4.0][..], true), (&[4.0, 5.0, 4.5][..], false)] {
            let records = run(&[spread("retpoline", differences.len(), differences)]);
            assert_eq!(priced(&records), [false, noted], "{differences:?}");
            let next = records[1]
                .vs_baseline
                .as_ref()
                .unwrap()
                .next_run_delta_ticks;
            assert_eq!(next.is_none(), noted, "{differences:?}");
        }
    }

    #[test]
    fn a_co_runners_wait_is_read_over_every_round() {
        // The headline uses the quiet rounds; a co-runner also waits while
        // the machine is slow, and the advice must see those waits.
        let with_wait = |wait: f64| {
            let mut round = crate::synthetic::round_at(100.0, 0, 0.0, 0, 300.0, 300.0);
            round.measured.figures = vec![NamedFigure::co_runner_wait_p99("wait", wait)];
            round
        };
        let quiet: Vec<Round> = (0..5).map(|_| with_wait(10.0)).collect();
        let slow: Vec<Round> = (0..6).map(|_| with_wait(100.0)).collect();
        let used: Vec<&Round> = quiet.iter().collect();
        let all: Vec<&Round> = quiet.iter().chain(&slow).collect();
        let figures = figures_over(&used, &all, 1, |_| None);
        assert_eq!(figures[0].figure.value, 100.0, "{figures:?}");
        assert_eq!(figures[0].role, FigureRole::CoRunnerWaitP99);
    }

    #[test]
    fn the_historys_wait_floor_gives_a_wait_of_few_rounds_its_interval_and_no_other_figure() {
        let rounds: Vec<Round> = (0..3)
            .map(|_| {
                let mut round = crate::synthetic::round_at(100.0, 0, 0.0, 0, 300.0, 300.0);
                round.measured.figures = vec![
                    NamedFigure::co_runner_wait_p99("wait", 20.0),
                    NamedFigure::new("longest stretch", 50.0, " us"),
                ];
                round
            })
            .collect();
        let used: Vec<&Round> = rounds.iter().collect();
        let interval = |floor: Option<f64>| {
            figures_over(&used, &used, 1, |_| floor)
                .iter()
                .map(|f| f.figure.ci95)
                .collect::<Vec<_>>()
        };
        // Three rounds: no interval of their own.
        assert_eq!(interval(None), [None, None]);
        let wait = Some([20.0 * (-0.3f64).exp(), 20.0 * 0.3f64.exp()]);
        assert_eq!(interval(Some(0.3)), [wait, None]);
    }

    #[test]
    fn a_rounds_own_figures_are_kept_in_its_row() {
        let mut round = crate::synthetic::round_at(1000.0, 0, 0.0, 0, 300.0, 300.0);
        let model = StateModel::fit(&[300.0; 20]);
        assert!(round_row(&round, &model).figures.is_empty());
        round.measured.figures = vec![
            crate::measure::probes::NamedFigure::new("trip", 80.0, " ns"),
            crate::measure::probes::NamedFigure::new("p99", 12.5, " us"),
        ];
        let row = round_row(&round, &model);
        assert_eq!(row.figures.get("trip"), Some(&80.0));
        assert_eq!(row.figures.get("p99"), Some(&12.5));
        assert_eq!(row.figures.len(), 2);
    }

    #[test]
    fn the_partner_away_state_is_shown_apart_from_three_rounds_on() {
        let tsc = TscFrequency {
            mhz: 1000.0,
            source: String::new(),
            calibrated_mhz: None,
        };
        let with_away = |away: usize| {
            let mut v = crate::synthetic::variant_rounds(&crate::synthetic::Truth {
                name: "remote",
                ticks: 1000.0,
                second_level: None,
                run_level: 0.0,
                baseline: false,
            });
            v.rounds = (0..10)
                .map(|i| {
                    let ticks = if i < away { 400.0 } else { 1000.0 };
                    let mut r = crate::synthetic::round_at(ticks, i, 0.0, 0, 300.0, 300.0);
                    r.measured.partner_stalled = Some(if i < away { 0.3 } else { 0.0 });
                    r
                })
                .collect();
            partner_away_note(&v, &tsc)
        };
        assert_eq!(with_away(0), None);
        let two = with_away(2).unwrap();
        assert!(two.starts_with("2 of its 10 rounds left out") && !two.contains("reads"));
        assert!(
            with_away(3)
                .unwrap()
                .ends_with("in that state it reads 400.0 ns")
        );
    }
}
