//! What compare, attribute and a new run ask of the stored runs: a row's
//! figures over runs and boots, the newest sets, the boot's quiet level.

use super::refs::{RunRef, SideRef};
use super::store::conditions_of;
use super::{History, HistoryError};
use crate::analysis::contrast::BootNoise;
use crate::analysis::rounds::RoundReading;
use crate::analysis::states::QuietLevel;
use crate::inventory::identity::Identity;
use crate::store::results::RunDocument;
use rusqlite::{OptionalExtension, params};
use std::collections::BTreeMap;

/// Runs a row's run-to-run noise is learned from, the newest of their
/// conditions: past some sixty the t quantile it is read with hardly moves
/// (2.00 against 1.96), and a history of thousands would be read whole by
/// every comparison.
pub const LEARNED_RUNS: i64 = 64;

/// Runs of each boot a boot's own variance is read over: what varies there
/// is the boots' means, which more runs of one boot sharpen little.
pub const RUNS_PER_BOOT: i64 = 16;

/// Runs a co-runner's waits are read over (`History::wait_figures`): each
/// run's whole document is parsed for them, so fewer than a row's.
pub const LEARNED_WAIT_RUNS: i64 = 16;

/// Each row's figures over stored runs in the order they ran, in stretches
/// of runs at one quiet level of the machine (see `History::row_figures`).
pub type RowFigures = BTreeMap<(String, String), Vec<Vec<f64>>>;

/// Each row's quiet rounds, keyed by probe and variant (see
/// `History::quiet_rounds`).
pub type QuietRounds = BTreeMap<(String, String), Vec<RoundReading>>;

/// Stored runs whose quiet rounds give each row its usual gap
/// ([`History::quiet_rounds`]): a few, of the conditions now.
pub const USUAL_GAP_RUNS: i64 = 5;

/// A stored run set: its first run's id, its runs, the command line it ran
/// under and when it started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSet {
    pub set: i64,
    pub ids: Vec<i64>,
    pub cmdline: String,
    /// The process controls its runs inherited (a seccomp filter, SSBD).
    pub controls: BTreeMap<String, String>,
    pub started_at: String,
}

impl StoredSet {
    /// What sets it apart, in a line: the command line's mitigation words
    /// and the process controls on.
    pub fn conditions(&self) -> String {
        let words = crate::inventory::mitigation_words(&self.cmdline);
        format!(
            "boot with {}; process controls: {}",
            if words.is_empty() {
                "no mitigation words".to_string()
            } else {
                words.join(" ")
            },
            crate::mitigations::process::described(&self.controls)
        )
    }

    /// The set as a side of a comparison names it: its runs' ids.
    pub fn side(&self) -> SideRef {
        SideRef::Runs(self.ids.iter().map(|&id| RunRef::Id(id)).collect())
    }
}

/// Each row's figures per boot (see `History::boot_figures`).
pub type BootFigures = BTreeMap<(String, String), Vec<Vec<f64>>>;

/// A row's figure in one stored run: raw ticks, and (figure at the run's
/// reference speed, speed coefficient, that speed) where it had them.
pub(super) type StoredFigure = (f64, Option<(f64, f64, f64)>);

/// A stored figure from four columns of a query row from `first` on: the
/// raw ticks, the figure at the run's reference speed, the coefficient and
/// that speed (the last three all there, or the figure is raw only).
pub(super) fn stored_figure(r: &rusqlite::Row, first: usize) -> rusqlite::Result<StoredFigure> {
    let at_speed = match (
        r.get::<_, Option<f64>>(first + 1)?,
        r.get::<_, Option<f64>>(first + 2)?,
        r.get::<_, Option<f64>>(first + 3)?,
    ) {
        (Some(ticks), Some(coefficient), Some(speed)) => Some((ticks, coefficient, speed)),
        _ => None,
    };
    Ok((r.get::<_, f64>(first)?, at_speed))
}

/// A row's stored figures (raw ticks, and where the run had one its figure
/// at its reference speed, the coefficient and that speed) as one series:
/// at the runs' common reference speed (`speed::common`, as compare reads
/// its sides), where every run has one; else the raw figures.
pub(super) fn at_one_speed(stored: &[StoredFigure]) -> Vec<f64> {
    let at_speed: Option<Vec<(f64, f64, f64)>> = stored.iter().map(|(_, s)| *s).collect();
    match at_speed {
        Some(figures) if !figures.is_empty() => {
            let speeds: Vec<f64> = figures.iter().map(|(_, _, r)| *r).collect();
            let Some(at) = crate::analysis::speed::common(&speeds) else {
                return stored.iter().map(|(ticks, _)| *ticks).collect();
            };
            figures
                .iter()
                .map(|&(ticks, coefficient, run)| {
                    crate::analysis::speed::at_reference(ticks, run, at, coefficient)
                })
                .collect()
        }
        _ => stored.iter().map(|(ticks, _)| *ticks).collect(),
    }
}

/// Where a stored run's figures stand: the build that measured them and
/// the machine's quiet level then, where it was stored. Runs of one build
/// at one level make a stretch of a row's series; a new build starts one
/// of its own, as a level shift does, so that what a change to the code
/// moved is not read as the row's noise.
#[derive(Debug, Clone, PartialEq)]
struct StoodAt {
    build: String,
    level: Option<QuietLevel>,
}

/// A run's [`StoodAt`] from three columns from `first` on: its build (the
/// commit in its conditions), quiet canary and band.
fn stood_at(r: &rusqlite::Row, first: usize) -> rusqlite::Result<StoodAt> {
    let level = r
        .get::<_, Option<f64>>(first + 1)?
        .zip(r.get::<_, Option<f64>>(first + 2)?)
        .map(|(canary, band)| QuietLevel { canary, band });
    Ok(StoodAt {
        build: r.get::<_, Option<String>>(first)?.unwrap_or_default(),
        level,
    })
}

/// Which builds' runs of the conditions a query reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builds {
    /// The build the conditions name.
    This,
    /// Any build, each build's runs a stretch of their own: so that the
    /// first runs of a new build read how rows moved between the runs
    /// before it.
    Any,
}

impl Builds {
    /// The query's test of a run's conditions against those `?1` names:
    /// for any build, both less the commit (`store::conditions`).
    fn condition(self) -> String {
        let commit = super::store::COMMIT_IN_CONDITIONS;
        match self {
            Builds::This => "conditions = ?1".to_string(),
            Builds::Any => {
                format!("json_remove(conditions, '{commit}') = json_remove(?1, '{commit}')")
            }
        }
    }
}

/// The build a run's conditions name, as a query column.
fn build_column() -> String {
    format!(
        "json_extract(r.conditions, '{}')",
        super::store::COMMIT_IN_CONDITIONS
    )
}

/// Each key's values in the order read, beside where the runs they came
/// from stood.
type ByKey<T> = BTreeMap<(String, String), (Vec<T>, Vec<StoodAt>)>;

fn by_key<T>(rows: impl IntoIterator<Item = ((String, String), T, StoodAt)>) -> ByKey<T> {
    let mut grouped: ByKey<T> = BTreeMap::new();
    for (key, value, stood) in rows {
        let (values, stood_at) = grouped.entry(key).or_default();
        values.push(value);
        stood_at.push(stood);
    }
    grouped
}

/// A row's series in the order its runs ran, parted by build and by the
/// machine's quiet level: a run joins the runs of its build at a level
/// that holds its own (a trace event turned on and off again puts the
/// runs after it back beside those before), else starts a stretch of its
/// own; a run whose level is not stored joins the one before it where
/// that is of its build.
fn in_stretches(figures: Vec<f64>, stood: &[StoodAt]) -> Vec<Vec<f64>> {
    let mut stretches: Vec<(&StoodAt, Vec<f64>)> = Vec::new();
    let mut last: Option<usize> = None;
    for (figure, run) in figures.into_iter().zip(stood) {
        let of_build = |at: &StoodAt| at.build == run.build;
        let at = match &run.level {
            Some(level) => stretches
                .iter()
                .position(|(at, _)| of_build(at) && at.level.is_some_and(|at| at.holds(level))),
            None => last.filter(|&i| of_build(stretches[i].0)),
        };
        let index = at.unwrap_or_else(|| {
            stretches.push((run, Vec::new()));
            stretches.len() - 1
        });
        stretches[index].1.push(figure);
        last = Some(index);
    }
    stretches.into_iter().map(|(_, figures)| figures).collect()
}

impl History {
    /// The quiet level this boot's recent runs read on CPU `cpu` under the
    /// same process controls as `like` (a seccomp filter or speculation
    /// control the run inherited makes the canary, a raw getpid, dearer;
    /// another CPU may sit at another level): that of the run with the
    /// lowest quiet canary among the five newest that reached a quiet
    /// level of their own, with the band it measured (documents before the
    /// band read with the fixed one they used), from the runs' columns
    /// (`quiet_level_columns`). The newest, so that a level that drifts or
    /// moves for good is followed rather than held against the lowest
    /// ever. What a run that never reaches the quiet level is held
    /// against; None where the history holds no such run.
    pub fn quiet_level_like(
        &self,
        like: &Identity,
        cpu: usize,
    ) -> Result<Option<QuietLevel>, HistoryError> {
        let controls = serde_json::to_string(&like.process_controls).unwrap_or_default();
        self.conn
            .query_row(
                "SELECT quiet_canary, quiet_band FROM (
                     SELECT quiet_canary, quiet_band FROM runs
                     WHERE quiet_key = json_array(?1, json(?2)) AND quiet_canary > 0
                       AND json_extract(document, '$.settings.cpu') = ?3
                     ORDER BY id DESC LIMIT 5)
                 ORDER BY quiet_canary LIMIT 1",
                params![like.boot_id, controls, cpu as i64],
                |r| {
                    Ok(QuietLevel {
                        canary: r.get(0)?,
                        band: r.get(1)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.sqlite(e))
    }

    /// The newest run of boot `boot_id` that measured every one of `rows`
    /// ("probe", "variant"): the per-record table answers which runs have
    /// them, so no stored document is read whole to find out.
    pub fn newest_measuring(
        &self,
        boot_id: &str,
        rows: &[(&str, &str)],
    ) -> Result<Option<i64>, HistoryError> {
        let wanted: Vec<String> = rows.iter().map(|(p, v)| format!("{p} {v}")).collect();
        let wanted = serde_json::Value::from(wanted).to_string();
        self.conn
            .query_row(
                "SELECT r.id FROM runs r
                 WHERE json_extract(r.quiet_key, '$[0]') = ?1
                   AND (SELECT COUNT(DISTINCT c.probe || ' ' || c.variant) FROM records c
                        WHERE c.run_id = r.id AND c.ticks IS NOT NULL
                          AND c.probe || ' ' || c.variant IN (SELECT value FROM json_each(?2)))
                       = json_array_length(?2)
                 ORDER BY r.id DESC LIMIT 1",
                params![boot_id, wanted],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sqlite(e))
    }

    /// The newest `limit` runs of boot `boot_id` that measured the row
    /// (`probe`, `variant`), newest first.
    pub fn newest_of_boot(
        &self,
        boot_id: &str,
        (probe, variant): (&str, &str),
        limit: usize,
    ) -> Result<Vec<i64>, HistoryError> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT r.id FROM runs r
                 WHERE json_extract(r.quiet_key, '$[0]') = ?1
                   AND EXISTS (SELECT 1 FROM records c WHERE c.run_id = r.id
                               AND c.probe = ?2 AND c.variant = ?3 AND c.ticks IS NOT NULL)
                 ORDER BY r.id DESC LIMIT ?4",
            )
            .map_err(|e| self.sqlite(e))?;
        let ids = statement
            .query_map(params![boot_id, probe, variant, limit as i64], |r| r.get(0))
            .map_err(|e| self.sqlite(e))?;
        ids.collect::<Result<Vec<i64>, _>>()
            .map_err(|e| self.sqlite(e))
    }

    /// The newest run of boot `boot_id` that read audit enabled; None where
    /// none did.
    pub fn audit_enabled_in_boot(&self, boot_id: &str) -> Result<Option<i64>, HistoryError> {
        self.conn
            .query_row(
                "SELECT id FROM runs
                 WHERE json_extract(quiet_key, '$[0]') = ?1
                   AND json_extract(document, '$.inventory.hooks.audit.read.enabled') >= 1
                 ORDER BY id DESC LIMIT 1",
                params![boot_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sqlite(e))
    }

    /// Each row's (probe, variant) headline figures over the newest
    /// [`LEARNED_RUNS`] stored runs of `conditions` by `builds`, leaving
    /// out runs that started at one of `except` (the runs being compared):
    /// what `compare` learns a row's noise from, and what the floors for
    /// the next run are read from. Where every such run of a row has a figure
    /// at its reference speed, the row's figures are those, carried to the
    /// runs' common reference speed, as a comparison at equal speed reads
    /// them. The series is parted by build and by the runs' quiet levels
    /// (`QuietLevel::holds`): the step across a level shift is the
    /// shift's, and the step to a new build the code's, not the row's
    /// noise.
    pub fn row_figures(
        &self,
        conditions: &str,
        builds: Builds,
        except: &[&str],
    ) -> Result<RowFigures, HistoryError> {
        let except = serde_json::Value::from(except.to_vec()).to_string();
        let mut query = self
            .conn
            .prepare(&format!(
                "SELECT c.probe, c.variant, c.ticks, c.speed_normalized_ticks,
                            c.speed_coefficient, r.reference_ticks, {},
                            r.quiet_canary, r.quiet_band
                     FROM records c JOIN runs r ON r.id = c.run_id
                     WHERE c.ticks > 0 AND c.slow_state = 0
                       AND r.id IN (SELECT id FROM runs WHERE {}
                                      AND started_at NOT IN (SELECT value FROM json_each(?2))
                                    ORDER BY id DESC LIMIT ?3)
                     ORDER BY r.started_at, r.id",
                build_column(),
                builds.condition()
            ))
            .map_err(|e| self.sqlite(e))?;
        let rows = query
            .query_map(params![conditions, except, LEARNED_RUNS], |r| {
                Ok((
                    (r.get::<_, String>(0)?, r.get::<_, String>(1)?),
                    stored_figure(r, 2)?,
                    stood_at(r, 6)?,
                ))
            })
            .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
            .map_err(|e| self.sqlite(e))?;
        Ok(by_key(rows)
            .into_iter()
            .map(|(key, (stored, stood))| (key, in_stretches(at_one_speed(&stored), &stood)))
            .collect())
    }

    /// Each co-runner's p99 wait (a record's figure of that role) over the
    /// newest [`LEARNED_WAIT_RUNS`] stored runs of `conditions` by
    /// `builds`, keyed by probe and "variant: figure", in the order they
    /// ran and parted by build and quiet level as [`History::row_figures`]
    /// parts a row's costs: how far the waits move from one run to the
    /// next, which a run's few rounds of them cannot show. Read from the
    /// stored documents, since the records table keeps the costs only.
    pub fn wait_figures(
        &self,
        conditions: &str,
        builds: Builds,
    ) -> Result<RowFigures, HistoryError> {
        let mut query = self
            .conn
            .prepare(
                &format!(
                    "SELECT json_extract(rec.value, '$.id'),
                            json_extract(rec.value, '$.variant') || ': ' || json_extract(f.value, '$.name'),
                            json_extract(f.value, '$.value'), {}, r.quiet_canary, r.quiet_band
                     FROM runs r, json_each(r.document, '$.results') rec,
                          json_each(rec.value, '$.figures') f
                     WHERE json_extract(f.value, '$.role') = 'co-runner-wait-p99'
                       AND r.id IN (SELECT id FROM runs WHERE {}
                                    ORDER BY id DESC LIMIT ?2)
                     ORDER BY r.started_at, r.id",
                    build_column(),
                    builds.condition()
                ),
            )
            .map_err(|e| self.sqlite(e))?;
        let rows = query
            .query_map(params![conditions, LEARNED_WAIT_RUNS], |r| {
                Ok((
                    (r.get::<_, String>(0)?, r.get::<_, String>(1)?),
                    r.get::<_, Option<f64>>(2)?,
                    stood_at(r, 3)?,
                ))
            })
            .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
            .map_err(|e| self.sqlite(e))?;
        let valued = rows
            .into_iter()
            .filter_map(|(key, value, stood)| Some((key, value?, stood)));
        Ok(by_key(valued)
            .into_iter()
            .map(|(key, (values, stood))| (key, in_stretches(values, &stood)))
            .collect())
    }

    /// Each row's quiet rounds (median, fastest sample, fork), over the newest
    /// [`USUAL_GAP_RUNS`] stored runs of `conditions` of any build, keyed
    /// by probe and variant: how far above its fastest sample a clean
    /// round of the row stands (`analysis::rounds::UsualGap`). Any build's,
    /// since without them a new build's first runs judged their rounds
    /// against a spread of gaps their own slowed rounds had widened
    /// (docs/why-the-code-is-so.md, "A new build reads the builds before
    /// it"). Read from the stored documents, since the records table keeps
    /// no rounds.
    pub fn quiet_rounds(&self, conditions: &str) -> Result<QuietRounds, HistoryError> {
        let mut query = self
            .conn
            .prepare(&format!(
                "SELECT json_extract(rec.value, '$.id'), json_extract(rec.value, '$.variant'),
                        json_extract(rnd.value, '$.ticks'), json_extract(rnd.value, '$.min_ticks'),
                        json_extract(rnd.value, '$.fork')
                 FROM runs r, json_each(r.document, '$.results') rec,
                      json_each(rec.value, '$.rounds.each') rnd
                 WHERE json_extract(rnd.value, '$.state') = 'quiet'
                   AND r.id IN (SELECT id FROM runs WHERE {}
                                ORDER BY id DESC LIMIT ?2)",
                Builds::Any.condition()
            ))
            .map_err(|e| self.sqlite(e))?;
        let rows = query
            .query_map(params![conditions, USUAL_GAP_RUNS], |r| {
                Ok((
                    (r.get::<_, String>(0)?, r.get::<_, String>(1)?),
                    r.get::<_, Option<f64>>(2)?,
                    r.get::<_, Option<f64>>(3)?,
                    r.get::<_, Option<i64>>(4)?,
                ))
            })
            .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
            .map_err(|e| self.sqlite(e))?;
        let mut by_row = QuietRounds::new();
        for (key, median, fastest, fork) in rows {
            if let (Some(median), Some(fastest)) = (median, fastest) {
                by_row.entry(key).or_default().push(RoundReading {
                    median,
                    fastest,
                    canaries_quiet: true,
                    fork: fork
                        .and_then(|f| usize::try_from(f).ok())
                        .unwrap_or_default(),
                });
            }
        }
        Ok(by_row)
    }

    /// Each row's figures over the stored runs (the newest
    /// [`RUNS_PER_BOOT`] of each boot) of `like`'s host, build and
    /// process controls under the same kernel command line, grouped by the
    /// boot they ran in (at one reference speed where every run has one, as
    /// `row_figures` reads them): what `attribute` reads a boot's own
    /// variance from. Rows of fewer than two boots are left out.
    pub fn boot_figures(&self, like: &RunDocument) -> Result<BootFigures, HistoryError> {
        let wanted: Vec<serde_json::Value> =
            serde_json::from_str(&conditions_of(like)).unwrap_or_default();
        let same = |conditions: &str| -> bool {
            let Ok(a) = serde_json::from_str::<Vec<serde_json::Value>>(conditions) else {
                return false;
            };
            let b = &wanted;
            // Every condition but the boot (the third).
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .enumerate()
                    .all(|(i, (x, y))| i == 2 || x == y)
        };
        let mut query = self
            .conn
            .prepare(
                "SELECT r.conditions, json_extract(r.conditions, '$[2]'), c.probe, c.variant,
                        c.ticks, c.speed_normalized_ticks, c.speed_coefficient, r.reference_ticks
                 FROM records c JOIN runs r ON r.id = c.run_id
                 WHERE c.ticks > 0 AND c.slow_state = 0
                   AND r.id IN (SELECT id FROM (
                       SELECT id, ROW_NUMBER() OVER (
                           PARTITION BY json_extract(conditions, '$[2]') ORDER BY id DESC) AS newest
                       FROM runs WHERE cmdline = ?1 AND conditions IS NOT NULL)
                     WHERE newest <= ?2)
                 ORDER BY r.started_at, r.id",
            )
            .map_err(|e| self.sqlite(e))?;
        let mut by_row: BTreeMap<(String, String), Vec<(String, StoredFigure)>> = BTreeMap::new();
        let rows = query
            .query_map(params![like.inventory.kernel.cmdline, RUNS_PER_BOOT], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                    (r.get::<_, String>(2)?, r.get::<_, String>(3)?),
                    stored_figure(r, 4)?,
                ))
            })
            .map_err(|e| self.sqlite(e))?;
        for row in rows {
            let (conditions, boot, key, figure) = row.map_err(|e| self.sqlite(e))?;
            if same(&conditions) {
                by_row.entry(key).or_default().push((boot, figure));
            }
        }
        Ok(by_row
            .into_iter()
            .filter_map(|(key, stored)| {
                let figures = at_one_speed(&stored.iter().map(|(_, f)| *f).collect::<Vec<_>>());
                let mut boots: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
                for ((boot, _), figure) in stored.iter().zip(figures) {
                    boots.entry(boot).or_default().push(figure);
                }
                (boots.len() >= 2).then(|| (key, boots.into_values().collect()))
            })
            .collect())
    }

    /// How far rows move between boots, read from [`History::boot_figures`]
    /// of `present`; none known where the history cannot say.
    pub fn boot_noise(&self, present: &RunDocument) -> BootNoise {
        self.boot_figures(present)
            .map(|figures| BootNoise::of(&figures))
            .unwrap_or_default()
    }

    /// The newest run set of each kernel command line and set of process
    /// controls among the stored runs of `like`'s host and build: what
    /// `mitbench attribute` takes when no set is named (one set per boot of
    /// the plan, and per wrapper). A run stored alone is a set of one.
    /// Oldest first.
    pub fn latest_sets(&self, like: &RunDocument) -> Result<Vec<StoredSet>, HistoryError> {
        self.latest_sets_of(&conditions_of(like))
    }

    /// [`History::latest_sets`] of a run of `conditions` (see
    /// `history::conditions`), before the run has a document.
    pub fn latest_sets_of(&self, conditions: &str) -> Result<Vec<StoredSet>, HistoryError> {
        let wanted: Vec<serde_json::Value> = serde_json::from_str(conditions).unwrap_or_default();
        // The host (name and installation), the build and quick or not.
        let same_host_and_build = |conditions: &[serde_json::Value]| {
            conditions.len() == wanted.len()
                && [0, 1, 3, 4].iter().all(|&i| conditions[i] == wanted[i])
        };
        let mut query = self
            .conn
            .prepare(
                "SELECT id, COALESCE(set_id, id), started_at, conditions, cmdline
                 FROM runs WHERE conditions IS NOT NULL ORDER BY id",
            )
            .map_err(|e| self.sqlite(e))?;
        let rows = query
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, Option<String>>(4)?.unwrap_or_default(),
                ))
            })
            .map_err(|e| self.sqlite(e))?;
        // (command line, process controls) -> the newest set's runs.
        let mut newest: BTreeMap<(String, String), StoredSet> = BTreeMap::new();
        for row in rows {
            let (id, set, started_at, conditions, cmdline) = row.map_err(|e| self.sqlite(e))?;
            let Ok(conditions) = serde_json::from_str::<Vec<serde_json::Value>>(&conditions) else {
                continue;
            };
            if !same_host_and_build(&conditions) {
                continue;
            }
            let key = (cmdline.clone(), conditions[5].to_string());
            let entry = newest.entry(key).or_insert_with(|| StoredSet {
                set,
                ids: Vec::new(),
                cmdline,
                controls: serde_json::from_value(conditions[5].clone()).unwrap_or_default(),
                started_at: started_at.clone(),
            });
            if entry.set != set {
                entry.set = set;
                entry.ids.clear();
                entry.started_at = started_at;
            }
            entry.ids.push(id);
        }
        let mut sets: Vec<StoredSet> = newest.into_values().collect();
        sets.sort_by_key(|s| s.set);
        Ok(sets)
    }
}
