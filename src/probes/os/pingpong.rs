//! Context switch by ping-pong: the measuring thread rings a partner and
//! waits for the answer. One item is a round trip: two wake-ups, two
//! switches. With both threads on one CPU the switch is direct; with one per
//! CPU each wake-up crosses CPUs (an IPI to wake an idle one).

use super::doorbell::{Doorbell, Kind};
use crate::harness::{Harness, affinity};
use crate::probes::{Outcome, Placement, Probe, ProbeInfo, Variant};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

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
        if cross && placement.other_cpu().is_none() {
            return Err(format!(
                "needs a second CPU; only CPU {} is allowed",
                placement.cpu
            ));
        }
        Ok(())
    }

    fn measure(&self, variant: &Variant, placement: &Placement, harness: &Harness) -> Outcome {
        if let Err(reason) = self.check(variant, placement) {
            return Outcome::Unsupported(reason);
        }
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
        drop(partner);
        Outcome::on_cpus(measurement, vec![placement.cpu, partner_cpu])
    }
}

/// The answering thread. Dropping it stops and joins the thread, so no path
/// out of a measurement (return, panic) leaves it behind.
struct Partner {
    ping: Arc<dyn Doorbell>,
    pong: Arc<dyn Doorbell>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Partner {
    fn start(kind: Kind, cpu: usize) -> Result<Partner, String> {
        let open = || {
            kind.open()
                .map(Arc::from)
                .map_err(|e| format!("creating a {} failed: {e}", kind.name()))
        };
        let (ping, pong): (Arc<dyn Doorbell>, Arc<dyn Doorbell>) = (open()?, open()?);
        let stop = Arc::new(AtomicBool::new(false));
        let (pinned_tx, pinned_rx) = std::sync::mpsc::channel();
        let thread = {
            let (ping, pong, stop) = (ping.clone(), pong.clone(), stop.clone());
            std::thread::Builder::new()
                .name("mitbench-partner".into())
                .stack_size(64 << 10)
                .spawn(move || {
                    let pinned = affinity::pin_current_thread_forever(cpu);
                    let ok = pinned.is_ok();
                    let _ = pinned_tx.send(
                        pinned.map_err(|e| format!("pinning the partner to CPU {cpu} failed: {e}")),
                    );
                    if !ok {
                        return;
                    }
                    loop {
                        ping.wait();
                        if stop.load(Ordering::Acquire) {
                            break;
                        }
                        pong.ring();
                    }
                })
                .map_err(|e| format!("spawning the partner thread failed: {e}"))?
        };
        let partner = Partner {
            ping,
            pong,
            stop,
            thread: Some(thread),
        };
        match pinned_rx.recv() {
            Ok(Ok(())) => Ok(partner),
            Ok(Err(reason)) => Err(reason),
            Err(_) => Err("the partner thread died before it started".into()),
        }
    }
}

impl Drop for Partner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        self.ping.ring();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
