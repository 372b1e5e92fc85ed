//! Family `syscall`: what the running kernel charges per entry, and how
//! much batching several operations into one crossing wins back.

pub mod batch;

use super::Probe;

pub fn probes() -> Vec<&'static dyn Probe> {
    vec![
        &batch::Batch(batch::Sink::DevNull),
        &batch::Batch(batch::Sink::Pipe),
    ]
}
