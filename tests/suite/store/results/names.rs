//! Probes and variants named outside their own probe (the rows tax prices
//! crossings by, the rows the summary's tolls read, the rows the
//! mitigations catalogue says a mitigation taxes, the in-run A/B rows)
//! must exist in the registry: a rename in a probe fails here,
//! not in a user's `mitbench tax` or `compare`.

use mitbench::compare::IN_RUN_AB;
use mitbench::measure::probes;
use mitbench::mitigations::MITIGATIONS;
use mitbench::tax::{TOLLS, named::SSBD_ROW};
use wildmatch::WildMatch;

fn ids() -> Vec<&'static str> {
    probes::registry()
        .iter()
        .map(|p| p.declaration().id)
        .collect()
}

fn assert_variant(id: &str, variant: &str, named_by: &str) {
    let probe = probes::registry()
        .into_iter()
        .find(|p| p.declaration().id == id)
        .unwrap_or_else(|| panic!("{named_by} names probe {id}, which is not registered"));
    let variants: Vec<String> = probe.variants().into_iter().map(|v| v.name).collect();
    assert!(
        variants.iter().any(|v| v == variant),
        "{named_by} names {id} {variant}; its variants are {variants:?}"
    );
}

fn assert_matches_a_probe(glob: &str, named_by: &str) {
    let ids = ids();
    assert!(
        ids.iter().any(|id| WildMatch::new(glob).matches(id)),
        "{named_by} names {glob}, which matches no registered probe"
    );
}

#[test]
fn every_row_tax_prices_a_crossing_by_is_registered() {
    for toll in &TOLLS {
        for (probe, variant) in toll.rows() {
            assert_variant(probe, variant, &format!("tax's {} toll", toll.kind));
        }
    }
    let (probe, variant) = SSBD_ROW;
    assert_variant(probe, variant, "tax's SSBD part");
}

#[test]
fn every_row_the_kernels_price_list_reads_is_registered() {
    for s in mitbench::mitigations::sequences::SEQUENCES {
        let (probe, variant) = s.row;
        assert_variant(
            probe,
            variant,
            &format!("the price list's {}", s.mitigation.entry().name),
        );
    }
}

#[test]
fn every_row_the_summary_reads_is_registered() {
    for (probe, variant) in mitbench::answer::summary::rows_read() {
        assert_variant(probe, variant, "the summary's tolls");
    }
    // The rows a run measures first for the answer: each one a row.
    for (probe, variant) in mitbench::answer::summary::answer_rows() {
        assert_variant(&probe, &variant, "the answer's rows");
    }
}

#[test]
fn every_probe_attribution_names_is_registered() {
    for mitigation in MITIGATIONS {
        for glob in mitigation.taxes {
            assert_matches_a_probe(glob, mitigation.name);
        }
    }
    for glob in IN_RUN_AB {
        assert_matches_a_probe(glob, "compare's in-run A/B list");
    }
}

#[test]
fn a_renamed_probe_would_be_caught() {
    // The checks above are only worth something if they can fail.
    let caught = std::panic::catch_unwind(|| assert_variant("os/getpid", "sycall", "a typo"));
    assert!(caught.is_err());
    let caught = std::panic::catch_unwind(|| assert_matches_a_probe("os/getpidd", "a typo"));
    assert!(caught.is_err());
}
