//! The instruction sequences the kernel runs for its own mitigations, as
//! the `kernel/sequences` probe replays them in user mode: for each, the
//! catalogue's mitigation and vulnerability file, when in a crossing the
//! kernel runs it, the kernel source it follows, and where user mode had
//! to differ. A sequence's price times how often a crossing runs it is the
//! part of that crossing the mitigation takes at least (a floor), where
//! the count is known; where it is not, the price is per occurrence.

use super::Id;
use serde::Serialize;

/// When the kernel runs a sequence (JSON: its [`Occurs::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occurs {
    /// Once on every kernel entry from user mode.
    PerEntry,
    /// Once on every return to user mode.
    PerExit,
    /// Once on every context switch.
    PerSwitch,
    /// On every return inside the kernel: how many a crossing makes needs
    /// the function tracer or the kernel image, which these guests refuse.
    PerKernelReturn,
    /// On every indirect call or jump inside the kernel, likewise uncounted.
    PerKernelIndirectCall,
}

impl Occurs {
    /// Its name in JSON and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Occurs::PerEntry => "per-entry",
            Occurs::PerExit => "per-exit",
            Occurs::PerSwitch => "per-switch",
            Occurs::PerKernelReturn => "per-kernel-return",
            Occurs::PerKernelIndirectCall => "per-kernel-indirect-call",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Occurs::PerEntry => "at entry",
            Occurs::PerExit => "at exit",
            Occurs::PerSwitch => "per context switch",
            Occurs::PerKernelReturn => "per kernel return",
            Occurs::PerKernelIndirectCall => "per kernel indirect call",
        }
    }

    /// How many times one crossing of the null syscall runs it, where
    /// that is known: once for entry and exit, none for a switch (a
    /// syscall that does not block switches no task), unknown for the
    /// returns and calls inside.
    pub fn per_syscall(self) -> Option<u32> {
        match self {
            Occurs::PerEntry | Occurs::PerExit => Some(1),
            Occurs::PerSwitch => Some(0),
            Occurs::PerKernelReturn | Occurs::PerKernelIndirectCall => None,
        }
    }
}

impl Serialize for Occurs {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// How a row prices its sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Read {
    /// The row less its baseline (a call through the sequence against a
    /// plain one).
    AddedToBaseline,
    /// The row's own figure (one instruction timed alone).
    OwnCost,
    /// The row less another variant of its probe, both against the
    /// baseline: a call through a thunk against the plain indirect call it
    /// stands in for.
    AddedTo(&'static str),
}

/// One sequence of the price list.
#[derive(Debug, Clone, Copy)]
pub struct Sequence {
    /// Its variant of `kernel/sequences`, or the row elsewhere that
    /// already prices it (`indirect/call retpoline`).
    pub row: (&'static str, &'static str),
    pub read: Read,
    /// How many times one item of the row runs it (a round trip between
    /// processes switches twice).
    pub per_item: u32,
    /// The catalogue's mitigation ([`super::MITIGATIONS`]), whose
    /// vulnerability files say whether the kernel runs it.
    pub mitigation: Id,
    /// Words of a file's line that say it runs; empty: the mitigation
    /// being in force is enough.
    pub when_line_says: &'static [&'static str],
    /// CPU vendors (cpuinfo's `vendor_id`) the kernel runs it on; empty:
    /// every vendor whose line says it runs.
    pub vendors: &'static [&'static str],
    pub occurs: Occurs,
    /// The process control that asks the kernel to run it, where a task
    /// asks (else the boot decides).
    pub asked_by: Option<&'static str>,
    /// The kernel source it follows: file and symbol.
    pub source: &'static str,
    /// Where the user-mode replay differs from the kernel's, if anywhere.
    pub user_mode: &'static str,
}

impl Sequence {
    /// The vulnerability files of its mitigation.
    pub fn files(&self) -> &'static [&'static str] {
        self.mitigation.entry().files
    }
}

/// The probe that replays the sequences.
pub const PROBE: &str = "kernel/sequences";

/// Its baseline: a call to a function that returns at once.
pub const PLAIN_RETURN: &str = "call+ret";

pub const SEQUENCES: &[Sequence] = &[
    Sequence {
        row: (PROBE, "srso-untrain"),
        read: Read::AddedToBaseline,
        per_item: 1,
        mitigation: Id::ReturnThunks,
        when_line_says: &["Safe RET"],
        vendors: &["AuthenticAMD", "HygonGenuine"],
        occurs: Occurs::PerEntry,
        asked_by: None,
        source: "arch/x86/lib/retpoline.S: srso_alias_untrain_ret (Zen 3/4; srso_untrain_ret \
                 on Zen 1/2), called by UNTRAIN_RET at entry (asm/nospec-branch.h)",
        user_mode: "the untraining and the safe return at addresses 2^2+2^8+2^14+2^20 apart, \
                    as the kernel's linker script places them",
    },
    Sequence {
        row: (PROBE, "srso-return-thunk"),
        read: Read::AddedToBaseline,
        per_item: 1,
        mitigation: Id::ReturnThunks,
        when_line_says: &["Safe RET"],
        vendors: &["AuthenticAMD", "HygonGenuine"],
        occurs: Occurs::PerKernelReturn,
        asked_by: None,
        source: "arch/x86/lib/retpoline.S: srso_alias_return_thunk -> srso_alias_safe_ret, \
                 which every kernel `ret` jumps to",
        user_mode: "",
    },
    Sequence {
        row: (PROBE, "its-indirect-thunk"),
        read: Read::AddedTo("indirect-call"),
        per_item: 1,
        mitigation: Id::ItsThunks,
        when_line_says: &["Aligned branch/return thunks"],
        vendors: &["GenuineIntel"],
        occurs: Occurs::PerKernelIndirectCall,
        asked_by: None,
        source: "arch/x86/lib/retpoline.S: __x86_indirect_its_thunk_<reg> (`jmp *%reg` in the \
                 upper half of a cache line), called for every kernel `call *%reg` in a \
                 line's lower half",
        user_mode: "",
    },
    Sequence {
        row: (PROBE, "its-return-thunk"),
        read: Read::AddedToBaseline,
        per_item: 1,
        mitigation: Id::ItsThunks,
        when_line_says: &["Aligned branch/return thunks"],
        vendors: &["GenuineIntel"],
        occurs: Occurs::PerKernelReturn,
        asked_by: None,
        source: "arch/x86/lib/retpoline.S: its_return_thunk (`ret; int3` in the upper half of \
                 a cache line), jumped to by every kernel `ret` in a line's lower half",
        user_mode: "",
    },
    Sequence {
        row: (PROBE, "rsb-fill"),
        read: Read::AddedToBaseline,
        per_item: 1,
        mitigation: Id::RsbFilling,
        when_line_says: &["RSB filling"],
        vendors: &[],
        occurs: Occurs::PerSwitch,
        asked_by: None,
        source: "asm/nospec-branch.h: __FILL_RETURN_BUFFER(reg, RSB_CLEAR_LOOPS), from \
                 __switch_to_asm (arch/x86/entry/entry_64.S)",
        user_mode: "",
    },
    Sequence {
        row: ("syscall/specctrl-switch", "indirect_branch=disable"),
        read: Read::AddedToBaseline,
        per_item: 2,
        mitigation: Id::Ibpb,
        when_line_says: &["IBPB: conditional", "IBPB: always-on"],
        vendors: &[],
        occurs: Occurs::PerSwitch,
        asked_by: Some("prctl(PR_SET_SPECULATION_CTRL, PR_SPEC_INDIRECT_BRANCH, PR_SPEC_DISABLE)"),
        source: "arch/x86/mm/tlb.c: cond_mitigation -> indirect_branch_prediction_barrier, \
                 on a switch of address space to or from a task that set \
                 PR_SPEC_INDIRECT_BRANCH (always, with IBPB: always-on)",
        user_mode: "not replayed (IBPB is an MSR write a process cannot make): a round trip \
                    to another process with the control set, less one without, halved",
    },
    Sequence {
        row: ("indirect/call", "retpoline"),
        read: Read::AddedToBaseline,
        per_item: 1,
        mitigation: Id::Retpoline,
        when_line_says: &["Retpolines"],
        vendors: &[],
        occurs: Occurs::PerKernelIndirectCall,
        asked_by: None,
        source: "arch/x86/lib/retpoline.S: __x86_indirect_thunk_<reg>, for every `call *%reg`",
        user_mode: "gcc's thunk (src/thunks.rs), the kernel's sequence",
    },
    Sequence {
        row: ("indirect/barrier", "verw"),
        read: Read::OwnCost,
        per_item: 1,
        mitigation: Id::VerwClearing,
        when_line_says: &[],
        vendors: &[],
        occurs: Occurs::PerExit,
        asked_by: None,
        source: "asm/nospec-branch.h: CLEAR_CPU_BUFFERS (verw x86_verw_sel), before sysret/iret",
        user_mode: "VERW of the user stack segment's selector (the kernel's is __KERNEL_DS); \
                    it clears buffers only where the CPU has MD_CLEAR",
    },
    Sequence {
        row: (PROBE, "bhb-clear"),
        read: Read::AddedToBaseline,
        per_item: 1,
        mitigation: Id::BhiClearing,
        when_line_says: &["BHI: SW loop"],
        vendors: &[],
        occurs: Occurs::PerEntry,
        asked_by: None,
        source: "arch/x86/entry/entry_64.S: clear_bhb_loop (5 x 5) and the LFENCE after it \
                 (CLEAR_BRANCH_HISTORY)",
        user_mode: "",
    },
    Sequence {
        row: ("indirect/barrier", "lfence"),
        read: Read::OwnCost,
        per_item: 1,
        mitigation: Id::SpectreV1Barriers,
        when_line_says: &["swapgs barriers"],
        vendors: &["GenuineIntel"],
        occurs: Occurs::PerEntry,
        asked_by: None,
        source: "arch/x86/entry/calling.h: FENCE_SWAPGS_USER_ENTRY, an LFENCE after SWAPGS \
                 where the CPU has the SWAPGS bug",
        user_mode: "",
    },
];

/// How [`runs_here`]'s reason starts where the CPU's vendor is why.
pub const NOT_ON_THIS_CPU: &str = "not run on this CPU";

/// Whether the running kernel runs `s`, by its vulnerability files' lines
/// (name -> text) and the CPU's vendor: Ok, or why not.
pub fn runs_here(
    s: &Sequence,
    vulnerabilities: &std::collections::BTreeMap<String, String>,
    vendor: &str,
) -> Result<(), String> {
    let files = s.files();
    let lines: Vec<(&str, &str)> = files
        .iter()
        .filter_map(|f| Some((*f, vulnerabilities.get(*f)?.as_str())))
        .filter(|(_, line)| super::kernel::mitigated(line))
        .collect();
    if lines.is_empty() {
        return Err(format!(
            "not in force here: {} says no mitigation",
            files.join(", ")
        ));
    }
    let said = lines.iter().any(|(_, line)| {
        s.when_line_says.is_empty() || s.when_line_says.iter().any(|w| line.contains(w))
    });
    if !said {
        let (file, line) = lines[0];
        return Err(format!("not in force here: {file} says \"{line}\""));
    }
    if !s.vendors.is_empty() && !s.vendors.contains(&vendor) {
        return Err(format!(
            "{NOT_ON_THIS_CPU}: the kernel runs it on {} only",
            s.vendors.join(", ")
        ));
    }
    Ok(())
}

/// The AMD EPYC guest's vulnerability lines (family 25, kernel 6.18), for
/// tests.
#[cfg(test)]
pub(crate) const AMD_GUEST: &[(&str, &str)] = &[
    ("spec_rstack_overflow", "Vulnerable: Safe RET, no microcode"),
    (
        "spectre_v1",
        "Mitigation: usercopy/swapgs barriers and __user pointer sanitization",
    ),
    (
        "spectre_v2",
        "Mitigation: Retpolines; STIBP: disabled; RSB filling; BHI: Not affected",
    ),
    ("mds", "Not affected"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mitigations::lines_of as lines;

    #[test]
    fn every_sequence_names_vulnerability_files_and_its_source() {
        // The price list joins its entries to the vulnerability files by
        // the catalogue's key (a misspelt key does not compile): a
        // mitigation without a file would join to nothing.
        for s in SEQUENCES {
            let m = s.mitigation.entry();
            assert!(!m.files.is_empty(), "{}: {} has no file", s.row.1, m.name);
            assert!(s.source.contains(": "), "{}: a file and a symbol", s.row.1);
        }
    }

    #[test]
    fn this_amd_guests_lines_run_the_safe_ret_and_not_the_intel_barrier() {
        let here = lines(AMD_GUEST);
        let runs = |variant: &str| {
            let s = SEQUENCES.iter().find(|s| s.row.1 == variant).unwrap();
            runs_here(s, &here, "AuthenticAMD")
        };
        assert!(runs("srso-untrain").is_ok());
        assert!(runs("rsb-fill").is_ok());
        assert!(runs("retpoline").is_ok());
        assert!(
            runs("lfence")
                .unwrap_err()
                .starts_with("not run on this CPU")
        );
        assert!(
            runs("bhb-clear")
                .unwrap_err()
                .starts_with("not in force here")
        );
        assert!(runs("verw").unwrap_err().starts_with("not in force here"));
    }
}
