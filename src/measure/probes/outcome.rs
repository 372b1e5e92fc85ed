//! What measuring a variant gives back: a measurement with the CPUs it ran
//! on, its notes and extra figures; or an interruption; or why it could
//! not run.

use super::Unsupported;
use crate::analysis::figure::Figure;
use crate::measure::harness::Measurement;
use serde::{Deserialize, Serialize};

/// A successful measurement and the facts needed to read it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measured {
    pub measurement: Measurement,
    /// Every CPU the measured work ran on, measuring thread first.
    pub cpus: Vec<usize>,
    /// What the reader should know about this measurement.
    pub notes: Vec<String>,
    /// Figures measured beside the cost per item (a co-runner's latency,
    /// yields per item), each named with its unit.
    pub figures: Vec<NamedFigure>,
    /// For a probe that keeps a thread of its own on another CPU: the share
    /// of the measurement during which that thread made no progress (on a
    /// guest, its vCPU descheduled by the host), 0 to 1. Such a round ran
    /// in another host state ([`crate::measure::schedule::Round::partner_away`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partner_stalled: Option<f64>,
}

/// Whether `cpus` (a measurement's, measuring thread first) name a CPU
/// beside the measuring one: the work ran on two.
pub fn on_other_cpus(cpus: &[usize]) -> bool {
    cpus.iter().any(|cpu| Some(cpu) != cpus.first())
}

/// A figure a probe measured beside the harness's cost per item: the one
/// figure type (its value, and in a record the 95% interval of the median
/// over rounds, from five rounds on), named, with its unit.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NamedFigure {
    pub name: String,
    #[serde(flatten)]
    pub figure: Figure,
    pub unit: String,
    /// What a reader of the results may use the figure for beyond showing it.
    #[serde(default, skip_serializing_if = "FigureRole::is_plain")]
    pub role: FigureRole,
}

/// What a figure is to the results beyond its name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FigureRole {
    #[default]
    Plain,
    /// The 99th percentile of how long a co-runner on the measured CPU
    /// waited for it, in µs: what the latency advice reads.
    CoRunnerWaitP99,
}

impl FigureRole {
    fn is_plain(&self) -> bool {
        *self == FigureRole::Plain
    }
}

impl NamedFigure {
    pub fn new(name: &str, value: f64, unit: &str) -> NamedFigure {
        NamedFigure {
            name: name.to_string(),
            figure: Figure::new(value, None),
            unit: unit.to_string(),
            role: FigureRole::Plain,
        }
    }

    /// The p99 of a same-CPU co-runner's wait, in µs.
    pub fn co_runner_wait_p99(name: &str, us: f64) -> NamedFigure {
        NamedFigure {
            role: FigureRole::CoRunnerWaitP99,
            ..NamedFigure::new(name, us, " us")
        }
    }
}

/// Serialised only to cross from a measuring child process to the worker
/// ([`measure_in_own_process`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Outcome {
    Measured(Box<Measured>),
    Unsupported(Unsupported),
    Interrupted,
}

impl Outcome {
    /// The usual outcome: a harness result on the measuring CPU alone.
    pub fn on_cpus(measurement: Option<Measurement>, cpus: Vec<usize>) -> Outcome {
        match measurement {
            Some(measurement) => Outcome::Measured(Box::new(Measured {
                measurement,
                cpus,
                notes: Vec::new(),
                figures: Vec::new(),
                partner_stalled: None,
            })),
            None => Outcome::Interrupted,
        }
    }

    /// A measurement with how long the thread it kept on another CPU
    /// stalled ([`Measured::partner_stalled`]); any other outcome as it is.
    pub fn with_partner_stalled(self, share: f64) -> Outcome {
        match self {
            Outcome::Measured(mut measured) => {
                measured.partner_stalled = Some(share);
                Outcome::Measured(measured)
            }
            other => other,
        }
    }
}

/// Measures on a thread of its own, pinned to `cpu`, for probes that change
/// per-task state (a seccomp filter, a speculation control): the state ends
/// with the thread, and the process that goes on measuring never carries
/// it. `work` returns the measurement (None when interrupted) and notes, or
/// why it could not run.
pub fn measure_in_own_thread<W>(cpu: usize, work: W) -> Outcome
where
    W: FnOnce() -> Result<(Option<Measurement>, Vec<String>), Unsupported> + Send,
{
    let result = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                crate::measure::harness::affinity::pin_current_thread_forever(cpu)
                    .map_err(|e| Unsupported::io("sched_setaffinity", &e))?;
                work()
            })
            .join()
            .unwrap_or_else(|_| Err(Unsupported::probe_failed("the measuring thread panicked")))
    });
    match result {
        Ok((Some(measurement), notes)) => Outcome::Measured(Box::new(Measured {
            measurement,
            cpus: vec![cpu],
            notes,
            figures: Vec::new(),
            partner_stalled: None,
        })),
        Ok((None, _)) => Outcome::Interrupted,
        Err(reason) => Outcome::Unsupported(reason),
    }
}

/// Measures in a child process forked for it, for work that leaves state in
/// the address space behind it: a thread run on another CPU keeps that CPU
/// in the address space's mask, and then the flushes of the rows after it
/// reach that CPU too (docs/why-the-code-is-so.md). The child's address
/// space is a copy that ends with it, and it is gone on return. A worker
/// calls it between rounds, running no other thread; a test binary's other
/// threads may hold a lock at the fork, which the child then never gets
/// (glibc's fork keeps malloc usable; a panic's message could wait on
/// stderr's lock, and the worker with it).
pub fn measure_in_own_process(work: impl FnOnce() -> Outcome) -> Outcome {
    use std::io::Write;
    let (from_child, to_parent) = match crate::sys::pipe(0) {
        Ok(ends) => ends,
        Err(e) => return Outcome::Unsupported(Unsupported::io("pipe", &e)),
    };
    // SAFETY: in a worker no other thread holds a lock at the fork (see
    // above for a test binary); the child leaves by _exit, running no
    // destructor of the parent's state.
    let child = unsafe { libc::fork() };
    if child < 0 {
        let e = std::io::Error::last_os_error();
        return Outcome::Unsupported(Unsupported::io("fork", &e));
    }
    if child == 0 {
        drop(from_child);
        // SAFETY: prctl and _exit are async-signal-safe.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|_| {
                Outcome::Unsupported(Unsupported::probe_failed("the measuring process panicked"))
            });
        let mut pipe = std::fs::File::from(to_parent);
        let sent = serde_json::to_vec(&outcome)
            .map_err(std::io::Error::other)
            .and_then(|text| pipe.write_all(&text));
        unsafe { libc::_exit(i32::from(sent.is_err())) };
    }
    drop(to_parent);
    let text = read_within(std::fs::File::from(from_child), CHILD_WAIT);
    if text.is_none() {
        // SAFETY: our own child, not yet reaped.
        unsafe { libc::kill(child, libc::SIGKILL) };
    }
    let mut status = 0;
    // SAFETY: waits for our own child.
    let _ = crate::sys::retry_eintr(|| unsafe { libc::waitpid(child, &mut status, 0) });
    match text.map(|text| serde_json::from_slice(&text)) {
        Some(Ok(outcome)) => outcome,
        Some(Err(_)) => Outcome::Unsupported(Unsupported::probe_failed(
            "the measuring process ended without a result",
        )),
        None => Outcome::Unsupported(Unsupported::probe_failed(format!(
            "the measuring process gave no result within {} s and was stopped",
            CHILD_WAIT.as_secs()
        ))),
    }
}

/// How long a measuring child may take: far beyond any round, so only a
/// child stuck on a lock it inherited ([`measure_in_own_process`]) meets it.
const CHILD_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Everything `pipe` gives until its writer closes it, or None once `wait`
/// has passed.
fn read_within(mut pipe: std::fs::File, wait: std::time::Duration) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let deadline = std::time::Instant::now() + wait;
    let mut text = Vec::new();
    let mut chunk = [0u8; 64 << 10];
    loop {
        let left = deadline.checked_duration_since(std::time::Instant::now())?;
        let mut ready = libc::pollfd {
            fd: pipe.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let millis = i32::try_from(left.as_millis()).unwrap_or(i32::MAX).max(1);
        // A timeout or a signal goes round again: the deadline above says
        // whether the wait is over (retry_eintr would wait the whole
        // timeout again after a signal).
        // SAFETY: one pollfd of ours.
        match unsafe { libc::poll(&mut ready, 1, millis) } {
            0 => continue,
            n if n < 0
                && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted =>
            {
                continue;
            }
            n if n < 0 => return Some(text),
            _ => {}
        }
        match pipe.read(&mut chunk) {
            Ok(0) => return Some(text),
            Ok(n) => text.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Some(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn a_childs_outcome_comes_back_and_its_changes_stay_in_it() {
        static TOUCHED: AtomicBool = AtomicBool::new(false);
        let outcome = measure_in_own_process(|| {
            TOUCHED.store(true, Ordering::Relaxed);
            Outcome::Unsupported(Unsupported::probe_failed(format!(
                "pid {}",
                std::process::id()
            )))
        });
        let Outcome::Unsupported(reason) = outcome else {
            panic!("not the child's outcome: {outcome:?}")
        };
        assert_ne!(reason.reason, format!("pid {}", std::process::id()));
        assert!(reason.reason.starts_with("pid "), "{reason}");
        assert!(
            !TOUCHED.load(Ordering::Relaxed),
            "the child wrote the parent's memory"
        );
        assert!(matches!(
            measure_in_own_process(|| Outcome::Interrupted),
            Outcome::Interrupted
        ));
    }

    #[test]
    fn a_child_that_gives_nothing_in_time_is_stopped() {
        let (from_child, to_parent) = crate::sys::pipe(0).unwrap();
        let started = std::time::Instant::now();
        let wait = std::time::Duration::from_millis(200);
        assert_eq!(read_within(from_child.into(), wait), None);
        assert!(started.elapsed() >= wait);
        drop(to_parent);
    }

    #[test]
    fn a_child_that_panics_is_a_probe_that_failed() {
        let outcome = measure_in_own_process(|| panic!("on purpose"));
        let Outcome::Unsupported(reason) = outcome else {
            panic!("{outcome:?}")
        };
        assert!(reason.reason.contains("panicked"), "{reason}");
    }
}
