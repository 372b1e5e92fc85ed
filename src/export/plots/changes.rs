//! A comparison's rows as new over old, coloured by verdict.

use super::*;

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
            label: format!("{} {}", r.key.id, r.key.variant),
            value: r.change_pct.map(ratio),
            colour: match r.verdict {
                Verdict::Slower => SLOWER,
                Verdict::Faster => FASTER,
                Verdict::Same => SAME,
            },
        })
        .filter(|b| b.value.value > 0.0 && b.value.value.is_finite())
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
