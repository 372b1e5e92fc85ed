//! The trade a co-runner sees: its wait and the cost per item against
//! the step between two chances to run.

use super::*;

/// The trade a co-runner sees, one probe's series together: above, the
/// co-runner's p99 wait against the step with the budget drawn across;
/// below, the cost per item at the same steps. Log axes, 95% whiskers.
pub fn latency(id: &str, series: &[&LatencyAdvice]) -> std::io::Result<Plot> {
    let Some(first) = series.first() else {
        return Err(std::io::Error::other(format!("no latency series for {id}")));
    };
    let unit = first.unit;
    let budget = first.latency_budget_us;
    let all = || series.iter().flat_map(|s| s.points.iter());
    let x = log_span(all().map(|p| p.step as f64), 1.6);
    let waits = log_span(
        all()
            .flat_map(|p| {
                let [lo, hi] = p.wait_p99.ends();
                [lo, hi]
            })
            .chain([budget]),
        1.4,
    );
    let costs = log_span(all().flat_map(|p| p.ticks.ends()), 1.2);
    let seed = all().find_map(|p| Some((p.step as f64, p.seed_choice.clone()?)));
    let mut steps: Vec<f64> = all().map(|p| p.step as f64).collect();
    steps.sort_by(f64::total_cmp);
    steps.dedup();
    let x_axis = Axis {
        span: x.clone(),
        steps: &steps,
        unit,
    };
    let svg = svg(620, id, |root, legend| {
        let (top, bottom) = root.split_vertically(340);
        let mut upper = latency_panel(
            &top,
            (format!("{id}: what a co-runner waits"), 18),
            &x_axis,
            (waits.clone(), "co-runner wait p99, µs".into()),
            series,
            |p| p.wait_p99,
        )?;
        upper.draw_series([PathElement::new(
            [(x.start, budget), (x.end, budget)],
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
                [(*b, waits.start), (*b, waits.end)],
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
            |p| p.ticks,
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
    span: std::ops::Range<f64>,
    steps: &'a [f64],
    unit: StepUnit,
}

type LogLog = Cartesian2d<WithKeyPoints<LogCoord<f64>>, WithKeyPoints<LogCoord<f64>>>;

/// One panel of a latency plot: each series' `value` at each step on log
/// axes, a line through the points and a 95% whisker at each; the chart is
/// returned for what else the panel shows.
fn latency_panel<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    (caption, caption_size): (String, u32),
    x: &Axis<'_>,
    (y, y_desc): (std::ops::Range<f64>, String),
    series: &[&LatencyAdvice],
    value: impl Fn(&LatencyPoint) -> Figure,
) -> Result<ChartContext<'a, SVGBackend<'b>, LogLog>, Box<dyn std::error::Error>> {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", caption_size))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(70)
        .build_cartesian_2d(
            x.span.clone().log_scale().with_key_points(x.steps.to_vec()),
            y.clone().log_scale().with_key_points(log_ticks(&y)),
        )?;
    styled_mesh(&mut chart)
        .x_label_formatter(&|v| step_label(*v, Some(x.unit)))
        .x_desc(format!("{} between chances to run", x.unit))
        .y_label_formatter(&value_label)
        .y_desc(y_desc)
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for (i, s) in series.iter().enumerate() {
        let c = series_colour(i);
        let at = |p: &LatencyPoint| (p.step as f64, value(p).value);
        chart.draw_series(s.points.iter().filter_map(|p| {
            let [lo, hi] = value(p).ci95?;
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
