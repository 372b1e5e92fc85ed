//! cyclictest's method as a co-runner: sleep until an absolute deadline,
//! wake, record how late. What a task on the same CPU suffers from a
//! section that does not yield. It publishes each deadline before sleeping,
//! so a worker can tell when it is runnable and waiting: the user-space
//! stand-in for the kernel's need_resched.

use super::corunner::CoRunner;
use crate::analysis::stats::{max_of, quantile_of};
use crate::measure::harness::tsc;
use crate::sys;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Wake-ups recorded at most; at one per millisecond, minutes of them.
const MAX_WAKES: usize = 1 << 18;

pub struct WakeLatency {
    /// The next wake-up, in TSC ticks; u64::MAX before the first sleep.
    deadline_ticks: Arc<AtomicU64>,
    late_ns: Arc<Mutex<Vec<u64>>>,
    /// Stopped and joined when dropped, on every path out of a probe.
    runner: CoRunner,
}

/// How late the co-runner woke, in microseconds.
#[derive(Debug, Clone, Copy)]
pub struct Lateness {
    pub wakes: usize,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

impl WakeLatency {
    /// Starts the co-runner on `cpu`, waking every `period_ns`, under
    /// SCHED_FIFO at `fifo_priority` when given. `tsc_mhz` converts its
    /// deadlines to TSC ticks for [`waiting`](Self::waiting).
    pub fn start(
        cpu: usize,
        period_ns: u64,
        fifo_priority: Option<i32>,
        tsc_mhz: f64,
    ) -> Result<WakeLatency, crate::measure::probes::Unsupported> {
        let deadline_ticks = Arc::new(AtomicU64::new(u64::MAX));
        let late_ns = Arc::new(Mutex::new(Vec::with_capacity(MAX_WAKES)));
        let (deadline, late) = (deadline_ticks.clone(), late_ns.clone());
        let body = move |stop: &AtomicBool, rounds: &AtomicU64| {
            if let Some(priority) = fifo_priority
                && sys::set_fifo(priority).is_err()
            {
                return;
            }
            // Timer slack would add up to the default 50 us to every wake-up under
            // SCHED_OTHER.
            sys::minimal_timer_slack();
            let mut wakes = Vec::with_capacity(MAX_WAKES);
            let mut next = sys::monotonic_ns() + period_ns;
            while !stop.load(Ordering::Acquire) {
                let now = sys::monotonic_ns();
                let ahead_ticks = (next.saturating_sub(now) as f64 * tsc_mhz / 1000.0) as u64;
                deadline.store(tsc::now() + ahead_ticks, Ordering::Release);
                sys::sleep_until_ns(next);
                let woke = sys::monotonic_ns();
                if wakes.len() < MAX_WAKES {
                    wakes.push(woke.saturating_sub(next));
                }
                rounds.fetch_add(1, Ordering::Relaxed);
                // Deadlines missed while waiting for the CPU are skipped,
                // not counted again as ever shorter delays.
                while next <= woke {
                    next += period_ns;
                }
            }
            if let Ok(mut late) = late.lock() {
                *late = wakes;
            }
        };
        let runner = CoRunner::start("mitbench-wake", cpu, body, || {})?;
        Ok(WakeLatency {
            deadline_ticks,
            late_ns,
            runner,
        })
    }

    /// Whether the co-runner's wake-up time has passed: it is runnable and
    /// waiting for the CPU. Costs an rdtsc and a load.
    #[inline]
    pub fn waiting(&self) -> bool {
        tsc::now() >= self.deadline_ticks.load(Ordering::Acquire)
    }

    /// Stops and joins the co-runner and reads what it recorded; None when
    /// it never woke (or could not take the scheduling policy asked for).
    pub fn finish(self) -> Option<Lateness> {
        let WakeLatency {
            late_ns, runner, ..
        } = self;
        drop(runner);
        let late: Vec<f64> = late_ns
            .lock()
            .ok()?
            .iter()
            .map(|&ns| ns as f64 / 1000.0)
            .collect();
        Some(Lateness {
            wakes: late.len(),
            p50_us: quantile_of(&late, 0.5)?,
            p99_us: quantile_of(&late, 0.99)?,
            max_us: max_of(&late)?,
        })
    }
}
