//! Raw system calls through the `syscall` instruction, bypassing libc and the
//! vDSO, so a probe measures the kernel crossing and nothing else; and what
//! CPUID says of a hypervisor, which a probe and the inventory both ask.

use std::arch::asm;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

/// A syscall with no arguments. Returns the raw kernel result (-errno on
/// failure). Its rdi is set to 0 and ignored by the kernel; in a timed
/// loop the compiler sets it once, outside the loop.
#[inline(always)]
pub fn syscall0(nr: libc::c_long) -> i64 {
    syscall1(nr, 0)
}

/// The `syscall` instruction with `nr` in rax and the given argument
/// operands and options; the kernel clobbers rcx and r11 and nothing else
/// visible here. One template for every arity.
macro_rules! raw_syscall {
    ($nr:expr, [$($operand:tt)*], $($option:ident),*) => {{
        let ret: i64;
        asm!(
            "syscall",
            inlateout("rax") $nr => ret,
            $($operand)*
            lateout("rcx") _,
            lateout("r11") _,
            options($($option),*)
        );
        ret
    }};
}

/// A syscall with one argument and no memory effects on us (getpid,
/// getuid, or close on a descriptor that is not open).
#[inline(always)]
pub fn syscall1(nr: libc::c_long, a: usize) -> i64 {
    // SAFETY: callers pass syscalls with no memory effects on us, so
    // `nomem` is true and lets a timed loop keep its state in registers
    // across the call (no spill and reload per item that a C loop would not
    // have). Without `pure` the call is still made every time.
    unsafe { raw_syscall!(nr, [in("rdi") a,], nostack, nomem, preserves_flags) }
}

/// A syscall with two arguments.
///
/// # Safety
/// The arguments must be valid for `nr`, e.g. pointers the kernel writes to.
#[inline(always)]
pub unsafe fn syscall2(nr: libc::c_long, a: usize, b: usize) -> i64 {
    unsafe { raw_syscall!(nr, [in("rdi") a, in("rsi") b,], nostack) }
}

/// A syscall with three arguments that may run a signal handler before it
/// returns (tgkill to the calling thread): memory may change under it.
///
/// # Safety
/// The arguments must be valid for `nr`.
#[inline(always)]
pub unsafe fn syscall3(nr: libc::c_long, a: usize, b: usize, c: usize) -> i64 {
    unsafe { raw_syscall!(nr, [in("rdi") a, in("rsi") b, in("rdx") c,], nostack) }
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

/// Opens `path` to append to, to an end that is there now: a FIFO with
/// no reader is `Ok(None)` rather than an open that waits for one. Writes
/// then block as on any file.
pub fn append_if_read(path: &std::path::Path) -> io::Result<Option<std::fs::File>> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let file = match std::fs::OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => return Ok(None),
        Err(e) => return Err(e),
    };
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function owns.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above; only O_NONBLOCK is taken off.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Some(file))
}

/// An eventfd with counter 0, close-on-exec.
pub fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: plain syscall wrapper.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just created and is owned from here on.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Puts the calling thread (not the process) under SCHED_FIFO at
/// `priority`; the setting ends with the thread.
pub fn set_fifo(priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: pid 0 names the calling thread; param is a valid sched_param.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sets the calling thread's timer slack to its least, so its timed sleeps
/// end on time rather than up to the default 50 us late; the setting ends
/// with the thread.
pub fn minimal_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1u64, 0u64, 0u64, 0u64) };
}

/// CLOCK_MONOTONIC in nanoseconds.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec to write.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps until CLOCK_MONOTONIC reads `deadline_ns`, through signals.
pub fn sleep_until_ns(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: ts is a valid timespec; no remaining-time pointer is needed
    // with TIMER_ABSTIME.
    while unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    } == libc::EINTR
    {}
}

/// Whether CPUID says a hypervisor runs this CPU (leaf 1, ECX bit 31,
/// which hypervisors set and processors leave clear).
pub fn under_a_hypervisor() -> bool {
    std::arch::x86_64::__cpuid(1).ecx & (1 << 31) != 0
}

/// The hypervisor's signature (CPUID leaf 0x40000000: EBX, ECX, EDX, as
/// bytes, "KVMKVMKVM" and NULs on KVM) and the highest hypervisor leaf it
/// answers (EAX), where one runs this CPU.
pub fn hypervisor_leaf() -> Option<(Vec<u8>, u32)> {
    if !under_a_hypervisor() {
        return None;
    }
    let leaf = std::arch::x86_64::__cpuid(0x4000_0000);
    let signature = [leaf.ebx, leaf.ecx, leaf.edx]
        .iter()
        .flat_map(|r| r.to_le_bytes())
        .collect();
    Some((signature, leaf.eax))
}
