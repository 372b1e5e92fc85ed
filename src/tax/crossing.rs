//! The kinds of crossing tax counts and prices, as one type: counted by
//! `count`, priced by `TOLLS`, named by `named` and the renderers, never
//! matched as text. Each is written out under the name it always had, so
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
