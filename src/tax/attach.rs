//! `mitbench tax --pid PID --for DURATION`: counting a process that is
//! already running. Counters go on each of its threads (and, inherited, on
//! what they start from then on); its CPU time and the /proc figures the
//! fallback needs are read at the start and then every [`SAMPLE`], so a
//! process that ends early still has figures up to its last sample.
//! mitbench's own thread is not counted here: it sleeps in `poll` on a
//! pidfd, which wakes it when the process ends, and on Ctrl-C, which ends
//! the count (the process is not mitbench's to stop) and prints it.

use super::count::{
    Count, Counted, Counters, TLB_FALLBACK, fall_back, tlb_shootdowns, tlb_shootdowns_since,
};
use super::procs;
use super::supervise::{Watch, Woken};
use crate::tax::crossing::Crossing;
use std::time::{Duration, Instant};

/// How often the process's /proc figures are read.
const SAMPLE: Duration = Duration::from_millis(100);

/// What /proc says the process has done since it started.
#[derive(Debug, Clone, Copy, Default)]
struct Sample {
    cpu_s: f64,
    faults: u64,
    switches: u64,
}

pub fn count_running(pid: i32, duration: Duration) -> Result<Counted, String> {
    if sample(pid).is_none() {
        return Err(format!("no process {pid} (or its /proc is unreadable)"));
    }
    let command = command_line(pid);
    let controls = super::count::controls_of(&pid.to_string());
    let processes = with_descendants(pid);
    let tasks: Vec<Option<i32>> = processes
        .iter()
        .flat_map(|&p| threads(p))
        .map(Some)
        .collect();
    if tasks.is_empty() {
        // No counter would open, and the counts would read zero, not
        // unknown.
        return Err(format!("cannot list the threads of process {pid}"));
    }
    let mut counters = Counters::open(&tasks);
    let pidfd = procs::pidfd(pid).map_err(|e| format!("cannot watch process {pid}: {e}"))?;
    let watch = Watch::start().map_err(|e| format!("watching for Ctrl-C: {e}"))?;
    counters.enable();
    let tlb_before = tlb_shootdowns();
    let started = Instant::now();
    let tree_sample = || tree_sample(&processes);
    let first = tree_sample();
    let mut last = first;
    let mut ended = false;
    let mut interrupted = false;
    while !ended && !interrupted {
        let left = duration.saturating_sub(started.elapsed());
        if left.is_zero() {
            break;
        }
        let wait_ms = left.min(SAMPLE).as_millis().max(1) as i32;
        match watch
            .poll(&pidfd, wait_ms)
            .map_err(|e| format!("watching process {pid}: {e}"))?
        {
            Woken::Exited => ended = true,
            // Ctrl-C ends the count, not the process: it is not ours.
            Woken::Signal { .. } => interrupted = true,
            Woken::Timeout | Woken::Nothing => {}
        }
        // A process of the tree that has ended drops out of the sum: keep
        // the sample from before it did.
        if !ended {
            let now = tree_sample();
            if now.cpu_s >= last.cpu_s {
                last = now;
            }
        }
    }
    let wall_s = started.elapsed().as_secs_f64();
    counters.disable();
    let tlb = tlb_shootdowns_since(tlb_before);
    let counts: Vec<Count> = counters.read(|count| {
        let by_proc = match count.kind {
            Crossing::ContextSwitch => Some((
                last.switches.saturating_sub(first.switches),
                "/proc/PID/task/*/status: voluntary + nonvoluntary context switches of its threads",
            )),
            Crossing::PageFault => Some((
                last.faults.saturating_sub(first.faults),
                "/proc/PID/stat: minor + major page faults",
            )),
            Crossing::TlbFlush => tlb.map(|n| (n, TLB_FALLBACK)),
            _ => None,
        };
        fall_back(count, by_proc);
    });
    let mut includes = format!(
        "process {pid} and its descendants at the start ({} process(es), {} thread(s)) and what \
         they started after",
        processes.len(),
        tasks.len()
    );
    if ended {
        includes.push_str(&format!(
            "; it ended after {wall_s:.1} s, its CPU time is up to the last sample before"
        ));
    }
    Ok(Counted {
        command,
        exit_code: None,
        exit_signal: None,
        timed_out: false,
        interrupted,
        leftovers_stopped: 0,
        wall_s,
        cpu_s: last.cpu_s - first.cpu_s,
        counts,
        includes,
        controls,
    })
}

/// The processes' samples summed: a process that has ended is not there.
fn tree_sample(processes: &[i32]) -> Sample {
    let samples = processes.iter().filter_map(|&p| sample(p));
    samples.fold(Sample::default(), |sum, s| Sample {
        cpu_s: sum.cpu_s + s.cpu_s,
        faults: sum.faults + s.faults,
        switches: sum.switches + s.switches,
    })
}

/// `pid` and every process below it now, parents first.
fn with_descendants(pid: i32) -> Vec<i32> {
    let parents = procs::with_parents();
    let mut tree = vec![pid];
    let mut next = 0;
    while next < tree.len() {
        let parent = tree[next];
        tree.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        next += 1;
    }
    tree
}

/// The process's thread ids.
fn threads(pid: i32) -> Vec<i32> {
    procs::numbered(&format!("/proc/{pid}/task"))
}

/// The command line as its words, or `[pid N]` where it is unreadable.
fn command_line(pid: i32) -> Vec<String> {
    let words: Vec<String> = std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .split(|&b| b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    if words.is_empty() {
        vec![format!("[pid {pid}]")]
    } else {
        words
    }
}

/// The process's figures now; None once it has gone.
fn sample(pid: i32) -> Option<Sample> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name's closing parenthesis, from the state
    // (field 3): minflt 10, majflt 12, utime 14, stime 15.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3)?.parse::<u64>().ok();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let switches = threads(pid)
        .into_iter()
        .filter_map(|tid| std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).ok())
        .map(|status| {
            status
                .lines()
                .filter(|l| {
                    l.starts_with("voluntary_ctxt_switches:")
                        || l.starts_with("nonvoluntary_ctxt_switches:")
                })
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum::<u64>()
        })
        .sum();
    Some(Sample {
        cpu_s: (field(14)? + field(15)?) as f64 / hz,
        faults: field(10)? + field(12)?,
        switches,
    })
}
