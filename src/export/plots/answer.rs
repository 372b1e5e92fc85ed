//! The answer as one chart: every toll the summary priced in time, with its
//! interval, on one log axis; and the kernel's mitigations in force, which
//! only another boot prices, each with that boot.

use super::*;
use crate::answer::summary::{Answer, TollStatus, Unit};

/// Each timed figure of the summary's tolls as a bar in ns, the first toll
/// on top; None where the run priced nothing in time.
pub fn answer(summary: &Answer) -> std::io::Result<Option<Plot>> {
    let mut bars = Vec::new();
    for (i, toll) in summary.tolls.iter().enumerate() {
        let TollStatus::Measured { figures } = &toll.outcome else {
            continue;
        };
        for q in figures {
            let ns = match q.unit {
                Unit::Ns => 1.0,
                Unit::Us => 1e3,
                Unit::Times | Unit::Batch => continue,
            };
            if !(q.figure.value > 0.0 && q.figure.value.is_finite()) {
                continue;
            }
            bars.push(Bar {
                label: format!("{}: {}", toll.kind.label(), q.what),
                value: Figure {
                    ci95: q.figure.ci95.filter(|[lo, _]| *lo > 0.0),
                    ..q.figure
                }
                .map(|v| v * ns),
                colour: series_colour(i),
            });
        }
    }
    if bars.is_empty() {
        return Ok(None);
    }
    let mut legend = vec![(
        Mark::Line(BLACK),
        "its 95% interval: where the next run's figure may land".to_string(),
    )];
    if !summary.in_force.is_empty() {
        legend.push((
            Mark::Note,
            "in force, priced only by another boot:".to_string(),
        ));
    }
    for f in &summary.in_force {
        legend.push((Mark::Note, format!("{}: boot {}", f.vulnerability, f.off)));
    }
    let axis = Axis {
        desc: "time per item, log axis",
        label: time_label,
        origin: None,
    };
    let svg = log_bars("What each toll costs here", &axis, &bars, legend, WIDE)?;
    Ok(Some(Plot {
        svg,
        caption: format!(
            "the answer: {} figures of {} tolls measured in this run, each from the row the \
             table names; the kernel's own mitigations in force need a boot without each \
             (`mitbench plan`)",
            bars.len(),
            summary.tolls.len()
        ),
    }))
}
