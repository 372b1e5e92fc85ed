//! The null syscall under seccomp: 0 to 8 installed filters of two kinds,
//! each with 1, 10 or 50 rules. Filters that decide on the syscall number
//! alone are cached by the kernel since 5.11 (a syscall the filter always
//! allows skips it); filters that read arguments cannot be cached and run on
//! every call. The filters are installed in a dedicated thread that does the
//! measuring and then exits, taking them with it: the process that goes on
//! measuring never carries a filter.

use crate::harness::{Harness, Measurement};
use crate::probes::failures::Failures;
use crate::probes::{Outcome, Placement, Probe, ProbeInfo, Variant, measure_in_own_thread};
use crate::sys;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};
use serde_json::json;
use std::collections::BTreeMap;

pub struct Seccomp;

const FILTERS: [usize; 4] = [1, 2, 4, 8];
const RULES: [usize; 3] = [1, 10, 50];
const KINDS: [&str; 2] = ["number", "args"];

/// x86-64 has no syscalls numbered 335..=423, so number-only rules on them
/// never match anything this process calls.
const UNUSED_SYSCALLS: i64 = 340;

/// (name, kind, filters, rules); "none" has no filter.
fn variants() -> &'static [(String, &'static str, usize, usize)] {
    static ALL: std::sync::OnceLock<Vec<(String, &str, usize, usize)>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let mut all = vec![("none".to_string(), "none", 0, 0)];
        for kind in KINDS {
            for f in FILTERS {
                for r in RULES {
                    all.push((format!("{kind}/F={f}/R={r}"), kind, f, r));
                }
            }
        }
        all
    })
}

/// One filter of `kind` with `rules` rules; getpid(0, 0) is allowed by it.
fn build(kind: &str, rules: usize) -> Result<BpfProgram, String> {
    let mut map = BTreeMap::new();
    if kind == "number" {
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
            .map_err(|e| format!("building the filter failed: {e}"))?;
        map.insert(libc::SYS_getpid, conditions);
    }
    let filter = SeccompFilter::new(
        map,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        TargetArch::x86_64,
    )
    .map_err(|e| format!("building the filter failed: {e}"))?;
    BpfProgram::try_from(filter).map_err(|e| format!("compiling the filter failed: {e}"))
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
    fn info(&self) -> ProbeInfo {
        ProbeInfo {
            id: "syscall/seccomp",
            family: "syscall",
            seed: "004",
            summary: "raw getpid with F filters of R rules: number-only (cacheable) or argument-reading",
            item: "getpid call",
            requirements: vec![
                "seccomp filters (CONFIG_SECCOMP_FILTER) and permission to set no_new_privs",
            ],
            variants: variants()
                .iter()
                .map(|(name, kind, f, r)| Variant {
                    name: name.as_str(),
                    baseline: *f == 0,
                    params: json!({"kind": kind, "filters": f, "rules_per_filter": r}),
                })
                .collect(),
            derived: None,
        }
    }

    fn measure(&self, variant: &Variant, placement: &Placement, harness: &Harness) -> Outcome {
        let Some((_, kind, filters, rules)) = variants().iter().find(|v| v.0 == variant.name)
        else {
            return Outcome::Unsupported(format!("no variant {}", variant.name));
        };
        let program = match *filters {
            0 => None,
            _ => match build(kind, *rules) {
                Ok(program) => Some(program),
                Err(reason) => return Outcome::Unsupported(reason),
            },
        };
        measure_in_own_thread(placement.cpu, || {
            filtered_measurement(harness, program.as_deref(), *filters)
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
) -> Result<(Option<Measurement>, Vec<String>), String> {
    let before = speculation_state();
    if let Some(program) = program {
        for _ in 0..filters {
            seccompiler::apply_filter(program)
                .map_err(|e| format!("installing the filter failed: {e}"))?;
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
