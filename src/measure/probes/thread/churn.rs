//! Thread churn with a per-thread signal channel (seed 002): in a batch of T
//! threads, the creator makes each thread's channel, the thread signals once
//! over it and exits, the creator receives every signal and joins every
//! thread. One item is one thread's whole life. The channel kinds range from
//! none to a TLS 1.3 session that only ever carries that one signal, and a
//! pool of channels made once and reused.

use super::tls;
use crate::measure::harness::Harness;
use crate::measure::harness::phases::Laps;
use crate::measure::probes::doorbell::{Doorbell, Kind};
use crate::measure::probes::{Config, Declaration, Outcome, Placement, Probe, Role, Unsupported};
use serde::Serialize;
use serde_json::json;
use std::fmt;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::thread::JoinHandle;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Channel {
    None,
    EventFd,
    Pipe,
    SocketPair,
    Tls,
    Pooled,
}

impl Channel {
    const ALL: [Channel; 6] = [
        Channel::None,
        Channel::EventFd,
        Channel::Pipe,
        Channel::SocketPair,
        Channel::Tls,
        Channel::Pooled,
    ];

    fn name(self) -> &'static str {
        match self {
            Channel::None => "none",
            Channel::EventFd => "eventfd",
            Channel::Pipe => "pipe",
            Channel::SocketPair => "socketpair",
            Channel::Tls => "tls",
            Channel::Pooled => "pooled",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Channel::None => "no channel: create and join",
            Channel::EventFd => "an eventfd per thread",
            Channel::Pipe => "a pipe per thread",
            Channel::SocketPair => "a Unix socketpair per thread",
            Channel::Tls => "TLS 1.3 (rustls, ring) over a socketpair per thread",
            Channel::Pooled => "eventfds made once and reused by every thread",
        }
    }
}

/// Batches of `threads` threads, each with a channel of one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Churning {
    channel: Channel,
    threads: usize,
}

impl fmt::Display for Churning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.channel.name())
    }
}

impl Serialize for Churning {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        json!({"channel": self.channel.what(), "threads_per_batch": self.threads}).serialize(s)
    }
}

impl Config for Churning {
    /// The seed's question: what each alternative saves against the TLS
    /// channel.
    fn role(&self) -> Role {
        Role::baseline_if(self.channel == Channel::Tls)
    }
}

pub struct Churn {
    pub threads: usize,
    declaration: Declaration,
}

const fn churn(id: &'static str, threads: usize) -> Churn {
    Churn {
        threads,
        declaration: Declaration::new(id, "002", "thread (create, channel, one signal, join)").summary("create T threads, each signals its creator once over its own channel, join them all"),
    }
}

pub const CHURNS: [Churn; 3] = [
    churn("thread/churn-T1", 1),
    churn("thread/churn-T10", 10),
    churn("thread/churn-T100", 100),
];

/// A thread's life as its creator sees it, in the seed's terms: make the
/// channel (socket, eventfd, ...), create the thread, finish the handshake
/// (TLS only), receive the first signal, join. Indices into `PHASES`.
const PHASES: [&str; 5] = ["channel", "create", "handshake", "signal", "join"];
const CHANNEL: usize = 0;
const CREATE: usize = 1;
const HANDSHAKE: usize = 2;
const SIGNAL: usize = 3;
const JOIN: usize = 4;

/// The creator's end of one thread's channel.
enum Receiver {
    Bell(Arc<dyn Doorbell>),
    Socket(UnixStream),
    Tls(UnixStream, &'static tls::Configs),
}

fn io(e: std::io::Error) -> String {
    e.to_string()
}

impl Receiver {
    /// Waits for the thread's one signal; the handshake, where there is
    /// one, is a phase of its own. The channel is closed within the signal
    /// phase.
    fn receive(self, laps: &mut Laps) -> Result<(), String> {
        match self {
            Receiver::Bell(bell) => {
                bell.wait();
                if let Some(failure) = bell.failure() {
                    return Err(failure.reason);
                }
            }
            Receiver::Socket(mut sock) => sock.read_exact(&mut [0u8]).map_err(io)?,
            Receiver::Tls(sock, configs) => {
                let mut session = tls::connect(configs, sock)?;
                laps.end(HANDSHAKE);
                tls::receive(&mut session)?;
            }
        }
        laps.end(SIGNAL);
        Ok(())
    }
}

fn spawn<F>(body: F) -> Result<JoinHandle<Result<(), String>>, String>
where
    F: FnOnce() -> Result<(), String> + Send + 'static,
{
    std::thread::Builder::new()
        .stack_size(64 << 10)
        .spawn(body)
        .map_err(io)
}

/// One batch of `threads` threads over `channel`, its phases marked on
/// `laps`; Err on any failure.
fn batch(
    channel: Channel,
    threads: usize,
    pool: &[Arc<dyn Doorbell>],
    configs: Option<&'static tls::Configs>,
    laps: &mut Laps,
) -> Result<(), String> {
    let mut handles = Vec::with_capacity(threads);
    let mut receivers = Vec::with_capacity(threads);
    let mut pooled = pool.iter();
    for _ in 0..threads {
        let handle = match channel {
            Channel::None => spawn(|| Ok(()))?,
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
                receivers.push(Receiver::Bell(bell));
                laps.end(CHANNEL);
                spawn(move || {
                    theirs.ring();
                    theirs.failure().map_or(Ok(()), |f| Err(f.reason))
                })?
            }
            Channel::SocketPair => {
                let (mine, mut theirs) = UnixStream::pair().map_err(io)?;
                receivers.push(Receiver::Socket(mine));
                laps.end(CHANNEL);
                spawn(move || theirs.write_all(&[1]).map_err(io))?
            }
            Channel::Tls => {
                let configs = configs.ok_or("no TLS configuration")?;
                let (mine, theirs) = UnixStream::pair().map_err(io)?;
                receivers.push(Receiver::Tls(mine, configs));
                laps.end(CHANNEL);
                spawn(move || tls::serve_signal(configs, theirs, 1))?
            }
        };
        handles.push(handle);
        laps.end(CREATE);
    }
    let received: Result<(), String> = receivers
        .into_iter()
        .try_for_each(|receiver| receiver.receive(laps));
    let joined: Result<(), String> = handles.into_iter().try_for_each(|h| {
        h.join()
            .map_err(|_| "a churn thread panicked".to_string())
            .and_then(|r| r)
    });
    laps.end(JOIN);
    received.and(joined)
}

described_by_field!(Churn);

impl Probe for Churn {
    type Config = Churning;

    fn configs(&self) -> Vec<Churning> {
        let threads = self.threads;
        Channel::ALL
            .map(|channel| Churning { channel, threads })
            .to_vec()
    }

    fn check(&self, config: &Churning, _placement: &Placement) -> Result<(), Unsupported> {
        if config.channel == Channel::Tls {
            tls::configs().map_err(Unsupported::probe_failed)?;
        }
        Ok(())
    }

    fn measure(&self, config: &Churning, placement: &Placement, harness: &Harness) -> Outcome {
        let channel = config.channel;
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
                Err(e) => return Outcome::Unsupported(Unsupported::io("eventfd", &e)),
            }
        } else {
            Vec::new()
        };
        let mut failure = None;
        let t = self.threads;
        // Batches of 10 and 100 threads answer whether creation scales;
        // half the budget still gives them about a hundred samples (TLS
        // about ten), and the family its time target.
        let harness = if t > 1 {
            harness.with_budget_share(0.5)
        } else {
            harness.clone()
        };
        let measurement = harness
            .in_groups_of(t as u64)
            .measure_phased(&PHASES, |n, laps| {
                for _ in 0..n as usize / t {
                    if let Err(e) = batch(channel, t, &pool, configs, laps) {
                        failure.get_or_insert(e);
                    }
                }
            });
        match failure {
            Some(reason) => Outcome::Unsupported(Unsupported::probe_failed(format!(
                "the {} channel failed: {reason}",
                channel.name()
            ))),
            None => Outcome::on_cpus(measurement, vec![placement.cpu]),
        }
    }
}
