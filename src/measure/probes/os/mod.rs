//! Family `os`: what crossing into the kernel costs on this machine. Every
//! seed pays one of these on its hot path, so they are the units the other
//! families' tolls are read against.

pub mod pingpong;
pub(crate) mod returns;
pub(crate) mod spawn;
pub(crate) mod syscall;

use super::AnyProbe;

pub fn probes() -> Vec<&'static dyn AnyProbe> {
    vec![
        &syscall::Getpid,
        &returns::SyscallReturn,
        &syscall::ClockGettime,
        &pingpong::ContextSwitch,
        &spawn::Thread,
        &spawn::Fork,
        &spawn::Exec,
    ]
}
