//! README.md is a guide a newcomer reads: short, its set-up block exactly
//! the two commands (the main job and the tests, the test command the one
//! CI runs), every page under docs/ linked, no prose line wider than 120
//! characters. Measured figures about particular guests live in
//! docs/checking.md.

use std::path::Path;

const README: &str = include_str!("../README.md");
const CI: &str = include_str!("../.ci/run");

/// The lines of the code block right under `heading`.
fn block_under(heading: &str) -> Vec<&'static str> {
    let section = README.split(heading).nth(1).expect("the heading");
    let block = section.split("```").nth(1).expect("a code block");
    block
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .collect()
}

#[test]
fn the_set_up_block_holds_the_main_job_and_the_tests_and_ci_runs_the_same_tests() {
    let commands: Vec<&str> = block_under("## Set-up: two commands")
        .iter()
        .map(|l| l.split('#').next().unwrap().trim())
        .collect();
    assert_eq!(commands, ["cargo run --release", "cargo test"]);
    assert!(
        CI.lines().any(|l| l.trim() == "cargo test"),
        ".ci/run must run the README's test command"
    );
}

#[test]
fn the_readme_is_short_and_keeps_its_prose_narrow() {
    let lines: Vec<&str> = README.lines().collect();
    assert!(lines.len() <= 200, "README.md has {} lines", lines.len());
    let mut in_code = false;
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with("```") {
            in_code = !in_code;
        } else if !in_code {
            let width = line.chars().count();
            assert!(width <= 120, "README.md:{} is {width} characters", i + 1);
        }
    }
}

#[test]
fn every_page_under_docs_is_linked_from_the_readme() {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    for entry in std::fs::read_dir(docs).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            let link = format!("](docs/{name})");
            assert!(
                README.contains(&link),
                "README.md does not link docs/{name}"
            );
        }
    }
}

/// The block between these markers in docs/probes.md is written from the
/// registry: every probe id, what one item is, and its summary, as
/// `mitbench list` prints them.
const PROBE_LIST_START: &str = "<!-- probe list: written from the registry -->";
const PROBE_LIST_END: &str = "<!-- end of the probe list -->";

fn probe_list() -> String {
    let mut list = String::from("| probe | one item | what it measures |\n|---|---|---|\n");
    for probe in mitbench::probes::registry() {
        let d = probe.declaration();
        list.push_str(&format!("| `{}` | {} | {} |\n", d.id, d.item, d.summary));
    }
    list
}

/// docs/probes.md lists every probe the registry has, as the registry
/// says it. With MITBENCH_BLESS=1 the test writes the list into the page
/// instead of checking it.
#[test]
fn the_probe_list_in_docs_is_the_registrys() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/probes.md");
    let page = std::fs::read_to_string(&path).unwrap();
    let (before, rest) = page.split_once(PROBE_LIST_START).expect("the start marker");
    let (listed, after) = rest.split_once(PROBE_LIST_END).expect("the end marker");
    let expected = format!("\n{}", probe_list());
    if std::env::var_os("MITBENCH_BLESS").is_some() {
        let page = format!("{before}{PROBE_LIST_START}{expected}{PROBE_LIST_END}{after}");
        std::fs::write(&path, page).unwrap();
        return;
    }
    assert_eq!(
        listed, expected,
        "docs/probes.md's probe list is not the registry's: MITBENCH_BLESS=1 cargo test \
         --release --test readme rewrites it"
    );
}
