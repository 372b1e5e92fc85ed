//! Counting a workload's crossings of security boundaries while it runs:
//! perf_event counters opened on the counting thread with `inherit`, so
//! every process and thread the workload starts is counted too, and the
//! children's counts fold into them as they exit. Software events exist on
//! every Linux; syscalls, forks and TLB flushes are kernel tracepoints,
//! whose ids live in tracefs.

use perf_event::events::{Software, Tracepoint};
use perf_event::{Builder, Counter};
use serde::Serialize;
use std::process::Command;
use std::time::Instant;

/// One kind of crossing and how it was counted.
#[derive(Debug, Clone, Serialize)]
pub struct Count {
    pub kind: &'static str,
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
    pub wall_s: f64,
    /// User and system time of the workload's whole process tree.
    pub cpu_s: f64,
    pub counts: Vec<Count>,
    /// What the counts hold beyond the workload.
    pub includes: String,
}

/// The tracepoints counted, by the kind of crossing they mark.
const TRACEPOINTS: [(&str, &str); 3] = [
    ("syscall", "raw_syscalls/sys_enter"),
    ("thread or process creation", "sched/sched_process_fork"),
    ("TLB flush", "tlb/tlb_flush"),
];

const SOFTWARE: [(&str, Software, &str); 2] = [
    (
        "context switch",
        Software::CONTEXT_SWITCHES,
        "software: context-switches",
    ),
    ("page fault", Software::PAGE_FAULTS, "software: page-faults"),
];

/// A counter on this thread and every task it starts afterwards, off
/// until enabled.
fn open(mut builder: Builder<'_>) -> Result<Counter, String> {
    builder
        .observe_self()
        .any_cpu()
        .inherit(true)
        .exclude_kernel(false)
        .enabled(false);
    builder.build().map_err(|e| format!("perf_event_open: {e}"))
}

/// Runs `command` to its end with every crossing counter on it.
pub fn run_counted(command: &[String]) -> Result<Counted, String> {
    let (program, args) = command
        .split_first()
        .ok_or("no command to run: give one after --")?;
    let ids = super::tracefs::tracepoint_ids(&TRACEPOINTS.map(|(_, name)| name));
    let mut counters: Vec<(Count, Option<Counter>)> = Vec::new();
    for (kind, event, source) in SOFTWARE {
        counters.push(counter(kind, source.to_string(), open(Builder::new(event))));
    }
    for ((kind, name), id) in TRACEPOINTS.iter().zip(ids) {
        let source = format!("tracepoint: {}", name.replace('/', ":"));
        let counted = id.and_then(|id| open(Builder::new(Tracepoint::with_id(id))));
        counters.push(counter(kind, source, counted));
    }
    for (_, c) in counters.iter_mut() {
        if let Some(c) = c {
            let _ = c.enable();
        }
    }
    let started = Instant::now();
    let before = children_cpu_s();
    let status = Command::new(program).args(args).status();
    let wall_s = started.elapsed().as_secs_f64();
    for (_, c) in counters.iter_mut() {
        if let Some(c) = c {
            let _ = c.disable();
        }
    }
    let status = status.map_err(|e| format!("cannot run {program}: {e}"))?;
    let counts = counters
        .into_iter()
        .map(|(mut count, c)| {
            if let Some(mut c) = c {
                match c.read() {
                    Ok(n) => count.count = Some(n),
                    Err(e) => count.unsupported = Some(format!("reading the counter: {e}")),
                }
            }
            count
        })
        .collect();
    Ok(Counted {
        command: command.to_vec(),
        exit_code: status.code(),
        wall_s,
        cpu_s: children_cpu_s() - before,
        counts,
        includes: "the workload's whole process tree, and mitbench's own start of it and \
                   wait for it (a handful of syscalls and context switches)"
            .into(),
    })
}

/// A counter that opened, or why it did not.
fn counter(
    kind: &'static str,
    source: String,
    opened: Result<Counter, String>,
) -> (Count, Option<Counter>) {
    let (counter, unsupported) = match opened {
        Ok(c) => (Some(c), None),
        Err(why) => (None, Some(why)),
    };
    let count = Count {
        kind,
        source,
        count: None,
        unsupported,
    };
    (count, counter)
}

/// User plus system seconds of this process's waited-for children.
pub(super) fn children_cpu_s() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    s(usage.ru_utime) + s(usage.ru_stime)
}
