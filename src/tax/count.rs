//! Counting a workload's crossings of security boundaries while it runs:
//! perf_event counters opened on the counting thread with `inherit`, so
//! every process and thread the workload starts is counted too, and the
//! children's counts fold into them as they exit. Software events exist on
//! every Linux; syscalls, forks and TLB flushes are kernel tracepoints,
//! whose ids live in tracefs.

use super::supervise::Watch;
use crate::tax::crossing::Crossing;
use perf_event::events::{Software, Tracepoint};
use perf_event::{Builder, Counter};
use serde::Serialize;
use std::collections::BTreeMap;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// One kind of crossing and how it was counted.
#[derive(Debug, Clone, Serialize)]
pub struct Count {
    pub kind: Crossing,
    /// Where the count comes from (the perf event).
    pub source: String,
    /// None where this machine could not count it, with why.
    pub count: Option<u64>,
    pub unsupported: Option<String>,
}

/// What a workload did while it ran.
#[derive(Debug, Clone, Serialize)]
pub struct Counted {
    pub command: Vec<String>,
    /// The workload's exit status (None when a signal ended it).
    pub exit_code: Option<i32>,
    /// The signal that ended it, if one did.
    pub exit_signal: Option<i32>,
    /// It ran past `--timeout` and was stopped; the counts are up to then.
    pub timed_out: bool,
    /// Ctrl-C (SIGINT or SIGTERM) came while it ran; the counts are up to
    /// its end.
    pub interrupted: bool,
    /// Descendants still running when it ended, stopped by mitbench.
    pub leftovers_stopped: usize,
    pub wall_s: f64,
    /// User and system time of the workload's whole process tree.
    pub cpu_s: f64,
    pub counts: Vec<Count>,
    /// What the counts hold beyond the workload.
    pub includes: String,
    /// The workload's seccomp and speculation controls, from its /proc
    /// status (a command's are mitbench's, which it inherits).
    pub controls: BTreeMap<String, String>,
}

impl Counted {
    /// Counts taken elsewhere, of a workload that ran for one CPU second
    /// and exited 0 (pricing such counts needs nothing else of a run).
    pub fn of(counts: Vec<Count>, controls: BTreeMap<String, String>) -> Counted {
        Counted {
            command: vec!["counted elsewhere".into()],
            exit_code: Some(0),
            exit_signal: None,
            timed_out: false,
            interrupted: false,
            leftovers_stopped: 0,
            wall_s: 1.0,
            cpu_s: 1.0,
            counts,
            includes: String::new(),
            controls,
        }
    }

    /// The count of one kind of crossing, where it was counted.
    pub fn count_of(&self, kind: Crossing) -> Option<u64> {
        self.counts
            .iter()
            .find(|c| c.kind == kind)
            .and_then(|c| c.count)
    }

    /// (syscalls, context switches), where both were counted.
    pub fn syscalls_and_switches(&self) -> Option<(u64, u64)> {
        self.count_of(Crossing::Syscall)
            .zip(self.count_of(Crossing::ContextSwitch))
    }
}

/// The process controls of `/proc/{who}/status`; empty where unreadable.
pub(super) fn controls_of(who: &str) -> BTreeMap<String, String> {
    std::fs::read_to_string(format!("/proc/{who}/status"))
        .map(|status| crate::inventory::identity::process_controls(&status))
        .unwrap_or_default()
}

/// A kind of crossing a tracepoint marks: where the tracepoint marks more
/// than one kind, a filter on its fields (ftrace's syntax, set on the
/// counter with PERF_EVENT_IOC_SET_FILTER) selects this one.
struct Traced {
    kind: Crossing,
    tracepoint: &'static str,
    filter: Option<&'static str>,
}

/// The kinds tracepoints count. In task_newtask's clone_flags, 0x10000 is
/// CLONE_THREAD and 0x4000 CLONE_VFORK.
const TRACED: [Traced; 7] = [
    Traced {
        kind: Crossing::Syscall,
        tracepoint: "raw_syscalls/sys_enter",
        filter: None,
    },
    Traced {
        kind: Crossing::ThreadCreation,
        tracepoint: "task/task_newtask",
        filter: Some("clone_flags & 0x10000"),
    },
    Traced {
        kind: Crossing::ProcessByVfork,
        tracepoint: "task/task_newtask",
        filter: Some("clone_flags & 0x4000"),
    },
    Traced {
        kind: Crossing::ProcessByFork,
        tracepoint: "task/task_newtask",
        filter: Some("!(clone_flags & 0x10000) && !(clone_flags & 0x4000)"),
    },
    Traced {
        kind: Crossing::Exec,
        tracepoint: "sched/sched_process_exec",
        filter: None,
    },
    // tlb_flush's reason: 4 is TLB_REMOTE_SEND_IPI, a flush this CPU asks
    // of others; the rest are flushes of this CPU's own TLB (on a switch
    // of address space, a local shootdown, or one another CPU asked for).
    Traced {
        kind: Crossing::TlbFlushLocal,
        tracepoint: "tlb/tlb_flush",
        filter: Some("reason != 4"),
    },
    Traced {
        kind: Crossing::TlbFlushRemote,
        tracepoint: "tlb/tlb_flush",
        filter: Some("reason == 4"),
    },
];

/// Kinds a filter splits, and the whole they split: where any of them
/// cannot be counted (a kernel that refuses the filter), the whole is
/// counted instead of them all, so nothing is counted in part.
const WHOLES: [(Crossing, &str, &[Crossing]); 2] = [
    (
        Crossing::Creation,
        "sched/sched_process_fork",
        &[
            Crossing::ThreadCreation,
            Crossing::ProcessByVfork,
            Crossing::ProcessByFork,
        ],
    ),
    (
        Crossing::TlbFlush,
        "tlb/tlb_flush",
        &[Crossing::TlbFlushLocal, Crossing::TlbFlushRemote],
    ),
];

/// Every tracepoint a kind or a whole is counted by, once each.
fn tracepoints() -> Vec<&'static str> {
    let mut names: Vec<&str> = TRACED.iter().map(|t| t.tracepoint).collect();
    names.extend(WHOLES.iter().map(|(_, tracepoint, _)| *tracepoint));
    names.sort_unstable();
    names.dedup();
    names
}

const SOFTWARE: [(Crossing, Software, &str); 2] = [
    (
        Crossing::ContextSwitch,
        Software::CONTEXT_SWITCHES,
        "software: context-switches",
    ),
    (
        Crossing::PageFault,
        Software::PAGE_FAULTS,
        "software: page-faults",
    ),
];

/// Every kind's counters: one per observed task (a kind whose counter
/// did not open on some task is not counted at all, rather than in part).
pub(super) struct Counters {
    kinds: Vec<(Count, Vec<Counter>)>,
}

impl Counters {
    /// Counters on each of `tasks` (None: the calling thread) and on every
    /// task they start afterwards, off until enabled.
    pub(super) fn open(tasks: &[Option<i32>]) -> Counters {
        // The ids are fixed for the boot, and finding one may start a child
        // that mounts tracefs privately: once per process, not once per
        // counted run (tax's observer measurement counts a dozen runs).
        static IDS: OnceLock<Vec<(&str, Result<u64, String>)>> = OnceLock::new();
        let ids = IDS.get_or_init(|| {
            let names = tracepoints();
            names
                .iter()
                .copied()
                .zip(crate::inventory::tracefs::tracepoint_ids(&names))
                .collect()
        });
        let id_of = |tracepoint: &str| -> Result<u64, String> {
            ids.iter()
                .find(|(name, _)| *name == tracepoint)
                .map_or_else(
                    || Err(format!("{tracepoint} unknown")),
                    |(_, id)| id.clone(),
                )
        };
        let traced = |kind: Crossing, tracepoint: &str, filter: Option<&'static str>| {
            let mut source = format!("tracepoint: {}", tracepoint.replace('/', ":"));
            if let Some(filter) = filter {
                source.push_str(&format!(" if {filter}"));
            }
            on_each(kind, source, tasks, filter, || {
                id_of(tracepoint).map(|id| Builder::new(Tracepoint::with_id(id)))
            })
        };
        let mut kinds = Vec::new();
        for (kind, event, source) in SOFTWARE {
            kinds.push(on_each(kind, source.to_string(), tasks, None, || {
                Ok(Builder::new(event))
            }));
        }
        for t in &TRACED {
            kinds.push(traced(t.kind, t.tracepoint, t.filter));
        }
        for (whole, tracepoint, parts) in WHOLES {
            let refused = kinds
                .iter()
                .find(|(count, _)| parts.contains(&count.kind) && count.unsupported.is_some())
                .and_then(|(count, _)| count.unsupported.clone());
            if let Some(why) = refused {
                kinds.retain(|(count, _)| !parts.contains(&count.kind));
                let (mut count, counters) = traced(whole, tracepoint, None);
                count.source.push_str(&format!(
                    " (not split into {}: {why})",
                    crate::tax::crossing::list(parts)
                ));
                kinds.push((count, counters));
            }
        }
        Counters { kinds }
    }

    pub(super) fn enable(&mut self) {
        for c in self.kinds.iter_mut().flat_map(|(_, c)| c) {
            let _ = c.enable();
        }
    }

    pub(super) fn disable(&mut self) {
        for c in self.kinds.iter_mut().flat_map(|(_, c)| c) {
            let _ = c.disable();
        }
    }

    /// The counts, with `fallback` asked for each kind perf_event could
    /// not count.
    pub(super) fn read(self, fallback: impl Fn(&mut Count)) -> Vec<Count> {
        self.kinds
            .into_iter()
            .map(|(mut count, counters)| {
                if count.unsupported.is_none() {
                    let mut total = 0;
                    for mut c in counters {
                        match c.read() {
                            Ok(n) => total += n,
                            Err(e) => {
                                count.unsupported = Some(format!("reading the counter: {e}"));
                                break;
                            }
                        }
                    }
                    if count.unsupported.is_none() {
                        count.count = Some(total);
                    }
                }
                if count.count.is_none() {
                    fallback(&mut count);
                }
                count
            })
            .collect()
    }
}

/// One kind's counters on each task, each with `filter` where one is
/// given, or why they did not all open.
fn on_each(
    kind: Crossing,
    source: String,
    tasks: &[Option<i32>],
    filter: Option<&str>,
    builder: impl Fn() -> Result<Builder<'static>, String>,
) -> (Count, Vec<Counter>) {
    let opened: Result<Vec<Counter>, String> = tasks
        .iter()
        .map(|&task| {
            let mut b = builder()?;
            match task {
                None => b.observe_self(),
                Some(tid) => b.observe_pid(tid),
            };
            b.any_cpu()
                .inherit(true)
                .exclude_kernel(false)
                .enabled(false);
            let counter = b.build().map_err(|e| format!("perf_event_open: {e}"))?;
            match filter {
                Some(filter) => set_filter(&counter, filter).map(|()| counter),
                None => Ok(counter),
            }
        })
        .collect();
    let (counters, unsupported) = match opened {
        Ok(c) => (c, None),
        Err(why) => (Vec::new(), Some(why)),
    };
    let count = Count {
        kind,
        source,
        count: None,
        unsupported,
    };
    (count, counters)
}

/// PERF_EVENT_IOC_SET_FILTER, _IOW('$', 6, char *): a tracepoint counter
/// counts only the events whose fields match `filter`; the counters the
/// workload's tasks inherit keep it.
const PERF_EVENT_IOC_SET_FILTER: libc::c_ulong = 0x4008_2406;

fn set_filter(counter: &Counter, filter: &str) -> Result<(), String> {
    let text = std::ffi::CString::new(filter).map_err(|e| e.to_string())?;
    // SAFETY: the counter's own descriptor and a NUL-terminated string the
    // kernel copies.
    let set = unsafe {
        libc::ioctl(
            std::os::fd::AsRawFd::as_raw_fd(counter),
            PERF_EVENT_IOC_SET_FILTER,
            text.as_ptr(),
        )
    };
    if set == 0 {
        Ok(())
    } else {
        Err(format!(
            "the kernel refused the filter {filter:?}: {}",
            std::io::Error::last_os_error()
        ))
    }
}

/// Runs `command` to its end (or to `timeout`, or Ctrl-C) with every
/// crossing counter on it.
pub(super) fn run_counted(
    command: &[String],
    timeout: Option<Duration>,
) -> Result<Counted, String> {
    let (program, args) = command
        .split_first()
        .ok_or("no command to run: give one after --")?;
    let mut counters = Counters::open(&[None]);
    let watch = Watch::start().map_err(|e| format!("watching the workload: {e}"))?;
    counters.enable();
    let tlb_before = tlb_shootdowns();
    let before = children_usage();
    let started = Instant::now();
    let waited = watch
        .spawn(Command::new(program).args(args))
        .and_then(|mut child| watch.wait(&mut child, timeout));
    let wall_s = started.elapsed().as_secs_f64();
    counters.disable();
    drop(watch);
    let (status, ending) = waited.map_err(|e| format!("cannot run {program}: {e}"))?;
    let usage = children_usage().since(&before);
    let tlb = tlb_shootdowns_since(tlb_before);
    let counts = counters.read(|count| {
        let by_usage = match count.kind {
            Crossing::ContextSwitch => Some((
                usage.switches,
                "getrusage: voluntary + involuntary context switches of the waited-for process tree",
            )),
            Crossing::PageFault => Some((
                usage.faults,
                "getrusage: minor + major page faults of the waited-for process tree",
            )),
            Crossing::TlbFlush => tlb.map(|n| (n, TLB_FALLBACK)),
            _ => None,
        };
        fall_back(count, by_usage);
    });
    let mut includes = "the workload's whole process tree, and mitbench's own start of it and \
                        wait for it (a handful of syscalls and context switches)"
        .to_string();
    if ending.leftovers > 0 {
        includes.push_str(&format!(
            "; {} descendant(s) still running when the workload ended were stopped",
            ending.leftovers
        ));
    }
    Ok(Counted {
        command: command.to_vec(),
        exit_code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        exit_signal: libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status)),
        timed_out: ending.timed_out,
        interrupted: ending.interrupted,
        leftovers_stopped: ending.leftovers,
        wall_s,
        cpu_s: usage.cpu_s,
        counts,
        includes,
        controls: controls_of("self"),
    })
}

pub(super) const TLB_FALLBACK: &str = "/proc/interrupts TLB: shootdown interrupts received on \
    every CPU, whatever caused them (a different, narrower event than the tracepoint's flushes)";

/// Where perf_event could not count a kind: `by` is what the kernel keeps
/// anyway for that kind, and where it comes from.
pub(super) fn fall_back(count: &mut Count, by: Option<(u64, &str)>) {
    let perf_said = count.unsupported.take().unwrap_or_default();
    match by {
        Some((n, source)) => {
            count.count = Some(n);
            count.source = format!("{source} (perf_event: {perf_said})");
        }
        None => {
            count.unsupported = Some(format!(
                "{perf_said}; without it nothing here counts every {} of the workload",
                count.kind
            ))
        }
    }
}

/// What the kernel accounts to this process's waited-for children.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Usage {
    pub cpu_s: f64,
    pub switches: u64,
    pub faults: u64,
}

impl Usage {
    fn since(&self, before: &Usage) -> Usage {
        Usage {
            cpu_s: self.cpu_s - before.cpu_s,
            switches: self.switches.saturating_sub(before.switches),
            faults: self.faults.saturating_sub(before.faults),
        }
    }
}

pub(super) fn children_usage() -> Usage {
    // SAFETY: getrusage fills the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let n = |v: libc::c_long| u64::try_from(v).unwrap_or(0);
    Usage {
        cpu_s: s(usage.ru_utime) + s(usage.ru_stime),
        switches: n(usage.ru_nvcsw) + n(usage.ru_nivcsw),
        faults: n(usage.ru_minflt) + n(usage.ru_majflt),
    }
}

/// The TLB shootdown interrupts every CPU has received since boot, from
/// the `TLB:` line of /proc/interrupts.
pub(super) fn tlb_shootdowns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/interrupts").ok()?;
    let line = text.lines().find(|l| l.trim_start().starts_with("TLB:"))?;
    Some(
        line.split_whitespace()
            .skip(1)
            .map_while(|field| field.parse::<u64>().ok())
            .sum(),
    )
}

/// The shootdown interrupts since `before` read [`tlb_shootdowns`].
pub(super) fn tlb_shootdowns_since(before: Option<u64>) -> Option<u64> {
    before
        .zip(tlb_shootdowns())
        .map(|(before, now)| now.saturating_sub(before))
}
