//! The null syscall under seccomp: 0 to 8 installed filters of two kinds,
//! each with 1, 10 or 50 rules. Filters that decide on the syscall number
//! alone are cached by the kernel since 5.11 (a syscall the filter always
//! allows skips it); filters that read arguments cannot be cached and run on
//! every call. The filters are installed in a dedicated thread that does the
//! measuring and then exits, taking them with it: the process that goes on
//! measuring never carries a filter.

use crate::measure::harness::{Harness, Measurement};
use crate::measure::probes::failures::Failures;
use crate::measure::probes::{
    Config, Outcome, Placement, Probe, Role, Unsupported, measure_in_own_thread,
};
use crate::sys;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

probe! {
    /// raw getpid with F filters of R rules: number-only (cacheable) or argument-reading
    pub struct Seccomp: "syscall/seccomp", seed "004", item "getpid call",
        requires ["seccomp filters (CONFIG_SECCOMP_FILTER) and permission to set no_new_privs"];
}

const FILTERS: [usize; 4] = [1, 2, 4, 8];
const RULES: [usize; 3] = [1, 10, 50];

/// x86-64 has no syscalls numbered 335..=423, so number-only rules on them
/// never match anything this process calls.
const UNUSED_SYSCALLS: i64 = 340;

/// What the installed filters decide on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FilterKind {
    /// No filter installed.
    None,
    /// The syscall number alone: cacheable.
    Number,
    /// The first argument: run on every call.
    Args,
}

/// `filters` filters of `rules` rules each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Filters {
    kind: FilterKind,
    filters: usize,
    #[serde(rename = "rules_per_filter")]
    rules: usize,
}

impl fmt::Display for Filters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            FilterKind::None => return f.write_str("none"),
            FilterKind::Number => "number",
            FilterKind::Args => "args",
        };
        write!(f, "{kind}/F={}/R={}", self.filters, self.rules)
    }
}

impl Config for Filters {
    fn role(&self) -> Role {
        Role::baseline_if(self.kind == FilterKind::None)
    }
}

/// One filter of `kind` with `rules` rules; getpid(0, 0) is allowed by it.
fn build(kind: FilterKind, rules: usize) -> Result<BpfProgram, Unsupported> {
    let failed = |e: seccompiler::BackendError| {
        Unsupported::probe_failed(format!("building the filter failed: {e}"))
    };
    let mut map = BTreeMap::new();
    if kind == FilterKind::Number {
        for i in 0..rules as i64 {
            map.insert(UNUSED_SYSCALLS + i, vec![]);
        }
    } else {
        let conditions = (0..rules as u64)
            .map(|i| {
                SeccompCondition::new(0, SeccompCmpArgLen::Qword, SeccompCmpOp::Eq, 1_000_000 + i)
                    .and_then(|c| SeccompRule::new(vec![c]))
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(failed)?;
        map.insert(libc::SYS_getpid, conditions);
    }
    let filter = SeccompFilter::new(
        map,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        TargetArch::x86_64,
    )
    .map_err(failed)?;
    BpfProgram::try_from(filter).map_err(failed)
}

const PR_GET_SPECULATION_CTRL: libc::c_int = 52;
const SPECULATION_CONTROLS: [(&str, libc::c_ulong); 3] = [
    ("store_bypass", 0),
    ("indirect_branch", 1),
    ("l1d_flush", 2),
];

/// The calling thread's PR_GET_SPECULATION_CTRL value per control.
pub fn speculation_state() -> Vec<(&'static str, i32)> {
    SPECULATION_CONTROLS
        .iter()
        // SAFETY: a read-only prctl with valid arguments.
        .map(|&(name, which)| {
            (name, unsafe {
                libc::prctl(PR_GET_SPECULATION_CTRL, which, 0, 0, 0)
            })
        })
        .collect()
}

impl Probe for Seccomp {
    type Config = Filters;

    fn configs(&self) -> Vec<Filters> {
        let none = Filters {
            kind: FilterKind::None,
            filters: 0,
            rules: 0,
        };
        let filtered = [FilterKind::Number, FilterKind::Args]
            .into_iter()
            .flat_map(|kind| {
                FILTERS.into_iter().flat_map(move |filters| {
                    RULES.map(|rules| Filters {
                        kind,
                        filters,
                        rules,
                    })
                })
            });
        std::iter::once(none).chain(filtered).collect()
    }

    fn measure(&self, config: &Filters, placement: &Placement, harness: &Harness) -> Outcome {
        let Filters {
            kind,
            filters,
            rules,
        } = *config;
        let program = match filters {
            0 => None,
            _ => match build(kind, rules) {
                Ok(program) => Some(program),
                Err(reason) => return Outcome::Unsupported(reason),
            },
        };
        measure_in_own_thread(placement.cpu, || {
            filtered_measurement(harness, program.as_deref(), filters)
        })
    }
}

/// On the thread of its own: installs `filters` copies of `program`,
/// measures getpid, and returns with notes on the speculation state. The
/// filters end with the thread.
fn filtered_measurement(
    harness: &Harness,
    program: Option<&[seccompiler::sock_filter]>,
    filters: usize,
) -> Result<(Option<Measurement>, Vec<String>), Unsupported> {
    let before = speculation_state();
    if let Some(program) = program {
        for _ in 0..filters {
            seccompiler::apply_filter(program).map_err(|e| {
                // The prctl or seccomp call that failed left its errno.
                let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
                Unsupported::errno(
                    "seccomp",
                    errno,
                    format!("installing the filter failed: {e}"),
                )
            })?;
        }
    }
    let after = speculation_state();
    let mut notes = Vec::new();
    if filters > 0 {
        // Kernels before 5.16 turned SSBD (and STIBP) on for every
        // seccomp-filtered task; say whether this one did.
        let changed: Vec<String> = before
            .iter()
            .zip(&after)
            .filter(|(b, a)| b.1 != a.1)
            .map(|(b, a)| format!("{} {:#x} -> {:#x}", b.0, b.1, a.1))
            .collect();
        notes.push(if changed.is_empty() {
            "speculation controls unchanged by the filters".to_string()
        } else {
            format!(
                "the filters changed speculation controls: {}",
                changed.join(", ")
            )
        });
    }
    // SAFETY: getpid ignores its arguments; zeros keep the argument-reading
    // rules (which compare arg0 with 1,000,000 and up) from matching.
    // A getpid the filters refuse returns -EPERM at once: a failure, never
    // a cost.
    let failures = Failures::new();
    let measurement = harness.measure_each(|| {
        let pid = unsafe { sys::syscall2(libc::SYS_getpid, 0, 0) };
        failures.check_raw("getpid", pid);
        pid
    });
    match failures.reason() {
        Some(reason) => Err(reason),
        None => Ok((measurement, notes)),
    }
}
