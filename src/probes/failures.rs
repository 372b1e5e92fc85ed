//! Calls inside a timed batch that failed. A batch cannot stop to report an
//! error, and a call that fails at once (ENOMEM, EPERM, a seccomp errno) is
//! fast: counted as an item it would show a fast, precise, wrong cost. So
//! the batch notes every failure here, and the round is then reported as
//! not measurable, with the call and its errno, instead of as a figure.

use super::Outcome;
use crate::harness::Measurement;
use std::cell::Cell;

#[derive(Debug, Default)]
pub struct Failures {
    /// The first failed call and its errno.
    first: Cell<Option<(&'static str, i32)>>,
    count: Cell<u64>,
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

    #[cold]
    #[inline(never)]
    fn record(&self, call: &'static str) {
        let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        self.record_errno(call, errno);
    }

    #[cold]
    #[inline(never)]
    fn record_errno(&self, call: &'static str, errno: i32) {
        self.count.set(self.count.get() + 1);
        if self.first.get().is_none() {
            self.first.set(Some((call, errno)));
        }
    }

    /// Why the work cannot be measured here, if any call failed.
    pub fn reason(&self) -> Option<String> {
        let (call, errno) = self.first.get()?;
        let why = if errno == 0 {
            "it did less than asked (a short result)".to_string()
        } else {
            std::io::Error::from_raw_os_error(errno).to_string()
        };
        Some(format!(
            "{call} failed: {why} ({} of the timed calls failed)",
            self.count.get()
        ))
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
        let reason = failures.reason().unwrap();
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
}
