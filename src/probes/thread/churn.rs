//! Thread churn with a per-thread signal channel (seed 002): in a batch of T
//! threads, the creator makes each thread's channel, the thread signals once
//! over it and exits, the creator receives every signal and joins every
//! thread. One item is one thread's whole life. The channel kinds range from
//! none to a TLS 1.3 session that only ever carries that one signal, and a
//! pool of channels made once and reused.

use super::tls;
use crate::harness::Harness;
use crate::probes::{Outcome, Placement, Probe, ProbeInfo, Variant};
use serde_json::json;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
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

fn eventfd() -> std::io::Result<OwnedFd> {
    // SAFETY: a fresh descriptor, owned below.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: just created.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn signal_fd(fd: &OwnedFd) -> std::io::Result<()> {
    let one = 1u64;
    // SAFETY: writes 8 bytes from a valid u64.
    let n = unsafe { libc::write(fd.as_raw_fd(), (&raw const one).cast(), 8) };
    if n == 8 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn receive_fd(fd: &OwnedFd, len: usize) -> std::io::Result<()> {
    let mut buf = [0u8; 8];
    // SAFETY: reads at most 8 bytes into a valid buffer.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), len) };
    if n == len as isize {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// One batch of `threads` threads over `channel`; Err on any failure.
fn batch(
    channel: Channel,
    threads: usize,
    pool: &[OwnedFd],
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
            Channel::EventFd => {
                let fd = Arc::new(eventfd().map_err(io)?);
                let theirs = fd.clone();
                handles.push(spawn(Box::new(move || signal_fd(&theirs).map_err(io)))?);
                receivers.push(Box::new(move || receive_fd(&fd, 8).map_err(io)));
            }
            Channel::Pipe => {
                let mut fds = [0; 2];
                // SAFETY: room for two descriptors.
                if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
                    return Err(std::io::Error::last_os_error().to_string());
                }
                // SAFETY: both just created.
                let (read, write) =
                    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
                handles.push(spawn(Box::new(move || {
                    // SAFETY: one byte from a valid buffer.
                    let n = unsafe { libc::write(write.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
                    if n == 1 {
                        Ok(())
                    } else {
                        Err(std::io::Error::last_os_error().to_string())
                    }
                }))?);
                receivers.push(Box::new(move || receive_fd(&read, 1).map_err(io)));
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
            Channel::Pooled => {
                let slot = pooled
                    .next()
                    .ok_or("the pool has fewer channels than threads")?;
                let fd = slot.try_clone().map_err(io)?;
                handles.push(spawn(Box::new(move || signal_fd(&fd).map_err(io)))?);
                let reader = slot.try_clone().map_err(io)?;
                receivers.push(Box::new(move || receive_fd(&reader, 8).map_err(io)));
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
        let pool: Vec<OwnedFd> = if channel == Channel::Pooled {
            match (0..self.threads)
                .map(|_| eventfd())
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
