//! Each variant's ratio to its probe's baseline.

use super::*;

/// Each variant's ratio to its probe's baseline, the baseline at 1.
pub fn ratios(id: &str, records: &[&Record]) -> std::io::Result<Plot> {
    let bars: Vec<Bar> = records
        .iter()
        .filter_map(|r| {
            let (label, value) = if r.is_baseline() {
                r.cost.as_ref()?;
                (format!("{} (base)", r.variant), Figure::new(1.0, None))
            } else {
                let c = r.vs_baseline.as_ref()?;
                (r.variant.clone(), c.ratio)
            };
            Some(Bar {
                label,
                value,
                colour: BAR,
            })
        })
        .filter(|b| b.value.value > 0.0 && b.value.value.is_finite())
        .collect();
    let svg = ratio_bars(
        &format!("{id}: × base"),
        "× base, log axis",
        &bars,
        vec![
            (
                Mark::Block(BAR),
                "cost as a multiple of the baseline's".into(),
            ),
            (
                Mark::Line(BLACK),
                "its 95% interval over paired rounds".into(),
            ),
        ],
    )?;
    Ok(Plot {
        svg,
        caption: format!(
            "{id}: each variant's cost as a multiple of the baseline's, {} variants",
            bars.len()
        ),
    })
}
