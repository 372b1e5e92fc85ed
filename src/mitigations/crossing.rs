//! The crossings of a security boundary, as one type, and the one table of
//! the rows that price each ([`TOLLS`]): tax counts a workload's crossings
//! by these kinds and prices them by the table, the summary's answer reads
//! a syscall's toll by it, the catalogue's mitigations tax them. Never
//! matched as text; each is written out under the name it always had, so
//! the JSON and the tables read as before.

use serde::{Serialize, Serializer};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Crossing {
    Syscall,
    ContextSwitch,
    PageFault,
    ThreadCreation,
    ProcessByVfork,
    ProcessByFork,
    /// The three creations together, where a kernel refuses the filter
    /// that splits them.
    Creation,
    Exec,
    TlbFlushLocal,
    TlbFlushRemote,
    /// Both kinds of TLB flush together, where the filter is refused.
    TlbFlush,
}

impl Crossing {
    pub const fn name(self) -> &'static str {
        match self {
            Crossing::Syscall => "syscall",
            Crossing::ContextSwitch => "context switch",
            Crossing::PageFault => "page fault",
            Crossing::ThreadCreation => "thread creation",
            Crossing::ProcessByVfork => "process creation by vfork",
            Crossing::ProcessByFork => "process creation by fork",
            Crossing::Creation => "thread or process creation",
            Crossing::Exec => "exec",
            Crossing::TlbFlushLocal => "TLB flush, local",
            Crossing::TlbFlushRemote => "TLB flush, remote shootdown",
            Crossing::TlbFlush => "TLB flush",
        }
    }
}

/// Kinds as a list in prose: "syscall, context switch".
pub fn list(kinds: &[Crossing]) -> String {
    kinds
        .iter()
        .map(|k| k.name())
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for Crossing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Crossing {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// What one crossing of a kind costs, and which measured row says so.
pub struct TollSource {
    pub kind: Crossing,
    pub probe: &'static str,
    pub variant: &'static str,
    /// Crossings of the kind in one item of the probe.
    pub crossings_per_item: f64,
    /// A row whose cost the item includes beside the crossing, taken off
    /// (an exec's process creation, a flush's syscall).
    pub less: Option<(&'static str, &'static str)>,
    /// Why the row prices the kind, where that is not plain.
    pub note: Option<&'static str>,
}

const fn toll(kind: Crossing, probe: &'static str, variant: &'static str) -> TollSource {
    TollSource {
        kind,
        probe,
        variant,
        crossings_per_item: 1.0,
        less: None,
        note: None,
    }
}

impl TollSource {
    const fn less(self, probe: &'static str, variant: &'static str) -> TollSource {
        TollSource {
            less: Some((probe, variant)),
            ..self
        }
    }

    const fn note(self, note: &'static str) -> TollSource {
        TollSource {
            note: Some(note),
            ..self
        }
    }

    /// Which rows price the kind, as the output says.
    pub fn rows_named(&self) -> String {
        let mut from = format!("{} {}", self.probe, self.variant);
        if let Some((probe, variant)) = self.less {
            from.push_str(&format!(" less {probe} {variant}"));
        }
        from
    }

    /// The rows it reads: its own, and the one it takes off.
    pub fn rows(&self) -> impl Iterator<Item = (&'static str, &'static str)> {
        std::iter::once((self.probe, self.variant)).chain(self.less)
    }
}

/// A local flush is priced by a one-page mprotect less the null syscall:
/// the PTE change and the flush of this CPU's TLB, without the entry that
/// the syscall row already prices.
const LOCAL_FLUSH: TollSource = toll(
    Crossing::TlbFlushLocal,
    "memory/shootdown",
    "mprotect/alone",
)
.less("os/getpid", "syscall")
.note("a one-page mprotect less the null syscall: the PTE change and this CPU's flush");

/// The null syscall's toll: the row every crossing of the kernel boundary
/// is first priced by, and the summary's first line.
/// The syscall whose return after a crossing the answer, tax, plan and
/// attribute price (`os/syscall-return`'s getpid rows): the null syscall,
/// whose own cost is the least beside the return's.
pub const RETURN_TOLL_SYSCALL: &str = "getpid";

/// The mitigation the return toll belongs to, and what says so.
pub struct ReturnTollCause {
    /// The vulnerability file whose line puts it in force, and the words.
    pub vulnerability: &'static str,
    pub line_says: &'static str,
    pub what: &'static str,
    pub evidence: &'static str,
}

/// SRSO's safe return: every kernel `ret` becomes a call to a safe return
/// that drops the call's own entry, so the entries the kernel's calls
/// pushed stay on the return-stack predictor for the user's first `ret`.
/// Its boot (`spec_rstack_overflow=off`), and mitigations=off, would take
/// the toll away.
pub const RETURN_TOLL_CAUSE: ReturnTollCause = ReturnTollCause {
    vulnerability: "spec_rstack_overflow",
    line_says: "Safe RET",
    what: "SRSO's safe return",
    evidence: "present under SRSO's Safe RET: getpid from a function 41.4 ns over inline on a \
               Zen 3 guest (2026-11-29), 86 ticks on a Zen 4 guest (2026-11-27); absent where \
               the kernel returns through retbleed's untrained return thunk, a plain ret: \
               +0.30 ns [-0.02, +0.88] on a Zen 2 guest (2026-12-01)",
};

impl ReturnTollCause {
    /// Whether the kernel of these vulnerability files (name -> line) runs
    /// it, so a return toll is to be expected.
    pub fn in_force(&self, vulnerabilities: &std::collections::BTreeMap<String, String>) -> bool {
        vulnerabilities
            .get(self.vulnerability)
            .is_some_and(|line| super::kernel::mitigated(line) && line.contains(self.line_says))
    }
}

pub const SYSCALL: TollSource = toll(Crossing::Syscall, "os/getpid", "syscall");

/// A syscall as a program pays it: through a function (glibc's getpid()),
/// so the raw instruction and the return after the crossing
/// (`os/syscall-return` says how much of it that return is).
pub const SYSCALL_AS_PAID: TollSource = toll(Crossing::Syscall, "os/getpid", "libc").note(
    "glibc's getpid(): the raw instruction and the return after the crossing, as a \
     program's syscalls come through functions",
);

/// The probes whose rows price each kind of crossing.
pub const TOLLS: [TollSource; 11] = [
    SYSCALL_AS_PAID,
    TollSource {
        // One round trip: two wake-ups, two switches.
        crossings_per_item: 2.0,
        ..toll(Crossing::ContextSwitch, "os/ctxswitch", "futex/same-cpu")
    },
    toll(Crossing::PageFault, "memory/fault", "anon"),
    // Create and join: the join is the price of the exit.
    toll(Crossing::ThreadCreation, "os/thread", "pthread"),
    toll(Crossing::ProcessByFork, "os/fork", "fork"),
    toll(Crossing::ProcessByVfork, "os/fork", "vfork"),
    toll(Crossing::Exec, "os/exec", "vfork+exec")
        .less("os/fork", "vfork")
        .note("vfork+exec+wait of a static no-op less vfork+wait: the exec alone"),
    toll(Crossing::Creation, "os/thread", "pthread").note(
        "priced as threads, the cheapest creation: this kernel did not split creations by \
         clone flags",
    ),
    LOCAL_FLUSH,
    toll(
        Crossing::TlbFlushRemote,
        "memory/shootdown",
        "mprotect/remote",
    )
    .less("memory/shootdown", "mprotect/alone")
    .note("a one-page mprotect with a thread of the process on the other CPU, less alone"),
    TollSource {
        kind: Crossing::TlbFlush,
        note: Some(
            "priced as local flushes: this kernel did not tell local flushes from remote \
             shootdowns",
        ),
        ..LOCAL_FLUSH
    },
];
