//! Calls inside a timed batch that failed. A batch cannot stop to report an
//! error, and a call that fails at once (ENOMEM, EPERM, a seccomp errno) is
//! fast: counted as an item it would show a fast, precise, wrong cost. So
//! the batch notes every failure here, and the round is then reported as
//! not measurable, with the call and its errno, instead of as a figure.
//!
//! Notes are atomic, so the threads of one measurement (a ping-pong's two
//! sides) can share one; a call that succeeds costs a compare and branch.

use super::{Outcome, Unsupported};
use crate::measure::harness::Measurement;
use std::io;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub struct Failures {
    /// The first failed call and its errno (0: it did less than asked).
    first: OnceLock<(&'static str, i32)>,
    count: AtomicU64,
}

impl Failures {
    pub fn new() -> Failures {
        Failures::default()
    }

    /// Notes `call` as failed unless `ok`; reads errno, so call it right
    /// after the call.
    #[inline(always)]
    pub fn check(&self, call: &'static str, ok: bool) {
        if !ok {
            self.record(call);
        }
    }

    /// Notes `call` as failed when a raw syscall's result is negative: the
    /// kernel returns -errno and leaves errno alone.
    #[inline(always)]
    pub fn check_raw(&self, call: &'static str, ret: i64) {
        if ret < 0 {
            self.record_errno(call, i32::try_from(-ret).unwrap_or(0));
        }
    }

    /// Notes `call` as failed unless it moved exactly `bytes` (a read or
    /// write through [`crate::sys::retry_eintr`]).
    #[inline(always)]
    pub fn check_io(&self, call: &'static str, result: io::Result<isize>, bytes: usize) {
        match result {
            Ok(moved) if moved as usize == bytes => {}
            Ok(_) => self.record_errno(call, 0),
            Err(e) => self.record_errno(call, e.raw_os_error().unwrap_or(0)),
        }
    }

    /// The value of a call that returns a `Result`, or None with the
    /// failure noted under its own errno.
    #[inline(always)]
    pub fn ok<T>(&self, call: &'static str, result: io::Result<T>) -> Option<T> {
        result
            .map_err(|e| self.record_errno(call, e.raw_os_error().unwrap_or(0)))
            .ok()
    }

    #[cold]
    #[inline(never)]
    fn record(&self, call: &'static str) {
        let errno = io::Error::last_os_error().raw_os_error().unwrap_or(0);
        self.record_errno(call, errno);
    }

    #[cold]
    #[inline(never)]
    fn record_errno(&self, call: &'static str, errno: i32) {
        self.count.fetch_add(1, Ordering::Relaxed);
        let _ = self.first.set((call, errno));
    }

    /// Why the work cannot be measured here, if any call failed.
    pub fn reason(&self) -> Option<Unsupported> {
        let &(call, errno) = self.first.get()?;
        let why = if errno == 0 {
            "it did less than asked (a short result)".to_string()
        } else {
            io::Error::from_raw_os_error(errno).to_string()
        };
        let sentence = format!(
            "{call} failed: {why} ({} of the timed calls failed)",
            self.count.load(Ordering::Relaxed)
        );
        Some(Unsupported::errno(call, errno, sentence))
    }

    /// The round's outcome: unsupported with the first failure when any
    /// call failed, else as [`Outcome::on_cpus`].
    pub fn outcome(&self, measurement: Option<Measurement>, cpus: Vec<usize>) -> Outcome {
        match self.reason() {
            Some(reason) => Outcome::Unsupported(reason),
            None => Outcome::on_cpus(measurement, cpus),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_failure_is_kept_and_all_are_counted() {
        let failures = Failures::new();
        failures.check("mprotect", true);
        assert!(failures.reason().is_none());
        // SAFETY: an invalid fd makes close fail with EBADF and do nothing.
        let ok = unsafe { libc::close(-1) } == 0;
        failures.check("close", ok);
        failures.check_raw("getpid", 12);
        failures.check_raw("mprotect", -i64::from(libc::EPERM));
        let why = failures.reason().unwrap();
        assert_eq!(why.kind_name(), "call-failed");
        let reason = why.reason;
        assert!(
            reason.starts_with("close failed: Bad file descriptor"),
            "{reason}"
        );
        assert!(reason.contains("2 of the timed calls failed"), "{reason}");
        assert!(matches!(
            failures.outcome(None, vec![0]),
            Outcome::Unsupported(_)
        ));
    }

    #[test]
    fn a_short_or_failed_read_is_a_failure() {
        let failures = Failures::new();
        failures.check_io("pipe read", Ok(1), 1);
        assert!(failures.reason().is_none());
        failures.check_io("pipe read", Ok(0), 1);
        let reason = failures.reason().unwrap().reason;
        assert!(
            reason.starts_with("pipe read failed: it did less than asked"),
            "{reason}"
        );
        let failed = Failures::new();
        failed.check_io(
            "write",
            Err(std::io::Error::from_raw_os_error(libc::EPIPE)),
            1,
        );
        assert!(
            failed
                .reason()
                .unwrap()
                .reason
                .starts_with("write failed: Broken pipe")
        );
    }
}
