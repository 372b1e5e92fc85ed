//! The syscall batching machinery moves the bytes it claims to.

use crate::common;

use mitbench::measure::probes::syscall::batch::io_uring_write_batch;
use std::os::fd::{AsRawFd, OwnedFd};

fn pipe() -> (OwnedFd, OwnedFd) {
    mitbench::sys::pipe(libc::O_NONBLOCK).unwrap()
}

#[test]
fn io_uring_batches_complete_with_every_byte() {
    let mut ring = match io_uring::IoUring::new(256) {
        Ok(ring) => ring,
        // The probe reports this machine as unsupported; nothing to check,
        // and the skip is said where the test runner shows it.
        Err(e) => {
            return common::skipped(&format!("io_uring batches: io_uring unavailable here: {e}"));
        }
    };
    let (read, write) = pipe();
    for n in [1, 7, 64, 256] {
        assert_eq!(
            io_uring_write_batch(&mut ring, write.as_raw_fd(), n).unwrap(),
            n,
            "batch of {n}"
        );
        let mut buf = vec![0u8; 512];
        let got = unsafe { libc::read(read.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        assert_eq!(got, n as isize, "bytes in the pipe after a batch of {n}");
        assert!(buf[..n].iter().all(|&b| b == b'x'));
    }
    // A write to a closed reader completes with an error, not a byte count.
    drop(read);
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    assert!(io_uring_write_batch(&mut ring, write.as_raw_fd(), 1).is_err());
}

fn seccomp_fields(path: &str) -> (String, String) {
    let status = std::fs::read_to_string(path).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_string())
            .unwrap_or_default()
    };
    (field("Seccomp:"), field("Seccomp_filters:"))
}

#[test]
fn seccomp_filters_leave_with_their_thread() {
    use mitbench::measure::probes::{self, Kind, Outcome};
    let harness = common::tiny_harness();
    let cpu = common::measuring_cpu();
    let placement = &cpu.placement;
    let probe = probes::select(&["syscall/seccomp".to_string()]).unwrap()[0];
    let variants = probe.variants();
    let mut medians = std::collections::HashMap::new();
    for name in ["none", "number/F=2/R=10", "args/F=2/R=50"] {
        let variant = variants.iter().find(|v| v.name == name).unwrap();
        match probe.run(variant, placement, &harness) {
            Outcome::Measured(m) => {
                medians.insert(name, m.measurement.per_item.median.value);
            }
            Outcome::Unsupported(reason) => {
                // A machine that refuses filters, not a probe that broke.
                assert!(
                    !matches!(reason.kind, Kind::ProbeFailed | Kind::SamplesDropped),
                    "{reason}"
                );
                return common::skipped(&format!("seccomp filter costs: {reason}"));
            }
            Outcome::Interrupted => panic!("interrupted without a signal"),
        }
    }
    // Reading arguments defeats the kernel's cache: dearer than no filter.
    assert!(medians["args/F=2/R=50"] > medians["none"]);
    // Neither this thread nor the process carries a filter afterwards.
    for path in ["/proc/thread-self/status", "/proc/self/status"] {
        let (mode, filters) = seccomp_fields(path);
        assert_eq!(mode, "0", "{path}: Seccomp");
        assert!(
            filters.is_empty() || filters == "0",
            "{path}: Seccomp_filters {filters}"
        );
    }
}

#[test]
fn speculation_controls_change_only_in_the_measuring_thread() {
    use mitbench::measure::probes::syscall::specctrl::states;
    use mitbench::measure::probes::{self, Kind, Outcome};
    let harness = common::tiny_harness();
    let cpu = common::measuring_cpu();
    let placement = &cpu.placement;
    let before = states();
    let mut set_any = false;
    for probe in probes::select(&["syscall/specctrl-*".to_string()]).unwrap() {
        for variant in probe.variants() {
            match probe.run(&variant, placement, &harness) {
                Outcome::Measured(m) => {
                    assert!(
                        m.measurement.per_item.median.value > 0.0,
                        "{}",
                        variant.name
                    );
                    // A row that set a control says what it changed.
                    if variant.name != "unchanged" {
                        set_any = true;
                        assert!(
                            m.notes
                                .iter()
                                .any(|n| n.contains("in the measuring thread only")),
                            "{:?}",
                            m.notes
                        );
                    }
                }
                Outcome::Unsupported(why) => assert!(
                    matches!(
                        why.kind,
                        Kind::MissingFeature { .. } | Kind::Denied { .. } | Kind::CallFailed { .. }
                    ),
                    "{why:?}"
                ),
                Outcome::Interrupted => panic!("interrupted without a signal"),
            }
        }
    }
    assert_eq!(
        states(),
        before,
        "this thread's speculation controls changed"
    );
    eprintln!("controls set in measuring threads: {set_any}");
}
