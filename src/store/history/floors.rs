//! The kernel price list's floors scored against boots that measured the
//! mitigation's part (`mitbench attribute`), kept per CPU model.

use super::{History, HistoryError};
use rusqlite::params;

impl History {
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
}
