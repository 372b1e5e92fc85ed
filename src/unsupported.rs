//! Why a variant cannot be measured here, as a kind a program can read
//! (needs a second CPU, denied, missing feature...) beside the sentence a
//! person reads. A JSON reader, a compare or a dashboard tells "needs a
//! second CPU" from "denied by seccomp (EPERM)" by the kind, never by
//! parsing the sentence.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::io;

/// The kind of reason, with what a program needs to act on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Kind {
    /// More CPUs than the run may use.
    NeedsCpus { needed: usize, allowed: usize },
    /// A call refused for want of privilege or by policy (EPERM, EACCES).
    Denied { call: String, errno: i32 },
    /// A call this kernel does not have (ENOSYS).
    KernelTooOld { call: String },
    /// Something the machine, kernel or toolchain lacks (io_uring
    /// disabled, no vDSO clock, a compiler flag, memfd_secret off).
    MissingFeature { feature: String },
    /// No hardware performance counters for this guest.
    NoPmu,
    /// A call failed otherwise; errno 0 when it did less than asked.
    CallFailed { call: String, errno: i32 },
    /// Every sample of a round was dropped (thread migrated, clock went
    /// backwards): nothing left to report.
    SamplesDropped,
    /// The probe's own machinery failed (a thread panicked, a channel
    /// broke): a bug or a resource limit, said in the sentence.
    ProbeFailed,
}

/// A reason a variant cannot run or be measured here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub struct Unsupported {
    #[serde(flatten)]
    pub kind: Kind,
    pub reason: String,
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl Unsupported {
    pub fn new(kind: Kind, reason: impl Into<String>) -> Unsupported {
        Unsupported {
            kind,
            reason: reason.into(),
        }
    }

    pub fn needs_cpus(needed: usize, allowed: usize, reason: impl Into<String>) -> Unsupported {
        Unsupported::new(Kind::NeedsCpus { needed, allowed }, reason)
    }

    pub fn missing(feature: &str, reason: impl Into<String>) -> Unsupported {
        Unsupported::new(
            Kind::MissingFeature {
                feature: feature.into(),
            },
            reason,
        )
    }

    pub fn probe_failed(reason: impl Into<String>) -> Unsupported {
        Unsupported::new(Kind::ProbeFailed, reason)
    }

    /// A call that failed with `errno` (0: it did less than asked), kinded
    /// by the errno: refused, absent from this kernel, or failed.
    pub fn errno(call: &str, errno: i32, reason: impl Into<String>) -> Unsupported {
        let call = call.to_string();
        let kind = match errno {
            libc::EPERM | libc::EACCES => Kind::Denied { call, errno },
            libc::ENOSYS => Kind::KernelTooOld { call },
            _ => Kind::CallFailed { call, errno },
        };
        Unsupported::new(kind, reason)
    }

    /// `call failed: <error>`, kinded by the error's errno.
    pub fn io(call: &str, error: &io::Error) -> Unsupported {
        Unsupported::errno(
            call,
            error.raw_os_error().unwrap_or(0),
            format!("{call} failed: {error}"),
        )
    }

    /// The kind's name as the JSON spells it ("needs-cpus").
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            Kind::NeedsCpus { .. } => "needs-cpus",
            Kind::Denied { .. } => "denied",
            Kind::KernelTooOld { .. } => "kernel-too-old",
            Kind::MissingFeature { .. } => "missing-feature",
            Kind::NoPmu => "no-pmu",
            Kind::CallFailed { .. } => "call-failed",
            Kind::SamplesDropped => "samples-dropped",
            Kind::ProbeFailed => "probe-failed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_errno_decides_the_kind() {
        let denied = Unsupported::errno("seccomp", libc::EPERM, "seccomp failed");
        assert_eq!(
            denied.kind,
            Kind::Denied {
                call: "seccomp".into(),
                errno: libc::EPERM
            }
        );
        let absent = Unsupported::io("memfd_secret", &io::Error::from_raw_os_error(libc::ENOSYS));
        assert_eq!(absent.kind_name(), "kernel-too-old");
        assert!(absent.reason.starts_with("memfd_secret failed: "));
        let short = Unsupported::errno("write", 0, "short write");
        assert_eq!(short.kind_name(), "call-failed");
    }

    #[test]
    fn the_json_carries_the_kind_its_fields_and_the_sentence() {
        let json = serde_json::to_value(Unsupported::needs_cpus(2, 1, "needs a second CPU"))
            .expect("serialises");
        assert_eq!(
            json,
            serde_json::json!({"kind": "needs-cpus", "needed": 2, "allowed": 1,
                               "reason": "needs a second CPU"})
        );
        for u in [
            Unsupported::new(Kind::NoPmu, "x"),
            Unsupported::new(Kind::SamplesDropped, "x"),
            Unsupported::probe_failed("x"),
            Unsupported::missing("io_uring", "x"),
        ] {
            let json = serde_json::to_value(&u).expect("serialises");
            assert_eq!(json["kind"], u.kind_name(), "{json}");
        }
    }
}
