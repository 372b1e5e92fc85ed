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

/// A block of a page between two markers that is written from the code:
/// checked against `expected`, or with MITBENCH_BLESS=1 written into the
/// page instead.
fn written_from_code(page: &str, start: &str, end: &str, expected: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(page);
    let text = std::fs::read_to_string(&path).unwrap();
    let (before, rest) = text.split_once(start).expect("the start marker");
    let (listed, after) = rest.split_once(end).expect("the end marker");
    let expected = format!("\n{expected}");
    if std::env::var_os("MITBENCH_BLESS").is_some() {
        std::fs::write(&path, format!("{before}{start}{expected}{end}{after}")).unwrap();
        return;
    }
    assert_eq!(
        listed, expected,
        "{page}'s block after {start:?} is not the code's: MITBENCH_BLESS=1 cargo test \
         --release --test readme rewrites it"
    );
}

/// docs/probes.md lists every probe the registry has, as `mitbench list`
/// prints it: its id, what one item is, and its summary.
#[test]
fn the_probe_list_in_docs_is_the_registrys() {
    let mut list = String::from("| probe | one item | what it measures |\n|---|---|---|\n");
    for probe in mitbench::probes::registry() {
        let d = probe.declaration();
        list.push_str(&format!("| `{}` | {} | {} |\n", d.id, d.item, d.summary));
    }
    written_from_code(
        "docs/probes.md",
        "<!-- probe list: written from the registry -->",
        "<!-- end of the probe list -->",
        &list,
    );
}

/// docs/kernel-mitigations.md lists the catalogue's keys, the names they
/// stand for and the vulnerability files each serves: what a reader joins
/// the JSON's and the metrics' `id` on.
#[test]
fn the_catalogue_keys_in_docs_are_the_catalogues() {
    let mut list = String::from("| id | mitigation | vulnerability files |\n|---|---|---|\n");
    for m in mitbench::mitigations::MITIGATIONS {
        let files: Vec<String> = m.files.iter().map(|f| format!("`{f}`")).collect();
        list.push_str(&format!(
            "| `{}` | {} | {} |\n",
            m.id.key(),
            m.name,
            files.join(", ")
        ));
    }
    written_from_code(
        "docs/kernel-mitigations.md",
        "<!-- catalogue keys: written from the catalogue -->",
        "<!-- end of the catalogue keys -->",
        &list,
    );
}
