//! Raw system calls through the `syscall` instruction, bypassing libc and the
//! vDSO, so a probe measures the kernel crossing and nothing else.

use std::arch::asm;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

/// A syscall with no arguments. Returns the raw kernel result (-errno on
/// failure).
#[inline(always)]
pub fn syscall0(nr: libc::c_long) -> i64 {
    let ret: i64;
    // SAFETY: the kernel clobbers rcx and r11 and nothing else visible here;
    // callers pass argument-free syscalls with no memory effects on us.
    unsafe {
        asm!("syscall", inlateout("rax") nr => ret, lateout("rcx") _, lateout("r11") _, options(nostack));
    }
    ret
}

/// A syscall with two arguments.
///
/// # Safety
/// The arguments must be valid for `nr`, e.g. pointers the kernel writes to.
#[inline(always)]
pub unsafe fn syscall2(nr: libc::c_long, a: usize, b: usize) -> i64 {
    let ret: i64;
    unsafe {
        asm!(
            "syscall",
            inlateout("rax") nr => ret,
            in("rdi") a,
            in("rsi") b,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

/// Runs a libc-style call (-1 and errno on failure) until it does not fail
/// with EINTR.
pub fn retry_eintr<T: PartialEq + From<i8>>(mut call: impl FnMut() -> T) -> io::Result<T> {
    loop {
        let ret = call();
        if ret != T::from(-1) {
            return Ok(ret);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// A pipe, (read end, write end), with `flags` for pipe2 (O_CLOEXEC is
/// always added).
pub fn pipe(flags: libc::c_int) -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), flags | libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned from here on.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}
