//! The answer, the price list, the vectors, `plan` and `tax` on every CPU
//! of tests/fixtures/cpus: trees of the cpuinfo lines mitbench reads, the
//! command line and the vulnerability files as 6.18's bugs.c prints them
//! for each CPU's defaults (and for options that change a string). Each
//! tree's `expected` names the replayed rows its kernel runs, from the
//! kernel's source, not from mitbench's rules. On each: the price list
//! prices those rows and no other, every mitigation in force is named with
//! a price, a floor or a reason, no line is said twice, and the vectors
//! name only what is in force. docs/cpu-matrix.md is generated from the
//! same trees.

use crate::common;
use mitbench::answer::{prices, summary};
use mitbench::inventory::Inventory;
use mitbench::mitigations::kernel;
use mitbench::mitigations::sequences::SEQUENCES;
use mitbench::store::results::RunDocument;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn trees() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(common::fixture_path("cpus"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    found.sort();
    assert!(found.len() >= 16, "{} trees", found.len());
    found
}

/// A tree's `expected` file: what it is, and the rows its kernel runs.
fn expected(tree: &Path) -> (String, BTreeSet<String>) {
    let text = std::fs::read_to_string(tree.join("expected")).unwrap();
    let what = text
        .lines()
        .next()
        .unwrap()
        .trim_start_matches("# ")
        .to_string();
    let runs = text
        .lines()
        .find_map(|l| l.strip_prefix("runs:"))
        .unwrap()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    (what, runs)
}

/// The default run's document on `tree`'s CPU and command line, with
/// every row of the price list measured (each at a price of its own).
fn run_on(tree: &Path) -> RunDocument {
    let mut doc = common::stored_run("default-run.json");
    let inventory = Inventory::collect(tree);
    doc.inventory.cpu = inventory.cpu;
    doc.inventory.kernel.cmdline = inventory.kernel.cmdline;
    let rows: Vec<(&str, &str)> = SEQUENCES.iter().map(|s| s.row).collect();
    doc.results
        .retain(|r| !rows.contains(&(r.id.as_str(), r.variant.as_str())));
    for (i, row) in rows.into_iter().enumerate() {
        prices::lay_price(&mut doc, row, 10.0 + i as f64);
    }
    doc
}

fn name(tree: &Path) -> String {
    tree.file_name().unwrap().to_string_lossy().into_owned()
}

/// A mitigation's name as the answer shortens it.
fn short(name: &str) -> &str {
    name.split(" (").next().unwrap()
}

#[test]
fn each_cpu_prices_the_sequences_its_kernel_runs_and_no_other() {
    for tree in trees() {
        let doc = run_on(&tree);
        let priced: BTreeSet<String> = prices::of(&doc)
            .prices
            .iter()
            .map(|p| p.variant.to_string())
            .collect();
        let (what, runs) = expected(&tree);
        assert_eq!(priced, runs, "{}: {what}", name(&tree));
    }
}

#[test]
fn every_mitigation_in_force_is_named_with_a_price_a_floor_or_a_reason() {
    for tree in trees() {
        let doc = run_on(&tree);
        let answer = summary::of(&doc);
        let line =
            mitbench::export::run::summary::kernel_prices(&answer.kernel).unwrap_or_default();
        for f in kernel::in_force(&doc.inventory.cpu.vulnerabilities) {
            for id in &f.mitigations {
                let said = short(id.entry().name);
                assert!(
                    line.contains(said),
                    "{}: {said} ({}: {}) is not in: {line}",
                    name(&tree),
                    f.vulnerability,
                    f.line
                );
            }
        }
    }
}

#[test]
fn no_line_or_part_of_the_kernels_line_is_said_twice() {
    for tree in trees() {
        let doc = run_on(&tree);
        let answer = summary::of(&doc);
        let lines = mitbench::export::run::summary::lines(&answer, 100);
        let mut seen = BTreeSet::new();
        for l in lines.iter().filter(|l| !l.trim().is_empty()) {
            assert!(seen.insert(l.clone()), "{}: twice: {l}", name(&tree));
        }
        let line =
            mitbench::export::run::summary::kernel_prices(&answer.kernel).unwrap_or_default();
        let mut parts = BTreeSet::new();
        for part in line.split("; ") {
            assert!(parts.insert(part), "{}: twice: {part}", name(&tree));
        }
    }
}

#[test]
fn the_vectors_name_only_what_is_in_force_here() {
    for tree in trees() {
        let doc = run_on(&tree);
        let vulnerabilities = &doc.inventory.cpu.vulnerabilities;
        let in_force: BTreeSet<&str> = kernel::in_force(vulnerabilities)
            .iter()
            .flat_map(|f| f.mitigations.iter().map(|id| id.entry().name))
            .collect();
        // The microcode-only mode a vector leaves needs the microcode: a
        // safe return without it ("Vulnerable: Safe RET, no microcode")
        // falls to "Vulnerable: No microcode" (bugs.c, 6.18).
        let srso_safe_ret = vulnerabilities
            .get("spec_rstack_overflow")
            .is_some_and(|l| l.starts_with("Mitigation: Safe RET"));
        let answer = summary::of(&doc);
        for v in &answer.attack_vectors.vectors {
            for m in v.keeps.iter().chain(&v.turns_off) {
                assert!(in_force.contains(m), "{}: {m} is not in force", name(&tree));
            }
            assert!(
                v.leaves.is_empty() || srso_safe_ret,
                "{}: {:?} where SRSO runs no safe return",
                name(&tree),
                v.leaves
            );
        }
        let plan = mitbench::plan::plan(&doc.inventory, 5);
        for boot in &plan.vector_boots {
            for m in &boot.turns_off {
                assert!(in_force.contains(m), "{}: plan turns off {m}", name(&tree));
            }
        }
    }
}

/// What a KVM host runs for its guests' exits (the IBPB retbleed's and
/// SRSO's IBPB modes run on each exit, VMSCAPE's barrier before the return
/// to the VMM) is priced per exit of a guest, never as a part of the
/// host's own syscalls, or said why not; and the matrix holds each of the
/// strings bugs.c (and the BHB-clear series) print for them.
#[test]
fn what_a_host_runs_on_its_guests_exits_is_priced_per_exit_or_said_why() {
    use mitbench::mitigations::sequences::Occurs;
    let mut seen = BTreeSet::new();
    for tree in trees() {
        let doc = run_on(&tree);
        let k = prices::of(&doc);
        let per = |id: mitbench::mitigations::Id, occurs: Occurs| {
            k.prices.iter().find(|p| p.id == id && p.occurs == occurs)
        };
        let why = |file: &str| {
            k.unreplayed
                .iter()
                .find(|u| u.vulnerabilities.iter().any(|v| v == file))
                .map_or(String::new(), |u| u.why.clone())
        };
        for f in kernel::in_force(&doc.inventory.cpu.vulnerabilities) {
            let line = f.line.as_str();
            let (id, occurs) = match f.vulnerability.as_str() {
                "retbleed" | "spec_rstack_overflow" if line.starts_with("Mitigation: IBPB") => {
                    (f.mitigations[0], Occurs::PerGuestExit)
                }
                "vmscape" if line.contains("IBPB before exit to userspace") => {
                    (f.mitigations[0], Occurs::PerGuestExitToVmm)
                }
                "vmscape" if line.contains("IBPB on VMEXIT") => {
                    // Run by the other line's IBPB, priced there.
                    let other = mitbench::mitigations::Id::ReturnThunks;
                    assert!(
                        per(other, Occurs::PerGuestExit).is_some(),
                        "{}",
                        name(&tree)
                    );
                    assert!(why("vmscape").contains("covers it"), "{}", name(&tree));
                    seen.insert(line.to_string());
                    continue;
                }
                "vmscape" if line.contains("Clear BHB") => {
                    let why = why("vmscape");
                    assert!(
                        why.contains("branch-history") && why.contains("KVM host"),
                        "{why}"
                    );
                    seen.insert(line.to_string());
                    continue;
                }
                _ => continue,
            };
            seen.insert(line.to_string());
            let p = per(id, occurs)
                .unwrap_or_else(|| panic!("{}: {line}: no price {}", name(&tree), occurs.name()));
            assert!(p.price_ns.is_some(), "{}: {line} unpriced", name(&tree));
            assert_eq!(
                p.getpid_floor_ns,
                None,
                "{}: a syscall pays no exit",
                name(&tree)
            );
        }
    }
    for line in [
        "Mitigation: IBPB before exit to userspace",
        "Mitigation: IBPB on VMEXIT",
        "Mitigation: IBPB on VMEXIT only",
        "Mitigation: Clear BHB before exit to userspace",
    ] {
        assert!(seen.contains(line), "no tree prints {line:?}");
    }
}

#[test]
fn tax_names_each_mitigation_in_force_once() {
    for tree in trees() {
        let doc = run_on(&tree);
        let counted = common::syscalls_under_a_filter(1000);
        let named = mitbench::tax::named::in_force(&doc, &prices::of(&doc), &counted);
        let mut seen = BTreeSet::new();
        for n in &named {
            assert!(seen.insert(n.id), "{}: {} twice", name(&tree), n.mitigation);
        }
        for f in kernel::in_force(&doc.inventory.cpu.vulnerabilities) {
            for id in &f.mitigations {
                assert!(seen.contains(id), "{}: tax leaves out {id:?}", name(&tree));
            }
        }
    }
}

/// The matrix as docs/cpu-matrix.md shows it: per CPU, the lines in force,
/// the rows replayed and the mitigations said instead.
fn table() -> String {
    let mut out = String::from(
        "| CPU | in force (vulnerability: line) | replayed here | said instead |\n\
         |---|---|---|---|\n",
    );
    for tree in trees() {
        let doc = run_on(&tree);
        let (what, runs) = expected(&tree);
        let lines: Vec<String> = kernel::in_force(&doc.inventory.cpu.vulnerabilities)
            .iter()
            .map(|f| format!("{}: {}", f.vulnerability, f.line))
            .collect();
        let k = prices::of(&doc);
        let instead: Vec<String> = k
            .unreplayed
            .iter()
            .map(|u| format!("{} ({})", short(u.mitigation), u.vulnerabilities.join(", ")))
            .collect();
        let cell = |v: Vec<String>| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join("<br>")
            }
        };
        out.push_str(&format!(
            "| `{}`: {what} | {} | {} | {} |\n",
            name(&tree),
            cell(lines),
            cell(runs.into_iter().collect()),
            cell(instead)
        ));
    }
    out
}

#[test]
fn the_docs_table_is_generated_from_the_fixtures() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cpu-matrix.md");
    let doc = std::fs::read_to_string(&path).unwrap_or_default();
    let (begin, end) = ("<!-- matrix begin -->\n", "<!-- matrix end -->");
    let table = table();
    if std::env::var_os("MITBENCH_BLESS").is_some() {
        let (head, rest) = doc.split_once(begin).expect("a begin marker");
        let (_, tail) = rest.split_once(end).expect("an end marker");
        std::fs::write(&path, format!("{head}{begin}{table}{end}{tail}")).unwrap();
        return;
    }
    assert!(
        doc.contains(&format!("{begin}{table}{end}")),
        "docs/cpu-matrix.md is not the fixtures' table: MITBENCH_BLESS=1 cargo test --release \
         --test suite cpu_matrix writes it"
    );
}
