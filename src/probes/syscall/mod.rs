//! Family `syscall`: what the running kernel charges per entry (and what a
//! seccomp filter or a speculation control adds to it), and how much
//! batching several operations into one crossing wins back.

pub mod batch;
pub mod seccomp;
pub mod specctrl;

use super::Probe;

pub fn probes() -> Vec<&'static dyn Probe> {
    vec![
        &batch::Batch(batch::Sink::DevNull),
        &batch::Batch(batch::Sink::Pipe),
        &seccomp::Seccomp,
        &specctrl::SpecCtrl(specctrl::Workload::Getpid),
        &specctrl::SpecCtrl(specctrl::Workload::StoreLoad),
    ]
}
