//! Thread churn with a per-thread signal channel (seed 002): in a batch of T
//! threads, the creator makes each thread's channel, the thread signals once
//! over it and exits, the creator receives every signal and joins every
//! thread. One item is one thread's whole life. The channel kinds range from
//! none to a TLS 1.3 session that only ever carries that one signal, and a
//! pool of channels made once and reused.

use super::tls;
use crate::harness::Harness;
use crate::probes::doorbell::{Doorbell, Kind};
use crate::probes::{Outcome, Placement, Probe, ProbeInfo, Variant};
use serde_json::json;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::Arc;

#[derive(Clone, Copy, PartialEq)]
enum Channel {
    None,
    EventFd,
    Pipe,
    SocketPair,
    Tls,
    Pooled,
}

const CHANNELS: [(&str, Channel, &str); 6] = [
    ("none", Channel::None, "no channel: create and join"),
    ("eventfd", Channel::EventFd, "an eventfd per thread"),
    ("pipe", Channel::Pipe, "a pipe per thread"),
    (
        "socketpair",
        Channel::SocketPair,
        "a Unix socketpair per thread",
    ),
    (
        "tls",
        Channel::Tls,
        "TLS 1.3 (rustls, ring) over a socketpair per thread",
    ),
    (
        "pooled",
        Channel::Pooled,
        "eventfds made once and reused by every thread",
    ),
];

pub struct Churn {
    pub threads: usize,
}

pub const CHURNS: [Churn; 3] = [
    Churn { threads: 1 },
    Churn { threads: 10 },
    Churn { threads: 100 },
];

/// One batch of `threads` threads over `channel`; Err on any failure.
fn batch(
    channel: Channel,
    threads: usize,
    pool: &[Arc<dyn Doorbell>],
    configs: Option<&'static tls::Configs>,
) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    let mut handles = Vec::with_capacity(threads);
    let mut receivers: Vec<Box<dyn FnOnce() -> Result<(), String>>> = Vec::with_capacity(threads);
    let mut pooled = pool.iter();
    for _ in 0..threads {
        let spawn = |f: Box<dyn FnOnce() -> Result<(), String> + Send>| {
            std::thread::Builder::new()
                .stack_size(64 << 10)
                .spawn(f)
                .map_err(io)
        };
        match channel {
            Channel::None => handles.push(spawn(Box::new(|| Ok(())))?),
            Channel::EventFd | Channel::Pipe | Channel::Pooled => {
                let bell: Arc<dyn Doorbell> = match channel {
                    Channel::EventFd => Arc::from(Kind::EventFd.open().map_err(io)?),
                    Channel::Pipe => Arc::from(Kind::Pipe.open().map_err(io)?),
                    _ => pooled
                        .next()
                        .ok_or("the pool has fewer channels than threads")?
                        .clone(),
                };
                let theirs = bell.clone();
                handles.push(spawn(Box::new(move || {
                    theirs.ring();
                    Ok(())
                }))?);
                receivers.push(Box::new(move || {
                    bell.wait();
                    Ok(())
                }));
            }
            Channel::SocketPair => {
                let (mut mine, mut theirs) = UnixStream::pair().map_err(io)?;
                handles.push(spawn(Box::new(move || theirs.write_all(&[1]).map_err(io)))?);
                receivers.push(Box::new(move || mine.read_exact(&mut [0u8]).map_err(io)));
            }
            Channel::Tls => {
                let configs = configs.ok_or("no TLS configuration")?;
                let (mine, theirs) = UnixStream::pair().map_err(io)?;
                handles.push(spawn(Box::new(move || {
                    tls::serve_signal(configs, theirs, 1)
                }))?);
                receivers.push(Box::new(move || {
                    tls::receive_signal(configs, mine).map(drop)
                }));
            }
        }
    }
    let received: Result<(), String> = receivers.into_iter().try_for_each(|receive| receive());
    let joined: Result<(), String> = handles.into_iter().try_for_each(|h| {
        h.join()
            .map_err(|_| "a churn thread panicked".to_string())
            .and_then(|r| r)
    });
    received.and(joined)
}

impl Probe for Churn {
    fn info(&self) -> ProbeInfo {
        const IDS: [&str; 3] = ["thread/churn-T1", "thread/churn-T10", "thread/churn-T100"];
        let id = CHURNS
            .iter()
            .position(|c| c.threads == self.threads)
            .map_or("thread/churn", |i| IDS[i]);
        ProbeInfo {
            id,
            family: "thread",
            seed: "002",
            summary: "create T threads, each signals its creator once over its own channel, join them all",
            item: "thread (create, channel, one signal, join)",
            requirements: vec![],
            variants: CHANNELS
                .iter()
                .map(|&(name, kind, what)| Variant {
                    name,
                    baseline: kind == Channel::None,
                    params: json!({"channel": what, "threads_per_batch": self.threads}),
                })
                .collect(),
            derived: None,
        }
    }

    fn check(&self, variant: &Variant, _placement: &Placement) -> Result<(), String> {
        if variant.name == "tls" {
            tls::configs()?;
        }
        Ok(())
    }

    fn measure(&self, variant: &Variant, placement: &Placement, harness: &Harness) -> Outcome {
        let channel = CHANNELS
            .iter()
            .find(|c| c.0 == variant.name)
            .map_or(Channel::None, |c| c.1);
        let configs = if channel == Channel::Tls {
            tls::configs().ok()
        } else {
            None
        };
        let pool: Vec<Arc<dyn Doorbell>> = if channel == Channel::Pooled {
            match (0..self.threads)
                .map(|_| Kind::EventFd.open().map(Arc::from))
                .collect::<Result<_, _>>()
            {
                Ok(pool) => pool,
                Err(e) => return Outcome::Unsupported(format!("eventfd failed: {e}")),
            }
        } else {
            Vec::new()
        };
        let mut failure = None;
        let t = self.threads;
        let measurement = harness.in_groups_of(t as u64).measure(|n| {
            for _ in 0..n as usize / t {
                if let Err(e) = batch(channel, t, &pool, configs) {
                    failure.get_or_insert(e);
                }
            }
        });
        match failure {
            Some(reason) => {
                Outcome::Unsupported(format!("the {} channel failed: {reason}", variant.name))
            }
            None => Outcome::on_cpus(measurement, vec![placement.cpu]),
        }
    }
}
