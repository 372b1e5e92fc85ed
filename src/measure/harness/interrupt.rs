//! Ctrl-C handling. The first SIGINT or SIGTERM only raises a flag that the
//! sampler checks between samples, so the probe in flight finishes its
//! sample, its helper threads and children are shut down by their owners, and
//! what was measured is still reported. A second signal ends the process at
//! once, as a user pressing Ctrl-C twice expects, and removes the files
//! registered with [`remove_on_abort`] first, since no destructor runs then.
//!
//! A run's forks are worker processes in a process group of their own, so
//! the terminal's Ctrl-C reaches only mitbench; the first signal is passed
//! on to the worker in flight ([`forward_to`]), which ends its round and
//! hands back what it measured. A second ends mitbench, and the worker
//! with it (it dies with its parent).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Once, OnceLock};

static REQUESTED: AtomicBool = AtomicBool::new(false);
/// The worker process the first signal is passed on to; 0 for none.
static FORWARD_TO: AtomicI32 = AtomicI32::new(0);
static INSTALL: Once = Once::new();
/// Files to unlink if a second signal ends the process: one slot per
/// output a run writes (--json, --html, --export-csv, --export-markdown,
/// --openmetrics).
/// Fixed slots, because the handler
/// may only read what is already in place.
static ABORT_REMOVES: [OnceLock<CString>; 5] = [const { OnceLock::new() }; 5];

/// Registers a file (a temporary output) that a second signal should remove
/// on its way out. Calls beyond the slots are ignored.
pub fn remove_on_abort(path: &Path) {
    if let Ok(path) = CString::new(path.as_os_str().as_bytes()) {
        let mut path = Some(path);
        for slot in &ABORT_REMOVES {
            match slot.set(path.take().expect("held until a slot takes it")) {
                Ok(()) => return,
                Err(back) => path = Some(back),
            }
        }
    }
}

pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// Passes the first signal on to `pid` from now on (None: to no one). A
/// signal that came before the call is passed on at once.
pub fn forward_to(pid: Option<i32>) {
    let pid = pid.unwrap_or(0);
    FORWARD_TO.store(pid, Ordering::SeqCst);
    if pid > 0 && requested() {
        // SAFETY: kill with a valid pid and signal.
        unsafe { libc::kill(pid, libc::SIGINT) };
    }
}

extern "C" fn on_signal(signal: libc::c_int) {
    if !REQUESTED.swap(true, Ordering::Relaxed) {
        let worker = FORWARD_TO.load(Ordering::SeqCst);
        if worker > 0 {
            // SAFETY: kill is async-signal-safe.
            unsafe { libc::kill(worker, libc::SIGINT) };
        }
    } else {
        // Second signal: remove the registered file, restore the default
        // action and die by it. A OnceLock read is an atomic load, and
        // unlink, signal and raise are async-signal-safe.
        // SAFETY: plain libc calls with valid arguments.
        unsafe {
            for path in ABORT_REMOVES.iter().filter_map(OnceLock::get) {
                libc::unlink(path.as_ptr());
            }
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        }
    }
}

/// Installs the handlers once per process.
pub fn install() {
    INSTALL.call_once(|| {
        for signal in [libc::SIGINT, libc::SIGTERM] {
            // SAFETY: a zeroed sigaction with a handler and SA_RESTART is
            // valid; the handler only touches an atomic.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as *const () as usize;
                // Restart interrupted syscalls so the ping-pong partners and
                // waitpid loops never see a spurious EINTR from our own flag.
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
        }
    });
}
