//! Processes as /proc lists them, and a pidfd to wait on one: what both
//! ways of counting (a command mitbench starts, a process already running)
//! need to find a tree of processes and to know when one ends.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

/// The numbered entries of a /proc directory: the pids in `/proc`, the
/// thread ids in `/proc/PID/task`. Empty where it cannot be read.
pub(super) fn numbered(dir: &str) -> Vec<libc::pid_t> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Every process now, with its parent.
pub(super) fn with_parents() -> Vec<(libc::pid_t, libc::pid_t)> {
    numbered("/proc")
        .into_iter()
        .filter_map(|pid| Some((pid, parent_of(pid)?)))
        .collect()
}

/// The parent pid in /proc/PID/stat: the field after the state, past the
/// command name's closing parenthesis (a name may hold spaces and ')').
fn parent_of(pid: libc::pid_t) -> Option<libc::pid_t> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// A pidfd of `pid`, readable once the process ends (Linux 5.3+).
pub(super) fn pidfd(pid: libc::pid_t) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags; the result is checked.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the descriptor was just created and is owned from here on.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}
