//! Context switch by ping-pong: the measuring thread rings a partner and
//! waits for the answer. One item is a round trip: two wake-ups, two
//! switches. With both threads on one CPU the switch is direct; with one per
//! CPU each wake-up crosses CPUs (an IPI to wake an idle one).

use crate::harness::Harness;
use crate::probes::corunner::CoRunner;
use crate::probes::doorbell::{Doorbell, Kind};
use crate::probes::{Config, Outcome, Placement, Probe, Role, Unsupported};
use serde::Serialize;
use std::fmt;
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
