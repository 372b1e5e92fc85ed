//! Context switch by ping-pong: the measuring thread rings a partner and
//! waits for the answer. One item is a round trip: two wake-ups, two
//! switches. With both threads on one CPU the switch is direct; with one per
//! CPU each wake-up crosses CPUs (an IPI to wake an idle one).

use crate::harness::Harness;
use crate::probes::corunner::CoRunner;
use crate::probes::doorbell::{Doorbell, Kind};
use crate::probes::{Outcome, Placement, Probe, ProbeInfo, Variant};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

pub struct ContextSwitch;

const VARIANTS: [(&str, Kind, bool); 6] = [
    ("futex/same-cpu", Kind::Futex, false),
    ("pipe/same-cpu", Kind::Pipe, false),
    ("eventfd/same-cpu", Kind::EventFd, false),
    ("futex/cross-cpu", Kind::Futex, true),
    ("pipe/cross-cpu", Kind::Pipe, true),
    ("eventfd/cross-cpu", Kind::EventFd, true),
];

fn lookup(variant: &Variant) -> (Kind, bool) {
    VARIANTS
        .iter()
        .find(|(name, _, _)| *name == variant.name)
        .map_or((Kind::Futex, false), |&(_, k, c)| (k, c))
}

impl Probe for ContextSwitch {
    fn info(&self) -> ProbeInfo {
        ProbeInfo {
            id: "os/ctxswitch",
            family: "os",
            seed: "all",
            summary: "ping-pong between two threads: futex, pipe or eventfd; both on one CPU, or one per CPU",
            item: "round trip (two wake-ups, two context switches)",
            requirements: vec!["a second allowed CPU for the cross-cpu variants"],
            derived: None,
            variants: VARIANTS
                .iter()
                .enumerate()
                .map(|(i, &(name, kind, cross))| Variant {
                    name,
                    baseline: i == 0,
                    params: json!({
                        "mechanism": kind.name(),
                        "placement": if cross { "cross-cpu" } else { "same-cpu" },
                    }),
                })
                .collect(),
        }
    }

    fn check(&self, variant: &Variant, placement: &Placement) -> Result<(), String> {
        let (_, cross) = lookup(variant);
        if cross {
            placement.second_cpu()?;
        }
        Ok(())
    }

    fn measure(&self, variant: &Variant, placement: &Placement, harness: &Harness) -> Outcome {
        let (kind, cross) = lookup(variant);
        let partner_cpu = if cross {
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
    fn start(kind: Kind, cpu: usize) -> Result<Partner, String> {
        let open = || {
            kind.open()
                .map(Arc::from)
                .map_err(|e| format!("creating a {} failed: {e}", kind.name()))
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
