//! The hooks an administrator or an agent attaches to the syscall path and
//! the kernel's text, read without changing any: the trace events enabled
//! (a syscall event sends every syscall down the kernel's slow path: +23%
//! to +308% on getpid where measured), ftrace's tracer, dynamic events
//! (kprobes, uprobes) and livepatches. Each says why where it cannot be
//! read, so a run without tracefs still says what it does not know.

use super::{Root, audit, bpf, tracefs};
use serde::{Deserialize, Serialize};

/// A reading, or why it could not be made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reading<T> {
    Read(T),
    Unreadable(String),
}

impl<T> Default for Reading<T> {
    fn default() -> Reading<T> {
        Reading::unread()
    }
}

impl<T> Reading<T> {
    fn of(result: Result<T, String>) -> Reading<T> {
        match result {
            Ok(value) => Reading::Read(value),
            Err(why) => Reading::Unreadable(why),
        }
    }

    fn unread() -> Reading<T> {
        Reading::Unreadable("not read by the mitbench that wrote this run".into())
    }

    pub fn read(&self) -> Option<&T> {
        match self {
            Reading::Read(value) => Some(value),
            Reading::Unreadable(_) => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hooks {
    /// The trace events enabled, "group:event" as tracefs's `set_event`
    /// lists them.
    pub trace_events: Reading<Vec<String>>,
    /// ftrace's current tracer ("nop": none).
    pub tracer: Reading<String>,
    /// Dynamic events (kprobes, uprobes, synthetic events), one definition
    /// a line as `dynamic_events` lists them.
    pub dynamic_events: Reading<Vec<String>>,
    /// The livepatches loaded, each with whether it is enabled.
    pub livepatches: Reading<Vec<String>>,
    /// The audit subsystem: enabled, its rules, which sit on the syscall
    /// path, and whether new processes are kept off it.
    #[serde(default)]
    pub audit: Reading<audit::Audit>,
    /// The BPF programs loaded, by type and name.
    #[serde(default)]
    pub bpf_programs: Reading<Vec<bpf::Program>>,
}

impl Default for Hooks {
    /// What a document written before the hooks were read holds.
    fn default() -> Hooks {
        Hooks {
            trace_events: Reading::unread(),
            tracer: Reading::unread(),
            dynamic_events: Reading::unread(),
            livepatches: Reading::unread(),
            audit: Reading::unread(),
            bpf_programs: Reading::unread(),
        }
    }
}

impl Hooks {
    /// The enabled trace events that sit on the syscall path: every
    /// syscall pays for them, not only the one they name.
    pub fn syscall_events(&self) -> Vec<&str> {
        self.trace_events
            .read()
            .into_iter()
            .flatten()
            .map(String::as_str)
            .filter(|e| is_syscall_event(e))
            .collect()
    }
}

/// A hook every syscall of a new process pays for, and what takes it off
/// the path (mitbench never does: it measures the machine as it is).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OnPath {
    /// The hook as a reader names it: "trace event raw_syscalls:sys_enter",
    /// "audit (1 syscall rule)", "BPF tracepoint prog on sys_enter".
    pub hook: String,
    /// What removes it.
    pub removed_by: String,
}

impl Hooks {
    /// The hooks in force that every syscall pays for: the syscall trace
    /// events, audit where new processes get an audit context (on, and no
    /// `never,task` rule keeps them off), BPF programs on a syscall
    /// tracepoint.
    pub fn on_syscall_path(&self) -> Vec<OnPath> {
        let mut hooks: Vec<OnPath> = self
            .syscall_events()
            .into_iter()
            .map(|event| OnPath {
                hook: format!("trace event {event}"),
                removed_by: format!(
                    "its tracer stopping, or 0 written to events/{}/enable in tracefs",
                    event.replacen(':', "/", 1)
                ),
            })
            .collect();
        if let Some(audit) = self.audit.read()
            && audit.enabled > 0
            && !audit.never_task
        {
            let rules = match audit.syscall_rules {
                0 => "on, no syscall rule".to_string(),
                1 => "1 syscall rule".to_string(),
                n => format!("{n} syscall rules"),
            };
            let removed_by = match audit.enabled {
                2 => "audit=0 on the kernel command line (its rules are locked until a reboot)",
                _ => {
                    "a `-a never,task` audit rule (new processes only: what runs keeps the \
                     path), or audit=0 on the kernel command line"
                }
            };
            hooks.push(OnPath {
                hook: format!("audit ({rules})"),
                removed_by: removed_by.to_string(),
            });
        }
        for program in self.bpf_programs.read().into_iter().flatten() {
            if program.on_syscall_path() {
                hooks.push(OnPath {
                    hook: format!("BPF {program}"),
                    removed_by: match program.name.is_empty() {
                        true => "the agent that loaded it (`bpftool prog show`)".to_string(),
                        false => format!(
                            "the agent that loaded it (`bpftool prog show name {}`)",
                            program.name
                        ),
                    },
                });
            }
        }
        hooks
    }
}

/// Audit off now, no `never,task` rule, but enabled earlier in this boot
/// (stored run `run` read it on): every process started since has an
/// audit context and takes the audit path (+70% on getpid where measured).
pub fn audit_enabled_earlier(run: i64) -> OnPath {
    OnPath {
        hook: format!(
            "audit (off, but on in run {run} of this boot: every new process still pays its path)"
        ),
        removed_by: "a `-a never,task` audit rule (new processes only), or a reboot".to_string(),
    }
}

/// A listing as one line of text: "a, b", or "none".
pub fn listed<T: ToString>(items: &[T]) -> String {
    match items.is_empty() {
        true => "none".to_string(),
        false => items
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Whether the event "group:event" is a syscall event: one of the
/// `raw_syscalls` pair or a `syscalls:sys_enter_*`/`sys_exit_*` event,
/// either of which turns on the syscall tracepoints for every task.
pub fn is_syscall_event(event: &str) -> bool {
    matches!(
        event.split_once(':'),
        Some(("raw_syscalls" | "syscalls", _))
    )
}

pub fn collect(root: &Root) -> Hooks {
    Hooks {
        trace_events: Reading::of(tracefs::read(root, "set_event").map(|t| lines(&t))),
        tracer: Reading::of(tracefs::read(root, "current_tracer").map(|t| t.trim().to_string())),
        dynamic_events: Reading::of(tracefs::read(root, "dynamic_events").map(|t| lines(&t))),
        livepatches: Reading::of(livepatches(root)),
        audit: match root.is_live() {
            true => Reading::of(audit::read_live()),
            false => Reading::Unreadable("read over netlink from the live system only".into()),
        },
        bpf_programs: match root.is_live() {
            true => Reading::of(bpf::read_live()),
            false => Reading::Unreadable("read by the bpf syscall on the live system only".into()),
        },
    }
}

/// The non-empty lines of a tracefs listing, trimmed, in order.
fn lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// Each livepatch under sys/kernel/livepatch, "name (enabled)" or
/// "name (disabled)"; none where the kernel has the directory and no
/// patch; why where it has no livepatch support.
fn livepatches(root: &Root) -> Result<Vec<String>, String> {
    const DIR: &str = "sys/kernel/livepatch";
    if !root.exists(DIR) {
        return Err("no sys/kernel/livepatch: a kernel without livepatch support".into());
    }
    let mut patches: Vec<String> = std::fs::read_dir(root.path(DIR))
        .map_err(|e| format!("{DIR}: {e}"))?
        .filter_map(Result::ok)
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let state = match root
                .read_trimmed(&format!("{DIR}/{name}/enabled"))
                .as_deref()
            {
                Some("1") => "enabled",
                Some("0") => "disabled",
                _ => "state unknown",
            };
            format!("{name} ({state})")
        })
        .collect();
    patches.sort();
    Ok(patches)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syscall_events_are_the_raw_pair_and_the_per_syscall_ones() {
        for (event, on_path) in [
            ("raw_syscalls:sys_enter", true),
            ("syscalls:sys_enter_getppid", true),
            ("sched:sched_switch", false),
            ("syscalls", false),
            ("", false),
        ] {
            assert_eq!(is_syscall_event(event), on_path, "{event}");
        }
    }
}
