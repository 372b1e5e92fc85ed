//! One record per probe variant, in typed parts: who it is, what it cost,
//! how it compares with its baseline, the figures derived from its cost,
//! how its rounds stopped, its counters, and its rounds. Every figure is
//! computed once, in [`super::build`]; exporters only render.

pub use crate::analysis::figure::NextRunFrom;
use crate::analysis::figure::{self, Figure};
use crate::analysis::noise::RunFigure;
use crate::analysis::phases::PhaseCost;
use crate::analysis::rounds::{Basis, PairBasis, RoundState};
use crate::analysis::speed;
use crate::analysis::spread::fork_figures;
use crate::measure::harness::counters::CounterReport;
use crate::measure::probes::{Batched, FigureRole, LatencyStep, NamedFigure, Role, Unsupported};
use crate::measure::schedule::Stop;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Which row of a run a figure belongs to, as every comparison of runs
/// names it; serialized flat (its fields stand beside the row's own).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowKey {
    pub family: String,
    pub id: String,
    pub variant: String,
    pub item: String,
}

impl RowKey {
    pub fn of(record: &Record) -> RowKey {
        RowKey {
            family: record.family.clone(),
            id: record.id.clone(),
            variant: record.variant.clone(),
            item: record.item.clone(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    pub id: String,
    pub family: String,
    pub variant: String,
    pub role: Role,
    pub params: Value,
    /// For a variant in a series of batch sizes: the series and its size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch: Option<Batched>,
    /// For a variant in a series that trades throughput against a
    /// co-runner's wait: the series and its step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_step: Option<LatencyStep>,
    /// Where the variant is the choice a seed made: what the seed called it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_choice: Option<String>,
    /// What one item is; every per-item figure is per one of these.
    pub item: String,
    /// The variant of the same probe that ratios and deltas are against.
    pub baseline: Option<String>,
    /// Null, or why this machine cannot run the variant: a `kind` a
    /// program reads and the `reason` a person reads.
    pub unsupported: Option<Unsupported>,
    /// CPUs the measured work ran on, measuring thread first.
    pub cpus: Vec<usize>,
    /// Null when the variant was not measured.
    pub cost: Option<Cost>,
    /// Null for the baseline itself and where there are no pairs.
    pub vs_baseline: Option<Comparison>,
    /// For probes with layout controls (the baseline's code at other
    /// alignments).
    pub layout: Option<Layout>,
    pub derived: Derived,
    pub rounds: Rounds,
    pub counters: Counters,
    /// Cost per item of each phase the probe marked, and its share of the
    /// item's total: medians over the rounds `cost.estimator` names.
    #[serde(with = "super::fields::phases")]
    pub phases: Vec<PhaseCost>,
    /// For phased probes: what the phase marks (a fenced TSC read each) add
    /// to `cost.ticks`, estimated as marks per item times the measured cost
    /// of one mark.
    pub estimated_phase_marks_ticks: Option<f64>,
    /// What the probe said about this measurement.
    pub notes: Vec<String>,
    /// Figures the probe measured beside the cost per item: medians over
    /// the rounds `cost.estimator` names.
    pub figures: Vec<NamedFigure>,
}

impl Record {
    /// This run's figure of the row as the between-run noise model reads
    /// it (`analysis::noise`): the figure, its interval, and its figure in
    /// each fork from the rounds its headline uses. None without a figure.
    /// With `speed` (the reference speed to read it at, and this run's
    /// reference speed), the figure is its speed-normalized one carried to
    /// that speed, its rounds likewise, where the record has one; where it
    /// has none (no row of its run moved with the reference enough for a
    /// slope: the machine's speed hardly moved within it) but `speed`
    /// names the coefficient to carry by, its raw figure, which is then at
    /// the run's reference speed, is carried; else the raw figure.
    pub fn run_figure(&self, speed: Option<EqualSpeed>) -> Option<RunFigure> {
        let cost = self.cost.as_ref()?;
        let quiet_only = cost.estimator == Basis::QuietRounds;
        let used = self
            .rounds
            .each
            .iter()
            .filter(|r| !quiet_only || r.state == RoundState::Quiet);
        let normalized = speed.and_then(|s| Some((s, cost.at_reference?)));
        let slow_state = cost.estimator == Basis::NoQuietRound;
        match normalized {
            Some((s, at)) => {
                let coefficient = at.coefficient;
                let carrying = s.carry.unwrap_or(coefficient);
                let carry = |t: f64| speed::at_reference(t, s.run, s.at, carrying);
                let figure = at.ticks.map(carry);
                Some(RunFigure {
                    ticks: figure,
                    df: at.df,
                    ns: cost.in_ns(figure).value,
                    forks: fork_figures(used.filter_map(|r| {
                        let beside = r.reference_ticks?;
                        Some((
                            r.fork,
                            carry(speed::at_reference(
                                r.figure.value,
                                beside,
                                s.run,
                                coefficient,
                            )),
                        ))
                    })),
                    slow_state,
                })
            }
            None => {
                let carry = |t: f64| match speed {
                    Some(EqualSpeed {
                        at,
                        run,
                        carry: Some(by),
                    }) => speed::at_reference(t, run, at, by),
                    _ => t,
                };
                let figure = cost.raw_ticks().map(carry);
                Some(RunFigure {
                    ticks: figure,
                    df: cost.between_forks_df,
                    ns: cost.in_ns(figure).value,
                    forks: fork_figures(used.map(|r| (r.fork, carry(r.figure.value)))),
                    slow_state,
                })
            }
        }
    }

    /// Whether the row's figure is the slow state's (no quiet round) or
    /// missing: such a run is left out of a side whose other runs are quiet.
    pub fn slow_state(&self) -> bool {
        self.cost
            .as_ref()
            .is_none_or(|c| c.estimator == Basis::NoQuietRound)
    }

    pub fn is_baseline(&self) -> bool {
        self.role == Role::Baseline
    }

    /// The figure every output shows of this row, in ticks
    /// ([`Cost::shown_ticks`]).
    pub fn shown_ticks(&self) -> Option<Figure> {
        self.cost.as_ref().map(Cost::shown_ticks)
    }

    /// The same in ns.
    pub fn shown_ns(&self) -> Option<Figure> {
        self.cost.as_ref().map(Cost::shown_ns)
    }

    /// The shown figure's ticks: what fits, advice and plots read.
    pub fn cost_ticks(&self) -> Option<f64> {
        self.shown_ticks().map(|s| s.value)
    }

    /// Its rounds as pairing reads them ([`crate::analysis::rounds::pair_by_pass`]).
    pub fn pass_rounds(&self) -> Vec<crate::analysis::rounds::PassRound> {
        self.rounds
            .each
            .iter()
            .map(|round| crate::analysis::rounds::PassRound {
                fork: round.fork,
                pass: round.pass,
                ticks: round.figure.value,
                quiet: round.state == RoundState::Quiet,
                interrupted: !round.state.levelled(),
            })
            .collect()
    }

    /// The least half-width of an interval for the next run of this
    /// row's cost or of its difference from its baseline, ticks, at the
    /// run's floor `share` ([`crate::analysis::spread::next_run_floor`]).
    pub fn next_run_floor(&self, share: f64) -> f64 {
        let ticks = self.cost.as_ref().map_or(0.0, |c| c.rounds_ticks.value);
        crate::analysis::spread::next_run_floor(ticks, self.rounds.clock_step(), share)
    }

    /// The p99 of the same-CPU co-runner's wait, where the probe had one.
    pub fn co_runner_wait_p99(&self) -> Option<&NamedFigure> {
        self.figures
            .iter()
            .find(|f| f.role == FigureRole::CoRunnerWaitP99)
    }
}

/// The headline cost of one item and what stands beside it: its figures
/// in ticks, each with its interval, and the one factor that makes ns of
/// them ([`Cost::in_ns`]). The fields schema 3 added later carry
/// defaults, so that its first documents still read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cost {
    /// The figure every output shows ([`Cost::shown_ns`]), in the shape
    /// every document writes a figure in. Made when the document is
    /// written and where one is read (`results::with_figures`).
    #[serde(default)]
    pub figure: Option<figure::Reported>,
    /// ns per tick of the run's time-stamp counter.
    pub ns_per_tick: f64,
    /// The median of the rounds `estimator` names, the quiet-state cost,
    /// with a bootstrap 95% interval over the used rounds: how precisely
    /// this run pins its own figure down.
    pub rounds_ticks: Figure,
    /// The same figure with where the next run's may land (95%): on each
    /// side the wider of the forks' prediction interval (see
    /// `analysis::spread`) and the rounds' interval widened by
    /// `machine_drift_pct` in quadrature. The table prints it and
    /// `compare` reads it; `next_run_from` says what it stands on. None
    /// where no interval could be had.
    pub next_run_ticks: Option<Figure>,
    /// The figure at the run's reference speed, where the run read one and
    /// the row has a speed coefficient.
    pub at_reference: Option<AtReference>,
    /// Which rounds the cost is the median of.
    pub estimator: Basis,
    /// Rounds the cost is the median of.
    pub rounds_used: usize,
    /// Rounds left out as interrupted inside them
    /// (`analysis::rounds::interrupted`): of neither level.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub interrupted_rounds: usize,
    /// Forks the cost reads with fewer than three rounds each
    /// (`analysis::rounds::ROUNDS_A_FORK_STANDS_ON`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub thin_forks: usize,
    /// Whether the interval met the run's target.
    pub target_met: bool,
    /// Median over every round, whatever the machine's state: what a
    /// workload paid on average over this run. Not for comparing runs.
    pub all_states_median_ticks: f64,
    /// Median of the rounds the canary classed slow, and their share.
    pub slow_state_ticks: Option<f64>,
    pub slow_round_share: f64,
    /// Median of the rounds' own interval half-widths as a percentage of
    /// the cost: the precision inside one round, not across runs.
    pub within_round_ci_half_width_pct: Option<f64>,
    /// Each used round's figure divided by the canary read beside it, the
    /// median over rounds: the cost in null syscalls at the same moment.
    /// It cancels a machine speed that drifts between runs, and it moves
    /// with anything that changes the syscall path (a mitigation), so it
    /// compares runs of one boot, not boots.
    pub in_canaries: Option<f64>,
    /// The run's machine-drift term (`machine_states.drift_interval_pct`):
    /// how far the machine's quiet speed moved between stretches of the
    /// run, as a 95% half-width in percent. None when the run was too
    /// short to measure it.
    #[serde(default)]
    pub machine_drift_pct: Option<f64>,
    /// Forks the figure has rounds from, and the spread of their figures
    /// (standard deviation of a fork's figure, percent) with its degrees
    /// of freedom, its probe's and the run's pooled in.
    #[serde(default)]
    pub forks: usize,
    #[serde(default)]
    pub between_forks_pct: Option<f64>,
    #[serde(default)]
    pub between_forks_df: Option<f64>,
    /// What `next_run_ticks` stands on.
    #[serde(default)]
    pub next_run_from: NextRunFrom,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A row's figure at its run's reference speed (`machine_states.reference`):
/// each round's figure carried to it by the row's speed coefficient
/// (`analysis::speed`), then read as the raw figure is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AtReference {
    /// The figure, with where the next run's figure read at the same
    /// reference speed may land (95%: the forks' spread of the normalized
    /// figures, and at least the rounds' interval).
    pub ticks: Figure,
    /// The degrees of freedom that spread stood on.
    pub df: Option<f64>,
    /// How the row's rounds move with the reference, the machine's own
    /// speed (1: as the core's clock, 0: not at all). A row measured too
    /// thinly for a slope of its own takes the run's pooled slope
    /// (`coefficient_fitted` is then None).
    pub coefficient: f64,
    /// The slope as fitted before shrinking, and the share of the rounds'
    /// within-fork variance the coefficient explains, percent.
    pub coefficient_fitted: Option<f64>,
    /// How uncertain the coefficient used is (its own fit's standard error,
    /// or for a row that takes the run's pooled slope, the rows' median).
    pub coefficient_se: Option<f64>,
    pub explained_pct: Option<f64>,
}

impl Cost {
    /// The raw figure in ticks: the rounds' median.
    pub fn ticks(&self) -> f64 {
        self.rounds_ticks.value
    }

    /// A figure of this record in ticks, in ns: the one place a record's
    /// ticks become ns.
    pub fn in_ns(&self, ticks: Figure) -> Figure {
        ticks.map(|t| t * self.ns_per_tick)
    }

    /// The raw figure in ns.
    pub fn ns(&self) -> f64 {
        self.in_ns(self.rounds_ticks).value
    }

    /// [`Cost::shown_ns`] as a `figure` object: the level it was
    /// measured at, and what its interval stands on.
    pub fn reported(&self) -> figure::Reported {
        let forks = match self.forks {
            1 => "1 fork".to_string(),
            n => format!("{n} forks"),
        };
        let stands_on = format!("{} ({forks})", self.next_run_from.describe());
        figure::Reported {
            level: Some(match self.estimator {
                Basis::NoQuietRound => "slow".into(),
                _ => "quiet".into(),
            }),
            df: match &self.at_reference {
                Some(at) => at.df,
                None => self.between_forks_df,
            },
            ..figure::Reported::of(
                self.shown_ns(),
                "ns",
                match self.at_reference {
                    Some(_) => "at-reference-speed",
                    None => "next-run",
                },
                stands_on,
            )
        }
    }

    /// The raw figure in ticks, with the interval to read it against
    /// another run's: the next run's, or where there is none the rounds'.
    pub fn raw_ticks(&self) -> Figure {
        self.next_run_ticks.unwrap_or(self.rounds_ticks)
    }

    /// The figure a reader should read, in ticks with its interval: at
    /// the run's reference speed where the run measured one, else the raw
    /// figure.
    pub fn shown_ticks(&self) -> Figure {
        match &self.at_reference {
            Some(at) => at.ticks,
            None => self.raw_ticks(),
        }
    }

    /// [`Cost::shown_ticks`] in ns.
    pub fn shown_ns(&self) -> Figure {
        self.in_ns(self.shown_ticks())
    }
}

/// The reference speed a figure is read at (`at`), and the reference
/// speed of the run it comes from (`run`), both ticks per reference step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EqualSpeed {
    pub at: f64,
    pub run: f64,
    /// The coefficient that carries the figure from `run` to `at`, where
    /// it is not the record's own (a comparison reads one row's runs with
    /// one coefficient, so that its error moves them all alike).
    pub carry: Option<f64>,
}

/// Against the baseline, per pair of rounds adjacent in time (the
/// variant's round and the baseline's nearest one): the median ratio and
/// difference, each with a bootstrap 95% interval over the pairs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Comparison {
    #[serde(flatten, with = "crate::store::results::fields::as_ratio")]
    pub ratio: figure::Figure,
    #[serde(flatten, with = "crate::store::results::fields::as_delta_ticks")]
    pub delta: figure::Figure,
    /// Where the next run's difference may land (95%): from the spread of
    /// the forks' differences, pooled with the probe's other variants'
    /// (`analysis::spread::pooled_in_probe`). `delta_ci95_ticks` says how
    /// precisely this run pins its difference; this, how far another run's
    /// may lie from it. The kernel's price list prints it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_run_delta_ticks: Option<figure::Figure>,
    pub pairs: usize,
    pub basis: PairBasis,
    /// The headline figures' own ratio (this cost over the baseline's),
    /// and whether `ratio_ci95` holds it; where it does not, the record's
    /// notes say why.
    #[serde(default)]
    pub headline_ratio: Option<f64>,
    #[serde(default)]
    pub holds_headline_ratio: Option<bool>,
}

impl Comparison {
    /// The difference in ticks with where the next run's may land: the
    /// forks' prediction and this run's own interval together (a document
    /// before the prediction: this run's alone). The answer and the price
    /// list read this; this run's own interval alone claimed a precision
    /// the next run missed (9006596).
    pub fn next_run_delta(&self) -> figure::Figure {
        let interval = figure::hull(
            [
                self.next_run_delta_ticks.and_then(|f| f.ci95),
                self.delta.ci95,
            ]
            .into_iter()
            .flatten(),
        );
        figure::Figure::new(self.delta.value, interval)
    }
}

/// How far placement alone moved the figure (the largest |ratio - 1| of a
/// layout control, in percent), and for a compared variant whether its
/// ratio is within it, so that its difference from the baseline cannot be
/// told apart from placement.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Layout {
    pub spread_pct: f64,
    pub within_spread: Option<bool>,
}

/// Figures derived from the cost, each labelled as derived by its place.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Derived {
    /// Millions of items per second from the cost (`unit`, e.g. "Mpps").
    pub rate: Option<Rate>,
    /// For probes with a toll: the share of it this variant avoids.
    pub toll_recovered: Option<TollRecovered>,
    /// For items that are a buffer of bytes.
    pub throughput: Option<Throughput>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Rate {
    pub unit: String,
    pub millions_per_s: f64,
}

/// (toll - cost) / (toll - reference) in percent, with a conservative 95%
/// interval from the three costs' intervals.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TollRecovered {
    #[serde(flatten, with = "crate::store::results::fields::as_pct")]
    pub pct: figure::Figure,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Throughput {
    pub bytes_per_item: u64,
    pub ticks_per_byte: f64,
    pub mib_per_s: f64,
}

/// How the variant's rounds went.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Rounds {
    /// Why the variant got no more rounds.
    pub stopped: Option<Stop>,
    pub interrupted: bool,
    pub total: usize,
    /// Samples kept over all rounds.
    pub samples: usize,
    /// Wall time of its rounds, set-up included, and the budget they had.
    pub elapsed_s: Option<f64>,
    pub budget_s: Option<f64>,
    pub base_batch: Option<u64>,
    pub dropped_migrated: usize,
    pub dropped_backwards: usize,
    /// Every round, in the order measured.
    pub each: Vec<RoundRow>,
}

impl Rounds {
    /// The clock's step over a batch's items, ticks: the finest difference
    /// a per-item figure of these rounds can resolve.
    pub fn clock_step(&self) -> f64 {
        1.0 / self.base_batch.unwrap_or(1).max(1) as f64
    }
}

/// One point of a round's fit: items per batch and the median ticks of its
/// samples, written as a pair `[items, ticks]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BatchMedian(pub f64, pub f64);

/// One round as the JSON carries it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RoundRow {
    pub pass: usize,
    /// Which fork (worker process) the round ran in.
    #[serde(default)]
    pub fork: usize,
    pub started_s: f64,
    /// The round's median cost per item and its own 95% interval (JSON:
    /// `ticks`, `ci95_ticks`).
    #[serde(flatten, with = "crate::store::results::fields::as_round_ticks")]
    pub figure: Figure,
    pub n: usize,
    pub min_ticks: f64,
    pub p99_ticks: f64,
    /// The fixed cost per sample the fit removed.
    pub fixed_ticks: f64,
    /// For each batch size timed, the point the fit went through.
    pub batch_medians_ticks: Vec<BatchMedian>,
    pub canary_before: Option<f64>,
    pub canary_after: Option<f64>,
    /// The reference beside the round (the mean of the readings before and
    /// after it): the machine's own speed while it ran. None where the two
    /// readings disagreed (the machine changed state during the round).
    #[serde(default)]
    pub reference_ticks: Option<f64>,
    /// How much of the round the thread the probe kept on another CPU was
    /// stalled, percent; only for probes that keep one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partner_stalled_pct: Option<f64>,
    /// This round's own value of each figure the probe measured beside the
    /// cost (`Record::figures` holds their median over rounds), by name, in
    /// the figure's unit: what a round is read against, such as where the
    /// host placed a remote shootdown's two CPUs.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub figures: BTreeMap<String, f64>,
    /// By the run's state model.
    pub state: RoundState,
    pub worker_pid: u32,
}

/// Hardware counters, taken in a counting round of their own whose timing
/// never enters `cost`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Counters {
    Counted {
        /// The counting round's own cost per item: beside `cost.ticks` it
        /// shows what attaching the counters does to the figure.
        counting_round_ticks: f64,
        values: CounterReport,
    },
    /// The counting round ran and the counters could not be had.
    Unavailable {
        #[serde(flatten)]
        why: Unsupported,
        counting_round_ticks: f64,
    },
    /// No counting round: the variant was not measured, or the run was
    /// interrupted first.
    NotCounted { reason: String },
}
