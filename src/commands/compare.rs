//! `mitbench compare` (two runs) and `mitbench fleet` (many runs, one per
//! host).

use super::output::{Exit, fail, page_target, print_shown, show};
use super::stored_runs::{open_history, resolve};
use crate::attribute::NamedSet;
use crate::attribute::floors::SequenceCount;
use crate::cli::{HistoryArgs, JudgeArgs, Printed};
use crate::compare;
use crate::export;
use crate::store::history::RunRef;
use crate::store::history::SideRef;
use crate::store::results::RunDocument;

pub fn compare_runs(
    [old, new]: [&SideRef; 2],
    fail_above: Option<f64>,
    view: export::compare::text::View,
    judged: JudgeArgs,
) -> Exit {
    let html = match page_target(judged.page.html.as_deref()) {
        Ok(target) => target,
        Err(message) => return fail(Exit::USAGE, message),
    };
    let (history, sides) = match resolve_sets(&judged.store, &[old, new]) {
        Ok(resolved) => resolved,
        Err(exit) => return exit,
    };
    let [old_docs, new_docs]: [Vec<RunDocument>; 2] = sides.try_into().expect("two sides");
    let comparison = with_history_noise(
        history.as_ref(),
        [(&old_docs, &old.to_string()), (&new_docs, &new.to_string())],
        judged.threshold.unwrap_or(compare::DEFAULT_THRESHOLD_PCT),
    );
    let shown = show(
        &comparison,
        judged.printed,
        |style, width| export::compare::text::render(&comparison, style, width, view),
        html,
        || export::compare::html::render(&comparison),
        "comparison",
    );
    if !shown.is_success() {
        return shown;
    }
    match above_limit(fail_above, comparison.worst_slowdown_pct()) {
        Some(message) => {
            say!("{message}");
            Exit::ABOVE_LIMIT
        }
        None => Exit::SUCCESS,
    }
}

/// The history, where it opens, and the runs each set names (a set that
/// names none is refused).
fn resolve_sets(
    store: &HistoryArgs,
    sets: &[&SideRef],
) -> Result<
    (
        Option<crate::store::history::History>,
        Vec<Vec<RunDocument>>,
    ),
    Exit,
> {
    let history = match open_history(store) {
        Ok(history) => history,
        Err(e) if sets.iter().any(|s| s.needs_history()) => return Err(fail(Exit::USAGE, e)),
        // Runs named by files need no history; one that cannot be read
        // only teaches nothing.
        Err(_) => None,
    };
    let mut resolved = Vec::new();
    for set in sets {
        match set.resolve(history.as_ref()) {
            Ok(docs) if docs.is_empty() => {
                return Err(fail(Exit::USAGE, format!("{set} names no run")));
            }
            Ok(docs) => resolved.push(docs),
            Err(e) => return Err(fail(Exit::USAGE, e)),
        }
    }
    Ok((history, resolved))
}

/// `mitbench attribute SET...`: each row's toll broken down by mitigation
/// over sets made under the plan's boots (see `attribute`).
pub fn attribute(sets: &[SideRef], counts: &[SequenceCount], judged: JudgeArgs) -> Exit {
    let html = match page_target(judged.page.html.as_deref()) {
        Ok(target) => target,
        Err(message) => return fail(Exit::USAGE, message),
    };
    let newest;
    let sets = match sets {
        [] => match newest_sets(&judged.store) {
            Ok(found) => {
                newest = found;
                &newest[..]
            }
            Err(exit) => return exit,
        },
        [_] => {
            return fail(
                Exit::USAGE,
                "attribute needs 2 run sets or more (one per boot or wrapper), or none to \
                 take the history's newest set of each",
            );
        }
        named => named,
    };
    let refs: Vec<&SideRef> = sets.iter().collect();
    let (mut history, resolved) = match resolve_sets(&judged.store, &refs) {
        Ok(resolved) => resolved,
        Err(exit) => return exit,
    };
    let named: Vec<NamedSet> = sets
        .iter()
        .zip(resolved)
        .map(|(set, runs)| NamedSet {
            name: set.to_string(),
            runs,
        })
        .collect();
    let recognised = match crate::attribute::recognise(&named) {
        Ok(recognised) => recognised,
        Err(refusal) => return fail(Exit::USAGE, refusal),
    };
    let boot_noise = history
        .as_ref()
        .map(|history| history.boot_noise(&named[recognised.roles.present].runs[0]))
        .unwrap_or_default();
    let mut attribution = crate::attribute::attribute(
        &named,
        recognised,
        judged
            .threshold
            .unwrap_or(crate::attribute::DEFAULT_THRESHOLD_PCT),
        &boot_noise,
    );
    let mut floors = crate::attribute::floors::score(&attribution, &named, counts);
    // The record is kept where there is a history to keep it in.
    if let Some(history) = history.as_mut()
        && let Err(e) = crate::attribute::floors::keep(&mut floors, history)
    {
        say!("the floors' scores were not kept: {e}");
    }
    attribution.floors = Some(floors);
    show(
        &attribution,
        judged.printed,
        |style, width| export::attribute::render(&attribution, style, width),
        html,
        || export::attribute::render_html(&attribution),
        "attribution",
    )
}

/// The history's newest run set of each command line and process controls
/// of the last run's host and build, said on stderr; refused where there
/// are fewer than two.
fn newest_sets(store: &HistoryArgs) -> Result<Vec<SideRef>, Exit> {
    let history = match open_history(store) {
        Ok(Some(history)) => history,
        Ok(None) => {
            return Err(fail(
                Exit::USAGE,
                "no history to take run sets from: name the sets, or make them with \
                 `mitbench run --runs N` on each boot of `mitbench plan`",
            ));
        }
        Err(e) => return Err(fail(Exit::USAGE, e)),
    };
    let sets = history
        .load(history.nth_last(0).map_err(|e| fail(Exit::USAGE, e))?)
        .and_then(|last| history.latest_sets(&last))
        .map_err(|e| fail(Exit::USAGE, e))?;
    if sets.len() < 2 {
        return Err(fail(
            Exit::USAGE,
            format!(
                "the history holds run sets of one command line and one set of process \
                 controls only ({}): make the other boots' sets of `mitbench plan` (or a \
                 wrapper's), then run `mitbench attribute` again",
                sets.first()
                    .map_or_else(|| "none".to_string(), |s| s.side().to_string())
            ),
        ));
    }
    say!("attributing the newest set of each boot and wrapper in the history:");
    for set in &sets {
        say!(
            "  {} ({} run(s) from {}): {}",
            set.side(),
            set.ids.len(),
            set.started_at,
            set.conditions()
        );
    }
    Ok(sets.iter().map(|s| s.side()).collect())
}

/// Two sides (their runs and names) compared as `mitbench compare`
/// compares them, with the history's between-run and between-boot noise
/// where there is a history.
pub(super) fn with_history_noise(
    history: Option<&crate::store::history::History>,
    sides: [(&[RunDocument], &str); 2],
    threshold_pct: f64,
) -> compare::RunComparison {
    let [(old, _), (new, _)] = sides;
    let compared: Vec<&str> = old
        .iter()
        .chain(new)
        .map(|d| d.started_at.as_str())
        .collect();
    compare::HistoryNoise::read(history, old, &compared).compare(sides, threshold_pct)
}

/// `--fail-above LIMIT`: the sentence that fails the comparison when its
/// worst slowdown beyond noise (`worst`, percent) is above the limit; None
/// when there is no limit, no row slower beyond noise, or none above it.
fn above_limit(limit: Option<f64>, worst: Option<f64>) -> Option<String> {
    match (limit, worst) {
        (Some(limit), Some(worst)) if worst > limit => Some(format!(
            "a row is slower by at least {worst:.1}% beyond noise, above --fail-above {limit}%"
        )),
        _ => None,
    }
}

/// Many runs in one table (see `compare::fleet`).
pub fn fleet(
    store: &HistoryArgs,
    runs: &[RunRef],
    threshold: Option<f64>,
    printed: Printed,
) -> Exit {
    let refs: Vec<&RunRef> = runs.iter().collect();
    let docs = match resolve(store, &refs) {
        Ok(docs) => docs,
        Err(e) => return fail(Exit::USAGE, e),
    };
    let named: Vec<(String, RunDocument)> = runs.iter().map(|r| r.to_string()).zip(docs).collect();
    let fleet = compare::fleet(&named, threshold.unwrap_or(compare::DEFAULT_THRESHOLD_PCT));
    print_shown(&fleet, printed, |style, width| {
        export::fleet::render(&fleet, style, width)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fail_above_fails_only_a_slowdown_beyond_its_limit() {
        assert_eq!(above_limit(None, Some(50.0)), None);
        assert_eq!(above_limit(Some(5.0), None), None);
        assert_eq!(above_limit(Some(5.0), Some(5.0)), None);
        assert_eq!(above_limit(Some(5.0), Some(-20.0)), None);
        let message = above_limit(Some(5.0), Some(7.25)).unwrap();
        assert!(message.contains("7.2%") && message.contains("--fail-above 5%"));
    }
}
