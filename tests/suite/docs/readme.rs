//! README.md is a guide a newcomer reads: short, its set-up block exactly
//! the two commands (the main job and the tests, the test command the one
//! CI runs), every page under docs/ linked, no prose line wider than 120
//! characters. Measured figures about particular guests live in
//! docs/checking.md; where a page or a comment of src quotes one, it says
//! when and on what.

use crate::common;
use std::path::Path;

const README: &str = include_str!("../../../README.md");
const CI: &str = include_str!("../../../.ci/run");

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
    assert_eq!(commands, ["cargo run --release", "cargo test --release"]);
    assert!(
        CI.lines().any(|l| l.trim() == "cargo test --release"),
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
         --release --test suite docs:: rewrites it"
    );
}

/// docs/probes.md lists every probe the registry has, as `mitbench list`
/// prints it: its id, what one item is, and its summary.
#[test]
fn the_probe_list_in_docs_is_the_registrys() {
    let mut list = String::from("| probe | one item | what it measures |\n|---|---|---|\n");
    for probe in mitbench::measure::probes::registry() {
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

/// Whether `text` quotes a measured time: a number with a unit of time or
/// ticks, not a setting ("default 50us", "every 100 ms").
fn quotes_a_time(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if !bytes[at].is_ascii_digit() || (at > 0 && bytes[at - 1].is_ascii_alphanumeric()) {
            at += 1;
            continue;
        }
        let start = at;
        while at < bytes.len() && (bytes[at].is_ascii_digit() || b",.".contains(&bytes[at])) {
            at += 1;
        }
        let rest = text[at..].strip_prefix(' ').unwrap_or(&text[at..]);
        let unit = ["ns", "µs", "us", "ms", "ticks"].iter().find(|u| {
            rest.strip_prefix(**u)
                .is_some_and(|after| !after.starts_with(|c: char| c.is_alphanumeric()))
        });
        let before = text[..start].trim_end();
        if unit.is_some() && !before.ends_with("default") && !before.ends_with("every") {
            return true;
        }
    }
    false
}

/// Whether `text` holds a date written as 2026-11-28.
fn holds_a_date(text: &str) -> bool {
    let shape = b"dddd-dd-dd";
    text.as_bytes().windows(shape.len()).any(|w| {
        w.iter().zip(shape).all(|(c, s)| match s {
            b'd' => c.is_ascii_digit(),
            _ => c == s,
        })
    })
}

/// What names the kind of host a figure was measured on.
const HOSTS: [&str; 5] = ["AMD", "EPYC", "Zen", "Intel", "Xeon"];

/// The paragraphs and fenced blocks of a page, each with the text of its
/// section before it (the heading too).
fn blocks_with_their_sections(page: &str) -> Vec<(String, String)> {
    let (mut blocks, mut section, mut block) = (Vec::new(), String::new(), String::new());
    let mut fenced = false;
    for line in page.lines() {
        fenced ^= line.starts_with("```");
        let ends = !fenced && (line.trim().is_empty() || line.starts_with('#'));
        if ends && !block.is_empty() {
            blocks.push((std::mem::take(&mut block), section.clone()));
            section.push_str(&blocks.last().unwrap().0);
        }
        if !fenced && line.starts_with('#') {
            section = line.to_string();
        } else if !ends {
            block.push_str(line);
            block.push('\n');
        }
    }
    if !block.is_empty() {
        blocks.push((block, section));
    }
    blocks
}

/// A figure measured on one guest says when and on what: every paragraph
/// or output block of README.md and docs/ that quotes a time has a date
/// and a host kind in it or earlier in its section. Figures of the
/// synthetic machine (the paragraph or the one before says so) are no
/// host's.
#[test]
fn every_time_a_doc_quotes_says_its_date_and_host_kind() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    let mut undated = Vec::new();
    for path in pages {
        let page = std::fs::read_to_string(&path).unwrap();
        let blocks = blocks_with_their_sections(&page);
        for (i, (block, section)) in blocks.iter().enumerate() {
            let before = i.checked_sub(1).map_or("", |j| blocks[j].0.as_str());
            if !quotes_a_time(block) || block.contains("synthetic") || before.contains("synthetic")
            {
                continue;
            }
            let scope = format!("{section}\n{block}");
            if !holds_a_date(&scope) || !HOSTS.iter().any(|h| scope.contains(h)) {
                let first = block.lines().next().unwrap_or("");
                undated.push(format!("{}: {first}", path.display()));
            }
        }
    }
    assert!(
        undated.is_empty(),
        "figures without date or host kind:\n{}",
        undated.join("\n")
    );
}

/// The comment blocks of a source file before its tests, each with the
/// line it starts on: a run of lines that are comments alone. What is
/// quoted in them ("+9.9 ns ±0.3", `50us`) is the shape of an output or
/// an input, not a figure, and is left out; so is an argument's help
/// text, which `--help` prints (its examples are inputs too).
fn comment_blocks(source: &str) -> Vec<(usize, String)> {
    let before_tests = source.split("#[cfg(test)]").next().unwrap_or("");
    let mut blocks: Vec<(usize, String)> = Vec::new();
    let mut open = false;
    for (number, line) in before_tests.lines().enumerate() {
        let Some(comment) = line.trim_start().strip_prefix("//") else {
            if open && line.trim_start().starts_with("#[arg(") {
                blocks.pop();
            }
            open = false;
            continue;
        };
        if !open {
            blocks.push((number + 1, String::new()));
            open = true;
        }
        let text = &mut blocks.last_mut().unwrap().1;
        text.push_str(comment.trim_start_matches(['/', '!']));
        text.push('\n');
    }
    for (_, text) in &mut blocks {
        *text = unquoted(text);
    }
    blocks
}

/// `text` without what stands between double quotes or backticks.
fn unquoted(text: &str) -> String {
    let mut kept = String::new();
    let mut inside: Option<char> = None;
    for c in text.chars() {
        match inside {
            Some(close) if c == close => inside = None,
            Some(_) => {}
            None if c == '"' || c == '`' => inside = Some(c),
            None => kept.push(c),
        }
    }
    kept
}

/// The same of src's comments: a comment that quotes a time measured on
/// a guest says when and on what, in the comment itself (and the figure
/// is better in docs/, as docs/why-the-code-is-so.md says).
#[test]
fn every_time_a_source_comment_quotes_says_its_date_and_host_kind() {
    let sources = common::rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let mut undated = Vec::new();
    for path in sources {
        let source = std::fs::read_to_string(&path).unwrap();
        for (line, block) in comment_blocks(&source) {
            let dated = holds_a_date(&block) && HOSTS.iter().any(|h| block.contains(h));
            if quotes_a_time(&block) && !block.contains("synthetic") && !dated {
                let first = block.lines().next().unwrap_or("");
                undated.push(format!("{}:{line}: {first}", path.display()));
            }
        }
    }
    assert!(
        undated.is_empty(),
        "source comments quoting a time without date or host kind:\n{}",
        undated.join("\n")
    );
}

#[test]
fn a_comment_block_is_read_without_its_quotes_and_tests() {
    let source = "/// A figure: \"+9.9 ns\".\n/// Two lines.\nfn f() {}\n// 5 ms here\nfn g() {}\n\
                  /// Help, e.g. 50us\n#[arg(long)]\n#[cfg(test)]\n// 7 ms\n";
    let blocks = comment_blocks(source);
    assert_eq!(
        blocks,
        [
            (1, " A figure: .\n Two lines.\n".to_string()),
            (4, " 5 ms here\n".to_string())
        ]
    );
    assert!(!quotes_a_time(&blocks[0].1) && quotes_a_time(&blocks[1].1));
}

#[test]
fn a_time_is_a_figure_and_a_setting_is_not() {
    assert!(quotes_a_time("getpid 104 ns ±0.42"));
    assert!(quotes_a_time("(17,368 against 9,914 ticks)"));
    assert!(quotes_a_time("p99 was 49.7-64.6 us at K=16"));
    assert!(!quotes_a_time("--latency-budget, default 50us: Linux's"));
    assert!(!quotes_a_time("sampled every 100 ms, and"));
    assert!(!quotes_a_time("x86-64 and SHA-256 in 2 forks"));
    assert!(holds_a_date("on 2026-11-23 on") && !holds_a_date("2026-11"));
}
