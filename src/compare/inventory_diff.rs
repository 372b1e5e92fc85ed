//! What changed on the machine between two runs, entry by entry.

use crate::inventory::hooks::{self, Hooks};
use crate::store::results::RunDocument;
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

impl InventoryChange {
    /// The hook this change is to ("trace events enabled", "audit"), None
    /// where it is not to a hook.
    pub fn hook(&self) -> Option<&str> {
        self.key.strip_prefix(HOOKS)
    }

    /// "hook: old -> new", None where it is not to a hook.
    pub fn hook_change(&self) -> Option<String> {
        Some(format!("{}: {} -> {}", self.hook()?, self.old, self.new))
    }
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
    changes.extend(hook_changes(&a.hooks, &b.hooks));
    changes
}

/// The prefix of a change to a hook on the syscall path or the kernel's
/// text: what a level shift names as its likely cause.
pub const HOOKS: &str = "hooks: ";

/// Each hook reading that differs where both runs read it (a run before
/// the hooks were read, or one that could not read tracefs, says nothing
/// of them). Any row can move with a hook: every syscall pays a syscall
/// event, every kernel function a tracer, a kprobe or a livepatch the
/// code it hooks.
fn hook_changes(a: &Hooks, b: &Hooks) -> Vec<InventoryChange> {
    let listed = |list: &Vec<String>| hooks::listed(list);
    let pairs = [
        (
            "trace events enabled",
            a.trace_events.read().map(listed),
            b.trace_events.read().map(listed),
        ),
        ("tracer", a.tracer.read().cloned(), b.tracer.read().cloned()),
        (
            "dynamic events",
            a.dynamic_events.read().map(listed),
            b.dynamic_events.read().map(listed),
        ),
        (
            "livepatches",
            a.livepatches.read().map(listed),
            b.livepatches.read().map(listed),
        ),
        (
            "audit",
            a.audit.read().map(ToString::to_string),
            b.audit.read().map(ToString::to_string),
        ),
        (
            "BPF programs",
            a.bpf_programs.read().map(|p| hooks::listed(p)),
            b.bpf_programs.read().map(|p| hooks::listed(p)),
        ),
    ];
    pairs
        .into_iter()
        .filter_map(|(what, old, new)| match (old, new) {
            (Some(old), Some(new)) if old != new => Some(InventoryChange {
                key: format!("{HOOKS}{what}"),
                old,
                new,
                moves_any_row: true,
            }),
            _ => None,
        })
        .collect()
}
