//! Workloads shipped to try `mitbench tax` on, each heavy in one kind of
//! crossing and light in the rest, so what the estimate says of them can be
//! judged: `mitbench workload KIND [COUNT]`. They run as a process of their
//! own (the counted one), never inside a measuring mitbench.

use crate::measure::harness::affinity;
use crate::sys;
use clap::ValueEnum;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Workload {
    /// COUNT one-byte writes to /dev/null: a syscall each, nothing else
    Syscalls,
    /// COUNT round trips of one byte over two pipes between two processes on one CPU: four syscalls and two context switches each
    Pingpong,
    /// As pingpong, over two eventfds: what `tax --check` prices a switching workload's syscalls by
    EventfdPingpong,
    /// COUNT pages of fresh anonymous memory touched, 16 MiB at a time, then unmapped: a page fault each
    Faults,
    /// COUNT threads started and joined one after another: a creation each
    Threads,
    /// COUNT programs run one after another (fork, exec of a static no-op, wait): a process creation and an exec each
    Execs,
}

impl Workload {
    /// A count that runs for a few tenths of a second on a current machine.
    pub fn default_count(self) -> u64 {
        match self {
            Workload::Syscalls => 1_000_000,
            Workload::Pingpong | Workload::EventfdPingpong => 100_000,
            Workload::Faults => 262_144,
            Workload::Threads => 20_000,
            Workload::Execs => 2_000,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Workload::Syscalls => "syscalls",
            Workload::Pingpong => "pingpong",
            Workload::EventfdPingpong => "eventfd-pingpong",
            Workload::Faults => "faults",
            Workload::Threads => "threads",
            Workload::Execs => "execs",
        }
    }

    /// The command line that runs this workload `count` times with this
    /// mitbench binary.
    pub fn command(self, count: u64) -> Result<Vec<String>, String> {
        let exe =
            std::env::current_exe().map_err(|e| format!("finding mitbench's own binary: {e}"))?;
        Ok(vec![
            exe.to_string_lossy().into_owned(),
            "workload".into(),
            self.name().into(),
            count.to_string(),
        ])
    }

    pub fn run(self, count: u64) -> io::Result<()> {
        match self {
            Workload::Syscalls => syscalls(count),
            Workload::Pingpong => pingpong(count, Channel::Pipe),
            Workload::EventfdPingpong => pingpong(count, Channel::EventFd),
            Workload::Faults => faults(count),
            Workload::Threads => threads(count),
            Workload::Execs => execs(count),
        }
    }
}

fn execs(count: u64) -> io::Result<()> {
    let program = crate::measure::probes::os::spawn::Program::load()
        .map_err(|why| io::Error::other(format!("unsupported: {}", why.reason)))?;
    for _ in 0..count {
        if !program.run_forked() {
            return Err(io::Error::other(
                "the child could not execute the no-op program",
            ));
        }
    }
    Ok(())
}

fn syscalls(count: u64) -> io::Result<()> {
    let sink = std::fs::OpenOptions::new().write(true).open("/dev/null")?;
    let byte = [0u8; 1];
    for _ in 0..count {
        // SAFETY: writes one byte from a live buffer to an open descriptor.
        if unsafe { libc::write(sink.as_raw_fd(), byte.as_ptr().cast(), 1) } != 1 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Channel {
    Pipe,
    EventFd,
}

impl Channel {
    /// (read end, write end): one descriptor for both with an eventfd.
    fn open(self) -> io::Result<(OwnedFd, OwnedFd)> {
        match self {
            Channel::Pipe => sys::pipe(0),
            Channel::EventFd => {
                let fd = sys::eventfd()?;
                Ok((fd.try_clone()?, fd))
            }
        }
    }

    /// Bytes per message: an eventfd moves a u64 counter.
    fn message_len(self) -> usize {
        match self {
            Channel::Pipe => 1,
            Channel::EventFd => 8,
        }
    }
}

/// Both processes share one CPU, so every hand-over is a context switch
/// and the CPU time is the whole cost (no idle waits).
fn pingpong(count: u64, channel: Channel) -> io::Result<()> {
    let cpu = affinity::current_cpu().unwrap_or(0);
    affinity::pin_current_thread_forever(cpu)?;
    let (ping_read, ping_write) = channel.open()?;
    let (pong_read, pong_write) = channel.open()?;
    let len = channel.message_len();
    // SAFETY: this process is single-threaded here (a workload runs alone),
    // so the child may run ordinary code after fork.
    let child = unsafe { libc::fork() };
    if child < 0 {
        return Err(io::Error::last_os_error());
    }
    if child == 0 {
        // Ends of the parent's side closed, so either side sees the other
        // go; and the partner dies with the parent, never outliving it.
        drop((ping_write, pong_read));
        // SAFETY: prctl with constant arguments.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
        let ok =
            (0..count).all(|_| receive(&ping_read, len).is_ok() && send(&pong_write, len).is_ok());
        // SAFETY: ends the child without running the parent's exit handlers.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    drop((ping_read, pong_write));
    let mut result = Ok(());
    for _ in 0..count {
        result = send(&ping_write, len).and_then(|()| receive(&pong_read, len));
        if result.is_err() {
            break;
        }
    }
    if result.is_err() {
        // SAFETY: a signal to our own child, which may be waiting forever.
        unsafe { libc::kill(child, libc::SIGKILL) };
    }
    let mut status = 0;
    // SAFETY: waits for our own child into a local.
    sys::retry_eintr(|| unsafe { libc::waitpid(child, &mut status, 0) })?;
    result?;
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        Ok(())
    } else {
        Err(io::Error::other("the ping-pong partner failed"))
    }
}

/// Sends one message of `len` bytes: a one, as an eventfd wants.
fn send(fd: &OwnedFd, len: usize) -> io::Result<()> {
    let message = 1u64.to_ne_bytes();
    // SAFETY: at most 8 bytes out of a live 8-byte buffer.
    let done = unsafe { libc::write(fd.as_raw_fd(), message.as_ptr().cast(), len) };
    whole(done, len)
}

/// Waits for one message of `len` bytes.
fn receive(fd: &OwnedFd, len: usize) -> io::Result<()> {
    let mut message = [0u8; 8];
    // SAFETY: at most 8 bytes into a live 8-byte buffer.
    let done = unsafe { libc::read(fd.as_raw_fd(), message.as_mut_ptr().cast(), len) };
    whole(done, len)
}

fn whole(done: isize, len: usize) -> io::Result<()> {
    if done == len as isize {
        Ok(())
    } else if done < 0 {
        Err(io::Error::last_os_error())
    } else {
        Err(io::Error::other("a short read or write"))
    }
}

fn faults(count: u64) -> io::Result<()> {
    let page = crate::measure::probes::memory::page_size();
    let chunk: u64 = (16 << 20) / page as u64;
    let mut left = count;
    while left > 0 {
        let pages = left.min(chunk) as usize;
        let region = crate::measure::probes::memory::Region::anon(pages)?;
        region.touch_all();
        left -= pages as u64;
    }
    Ok(())
}

fn threads(count: u64) -> io::Result<()> {
    for _ in 0..count {
        std::thread::Builder::new()
            .spawn(|| std::hint::black_box(0))?
            .join()
            .map_err(|_| io::Error::other("a workload thread panicked"))?;
    }
    Ok(())
}
