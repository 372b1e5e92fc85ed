//! The catalogue of mitigations mitbench knows, in one place: each
//! mitigation, the inventory entries that switch it, the probes it taxes
//! and why, with the document behind the entry ([`MITIGATIONS`]); the
//! kernel's own switches and the one rule for "in force" ([`kernel`]); the
//! process controls a task can set and the one rule for "on" ([`process`]).
//! Compare explains changes by it, the summary and the plan name what is in
//! force by it, attribute recognises boots and wrappers by it, and tax
//! names what a workload's tolls hold by it.

pub mod kernel;
pub mod process;

/// One mitigation mitbench knows.
#[derive(Debug, Clone, Copy)]
pub struct Mitigation {
    pub name: &'static str,
    /// Inventory keys (a vulnerability file, a command-line parameter, a
    /// kconfig option, a process control) whose change can switch it;
    /// matched as lower-case substrings of the changed key.
    pub switched_by: &'static [&'static str],
    /// Probe ids it taxes, as globs.
    pub taxes: &'static [&'static str],
    pub why: &'static str,
    pub source: &'static str,
}

/// Rows of probes that cross into the kernel at least once per item.
const KERNEL_CROSSINGS: &[&str] = &[
    "os/getpid",
    "os/clock_gettime",
    "os/ctxswitch",
    "os/thread",
    "os/fork",
    "os/exec",
    "memory/*",
    "syscall/*",
    "thread/*",
];

pub const MITIGATIONS: &[Mitigation] = &[
    Mitigation {
        name: "PTI (page-table isolation)",
        switched_by: &["meltdown", "pti", "page_table_isolation"],
        taxes: KERNEL_CROSSINGS,
        why: "every kernel entry and exit switches page tables (CR3), and without PCID flushes the TLB",
        source: "https://docs.kernel.org/arch/x86/pti.html",
    },
    Mitigation {
        name: "retpoline / IBRS / eIBRS",
        switched_by: &["spectre_v2", "retpoline", "ibrs"],
        taxes: KERNEL_CROSSINGS,
        why: "the kernel's indirect branches go through retpoline thunks, or run with IBRS set on entry",
        source: "https://docs.kernel.org/admin-guide/hw-vuln/spectre.html",
    },
    Mitigation {
        name: "return thunks / SRSO safe-RET",
        switched_by: &["retbleed", "spec_rstack_overflow", "rethunk", "srso"],
        taxes: KERNEL_CROSSINGS,
        why: "every kernel return goes through a return thunk; on AMD Zen the SRSO safe-RET sequence",
        source: "https://docs.kernel.org/admin-guide/hw-vuln/srso.html",
    },
    Mitigation {
        name: "RSB filling",
        switched_by: &["spectre_v2", "retbleed"],
        taxes: &[
            "os/ctxswitch",
            "os/thread",
            "os/fork",
            "os/exec",
            "thread/*",
        ],
        why: "the return stack buffer is refilled on context switch so user returns cannot be steered",
        source: "https://docs.kernel.org/admin-guide/hw-vuln/spectre.html",
    },
    Mitigation {
        name: "IBPB",
        switched_by: &["spectre_v2_user", "ibpb", "speculationindirectbranch"],
        taxes: &["os/ctxswitch", "os/fork", "os/exec", "thread/*"],
        why: "a prediction barrier on switches between tasks that may not share predictor state",
        source: "https://docs.kernel.org/admin-guide/hw-vuln/spectre.html",
    },
    Mitigation {
        name: "SSBD (speculative store bypass disable)",
        switched_by: &["spec_store_bypass", "ssbd", "speculation_store_bypass"],
        taxes: &[
            "syscall/specctrl-*",
            "indirect/pipeline-*",
            "cflags/*",
            "section/*",
        ],
        why: "loads wait for older stores' addresses: store-to-load heavy user code slows down",
        source: "https://docs.kernel.org/userspace-api/spec_ctrl.html",
    },
    Mitigation {
        name: "MDS / TAA / MMIO: VERW buffer clearing",
        switched_by: &[
            "mds",
            "tsx_async_abort",
            "mmio_stale_data",
            "reg_file_data_sampling",
            "md_clear",
        ],
        taxes: KERNEL_CROSSINGS,
        why: "VERW clears the CPU buffers on every return to user space",
        source: "https://docs.kernel.org/admin-guide/hw-vuln/mds.html",
    },
    Mitigation {
        name: "L1D flush",
        switched_by: &["l1tf", "l1d_flush"],
        taxes: &["os/ctxswitch", "thread/*"],
        why: "L1D is flushed on VM entry, or on switching to a task that asked for it",
        source: "https://docs.kernel.org/admin-guide/hw-vuln/l1d_flush.html",
    },
    Mitigation {
        name: "BHI (branch history clearing)",
        switched_by: &["spectre_bhi", "bhi"],
        taxes: KERNEL_CROSSINGS,
        why: "the branch history is cleared on syscall entry (or BHI_DIS_S set)",
        source: "https://docs.kernel.org/admin-guide/hw-vuln/spectre.html",
    },
    Mitigation {
        name: "seccomp filters",
        switched_by: &["seccomp"],
        taxes: KERNEL_CROSSINGS,
        why: "every syscall of the process runs each of its filters before the call",
        source: "https://docs.kernel.org/userspace-api/seccomp_filter.html",
    },
    Mitigation {
        name: "compiler hardening",
        switched_by: &["c_compiler", "rustc"],
        taxes: &["cflags/*", "indirect/*"],
        why: "the measured code itself was built otherwise (thunks, CFI, stack protection)",
        source: "https://gcc.gnu.org/onlinedocs/gcc/Instrumentation-Options.html",
    },
];

/// The mitigations a change of this inventory key can switch.
pub fn switched_by(key: &str) -> Vec<&'static Mitigation> {
    let key = key.to_ascii_lowercase();
    if key.ends_with("cmdline: mitigations") {
        // mitigations=off|auto|auto,nosmt switches them all.
        return MITIGATIONS
            .iter()
            .filter(|m| m.name != "seccomp filters" && m.name != "compiler hardening")
            .collect();
    }
    MITIGATIONS
        .iter()
        .filter(|m| m.switched_by.iter().any(|word| key.contains(word)))
        .collect()
}

/// Whether a mitigation taxes this probe.
pub fn taxes(mitigation: &Mitigation, probe: &str) -> bool {
    mitigation
        .taxes
        .iter()
        .any(|glob| wildmatch::WildMatch::new(glob).matches(probe))
}

/// The catalogue's entry of this name.
pub fn named(name: &str) -> Option<&'static Mitigation> {
    MITIGATIONS.iter().find(|m| m.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seccomp_change_explains_syscalls_and_not_user_code() {
        let found = switched_by("process: Seccomp_filters");
        assert_eq!(found.len(), 1);
        assert!(taxes(found[0], "os/getpid"));
        assert!(!taxes(found[0], "indirect/call"));
        assert!(!taxes(found[0], "section/crypto-1KiB"));
    }

    #[test]
    fn mitigations_off_switches_every_kernel_mitigation() {
        let found = switched_by("cmdline: mitigations");
        assert!(found.len() >= 8);
        assert!(found.iter().all(|m| m.name != "seccomp filters"));
    }

    #[test]
    fn every_entry_names_its_source() {
        for m in MITIGATIONS {
            assert!(m.source.starts_with("https://"), "{}", m.name);
            assert!(
                !m.taxes.is_empty() && !m.switched_by.is_empty(),
                "{}",
                m.name
            );
        }
    }
}
