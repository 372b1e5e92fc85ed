//! What the harness and the scheduler read from the machine besides the
//! probe's own samples: the time that budgets and round lengths are judged
//! by, the canary that says which state the machine is in, and whether the
//! user asked to stop.
//!
//! A run reads the real ones ([`Live`]). Tests of the harness's logic
//! inject a synthetic machine whose time advances only by the samples it
//! hands out, so a stopping rule, a speed change or a Ctrl-C at a chosen
//! sample is tested in milliseconds and the same on every machine (the way
//! hyperfine's `MockExecutor` tests its logic without running anything).

use super::{canary, interrupt, reference};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub trait Machine: Send + Sync {
    /// Time since a fixed start; only differences are used.
    fn now(&self) -> Duration;
    /// One canary reading (ticks per canary call), None when it could not
    /// be taken.
    fn canary(&self) -> Option<f64>;
    /// One reading of the reference (ticks per step of work no mitigation
    /// touches: the machine's own speed), None when it could not be taken
    /// or the machine has none.
    fn reference(&self) -> Option<f64> {
        None
    }
    /// Whether the run was asked to stop (Ctrl-C).
    fn stop_requested(&self) -> bool;
    /// Lets `d` pass without work (a wait for the quiet level).
    fn pause(&self, d: Duration);
}

/// The machine mitbench runs on: the monotonic clock, the getpid canary
/// and the process's Ctrl-C flag.
#[derive(Debug, Clone, Copy, Default)]
pub struct Live;

impl Machine for Live {
    fn now(&self) -> Duration {
        static START: OnceLock<Instant> = OnceLock::new();
        START.get_or_init(Instant::now).elapsed()
    }

    fn canary(&self) -> Option<f64> {
        canary::read()
    }

    fn reference(&self) -> Option<f64> {
        reference::read()
    }

    fn stop_requested(&self) -> bool {
        interrupt::requested()
    }

    /// Spins rather than sleeps: a sleeping vCPU halts, and the host may
    /// hand its CPU to another guest, so the round after a wait would
    /// start on caches and predictors others left, which no round
    /// without a wait does.
    fn pause(&self, d: Duration) {
        let until = Instant::now() + d;
        while Instant::now() < until {
            std::hint::spin_loop();
        }
    }
}
