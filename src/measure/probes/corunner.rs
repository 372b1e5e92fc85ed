//! A helper thread pinned to a CPU for the length of a measurement: the
//! ping-pong partner, the thread whose TLB a shootdown must reach. Dropping
//! it stops and joins the thread, so no path out of a probe (return, early
//! error, panic) leaves it running.

use super::Unsupported;
use crate::measure::harness::affinity;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;

pub struct CoRunner {
    stop: Arc<AtomicBool>,
    /// Unblocks the body if it may be waiting when asked to stop.
    wake: Box<dyn Fn() + Send + Sync>,
    thread: Option<JoinHandle<()>>,
    /// The CPU the thread read for itself once pinned.
    pub cpu_seen: usize,
    /// Rounds the body has completed, as it reports them.
    pub rounds: Arc<AtomicU64>,
}

impl CoRunner {
    /// Starts `body` on a thread pinned to `cpu`. `body(stop, rounds)` runs
    /// until it sees `stop`; `wake` is called after `stop` is set, for a body
    /// that blocks. Returns once the thread is pinned.
    pub fn start<B, W>(name: &str, cpu: usize, body: B, wake: W) -> Result<CoRunner, Unsupported>
    where
        B: FnOnce(&AtomicBool, &AtomicU64) + Send + 'static,
        W: Fn() + Send + Sync + 'static,
    {
        let stop = Arc::new(AtomicBool::new(false));
        let rounds = Arc::new(AtomicU64::new(0));
        let (pinned_tx, pinned_rx) = std::sync::mpsc::channel();
        let thread = {
            let (stop, rounds) = (stop.clone(), rounds.clone());
            std::thread::Builder::new()
                .name(name.into())
                .stack_size(64 << 10)
                .spawn(move || {
                    let pinned = affinity::pin_current_thread_forever(cpu)
                        .map(|()| affinity::current_cpu().unwrap_or(usize::MAX))
                        .map_err(|e| Unsupported::io("sched_setaffinity", &e));
                    let ok = pinned.is_ok();
                    let _ = pinned_tx.send(pinned);
                    if ok {
                        body(&stop, &rounds);
                    }
                })
                .map_err(|e| Unsupported::io("spawning a helper thread", &e))?
        };
        let mut runner = CoRunner {
            stop,
            wake: Box::new(wake),
            thread: Some(thread),
            cpu_seen: usize::MAX,
            rounds,
        };
        match pinned_rx.recv() {
            Ok(Ok(seen)) => {
                runner.cpu_seen = seen;
                Ok(runner)
            }
            Ok(Err(reason)) => Err(reason),
            Err(_) => Err(Unsupported::probe_failed(
                "the helper thread died before it started",
            )),
        }
    }
}

impl Drop for CoRunner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        (self.wake)();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
