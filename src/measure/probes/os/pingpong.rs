//! Context switch by ping-pong: the measuring thread rings a partner and
//! waits for the answer. One item is a round trip: two wake-ups, two
//! switches. With both threads on one CPU the switch is direct; with one per
//! CPU each wake-up crosses CPUs (an IPI to wake an idle one).

use crate::measure::harness::Harness;
use crate::measure::probes::corunner::CoRunner;
use crate::measure::probes::doorbell::{Doorbell, Kind, Pipe};
use crate::measure::probes::{Config, Outcome, Placement, Probe, Role, Unsupported};
use crate::sys::retry_eintr;
use serde::Serialize;
use std::fmt;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

probe! {
    /// ping-pong between two threads: futex, pipe or eventfd; both on one CPU, or one per CPU
    pub struct ContextSwitch: "os/ctxswitch", seed "all", item "round trip (two wake-ups, two context switches)",
        requires ["a second allowed CPU for the cross-cpu variants"];
}

/// A ping-pong over one kind of doorbell, both threads on one CPU or one
/// per CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PingPong {
    #[serde(rename = "mechanism")]
    kind: Kind,
    #[serde(serialize_with = "placement_name")]
    cross_cpu: bool,
}

fn placement_name<S: serde::Serializer>(cross: &bool, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(if *cross { "cross-cpu" } else { "same-cpu" })
}

impl fmt::Display for PingPong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.cross_cpu { "cross" } else { "same" };
        write!(f, "{}/{at}-cpu", self.kind.name())
    }
}

impl Config for PingPong {
    fn role(&self) -> Role {
        Role::baseline_if(self.kind == Kind::Futex && !self.cross_cpu)
    }

    fn needs_second_cpu(&self) -> bool {
        self.cross_cpu
    }
}

impl Probe for ContextSwitch {
    type Config = PingPong;

    fn configs(&self) -> Vec<PingPong> {
        [false, true]
            .into_iter()
            .flat_map(|cross_cpu| Kind::ALL.map(|kind| PingPong { kind, cross_cpu }))
            .collect()
    }

    fn measure(&self, config: &PingPong, placement: &Placement, harness: &Harness) -> Outcome {
        let PingPong { kind, cross_cpu } = *config;
        let partner_cpu = if cross_cpu {
            placement.other_cpu().unwrap_or(placement.cpu)
        } else {
            placement.cpu
        };
        let partner = match Partner::start(kind, partner_cpu) {
            Ok(partner) => partner,
            Err(reason) => return Outcome::Unsupported(reason),
        };
        let (ping, pong) = (&*partner.ping, &*partner.pong);
        let measurement = harness.measure_each(|| {
            ping.ring();
            pong.wait();
        });
        let failure = ping.failure().or_else(|| pong.failure());
        drop(partner);
        match failure {
            Some(reason) => Outcome::Unsupported(reason),
            None => Outcome::on_cpus(measurement, vec![placement.cpu, partner_cpu]),
        }
    }
}

/// The answering thread, and the two doorbells it answers on.
struct Partner {
    ping: Arc<dyn Doorbell>,
    pong: Arc<dyn Doorbell>,
    _thread: CoRunner,
}

impl Partner {
    fn start(kind: Kind, cpu: usize) -> Result<Partner, Unsupported> {
        let open = || {
            kind.open()
                .map(Arc::from)
                .map_err(|e| Unsupported::io(kind.name(), &e))
        };
        let (ping, pong): (Arc<dyn Doorbell>, Arc<dyn Doorbell>) = (open()?, open()?);
        let body = {
            let (ping, pong) = (ping.clone(), pong.clone());
            move |stop: &AtomicBool, _: &AtomicU64| loop {
                ping.wait();
                if stop.load(Ordering::Acquire) {
                    break;
                }
                pong.ring();
            }
        };
        let wake = {
            let ping = ping.clone();
            move || ping.ring()
        };
        let thread = CoRunner::start("mitbench-partner", cpu, body, wake)?;
        Ok(Partner {
            ping,
            pong,
            _thread: thread,
        })
    }
}

/// A process that answers each ring on the CPU of the thread that started
/// it (a forked child inherits its affinity and its speculation controls).
/// A round trip to it switches address spaces twice: where the kernel
/// issues IBPB for a task that asked for it (arch/x86/mm/tlb.c:
/// `cond_mitigation`), which a partner thread, sharing the address space,
/// never causes.
pub struct ProcessPartner {
    ping: Pipe,
    pong: Pipe,
    child: libc::pid_t,
}

impl ProcessPartner {
    pub fn start() -> Result<ProcessPartner, Unsupported> {
        let pipe = || Pipe::open().map_err(|e| Unsupported::io("pipe", &e));
        let (ping, pong) = (pipe()?, pipe()?);
        // SAFETY: the child makes only async-signal-safe calls on
        // descriptors it owns, then exits.
        let child = unsafe { libc::fork() };
        if child < 0 {
            return Err(Unsupported::io("fork", &io::Error::last_os_error()));
        }
        if child == 0 {
            // SAFETY: the child's copies of the pipes; it never returns.
            unsafe { answer(&ping, &pong) }
        }
        Ok(ProcessPartner { ping, pong, child })
    }

    /// Rings the partner and waits for its answer.
    pub fn round_trip(&self) {
        self.ping.ring();
        self.pong.wait();
    }

    pub fn failure(&self) -> Option<Unsupported> {
        self.ping.failure().or_else(|| self.pong.failure())
    }
}

impl Drop for ProcessPartner {
    fn drop(&mut self) {
        // SAFETY: our own child, killed, then reaped.
        unsafe { libc::kill(self.child, libc::SIGKILL) };
        let mut status = 0;
        // SAFETY: as above.
        let _ = retry_eintr(|| unsafe { libc::waitpid(self.child, &mut status, 0) });
    }
}

/// The child's loop: each byte read on `ping` is written back on `pong`.
/// Its parent kills it when done; it also exits with its parent thread
/// (PR_SET_PDEATHSIG) and at the end of `ping` (every writer gone), so a
/// Ctrl-C or a crash leaves no process behind.
///
/// # Safety
/// Only in a child just forked: it closes the parent's ends and never
/// returns.
unsafe fn answer(ping: &Pipe, pong: &Pipe) -> ! {
    let ((ping, parent_rings), (parent_waits, pong)) = (ping.ends(), pong.ends());
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        libc::close(parent_rings);
        libc::close(parent_waits);
        let mut byte = 0u8;
        loop {
            let n = libc::read(ping, (&raw mut byte).cast(), 1);
            if n == 1 {
                if libc::write(pong, (&raw const byte).cast(), 1) != 1 {
                    libc::_exit(1);
                }
            } else if n == 0 || *libc::__errno_location() != libc::EINTR {
                libc::_exit(0);
            }
        }
    }
}
