//! Running a workload to its end under mitbench's watch: a time limit,
//! Ctrl-C, and nothing left behind.
//!
//! The wait is one `poll` on a pidfd of the workload and a signalfd for
//! SIGINT and SIGTERM, so no signal can slip in between a check and the
//! wait, and the counted thread sleeps the whole time (its own crossings
//! would be counted with the workload's). A Ctrl-C typed at the terminal
//! reaches the workload by itself (it shares mitbench's process group); a
//! signal sent to mitbench alone is passed on. mitbench becomes a child
//! subreaper while the workload runs, so descendants the workload leaves
//! running are adopted, stopped and reaped, not left behind.

use super::procs;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// How long a stopped workload has between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

/// How the workload's run ended, beside its exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ending {
    /// It ran past the time limit and was stopped.
    pub timed_out: bool,
    /// SIGINT or SIGTERM reached mitbench while it ran.
    pub interrupted: bool,
    /// Descendants still running when it ended, stopped by mitbench.
    pub leftovers: usize,
}

/// The signals mitbench takes over while it watches, blocked on the calling
/// thread; [`Watch::spawn`] gives the workload the mask from before.
pub struct Watch {
    signals: OwnedFd,
    previous_mask: libc::sigset_t,
}

impl Watch {
    /// Takes SIGINT and SIGTERM into a signalfd and makes mitbench a
    /// subreaper; both are undone when the Watch drops.
    pub fn start() -> io::Result<Watch> {
        // SAFETY: sigset manipulation on locals; the mask is this thread's.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGINT);
            libc::sigaddset(&mut set, libc::SIGTERM);
            let mut previous_mask: libc::sigset_t = std::mem::zeroed();
            let failed = libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut previous_mask);
            if failed != 0 {
                return Err(io::Error::from_raw_os_error(failed));
            }
            let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
            if fd < 0 {
                let e = io::Error::last_os_error();
                libc::pthread_sigmask(libc::SIG_SETMASK, &previous_mask, std::ptr::null_mut());
                return Err(e);
            }
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
            Ok(Watch {
                signals: OwnedFd::from_raw_fd(fd),
                previous_mask,
            })
        }
    }

    /// Starts `command` with the signal mask mitbench had before the
    /// watch: a blocked mask is inherited across exec, and a workload that
    /// blocks SIGINT would never see Ctrl-C.
    pub fn spawn(&self, command: &mut Command) -> io::Result<Child> {
        let mask = self.previous_mask;
        // SAFETY: pthread_sigmask is async-signal-safe, fit for between
        // fork and exec.
        unsafe {
            command.pre_exec(move || {
                match libc::pthread_sigmask(libc::SIG_SETMASK, &mask, std::ptr::null_mut()) {
                    0 => Ok(()),
                    e => Err(io::Error::from_raw_os_error(e)),
                }
            });
        }
        command.spawn()
    }

    /// Waits for `child` to end, stopping it after `timeout`, and then
    /// stops and reaps what it left running. Returns its wait status.
    pub fn wait(&self, child: &mut Child, timeout: Option<Duration>) -> io::Result<(i32, Ending)> {
        let pid = child.id() as libc::pid_t;
        let Ok(pidfd) = procs::pidfd(pid) else {
            // A kernel before 5.3: no timeout and no passing on, but the
            // workload is still waited for (the terminal's Ctrl-C reaches
            // it by itself), never left running.
            let status = reap(pid)?;
            let leftovers = stop_descendants();
            let ending = Ending {
                leftovers,
                ..Ending::default()
            };
            return Ok((status, ending));
        };
        let mut ending = Ending::default();
        let started = Instant::now();
        let mut deadline = timeout.map(|t| started + t);
        let mut killed = false;
        loop {
            let wait_ms = deadline.map_or(-1, |d| {
                let left = d.saturating_duration_since(Instant::now());
                i32::try_from(left.as_millis()).unwrap_or(i32::MAX)
            });
            match self.poll(&pidfd, wait_ms)? {
                Woken::Exited => break,
                Woken::Nothing => {}
                Woken::Signal {
                    signal,
                    from_terminal,
                } => {
                    ending.interrupted = true;
                    if !from_terminal {
                        // SAFETY: a signal to our own unreaped child.
                        unsafe { libc::kill(pid, signal) };
                    }
                }
                Woken::Timeout => {
                    let (signal, next) = if killed {
                        (libc::SIGKILL, None)
                    } else {
                        ending.timed_out = true;
                        (libc::SIGTERM, Some(Instant::now() + GRACE))
                    };
                    // SAFETY: as above.
                    unsafe { libc::kill(pid, signal) };
                    killed = true;
                    deadline = next;
                }
            }
        }
        let status = reap(pid)?;
        ending.leftovers = stop_descendants();
        Ok((status, ending))
    }

    /// Sleeps until `pidfd`'s process ends, SIGINT or SIGTERM comes, or
    /// `wait_ms` pass (-1: no limit).
    pub(super) fn poll(&self, pidfd: &OwnedFd, wait_ms: i32) -> io::Result<Woken> {
        let mut fds = [
            libc::pollfd {
                fd: pidfd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: self.signals.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: two valid pollfd entries.
        let ready =
            crate::sys::retry_eintr(|| unsafe { libc::poll(fds.as_mut_ptr(), 2, wait_ms) })?;
        if ready == 0 {
            return Ok(Woken::Timeout);
        }
        if fds[1].revents & libc::POLLIN != 0 {
            // SAFETY: reads one whole signalfd_siginfo into a local.
            let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
            let size = std::mem::size_of::<libc::signalfd_siginfo>();
            let read =
                unsafe { libc::read(self.signals.as_raw_fd(), (&raw mut info).cast(), size) };
            if read == size as isize {
                return Ok(Woken::Signal {
                    signal: info.ssi_signo as i32,
                    // The terminal's signals come from the kernel; kill(2)
                    // and sigqueue(3) from a process (a code <= 0).
                    from_terminal: info.ssi_code > 0,
                });
            }
        }
        if fds[0].revents != 0 {
            return Ok(Woken::Exited);
        }
        // A signal already taken by another reader, or nothing: wait on.
        Ok(Woken::Nothing)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        // SAFETY: restores this thread's mask and the subreaper flag.
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.previous_mask, std::ptr::null_mut());
        }
    }
}

pub(super) enum Woken {
    Exited,
    Nothing,
    Signal { signal: i32, from_terminal: bool },
    Timeout,
}

/// Reaps `pid`, returning its wait status.
fn reap(pid: libc::pid_t) -> io::Result<i32> {
    let mut status = 0;
    // SAFETY: waits for our own child into a local.
    crate::sys::retry_eintr(|| unsafe { libc::waitpid(pid, &mut status, 0) })?;
    Ok(status)
}

/// Stops and reaps every child mitbench has now: the workload's
/// descendants it adopted as subreaper. Returns how many there were.
fn stop_descendants() -> usize {
    let children = own_children();
    if children.is_empty() {
        return 0;
    }
    for &pid in &children {
        // SAFETY: a signal to our own child.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
    let deadline = Instant::now() + GRACE;
    let mut left = children.clone();
    while !left.is_empty() && Instant::now() < deadline {
        left.retain(|&pid| {
            // SAFETY: non-blocking wait for our own child.
            unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) == 0 }
        });
        std::thread::sleep(Duration::from_millis(10));
    }
    for pid in left {
        // SAFETY: as above; the blocking wait after SIGKILL is short.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
    }
    children.len()
}

/// This process's children, from every process's parent in /proc.
fn own_children() -> Vec<libc::pid_t> {
    let me = std::process::id() as libc::pid_t;
    procs::with_parents()
        .into_iter()
        .filter(|&(_, parent)| parent == me)
        .map(|(pid, _)| pid)
        .collect()
}
