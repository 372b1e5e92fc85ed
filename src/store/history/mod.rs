//! Every run, kept in an embedded SQLite database: the whole run document,
//! and a row per record for queries. Storing is never in the way of a run:
//! the caller turns any error here into a one-line warning.

use crate::store::results::RunDocument;
use crate::store::results::load::{self, LoadError};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
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

mod floors;
mod queries;
mod refs;
mod schema;
mod series;
mod store;

pub use queries::{
    BootFigures, Builds, LEARNED_RUNS, QuietRounds, RUNS_PER_BOOT, RowFigures, StoredSet,
    USUAL_GAP_RUNS,
};
pub use refs::{RunRef, SideRef};
pub use series::{MachineKey, MachineSeries, RowSeries, SERIES_RUNS, SeriesRun};
pub use store::{conditions, conditions_of};

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
