//! Family `guest` (every seed pays it on a virtual machine): the crossing
//! from a guest to its host. A guest's user space makes one exit on every
//! CPU a KVM, Hyper-V or Xen host runs without asking anything of a
//! device: CPUID, which the hypervisor intercepts unconditionally
//! (VMX and SVM both) and answers in its kernel. Timed against LFENCE, a
//! barrier that serialises dispatch without leaving the guest, the
//! difference is the exit's round trip, with whatever the host's
//! mitigations add to it (RSB filling, IBPB or VERW on exit or entry).
//! An exit the VMM handles in user space is named and refused: only a
//! device reaches it.

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

/// Why no row times an exit the VMM handles in user space: nothing a
/// guest's user space may do reaches it but a device.
pub const NO_EXIT_TO_THE_VMM: &str = "an exit the VMM handles in user space: a guest's user \
    space reaches its VMM only through a device (port I/O, MMIO), and mitbench touches none \
    to make exits; CPUID's exit is answered in the host's kernel, before the VMM";

probe! {
    /// a VM exit from user space: CPUID, which every hypervisor intercepts, against LFENCE, which stays in the guest
    pub struct Exit: "guest/exit", seed "all", item "one instruction",
        requires ["a hypervisor (CPUID leaf 1, ECX bit 31)"];
}

named_configs! {
    /// The instruction timed: both serialise, only CPUID leaves the guest;
    /// an exit to the VMM in user space is a row that says why it is not
    /// made.
    pub enum Serialising (baseline Lfence) {
        Lfence => "lfence" {"instruction": "lfence", "exits": false},
        Cpuid => "cpuid" {"instruction": "cpuid, leaf 0", "exits": true},
        ToTheVmm => "vmm" {"instruction": "none: a device access", "exits": true},
    }
}

impl Probe for Exit {
    type Config = Serialising;

    fn check(&self, instruction: &Serialising, _: &Placement) -> Result<(), Unsupported> {
        if !crate::sys::under_a_hypervisor() {
            return Err(Unsupported::missing("hypervisor", NOT_A_GUEST));
        }
        match instruction {
            Serialising::ToTheVmm => Err(no_exit_to_the_vmm()),
            Serialising::Lfence | Serialising::Cpuid => Ok(()),
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
            // Refused by `check`, which every run passes first.
            Serialising::ToTheVmm => return Outcome::Unsupported(no_exit_to_the_vmm()),
        };
        Outcome::on_cpus(measurement, vec![placement.cpu])
    }
}

fn no_exit_to_the_vmm() -> Unsupported {
    Unsupported::missing("an exit to the VMM without a device", NO_EXIT_TO_THE_VMM)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exit_to_the_vmm_is_never_made_and_says_why() {
        let placement = Placement {
            cpu: 0,
            allowed: vec![0],
        };
        let why = Exit.check(&Serialising::ToTheVmm, &placement).unwrap_err();
        assert!(
            why.reason == NOT_A_GUEST || why.reason == NO_EXIT_TO_THE_VMM,
            "{why}"
        );
    }
}
