//! Family `syscall`: what the running kernel charges per entry (and what a
//! seccomp filter or a speculation control adds to it), and how much
//! batching several operations into one crossing wins back.

pub mod batch;
pub mod seccomp;
pub mod specctrl;

use super::AnyProbe;

pub fn probes() -> Vec<&'static dyn AnyProbe> {
    vec![
        &batch::BATCH_DEVNULL,
        &batch::BATCH_PIPE,
        &seccomp::Seccomp,
        &specctrl::SPECCTRL_GETPID,
        &specctrl::SPECCTRL_STORELOAD,
        &specctrl::SPECCTRL_SWITCH,
    ]
}
