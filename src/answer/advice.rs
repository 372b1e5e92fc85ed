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
//!
//! Probes that run a co-runner beside the batched work (teardown,
//! section/chunked) measured the wait itself, and the measured wait is what
//! the budget is about: [`LatencyAdvice`] takes the largest step whose
//! co-runner p99 fits, and says so where the fit's per-batch time alone
//! would have allowed more (a co-runner also waits for the wake-up and the
//! switch, which the per-batch time does not hold).

use crate::analysis::figure::Figure;
use crate::measure::probes::StepUnit;
use crate::store::results::answered::{Advice, LatencyAdvice, LatencyPoint};
use crate::store::results::{AmortizationFit, RunDocument};
use std::time::Duration;

/// The budget is by default 50 µs, the timer slack Linux gives every
/// normal thread (`PR_GET_TIMERSLACK` reads it): the lateness a thread
/// already accepts on each timed wake-up. A batch that holds the CPU for
/// less adds no more delay than the kernel already allows a co-runner.
pub const DEFAULT_LATENCY_BUDGET: Duration = Duration::from_micros(50);

/// Share of the winnable toll the advice aims to win back.
pub const WIN_BACK: f64 = 0.9;

/// Both kinds of advice for a run, for `budget`.
pub fn advise_document(doc: &mut RunDocument, budget: Duration) {
    doc.advice = for_document(doc, budget);
    doc.latency_advice = latency_for_document(doc, budget);
}

/// Advice for every fit of a run whose clock rate is known.
pub fn for_document(doc: &RunDocument, budget: Duration) -> Vec<Advice> {
    let Some(mhz) = doc.inventory.tsc_mhz.filter(|m| *m > 0.0) else {
        return Vec::new();
    };
    doc.amortization
        .iter()
        .filter_map(|fit| {
            let smallest = doc.measured_sizes(&fit.id, &fit.group).min()?;
            advise(fit, smallest, mhz, budget)
        })
        .collect()
}

/// See the module comment. None where the fit has no toll to win back.
pub fn advise(fit: &AmortizationFit, smallest: u64, mhz: f64, budget: Duration) -> Option<Advice> {
    let f = &fit.fit;
    let [batch_lo, batch_hi] = f.per_batch.ends();
    let (per_item, per_batch) = (f.per_item.value, f.per_batch.value);
    if per_batch <= 0.0 || smallest == 0 || !per_item.is_finite() {
        return None;
    }
    let budget_us = budget.as_secs_f64() * 1e6;
    let budget_words = budget_words(budget);
    let b0 = smallest as f64;
    // The toll left at B is B0/B of the toll at B0: 10% left at 10 * B0.
    let win = smallest.saturating_mul((1.0 / (1.0 - WIN_BACK)).round() as u64);
    let kept = 1.0 / b0 - 1.0 / win as f64;
    let won = per_batch * kept;
    let won_back_per_item = Figure::new(won, Some([batch_lo * kept, batch_hi * kept]));
    let BatchesWithin {
        cautious, central, ..
    } = batches_within(fit, mhz, budget);
    let batch_us = (win as f64 * per_item + per_batch) / mhz;
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
        _ if batch_lo <= 0.0 => format!(
            "{name}: no per-batch toll the fit can tell from zero ({} ±{} ticks), so batching \
             wins nothing measurable; within a {budget_words} budget {allowed}",
            fmt_ticks(per_batch),
            fmt_ticks((batch_hi - batch_lo) / 2.0),
        ),
        None => format!(
            "{name}: B={win} wins back 90% of the toll ({} ticks per {} against B={smallest}), \
             one batch takes {batch_us:.1} us; within a {budget_words} budget {allowed}",
            fmt_ticks(won),
            fit.item
        ),
        Some(share) => format!(
            "{name}: B={win} would win back 90% of the toll but one batch takes {batch_us:.1} us, \
             {:.1}x the {budget_words} budget; {allowed}, winning back {:.0}%",
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
        won_back_per_item,
        largest_within_budget: cautious,
        largest_within_budget_central: central,
        batch_us_at_win_back: batch_us,
        conflict,
        won_back_within_budget,
        summary,
    })
}

/// A latency budget as the lines say it: "50 us", "1.5 ms", "2 s".
pub fn budget_words(budget: Duration) -> String {
    let us = budget.as_secs_f64() * 1e6;
    let (value, unit) = match us {
        _ if us >= 1e6 => (us / 1e6, "s"),
        _ if us >= 1e3 => (us / 1e3, "ms"),
        _ => (us, "us"),
    };
    // Three decimals at most, and none that are zeros.
    let digits = format!("{value:.3}");
    let digits = digits.trim_end_matches('0').trim_end_matches('.');
    format!("{digits} {unit}")
}

/// The largest batch one of which fits a latency budget, read from the fit
/// three ways: at both intervals' upper ends (the advice's, which holds at
/// 95%), at the fit's centre, and at both lower ends. None where not even
/// one item fits; `u64::MAX` where the per-item cost is not above zero, so
/// any batch does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchesWithin {
    pub cautious: Option<u64>,
    pub central: Option<u64>,
    pub bold: Option<u64>,
}

/// See [`BatchesWithin`]. One batch of B items holds the CPU for
/// `B*w + t` ticks.
pub fn batches_within(fit: &AmortizationFit, mhz: f64, budget: Duration) -> BatchesWithin {
    let budget_ticks = budget.as_secs_f64() * 1e6 * mhz;
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
    let f = &fit.fit;
    let ([item_lo, item_hi], [batch_lo, batch_hi]) = (f.per_item.ends(), f.per_batch.ends());
    BatchesWithin {
        cautious: largest(item_hi, batch_hi),
        central: largest(f.per_item.value, f.per_batch.value),
        bold: largest(item_lo, batch_lo),
    }
}

/// Latency advice for every series of two or more steps with a measured
/// co-runner wait.
pub fn latency_for_document(doc: &RunDocument, budget: Duration) -> Vec<LatencyAdvice> {
    let mut series: Vec<(&str, &str, StepUnit, &str, Vec<LatencyPoint>)> = Vec::new();
    for r in &doc.results {
        let (Some(step), Some(wait), Some(cost)) =
            (&r.latency_step, r.co_runner_wait_p99(), &r.cost)
        else {
            continue;
        };
        let point = LatencyPoint {
            step: step.step,
            wait_p99: wait.figure,
            ticks: cost.shown_ticks(),
            seed_choice: r.seed_choice.clone(),
        };
        match series.iter_mut().find(|s| s.0 == r.id && s.1 == step.group) {
            Some(s) => s.4.push(point),
            None => series.push((&r.id, &step.group, step.unit, &r.item, vec![point])),
        }
    }
    series
        .into_iter()
        .filter(|s| s.4.len() >= 2)
        .map(|(id, group, unit, item, mut points)| {
            points.sort_by_key(|p| p.step);
            let fit_allows = doc
                .advice
                .iter()
                .find(|a| a.id == id && a.group == group)
                .and_then(|a| a.largest_within_budget);
            advise_latency(id, group, unit, item, points, budget, fit_allows)
        })
        .collect()
}

/// See the module comment.
pub fn advise_latency(
    id: &str,
    group: &str,
    unit: StepUnit,
    item: &str,
    points: Vec<LatencyPoint>,
    budget: Duration,
    fit_allows: Option<u64>,
) -> LatencyAdvice {
    let budget_us = budget.as_secs_f64() * 1e6;
    let budget_words = budget_words(budget);
    let cheapest = points
        .iter()
        .map(|p| p.ticks.value)
        .filter(|t| *t > 0.0)
        .fold(f64::INFINITY, f64::min);
    let fitting = points
        .iter()
        .filter(|p| p.cautious_wait_us() <= budget_us)
        .max_by_key(|p| p.step);
    let name = if group.is_empty() {
        id.to_string()
    } else {
        format!("{id} {group}")
    };
    let cost_vs_cheapest = fitting
        .filter(|_| cheapest.is_finite())
        .map(|p| p.ticks.value / cheapest);
    let mut summary = match fitting {
        Some(p) => format!(
            "{name}: measured, steps up to {} keep a same-CPU co-runner's p99 wait within \
             {budget_words} ({}); each {item} there costs {:.2}x the cheapest step's",
            step_name(p.step, unit),
            wait_text(p),
            cost_vs_cheapest.unwrap_or(f64::NAN),
        ),
        None => {
            let least = points
                .iter()
                .min_by(|a, b| a.wait_p99.value.total_cmp(&b.wait_p99.value));
            format!(
                "{name}: measured, no step keeps a same-CPU co-runner's p99 wait within \
             {budget_words}; the least is {}",
                least.map_or("-".into(), |p| format!(
                    "{} at {}",
                    wait_text(p),
                    step_name(p.step, unit)
                )),
            )
        }
    };
    let measured = fitting.map(|p| p.step);
    if let Some(allowed) = fit_allows
        && measured.is_none_or(|m| m < allowed)
    {
        summary.push_str(&format!(
            "; the fit's per-batch time alone would allow up to {}: the co-runner waits \
             longer than one batch runs, so go by the measured wait",
            step_name(allowed, unit)
        ));
    }
    LatencyAdvice {
        id: id.to_string(),
        group: group.to_string(),
        unit,
        item: item.to_string(),
        latency_budget_us: budget_us,
        points,
        largest_within_budget: measured,
        cost_vs_cheapest,
        fit_allows,
        summary,
    }
}

fn wait_text(p: &LatencyPoint) -> String {
    match p.wait_p99.ci95 {
        Some([lo, hi]) => format!("{:.1} us [{lo:.1}, {hi:.1}]", p.wait_p99.value),
        None => format!(
            "{:.1} us; from fewer than five rounds, so without an interval",
            p.wait_p99.value
        ),
    }
}

/// "K=4096 entries" or "4 KiB".
pub fn step_name(step: u64, unit: StepUnit) -> String {
    let bytes = unit == StepUnit::Bytes;
    match step {
        s if bytes && s >= 1 << 20 && s % (1 << 20) == 0 => format!("{} MiB", s >> 20),
        s if bytes && s >= 1 << 10 && s % (1 << 10) == 0 => format!("{} KiB", s >> 10),
        1 => format!("1 {}", unit.singular()),
        s => format!("{s} {unit}"),
    }
}

fn fmt_ticks(t: f64) -> String {
    if t >= 100.0 {
        format!("{t:.0}")
    } else {
        format!("{t:.1}")
    }
}
