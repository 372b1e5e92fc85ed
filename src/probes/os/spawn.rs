//! Creating and reaping an execution context: a thread (create + join) and
//! a process (fork or vfork + wait). New threads and children inherit the
//! measuring thread's affinity, so all of it runs on the measuring CPU.

use crate::harness::Harness;
use crate::probes::failures::Failures;
use crate::probes::{Outcome, Placement, Probe};
use crate::sys::retry_eintr;
use std::ffi::c_void;

probe! {
    /// create a thread that returns at once, and join it
    pub struct Thread: "os/thread", seed "002", item "create + join";
}

extern "C" fn thread_returns(_: *mut c_void) -> *mut c_void {
    std::ptr::null_mut()
}

named_configs! {
    pub enum ThreadApi (baseline Pthread) {
        Pthread => "pthread" {"api": "pthread_create + pthread_join"},
        Std => "std" {"api": "std::thread::spawn + join"},
    }
}

impl Probe for Thread {
    type Config = ThreadApi;

    fn measure(&self, api: &ThreadApi, placement: &Placement, harness: &Harness) -> Outcome {
        // A thread refused (EAGAIN at a thread limit) is a failure, not a
        // cheap item.
        let failures = Failures::new();
        let measurement = match api {
            ThreadApi::Pthread => harness.measure_each(|| {
                let mut thread: libc::pthread_t = 0;
                // SAFETY: default attributes; the start routine ignores its
                // argument; the thread is joined before the next one starts.
                let created = unsafe {
                    libc::pthread_create(
                        &mut thread,
                        std::ptr::null(),
                        thread_returns,
                        std::ptr::null_mut(),
                    )
                };
                // pthread_create returns the error number instead of setting
                // errno: as a raw syscall's -errno.
                failures.check_raw("pthread_create", -i64::from(created));
                if created == 0 {
                    // SAFETY: a thread of ours, joined once.
                    unsafe { libc::pthread_join(thread, std::ptr::null_mut()) };
                }
            }),
            ThreadApi::Std => harness.measure_each(|| {
                let spawned = std::thread::Builder::new().spawn(|| {});
                failures.check("std::thread::spawn", spawned.is_ok());
                if let Ok(handle) = spawned {
                    let _ = handle.join();
                }
            }),
        };
        failures.outcome(measurement, vec![placement.cpu])
    }
}

probe! {
    /// create a child process that exits at once, and wait for it; vfork shares the address space,
    /// fork copies the page tables
    pub struct Fork: "os/fork", seed "all", item "create + exit + wait";
}

/// The vfork child's whole life: return, which exits it.
extern "C" fn child_returns(_: *mut c_void) -> libc::c_int {
    0
}

named_configs! {
    pub enum ForkApi (baseline Vfork) {
        Vfork => "vfork" {"api": "clone(CLONE_VM | CLONE_VFORK) + waitpid"},
        Fork => "fork" {"api": "fork + _exit + waitpid"},
    }
}

impl Probe for Fork {
    type Config = ForkApi;

    fn measure(&self, api: &ForkApi, placement: &Placement, harness: &Harness) -> Outcome {
        // A fork refused (EAGAIN at a process limit) returns at once: a
        // failure, never a cost.
        let failures = Failures::new();
        let measurement = match api {
            ForkApi::Vfork => {
                let mut stack = vec![0u128; 4096]; // 64 KiB, 16-byte aligned
                let top = stack.as_mut_ptr_range().end.cast::<c_void>();
                harness.measure_each(|| {
                    // SAFETY: the child runs only `child_returns` on its own
                    // stack; CLONE_VFORK suspends us until it has exited, so
                    // the shared memory is never used by both at once.
                    let pid = unsafe {
                        libc::clone(
                            child_returns,
                            top,
                            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                            std::ptr::null_mut(),
                        )
                    };
                    failures.check("clone", pid > 0);
                    reap(pid);
                })
            }
            ForkApi::Fork => harness.measure_each(|| {
                // SAFETY: the child calls only _exit, which is async-signal-
                // safe, as a child of a multithreaded process must.
                let pid = unsafe { libc::fork() };
                if pid == 0 {
                    unsafe { libc::_exit(0) };
                }
                failures.check("fork", pid > 0);
                reap(pid);
            }),
        };
        failures.outcome(measurement, vec![placement.cpu])
    }
}

/// Waits for a child so none is left as a zombie.
fn reap(pid: libc::pid_t) {
    if pid > 0 {
        let mut status = 0;
        // SAFETY: waits for our own child.
        let _ = retry_eintr(|| unsafe { libc::waitpid(pid, &mut status, 0) });
    }
}
