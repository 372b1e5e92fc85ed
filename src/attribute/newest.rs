//! The attribution of the history's newest run sets: what `mitbench
//! attribute` makes when no set is named, what `tax` prices each
//! mitigation by, and what a run's answer cites of other boots.

use super::{Attribution, DEFAULT_THRESHOLD_PCT, NamedSet, attribute, recognise};
use crate::store::history::History;

/// The attribution of `history`'s newest run set of each boot and wrapper
/// among the runs of `conditions`' host and build (`history::conditions`),
/// or why there is none.
pub fn newest_sets(history: &History, conditions: &str) -> Result<Attribution, String> {
    let sets = history
        .latest_sets_of(conditions)
        .map_err(|e| e.to_string())?;
    if sets.len() < 2 {
        return Err(
            "the history holds run sets of the present boot only: each kernel mitigation's \
             part needs its boot of `mitbench plan`"
                .into(),
        );
    }
    let named = sets
        .iter()
        .map(|set| {
            let runs = set
                .ids
                .iter()
                .map(|&id| history.load(id))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            Ok(NamedSet {
                name: set.side().to_string(),
                runs,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let recognised = recognise(&named)
        .map_err(|refusal| format!("the history's newest sets are not attributed: {refusal}"))?;
    let boot_noise = history.boot_noise(&named[recognised.roles.present].runs[0]);
    Ok(attribute(
        &named,
        recognised,
        DEFAULT_THRESHOLD_PCT,
        &boot_noise,
    ))
}
