//! Figures from rounds: the headline cost of a variant and its interval,
//! and the paired comparison of two variants, from many short rounds
//! classed quiet or slow by the machine's canary (see [`super::states`]).
//!
//! The headline is the median of the quiet rounds' figures. Timing noise
//! only ever adds, and on a guest its host slows now and then, the quiet
//! state is the one the next run will find again; the median of all rounds
//! moves with the share of slow time. Its 95% interval is a bootstrap over
//! the rounds' figures: each round's figure already carries its own
//! sampling noise, so resampling inside the rounds as well would count that
//! noise twice. The rounds' spread is what a next run differs by; pooled
//! samples would hide it behind their sheer number.

use super::interval::Figure;
use super::redrawn;
use super::stats::{self, median};
use serde::{Deserialize, Serialize};

/// Fewer rounds than this give no interval.
pub const MIN_ROUNDS_FOR_CI: usize = 5;
/// Bootstrap resamples for round-level intervals.
const RESAMPLES: usize = stats::Summary::RESAMPLES;

/// One round as the estimator sees it.
#[derive(Debug, Clone)]
pub struct RoundFigure {
    /// The round's median cost per item, ticks, with the round's own 95%
    /// interval of it where it had samples enough for one.
    pub figure: Figure,
    /// Whether the round counts among the quiet ones: the canaries on both
    /// sides read quiet (read at one reference speed that saw the slow
    /// state, of one state: `results::speed::RunSpeed::counts`).
    pub quiet: bool,
    /// The fork (worker process) it ran in.
    pub fork: usize,
    /// Interrupted inside it ([`interrupted`]): neither a quiet round nor
    /// the slow level's.
    pub interrupted: bool,
}

/// Rounds a fork's median needs before no one of them can carry it past
/// the others. A fork with fewer still counts once in the headline (its
/// process's level is as much the run's as any other's: drawing a thin
/// fork towards the row's other rounds moved rows at a level per process
/// by up to 17% on the synthetic machine), and the record says how many
/// it has ([`Estimate::thin_forks`]); what an interruption does to such a
/// fork is [`interrupted`]'s to catch.
pub const ROUNDS_A_FORK_STANDS_ON: usize = 3;

/// How far a round's median must stand above the row's level and, beyond
/// the row's usual gap, above its own fastest sample, in the row's robust
/// spread of that gap, before the round counts as interrupted: four
/// standard deviations of a row whose rounds differ by their noise alone.
const INTERRUPTED_SPREADS: f64 = 4.0;

/// The fewest rounds of a row whose median and usual gap one interrupted
/// round cannot carry.
const ROUNDS_TO_JUDGE: usize = 3;

/// Which of a row's rounds ([`RoundReading`]) were interrupted inside
/// them: a burst the canaries on either side did not see (it began and
/// ended within the round) lifted most of the round's samples while its
/// fastest stayed at the level. Only a round whose canaries read quiet is
/// judged: a slow one is the slow level's whatever happened inside it.
///
/// A round is judged against the row's clean quiet rounds, those whose
/// gap from median to fastest sample is within the margin of the row's
/// usual gap: on a busy host most of a row's rounds can be slowed inside,
/// and a reference taken over all of them (their median gap and level)
/// let a quiet round lifted 18% stand as quiet (the busy Zen 3's getpid,
/// 2026-12-03). The usual gap is the `earlier` runs' ([`UsualGap`]) where
/// the history has them, else the smallest of the row's quiet rounds'; the
/// margin is twice the canary's quiet `band` (a share) or
/// [`INTERRUPTED_SPREADS`] of the gaps' robust spread (the earlier runs',
/// else over all the row's rounds), whichever is more. A round is
/// interrupted when its gap stands beyond the usual gap, and its median
/// above the median of its fork's clean rounds, both by more than the
/// margin; where its fork has no clean round, by its gap alone. A round
/// of a slow level all through keeps its gap (its fastest sample is
/// slowed too) and stays the canaries' to class. Fewer than
/// [`ROUNDS_TO_JUDGE`] rounds say nothing.
pub fn interrupted(rounds: &[RoundReading], band: f64, earlier: Option<UsualGap>) -> Vec<bool> {
    let mut flags = vec![false; rounds.len()];
    if rounds.len() < ROUNDS_TO_JUDGE {
        return flags;
    }
    let Some(gaps) = gaps(rounds) else {
        return flags;
    };
    let quiet = || (0..rounds.len()).filter(|&i| rounds[i].canaries_quiet);
    let (reference, spread) = match earlier {
        Some(e) => (e.gap, e.spread),
        None => (
            quiet().map(|i| gaps[i]).fold(f64::INFINITY, f64::min),
            UsualGap::of_gaps(&gaps).spread,
        ),
    };
    let margin = (2.0 * band).max(INTERRUPTED_SPREADS * spread);
    let clean: Vec<usize> = quiet().filter(|&i| gaps[i] <= reference + margin).collect();
    let Some(usual) = earlier
        .map(|e| e.gap)
        .or_else(|| stats::median_of(&clean.iter().map(|&i| gaps[i]).collect::<Vec<_>>()))
    else {
        return flags;
    };
    // Each process has a level of its own (a layout): a round is held to
    // the clean rounds of its fork.
    let level_of_fork = |fork: usize| {
        let medians: Vec<f64> = clean
            .iter()
            .filter(|&&i| rounds[i].fork == fork)
            .map(|&i| rounds[i].median)
            .collect();
        stats::median_of(&medians).filter(|level| *level > 0.0)
    };
    for i in quiet() {
        let above_the_level = level_of_fork(rounds[i].fork)
            .is_none_or(|level| rounds[i].median / level - 1.0 > margin);
        flags[i] = gaps[i] - usual > margin && above_the_level;
    }
    flags
}

/// Each round's gap from its median down to its fastest sample, as a
/// share of the rounds' typical fastest sample (one scale for the whole
/// row, so that the gaps compare with the canary's band); None where the
/// rounds have no positive fastest sample to scale by.
fn gaps(rounds: &[RoundReading]) -> Option<Vec<f64>> {
    let scale = stats::median_of(&rounds.iter().map(|r| r.fastest).collect::<Vec<_>>())?;
    (scale > 0.0).then(|| {
        rounds
            .iter()
            .map(|r| (r.median - r.fastest) / scale)
            .collect()
    })
}

/// How far a row's clean rounds stand above their fastest sample: read
/// over the quiet rounds of the history's earlier runs of the same
/// conditions, the reference [`interrupted`] holds a run's rounds to when
/// most of them were slowed inside (a thread churn whose quiet rounds all
/// but one stood 29-57% above their fastest samples, where its rounds of
/// other runs stood 2-6%: the busy Zen 3, 2026-12-03).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UsualGap {
    /// The rounds' median gap, a share of their typical fastest sample.
    pub gap: f64,
    /// The gaps' robust spread (a standard deviation's worth).
    pub spread: f64,
}

/// Each row's usual gap, keyed by probe and variant.
pub type UsualGaps = std::collections::BTreeMap<(String, String), UsualGap>;

/// Earlier quiet rounds a row's usual gap is read from, at the fewest:
/// fewer say too little of how far its gap moves.
pub const ROUNDS_FOR_A_USUAL_GAP: usize = 8;

impl UsualGap {
    /// From earlier quiet rounds; None under [`ROUNDS_FOR_A_USUAL_GAP`]
    /// rounds or without a positive fastest sample.
    pub fn of(rounds: &[RoundReading]) -> Option<UsualGap> {
        if rounds.len() < ROUNDS_FOR_A_USUAL_GAP {
            return None;
        }
        Some(UsualGap::of_gaps(&gaps(rounds)?))
    }

    /// Each row's usual gap from its earlier quiet rounds, keyed by probe
    /// and variant; rows of too few rounds are left out.
    pub fn of_rows(
        rows: impl IntoIterator<Item = ((String, String), Vec<RoundReading>)>,
    ) -> UsualGaps {
        rows.into_iter()
            .filter_map(|(row, rounds)| Some((row, UsualGap::of(&rounds)?)))
            .collect()
    }

    fn of_gaps(gaps: &[f64]) -> UsualGap {
        let gap = stats::median_in_place(&mut gaps.to_vec());
        UsualGap {
            gap,
            spread: stats::MAD_TO_SD * stats::mad(gaps, gap),
        }
    }
}

/// A round as [`interrupted`] reads it: its median and its fastest sample,
/// ticks, whether the canaries on both sides of it read quiet, and the
/// fork it ran in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundReading {
    pub median: f64,
    pub fastest: f64,
    pub canaries_quiet: bool,
    pub fork: usize,
}

/// Which rounds the headline figure is the median of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// The machine showed two states; the rounds classed quiet.
    QuietRounds,
    /// The machine showed one state; every round.
    AllRounds,
    /// Two states, and no round of this variant was quiet: every round,
    /// and the figure is the slow state's (said in the report).
    NoQuietRound,
}

impl Basis {
    /// Which rounds a variant's headline is taken from: the quiet ones
    /// where the machine showed two states and the variant has any.
    pub fn of(two_states: bool, any_quiet: bool) -> Basis {
        match (two_states, any_quiet) {
            (false, _) => Basis::AllRounds,
            (true, false) => Basis::NoQuietRound,
            (true, true) => Basis::QuietRounds,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Basis::QuietRounds => "median of the quiet-state rounds",
            Basis::AllRounds => "median of all rounds (one machine state)",
            Basis::NoQuietRound => "median of all rounds: none ran in the quiet state",
        }
    }
}

/// A variant's figures over its rounds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Estimate {
    /// The median over forks of each fork's median round, with the
    /// bootstrap 95% interval over the used rounds (none under
    /// [`MIN_ROUNDS_FOR_CI`] rounds).
    pub cost: Figure,
    pub basis: Basis,
    /// Rounds `cost` is the median of, and all rounds.
    pub rounds_used: usize,
    pub rounds: usize,
    /// Rounds interrupted inside them ([`interrupted`]), left out.
    pub interrupted_rounds: usize,
    /// Forks `cost` reads with fewer than [`ROUNDS_A_FORK_STANDS_ON`]
    /// rounds.
    pub thin_forks: usize,
    /// Median over every round, whatever the state: what a workload pays
    /// on average over this run.
    pub all_states: f64,
    /// Median of the slow rounds and their share of all, when there are any.
    pub slow_state: Option<f64>,
    pub slow_share: f64,
    /// Median over rounds of each round's own CI half-width: the precision
    /// one round reaches, not what a next run differs by.
    pub within_round_half_width: Option<f64>,
    /// The used rounds' figures by fork, and the seed `cost`'s interval
    /// was drawn with: what [`Estimate::redrawn`] reads.
    #[serde(skip)]
    used_by_fork: Vec<Vec<f64>>,
    #[serde(skip)]
    seed: u64,
}

impl Estimate {
    /// Where the next run's figure lands when its forks draw their rounds
    /// from the used ones, pooled ([`super::redrawn`]): a row at two levels
    /// whose forks both read the lower one. None for a row at one level
    /// and under [`MIN_ROUNDS_FOR_CI`] rounds. Read where the interval for
    /// the next run is made; the stopping rule, which makes an estimate
    /// every pass, does not need it.
    pub fn redrawn(&self) -> Option<[f64; 2]> {
        let forks = &self.used_by_fork;
        (self.rounds_used >= MIN_ROUNDS_FOR_CI && redrawn::at_levels(&forks.concat()))
            .then(|| redrawn_figure(forks, self.seed))
            .flatten()
    }
}

/// A stable seed per probe, so a re-analysis gives the same intervals and
/// the stopping rule judges a variant's interval as its record does.
pub fn seed_of(id: &str) -> u64 {
    id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// The headline and the figures beside it; None without rounds.
/// `two_states` is the run's [`super::states::StateModel::two_states`].
pub fn estimate(rounds: &[RoundFigure], two_states: bool, seed: u64) -> Option<Estimate> {
    if rounds.is_empty() {
        return None;
    }
    // An interrupted round is of no level; where every round was, they
    // are all there is to read.
    let levelled: Vec<&RoundFigure> = if rounds.iter().all(|r| r.interrupted) {
        rounds.iter().collect()
    } else {
        rounds.iter().filter(|r| !r.interrupted).collect()
    };
    let quiet: Vec<&RoundFigure> = levelled.iter().copied().filter(|r| r.quiet).collect();
    let basis = Basis::of(two_states, !quiet.is_empty());
    let used: Vec<&RoundFigure> = match basis {
        Basis::QuietRounds => quiet,
        Basis::AllRounds | Basis::NoQuietRound => levelled.clone(),
    };
    let figures = |set: &mut dyn Iterator<Item = &RoundFigure>| -> Vec<f64> {
        let mut v: Vec<f64> = set.map(|r| r.figure.value).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let all = figures(&mut rounds.iter());
    let slow = figures(&mut levelled.iter().copied().filter(|r| !r.quiet));
    let half_widths: Vec<f64> = {
        let mut h: Vec<f64> = rounds
            .iter()
            .filter_map(|r| Some(super::interval::half_width(r.figure.value, r.figure.ci95?)))
            .collect();
        h.sort_by(f64::total_cmp);
        h
    };
    let by_fork = by_fork(used.iter().map(|r| (r.fork, r.figure.value)));
    Some(Estimate {
        cost: Figure::new(
            across_forks(&by_fork.iter().map(|f| median(f)).collect::<Vec<_>>()),
            (used.len() >= MIN_ROUNDS_FOR_CI).then(|| {
                let (lo, hi) = stratified_ci(&by_fork, seed);
                [lo, hi]
            }),
        ),
        basis,
        rounds_used: used.len(),
        rounds: rounds.len(),
        interrupted_rounds: rounds.iter().filter(|r| r.interrupted).count(),
        thin_forks: by_fork
            .iter()
            .filter(|f| f.len() < ROUNDS_A_FORK_STANDS_ON)
            .count(),
        all_states: median(&all),
        slow_state: (!slow.is_empty()).then(|| median(&slow)),
        slow_share: slow.len() as f64 / rounds.len() as f64,
        within_round_half_width: (!half_widths.is_empty()).then(|| median(&half_widths)),
        used_by_fork: by_fork,
        seed,
    })
}

/// [`redrawn`](super::redrawn)'s interval of [`across_forks`] of the next
/// run's fork medians.
fn redrawn_figure(by_fork: &[Vec<f64>], seed: u64) -> Option<[f64; 2]> {
    let (mut fork, mut medians) = (Vec::new(), Vec::new());
    redrawn::interval(redrawn::redraws(by_fork, seed, |next| {
        medians.clear();
        for drawn in next {
            fork.clear();
            fork.extend_from_slice(drawn);
            medians.push(stats::median_in_place(&mut fork));
        }
        across_forks(&medians)
    }))
}

/// How many forks the rounds ran in, given each round's fork.
pub fn fork_count(forks: impl IntoIterator<Item = usize>) -> usize {
    forks
        .into_iter()
        .collect::<std::collections::BTreeSet<usize>>()
        .len()
}

/// Round figures, given as (fork, figure), grouped by fork in fork order,
/// each fork's sorted.
pub fn by_fork(rounds: impl IntoIterator<Item = (usize, f64)>) -> Vec<Vec<f64>> {
    let mut forks: std::collections::BTreeMap<usize, Vec<f64>> = Default::default();
    for (fork, figure) in rounds {
        forks.entry(fork).or_default().push(figure);
    }
    forks
        .into_values()
        .map(|mut f| {
            f.sort_by(f64::total_cmp);
            f
        })
        .collect()
}

/// The headline from each fork's median: their geometric mean. Within a
/// process the median shrugs off a disturbed round; across processes each
/// counts once, however many of its rounds were quiet, so the figure is
/// not pulled towards whichever fork the slow state spared, and it is the
/// mean the forks' spread (and so the interval for the next run) is of.
pub fn across_forks(fork_medians: &[f64]) -> f64 {
    if let [one] = fork_medians {
        *one
    } else if fork_medians.iter().all(|m| *m > 0.0) {
        let logs: f64 = fork_medians.iter().map(|m| m.ln()).sum();
        (logs / fork_medians.len() as f64).exp()
    } else {
        fork_medians.iter().sum::<f64>() / fork_medians.len() as f64
    }
}

/// 95% bootstrap interval of [`across_forks`]: each fork's rounds
/// resampled within the fork (`by_fork`'s forks are sorted, so a
/// resample's median is read from its counts).
fn stratified_ci(by_fork: &[Vec<f64>], seed: u64) -> (f64, f64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut draws = Vec::with_capacity(RESAMPLES);
    let mut medians = vec![0.0; by_fork.len()];
    let mut counts = Vec::new();
    for _ in 0..RESAMPLES {
        for (fork, slot) in by_fork.iter().zip(medians.iter_mut()) {
            stats::draw_counts(&mut rng, fork.len(), &mut counts);
            *slot = stats::median_of_counted(
                fork.iter().copied().zip(counts.iter().copied()),
                fork.len(),
            );
        }
        draws.push(across_forks(&medians));
    }
    draws.sort_by(f64::total_cmp);
    stats::central_interval(&draws, 0.95)
}

/// A round of a variant and the baseline's round nearest to it in time:
/// the same machine state, as far as the run can arrange it.
#[derive(Debug, Clone, Copy)]
pub struct Pair {
    pub variant: f64,
    pub baseline: f64,
    /// The fork both rounds ran in.
    pub fork: usize,
    /// Both rounds were classed quiet.
    pub quiet: bool,
    /// Either round was interrupted inside it ([`interrupted`]).
    pub interrupted: bool,
}

/// A round as pairing reads it: its fork, its pass, its figure, whether
/// it counts as quiet and whether it was interrupted inside it.
#[derive(Debug, Clone, Copy)]
pub struct PassRound {
    pub fork: usize,
    pub pass: usize,
    /// The round's median cost per item, ticks.
    pub ticks: f64,
    pub quiet: bool,
    pub interrupted: bool,
}

/// Each round of a variant with the baseline's round of the same pass of
/// the same fork, which ran beside it in time and in the same process. A
/// round whose pass has no baseline round (the baseline's budget ran out
/// first) stays unpaired rather than be set against a round minutes away.
pub fn pair_by_pass(
    variant: impl IntoIterator<Item = PassRound>,
    baseline: &[PassRound],
) -> Vec<Pair> {
    variant
        .into_iter()
        .filter_map(|round| {
            let beside = baseline
                .iter()
                .find(|b| b.fork == round.fork && b.pass == round.pass)?;
            Some(Pair {
                variant: round.ticks,
                baseline: beside.ticks,
                fork: round.fork,
                quiet: round.quiet && beside.quiet,
                interrupted: round.interrupted || beside.interrupted,
            })
        })
        .collect()
}

/// Ratio and difference against the baseline from pairs of rounds.
#[derive(Debug, Clone)]
pub struct Paired {
    /// The forks' ratio and difference (ticks) of their pairs' medians,
    /// each with a bootstrap 95% interval over pairs from
    /// [`MIN_ROUNDS_FOR_CI`] pairs on; where the pairs' differences stand
    /// at levels, the difference's holds a next run whose forks draw
    /// their pairs from these, pooled ([`super::redrawn`]), too.
    pub ratio: Figure,
    pub delta: Figure,
    pub pairs: usize,
    pub basis: PairBasis,
    /// Each fork's difference (its variant's median less its baseline's):
    /// what a next run's processes redraw, which `delta`'s interval (pairs
    /// resampled inside this run's forks) does not count.
    pub fork_deltas: Vec<f64>,
}

/// Which pairs of rounds a comparison with the baseline stands on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PairBasis {
    /// Only pairs of two quiet rounds (the machine showed two states).
    Quiet,
    /// Every pair.
    All,
}

impl PairBasis {
    /// Whether a figure read from these pairs stands off the quiet level:
    /// a run of two states had too few quiet pairs, so it read every pair.
    pub fn off_the_quiet_level(self, two_states: bool) -> bool {
        two_states && self == PairBasis::All
    }
}

impl std::fmt::Display for PairBasis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PairBasis::Quiet => "quiet",
            PairBasis::All => "all",
        })
    }
}

/// The state a round ran in, by the run's state model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RoundState {
    Quiet,
    Slow,
    /// Interrupted inside it ([`interrupted`]): of neither level.
    Interrupted,
    /// Run while the thread its probe kept on another CPU was stalled
    /// (`crate::measure::schedule::Round::partner_away`): of another host state,
    /// and of neither level.
    PartnerAway,
}

impl RoundState {
    /// Whether the round is of the quiet or a slow level.
    pub fn levelled(self) -> bool {
        matches!(self, RoundState::Quiet | RoundState::Slow)
    }
}

/// Pairs of two quiet rounds when the machine showed two states and there
/// are enough of them, else every pair.
pub fn paired(pairs: &[Pair], two_states: bool, seed: u64) -> Option<Paired> {
    // As for a headline: a pair with an interrupted round is of no level.
    let levelled: Vec<Pair> = if pairs.iter().all(|p| p.interrupted) {
        pairs.to_vec()
    } else {
        pairs.iter().copied().filter(|p| !p.interrupted).collect()
    };
    let quiet: Vec<Pair> = levelled.iter().copied().filter(|p| p.quiet).collect();
    let (used, basis) = if two_states && quiet.len() >= MIN_ROUNDS_FOR_CI {
        (quiet, PairBasis::Quiet)
    } else {
        (levelled, PairBasis::All)
    };
    let used: Vec<Pair> = used.into_iter().filter(|p| p.baseline > 0.0).collect();
    if used.is_empty() {
        return None;
    }
    let mut by_fork: std::collections::BTreeMap<usize, Vec<Pair>> = Default::default();
    for p in &used {
        by_fork.entry(p.fork).or_default().push(*p);
    }
    let forks: Vec<Vec<Pair>> = by_fork.into_values().collect();
    let mut scratch = Vec::new();
    let sides: Vec<(f64, f64)> = forks
        .iter()
        .map(|fork| medians_of_sides(fork, &mut scratch))
        .collect();
    let (ratio, fork_deltas) = paired_figures(sides.iter().copied());
    let delta = stats::mean(&fork_deltas);
    let (ratio_ci95, delta_ci95) = if used.len() >= MIN_ROUNDS_FOR_CI {
        let (ratios, deltas) = resampled_pairs(&forks, seed);
        let interval = |draws: &[f64]| {
            let (lo, hi) = stats::central_interval(draws, 0.95);
            [lo, hi]
        };
        let [lo, hi] = interval(&deltas);
        // A redrawn end is a difference the next run may read, and moves
        // by the least floor a difference gets (of the variant's cost).
        let variant = stats::mean(&sides.iter().map(|(v, _)| *v).collect::<Vec<_>>());
        let slack =
            super::interval::next_run_floor(variant, 0.0, super::interval::NEXT_RUN_FLOOR_SHARE);
        let differences: Vec<f64> = used.iter().map(|p| p.variant - p.baseline).collect();
        let redrawn = redrawn::at_levels(&differences)
            .then(|| {
                // The mean of the next run's fork deltas, as `delta` is.
                redrawn::interval(redrawn::redraws(&forks, seed, |next| {
                    let deltas = next.iter().map(|fork| {
                        let (variant, baseline) = medians_of_sides(fork, &mut scratch);
                        variant - baseline
                    });
                    deltas.sum::<f64>() / next.len() as f64
                }))
            })
            .flatten();
        let [r_lo, r_hi] = redrawn.map_or([lo, hi], |[a, b]| [a - slack, b + slack]);
        let delta_ci95 = [lo.min(r_lo).min(delta), hi.max(r_hi).max(delta)];
        (Some(interval(&ratios)), Some(delta_ci95))
    } else {
        (None, None)
    };
    Some(Paired {
        ratio: Figure::new(ratio, ratio_ci95),
        delta: Figure::new(delta, delta_ci95),
        pairs: used.len(),
        basis,
        fork_deltas,
    })
}

/// A fork's pairs' (variant median, baseline median), each side read in
/// `scratch` (a redraw reads thousands of forks: one buffer serves them).
fn medians_of_sides(fork: &[Pair], scratch: &mut Vec<f64>) -> (f64, f64) {
    let mut median_of = |side: fn(&Pair) -> f64| {
        scratch.clear();
        scratch.extend(fork.iter().map(side));
        stats::median_in_place(scratch)
    };
    (median_of(|p| p.variant), median_of(|p| p.baseline))
}

/// The ratio and differences of pairs read as the headlines are, from each
/// fork's (variant median, baseline median): in each fork the variant's
/// median over the baseline's (and less it), then the geometric mean of the
/// ratios across forks, and each fork's difference (their mean is the
/// difference). So × base is the two headlines' own ratio where both stand
/// on the same rounds, and a process-level shift both share cancels in it.
fn paired_figures(fork_medians: impl Iterator<Item = (f64, f64)>) -> (f64, Vec<f64>) {
    let (ratios, deltas): (Vec<f64>, Vec<f64>) = fork_medians
        .map(|(variant, baseline)| (variant / baseline, variant - baseline))
        .unzip();
    (across_forks(&ratios), deltas)
}

/// Bootstrap replicates of [`paired_figures`], sorted: each fork's pairs
/// resampled within the fork, both sides' medians read from the counts
/// over each side's ascending order.
fn resampled_pairs(forks: &[Vec<Pair>], seed: u64) -> (Vec<f64>, Vec<f64>) {
    let ascending = |fork: &Vec<Pair>, side: fn(&Pair) -> f64| {
        let mut order: Vec<usize> = (0..fork.len()).collect();
        order.sort_by(|&a, &b| side(&fork[a]).total_cmp(&side(&fork[b])));
        order
    };
    let orders: Vec<[Vec<usize>; 2]> = forks
        .iter()
        .map(|f| [ascending(f, |p| p.variant), ascending(f, |p| p.baseline)])
        .collect();
    let mut rng = fastrand::Rng::with_seed(seed);
    let (mut ratios, mut deltas) = (Vec::with_capacity(RESAMPLES), Vec::with_capacity(RESAMPLES));
    let mut counts = Vec::new();
    let mut medians = Vec::with_capacity(forks.len());
    for _ in 0..RESAMPLES {
        medians.clear();
        for (fork, [by_variant, by_baseline]) in forks.iter().zip(&orders) {
            stats::draw_counts(&mut rng, fork.len(), &mut counts);
            let median_of = |order: &[usize], side: fn(&Pair) -> f64| {
                stats::median_of_counted(
                    order.iter().map(|&i| (side(&fork[i]), counts[i])),
                    fork.len(),
                )
            };
            medians.push((
                median_of(by_variant, |p| p.variant),
                median_of(by_baseline, |p| p.baseline),
            ));
        }
        let (ratio, fork_deltas) = paired_figures(medians.iter().copied());
        ratios.push(ratio);
        deltas.push(stats::mean(&fork_deltas));
    }
    ratios.sort_by(f64::total_cmp);
    deltas.sort_by(f64::total_cmp);
    (ratios, deltas)
}

/// Median and, from [`MIN_ROUNDS_FOR_CI`] values on, its bootstrap 95%
/// interval: for figures that are one value per round (a phase, a
/// co-runner's latency, a ratio of a pair).
pub fn median_with_ci(values: &[f64], seed: u64) -> Figure {
    if values.len() >= MIN_ROUNDS_FOR_CI {
        stats::median_with_ci(values, RESAMPLES, seed)
    } else {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        Figure::new(median(&sorted), None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A round as [`interrupted`] reads it, in fork, median, fastest
    /// sample, canaries-quiet order.
    fn reading(fork: usize, median: f64, fastest: f64, canaries_quiet: bool) -> RoundReading {
        RoundReading {
            median,
            fastest,
            canaries_quiet,
            fork,
        }
    }

    fn round(figure: f64, quiet: bool) -> RoundFigure {
        RoundFigure {
            figure: Figure::new(figure, Some([figure * 0.999, figure * 1.001])),
            quiet,
            fork: 0,
            interrupted: false,
        }
    }

    #[test]
    fn a_round_lifted_above_its_own_fastest_sample_is_interrupted() {
        // Zen 2's getpid of 2026-12-01, fork 1 of the third quick run:
        // rounds at 195.9 ticks, their fastest samples within a tick, and
        // round 2 at 605.2 with its fastest at 196.5.
        let round = |median, fastest| reading(0, median, fastest, true);
        let mut rounds = vec![round(195.9, 195.8); 9];
        rounds[2] = round(605.2, 196.5);
        let flags = interrupted(&rounds, 0.03, None);
        assert_eq!(flags.iter().filter(|f| **f).count(), 1, "{flags:?}");
        assert!(flags[2]);
        // Between canaries that read slow, the round is the slow level's.
        rounds[2].canaries_quiet = false;
        assert!(interrupted(&rounds, 0.03, None).iter().all(|f| !f));
        // A round of a slow level all through has its fastest sample
        // slowed too: the canaries' to class, not interrupted.
        rounds[2] = round(230.9, 229.6);
        assert!(interrupted(&rounds, 0.03, None).iter().all(|f| !f));
        // A row whose rounds spread widely above their fastest samples
        // (a churn of threads) keeps a round within that spread.
        let noisy: Vec<RoundReading> = (0..9)
            .map(|i| round(1000.0 + 40.0 * i as f64, 700.0 + 10.0 * (i % 3) as f64))
            .collect();
        assert!(interrupted(&noisy, 0.03, None).iter().all(|f| !f));
        // Two rounds say nothing of which is the odd one.
        assert!(interrupted(&rounds[1..3], 0.03, None).iter().all(|f| !f));
    }

    #[test]
    fn a_quiet_round_lifted_inside_is_interrupted_where_most_rounds_are_slow() {
        // The busy Zen 3's getpid of 2026-12-03 (a quick run at 15% quiet):
        // two clean quiet rounds at 286 ticks, two quiet rounds lifted to
        // 339 and 351 over fastest samples at 282 and 285, and fourteen
        // slow rounds at 353-371 over fastest samples at 318-331. Read
        // against all the rounds (their median 362, their usual gap 13%),
        // the lifted rounds passed as quiet and made the headline 138 ns
        // where the other runs read 117.
        let round = |median, fastest, canaries_quiet| reading(0, median, fastest, canaries_quiet);
        let mut rounds = vec![
            round(286.5, 284.8, false),
            round(338.8, 281.8, true),
            round(343.4, 286.4, false),
            round(285.7, 282.7, true),
            round(350.5, 285.2, true),
        ];
        let slow = [
            (365.2, 324.8),
            (356.6, 318.1),
            (368.1, 331.2),
            (353.2, 319.5),
            (360.6, 319.4),
            (371.2, 320.8),
            (368.5, 331.4),
            (365.9, 331.0),
            (364.6, 329.6),
            (363.2, 323.7),
            (369.6, 325.0),
            (362.0, 320.4),
            (363.7, 323.8),
            (360.1, 325.0),
        ];
        rounds.extend(slow.iter().map(|&(m, f)| round(m, f, false)));
        let flags = interrupted(&rounds, 0.03, None);
        let flagged: Vec<usize> = (0..rounds.len()).filter(|&i| flags[i]).collect();
        assert_eq!(flagged, vec![1, 4], "{flags:?}");
    }

    #[test]
    fn where_most_quiet_rounds_were_lifted_the_earlier_runs_gap_finds_them() {
        // The busy Zen 3's thread churn with eventfd of 2026-12-03, the
        // first of five quick runs: its quiet rounds but one stood 29-57%
        // above their fastest samples, and its figure read 68 us where the
        // four runs after it read 50-52 us, their rounds 2-6% above theirs.
        let round = reading;
        let rounds = [
            round(0, 160_990.0, 154_840.0, false),
            round(0, 121_651.0, 117_355.0, true),
            round(0, 159_988.0, 117_490.0, true),
            round(0, 170_037.0, 117_772.0, true),
            round(1, 176_700.0, 124_720.0, false),
            round(1, 207_263.0, 174_330.0, false),
            round(1, 155_549.0, 120_650.0, true),
            round(1, 200_393.0, 127_584.0, true),
            round(1, 173_097.0, 120_249.0, true),
        ];
        // The row's own rounds spread too widely to tell.
        assert!(interrupted(&rounds, 0.03, None).iter().all(|f| !f));
        // The third run's nine rounds, as the history holds them.
        let earlier = UsualGap::of(&[
            round(0, 122_024.0, 118_212.0, true),
            round(0, 122_210.0, 118_315.0, true),
            round(0, 122_704.0, 117_478.0, true),
            round(0, 122_454.0, 118_833.0, true),
            round(0, 121_685.0, 119_348.0, true),
            round(0, 129_821.0, 122_941.0, true),
            round(0, 125_910.0, 121_512.0, true),
            round(0, 126_224.0, 122_755.0, true),
            round(0, 128_875.0, 124_125.0, true),
        ]);
        let flags = interrupted(&rounds, 0.03, earlier);
        let flagged: Vec<usize> = (0..rounds.len()).filter(|&i| flags[i]).collect();
        assert_eq!(flagged, vec![2, 3, 6, 7, 8], "{earlier:?} {flags:?}");
        // Fewer earlier rounds than a usual gap needs: no reference.
        assert_eq!(
            UsualGap::of(&[round(0, 122_024.0, 118_212.0, true); 7]),
            None
        );
    }

    #[test]
    fn an_interrupted_round_carries_no_fork_and_no_slow_level() {
        // Two forks; the second has two quiet rounds, one of them lifted
        // threefold by a burst inside it: read as quiet, it would carry
        // that fork's median, and the run's, halfway up.
        let mut rounds: Vec<RoundFigure> = (0..5).map(|_| round(195.5, true)).collect();
        rounds.push(RoundFigure {
            fork: 1,
            ..round(196.5, true)
        });
        rounds.push(RoundFigure {
            fork: 1,
            quiet: false,
            interrupted: true,
            ..round(605.2, true)
        });
        let e = estimate(&rounds, true, 1).unwrap();
        assert!((e.cost.value / 195.5 - 1.0).abs() < 0.01, "{e:?}");
        assert_eq!((e.rounds_used, e.interrupted_rounds), (6, 1));
        assert_eq!(e.slow_state, None, "an interrupted round is no slow level");
        assert_eq!(e.thin_forks, 1);
        // Read as a quiet round, it moves the headline by a fifth.
        let unmarked: Vec<RoundFigure> = rounds
            .iter()
            .map(|r| RoundFigure {
                quiet: true,
                interrupted: false,
                ..r.clone()
            })
            .collect();
        let moved = estimate(&unmarked, true, 1).unwrap();
        assert!(moved.cost.value / 195.5 > 1.2, "{moved:?}");
    }

    #[test]
    fn quiet_rounds_carry_the_headline() {
        let mut rounds: Vec<RoundFigure> = (0..20)
            .map(|i| round(100.0 + i as f64 * 0.1, true))
            .collect();
        rounds.extend((0..60).map(|_| round(137.0, false)));
        let e = estimate(&rounds, true, 1).unwrap();
        assert_eq!(e.basis, Basis::QuietRounds);
        assert!((e.cost.value - 101.0).abs() < 0.1, "{e:?}");
        let [lo, hi] = e.cost.ci95.unwrap();
        assert!(lo <= e.cost.value && e.cost.value <= hi);
        assert_eq!(e.all_states, 137.0);
        assert_eq!(e.slow_state, Some(137.0));
        assert!((e.slow_share - 0.75).abs() < 1e-9);
        assert_eq!((e.rounds_used, e.rounds), (20, 80));
    }

    #[test]
    fn one_state_uses_every_round_and_no_quiet_round_says_so() {
        let rounds: Vec<RoundFigure> = (0..9).map(|i| round(50.0 + i as f64, i % 2 == 0)).collect();
        assert_eq!(estimate(&rounds, false, 1).unwrap().rounds_used, 9);
        let slow: Vec<RoundFigure> = (0..9).map(|_| round(70.0, false)).collect();
        let e = estimate(&slow, true, 1).unwrap();
        assert_eq!(e.basis, Basis::NoQuietRound);
        assert_eq!(e.cost.value, 70.0);
        assert!(estimate(&[], true, 1).is_none());
    }

    #[test]
    fn few_rounds_give_no_interval() {
        let rounds: Vec<RoundFigure> = (0..4).map(|_| round(10.0, true)).collect();
        assert!(estimate(&rounds, false, 1).unwrap().cost.ci95.is_none());
    }

    #[test]
    fn pairs_prefer_quiet_ones_when_the_machine_has_two_states() {
        let mut pairs: Vec<Pair> = (0..10)
            .map(|_| Pair {
                variant: 200.0,
                baseline: 100.0,
                fork: 0,
                quiet: true,
                interrupted: false,
            })
            .collect();
        pairs.extend((0..30).map(|_| Pair {
            variant: 330.0,
            baseline: 130.0,
            fork: 0,
            quiet: false,
            interrupted: false,
        }));
        let p = paired(&pairs, true, 1).unwrap();
        assert_eq!(
            (p.ratio.value, p.delta.value, p.pairs, p.basis),
            (2.0, 100.0, 10, PairBasis::Quiet)
        );
        let all = paired(&pairs, false, 1).unwrap();
        assert_eq!((all.pairs, all.basis), (40, PairBasis::All));
        assert!(paired(&[], true, 1).is_none());
    }

    #[test]
    fn the_interval_counts_each_rounds_noise_once() {
        // Rounds that agree exactly, each with a wide interval of its own:
        // the rounds' figures already carry their sampling noise, so the
        // headline's interval is theirs and nothing is added for it.
        let rounds: Vec<RoundFigure> = (0..12)
            .map(|_| RoundFigure {
                figure: Figure::new(100.0, Some([90.0, 110.0])),
                quiet: true,
                fork: 0,
                interrupted: false,
            })
            .collect();
        let e = estimate(&rounds, false, 1).unwrap();
        let [lo, hi] = e.cost.ci95.unwrap();
        assert!(
            (lo - 100.0).abs() < 1e-9 && (hi - 100.0).abs() < 1e-9,
            "{lo} {hi}"
        );
        assert_eq!(e.within_round_half_width, Some(10.0));
    }

    #[test]
    fn the_headline_weighs_each_fork_once() {
        // Fork 0 has nine quiet rounds at 100, fork 1 one at 110: the
        // headline is their geometric mean, not the median of ten rounds.
        let mut rounds: Vec<RoundFigure> = (0..9).map(|_| round(100.0, true)).collect();
        rounds.push(RoundFigure {
            fork: 1,
            ..round(110.0, true)
        });
        let e = estimate(&rounds, false, 1).unwrap();
        assert!(
            (e.cost.value - (100.0f64 * 110.0).sqrt()).abs() < 1e-9,
            "{}",
            e.cost.value
        );
    }
}
