//! Syscall batching: N one-byte buffers written with N write calls, one
//! writev of N buffers, or N io_uring submissions in one enter, to /dev/null
//! and to a pipe. Costs are per buffer, so the kernel-entry toll shows up as
//! the per-crossing term of cost(N) = per buffer + per crossing / N.

use crate::measure::harness::{Harness, Measurement};
use crate::measure::probes::failures::Failures;
use crate::measure::probes::{
    Batched, Config, Declaration, Outcome, Placement, Probe, Role, Unsupported,
};
use crate::sys::retry_eintr;
use io_uring::{IoUring, opcode, types};
use serde::Serialize;
use serde_json::json;
use std::fmt;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

pub const SIZES: [usize; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    Write,
    Writev,
    IoUring,
}

impl Api {
    fn name(self) -> &'static str {
        match self {
            Api::Write => "write",
            Api::Writev => "writev",
            Api::IoUring => "io_uring",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sink {
    DevNull,
    Pipe,
}

impl Sink {
    fn name(self) -> &'static str {
        match self {
            Sink::DevNull => "devnull",
            Sink::Pipe => "pipe",
        }
    }
}

pub struct Batch {
    sink: Sink,
    declaration: Declaration,
}

const fn batch(id: &'static str, sink: Sink) -> Batch {
    Batch {
        sink,
        declaration: Declaration::new(id, "001", "one-byte buffer").summary("N one-byte buffers per kernel crossing: N writes, one writev, or one io_uring enter")
        .requires(&["io_uring (kernel 5.6+, not disabled by sysctl) for the io_uring variants"]),
    }
}

pub const BATCH_DEVNULL: Batch = batch("syscall/batch-devnull", Sink::DevNull);
pub const BATCH_PIPE: Batch = batch("syscall/batch-pipe", Sink::Pipe);

/// N buffers to a sink by one API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Buffers {
    api: Api,
    n: usize,
    sink: Sink,
}

impl fmt::Display for Buffers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/N={}", self.api.name(), self.n)
    }
}

impl Serialize for Buffers {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let per_buffer = if self.api == Api::Write {
            1.0
        } else {
            1.0 / self.n as f64
        };
        json!({
            "api": self.api.name(),
            "batch": self.n,
            "crossings_per_buffer": per_buffer,
            "sink": self.sink.name(),
        })
        .serialize(s)
    }
}

impl Config for Buffers {
    fn role(&self) -> Role {
        Role::baseline_if(self.api == Api::Write && self.n == 1)
    }

    fn batch(&self) -> Option<Batched> {
        Some(Batched::new(self.api.name(), self.n as u64))
    }
}

/// Why io_uring cannot be used here, with the sysctl that may explain it.
fn io_uring_refusal() -> Option<Unsupported> {
    match IoUring::new(8) {
        Ok(_) => None,
        Err(e) => {
            let sysctl = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
                .map_or("absent".to_string(), |s| s.trim().to_string());
            Some(Unsupported::errno(
                "io_uring_setup",
                e.raw_os_error().unwrap_or(0),
                format!("io_uring_setup failed: {e} (kernel.io_uring_disabled: {sysctl})"),
            ))
        }
    }
}

described_by_field!(Batch);

impl Probe for Batch {
    type Config = Buffers;

    fn configs(&self) -> Vec<Buffers> {
        let sink = self.sink;
        [Api::Write, Api::Writev, Api::IoUring]
            .into_iter()
            .flat_map(|api| SIZES.map(|n| Buffers { api, n, sink }))
            .collect()
    }

    fn check(&self, buffers: &Buffers, _placement: &Placement) -> Result<(), Unsupported> {
        match buffers.api {
            Api::IoUring => io_uring_refusal().map_or(Ok(()), Err),
            _ => Ok(()),
        }
    }

    fn measure(&self, buffers: &Buffers, placement: &Placement, harness: &Harness) -> Outcome {
        let Buffers { api, n, .. } = *buffers;
        let sink = match open_sink(self.sink) {
            Ok(sink) => sink,
            Err(e) => return Outcome::Unsupported(Unsupported::io("opening the sink", &e)),
        };
        let failures = Failures::new();
        let result = match api {
            Api::Write => Ok(measure_writes(harness, &sink, n, &failures)),
            Api::Writev => Ok(measure_writev(harness, &sink, n, &failures)),
            Api::IoUring => measure_io_uring(harness, &sink, n),
        };
        match result {
            Ok(measurement) => failures.outcome(measurement, vec![placement.cpu]),
            Err(reason) => Outcome::Unsupported(reason),
        }
    }
}

/// Where the bytes go; for a pipe, the read end to drain between samples.
pub struct SinkFds {
    write: OwnedFd,
    drain: Option<OwnedFd>,
}

pub fn open_sink(sink: Sink) -> std::io::Result<SinkFds> {
    match sink {
        Sink::DevNull => {
            // SAFETY: opens a path we own no state for; checked below.
            let fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: fd was just opened.
            Ok(SinkFds {
                write: unsafe { OwnedFd::from_raw_fd(fd) },
                drain: None,
            })
        }
        Sink::Pipe => {
            let (read, write) = crate::sys::pipe(libc::O_NONBLOCK)?;
            // A 1 MiB pipe holds any batch between drains (the kernel caps
            // it at pipe-max-size). SAFETY: fcntl on our own descriptor.
            unsafe { libc::fcntl(write.as_raw_fd(), libc::F_SETPIPE_SZ, 1 << 20) };
            Ok(SinkFds {
                write,
                drain: Some(read),
            })
        }
    }
}

impl SinkFds {
    /// Times batches of `n` buffers, `batch` sending one batch to the
    /// sink's descriptor; the sink is drained untimed between samples.
    fn time_batches(
        &self,
        harness: &Harness,
        n: usize,
        mut batch: impl FnMut(RawFd),
    ) -> Option<Measurement> {
        let fd = self.write.as_raw_fd();
        harness.in_groups_of(n as u64).measure_prepared(
            |_| self.drain(),
            |_, items| {
                for _ in 0..items / n as u64 {
                    batch(fd);
                }
            },
        )
    }

    /// Empties the pipe, untimed, so the next batch never blocks or fails.
    fn drain(&self) {
        if let Some(read) = &self.drain {
            let mut buf = [0u8; 65536];
            // SAFETY: reads into a valid buffer from our own non-blocking pipe.
            while unsafe { libc::read(read.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
        }
    }
}

static BYTE: u8 = b'x';

/// One write per buffer: the crossing paid per item.
fn measure_writes(
    harness: &Harness,
    sink: &SinkFds,
    n: usize,
    failures: &Failures,
) -> Option<Measurement> {
    sink.time_batches(harness, n, |fd| {
        for _ in 0..n {
            // SAFETY: writes one byte from a static to our own fd.
            let result = retry_eintr(|| unsafe { libc::write(fd, (&raw const BYTE).cast(), 1) });
            failures.check_io("write", result, 1);
        }
    })
}

/// One writev of `n` one-byte iovecs: one crossing per batch.
fn measure_writev(
    harness: &Harness,
    sink: &SinkFds,
    n: usize,
    failures: &Failures,
) -> Option<Measurement> {
    let iov = vec![
        libc::iovec {
            iov_base: (&raw const BYTE).cast_mut().cast(),
            iov_len: 1
        };
        n
    ];
    sink.time_batches(harness, n, |fd| {
        // SAFETY: n iovecs, each one readable byte.
        let result = retry_eintr(|| unsafe { libc::writev(fd, iov.as_ptr(), n as libc::c_int) });
        failures.check_io("writev", result, n);
    })
}

/// Submits `n` one-byte writes to `fd` and waits for all of them; returns
/// the bytes the completions report.
pub fn io_uring_write_batch(
    ring: &mut IoUring,
    fd: libc::c_int,
    n: usize,
) -> std::io::Result<usize> {
    let sqe = opcode::Write::new(types::Fd(fd), &raw const BYTE, 1)
        .offset(u64::MAX)
        .build();
    {
        let mut sq = ring.submission();
        for _ in 0..n {
            // SAFETY: the buffer is a static, valid for the whole write.
            unsafe { sq.push(&sqe) }.map_err(|_| std::io::Error::other("submission queue full"))?;
        }
    }
    ring.submit_and_wait(n)?;
    let mut bytes = 0;
    for cqe in ring.completion() {
        bytes += usize::try_from(cqe.result())
            .map_err(|_| std::io::Error::from_raw_os_error(-cqe.result()))?;
    }
    Ok(bytes)
}

fn measure_io_uring(
    harness: &Harness,
    sink: &SinkFds,
    n: usize,
) -> Result<Option<Measurement>, Unsupported> {
    let mut ring = IoUring::new(SIZES[SIZES.len() - 1] as u32)
        .map_err(|e| Unsupported::io("io_uring_setup", &e))?;
    let mut short = 0usize;
    let measurement = sink.time_batches(harness, n, |fd| {
        match io_uring_write_batch(&mut ring, fd, n) {
            Ok(bytes) if bytes == n => {}
            _ => short += 1,
        }
    });
    if short > 0 {
        return Err(Unsupported::errno(
            "io_uring write",
            0,
            format!("{short} io_uring batches did not write all their bytes"),
        ));
    }
    Ok(measurement)
}
