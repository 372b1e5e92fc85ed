//! Storing a run: its document and a row per record, with the columns
//! its later look-ups read.

use super::{History, HistoryError};
use crate::inventory::identity::Identity;
use crate::store::results::load::LoadError;
use crate::store::results::{Cost, RunDocument};
use rusqlite::params;

/// What a run's figures can be compared within without a change to explain
/// them: the host, the installation, the boot, the build, quick or not, and
/// the process controls inherited across exec (a seccomp filter, SSBD).
pub fn conditions_of(doc: &RunDocument) -> String {
    conditions(
        &doc.inventory.identity,
        &doc.build.git_commit,
        doc.settings.quick,
    )
}

/// Where [`conditions`] holds the build's commit, as a JSON path: the
/// queries that read runs of any build leave it out.
pub(super) const COMMIT_IN_CONDITIONS: &str = "$[3]";

/// [`conditions_of`] a run on the machine `id` by the build `git_commit`,
/// before it has a document.
pub fn conditions(id: &Identity, git_commit: &str, quick: bool) -> String {
    serde_json::json!([
        id.hostname,
        id.machine_id,
        id.boot_id,
        git_commit,
        quick,
        id.process_controls,
    ])
    .to_string()
}

impl History {
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
                let ci = cost.and_then(|c| c.raw_ticks().ci95);
                insert
                    .execute(params![
                        id,
                        r.id,
                        r.family,
                        r.variant,
                        serde_json::to_value(r.role)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string)),
                        cost.map(Cost::ticks),
                        cost.map(Cost::ns),
                        ci.map(|c| c[0]),
                        ci.map(|c| c[1]),
                        r.unsupported.as_ref().map(|u| u.kind_name()),
                        cost.and_then(|c| Some(c.at_reference?.coefficient)),
                        cost.and_then(|c| Some(c.at_reference?.ticks.value)),
                        r.slow_state(),
                    ])
                    .map_err(sqlite)?;
            }
        }
        tx.commit().map_err(sqlite)?;
        Ok(id)
    }
}
