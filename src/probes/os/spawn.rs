//! Creating and reaping an execution context: a thread (create + join) and
//! a process (fork or vfork + wait). New threads and children inherit the
//! measuring thread's affinity, so all of it runs on the measuring CPU.

use crate::harness::Harness;
use crate::probes::{Outcome, Placement, Probe, ProbeInfo, Variant};
use crate::sys::retry_eintr;
use serde_json::json;
use std::ffi::c_void;

pub struct Thread;

extern "C" fn thread_returns(_: *mut c_void) -> *mut c_void {
    std::ptr::null_mut()
}

impl Probe for Thread {
    fn info(&self) -> ProbeInfo {
        ProbeInfo {
            id: "os/thread",
            family: "os",
            seed: "002",
            summary: "create a thread that returns at once, and join it",
            item: "create + join",
            requirements: vec![],
            derived: None,
            variants: vec![
                Variant {
                    name: "pthread",
                    baseline: true,
                    params: json!({"api": "pthread_create + pthread_join"}),
                },
                Variant {
                    name: "std",
                    baseline: false,
                    params: json!({"api": "std::thread::spawn + join"}),
                },
            ],
        }
    }

    fn measure(&self, variant: &Variant, placement: &Placement, harness: &Harness) -> Outcome {
        let measurement = match variant.name {
            "pthread" => harness.measure_each(|| {
                let mut thread: libc::pthread_t = 0;
                // SAFETY: default attributes; the start routine ignores its
                // argument; the thread is joined before the next one starts.
                unsafe {
                    if libc::pthread_create(
                        &mut thread,
                        std::ptr::null(),
                        thread_returns,
                        std::ptr::null_mut(),
                    ) == 0
                    {
                        libc::pthread_join(thread, std::ptr::null_mut());
                    }
                }
            }),
            _ => harness.measure_each(|| {
                if let Ok(handle) = std::thread::Builder::new().spawn(|| {}) {
                    let _ = handle.join();
                }
            }),
        };
        Outcome::on_cpus(measurement, vec![placement.cpu])
    }
}

pub struct Fork;

/// The vfork child's whole life: return, which exits it.
extern "C" fn child_returns(_: *mut c_void) -> libc::c_int {
    0
}

impl Probe for Fork {
    fn info(&self) -> ProbeInfo {
        ProbeInfo {
            id: "os/fork",
            family: "os",
            seed: "all",
            summary: "create a child process that exits at once, and wait for it; vfork shares the address space, fork copies the page tables",
            item: "create + exit + wait",
            requirements: vec![],
            derived: None,
            variants: vec![
                Variant {
                    name: "vfork",
                    baseline: true,
                    params: json!({"api": "clone(CLONE_VM | CLONE_VFORK) + waitpid"}),
                },
                Variant {
                    name: "fork",
                    baseline: false,
                    params: json!({"api": "fork + _exit + waitpid"}),
                },
            ],
        }
    }

    fn measure(&self, variant: &Variant, placement: &Placement, harness: &Harness) -> Outcome {
        let measurement = match variant.name {
            "vfork" => {
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
                    reap(pid);
                })
            }
            _ => harness.measure_each(|| {
                // SAFETY: the child calls only _exit, which is async-signal-
                // safe, as a child of a multithreaded process must.
                let pid = unsafe { libc::fork() };
                if pid == 0 {
                    unsafe { libc::_exit(0) };
                }
                reap(pid);
            }),
        };
        Outcome::on_cpus(measurement, vec![placement.cpu])
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
