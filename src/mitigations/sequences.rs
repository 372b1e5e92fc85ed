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
    /// On a kernel return that finds call-depth tracking's count run out
    /// (after the count's reset at entry, or a chain of more returns than
    /// the count's twelve calls): likewise uncounted.
    PerCallDepthUnderflow,
    /// On every exit of a guest to this kernel as its KVM host: a host's
    /// own crossings never run it.
    PerGuestExit,
    /// On the first return to user mode after a guest's exit, where the
    /// exit is handled by the VMM in user space (an I/O port, MMIO).
    PerGuestExitToVmm,
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
            Occurs::PerCallDepthUnderflow => "per-call-depth-underflow",
            Occurs::PerGuestExit => "per-guest-exit",
            Occurs::PerGuestExitToVmm => "per-guest-exit-to-vmm",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Occurs::PerEntry => "at entry",
            Occurs::PerExit => "at exit",
            Occurs::PerSwitch => "per context switch",
            Occurs::PerKernelReturn => "per kernel return",
            Occurs::PerKernelIndirectCall => "per kernel indirect call",
            Occurs::PerCallDepthUnderflow => "per underflow of the call count",
            Occurs::PerGuestExit => "per exit of a guest (a KVM host's)",
            Occurs::PerGuestExitToVmm => "per exit of a guest its VMM handles (a KVM host's)",
        }
    }

    /// How many times one crossing of the null syscall runs it, where
    /// that is known: once for entry and exit, none for a switch (a
    /// syscall that does not block switches no task, nor does it leave a
    /// guest), unknown for the returns and calls inside.
    pub fn per_syscall(self) -> Option<u32> {
        match self {
            Occurs::PerEntry | Occurs::PerExit => Some(1),
            Occurs::PerSwitch | Occurs::PerGuestExit | Occurs::PerGuestExitToVmm => Some(0),
            Occurs::PerKernelReturn
            | Occurs::PerKernelIndirectCall
            | Occurs::PerCallDepthUnderflow => None,
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
    /// Words of a line of its files that say the kernel runs another
    /// sequence in its place (SRSO's safe return replaces retbleed's
    /// untrained one on Zen 1/2); empty: none does.
    pub unless_line_says: &'static [&'static str],
    /// CPU vendors (cpuinfo's `vendor_id`) the kernel runs it on; empty:
    /// every vendor whose line says it runs.
    pub vendors: &'static [&'static str],
    /// CPU families (cpuinfo's `cpu family`) it runs on: the kernel picks
    /// SRSO's aliased pair on Zen 3/4 (family 25) and the plain one on
    /// Zen 1/2 (23, and Hygon's 24); empty: every family.
    pub families: &'static [&'static str],
    /// The bug cpuinfo must list for the kernel to run it, where the lines
    /// do not say (the SWAPGS fence: spectre_v1's line reads alike on a
    /// CPU without the SWAPGS bug); judged only where cpuinfo lists bugs.
    pub cpu_bug: Option<&'static str>,
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

/// The CPU families of AMD's Zen 1/2 (Hygon's Dhyana is 24) and Zen 3/4.
const ZEN_1_2: &[&str] = &["23", "24"];
const ZEN_3_4: &[&str] = &["25"];

/// The probe that replays the sequences.
pub const PROBE: &str = "kernel/sequences";

/// Its baseline: a call to a function that returns at once.
pub const PLAIN_RETURN: &str = "call+ret";

/// What AMD's return sequences share: a call through the sequence against
/// the plain one, for the return thunks' mitigation, where the SRSO line
/// says the kernel runs its safe return, on Zen 1/2 (each entry below says
/// where it differs).
const SAFE_RET: Sequence = Sequence {
    row: (PROBE, ""),
    read: Read::AddedToBaseline,
    per_item: 1,
    mitigation: Id::ReturnThunks,
    when_line_says: &["Safe RET"],
    unless_line_says: &[],
    vendors: &["AuthenticAMD", "HygonGenuine"],
    families: ZEN_1_2,
    cpu_bug: None,
    occurs: Occurs::PerEntry,
    asked_by: None,
    source: "",
    user_mode: "",
};

/// What Intel's ITS thunks share: where the ITS line says the kernel
/// aligns its branches and returns into thunks.
const ITS_THUNK: Sequence = Sequence {
    row: (PROBE, ""),
    read: Read::AddedToBaseline,
    per_item: 1,
    mitigation: Id::ItsThunks,
    when_line_says: &["Aligned branch/return thunks"],
    unless_line_says: &[],
    vendors: &["GenuineIntel"],
    families: &[],
    cpu_bug: None,
    occurs: Occurs::PerKernelReturn,
    asked_by: None,
    source: "",
    user_mode: "",
};

/// What Intel's call-depth tracking shares: where retbleed's line says the
/// kernel stuffs the return stack (retbleed=stuff, Skylake-era cores); on
/// every kernel return, as ITS's thunks.
const CALL_DEPTH: Sequence = Sequence {
    mitigation: Id::ReturnThunks,
    when_line_says: &["Stuffing"],
    user_mode: "the count in a thread-local variable reached through %fs, where the kernel \
                keeps a per-CPU one reached through %gs",
    ..ITS_THUNK
};

/// The IBPB a task asks for on its switches of address space, priced by a
/// round trip to another process with the control set; the IBPB on every
/// entry is priced by it too.
const IBPB_ON_SWITCH: Sequence = Sequence {
    row: ("syscall/specctrl-switch", "indirect_branch=disable"),
    read: Read::AddedToBaseline,
    per_item: 2,
    mitigation: Id::Ibpb,
    when_line_says: &["IBPB: conditional", "IBPB: always-on"],
    unless_line_says: &[],
    vendors: &[],
    families: &[],
    cpu_bug: None,
    occurs: Occurs::PerSwitch,
    asked_by: Some("prctl(PR_SET_SPECULATION_CTRL, PR_SPEC_INDIRECT_BRANCH, PR_SPEC_DISABLE)"),
    source: "arch/x86/mm/tlb.c: cond_mitigation -> indirect_branch_prediction_barrier, \
             on a switch of address space to or from a task that set \
             PR_SPEC_INDIRECT_BRANCH (always, with IBPB: always-on)",
    user_mode: "not replayed (IBPB is an MSR write a process cannot make): a round trip \
                to another process with the control set, less one without, halved",
};

/// The same IBPB where the boot, not a task, asks for it (on entry, on a
/// guest's exit, before the return to the VMM): priced by the one a switch
/// pays, the instruction measured another way.
const IBPB_THE_KERNEL_ASKS: Sequence = Sequence {
    unless_line_says: &[],
    asked_by: None,
    user_mode: "not replayed (an MSR write): the IBPB a switch of address space pays \
                (syscall/specctrl-switch), halved, stands for it",
    ..IBPB_ON_SWITCH
};

pub const SEQUENCES: &[Sequence] = &[
    Sequence {
        row: (PROBE, "srso-untrain"),
        vendors: &["AuthenticAMD"],
        families: ZEN_3_4,
        source: "arch/x86/lib/retpoline.S: srso_alias_untrain_ret (Zen 3/4), called by \
                 UNTRAIN_RET at entry (asm/nospec-branch.h)",
        user_mode: "the untraining and the safe return at addresses 2^2+2^8+2^14+2^20 apart, \
                    as the kernel's linker script places them",
        ..SAFE_RET
    },
    Sequence {
        row: (PROBE, "srso-return-thunk"),
        vendors: &["AuthenticAMD"],
        families: ZEN_3_4,
        occurs: Occurs::PerKernelReturn,
        source: "arch/x86/lib/retpoline.S: srso_alias_return_thunk -> srso_alias_safe_ret, \
                 which every kernel `ret` jumps to",
        ..SAFE_RET
    },
    Sequence {
        row: (PROBE, "srso-untrain-zen1-2"),
        source: "arch/x86/lib/retpoline.S: srso_untrain_ret (Zen 1/2): a MOVABS whose \
                 immediate is srso_safe_ret (on a 64-byte boundary), LFENCE, a call to that \
                 safe return; called by UNTRAIN_RET at entry",
        ..SAFE_RET
    },
    Sequence {
        row: (PROBE, "srso-return-thunk-zen1-2"),
        occurs: Occurs::PerKernelReturn,
        source: "arch/x86/lib/retpoline.S: srso_return_thunk -> srso_safe_ret (Zen 1/2), \
                 which every kernel `ret` jumps to",
        ..SAFE_RET
    },
    // Zen 1/2's retbleed untraining, where SRSO's safe return does not
    // take its place (SRSO mitigated by SMT being off, or not at all).
    Sequence {
        row: (PROBE, "retbleed-untrain"),
        when_line_says: &["untrained return thunk"],
        unless_line_says: &["Safe RET"],
        families: &[],
        source: "arch/x86/lib/retpoline.S: retbleed_untrain_ret (Zen 1/2): TEST $0xcc, %bl \
                 whose ModRM byte is retbleed_return_thunk's `ret` (on a 64-byte boundary), \
                 LFENCE, a jump back to that `ret`; called by UNTRAIN_RET at entry",
        ..SAFE_RET
    },
    Sequence {
        row: (PROBE, "retbleed-return-thunk"),
        when_line_says: &["untrained return thunk"],
        unless_line_says: &["Safe RET"],
        families: &[],
        occurs: Occurs::PerKernelReturn,
        source: "arch/x86/lib/retpoline.S: retbleed_return_thunk, a plain `ret` on a 64-byte \
                 boundary, which every kernel `ret` jumps to",
        ..SAFE_RET
    },
    Sequence {
        row: (PROBE, "its-indirect-thunk"),
        read: Read::AddedTo("indirect-call"),
        occurs: Occurs::PerKernelIndirectCall,
        source: "arch/x86/lib/retpoline.S: __x86_indirect_its_thunk_<reg> (`jmp *%reg` in the \
                 upper half of a cache line), called for every kernel `call *%reg` in a \
                 line's lower half",
        user_mode: "",
        ..ITS_THUNK
    },
    Sequence {
        row: (PROBE, "its-return-thunk"),
        occurs: Occurs::PerKernelReturn,
        source: "arch/x86/lib/retpoline.S: its_return_thunk (`ret; int3` in the upper half of \
                 a cache line), jumped to by every kernel `ret` in a line's lower half",
        user_mode: "",
        ..ITS_THUNK
    },
    Sequence {
        row: (PROBE, "call-depth-accounting"),
        source: "arch/x86/kernel/callthunks.c: the call thunk before every function \
                 (INCREMENT_CALL_DEPTH: sarq $5 of the count), and arch/x86/lib/retpoline.S: \
                 call_depth_return_thunk's shlq $5 and test, which every kernel `ret` jumps to",
        ..CALL_DEPTH
    },
    Sequence {
        row: (PROBE, "call-depth-stuffing"),
        occurs: Occurs::PerCallDepthUnderflow,
        source: "arch/x86/lib/retpoline.S: call_depth_return_thunk when the count shifts to \
                 zero: 16 calls stuff the return stack, the stack pointer restored, the count \
                 credited (CREDIT_CALL_DEPTH)",
        ..CALL_DEPTH
    },
    Sequence {
        row: (PROBE, "rsb-fill"),
        read: Read::AddedToBaseline,
        per_item: 1,
        mitigation: Id::RsbFilling,
        when_line_says: &["RSB filling"],
        unless_line_says: &[],
        vendors: &[],
        families: &[],
        cpu_bug: None,
        occurs: Occurs::PerSwitch,
        asked_by: None,
        source: "asm/nospec-branch.h: __FILL_RETURN_BUFFER(reg, RSB_CLEAR_LOOPS), from \
                 __switch_to_asm (arch/x86/entry/entry_64.S)",
        user_mode: "",
    },
    IBPB_ON_SWITCH,
    // The same barrier on every entry (retbleed=ibpb, spec_rstack_overflow=
    // ibpb).
    Sequence {
        mitigation: Id::ReturnThunks,
        when_line_says: &["Mitigation: IBPB"],
        unless_line_says: &["VMEXIT"],
        occurs: Occurs::PerEntry,
        source: "arch/x86/entry/entry_64.S: entry_ibpb, from UNTRAIN_RET on every entry \
                 (X86_FEATURE_ENTRY_IBPB)",
        ..IBPB_THE_KERNEL_ASKS
    },
    // The same barrier where this kernel is a KVM host: on each exit of a
    // guest (retbleed=ibpb and spec_rstack_overflow=ibpb ask for it there
    // and on entry, =ibpb-vmexit there only), or before the first return
    // to the VMM after one (VMSCAPE). A host's own syscalls never run it;
    // what its guests pay is the price times their exits.
    Sequence {
        mitigation: Id::ReturnThunks,
        when_line_says: &["Mitigation: IBPB"],
        occurs: Occurs::PerGuestExit,
        source: "asm/nospec-branch.h: UNTRAIN_RET_VM after each #VMEXIT \
                 (arch/x86/kvm/svm/vmenter.S), an IBPB where X86_FEATURE_IBPB_ON_VMEXIT",
        ..IBPB_THE_KERNEL_ASKS
    },
    Sequence {
        mitigation: Id::Vmscape,
        when_line_says: &["IBPB before exit to userspace"],
        occurs: Occurs::PerGuestExitToVmm,
        source: "asm/entry-common.h: arch_exit_to_user_mode_prepare, an IBPB where KVM set \
                 x86_ibpb_exit_to_user on a guest's exit (X86_FEATURE_IBPB_EXIT_TO_USER)",
        ..IBPB_THE_KERNEL_ASKS
    },
    Sequence {
        row: ("indirect/call", "retpoline"),
        read: Read::AddedToBaseline,
        per_item: 1,
        mitigation: Id::Retpoline,
        when_line_says: &["Retpolines"],
        unless_line_says: &[],
        vendors: &[],
        families: &[],
        cpu_bug: None,
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
        unless_line_says: &[],
        vendors: &[],
        families: &[],
        cpu_bug: None,
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
        unless_line_says: &[],
        vendors: &[],
        families: &[],
        cpu_bug: None,
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
        when_line_says: &["usercopy/swapgs barriers"],
        unless_line_says: &[],
        vendors: &["GenuineIntel"],
        families: &[],
        cpu_bug: Some("swapgs"),
        occurs: Occurs::PerEntry,
        asked_by: None,
        source: "arch/x86/entry/calling.h: FENCE_SWAPGS_USER_ENTRY, an LFENCE after SWAPGS \
                 where the CPU has the SWAPGS bug",
        user_mode: "",
    },
];

/// Whether `s` is what `file`'s `line` asks the kernel to run: one of its
/// mitigation's files, and its words in the line (or none needed).
pub fn runs_for(s: &Sequence, file: &str, line: &str) -> bool {
    s.files().contains(&file)
        && (s.when_line_says.is_empty() || s.when_line_says.iter().any(|w| line.contains(w)))
        && !s.unless_line_says.iter().any(|w| line.contains(w))
}

/// Why a mitigation in force has no sequence a user-mode replay prices:
/// what the kernel does instead, and what would price it. Keyed by its
/// vulnerability file and words of the line (bugs.c's strings as of 6.18);
/// the first entry that matches gives the reason, and a line none matches
/// gets [`why_no_replay`]'s from the catalogue.
pub struct NoReplay {
    pub file: &'static str,
    pub line_says: &'static str,
    pub why: &'static str,
}

pub const NO_REPLAY: &[NoReplay] = &[
    NoReplay {
        file: "spec_rstack_overflow",
        line_says: "SMT disabled",
        why: "SMT off is the mitigation: nothing runs on a crossing, it costs the sibling \
              threads the cores do not run",
    },
    NoReplay {
        file: "vmscape",
        line_says: "IBPB on VMEXIT",
        why: "the IBPB on every exit of a guest that retbleed's or SRSO's mitigation runs \
              covers it: priced on their line, per exit",
    },
    NoReplay {
        file: "vmscape",
        line_says: "Clear BHB",
        why: "the branch-history clearing loop, without its LFENCE, before the host's \
              first return to its VMM after a guest's exit (the BHB-clear series, on CPUs \
              with BHI_CTRL): only a KVM host's VMM pays, per exit it handles; not \
              replayed (kernel/sequences bhb-clear is the loop with the LFENCE of entry)",
    },
    NoReplay {
        file: "spec_rstack_overflow",
        line_says: "Reduced Speculation",
        why: "a predictor control the host sets for its guests: nothing runs on this \
              kernel's crossings",
    },
    NoReplay {
        file: "spec_rstack_overflow",
        line_says: "IBPB",
        why: IBPB_AT_ENTRY,
    },
    NoReplay {
        file: "spec_rstack_overflow",
        line_says: "Microcode",
        why: "microcode only (it extends IBPB): nothing runs on a crossing",
    },
    NoReplay {
        file: "retbleed",
        line_says: "IBPB",
        why: IBPB_AT_ENTRY,
    },
    // Zen 1/2 under SRSO's Safe RET: srso_untrain_ret untrains for both.
    NoReplay {
        file: "retbleed",
        line_says: "untrained return thunk",
        why: "SRSO's safe return runs in its place (spec_rstack_overflow: Safe RET), priced \
              on this line",
    },
    NoReplay {
        file: "retbleed",
        line_says: "Enhanced IBRS",
        why: "eIBRS, set once at boot: nothing runs on a crossing",
    },
    NoReplay {
        file: "retbleed",
        line_says: "IBRS",
        why: IBRS_AT_ENTRY,
    },
    NoReplay {
        file: "spectre_v2",
        line_says: "Enhanced / Automatic IBRS",
        why: "eIBRS or AutoIBRS, set once at boot: nothing runs on a crossing",
    },
    NoReplay {
        file: "spectre_v2",
        line_says: "IBRS",
        why: IBRS_AT_ENTRY,
    },
    NoReplay {
        file: "spec_store_bypass",
        line_says: "prctl",
        why: "only a process that asks pays (prctl, or seccomp where the kernel sets it \
              for filtered tasks): the SSBD line prices what its store-to-load code pays",
    },
    NoReplay {
        file: "spec_store_bypass",
        line_says: "disabled",
        why: "on for every process: what store-to-load code pays is the SSBD line's",
    },
    NoReplay {
        file: "meltdown",
        line_says: "PTI",
        why: "a CR3 write on every entry and exit, which user mode cannot make: pti=off on \
              a boot prices it",
    },
    NoReplay {
        file: "l1tf",
        line_says: "PTE Inversion",
        why: "page-table entries inverted when not present: nothing runs on a crossing, a \
              KVM host flushes L1D on VM entry",
    },
    NoReplay {
        file: "spectre_v1",
        line_says: "usercopy",
        why: "user pointers masked in the copy routines, a few instructions a copy, not \
              replayed",
    },
];

/// The IBPB the kernel issues on every entry: an MSR write.
const IBPB_AT_ENTRY: &str = "an IBPB on every kernel entry, an MSR write user mode cannot \
                             make: the IBPB a switch pays (syscall/specctrl-switch) is its \
                             price where the run has it";
/// IBRS written on entry and exit.
const IBRS_AT_ENTRY: &str = "IBRS set on every entry and cleared on exit, two MSR writes user \
                             mode cannot make: spectre_v2=retpoline (with retbleed=off) on a \
                             boot prices it";

/// Why `mitigation`, in force by `file`'s `line`, has no replayed price.
pub fn why_no_replay(file: &str, line: &str, mitigation: Id) -> String {
    match NO_REPLAY
        .iter()
        .find(|u| u.file == file && line.contains(u.line_says))
    {
        Some(u) => u.why.to_string(),
        None => {
            let off = super::kernel::SWITCHES
                .iter()
                .find(|(f, _)| *f == file)
                .map_or("mitigations=off", |(_, off)| off);
            format!(
                "{}: not replayed, {off} on a boot prices it",
                mitigation.entry().why
            )
        }
    }
}

/// How [`runs_here`]'s reason starts where the CPU's vendor is why.
pub const NOT_ON_THIS_CPU: &str = "not run on this CPU";

/// The CPU a sequence is judged for: its vendor and family as cpuinfo
/// says them.
#[derive(Debug, Clone, Copy)]
pub struct OnCpu<'a> {
    pub vendor: &'a str,
    pub family: &'a str,
    /// cpuinfo's bugs; empty where unknown.
    pub bugs: &'a [String],
}

/// Whether the running kernel runs `s`, by its vulnerability files' lines
/// (name -> text) and the CPU: Ok, or why not.
pub fn runs_here(
    s: &Sequence,
    vulnerabilities: &std::collections::BTreeMap<String, String>,
    cpu: OnCpu,
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
    let replaced = lines
        .iter()
        .find(|(_, line)| s.unless_line_says.iter().any(|w| line.contains(w)));
    if let Some((file, line)) = replaced {
        return Err(format!(
            "not in force here: {file} says \"{line}\", whose sequence runs in its place"
        ));
    }
    if !s.vendors.is_empty() && !s.vendors.contains(&cpu.vendor) {
        return Err(format!(
            "{NOT_ON_THIS_CPU}: the kernel runs it on {} only",
            s.vendors.join(", ")
        ));
    }
    if !s.families.is_empty() && !s.families.contains(&cpu.family) {
        return Err(format!(
            "{NOT_ON_THIS_CPU}: the kernel runs it on CPU family {} only, this is {}",
            s.families.join(" or "),
            cpu.family
        ));
    }
    if let Some(bug) = s.cpu_bug
        && !cpu.bugs.is_empty()
        && !cpu.bugs.iter().any(|b| b == bug)
    {
        return Err(format!(
            "{NOT_ON_THIS_CPU}: the kernel runs it where cpuinfo lists the {bug} bug, and this \
             CPU's list does not"
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
        let zen3 = OnCpu {
            vendor: "AuthenticAMD",
            family: "25",
            bugs: &[],
        };
        let runs = |variant: &str| {
            let s = SEQUENCES.iter().find(|s| s.row.1 == variant).unwrap();
            runs_here(s, &here, zen3)
        };
        assert!(runs("srso-untrain").is_ok());
        assert!(runs("srso-untrain-zen1-2").is_err(), "Zen 1/2's own");
        assert!(
            runs("retbleed-untrain").is_err(),
            "retbleed not in its lines"
        );
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
