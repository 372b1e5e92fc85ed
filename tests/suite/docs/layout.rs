//! docs/layout.md is true to the code: every module imports only modules of
//! the layers below its own, as the document's `layers:` line orders them,
//! and every source path the document describes exists.

use crate::common;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const LAYOUT: &str = include_str!("../../../docs/layout.md");

/// Each module named on the `layers:` line and its layer, 0 on top.
fn layers() -> BTreeMap<String, usize> {
    let start = LAYOUT.find("\nlayers:").expect("a layers: line") + 1;
    let block = LAYOUT[start..].split("\n\n").next().unwrap();
    let block = block.trim_start_matches("layers:");
    let mut rank = BTreeMap::new();
    for (i, layer) in block.split("->").enumerate() {
        for name in layer.split('`').skip(1).step_by(2) {
            assert!(rank.insert(name.to_string(), i).is_none(), "{name} twice");
        }
    }
    rank
}

/// The code of a source file without comments and without the items
/// marked `#[cfg(test)]` (a test module, a test-only function): the whole
/// file else, code after a test module too.
fn code(text: &str) -> String {
    let text: String = text
        .lines()
        .map(|line| line.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    let mut kept = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        kept.push_str(&rest[..at]);
        rest = &rest[at..];
        rest = &rest[item_end(rest)..];
    }
    kept.push_str(rest);
    kept
}

/// Where the item that starts `text` ends: after its `;` or after the `}`
/// that closes its first `{`.
fn item_end(text: &str) -> usize {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            ';' if depth == 0 => return i + 1,
            '{' => depth += 1,
            '}' if depth == 1 => return i + 1,
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    text.len()
}

/// The folders that group modules of the layers (`measure` of
/// `measure::harness`): a module in one is named by both.
fn groups(rank: &BTreeMap<String, usize>) -> Vec<String> {
    let mut groups: Vec<String> = rank
        .keys()
        .filter_map(|name| Some(name.split_once("::")?.0.to_string()))
        .collect();
    groups.dedup();
    groups
}

/// The module a `crate::` path names after each occurrence: its first
/// segment, or its first two where the first is one of `groups`.
fn imports(code: &str, groups: &[String]) -> Vec<String> {
    let segment = |text: &str| -> String {
        text.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    code.split("crate::")
        .skip(1)
        .map(|rest| {
            let first = segment(rest);
            match rest[first.len()..].strip_prefix("::") {
                Some(after) if groups.contains(&first) => format!("{first}::{}", segment(after)),
                _ => first,
            }
        })
        .collect()
}

/// Which arrows of `tree` point up or across the layers, as "from -> to".
fn arrows_against(rank: &BTreeMap<String, usize>, tree: &Path) -> Vec<String> {
    let files = common::rust_files(tree);
    let groups = groups(rank);
    let mut wrong = Vec::new();
    for file in files {
        let relative = file.strip_prefix(tree).unwrap();
        let mut names = relative.components().map(|c| {
            c.as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string()
        });
        let top = names.next().unwrap();
        let module = match names.next() {
            Some(inner) if groups.contains(&top) => format!("{top}::{inner}"),
            _ => top,
        };
        // The crate root and a group's own mod.rs only declare modules.
        if module == "lib" || groups.iter().any(|g| module == format!("{g}::mod")) {
            continue;
        }
        let from = *rank
            .get(&module)
            .unwrap_or_else(|| panic!("{module} is on no layer of docs/layout.md"));
        for to in imports(&code(&std::fs::read_to_string(&file).unwrap()), &groups) {
            if to == module {
                continue;
            }
            match rank.get(&to) {
                Some(&layer) if layer > from => {}
                _ => wrong.push(format!("{} -> {to}", file.display())),
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    wrong
}

#[test]
fn every_import_points_down_the_documented_layers() {
    let rank = layers();
    assert!(rank.len() >= 20, "the layers name every module: {rank:?}");
    let tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let wrong = arrows_against(&rank, &tree);
    assert!(
        wrong.is_empty(),
        "imports against docs/layout.md: {wrong:#?}"
    );
}

#[test]
fn an_import_up_the_layers_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir(src.join("analysis")).unwrap();
    std::fs::write(src.join("analysis/mod.rs"), "use crate::export::x;\n").unwrap();
    std::fs::write(src.join("plan.rs"), "// crate::commands in a comment\n").unwrap();
    // In a group: the harness reaching up to the probes beside it.
    std::fs::create_dir_all(src.join("measure/harness")).unwrap();
    std::fs::write(src.join("measure/mod.rs"), "pub mod harness;\n").unwrap();
    let up = "use crate::analysis::x;\nuse crate::measure::probes::y;\n";
    std::fs::write(src.join("measure/harness/mod.rs"), up).unwrap();
    let wrong = arrows_against(&layers(), src);
    assert_eq!(wrong.len(), 2, "{wrong:?}");
    assert!(wrong[0].ends_with("analysis/mod.rs -> export"), "{wrong:?}");
    assert!(
        wrong[1].ends_with("measure/harness/mod.rs -> measure::probes"),
        "{wrong:?}"
    );
}

/// A test module is left out, not what follows it: an import after one
/// (or after a test-only function) is still read.
#[test]
fn code_after_a_test_module_is_still_read() {
    let text = "use crate::sys;\n#[cfg(test)]\nmod tests {\n    use crate::export::x;\n    \
                fn f() { if true { g(); } }\n}\n#[cfg(test)]\nuse crate::commands::y;\n\
                fn later() { crate::store::history::open(); }\n";
    let groups = ["store".to_string()];
    assert_eq!(imports(&code(text), &groups), ["sys", "store::history"]);
}

/// The paths a line of the module list starts with: "src/sys.rs, thunks.rs
/// thin syscall wrappers" names src/sys.rs and thunks.rs.
fn paths(line: &str) -> Vec<&str> {
    line.split_whitespace()
        .map(|token| token.trim_end_matches(','))
        .take_while(|name| name.ends_with(".rs") || name.ends_with('/'))
        .collect()
}

#[test]
fn every_source_path_the_layout_describes_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let block = LAYOUT.split("```").nth(1).expect("the module list");
    let mut dir = PathBuf::new();
    let mut described = 0;
    for line in block.lines() {
        let names = paths(line);
        let Some(first) = names.first() else { continue };
        let nested = line.starts_with(' ');
        let exists = |path: PathBuf| {
            assert!(path.exists(), "docs/layout.md describes {}", path.display());
        };
        if nested {
            // Inside the directory the last top-level line named.
            names.iter().for_each(|name| exists(dir.join(name)));
        } else {
            // A top-level line: its first path from the root, the rest
            // beside it (src/sys.rs, thunks.rs; csrc/, build.rs).
            let first = root.join(first);
            let parent = first.parent().unwrap().to_path_buf();
            names[1..].iter().for_each(|name| exists(parent.join(name)));
            dir = first.clone();
            exists(first);
        }
        described += names.len();
    }
    assert!(described >= 60, "the module list read {described} paths");
}

/// Each function of `code` longer than `most` lines, as "name: lines",
/// counted from `fn` to the brace that closes its body.
fn long_functions(code: &str, most: usize) -> Vec<String> {
    let mut long = Vec::new();
    for (at, _) in code.match_indices("fn ") {
        let before = code[..at].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String = code[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // Its body opens at the first `{` outside the signature's brackets;
        // a `;` there first is a declaration without one.
        let mut depth = 0i32;
        let open = code[at..].char_indices().find_map(|(i, c)| {
            match c {
                '(' | '[' | '<' => depth += 1,
                ')' | ']' | '>' => depth -= 1,
                ';' if depth <= 0 => return Some(None),
                '{' if depth <= 0 => return Some(Some(at + i)),
                _ => {}
            }
            None
        });
        let Some(Some(open)) = open else { continue };
        let end = open + item_end(&code[open..]);
        let lines = code[at..end].lines().count();
        if lines > most {
            long.push(format!("{name}: {lines}"));
        }
    }
    long
}

/// Lines of code of a file before its tests: what [`code`] keeps, without
/// blank lines.
fn code_lines(code: &str) -> usize {
    code.lines().filter(|l| !l.trim().is_empty()).count()
}

/// Every function of src, and every file, within the sizes a reader takes
/// in at once: no function over 100 lines, no file over 700 lines of code
/// before its tests.
#[test]
fn no_function_over_100_lines_and_no_file_over_700() {
    let files = common::rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let mut long = Vec::new();
    for file in &files {
        let code = code(&std::fs::read_to_string(file).unwrap());
        let lines = code_lines(&code);
        if lines > 700 {
            long.push(format!("{}: {lines} lines of code", file.display()));
        }
        long.extend(
            long_functions(&code, 100)
                .into_iter()
                .map(|f| format!("{}: {f}", file.display())),
        );
    }
    assert!(long.is_empty(), "{long:#?}");
}

/// The checks can fail: a function of 102 lines is caught, whatever its
/// signature holds, and a declaration without a body is not one; a file
/// of 701 lines of code is over, comments, blank lines and its tests not
/// counted.
#[test]
fn a_long_function_and_a_long_file_are_caught() {
    let body = "x();\n".repeat(100);
    let f = format!("fn g(a: [u8; 2]) -> Vec<u8>;\nfn f(a: [u8; 2]) -> Vec<u8> {{\n{body}}}");
    assert_eq!(long_functions(&f, 100), ["f: 102"]);
    let file = format!(
        "{}// a comment\n\n#[cfg(test)]\nmod tests {{\n{}}}\n",
        "let x = 1;\n".repeat(701),
        "y();\n".repeat(50)
    );
    assert_eq!(code_lines(&code(&file)), 701);
}
