//! Cost per item against batch size: the amortization curve.

use super::*;

/// Cost per item against batch size on log axes: each measured batch with
/// its run-to-run interval, the fitted `work + toll/B` over them, the
/// advice's two batch sizes and the seed's choice where there are.
pub fn amortization(
    doc: &RunDocument,
    fit: &AmortizationFit,
    advice: Option<&Advice>,
) -> std::io::Result<Plot> {
    let (points, seed) = measured(doc, fit);
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
                (x.start.max(0.5)..x.end).log_scale().with_key_points(sizes),
                y.clone().log_scale().with_key_points(log_ticks(&y)),
            )?;
        styled_mesh(&mut chart)
            .x_label_formatter(&|v| step_label(*v, None))
            .x_desc("batch size B (items per batch)")
            .y_label_formatter(&value_label)
            .y_desc(format!("ticks per {}", fit.item))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        let from = x.start.max(0.5);
        let curve = (0..=120).map(|i| {
            let b = from * (x.end / from).powf(f64::from(i) / 120.0);
            (b, f.per_item.value + f.per_batch.value / b)
        });
        chart.draw_series(LineSeries::new(
            curve.filter(|&(_, c)| c > 0.0),
            BLUE.stroke_width(2),
        ))?;
        legend.add(
            Mark::Line(BLUE),
            format!(
                "fit: {} + {}/B ticks (R² {:.3})",
                value_label(&f.per_item.value),
                value_label(&f.per_batch.value),
                f.r2
            ),
        );
        chart.draw_series(points.iter().map(|&(b, _, lo, hi)| {
            PathElement::new([(b, lo.max(y.start)), (b, hi)], BLACK.stroke_width(1))
        }))?;
        chart.draw_series(
            points
                .iter()
                .map(|&(b, c, _, _)| Circle::new((b, c), 4, BLACK.filled())),
        )?;
        legend.add(Mark::Dot(BLACK), "measured, with its 95% interval");
        let upright = |b: f64, colour: RGBColor| {
            PathElement::new([(b, y.start), (b, y.end)], colour.stroke_width(2))
        };
        let shown = |b: f64| (from..x.end).contains(&b);
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

/// One batch size measured: (batch, cost, low, high), ticks per item.
type Point = (f64, f64, f64, f64);

/// The fit's measured points, and the batch size its seed document chose
/// with why.
fn measured(doc: &RunDocument, fit: &AmortizationFit) -> (Vec<Point>, Option<(f64, String)>) {
    let points: Vec<Point> = doc
        .series(&fit.id, &fit.group)
        .filter_map(|r| {
            let size = r.batch.as_ref()?.size as f64;
            let shown = r.shown_ticks()?;
            let [lo, hi] = shown.ends();
            Some((size, shown.value, lo, hi))
        })
        .filter(|p| p.0 > 0.0 && p.1 > 0.0)
        .collect();
    let seed = doc
        .series(&fit.id, &fit.group)
        .find_map(|r| Some((r.batch.as_ref()?.size as f64, r.seed_choice.clone()?)));
    (points, seed)
}
