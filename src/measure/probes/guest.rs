//! Family `guest` (every seed pays it on a virtual machine): the crossing
//! from a guest to its host. A guest's user space makes one exit on every
//! CPU a KVM, Hyper-V or Xen host runs without asking anything of a
//! device: CPUID, which the hypervisor intercepts unconditionally
//! (VMX and SVM both) and answers in its kernel. Timed against LFENCE, a
//! barrier that serialises dispatch without leaving the guest, the
//! difference is the exit's round trip, with whatever the host's
//! mitigations add to it (RSB filling, IBPB or VERW on exit or entry).

use crate::measure::harness::Harness;
use crate::measure::probes::{Outcome, Placement, Probe, Unsupported};
use std::arch::x86_64::__cpuid;

/// Why the probe does not run where CPUID says no hypervisor runs the
/// CPU: the answer leaves the exit's line out on that reason alone.
pub const NOT_A_GUEST: &str = "not a guest: CPUID leaf 1 has the hypervisor bit clear, so CPUID \
                               runs on the processor and no VM exit is made";

/// The probe's id, as the answer reads it.
pub const EXIT_PROBE: &str = "guest/exit";

/// Its variant that exits, as the answer and `compare` read it.
pub const EXITING: &str = "cpuid";

probe! {
    /// a VM exit from user space: CPUID, which every hypervisor intercepts, against LFENCE, which stays in the guest
    pub struct Exit: "guest/exit", seed "all", item "one instruction",
        requires ["a hypervisor (CPUID leaf 1, ECX bit 31)"];
}

named_configs! {
    /// The instruction timed: both serialise, only CPUID leaves the guest.
    pub enum Serialising (baseline Lfence) {
        Lfence => "lfence" {"instruction": "lfence", "exits": false},
        Cpuid => "cpuid" {"instruction": "cpuid, leaf 0", "exits": true},
    }
}

impl Probe for Exit {
    type Config = Serialising;

    fn check(&self, _: &Serialising, _: &Placement) -> Result<(), Unsupported> {
        match crate::sys::under_a_hypervisor() {
            true => Ok(()),
            false => Err(Unsupported::missing("hypervisor", NOT_A_GUEST)),
        }
    }

    fn measure(
        &self,
        instruction: &Serialising,
        placement: &Placement,
        harness: &Harness,
    ) -> Outcome {
        let measurement = match instruction {
            Serialising::Lfence => harness.measure_each(super::indirect::lfence),
            // Leaf 0 (the vendor and the highest leaf): the cheapest a
            // hypervisor answers, so the figure is the exit's own.
            Serialising::Cpuid => harness.measure_each(|| __cpuid(0).eax),
        };
        Outcome::on_cpus(measurement, vec![placement.cpu])
    }
}
