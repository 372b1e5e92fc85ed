//! An attribution as one self-contained page: the sets and mitigations,
//! per family each row's parts stacked against its whole toll, the rows'
//! table, and each mitigation's reach. Every figure comes from the
//! attribution.

use crate::analysis::figure::Figure;
use crate::attribute::{Attribution, SetConditions, Switch, SwitchReach};
use crate::export::ExportError;
use crate::export::page::render_page;
use crate::export::plots::{self, Plot, StackedRow};
use serde::Serialize;

#[derive(Serialize)]
struct Page<'a> {
    machine: &'a str,
    sets: &'a [SetConditions],
    switches: &'a [Switch],
    missing: Vec<String>,
    families: Vec<FamilySection>,
    reach: &'a [SwitchReach],
    gaps: &'a [String],
    boots: &'a str,
    floors: Vec<String>,
    returns: Vec<String>,
    marked: String,
    threshold_pct: f64,
    left: bool,
}

#[derive(Serialize)]
struct FamilySection {
    name: &'static str,
    title: &'static str,
    plot: Option<Plot>,
    rows: Vec<Vec<String>>,
}

pub fn render(a: &Attribution) -> Result<Vec<u8>, ExportError> {
    let names = a.recognised.names();
    let left = super::text::has_residual(a);
    let mut families = Vec::new();
    for (family, rows) in crate::measure::probes::by_family(&a.rows, |r| &r.key.family) {
        if rows.is_empty() {
            continue;
        }
        let stacked: Vec<StackedRow> = rows
            .iter()
            .filter_map(|r| {
                let whole = r.whole?;
                let off = r.all_off_ns?;
                let pct = |ns: f64| ns / off * 100.0;
                let mut parts: Vec<(Option<usize>, f64)> = r
                    .parts
                    .iter()
                    .enumerate()
                    .filter_map(|(k, p)| Some((Some(k), pct(p.as_ref()?.ns.value))))
                    .collect();
                if let Some(left) = r.residual {
                    parts.push((None, pct(left.ns.value)));
                }
                Some(StackedRow {
                    label: format!("{} {}", r.key.id, r.key.variant),
                    parts,
                    whole: Figure::new(whole.pct, whole.ns.map(pct).ci95),
                })
            })
            .collect();
        let plot = if stacked.is_empty() {
            None
        } else {
            Some(plots::stacked_parts(
                family.name,
                &names,
                &stacked,
                &plots::OF_ALL_OFF,
            )?)
        };
        families.push(FamilySection {
            name: family.name,
            title: family.title,
            plot,
            rows: rows.iter().map(|r| super::text::row(r, left)).collect(),
        });
    }
    render_page(
        "attribute.html",
        Page {
            machine: &a.machine,
            sets: &a.recognised.sets,
            switches: &a.recognised.switches,
            missing: a
                .recognised
                .not_separated
                .boots
                .iter()
                .map(|b| format!("{}: {}", b.name, b.cmdline))
                .collect(),
            families,
            reach: &a.reach,
            gaps: &a.gaps,
            boots: &a.boot_variance.summary,
            floors: a.floors.iter().flat_map(super::floor_lines).collect(),
            returns: a.returns.iter().flat_map(super::return_lines).collect(),
            marked: super::marked(a),
            threshold_pct: a.threshold_pct,
            left,
        },
    )
}
