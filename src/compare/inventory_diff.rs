//! What changed on the machine between two runs, entry by entry.

use crate::results::RunDocument;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Serialize)]
pub struct InventoryChange {
    /// e.g. "vulnerabilities: spectre_v2", "cmdline: nopti".
    pub key: String,
    pub old: String,
    pub new: String,
    /// A change that can move any row (kernel, microcode, CPU, hypervisor).
    pub moves_any_row: bool,
}

/// Every entry that differs, in a fixed order: identity of the kernel and
/// CPU first, then the command line, vulnerabilities, kconfig, and the
/// process's inherited controls.
pub fn inventory_changes(old: &RunDocument, new: &RunDocument) -> Vec<InventoryChange> {
    let (a, b) = (&old.inventory, &new.inventory);
    let mut changes = Vec::new();
    let mut single = |key: &str, old: &str, new: &str, broad: bool| {
        if old != new {
            changes.push(InventoryChange {
                key: key.to_string(),
                old: old.to_string(),
                new: new.to_string(),
                moves_any_row: broad,
            });
        }
    };
    single("kernel release", &a.kernel.release, &b.kernel.release, true);
    single("microcode", &a.cpu.microcode, &b.cpu.microcode, true);
    single("CPU model", &a.cpu.model_name, &b.cpu.model_name, true);
    single("hypervisor", &a.cpu.hypervisor, &b.cpu.hypervisor, true);
    single(
        "preemption model",
        &a.kernel.preemption.model,
        &b.kernel.preemption.model,
        true,
    );
    single(
        "C compiler (c_compiler)",
        &old.build.c_compiler,
        &new.build.c_compiler,
        false,
    );
    single("rustc", &old.build.rustc, &new.build.rustc, false);
    let words = |cmdline: &str| -> BTreeMap<String, String> {
        crate::inventory::mitigation_words(cmdline)
            .into_iter()
            .map(|w| match w.split_once('=') {
                Some((k, v)) => (k.to_string(), v.to_string()),
                None => (w, "set".to_string()),
            })
            .collect()
    };
    let mut maps =
        |prefix: &str, old: &BTreeMap<String, String>, new: &BTreeMap<String, String>| {
            let keys: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
            for key in keys {
                let get = |m: &BTreeMap<String, String>| {
                    m.get(key).cloned().unwrap_or_else(|| "absent".to_string())
                };
                let (o, n) = (get(old), get(new));
                if o != n {
                    changes.push(InventoryChange {
                        key: format!("{prefix}: {key}"),
                        old: o,
                        new: n,
                        moves_any_row: false,
                    });
                }
            }
        };
    maps(
        "cmdline",
        &words(&a.kernel.cmdline),
        &words(&b.kernel.cmdline),
    );
    maps(
        "vulnerabilities",
        &a.cpu.vulnerabilities,
        &b.cpu.vulnerabilities,
    );
    maps(
        "kconfig",
        &a.kernel.mitigation_config,
        &b.kernel.mitigation_config,
    );
    maps(
        "process",
        &a.identity.process_controls,
        &b.identity.process_controls,
    );
    changes
}
