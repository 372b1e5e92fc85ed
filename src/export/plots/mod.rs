//! The report's plots, drawn by plotters' SVG backend from the run
//! document: each amortization curve, each trade of throughput against a
//! co-runner's wait, each probe's ratios to its baseline, and the phase
//! shares of phased probes. A plot is an SVG string and a caption.

use crate::analysis::figure::Figure;
use crate::compare::{RowChange, Verdict};
use crate::measure::probes::StepUnit;
use crate::store::results::answered::{Advice, LatencyAdvice, LatencyPoint};
use crate::store::results::{AmortizationFit, Record, RunDocument};
use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::coord::combinators::{LogCoord, WithKeyPoints};
use plotters::coord::ranged1d::{SegmentValue, ValueFormatter};
use plotters::prelude::*;
use serde::Serialize;

/// Width of a plot in SVG user units, and of the answer's chart, which
/// carries long labels; the page shows each at this width where it can.
const WIDTH: u32 = 720;
const WIDE: u32 = 1000;
/// Pixels per bar in the bar charts.
const BAR_PITCH: u32 = 26;
const BAR: RGBColor = RGBColor(90, 130, 200);
const SEED_MARK: RGBColor = RGBColor(150, 150, 150);
/// Series colours that stay apart from each other, from the budget's red
/// and on paper (matplotlib's "tab10" without its red and grey).
const SERIES: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(23, 190, 207),
];
/// The size every label, axis description and legend line is drawn at:
/// plotters writes a font of size s as s / 1.24 SVG units, and a plot is
/// shown at its own width in a 1280-pixel window, so 14 reads 11.3 px.
const TEXT: u32 = 14;

fn text() -> TextStyle<'static> {
    ("sans-serif", TEXT).into_font().into()
}

/// A chart's mesh with the labels and axis descriptions every plot here
/// writes in [`text`]: the rest (labels, formatters, descriptions) is each
/// plot's own.
fn styled_mesh<'a, 'b, DB, XT, YT, X, Y>(
    chart: &'b mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
) -> MeshStyle<'a, 'b, X, Y, DB>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = XT> + ValueFormatter<XT>,
    Y: Ranged<ValueType = YT> + ValueFormatter<YT>,
{
    let mut mesh = chart.configure_mesh();
    mesh.label_style(text()).axis_desc_style(text());
    mesh
}

/// Room right of a plot for its legend, where the legend covers no point,
/// and the characters of legend text on one line there.
const LEGEND_ROOM: u32 = 210;
const LEGEND_CHARS: usize = 25;

fn series_colour(i: usize) -> RGBColor {
    SERIES[i % SERIES.len()]
}

type Drawn = Result<(), Box<dyn std::error::Error>>;

#[derive(Serialize)]
pub struct Plot {
    pub svg: String,
    pub caption: String,
}

/// How a legend entry is drawn before its text.
#[derive(Clone, Copy)]
enum Mark {
    Line(RGBColor),
    Dot(RGBColor),
    Block(RGBColor),
    /// A line of the legend's text alone.
    Note,
}

/// The entries of one plot's legend, drawn in a column right of the plot
/// where they cover no point.
#[derive(Default)]
struct Legend(Vec<(Mark, String)>);

impl Legend {
    fn add(&mut self, mark: Mark, text: impl Into<String>) {
        self.0.push((mark, text.into()));
    }

    fn draw(&self, area: &DrawingArea<SVGBackend, Shift>) -> Drawn {
        let font = text();
        let mut y = 40;
        for (mark, text) in &self.0 {
            let middle = y + 6;
            match *mark {
                Mark::Line(c) => area.draw(&PathElement::new(
                    [(4, middle), (22, middle)],
                    c.stroke_width(2),
                ))?,
                Mark::Dot(c) => area.draw(&Circle::new((13, middle), 4, c.filled()))?,
                Mark::Block(c) => area.draw(&Rectangle::new(
                    [(6, middle - 5), (20, middle + 5)],
                    c.filled(),
                ))?,
                Mark::Note => {}
            }
            for line in super::text_table::wrap("", text, 0, LEGEND_CHARS) {
                area.draw(&Text::new(line, (28, y), font.clone()))?;
                y += 17;
            }
            y += 5;
        }
        Ok(())
    }
}

/// Draws `draw` into an SVG of `height`, the plot on the left and the
/// legend it fills in on the right; an error names the plot.
fn svg(
    height: u32,
    name: &str,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>, &mut Legend) -> Drawn,
) -> std::io::Result<String> {
    svg_of_width(WIDTH, height, name, draw)
}

/// [`svg`] at `width` SVG units: the page shows every plot at its own
/// width where the window has room, so its text keeps its size.
fn svg_of_width(
    width: u32,
    height: u32,
    name: &str,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>, &mut Legend) -> Drawn,
) -> std::io::Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        let (plot, side) = root.split_horizontally(width - LEGEND_ROOM);
        let mut legend = Legend::default();
        root.fill(&WHITE)
            .map_err(|e| Box::new(e) as Box<dyn std::error::Error>)
            .and_then(|()| draw(&plot, &mut legend))
            .and_then(|()| legend.draw(&side))
            .and_then(|()| root.present().map_err(|e| e.into()))
            .map_err(|e| std::io::Error::other(format!("drawing the plot of {name}: {e}")))?;
    }
    Ok(svg)
}

/// Tick marks for a log axis over `lo..hi`: 1-2-5 steps where that gives
/// three or more, every digit where that does, else five values spread
/// evenly and rounded to two figures (a range inside one decade).
fn log_ticks(&std::ops::Range { start: lo, end: hi }: &std::ops::Range<f64>) -> Vec<f64> {
    let within = |mantissas: &[f64]| -> Vec<f64> {
        let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        (first..=last)
            .flat_map(|e| mantissas.iter().map(move |m| m * 10f64.powi(e)))
            .filter(|v| (lo..=hi).contains(v))
            .collect()
    };
    // Over many decades 1-2-5 steps crowd into each other: powers of ten.
    let decades = within(&[1.0]);
    if decades.len() >= 5 {
        return decades;
    }
    let ticks = within(&[1.0, 2.0, 5.0]);
    if ticks.len() >= 3 {
        return ticks;
    }
    let ticks = within(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    if ticks.len() >= 3 && ticks.len() <= 9 {
        return ticks;
    }
    (1..=5)
        .map(|i| {
            let v = lo * (hi / lo).powf(f64::from(i) / 6.0);
            let scale = 10f64.powi(v.log10().floor() as i32 - 1);
            (v / scale).round() * scale
        })
        .collect()
}

/// A time axis's tick, from ns, in the unit that keeps it short: `500 ns`,
/// `10 µs`, `2 ms`.
fn time_label(ns: &f64) -> String {
    let (value, unit) = match ns.abs() {
        v if v >= 1e6 => (ns / 1e6, "ms"),
        v if v >= 1e3 => (ns / 1e3, "µs"),
        _ => (*ns, "ns"),
    };
    format!("{} {unit}", value_label(&value))
}

/// A value axis's tick as a person writes it: 12,000 or 3.5 or 0.25.
fn value_label(v: &f64) -> String {
    let v = *v;
    if v.abs() >= 100.0 {
        crate::export::format_cost(v)
    } else if v.abs() >= 1.0 {
        format!("{v:.1}").trim_end_matches(".0").to_string()
    } else if v > 0.0 {
        // Two significant figures: 0.005 and 0.05 stay apart.
        let decimals = (1 - v.log10().floor() as i32).max(2) as usize;
        let text = format!("{v:.decimals$}");
        text.trim_end_matches('0').to_string()
    } else {
        format!("{v}")
    }
}

fn series_name(id: &str, group: &str) -> String {
    if group.is_empty() {
        id.to_string()
    } else {
        format!("{id} {group}")
    }
}

/// The low and high ends of `values` spread out by `margin` on log axes.
fn log_span(values: impl Iterator<Item = f64>, margin: f64) -> std::ops::Range<f64> {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if lo.is_finite() && hi > 0.0 {
        lo / margin..hi * margin
    } else {
        0.1..10.0
    }
}

/// A log-axis tick as the step's unit reads: 4 KiB for bytes.
fn step_label(v: f64, unit: Option<StepUnit>) -> String {
    let rounded = v.round();
    if (rounded - v).abs() > 1e-6 * v.max(1.0) {
        return format!("{v:.2}");
    }
    if unit == Some(StepUnit::Bytes) {
        match rounded as u64 {
            b if b >= 1 << 20 => {
                format!("{:.3} MiB", b as f64 / f64::from(1u32 << 20)).replace(".000", "")
            }
            b if b >= 1 << 10 => format!("{:.2} KiB", b as f64 / 1024.0).replace(".00", ""),
            b => format!("{b} B"),
        }
    } else {
        format!("{}", rounded as u64)
    }
}

mod amortization;
mod answer;
mod bars;
mod changes;
mod latency;
mod phases;
mod ratios;
mod stacked;
mod timeline;

pub use amortization::amortization;
pub use answer::answer;
use bars::{Axis, Bar, RowLabels, log_bars, ratio_bars};
pub use changes::changes;
pub use latency::latency;
pub use phases::phase_shares;
pub use ratios::ratios;
pub use stacked::{OF_ALL_OFF, Reading, StackedRow, stacked_parts};
pub use timeline::timeline;
