//! Advice from an amortization fit: which batch size a latency budget
//! allows. The fit says cost per item is `w + t/B` (work plus the toll of
//! one batch shared by B items); a batch of B items therefore holds the CPU
//! for `B*w + t`. Two questions follow, and they pull apart:
//!
//! - how large must a batch be to win back most of the toll? The toll left
//!   per item at B is `t/B`; against the smallest batch measured, B0, the
//!   share won back is `1 - B0/B`, so 90% needs `B >= 10*B0` whatever the
//!   toll is. The fit adds how much that is worth: `t/B0 - t/B` per item.
//! - how large may a batch be before one batch outlasts the budget? The
//!   largest B with `B*w + t <= budget`, taken at the upper end of both
//!   intervals so the answer holds at 95% rather than on average.
//!
//! Where the first exceeds the second the budget does not allow winning back
//! 90%, and the advice says what share the allowed batch wins back instead.

use super::{AmortizationFit, RunDocument};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The default budget, 50 µs, is the timer slack Linux gives every normal
/// thread (`PR_GET_TIMERSLACK`, 50,000 ns by default): the lateness a thread
/// already accepts on each timed wake-up. A batch that holds the CPU for
/// less adds no more delay than the kernel already allows a co-runner.
pub const DEFAULT_BUDGET: Duration = Duration::from_micros(50);

/// Share of the winnable toll the advice aims to win back.
pub const WIN_BACK: f64 = 0.9;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Advice {
    pub id: String,
    pub group: String,
    pub item: String,
    pub latency_budget_us: f64,
    /// The smallest batch size the fit was made over.
    pub smallest_measured: u64,
    /// Smallest batch that wins back [`WIN_BACK`] of the toll at the
    /// smallest batch measured.
    pub batch_to_win_back: u64,
    /// Ticks per item won back at that batch against the smallest one,
    /// with the interval of the fit's per-batch toll carried through.
    pub won_back_ticks_per_item: f64,
    pub won_back_ci95_ticks_per_item: [f64; 2],
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

/// Advice for every fit of a run whose clock rate is known.
pub fn for_document(doc: &RunDocument, budget: Duration) -> Vec<Advice> {
    let Some(mhz) = doc.inventory.tsc_mhz.filter(|m| *m > 0.0) else {
        return Vec::new();
    };
    doc.amortization
        .iter()
        .filter_map(|fit| {
            let smallest = doc
                .results
                .iter()
                .filter(|r| r.id == fit.id && r.cost.is_some())
                .filter_map(|r| r.batch.as_ref())
                .filter(|b| b.group == fit.group)
                .map(|b| b.size)
                .min()?;
            advise(fit, smallest, mhz, budget)
        })
        .collect()
}

/// See the module comment. None where the fit has no toll to win back.
pub fn advise(fit: &AmortizationFit, smallest: u64, mhz: f64, budget: Duration) -> Option<Advice> {
    let f = &fit.fit;
    if f.per_batch <= 0.0 || smallest == 0 || !f.per_item.is_finite() {
        return None;
    }
    let budget_us = budget.as_secs_f64() * 1e6;
    let budget_ticks = budget_us * mhz;
    let b0 = smallest as f64;
    // The toll left at B is B0/B of the toll at B0: 10% left at 10 * B0.
    let win = smallest.saturating_mul((1.0 / (1.0 - WIN_BACK)).round() as u64);
    let kept = 1.0 / b0 - 1.0 / win as f64;
    let won = f.per_batch * kept;
    let won_ci = [f.per_batch_ci95.0 * kept, f.per_batch_ci95.1 * kept];
    let largest = |work: f64, toll: f64| -> Option<u64> {
        let room = budget_ticks - toll.max(0.0);
        if room < work.max(0.0) {
            return None;
        }
        Some(if work <= 0.0 {
            u64::MAX
        } else {
            (room / work).floor() as u64
        })
    };
    let cautious = largest(f.per_item_ci95.1, f.per_batch_ci95.1);
    let central = largest(f.per_item, f.per_batch);
    let batch_us = (win as f64 * f.per_item + f.per_batch) / mhz;
    let conflict = cautious.is_none_or(|b| b < win);
    let won_back_within_budget = conflict.then(|| match cautious {
        Some(b) if b > smallest => 1.0 - b0 / b as f64,
        _ => 0.0,
    });
    let name = if fit.group.is_empty() {
        fit.id.clone()
    } else {
        format!("{} {}", fit.id, fit.group)
    };
    let allowed = match cautious {
        Some(u64::MAX) => "any batch fits".to_string(),
        Some(b) => format!("batches up to B={b} fit"),
        None => "not even one item fits".to_string(),
    };
    let summary = match won_back_within_budget {
        _ if f.per_batch_ci95.0 <= 0.0 => format!(
            "{name}: no per-batch toll the fit can tell from zero ({} ±{} ticks), so batching \
             wins nothing measurable; within a {budget_us:.0} us budget {allowed}",
            fmt_ticks(f.per_batch),
            fmt_ticks((f.per_batch_ci95.1 - f.per_batch_ci95.0) / 2.0),
        ),
        None => format!(
            "{name}: B={win} wins back 90% of the toll ({} ticks per {} against B={smallest}), \
             one batch takes {batch_us:.1} us; within a {budget_us:.0} us budget {allowed}",
            fmt_ticks(won),
            fit.item
        ),
        Some(share) => format!(
            "{name}: B={win} would win back 90% of the toll but one batch takes {batch_us:.1} us, \
             {:.1}x the {budget_us:.0} us budget; {allowed}, winning back {:.0}%",
            batch_us / budget_us,
            share * 100.0
        ),
    };
    Some(Advice {
        id: fit.id.clone(),
        group: fit.group.clone(),
        item: fit.item.clone(),
        latency_budget_us: budget_us,
        smallest_measured: smallest,
        batch_to_win_back: win,
        won_back_ticks_per_item: won,
        won_back_ci95_ticks_per_item: won_ci,
        largest_within_budget: cautious,
        largest_within_budget_central: central,
        batch_us_at_win_back: batch_us,
        conflict,
        won_back_within_budget,
        summary,
    })
}

fn fmt_ticks(t: f64) -> String {
    if t >= 100.0 {
        format!("{t:.0}")
    } else {
        format!("{t:.1}")
    }
}

/// Reads a latency budget: a number and a unit, `ns`, `us` (or `µs`), `ms`
/// or `s` (`50us`, `1.5ms`); between 1 ns and 10 s.
pub fn parse_budget(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("'{text}' has no unit: write e.g. 50us, 2ms"))?;
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("'{text}' does not start with a number"))?;
    let ns_per = match unit.trim() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        other => return Err(format!("unknown unit '{other}': use ns, us, ms or s")),
    };
    let ns = value * ns_per;
    if !(1.0..=10e9).contains(&ns) {
        return Err(format!("'{text}' is outside 1ns..10s"));
    }
    Ok(Duration::from_nanos(ns.round() as u64))
}
