//! The report's plots, drawn by plotters' SVG backend from the run
//! document: each amortization curve, each trade of throughput against a
//! co-runner's wait, each probe's ratios to its baseline, and the phase
//! shares of phased probes. A plot is an SVG string and a caption.

use crate::compare::{RowChange, Verdict};
use crate::results::advice::{Advice, LatencyAdvice, LatencyPoint, step_name};
use crate::results::{AmortizationFit, Record, RunDocument};
use plotters::coord::Shift;
use plotters::coord::combinators::{LogCoord, WithKeyPoints};
use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use serde::Serialize;

/// Width of every plot in SVG user units; the page scales it to its width.
const WIDTH: u32 = 720;
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
/// Room right of a plot for its legend, where the legend covers no point,
/// and the characters of legend text on one line there.
const LEGEND_ROOM: u32 = 210;
const LEGEND_CHARS: usize = 28;

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
        let font = ("sans-serif", 12).into_font();
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
            }
            for line in wrap(text, LEGEND_CHARS) {
                area.draw(&Text::new(line, (28, y), font.clone()))?;
                y += 15;
            }
            y += 5;
        }
        Ok(())
    }
}

/// `text` in lines of at most `width` characters, broken between words.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// Draws `draw` into an SVG of `height`, the plot on the left and the
/// legend it fills in on the right; an error names the plot.
fn svg(
    height: u32,
    name: &str,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>, &mut Legend) -> Drawn,
) -> std::io::Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        let (plot, side) = root.split_horizontally(WIDTH - LEGEND_ROOM);
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
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let within = |mantissas: &[f64]| -> Vec<f64> {
        let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        (first..=last)
            .flat_map(|e| mantissas.iter().map(move |m| m * 10f64.powi(e)))
            .filter(|v| (lo..=hi).contains(v))
            .collect()
    };
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
fn log_span(values: impl Iterator<Item = f64>, margin: f64) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if lo.is_finite() && hi > 0.0 {
        (lo / margin, hi * margin)
    } else {
        (0.1, 10.0)
    }
}

/// Cost per item against batch size on log axes: each measured batch with
/// its run-to-run interval, the fitted `work + toll/B` over them, the
/// advice's two batch sizes and the seed's choice where there are.
pub fn amortization(
    doc: &RunDocument,
    fit: &AmortizationFit,
    advice: Option<&Advice>,
) -> std::io::Result<Plot> {
    let in_series =
        |r: &&Record| r.id == fit.id && r.batch.as_ref().is_some_and(|b| b.group == fit.group);
    // (batch, cost, low, high), ticks per item.
    let points: Vec<(f64, f64, f64, f64)> = doc
        .results
        .iter()
        .filter(in_series)
        .filter_map(|r| {
            let size = r.batch.as_ref()?.size as f64;
            let cost = r.cost.as_ref()?;
            let [lo, hi] = cost.interval_ticks().unwrap_or([cost.ticks, cost.ticks]);
            Some((size, cost.ticks, lo, hi))
        })
        .filter(|p| p.0 > 0.0 && p.1 > 0.0)
        .collect();
    let seed = doc
        .results
        .iter()
        .filter(in_series)
        .find_map(|r| Some((r.batch.as_ref()?.size as f64, r.seed_choice.clone()?)));
    let name = series_name(&fit.id, &fit.group);
    let x = log_span(points.iter().map(|p| p.0), 1.5);
    let y = log_span(points.iter().flat_map(|p| [p.2.max(p.1 * 0.5), p.3]), 1.3);
    let f = &fit.fit;
    let sizes: Vec<f64> = points.iter().map(|p| p.0).collect();
    let svg = svg(400, &name, |root, legend| {
        let mut chart = ChartBuilder::on(root)
            .caption(&name, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(
                (x.0.max(0.5)..x.1).log_scale().with_key_points(sizes),
                (y.0..y.1).log_scale().with_key_points(log_ticks(y.0, y.1)),
            )?;
        chart
            .configure_mesh()
            .x_label_formatter(&|v| step_label(*v, ""))
            .x_desc("batch size B (items per batch)")
            .y_label_formatter(&value_label)
            .y_desc(format!("ticks per {}", fit.item))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        let from = x.0.max(0.5);
        let curve = (0..=120).map(|i| {
            let b = from * (x.1 / from).powf(f64::from(i) / 120.0);
            (b, f.per_item + f.per_batch / b)
        });
        chart.draw_series(LineSeries::new(
            curve.filter(|&(_, c)| c > 0.0),
            BLUE.stroke_width(2),
        ))?;
        legend.add(
            Mark::Line(BLUE),
            format!(
                "fit: {} + {}/B ticks (R² {:.3})",
                value_label(&f.per_item),
                value_label(&f.per_batch),
                f.r2
            ),
        );
        chart.draw_series(points.iter().map(|&(b, _, lo, hi)| {
            PathElement::new([(b, lo.max(y.0)), (b, hi)], BLACK.stroke_width(1))
        }))?;
        chart.draw_series(
            points
                .iter()
                .map(|&(b, c, _, _)| Circle::new((b, c), 4, BLACK.filled())),
        )?;
        legend.add(Mark::Dot(BLACK), "measured, with its 95% interval");
        let upright = |b: f64, colour: RGBColor| {
            PathElement::new([(b, y.0), (b, y.1)], colour.stroke_width(2))
        };
        let shown = |b: f64| (from..x.1).contains(&b);
        if let Some((b, what)) = seed.filter(|s| shown(s.0)) {
            chart.draw_series([upright(b, SEED_MARK)])?;
            legend.add(Mark::Line(SEED_MARK), format!("B={b}: {what}"));
        }
        if let Some(a) = advice {
            let win = a.batch_to_win_back as f64;
            if shown(win) {
                chart.draw_series([upright(win, GREEN)])?;
                legend.add(
                    Mark::Line(GREEN),
                    format!("B={} wins back 90%", a.batch_to_win_back),
                );
            }
            if let Some(limit) = a.largest_within_budget.filter(|l| shown(*l as f64)) {
                chart.draw_series([upright(limit as f64, RED)])?;
                legend.add(
                    Mark::Line(RED),
                    format!("B={limit}: largest within {:.0} µs", a.latency_budget_us),
                );
            }
        }
        Ok(())
    })?;
    Ok(Plot {
        svg,
        caption: format!(
            "{name}: cost per {} against batch size, log axes; {} batch sizes measured",
            fit.item,
            points.len()
        ),
    })
}

/// The trade a co-runner sees, one probe's series together: above, the
/// co-runner's p99 wait against the step with the budget drawn across;
/// below, the cost per item at the same steps. Log axes, 95% whiskers.
pub fn latency(id: &str, series: &[&LatencyAdvice]) -> std::io::Result<Plot> {
    let Some(first) = series.first() else {
        return Err(std::io::Error::other(format!("no latency series for {id}")));
    };
    let unit = first.unit.clone();
    let budget = first.latency_budget_us;
    let all = || series.iter().flat_map(|s| s.points.iter());
    let x = log_span(all().map(|p| p.step as f64), 1.6);
    let waits = log_span(
        all()
            .flat_map(|p| {
                let [lo, hi] = p.wait_p99_ci95_us.unwrap_or([p.wait_p99_us; 2]);
                [lo, hi]
            })
            .chain([budget]),
        1.4,
    );
    let costs = log_span(
        all().flat_map(|p| p.ticks_ci95.unwrap_or([p.ticks; 2])),
        1.2,
    );
    let seed = all().find_map(|p| Some((p.step as f64, p.seed_choice.clone()?)));
    let mut steps: Vec<f64> = all().map(|p| p.step as f64).collect();
    steps.sort_by(f64::total_cmp);
    steps.dedup();
    let x_axis = Axis {
        span: x,
        steps: &steps,
        unit: &unit,
    };
    let svg = svg(620, id, |root, legend| {
        let (top, bottom) = root.split_vertically(340);
        let mut upper = latency_panel(
            &top,
            (format!("{id}: what a co-runner waits"), 18),
            &x_axis,
            (waits, "co-runner wait p99, µs".into()),
            series,
            |p| (p.wait_p99_us, p.wait_p99_ci95_us),
        )?;
        upper.draw_series([PathElement::new(
            [(x.0, budget), (x.1, budget)],
            RED.stroke_width(2),
        )])?;
        legend.add(Mark::Line(RED), format!("budget {budget:.0} µs"));
        for (i, s) in series.iter().enumerate() {
            let name = if s.group.is_empty() {
                id.to_string()
            } else {
                s.group.clone()
            };
            legend.add(Mark::Dot(series_colour(i)), name);
        }
        if let Some((b, what)) = &seed {
            upper.draw_series([PathElement::new(
                [(*b, waits.0), (*b, waits.1)],
                SEED_MARK.stroke_width(2),
            )])?;
            legend.add(Mark::Line(SEED_MARK), what.clone());
        }
        latency_panel(
            &bottom,
            (format!("{id}: what each {} costs", first.item), 16),
            &x_axis,
            (costs, format!("ticks per {}", first.item)),
            series,
            |p| (p.ticks, p.ticks_ci95),
        )?;
        Ok(())
    })?;
    Ok(Plot {
        svg,
        caption: format!(
            "{id}: a same-CPU co-runner's p99 wait (above) and the cost per {} (below) \
             against the {unit} done between chances for it to run; log axes, 95% intervals; \
             {} series",
            first.item,
            series.len()
        ),
    })
}

/// The step axis the two panels of a latency plot share.
struct Axis<'a> {
    span: (f64, f64),
    steps: &'a [f64],
    unit: &'a str,
}

type LogLog = Cartesian2d<WithKeyPoints<LogCoord<f64>>, WithKeyPoints<LogCoord<f64>>>;

/// One panel of a latency plot: each series' `value` at each step on log
/// axes, a line through the points and a 95% whisker at each; the chart is
/// returned for what else the panel shows.
fn latency_panel<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    (caption, caption_size): (String, u32),
    x: &Axis<'_>,
    (y, y_desc): ((f64, f64), String),
    series: &[&LatencyAdvice],
    value: impl Fn(&LatencyPoint) -> (f64, Option<[f64; 2]>),
) -> Result<ChartContext<'a, SVGBackend<'b>, LogLog>, Box<dyn std::error::Error>> {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", caption_size))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(70)
        .build_cartesian_2d(
            (x.span.0..x.span.1)
                .log_scale()
                .with_key_points(x.steps.to_vec()),
            (y.0..y.1).log_scale().with_key_points(log_ticks(y.0, y.1)),
        )?;
    chart
        .configure_mesh()
        .x_label_formatter(&|v| step_label(*v, x.unit))
        .x_desc(format!("{} between chances to run", x.unit))
        .y_label_formatter(&value_label)
        .y_desc(y_desc)
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for (i, s) in series.iter().enumerate() {
        let c = series_colour(i);
        let at = |p: &LatencyPoint| (p.step as f64, value(p).0);
        chart.draw_series(s.points.iter().filter_map(|p| {
            let [lo, hi] = value(p).1?;
            Some(PathElement::new(
                [(p.step as f64, lo), (p.step as f64, hi)],
                c.stroke_width(1),
            ))
        }))?;
        chart.draw_series(LineSeries::new(s.points.iter().map(at), c.stroke_width(2)))?;
        chart.draw_series(s.points.iter().map(|p| Circle::new(at(p), 4, c.filled())))?;
    }
    Ok(chart)
}

/// A log-axis tick as the step's unit reads: 4 KiB for bytes.
fn step_label(v: f64, unit: &str) -> String {
    let rounded = v.round();
    if (rounded - v).abs() > 1e-6 * v.max(1.0) {
        return format!("{v:.2}");
    }
    if unit == "bytes" {
        match rounded as u64 {
            b if b >= 1 << 20 => {
                format!("{:.3} MiB", b as f64 / f64::from(1u32 << 20)).replace(".000", "")
            }
            b if b >= 1 << 10 => format!("{:.2} KiB", b as f64 / 1024.0).replace(".00", ""),
            b => format!("{b} B"),
        }
    } else {
        step_name(rounded as u64, "").trim_end().to_string()
    }
}

/// The names of a horizontal bar chart's rows, first row on top: the
/// segmented y axis counts from the bottom.
struct RowLabels(Vec<String>);

impl RowLabels {
    fn rows(&self) -> i32 {
        self.0.len() as i32
    }

    /// Room for the widest name, about 7 px a character.
    fn area_width(&self) -> u32 {
        let widest = self.0.iter().map(|l| l.chars().count()).max().unwrap_or(4);
        (widest as u32 * 7 + 16).min(300)
    }

    fn of(&self, segment: &SegmentValue<i32>) -> String {
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

/// One horizontal bar: a ratio drawn from 1, with its 95% interval.
struct Bar {
    label: String,
    ratio: f64,
    ci: Option<[f64; 2]>,
    colour: RGBColor,
}

/// Horizontal bars of ratios on a log axis from 1, so 2x and 0.5x are as
/// long, each with its whisker; the first bar on top.
fn ratio_bars(
    title: &str,
    x_desc: &str,
    bars: &[Bar],
    legend_entries: Vec<(Mark, String)>,
) -> std::io::Result<String> {
    let labels = RowLabels(bars.iter().map(|b| b.label.clone()).collect());
    let n = labels.rows();
    let x = log_span(
        bars.iter().flat_map(|b| {
            let [lo, hi] = b.ci.unwrap_or([b.ratio; 2]);
            [lo, hi, 1.0]
        }),
        1.15,
    );
    let height = 90 + BAR_PITCH * bars.len() as u32;
    svg(height, title, |root, legend| {
        for (mark, text) in legend_entries {
            legend.add(mark, text);
        }
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(labels.area_width())
            .build_cartesian_2d(
                (x.0..x.1).log_scale().with_key_points(log_ticks(x.0, x.1)),
                (0..n - 1).into_segmented(),
            )?;
        chart
            .configure_mesh()
            .y_labels(bars.len())
            .y_label_formatter(&|v| labels.of(v))
            .x_label_formatter(&value_label)
            .x_desc(x_desc)
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        for (row, b) in bars.iter().enumerate() {
            let i = n - 1 - row as i32;
            let (from, to) = if b.ratio >= 1.0 {
                (1.0, b.ratio)
            } else {
                (b.ratio, 1.0)
            };
            let mut rect = Rectangle::new(
                [
                    (from, SegmentValue::Exact(i)),
                    (to, SegmentValue::Exact(i + 1)),
                ],
                b.colour.filled(),
            );
            rect.set_margin(4, 4, 0, 0);
            chart.draw_series([rect])?;
            if let Some([lo, hi]) = b.ci {
                chart.draw_series([PathElement::new(
                    [
                        (lo, SegmentValue::CenterOf(i)),
                        (hi, SegmentValue::CenterOf(i)),
                    ],
                    BLACK.stroke_width(2),
                )])?;
            }
        }
        chart.draw_series([PathElement::new(
            [(1.0, SegmentValue::Exact(0)), (1.0, SegmentValue::Last)],
            BLACK.stroke_width(1),
        )])?;
        Ok(())
    })
}

/// Each variant's ratio to its probe's baseline, the baseline at 1.
pub fn ratios(id: &str, records: &[&Record]) -> std::io::Result<Plot> {
    let bars: Vec<Bar> = records
        .iter()
        .filter_map(|r| {
            let (label, ratio, ci) = if r.is_baseline() {
                r.cost.as_ref()?;
                (format!("{} (base)", r.variant), 1.0, None)
            } else {
                let c = r.vs_baseline.as_ref()?;
                (r.variant.clone(), c.ratio, c.ratio_ci95)
            };
            Some(Bar {
                label,
                ratio,
                ci,
                colour: BAR,
            })
        })
        .filter(|b| b.ratio > 0.0 && b.ratio.is_finite())
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

const SLOWER: RGBColor = RGBColor(200, 70, 60);
const FASTER: RGBColor = RGBColor(50, 150, 80);
const SAME: RGBColor = RGBColor(170, 170, 170);

/// Rows of a comparison as new ÷ old with the change's 95% interval,
/// coloured by verdict.
pub fn changes(title: &str, rows: &[&RowChange]) -> std::io::Result<Plot> {
    let ratio = |pct: f64| 1.0 + pct / 100.0;
    let bars: Vec<Bar> = rows
        .iter()
        .map(|r| Bar {
            label: format!("{} {}", r.id, r.variant),
            ratio: ratio(r.change_pct),
            ci: r.change_ci95_pct.map(|[lo, hi]| [ratio(lo), ratio(hi)]),
            colour: match r.verdict {
                Verdict::Slower => SLOWER,
                Verdict::Faster => FASTER,
                Verdict::Same => SAME,
            },
        })
        .filter(|b| b.ratio > 0.0 && b.ratio.is_finite())
        .collect();
    let svg = ratio_bars(
        title,
        "new ÷ old, log axis",
        &bars,
        vec![
            (Mark::Block(SLOWER), "slower beyond noise".into()),
            (Mark::Block(FASTER), "faster beyond noise".into()),
            (Mark::Block(SAME), "~: within noise or the threshold".into()),
            (Mark::Line(BLACK), "95% interval of the change".into()),
        ],
    )?;
    Ok(Plot {
        svg,
        caption: format!("{title}: {} rows, new cost ÷ old", bars.len()),
    })
}

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
        chart
            .configure_mesh()
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
                    .map(|p| p.share_pct.max(0.0))
                    .sum();
                let share = r
                    .phases
                    .iter()
                    .find(|p| p.name == *phase)?
                    .share_pct
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
