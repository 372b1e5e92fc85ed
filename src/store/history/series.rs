//! A machine's runs in the order they ran and each row's figure over them:
//! what change points over a history read (`mitbench history changes`).

use super::queries::{StoredFigure, at_one_speed, stored_figure};
use super::{History, HistoryError};
use crate::analysis::interval::Figure;
use rusqlite::params;
use std::collections::BTreeMap;

/// What makes runs one machine's series: the host (its name and
/// installation), quick or not, and the process controls inherited. The
/// boot and mitbench's build are left out: a kernel update or a new build
/// is what the series is read for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct MachineKey {
    pub hostname: String,
    pub machine_id: String,
    pub quick: bool,
    /// The process controls, as stored (JSON).
    pub controls: String,
}

/// One stored run of a machine's series.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SeriesRun {
    pub id: i64,
    pub started_at: String,
    /// Its quiet canary (ticks), where the run reached a quiet level.
    pub quiet_canary: Option<f64>,
}

/// A row's figure in each run that measured it in a quiet state, at the
/// runs' common reference speed where every one has one (as compare
/// reads a row), with the run's interval carried alike.
#[derive(Debug, Clone, PartialEq)]
pub struct RowSeries {
    pub family: String,
    /// (index into the machine's runs, the figure in ticks).
    pub points: Vec<(usize, Figure)>,
}

/// The newest runs of a machine a series holds: change points cost the
/// square of the runs each row is searched over (1,000 runs of 364 rows:
/// 3.4 s on this project's guests), and a run a day fills it in almost
/// three years.
pub const SERIES_RUNS: usize = 1000;

/// One machine's stored runs, oldest first, and each row's series.
#[derive(Debug, Clone, PartialEq)]
pub struct MachineSeries {
    pub machine: MachineKey,
    pub runs: Vec<SeriesRun>,
    /// Older runs of the machine left out ([`SERIES_RUNS`]).
    pub older_left_out: usize,
    pub rows: BTreeMap<(String, String), RowSeries>,
}

/// A record as stored: the index of its run among its machine's, its row,
/// family, figure (with what carries it to a reference speed), and the raw
/// figure with its interval.
struct StoredPoint {
    run: usize,
    row: (String, String),
    family: String,
    figure: StoredFigure,
    raw: Figure,
}

impl History {
    /// Every machine's series in this history. Records of a slow state
    /// (no quiet round) are left out, as the history's noise leaves them:
    /// a host that was busy through a run is not a change of the machine.
    pub fn machine_series(&self) -> Result<Vec<MachineSeries>, HistoryError> {
        let mut query = self
            .conn
            .prepare(
                "SELECT r.id, r.started_at, r.conditions, r.quiet_canary,
                        c.probe, c.variant, c.family, c.ticks, c.speed_normalized_ticks,
                        c.speed_coefficient, r.reference_ticks, c.ci95_lo_ticks, c.ci95_hi_ticks
                 FROM runs r LEFT JOIN records c
                   ON c.run_id = r.id AND c.ticks > 0 AND c.slow_state = 0
                 WHERE r.conditions IS NOT NULL
                 ORDER BY r.id",
            )
            .map_err(|e| self.sqlite(e))?;
        let rows = query
            .query_map(params![], |r| {
                let run = SeriesRun {
                    id: r.get(0)?,
                    started_at: r.get(1)?,
                    quiet_canary: r.get(3)?,
                };
                let point = match r.get::<_, Option<String>>(4)? {
                    Some(probe) => {
                        let figure = stored_figure(r, 7)?;
                        let ends = r.get::<_, Option<f64>>(11)?.zip(r.get(12)?);
                        Some(StoredPoint {
                            run: 0,
                            row: (probe, r.get(5)?),
                            family: r.get(6)?,
                            figure,
                            raw: Figure::new(figure.0, ends.map(|(lo, hi)| [lo, hi])),
                        })
                    }
                    None => None,
                };
                Ok((run, r.get::<_, String>(2)?, point))
            })
            .map_err(|e| self.sqlite(e))?;
        let mut machines: BTreeMap<MachineKey, (Vec<SeriesRun>, Vec<StoredPoint>)> =
            BTreeMap::new();
        for row in rows {
            let (run, conditions, point) = row.map_err(|e| self.sqlite(e))?;
            let Some(key) = machine_key(&conditions) else {
                continue;
            };
            let (runs, points) = machines.entry(key).or_default();
            if runs.last().is_none_or(|last| last.id != run.id) {
                runs.push(run);
            }
            if let Some(point) = point {
                points.push(StoredPoint {
                    run: runs.len() - 1,
                    ..point
                });
            }
        }
        Ok(machines
            .into_iter()
            .map(|(machine, (mut runs, points))| {
                let older_left_out = runs.len().saturating_sub(SERIES_RUNS);
                runs.drain(..older_left_out);
                let points = points
                    .into_iter()
                    .filter(|p| p.run >= older_left_out)
                    .map(|p| StoredPoint {
                        run: p.run - older_left_out,
                        ..p
                    })
                    .collect();
                MachineSeries {
                    machine,
                    runs,
                    older_left_out,
                    rows: row_series(points),
                }
            })
            .collect())
    }
}

/// The machine a run's stored conditions (`conditions_of`) name.
fn machine_key(conditions: &str) -> Option<MachineKey> {
    let c: Vec<serde_json::Value> = serde_json::from_str(conditions).ok()?;
    let text = |i: usize| c.get(i).and_then(|v| v.as_str()).unwrap_or("").to_string();
    Some(MachineKey {
        hostname: text(0),
        machine_id: text(1),
        quick: c.get(4)?.as_bool().unwrap_or(false),
        controls: c.get(5).map(ToString::to_string).unwrap_or_default(),
    })
}

/// Each row's points, its figures carried to the runs' common reference
/// speed and each interval scaled with its figure.
fn row_series(points: Vec<StoredPoint>) -> BTreeMap<(String, String), RowSeries> {
    let mut by_row: BTreeMap<(String, String), (String, Vec<StoredPoint>)> = BTreeMap::new();
    for point in points {
        by_row
            .entry(point.row.clone())
            .or_insert_with(|| (point.family.clone(), Vec::new()))
            .1
            .push(point);
    }
    by_row
        .into_iter()
        .map(|(row, (family, points))| {
            let stored: Vec<StoredFigure> = points.iter().map(|p| p.figure).collect();
            let at_speed = at_one_speed(&stored);
            let points = points
                .iter()
                .zip(at_speed)
                .map(|(p, value)| {
                    let scale = value / p.raw.value;
                    (p.run, p.raw.map(|ticks| ticks * scale))
                })
                .collect();
            (row, RowSeries { family, points })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_machine_is_its_host_quick_and_controls_whatever_its_boot_and_build() {
        let a = machine_key(r#"["h","m","boot1","abc",false,{}]"#).unwrap();
        let b = machine_key(r#"["h","m","boot2","def",false,{}]"#).unwrap();
        assert_eq!(a, b);
        let quick = machine_key(r#"["h","m","boot1","abc",true,{}]"#).unwrap();
        assert_ne!(a, quick);
        let wrapped = machine_key(r#"["h","m","boot1","abc",false,{"Seccomp":"2"}]"#).unwrap();
        assert_ne!(a, wrapped);
        assert_eq!(machine_key("not json"), None);
        assert_eq!(machine_key("[]"), None);
    }
}
