//! Family `syscall`: what the running kernel charges per entry (and what a
//! seccomp filter adds to it), and how much batching several operations into
//! one crossing wins back.

pub mod batch;
pub mod seccomp;

use super::Probe;

pub fn probes() -> Vec<&'static dyn Probe> {
    vec![
        &batch::Batch(batch::Sink::DevNull),
        &batch::Batch(batch::Sink::Pipe),
        &seccomp::Seccomp,
    ]
}
