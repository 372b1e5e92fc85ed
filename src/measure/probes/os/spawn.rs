//! Creating and reaping an execution context: a thread (create + join), a
//! process (fork or vfork + wait), and a process that runs a program
//! (fork or vfork + exec + wait). New threads and children inherit the
//! measuring thread's affinity, so all of it runs on the measuring CPU.

use crate::measure::harness::Harness;
use crate::measure::probes::failures::Failures;
use crate::measure::probes::{Outcome, Placement, Probe, Unsupported};
use crate::sys::retry_eintr;
use std::ffi::{c_char, c_void};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

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
                let mut stack = ChildStack::new();
                harness.measure_each(|| {
                    let pid = stack.vfork(child_returns, std::ptr::null_mut());
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

/// A stack for a vfork child, which may not use its parent's.
struct ChildStack(Vec<u128>);

impl ChildStack {
    fn new() -> ChildStack {
        ChildStack(vec![0u128; 4096]) // 64 KiB, 16-byte aligned
    }

    /// Starts `child(arg)` as a vfork child on this stack: this thread waits
    /// until the child has exited or executed a program. The pid, or -1.
    fn vfork(&mut self, child: extern "C" fn(*mut c_void) -> libc::c_int, arg: *mut c_void) -> i32 {
        let top = self.0.as_mut_ptr_range().end.cast::<c_void>();
        // SAFETY: the child runs only `child` on its own stack; CLONE_VFORK
        // suspends us until it has exited or executed, so the shared memory
        // is never used by both at once.
        unsafe {
            libc::clone(
                child,
                top,
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                arg,
            )
        }
    }
}

probe! {
    /// create a child that executes a static no-op program (no C library, no loader) and wait for
    /// it: what running a program costs beyond creating the process (os/fork)
    pub struct Exec: "os/exec", seed "all", item "create + exec + exit + wait";
}

named_configs! {
    pub enum ExecApi (baseline Vfork) {
        Vfork => "vfork+exec" {"api": "clone(CLONE_VM | CLONE_VFORK) + execveat + waitpid", "as": "posix_spawn (GNU make), dash"},
        Fork => "fork+exec" {"api": "fork + execveat + waitpid", "as": "bash"},
    }
}

mod noop {
    include!(concat!(env!("OUT_DIR"), "/noop.rs"));
}

/// The no-op program in memory (a memfd: nothing is written to disk, and
/// it is gone with its last descriptor), and the arguments to run it with.
pub(crate) struct Program {
    fd: OwnedFd,
    argv: [*const c_char; 2],
    envp: [*const c_char; 1],
}

/// memfd_create's MFD_EXEC (Linux 6.3): executable even where
/// vm.memfd_noexec makes memfds non-executable by default.
const MFD_EXEC: libc::c_uint = 0x10;

impl Program {
    pub(crate) fn load() -> Result<Program, Unsupported> {
        let bytes = noop::NOOP.map_err(|why| {
            Unsupported::missing(
                "a static no-op program",
                format!("the build could not make csrc/noop.c: {why}"),
            )
        })?;
        let create = |flags: libc::c_uint| {
            // SAFETY: a NUL-terminated name; the kernel returns a new fd.
            unsafe { libc::memfd_create(c"mitbench-noop".as_ptr(), flags) }
        };
        let mut fd = create(libc::MFD_CLOEXEC | MFD_EXEC);
        if fd < 0 {
            // A kernel before MFD_EXEC refuses the flag; its memfds are
            // executable anyway.
            fd = create(libc::MFD_CLOEXEC);
        }
        if fd < 0 {
            return Err(Unsupported::io(
                "memfd_create",
                &std::io::Error::last_os_error(),
            ));
        }
        // SAFETY: a descriptor just made and owned by no one else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut file = std::fs::File::from(fd);
        std::io::Write::write_all(&mut file, bytes)
            .map_err(|e| Unsupported::io("writing the no-op program", &e))?;
        Ok(Program {
            fd: file.into(),
            argv: [c"mitbench-noop".as_ptr(), std::ptr::null()],
            envp: [std::ptr::null()],
        })
    }

    /// Forks a child that executes the program: its pid, or -1.
    pub(crate) fn fork_exec(&self) -> libc::pid_t {
        // SAFETY: the child makes one syscall and exits, both async-signal-
        // safe, as a child of a multithreaded process must.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            self.exec();
            unsafe { libc::_exit(127) };
        }
        pid
    }

    /// Forks a child that executes the program, and waits for it; whether
    /// it ran and exited 0.
    pub(crate) fn run_forked(&self) -> bool {
        reap(self.fork_exec()) == Some(0)
    }

    /// Executes the program in place of the calling process; returns only
    /// where that failed. Only a syscall: safe in a vfork or fork child.
    fn exec(&self) {
        // SAFETY: NULL-terminated argv and envp of static strings; an
        // empty path with AT_EMPTY_PATH executes the descriptor itself.
        unsafe {
            libc::syscall(
                libc::SYS_execveat,
                self.fd.as_raw_fd(),
                c"".as_ptr(),
                self.argv.as_ptr(),
                self.envp.as_ptr(),
                libc::AT_EMPTY_PATH,
            );
        }
    }
}

/// The vfork child's whole life: execute the program, or exit 127.
extern "C" fn child_executes(program: *mut c_void) -> libc::c_int {
    // SAFETY: the parent passes its Program, alive until the child has
    // executed or exited (CLONE_VFORK).
    unsafe { &*program.cast::<Program>() }.exec();
    127
}

impl Probe for Exec {
    type Config = ExecApi;

    fn measure(&self, api: &ExecApi, placement: &Placement, harness: &Harness) -> Outcome {
        let program = match Program::load() {
            Ok(program) => program,
            Err(reason) => return Outcome::Unsupported(reason),
        };
        let mut stack = ChildStack::new();
        let arg = (&raw const program).cast_mut().cast::<c_void>();
        let mut spawn = || match api {
            ExecApi::Vfork => stack.vfork(child_executes, arg),
            ExecApi::Fork => program.fork_exec(),
        };
        // One run outside the timing: a kernel that will not execute a
        // memfd (a noexec policy, a seccomp profile) says so here.
        let pid = spawn();
        if pid <= 0 {
            return Outcome::Unsupported(Unsupported::io(
                "clone",
                &std::io::Error::last_os_error(),
            ));
        }
        if reap(pid) != Some(0) {
            return Outcome::Unsupported(Unsupported::missing(
                "exec of a memfd",
                "the child could not execute the no-op program (execveat of a memfd refused)",
            ));
        }
        let failures = Failures::new();
        let measurement = harness.measure_each(|| {
            let pid = spawn();
            failures.check("clone", pid > 0);
            failures.check("execveat", reap(pid) == Some(0));
        });
        failures.outcome(measurement, vec![placement.cpu])
    }
}

/// Waits for a child so none is left as a zombie; its exit status where
/// it exited.
fn reap(pid: libc::pid_t) -> Option<i32> {
    if pid <= 0 {
        return None;
    }
    let mut status = 0;
    // SAFETY: waits for our own child.
    let waited = retry_eintr(|| unsafe { libc::waitpid(pid, &mut status, 0) });
    (waited.is_ok() && libc::WIFEXITED(status)).then(|| libc::WEXITSTATUS(status))
}
