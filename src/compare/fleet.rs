//! Many runs side by side, typically one per host: a column per run, a row
//! per probe variant, runs of identical inventory grouped together, and
//! the rows where a run differs from the first beyond noise marked. The
//! marks come from the comparison engine run against the first run, N-1
//! times, its rows held to the false discovery rate as one family.

use super::{InventoryChange, RunLabel, Verdict, inventory_changes, label};
use crate::store::results::RunDocument;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Fleet {
    /// The runs in column order: grouped by inventory, each group in the
    /// order its first run was named.
    pub runs: Vec<FleetRun>,
    /// The column indices of each group of runs with identical inventory.
    pub groups: Vec<Vec<usize>>,
    /// Per group, how its inventory differs from the first group's.
    pub group_differences: Vec<Vec<InventoryChange>>,
    pub threshold_pct: f64,
    pub rows: Vec<FleetRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FleetRun {
    pub label: RunLabel,
    /// Index into `groups`.
    pub group: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct FleetRow {
    pub family: String,
    pub id: String,
    pub variant: String,
    /// One per run, in column order; None where the run has no measured
    /// row of that name.
    pub cells: Vec<Option<FleetCell>>,
    /// Per run, the verdict of its change against the first column (None
    /// for the first column and where either side is missing).
    pub against_first: Vec<Option<Verdict>>,
    /// Whether some run differs from the first beyond noise and the
    /// threshold.
    pub differs: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct FleetCell {
    pub ticks: f64,
    pub ns: f64,
    /// The run-to-run interval's half-width, percent of the cost.
    pub half_width_pct: Option<f64>,
}

/// `runs` paired with the names the user gave them.
pub fn fleet(runs: &[(String, RunDocument)], threshold_pct: f64) -> Fleet {
    let groups = by_inventory(runs);
    let order: Vec<usize> = groups.iter().flatten().copied().collect();
    let columns: Vec<&(String, RunDocument)> = order.iter().map(|&i| &runs[i]).collect();
    let group_of = |i: usize| groups.iter().position(|g| g.contains(&i)).unwrap_or(0);
    let first = columns[0];
    // Every host against the first is one question (which rows differ from
    // it anywhere), so all columns' rows are held to the false discovery
    // rate together: held column by column and read with "any", 99 hosts
    // would mark a row that differs nowhere far more often than 5%.
    let mut compared: Vec<super::RunComparison> = columns[1..]
        .iter()
        .map(|run| {
            super::compare_before_fdr(
                [
                    &super::Side::one(&first.1, &first.0),
                    &super::Side::one(&run.1, &run.0),
                ],
                threshold_pct,
                &|_, _| None,
                &super::BootNoise::default(),
            )
        })
        .collect();
    super::hold_to_one_family(&mut compared, threshold_pct, false);
    let against: Vec<Option<super::RunComparison>> = std::iter::once(None)
        .chain(compared.into_iter().map(Some))
        .collect();

    let mut names: Vec<(&str, &str, &str)> = Vec::new();
    for (_, doc) in &columns {
        for r in &doc.results {
            if r.cost.is_some()
                && !names.contains(&(r.family.as_str(), r.id.as_str(), r.variant.as_str()))
            {
                names.push((&r.family, &r.id, &r.variant));
            }
        }
    }
    let rows = names
        .into_iter()
        .map(|(family, id, variant)| fleet_row(&columns, &against, family, id, variant))
        .collect();
    Fleet {
        runs: order
            .iter()
            .map(|&i| FleetRun {
                label: label(&runs[i].1, &runs[i].0),
                group: group_of(i),
            })
            .collect(),
        groups: groups
            .iter()
            .map(|g| {
                g.iter()
                    .map(|i| order.iter().position(|o| o == i).unwrap_or(0))
                    .collect()
            })
            .collect(),
        group_differences: groups
            .iter()
            .map(|g| inventory_changes(&runs[groups[0][0]].1, &runs[g[0]].1))
            .collect(),
        threshold_pct,
        rows,
    }
}

/// The runs grouped by identical inventory, in the order they were named.
fn by_inventory(runs: &[(String, RunDocument)]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, (_, doc)) in runs.iter().enumerate() {
        match groups
            .iter_mut()
            .find(|g| inventory_changes(&runs[g[0]].1, doc).is_empty())
        {
            Some(group) => group.push(i),
            None => groups.push(vec![i]),
        }
    }
    groups
}

/// One row across the fleet: each run's figure as its own table shows it
/// (at its reference speed where it read one), and each run's verdict
/// against the first.
fn fleet_row(
    columns: &[&(String, RunDocument)],
    against: &[Option<super::RunComparison>],
    family: &str,
    id: &str,
    variant: &str,
) -> FleetRow {
    let cells: Vec<Option<FleetCell>> = columns
        .iter()
        .map(|(_, doc)| {
            let cost = doc.record(id, variant)?.cost.as_ref()?;
            let shown = cost.shown_ticks();
            Some(FleetCell {
                ticks: shown.value,
                ns: cost.shown_ns().value,
                half_width_pct: shown.half_width_pct(),
            })
        })
        .collect();
    let against_first: Vec<Option<Verdict>> = against
        .iter()
        .map(|cmp| {
            cmp.as_ref()?
                .rows
                .iter()
                .find(|row| row.key.id == id && row.key.variant == variant)
                .map(|row| row.verdict)
        })
        .collect();
    FleetRow {
        family: family.to_string(),
        id: id.to_string(),
        variant: variant.to_string(),
        differs: against_first
            .iter()
            .any(|v| matches!(v, Some(Verdict::Slower | Verdict::Faster))),
        cells,
        against_first,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{RowChange, hold_to_false_discovery_rate};
    use super::*;

    /// A row that did not change, whose own 5% test gave `p`.
    fn unchanged(p: f64) -> RowChange {
        RowChange {
            key: crate::store::results::RowKey {
                family: "os".into(),
                id: "os/getpid".into(),
                variant: "syscall".into(),
                item: "call".into(),
            },
            old_ticks: 1.0,
            new_ticks: 1.0,
            old_ns: 1.0,
            new_ns: 1.0,
            change_pct: crate::analysis::figure::Figure::new(0.0, None),
            figure: crate::analysis::figure::Reported::of(
                crate::analysis::figure::Figure::new(0.0, None),
                "%",
                "change",
                String::new(),
            ),
            smallest_detectable_pct: None,
            runs_to_resolve: None,
            p_value: Some(p),
            noise_from: Vec::new(),
            runs: [1, 1],
            decided_by: None,
            walk_pct: None,
            note: None,
            verdict: if p < 0.05 {
                Verdict::Slower
            } else {
                Verdict::Same
            },
            consistent_with: Vec::new(),
            power: None,
            at_levels: None,
        }
    }

    #[test]
    fn a_fleet_of_unchanged_hosts_marks_a_row_in_at_most_five_percent_of_fleets() {
        // Twenty hosts against the first, thirty rows each, none changed:
        // held together (Benjamini-Hochberg under the global null holds the
        // chance of any mark to q), a fleet marks some row in at most 5% of
        // trials; held column by column and read with "any", in about
        // 1 - 0.95^19 = 62%. The bound is 5% plus 3.09 standard errors of a
        // rate over the trials, fixed before the run.
        let trials = 400;
        let mut rng = fastrand::Rng::with_seed(53);
        let (mut together, mut apart) = (0, 0);
        for _ in 0..trials {
            let mut columns: Vec<Vec<RowChange>> = (0..19)
                .map(|_| (0..30).map(|_| unchanged(rng.f64())).collect())
                .collect();
            let mut each = columns.clone();
            hold_to_false_discovery_rate(columns.iter_mut().flatten(), 1.0);
            for column in &mut each {
                hold_to_false_discovery_rate(column.iter_mut(), 1.0);
            }
            let any =
                |cols: &[Vec<RowChange>]| cols.iter().flatten().any(|r| r.verdict != Verdict::Same);
            together += usize::from(any(&columns));
            apart += usize::from(any(&each));
        }
        let bound = 0.05 + 3.09 * (0.05 * 0.95 / trials as f64).sqrt();
        let (together, apart) = (
            together as f64 / trials as f64,
            apart as f64 / trials as f64,
        );
        assert!(together <= bound, "{together:.3} of fleets marked a row");
        assert!(apart > 0.4, "column by column: {apart:.3}");
    }
}
