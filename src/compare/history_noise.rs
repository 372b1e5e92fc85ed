//! What the history says of a comparison's rows: how far each moved
//! between earlier runs of the old side's conditions, and between boots.
//! Read apart from the comparison, so that a run comparing itself with a
//! stored run at its end read the history before it measured.

use super::{BootNoise, Learned, RunComparison, Side, compare_sets};
use crate::store::history::{Builds, History, conditions_of};
use crate::store::results::RunDocument;
use std::collections::BTreeMap;

/// Each row's between-run noise and the between-boot noise; none known
/// without a history.
#[derive(Debug, Clone, Default)]
pub struct HistoryNoise {
    learned: BTreeMap<(String, String), Learned>,
    boot: BootNoise,
}

impl HistoryNoise {
    /// The noise of a comparison whose old side is `old` (at least one
    /// run): its rows over the history's earlier runs of `old`'s conditions
    /// (host, boot, build, process controls), the runs started at
    /// `compared` left out.
    pub fn read(history: Option<&History>, old: &[RunDocument], compared: &[&str]) -> Self {
        let Some(history) = history else {
            return HistoryNoise::default();
        };
        let figures = history
            .row_figures(&conditions_of(&old[0]), Builds::This, compared)
            .unwrap_or_default();
        HistoryNoise {
            learned: crate::analysis::noise::learned(figures),
            boot: history.boot_noise(&old[0]),
        }
    }

    /// Two sides (their runs and names) compared as `mitbench compare`
    /// compares them, with this noise.
    pub fn compare(
        &self,
        [(old, old_name), (new, new_name)]: [(&[RunDocument], &str); 2],
        threshold_pct: f64,
    ) -> RunComparison {
        compare_sets(
            &side(old, old_name),
            &side(new, new_name),
            threshold_pct,
            &|id, variant| {
                self.learned
                    .get(&(id.to_string(), variant.to_string()))
                    .copied()
            },
            &self.boot,
        )
    }
}

fn side<'a>(runs: &'a [RunDocument], name: &str) -> Side<'a> {
    Side {
        name: name.to_string(),
        runs: runs.iter().collect(),
    }
}
