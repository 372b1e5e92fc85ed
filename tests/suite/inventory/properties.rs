//! Every reader of text mitbench does not control, fed arbitrary bytes and
//! truncations and mutations of real fixtures: each gives a value or a
//! clear error, never a panic. The machine's files go through the whole
//! inventory (the code that reads a live machine), so every parser behind
//! it is exercised: cpuinfo, vulnerabilities, the command line, kconfig
//! plain and gzipped, the kernel log, CPU lists, process status and cgroup
//! lines. Run documents and history databases go through their readers.
//!
//! Cases per property: `MITBENCH_PROPTEST_CASES`, default 1,000 (CI);
//! docs/requirements.md gives the 10,000-case run.

use crate::common;

use mitbench::inventory::Inventory;
use mitbench::store::history::History;
use mitbench::store::results::load::document_from_str;
use proptest::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};

fn cases() -> u32 {
    std::env::var("MITBENCH_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Arbitrary bytes, or a real file truncated, with bytes overwritten, or
/// with bytes inserted: most inputs stay close enough to the real format
/// to reach deep into its parser.
fn mutations(real: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    let len = real.len().max(1);
    let truncated = {
        let real = real.clone();
        (0..=len).prop_map(move |n| real[..n.min(real.len())].to_vec())
    };
    let overwritten = {
        let real = real.clone();
        proptest::collection::vec((0..len, any::<u8>()), 1..16).prop_map(move |edits| {
            let mut bytes = real.clone();
            for (at, byte) in edits {
                if let Some(b) = bytes.get_mut(at) {
                    *b = byte;
                }
            }
            bytes
        })
    };
    let inserted = {
        let real = real.clone();
        (0..=len, proptest::collection::vec(any::<u8>(), 1..64)).prop_map(move |(at, junk)| {
            let mut bytes = real.clone();
            let at = at.min(bytes.len());
            bytes.splice(at..at, junk);
            bytes
        })
    };
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..2048),
        truncated,
        overwritten,
        inserted,
    ]
}

/// A copy of a fixture tree a property may overwrite files in.
struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Tree {
    fn of(fixture: &str) -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        common::copy_tree(&Path::new("tests/fixtures").join(fixture), &root);
        Tree { _dir: dir, root }
    }

    fn real(&self, file: &str) -> Vec<u8> {
        std::fs::read(self.root.join(file)).unwrap()
    }

    /// Writes `bytes` as `file` and takes the inventory; the inventory must
    /// also serialize (the JSON is what a user gets).
    fn inventory_with(&self, file: &str, bytes: &[u8]) {
        let path = self.root.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        let inventory = Inventory::collect(&self.root);
        serde_json::to_string(&inventory).unwrap();
        mitbench::export::inventory::render(&inventory);
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut text = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(bytes), &mut text).unwrap();
    text
}

/// One property per machine file: the file replaced by each case.
macro_rules! machine_file {
    ($name:ident, $fixture:literal, $file:literal) => {
        #[test]
        fn $name() {
            let tree = Tree::of($fixture);
            let real = tree.real($file);
            proptest!(config(), |(bytes in mutations(real.clone()))| {
                tree.inventory_with($file, &bytes);
            });
        }
    };
}

machine_file!(cpuinfo, "amd-epyc-vm", "proc/cpuinfo");
machine_file!(command_line, "amd-epyc-vm", "proc/cmdline");
machine_file!(
    vulnerabilities,
    "amd-epyc-vm",
    "sys/devices/system/cpu/vulnerabilities/spectre_v2"
);
machine_file!(kernel_log, "amd-epyc-vm", "var/log/dmesg");
machine_file!(cpu_list, "amd-epyc-vm", "sys/devices/system/cpu/online");
machine_file!(process_status, "amd-epyc-vm", "proc/self/status");
machine_file!(
    kconfig_plain,
    "intel-pti-ibrs",
    "boot/config-5.15.0-91-generic"
);

/// The gzipped config: its text mutated then compressed (reaching the
/// kconfig parser), or its compressed bytes mutated (reaching the
/// decompressor).
#[test]
fn kconfig_gzip() {
    let tree = Tree::of("amd-epyc-vm");
    let compressed = tree.real("proc/config.gz");
    let text = gunzip(&compressed);
    proptest!(config(), |(bytes in prop_oneof![
        mutations(text.clone()).prop_map(|t| gzip(&t)),
        mutations(compressed.clone()),
    ])| {
        tree.inventory_with("proc/config.gz", &bytes);
    });
}

#[test]
fn run_documents() {
    let real = std::fs::read(common::fixture_path("run-a.json")).unwrap();
    proptest!(config(), |(bytes in mutations(real.clone()))| {
        let text = String::from_utf8_lossy(&bytes);
        let _ = document_from_str(&text, "a mutated run");
    });
}

/// A database someone else wrote, or one damaged on disk: opening it,
/// listing it and loading each run give a value or an error.
#[test]
fn history_databases() {
    let dir = tempfile::tempdir().unwrap();
    let real_path = dir.path().join("real.sqlite");
    {
        let doc = common::stored_run("run-a.json");
        let mut history = History::open(&real_path, true).unwrap();
        history.store(&doc).unwrap();
    }
    let real = std::fs::read(&real_path).unwrap();
    let path = dir.path().join("case.sqlite");
    proptest!(config(), |(bytes in mutations(real.clone()))| {
        std::fs::write(&path, &bytes).unwrap();
        let _ = std::fs::remove_file(dir.path().join("case.sqlite-journal"));
        if let Ok(history) = History::open(&path, false)
            && let Ok(runs) = history.list()
        {
            for run in runs {
                let _ = history.load(run.id);
            }
        }
    });
}
