//! One-way wake-up channels: ring on one side, wait on the other. Each kind
//! crosses into the kernel on both sides, as a real signalling channel does.
//! The ping-pong partner answers on them; churned threads signal on them.

use super::Unsupported;
use super::failures::Failures;
use crate::sys::retry_eintr;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};

pub trait Doorbell: Send + Sync {
    fn ring(&self);
    fn wait(&self);
    /// The first ring or wait that failed, and how many did: a wait that
    /// fails returns at once, and a round trip timed over it would be a
    /// fast, wrong cost.
    fn failure(&self) -> Option<Unsupported> {
        None
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Futex,
    Pipe,
    EventFd,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Futex, Kind::Pipe, Kind::EventFd];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Futex => "futex",
            Kind::Pipe => "pipe",
            Kind::EventFd => "eventfd",
        }
    }

    pub fn open(self) -> io::Result<Box<dyn Doorbell>> {
        Ok(match self {
            Kind::Futex => Box::new(Futex(AtomicU32::new(0))),
            Kind::Pipe => Box::new(Pipe::open()?),
            Kind::EventFd => Box::new(EventFd::open()?),
        })
    }
}

/// A binary semaphore on a futex word: FUTEX_WAKE on ring, FUTEX_WAIT while
/// the word is 0.
struct Futex(AtomicU32);

impl Doorbell for Futex {
    fn ring(&self) {
        self.0.store(1, Ordering::Release);
        // SAFETY: the word is a valid, aligned u32 for the duration.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.0.as_ptr(),
                libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                1,
            );
        }
    }

    fn wait(&self) {
        while self.0.swap(0, Ordering::Acquire) == 0 {
            // SAFETY: as above; a null timeout waits indefinitely. EAGAIN
            // (the word changed) and EINTR both just loop.
            unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    self.0.as_ptr(),
                    libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                    0,
                    std::ptr::null::<libc::timespec>(),
                );
            }
        }
    }
}

/// A pipe rung by writing a byte and waited on by reading one: across
/// processes too (a forked child keeps both ends; see [`Pipe::ends`]).
pub struct Pipe {
    read: OwnedFd,
    write: OwnedFd,
    failed: Failures,
}

impl Pipe {
    pub fn open() -> io::Result<Pipe> {
        let (read, write) = crate::sys::pipe(0)?;
        Ok(Pipe {
            read,
            write,
            failed: Failures::new(),
        })
    }

    /// Its read and write descriptors, for a forked child's own loop.
    pub fn ends(&self) -> (std::os::fd::RawFd, std::os::fd::RawFd) {
        (self.read.as_raw_fd(), self.write.as_raw_fd())
    }
}

impl Doorbell for Pipe {
    fn ring(&self) {
        // SAFETY: writes one byte from a valid buffer to our own pipe.
        let result = retry_eintr(|| unsafe {
            libc::write(self.write.as_raw_fd(), [1u8].as_ptr().cast(), 1)
        });
        self.failed.check_io("pipe write", result, 1);
    }

    fn wait(&self) {
        let mut byte = 0u8;
        // SAFETY: reads one byte into a valid buffer from our own pipe.
        let result =
            retry_eintr(|| unsafe { libc::read(self.read.as_raw_fd(), (&raw mut byte).cast(), 1) });
        self.failed.check_io("pipe read", result, 1);
    }

    fn failure(&self) -> Option<Unsupported> {
        self.failed.reason()
    }
}

struct EventFd(OwnedFd, Failures);

impl EventFd {
    fn open() -> io::Result<EventFd> {
        Ok(EventFd(crate::sys::eventfd()?, Failures::new()))
    }
}

impl Doorbell for EventFd {
    fn ring(&self) {
        let one = 1u64;
        // SAFETY: writes 8 bytes from a valid u64 to our own eventfd.
        let result =
            retry_eintr(|| unsafe { libc::write(self.0.as_raw_fd(), (&raw const one).cast(), 8) });
        self.1.check_io("eventfd write", result, 8);
    }

    fn wait(&self) {
        let mut count = 0u64;
        // SAFETY: reads 8 bytes into a valid u64 from our own eventfd.
        let result =
            retry_eintr(|| unsafe { libc::read(self.0.as_raw_fd(), (&raw mut count).cast(), 8) });
        self.1.check_io("eventfd read", result, 8);
    }

    fn failure(&self) -> Option<Unsupported> {
        self.1.reason()
    }
}
