//! `mitbench compare` (two runs) and `mitbench fleet` (many runs, one per
//! host).

use super::output::{Exit, fail, page_target, print_json, print_out, write_page};
use super::stored::resolve;
use crate::cli::{HistoryArgs, Page, Printed};
use crate::compare;
use crate::export;
use crate::history::RunRef;
use crate::results::RunDocument;

pub fn compare_runs(
    store: &HistoryArgs,
    [old, new]: [&RunRef; 2],
    threshold: Option<f64>,
    fail_above: Option<f64>,
    printed: Printed,
    page: Page,
) -> Exit {
    let html = match page_target(page.html.as_deref()) {
        Ok(target) => target,
        Err(message) => return fail(Exit::USAGE, message),
    };
    let [old_doc, new_doc]: [RunDocument; 2] = match resolve(store, &[old, new]) {
        Ok(docs) => docs.try_into().expect("two names resolve to two runs"),
        Err(e) => return fail(Exit::USAGE, e),
    };
    let comparison = compare::compare(
        &old_doc,
        &old.to_string(),
        &new_doc,
        &new.to_string(),
        threshold.unwrap_or(compare::DEFAULT_THRESHOLD_PCT),
    );
    let shown = if printed.json {
        print_json(&comparison)
    } else {
        print_out(&export::compare::render(&comparison, printed.style()))
    };
    if !shown.is_success() {
        return shown;
    }
    if let Some(target) = html
        && let Err(code) = write_page(
            target,
            export::compare_html::render(&comparison),
            "comparison",
        )
    {
        return code;
    }
    match above_limit(fail_above, comparison.worst_slowdown_pct()) {
        Some(message) => {
            say!("{message}");
            Exit::ABOVE_LIMIT
        }
        None => Exit::SUCCESS,
    }
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
    if printed.json {
        return print_json(&fleet);
    }
    print_out(&export::fleet::render(&fleet, printed.style()))
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
