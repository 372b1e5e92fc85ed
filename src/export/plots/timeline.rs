//! A machine's history on one axis: rows' figures and intervals run by
//! run, and each event where the rows it moved changed level.

use super::*;
use crate::compare::MachineTimeline;

const EVENT: RGBColor = RGBColor(200, 70, 60);

/// Rows a timeline plots at most: more lines than this read as one.
const ROWS: usize = 4;

/// The rows the events moved most (the largest change of each event
/// first), else the null syscall, else the first row, up to [`ROWS`].
fn rows_to_plot(timeline: &MachineTimeline) -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut moved: Vec<_> = timeline.events.iter().flat_map(|e| &e.rows).collect();
    moved.sort_by(|a, b| b.change.value.abs().total_cmp(&a.change.value.abs()));
    for row in moved {
        let key = (row.probe.clone(), row.variant.clone());
        if !rows.contains(&key) && rows.len() < ROWS {
            rows.push(key);
        }
    }
    if rows.is_empty() {
        let getpid = ("os/getpid".to_string(), "syscall".to_string());
        if timeline.series.contains_key(&getpid) {
            rows.push(getpid);
        } else if let Some(first) = timeline.series.keys().next() {
            rows.push(first.clone());
        }
    }
    rows
}

/// The machine's runs along x (their order), each plotted row's figure
/// with its interval (ticks, log axis), and a line at each event.
pub fn timeline(timeline: &MachineTimeline) -> std::io::Result<Plot> {
    let rows = rows_to_plot(timeline);
    let points: Vec<(usize, Figure)> = rows
        .iter()
        .filter_map(|key| timeline.series.get(key))
        .flat_map(|s| s.points.iter().copied())
        .collect();
    let y = log_span(points.iter().flat_map(|(_, f)| f.ends()), 1.15);
    let runs = timeline.runs.len().max(1) as f64;
    let at_run = |i: usize| i as f64 + 1.0;
    let title = format!("{}: what changed, and when", timeline.machine.hostname);
    let svg = svg(420, &title, |root, legend| {
        let mut chart = ChartBuilder::on(root)
            .caption(&title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(
                0.5..runs + 0.5,
                y.clone().log_scale().with_key_points(log_ticks(&y)),
            )?;
        styled_mesh(&mut chart)
            .x_desc("run (in the order they ran)")
            .x_labels(timeline.runs.len().clamp(2, 20))
            .light_line_style(TRANSPARENT)
            .y_desc("ticks per item, log axis")
            .x_label_formatter(&|v| {
                let i = v.round() as usize;
                timeline
                    .runs
                    .get(i.wrapping_sub(1))
                    .map_or(String::new(), |r| r.id.to_string())
            })
            .y_label_formatter(&value_label)
            .draw()?;
        for event in &timeline.events {
            let Some(i) = timeline.runs.iter().position(|r| r.id == event.run) else {
                continue;
            };
            let x = at_run(i) - 0.5;
            chart.draw_series([PathElement::new(
                [(x, y.start), (x, y.end)],
                EVENT.stroke_width(2),
            )])?;
            legend.add(
                Mark::Line(EVENT),
                format!("run {}: {} rows moved", event.run, event.rows.len()),
            );
        }
        for (n, key) in rows.iter().enumerate() {
            let Some(series) = timeline.series.get(key) else {
                continue;
            };
            let colour = series_colour(n);
            chart.draw_series(series.points.iter().map(|(i, f)| {
                let [lo, hi] = f.ends();
                PathElement::new([(at_run(*i), lo), (at_run(*i), hi)], colour.stroke_width(1))
            }))?;
            chart.draw_series(
                series
                    .points
                    .iter()
                    .map(|(i, f)| Circle::new((at_run(*i), f.value), 3, colour.filled())),
            )?;
            legend.add(Mark::Dot(colour), format!("{} {}", key.0, key.1));
        }
        Ok(())
    })?;
    Ok(Plot {
        svg,
        caption: format!(
            "{}: {} runs; each row's figure with its 95% interval run by run, and a line where \
             an event's rows changed level",
            timeline.machine.hostname,
            timeline.runs.len()
        ),
    })
}
