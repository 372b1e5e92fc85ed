//! Every run, kept in an embedded SQLite database: the whole run document,
//! and a row per record for queries. Storing is never in the way of a run:
//! the caller turns any error here into a one-line warning.

use crate::analysis::states::QuietLevel;
use crate::inventory::identity::Identity;
use crate::results::RunDocument;
use crate::results::load::{self, LoadError};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A run's quiet level, as columns read from its document: the boot and
/// process controls it is comparable within (`quiet_key`), and its quiet
/// canary and band where the run reached a quiet level of its own. Set
/// once per run (at store, and for older runs when the database is brought
/// forward), so a run's look-up reads columns, not every document.
macro_rules! quiet_level_columns {
    () => {
        "quiet_key = json_array(
             json_extract(document, '$.inventory.identity.boot_id'),
             json(COALESCE(json_extract(document, '$.inventory.identity.process_controls'), '{}'))),
         quiet_canary = CASE WHEN json_extract(document, '$.machine_states.above_known_pct') IS NULL
                             THEN json_extract(document, '$.machine_states.quiet_canary') END,
         quiet_band = COALESCE(json_extract(document, '$.machine_states.quiet_band'), 0.12)"
    };
}

/// Each step takes the database from version i to i + 1 (`PRAGMA
/// user_version`); an older database is brought forward, never dropped.
const MIGRATIONS: &[&str] = &[
    "
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        started_at TEXT NOT NULL,
        host TEXT NOT NULL,
        kernel TEXT NOT NULL,
        mitigations TEXT NOT NULL,
        probes TEXT NOT NULL,
        rows INTEGER NOT NULL,
        schema INTEGER NOT NULL,
        document TEXT NOT NULL
    );
    CREATE TABLE records (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        probe TEXT NOT NULL,
        family TEXT NOT NULL,
        variant TEXT NOT NULL,
        role TEXT NOT NULL,
        ticks REAL,
        ns REAL,
        ci95_lo_ticks REAL,
        ci95_hi_ticks REAL,
        unsupported_kind TEXT
    );
    CREATE INDEX records_by_row ON records (probe, variant);
",
    "
    -- What a run's figures are comparable within (see `conditions_of`), and
    -- the run set a run belongs to (`mitbench run --runs N`): the id of the
    -- set's first run. Both empty for runs stored before.
    ALTER TABLE runs ADD COLUMN conditions TEXT;
    ALTER TABLE runs ADD COLUMN set_id INTEGER;
    CREATE INDEX runs_by_conditions ON runs (conditions);
    CREATE INDEX records_by_run ON records (run_id);
",
    "
    -- The run's reference speed (ticks per reference step) and each row's
    -- figure at it with its speed coefficient: what the history learns a
    -- row's noise from at equal reference speed. Empty for runs before.
    ALTER TABLE runs ADD COLUMN reference_ticks REAL;
    ALTER TABLE records ADD COLUMN speed_coefficient REAL;
    ALTER TABLE records ADD COLUMN speed_normalized_ticks REAL;
",
    concat!(
        "
    -- Each run's quiet level (`quiet_level_columns`), which a new run on
    -- the same boot is held against; the fixed 12% band for runs before.
    ALTER TABLE runs ADD COLUMN quiet_key TEXT;
    ALTER TABLE runs ADD COLUMN quiet_canary REAL;
    ALTER TABLE runs ADD COLUMN quiet_band REAL;
    UPDATE runs SET ",
        quiet_level_columns!(),
        ";
    CREATE INDEX runs_by_quiet_key ON runs (quiet_key);
"
    ),
    "
    -- Each run's kernel command line, which attribute and compare group
    -- boots by, and whether a record's figure is the slow state's (no
    -- quiet round), which a row's run-to-run noise leaves out: both read
    -- without parsing a document. Each document is parsed once here.
    -- The look-ups read these columns through indexes that hold them: the
    -- columns added after `document` sit behind its overflow pages, and a
    -- query that read them from the table walked each run's document.
    ALTER TABLE runs ADD COLUMN cmdline TEXT;
    UPDATE runs SET cmdline = json_extract(document, '$.inventory.kernel.cmdline');
    DROP INDEX runs_by_conditions;
    CREATE INDEX runs_by_conditions ON runs (conditions, id, started_at, reference_ticks);
    CREATE INDEX runs_by_cmdline ON runs (cmdline, id, conditions, started_at, reference_ticks);
    CREATE INDEX runs_in_sets ON runs (id, set_id, started_at, conditions, cmdline);
    ALTER TABLE records ADD COLUMN slow_state INTEGER NOT NULL DEFAULT 0;
    UPDATE records SET slow_state = 1 WHERE (run_id, probe, variant) IN (
        SELECT r.id, json_extract(j.value, '$.id'), json_extract(j.value, '$.variant')
        FROM runs r, json_each(r.document, '$.results') j
        WHERE json_extract(j.value, '$.cost.estimator') = 'no-quiet-round');
",
    "
    -- The kernel price list's floors scored against boots (`mitbench
    -- attribute`): per CPU model and switch, one row per pair of boots, so
    -- scoring the same sets again replaces their row.
    CREATE TABLE floor_scores (
        cpu_model TEXT NOT NULL,
        switch TEXT NOT NULL,
        present_boot TEXT NOT NULL,
        off_boot TEXT NOT NULL,
        floor_ns REAL NOT NULL,
        part_ns REAL NOT NULL,
        honoured INTEGER NOT NULL,
        scored_at TEXT NOT NULL,
        PRIMARY KEY (cpu_model, switch, present_boot, off_boot)
    );
",
];

/// Runs a row's run-to-run noise is learned from, the newest of their
/// conditions: past some sixty the t quantile it is read with hardly moves
/// (2.00 against 1.96), and a history of thousands would be read whole by
/// every comparison.
pub const LEARNED_RUNS: i64 = 64;

/// Runs of each boot a boot's own variance is read over: what varies there
/// is the boots' means, which more runs of one boot sharpen little.
pub const RUNS_PER_BOOT: i64 = 16;

/// Each row's (probe, variant) figures over earlier runs, in the order they
/// ran.
pub type RowFigures = BTreeMap<(String, String), Vec<f64>>;

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
        let controls: Vec<String> = crate::mitigations::process::on(&self.controls)
            .iter()
            .map(|(c, value)| format!("{}: {value}", c.status_line))
            .collect();
        format!(
            "boot with {}; process controls: {}",
            if words.is_empty() {
                "no mitigation words".to_string()
            } else {
                words.join(" ")
            },
            if controls.is_empty() {
                "none".to_string()
            } else {
                controls.join(", ")
            }
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
type StoredFigure = (f64, Option<(f64, f64, f64)>);

/// A stored figure from four columns of a query row from `first` on: the
/// raw ticks, the figure at the run's reference speed, the coefficient and
/// that speed (the last three all there, or the figure is raw only).
fn stored_figure(r: &rusqlite::Row, first: usize) -> rusqlite::Result<StoredFigure> {
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
fn at_one_speed(stored: &[StoredFigure]) -> Vec<f64> {
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

/// What a run's figures can be compared within without a change to explain
/// them: the host, the installation, the boot, the build, quick or not, and
/// the process controls inherited across exec (a seccomp filter, SSBD).
pub fn conditions_of(doc: &RunDocument) -> String {
    let id = &doc.inventory.identity;
    serde_json::json!([
        id.hostname,
        id.machine_id,
        id.boot_id,
        doc.build.git_commit,
        doc.settings.quick,
        id.process_controls,
    ])
    .to_string()
}

/// How long a run waits for another mitbench holding the database.
const BUSY_TIMEOUT: Duration = Duration::from_secs(3);

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("no place for the history: neither XDG_DATA_HOME nor HOME is set (use --history PATH)")]
    NoDataDir,
    #[error("cannot create {path}: {source}")]
    CreateDir {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Sqlite {
        path: String,
        source: rusqlite::Error,
    },
    #[error("{path} holds tables of something other than mitbench; left untouched")]
    Foreign { path: String },
    #[error(
        "{path} was written by a newer mitbench (database version {found}, this one knows {known}); left untouched"
    )]
    Newer {
        path: String,
        found: i64,
        known: usize,
    },
    #[error("no run {0} in the history")]
    NoSuchRun(String),
    #[error(transparent)]
    Load(#[from] LoadError),
}

/// One stored run as `mitbench history` lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StoredRun {
    pub id: i64,
    pub started_at: String,
    pub host: String,
    pub kernel: String,
    /// The kernel command line's mitigation parameters.
    pub mitigations: String,
    pub probes: String,
    pub rows: i64,
}

pub struct History {
    conn: Connection,
    path: PathBuf,
}

/// `$XDG_DATA_HOME/mitbench/history.sqlite`, else under
/// `~/.local/share`.
pub fn default_path() -> Result<PathBuf, HistoryError> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|home| PathBuf::from(home).join(".local/share"))
        })
        .ok_or(HistoryError::NoDataDir)?;
    Ok(data.join("mitbench").join("history.sqlite"))
}

impl History {
    /// Opens the history at `path`, creating it (and its directory) for
    /// `create`, and brings its schema up to date.
    pub fn open(path: &Path, create: bool) -> Result<History, HistoryError> {
        if create && let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| HistoryError::CreateDir {
                path: dir.display().to_string(),
                source,
            })?;
        }
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let sqlite = |source| HistoryError::Sqlite {
            path: path.display().to_string(),
            source,
        };
        let conn = Connection::open_with_flags(path, flags).map_err(sqlite)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sqlite)?;
        let mut history = History {
            conn,
            path: path.to_path_buf(),
        };
        history.migrate()?;
        Ok(history)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn sqlite(&self, source: rusqlite::Error) -> HistoryError {
        HistoryError::Sqlite {
            path: self.path.display().to_string(),
            source,
        }
    }

    fn migrate(&mut self) -> Result<(), HistoryError> {
        let version: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| self.sqlite(e))?;
        if version > MIGRATIONS.len() as i64 {
            return Err(HistoryError::Newer {
                path: self.path.display().to_string(),
                found: version,
                known: MIGRATIONS.len(),
            });
        }
        if version == 0 {
            let tables: i64 = self
                .conn
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
                    [],
                    |r| r.get(0),
                )
                .map_err(|e| self.sqlite(e))?;
            if tables > 0 {
                return Err(HistoryError::Foreign {
                    path: self.path.display().to_string(),
                });
            }
        }
        for (from, step) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            let tx = self.conn.transaction().map_err(|e| HistoryError::Sqlite {
                path: self.path.display().to_string(),
                source: e,
            })?;
            tx.execute_batch(step)
                .and_then(|()| tx.pragma_update(None, "user_version", from as i64 + 1))
                .and_then(|()| tx.commit())
                .map_err(|e| HistoryError::Sqlite {
                    path: self.path.display().to_string(),
                    source: e,
                })?;
        }
        Ok(())
    }

    /// Keeps one floor's score: on `cpu_model`, the part of getpid measured
    /// between `boots` (present, without `switch`) against the floor, and
    /// whether it honoured it. Scoring the same boots again replaces it.
    pub fn keep_floor_score(
        &mut self,
        cpu_model: &str,
        switch: &str,
        boots: (&str, &str),
        (floor_ns, part_ns, honoured): (f64, f64, bool),
    ) -> Result<(), HistoryError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO floor_scores (cpu_model, switch, present_boot, off_boot,
                 floor_ns, part_ns, honoured, scored_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, datetime('now'))",
                params![
                    cpu_model, switch, boots.0, boots.1, floor_ns, part_ns, honoured
                ],
            )
            .map(drop)
            .map_err(|e| self.sqlite(e))
    }

    /// The floors' record on `cpu_model`: per switch, the pairs of boots
    /// scored and how many honoured the floor.
    pub fn floor_record(&self, cpu_model: &str) -> Result<Vec<(String, u32, u32)>, HistoryError> {
        let mut query = self
            .conn
            .prepare(
                "SELECT switch, count(*), sum(honoured) FROM floor_scores
                 WHERE cpu_model = ?1 GROUP BY switch ORDER BY switch",
            )
            .map_err(|e| self.sqlite(e))?;
        let rows: Vec<(String, u32, u32)> = query
            .query_map(params![cpu_model], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .and_then(Iterator::collect)
            .map_err(|e| self.sqlite(e))?;
        Ok(rows)
    }

    /// Stores a run; returns its id.
    pub fn store(&mut self, doc: &RunDocument) -> Result<i64, HistoryError> {
        self.store_in_set(doc, None)
    }

    /// Stores a run as part of the set `set_id` (its first run's id; None:
    /// the run starts a set of its own, or stands alone).
    pub fn store_in_set(
        &mut self,
        doc: &RunDocument,
        set_id: Option<i64>,
    ) -> Result<i64, HistoryError> {
        let document = serde_json::to_string(doc).map_err(|e| LoadError::Malformed {
            what: "this run".into(),
            detail: e.to_string(),
        })?;
        let mut probes: Vec<&str> = doc.results.iter().map(|r| r.id.as_str()).collect();
        probes.dedup();
        let path = self.path.display().to_string();
        let sqlite = |source| HistoryError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sqlite)?;
        tx.execute(
            "INSERT INTO runs (started_at, host, kernel, mitigations, probes, rows, schema, document,
                               conditions, set_id, reference_ticks, cmdline)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                doc.started_at,
                doc.inventory.identity.hostname,
                doc.inventory.kernel.release,
                crate::inventory::mitigation_words(&doc.inventory.kernel.cmdline).join(" "),
                probes.join(" "),
                doc.results.len() as i64,
                doc.schema,
                document,
                conditions_of(doc),
                set_id,
                doc.reference_ticks(),
                doc.inventory.kernel.cmdline,
            ],
        )
        .map_err(sqlite)?;
        let id = tx.last_insert_rowid();
        tx.execute(
            concat!("UPDATE runs SET ", quiet_level_columns!(), " WHERE id = ?1"),
            params![id],
        )
        .map_err(sqlite)?;
        {
            let mut insert = tx
                .prepare(
                    "INSERT INTO records (run_id, probe, family, variant, role, ticks, ns,
                     ci95_lo_ticks, ci95_hi_ticks, unsupported_kind, speed_coefficient,
                     speed_normalized_ticks, slow_state)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                )
                .map_err(sqlite)?;
            for r in &doc.results {
                let cost = r.cost.as_ref();
                let ci = cost.and_then(|c| c.interval_ticks());
                insert
                    .execute(params![
                        id,
                        r.id,
                        r.family,
                        r.variant,
                        serde_json::to_value(r.role)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string)),
                        cost.map(|c| c.ticks),
                        cost.map(|c| c.ns),
                        ci.map(|c| c[0]),
                        ci.map(|c| c[1]),
                        r.unsupported.as_ref().map(|u| u.kind_name()),
                        cost.and_then(|c| c.speed_coefficient),
                        cost.and_then(|c| c.speed_normalized_ticks),
                        r.slow_state(),
                    ])
                    .map_err(sqlite)?;
            }
        }
        tx.commit().map_err(sqlite)?;
        Ok(id)
    }

    /// Every run, oldest first.
    pub fn list(&self) -> Result<Vec<StoredRun>, HistoryError> {
        let mut query = self
            .conn
            .prepare(
                "SELECT id, started_at, host, kernel, mitigations, probes, rows
                 FROM runs ORDER BY id",
            )
            .map_err(|e| self.sqlite(e))?;
        let rows = query
            .query_map([], |r| {
                Ok(StoredRun {
                    id: r.get(0)?,
                    started_at: r.get(1)?,
                    host: r.get(2)?,
                    kernel: r.get(3)?,
                    mitigations: r.get(4)?,
                    probes: r.get(5)?,
                    rows: r.get(6)?,
                })
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.sqlite(e))?;
        Ok(rows)
    }

    /// The id of the run `back` runs before the newest (0: the newest).
    pub fn nth_last(&self, back: u64) -> Result<i64, HistoryError> {
        self.conn
            .query_row(
                "SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?1",
                params![back as i64],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sqlite(e))?
            .ok_or_else(|| {
                HistoryError::NoSuchRun(if back == 0 {
                    "last (the history is empty)".to_string()
                } else {
                    format!("last~{back}")
                })
            })
    }

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

    /// Each row's (probe, variant) headline figures over the newest
    /// [`LEARNED_RUNS`] stored runs of `conditions`, leaving out runs that
    /// started at one of `except` (the runs being compared): what `compare`
    /// learns a row's noise from. Where every such run of a row has a figure
    /// at its reference speed, the row's figures are those, carried to the
    /// runs' common reference speed, as a comparison at equal speed reads
    /// them.
    pub fn row_figures(
        &self,
        conditions: &str,
        except: &[&str],
    ) -> Result<RowFigures, HistoryError> {
        let except = serde_json::Value::from(except.to_vec()).to_string();
        let mut query = self
            .conn
            .prepare(
                "SELECT c.probe, c.variant, c.ticks, c.speed_normalized_ticks,
                        c.speed_coefficient, r.reference_ticks
                 FROM records c JOIN runs r ON r.id = c.run_id
                 WHERE c.ticks > 0 AND c.slow_state = 0
                   AND r.id IN (SELECT id FROM runs WHERE conditions = ?1
                                  AND started_at NOT IN (SELECT value FROM json_each(?2))
                                ORDER BY id DESC LIMIT ?3)
                 ORDER BY r.started_at, r.id",
            )
            .map_err(|e| self.sqlite(e))?;
        let mut by_row: BTreeMap<(String, String), Vec<StoredFigure>> = BTreeMap::new();
        let rows = query
            .query_map(params![conditions, except, LEARNED_RUNS], |r| {
                Ok((
                    (r.get::<_, String>(0)?, r.get::<_, String>(1)?),
                    stored_figure(r, 2)?,
                ))
            })
            .map_err(|e| self.sqlite(e))?;
        for row in rows {
            let (key, figure) = row.map_err(|e| self.sqlite(e))?;
            by_row.entry(key).or_default().push(figure);
        }
        Ok(by_row
            .into_iter()
            .map(|(key, stored)| (key, at_one_speed(&stored)))
            .collect())
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

    /// The newest run set of each kernel command line and set of process
    /// controls among the stored runs of `like`'s host and build: what
    /// `mitbench attribute` takes when no set is named (one set per boot of
    /// the plan, and per wrapper). A run stored alone is a set of one.
    /// Oldest first.
    pub fn latest_sets(&self, like: &RunDocument) -> Result<Vec<StoredSet>, HistoryError> {
        let wanted: Vec<serde_json::Value> =
            serde_json::from_str(&conditions_of(like)).unwrap_or_default();
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

    /// The ids of the runs from `from` to `to` (either order), oldest first.
    pub fn ids_between(&self, from: i64, to: i64) -> Result<Vec<i64>, HistoryError> {
        let (lo, hi) = (from.min(to), from.max(to));
        let mut query = self
            .conn
            .prepare("SELECT id FROM runs WHERE id BETWEEN ?1 AND ?2 ORDER BY id")
            .map_err(|e| self.sqlite(e))?;
        let ids = query
            .query_map(params![lo, hi], |r| r.get(0))
            .and_then(|rows| rows.collect::<Result<Vec<i64>, _>>())
            .map_err(|e| self.sqlite(e))?;
        Ok(ids)
    }

    /// The id a name stands for: an id that exists, or `last~N`.
    pub fn id_of(&self, run: &RunRef) -> Result<i64, HistoryError> {
        match run {
            RunRef::Id(id) => self
                .conn
                .query_row("SELECT id FROM runs WHERE id = ?1", params![id], |r| {
                    r.get(0)
                })
                .optional()
                .map_err(|e| self.sqlite(e))?
                .ok_or_else(|| HistoryError::NoSuchRun(id.to_string())),
            RunRef::Last(back) => self.nth_last(*back),
            RunRef::File(path) => Err(HistoryError::NoSuchRun(format!(
                "{} (a file cannot bound a range of the history)",
                path.display()
            ))),
        }
    }

    fn load_text(&self, id: i64) -> Result<String, HistoryError> {
        self.conn
            .query_row(
                "SELECT document FROM runs WHERE id = ?1",
                params![id],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sqlite(e))?
            .ok_or_else(|| HistoryError::NoSuchRun(id.to_string()))
    }

    pub fn load(&self, id: i64) -> Result<RunDocument, HistoryError> {
        let text = self.load_text(id)?;
        Ok(load::document_from_str(&text, &format!("run {id}"))?)
    }
}

/// How a run is named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunRef {
    /// `last` (0) or `last~N`.
    Last(u64),
    Id(i64),
    File(PathBuf),
}

impl RunRef {
    pub fn parse(text: &str) -> Result<RunRef, String> {
        if text == "last" {
            return Ok(RunRef::Last(0));
        }
        if let Some(back) = text.strip_prefix("last~") {
            return back
                .parse()
                .map(RunRef::Last)
                .map_err(|_| format!("'{text}': after last~ comes a whole number of runs back"));
        }
        if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
            return text
                .parse()
                .map(RunRef::Id)
                .map_err(|_| format!("'{text}' is too large for a run id"));
        }
        if text.is_empty() {
            return Err("a run is named by an id, last, last~N or a JSON file".into());
        }
        Ok(RunRef::File(PathBuf::from(text)))
    }

    /// The run this names: read from the file, or from `history`.
    pub fn resolve(&self, history: Option<&History>) -> Result<RunDocument, HistoryError> {
        let history = || history.ok_or(HistoryError::NoSuchRun(self.to_string()));
        match self {
            RunRef::File(path) => Ok(load::document_from_file(path)?),
            RunRef::Id(id) => history()?.load(*id),
            RunRef::Last(back) => {
                let history = history()?;
                history.load(history.nth_last(*back)?)
            }
        }
    }
}

/// One side of a comparison as the command line names it: one run, a
/// range of the history (`last~9..last~5`, `12..15`), or several runs
/// separated by commas (`a.json,b.json,c.json`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SideRef {
    Runs(Vec<RunRef>),
    Range(RunRef, RunRef),
}

impl SideRef {
    pub fn parse(text: &str) -> Result<SideRef, String> {
        // A range is two history names; a path with ".." in it is a file.
        if let Some((from, to)) = text.split_once("..") {
            let (from, to) = (RunRef::parse(from), RunRef::parse(to));
            if let (Ok(from), Ok(to)) = (&from, &to)
                && !matches!(from, RunRef::File(_))
                && !matches!(to, RunRef::File(_))
            {
                return Ok(SideRef::Range(from.clone(), to.clone()));
            }
        }
        text.split(',')
            .map(RunRef::parse)
            .collect::<Result<Vec<_>, _>>()
            .map(SideRef::Runs)
    }

    /// Whether naming it needs the history (a name that is not a file).
    pub fn needs_history(&self) -> bool {
        match self {
            SideRef::Range(..) => true,
            SideRef::Runs(runs) => runs.iter().any(|r| !matches!(r, RunRef::File(_))),
        }
    }

    /// The runs it names, oldest first for a range.
    pub fn resolve(&self, history: Option<&History>) -> Result<Vec<RunDocument>, HistoryError> {
        match self {
            SideRef::Runs(runs) => runs.iter().map(|r| r.resolve(history)).collect(),
            SideRef::Range(from, to) => {
                let history = history.ok_or_else(|| HistoryError::NoSuchRun(self.to_string()))?;
                let ids = history.ids_between(history.id_of(from)?, history.id_of(to)?)?;
                ids.into_iter().map(|id| history.load(id)).collect()
            }
        }
    }
}

impl std::fmt::Display for SideRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SideRef::Range(from, to) => write!(f, "{from}..{to}"),
            SideRef::Runs(runs) => {
                let names: Vec<String> = runs.iter().map(ToString::to_string).collect();
                f.write_str(&names.join(","))
            }
        }
    }
}

impl std::fmt::Display for RunRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunRef::Last(0) => f.write_str("last"),
            RunRef::Last(n) => write!(f, "last~{n}"),
            RunRef::Id(id) => write!(f, "{id}"),
            RunRef::File(path) => write!(f, "{}", path.display()),
        }
    }
}
