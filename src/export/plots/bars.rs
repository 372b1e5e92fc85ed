//! Horizontal bars on a log axis, with their intervals: ratios drawn from
//! 1, or values drawn from the axis's left end; and the row labels the bar
//! charts share.

use super::*;

/// The names of a horizontal bar chart's rows, first row on top: the
/// segmented y axis counts from the bottom.
pub(super) struct RowLabels(pub(super) Vec<String>);

impl RowLabels {
    pub(super) fn rows(&self) -> i32 {
        self.0.len() as i32
    }

    /// Room for the widest name, about 7 px a character at [`TEXT`].
    pub(super) fn area_width(&self) -> u32 {
        let widest = self.0.iter().map(|l| l.chars().count()).max().unwrap_or(4);
        (widest as u32 * 7 + 16).min(300)
    }

    pub(super) fn of(&self, segment: &SegmentValue<i32>) -> String {
        match segment {
            SegmentValue::CenterOf(i) => self
                .0
                .get((self.rows() - 1 - *i) as usize)
                .cloned()
                .unwrap_or_default(),
            _ => String::new(),
        }
    }
}

/// One horizontal bar: a ratio (drawn from 1) or a value (drawn from the
/// axis's left end), with its 95% interval.
pub(super) struct Bar {
    pub(super) label: String,
    /// The ratio or value, and its interval.
    pub(super) value: Figure,
    pub(super) colour: RGBColor,
}

/// Horizontal bars of ratios on a log axis from 1, so 2x and 0.5x are as
/// long, each with its whisker; the first bar on top.
pub(super) fn ratio_bars(
    title: &str,
    x_desc: &str,
    bars: &[Bar],
    legend_entries: Vec<(Mark, String)>,
) -> std::io::Result<String> {
    let axis = Axis {
        desc: x_desc,
        label: value_label,
        origin: Some(1.0),
    };
    log_bars(title, &axis, bars, legend_entries, WIDTH)
}

/// The value axis of a bar chart: its description, how a tick reads, and
/// where bars start (a ratio's 1; None: the axis's left end).
pub(super) struct Axis<'a> {
    pub(super) desc: &'a str,
    pub(super) label: fn(&f64) -> String,
    pub(super) origin: Option<f64>,
}

/// Horizontal bars on a log axis from the axis's origin, each with its
/// whisker; the first bar on top.
pub(super) fn log_bars(
    title: &str,
    axis: &Axis,
    bars: &[Bar],
    legend_entries: Vec<(Mark, String)>,
    width: u32,
) -> std::io::Result<String> {
    let origin = axis.origin;
    let labels = RowLabels(bars.iter().map(|b| b.label.clone()).collect());
    let n = labels.rows();
    let x = log_span(
        bars.iter().flat_map(|b| {
            let [lo, hi] = b.value.ends();
            [lo, hi, origin.unwrap_or(lo)]
        }),
        1.15,
    );
    let origin_at = origin.unwrap_or(x.start);
    let height = 90 + BAR_PITCH * bars.len() as u32;
    svg_of_width(width, height, title, |root, legend| {
        for (mark, text) in legend_entries {
            legend.add(mark, text);
        }
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(labels.area_width())
            .build_cartesian_2d(
                x.clone().log_scale().with_key_points(log_ticks(&x)),
                (0..n - 1).into_segmented(),
            )?;
        styled_mesh(&mut chart)
            .y_labels(bars.len())
            .y_label_formatter(&|v| labels.of(v))
            .x_label_formatter(&axis.label)
            .x_desc(axis.desc)
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        for (row, b) in bars.iter().enumerate() {
            let i = n - 1 - row as i32;
            let value = b.value.value;
            let (from, to) = if value >= origin_at {
                (origin_at, value)
            } else {
                (value, origin_at)
            };
            chart.draw_series([span(from, to, i, b.colour)])?;
            if let Some([lo, hi]) = b.value.ci95 {
                chart.draw_series([whisker(lo, hi, i)])?;
            }
        }
        if let Some(at) = origin {
            chart.draw_series([PathElement::new(
                [(at, SegmentValue::Exact(0)), (at, SegmentValue::Last)],
                BLACK.stroke_width(1),
            )])?;
        }
        Ok(())
    })
}

/// A point of a horizontal bar chart: a value, and a row's segment.
type At = (f64, SegmentValue<i32>);

/// The stretch `from..to` of row `i`'s bar, in `colour`.
pub(super) fn span(from: f64, to: f64, i: i32, colour: RGBColor) -> Rectangle<At> {
    let mut rect = Rectangle::new(
        [
            (from, SegmentValue::Exact(i)),
            (to, SegmentValue::Exact(i + 1)),
        ],
        colour.filled(),
    );
    rect.set_margin(4, 4, 0, 0);
    rect
}

/// An interval `lo..hi` across the middle of row `i`.
pub(super) fn whisker(lo: f64, hi: f64, i: i32) -> PathElement<At> {
    PathElement::new(
        [
            (lo, SegmentValue::CenterOf(i)),
            (hi, SegmentValue::CenterOf(i)),
        ],
        BLACK.stroke_width(2),
    )
}
