//! The history's schema: the migrations that bring a database of any
//! earlier version forward, never dropping it.

use super::{History, HistoryError};

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

impl History {
    pub(super) fn migrate(&mut self) -> Result<(), HistoryError> {
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
}
