//! The syscall batching machinery moves the bytes it claims to.

use mitbench::probes::syscall::batch::io_uring_write_batch;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    assert_eq!(
        unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) },
        0
    );
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

#[test]
fn io_uring_batches_complete_with_every_byte() {
    let mut ring = match io_uring::IoUring::new(256) {
        Ok(ring) => ring,
        // The probe reports this machine as unsupported; nothing to check.
        Err(e) => return eprintln!("io_uring unavailable here: {e}"),
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
