//! What a run answered as it was made that a later read could not make
//! again alike, stored in its document: the advice at the latency budget
//! the run was given (worked out by `answer::advice`; an export with its
//! own budget works it again), the parts of the answer's rows an
//! attribution over that day's history gave (`attribute::summary_parts`),
//! and the hooks' toll per syscall against that day's run without them
//! (read as `compare::hook_toll` reads it).

use crate::analysis::figure::Figure;
use crate::measure::probes::StepUnit;
use serde::{Deserialize, Serialize};

/// The advice of one amortization fit: which batch a latency budget allows.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Advice {
    pub id: String,
    pub group: String,
    pub item: String,
    pub latency_budget_us: f64,
    /// The smallest batch size the fit was made over.
    pub smallest_measured: u64,
    /// Smallest batch that wins back `answer::advice::WIN_BACK` of the toll at the
    /// smallest batch measured.
    pub batch_to_win_back: u64,
    /// Ticks per item won back at that batch against the smallest one,
    /// with the interval of the fit's per-batch toll carried through.
    #[serde(
        flatten,
        with = "crate::store::results::fields::as_won_back_ticks_per_item"
    )]
    pub won_back_per_item: Figure,
    /// Largest batch one of which fits the budget, at the upper end of both
    /// fitted intervals; None when even one item does not (the toll alone
    /// outlasts the budget), and the same bound at the fit's centre.
    pub largest_within_budget: Option<u64>,
    pub largest_within_budget_central: Option<u64>,
    /// How long one batch of `batch_to_win_back` items takes, µs (central).
    pub batch_us_at_win_back: f64,
    /// Whether the budget allows the batch that wins back 90%.
    pub conflict: bool,
    /// Share of the toll won back at the largest batch the budget allows,
    /// where that is less than 90%.
    pub won_back_within_budget: Option<f64>,
    /// One line, as the terminal and the report print it.
    pub summary: String,
}

/// One measured step of a latency series.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LatencyPoint {
    pub step: u64,
    /// The p99 of the same-CPU co-runner's wait, µs, and its interval over
    /// rounds where there were five or more.
    #[serde(flatten, with = "crate::store::results::fields::as_wait_p99_us")]
    pub wait_p99: Figure,
    /// The variant's cost per item, ticks, with its run-to-run interval.
    #[serde(flatten, with = "crate::store::results::fields::as_ticks")]
    pub ticks: Figure,
    /// Where this step is the choice a seed made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_choice: Option<String>,
}

impl LatencyPoint {
    /// The wait the budget is held against: the interval's upper end where
    /// there is one.
    pub fn cautious_wait_us(&self) -> f64 {
        self.wait_p99.ends()[1]
    }
}

/// What the measured co-runner wait allows along one series of steps.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LatencyAdvice {
    pub id: String,
    pub group: String,
    /// What a step counts.
    pub unit: StepUnit,
    pub item: String,
    pub latency_budget_us: f64,
    /// Every measured step, smallest first.
    pub points: Vec<LatencyPoint>,
    /// The largest step whose co-runner p99 (the upper end of its interval)
    /// is within the budget; None when none is.
    pub largest_within_budget: Option<u64>,
    /// Its cost per item against the cheapest step of the series.
    pub cost_vs_cheapest: Option<f64>,
    /// Where the probe also has an amortization fit: the largest batch the
    /// fit's per-batch time alone allows (see [`Advice`]).
    pub fit_allows: Option<u64>,
    pub summary: String,
}

/// One mitigation's part of a row the summary reads, as `mitbench
/// attribute` found it over stored run sets.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AttributedPart {
    pub mitigation: String,
    pub probe: String,
    pub variant: String,
    /// Of the row's whole toll (present against every mitigation off)
    /// where the sets separated two mitigations or more, else of the row's
    /// cost with it: percent, with the 95% interval.
    #[serde(flatten, with = "crate::store::results::fields::as_share_pct")]
    pub share: Figure,
    /// "toll" or "cost": what the share is of.
    pub of: String,
    /// The run sets attributed over.
    pub sets: String,
    /// The part in words: "seccomp filter: 35% [34, 37] of os/getpid
    /// syscall's cost here".
    pub text: String,
}

/// The price of the hook changes between two runs, per syscall.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookToll {
    /// The hook changes, "trace events enabled: none -> raw_syscalls:sys_enter".
    pub changed: Vec<String>,
    /// "probe variant" of the row it is read from: the raw null syscall.
    pub row: String,
    /// What one syscall paid more on the new side than on the old, in
    /// ticks and ns, and as percent of the old, each with the row's
    /// change interval.
    pub ticks: Figure,
    pub ns: Figure,
    pub pct: Figure,
}

impl HookToll {
    /// "+434 ticks [+410, +458] (+161% [+152, +170]) per syscall".
    pub fn priced(&self) -> String {
        let signed = |x: f64| format!("{x:+.0}");
        let interval = |f: &Figure| match f.ci95 {
            Some([lo, hi]) => format!(" [{}, {}]", signed(lo), signed(hi)),
            None => String::new(),
        };
        format!(
            "{} ticks{} ({}%{}) per syscall",
            signed(self.ticks.value),
            interval(&self.ticks),
            signed(self.pct.value),
            interval(&self.pct)
        )
    }
}
