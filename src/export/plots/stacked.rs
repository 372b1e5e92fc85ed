//! Each row's toll drawn as its parts laid end to end: one horizontal bar
//! a row, a segment a mitigation and one for what the parts leave, against
//! the whole toll and its interval, as percentages of the row's figure
//! with every mitigation off (rows of one family cost from nanoseconds to
//! milliseconds, so only a share of their own figure shares an axis).

use super::bars::{RowLabels, span, whisker};
use super::*;

/// One row: its parts in percent of its all-off figure (a mitigation's
/// index in the legend's order, or None for what is left), and the whole.
pub struct StackedRow {
    pub label: String,
    pub parts: Vec<(Option<usize>, f64)>,
    /// The whole toll in percent, and its interval.
    pub whole: Figure,
}

/// What a stacked plot's axis measures and how its caption reads it.
pub struct Reading<'a> {
    pub axis: &'a str,
    pub caption: &'a str,
}

/// How `attribute` reads its bars: percent of the set with every
/// mitigation off.
pub const OF_ALL_OFF: Reading<'static> = Reading {
    axis: "% of the row's figure with every mitigation off",
    caption: "each bar is the row's parts end to end (a mitigation's part: the present set less \
              the set without it; grey: what the parts leave of the whole toll); the black dot \
              and line are the whole toll (present less every mitigation off) and its 95% \
              interval.",
};

/// Parts of `rows` stacked from 0 (positive ones rightwards, negative
/// ones leftwards), `names` the mitigations' in order, read as `reading`
/// says.
pub fn stacked_parts(
    title: &str,
    names: &[String],
    rows: &[StackedRow],
    reading: &Reading,
) -> std::io::Result<Plot> {
    let labels = RowLabels(rows.iter().map(|r| r.label.clone()).collect());
    let n = labels.rows();
    let (mut lo, mut hi) = (0.0f64, 0.0f64);
    for r in rows {
        let pos: f64 = r.parts.iter().map(|p| p.1.max(0.0)).sum();
        let neg: f64 = r.parts.iter().map(|p| p.1.min(0.0)).sum();
        let [wlo, whi] = r.whole.ends();
        lo = lo.min(neg).min(wlo);
        hi = hi.max(pos).max(whi);
    }
    let pad = (hi - lo).max(1.0) * 0.05;
    let (lo, hi) = (lo - pad, hi + pad);
    let colour = |part: Option<usize>| part.map_or(SEED_MARK, series_colour);
    let height = 90 + BAR_PITCH * rows.len() as u32;
    let svg = svg(height, title, |root, legend| {
        for (i, name) in names.iter().enumerate() {
            legend.add(Mark::Block(series_colour(i)), name.clone());
        }
        if rows
            .iter()
            .any(|r| r.parts.iter().any(|(part, _)| part.is_none()))
        {
            legend.add(Mark::Block(SEED_MARK), "left by the parts");
        }
        legend.add(Mark::Line(BLACK), "whole toll, 95% interval");
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(labels.area_width())
            .build_cartesian_2d(lo..hi, (0..n - 1).into_segmented())?;
        styled_mesh(&mut chart)
            .y_labels(rows.len())
            .y_label_formatter(&|v| labels.of(v))
            .x_desc(reading.axis)
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        for (row, r) in rows.iter().enumerate() {
            let i = n - 1 - row as i32;
            let (mut right, mut left) = (0.0, 0.0);
            for &(part, pct) in &r.parts {
                let (from, to) = if pct >= 0.0 {
                    right += pct;
                    (right - pct, right)
                } else {
                    left += pct;
                    (left, left - pct)
                };
                chart.draw_series([span(from, to, i, colour(part))])?;
            }
            let [wlo, whi] = r.whole.ends();
            chart.draw_series([whisker(wlo, whi, i)])?;
            chart.draw_series([Circle::new(
                (r.whole.value, SegmentValue::CenterOf(i)),
                3,
                BLACK.filled(),
            )])?;
        }
        chart.draw_series([PathElement::new(
            [(0.0, SegmentValue::Exact(0)), (0.0, SegmentValue::Last)],
            BLACK.stroke_width(1),
        )])?;
        Ok(())
    })?;
    Ok(Plot {
        svg,
        caption: format!("{title}: {}", reading.caption),
    })
}
