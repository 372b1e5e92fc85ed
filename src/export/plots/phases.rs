//! Each variant's phases as stacked shares of its item's cost.

use super::*;

/// Each variant's phases as stacked shares of its item's cost.
pub fn phase_shares(id: &str, records: &[&Record]) -> std::io::Result<Plot> {
    let rows: Vec<&Record> = records
        .iter()
        .copied()
        .filter(|r| !r.phases.is_empty())
        .collect();
    let mut phases: Vec<&str> = Vec::new();
    for p in rows.iter().flat_map(|r| r.phases.iter()) {
        if !phases.contains(&p.name.as_str()) {
            phases.push(&p.name);
        }
    }
    let labels = RowLabels(rows.iter().map(|r| r.variant.clone()).collect());
    let n = labels.rows();
    let height = (90 + BAR_PITCH * rows.len() as u32).max(60 + 20 * phases.len() as u32);
    let svg = svg(height, id, |root, legend| {
        let mut chart = ChartBuilder::on(root)
            .caption(
                format!("{id}: where an item's time goes"),
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(labels.area_width())
            .build_cartesian_2d(0.0..100.0, (0..n - 1).into_segmented())?;
        styled_mesh(&mut chart)
            .y_labels(rows.len())
            .y_label_formatter(&|v| labels.of(v))
            .x_label_formatter(&value_label)
            .x_desc("share of the item's cost, % (each phase's median over rounds)")
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        for (k, phase) in phases.iter().enumerate() {
            let colour = series_colour(k);
            let bars = rows.iter().enumerate().filter_map(|(row, r)| {
                let before: f64 = r
                    .phases
                    .iter()
                    .take_while(|p| p.name != *phase)
                    .map(|p| p.share_pct.value.max(0.0))
                    .sum();
                let share = r
                    .phases
                    .iter()
                    .find(|p| p.name == *phase)?
                    .share_pct
                    .value
                    .max(0.0);
                let i = n - 1 - row as i32;
                let mut bar = Rectangle::new(
                    [
                        (before.min(100.0), SegmentValue::Exact(i)),
                        ((before + share).min(100.0), SegmentValue::Exact(i + 1)),
                    ],
                    colour.filled(),
                );
                bar.set_margin(4, 4, 0, 0);
                Some(bar)
            });
            chart.draw_series(bars)?;
            legend.add(Mark::Block(colour), phase.to_string());
        }
        Ok(())
    })?;
    Ok(Plot {
        svg,
        caption: format!(
            "{id}: each phase's share of one item's cost, per variant; medians of shares need \
             not sum to exactly 100%"
        ),
    })
}
