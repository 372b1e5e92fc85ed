//! Barriers that mitigations add to hot paths, one per item: lfence (the
//! Spectre v1 speculation barrier after a bounds check) and verw (which
//! CPUs with MD_CLEAR microcode use to flush their buffers on every return
//! to user space; it is also legal in user mode, so its cost shows here).

use crate::measure::harness::Harness;
use crate::measure::probes::{Config, Outcome, Placement, Probe};
use serde::Serialize;
use serde_json::json;
use std::arch::asm;
use std::fmt;

probe! {
    /// speculation barriers as mitigations place them: lfence, and verw with a writable selector
    pub struct Barrier: "indirect/barrier", seed "001", item "one barrier instruction",
        requires ["x86-64"];
}

/// One LFENCE: the Spectre v1 barrier, and an instruction that serialises
/// dispatch without leaving a guest (the VM exit's baseline, `guest/exit`).
#[inline(always)]
pub fn lfence() {
    // SAFETY: lfence has no operands and no effect on memory.
    unsafe { asm!("lfence", options(nostack, preserves_flags)) }
}

/// CPUID.(EAX=7,ECX=0):EDX[10]: verw also clears CPU buffers.
fn md_clear() -> bool {
    // SAFETY: cpuid exists on every x86-64 CPU; leaf 7 is valid when the
    // maximum leaf (leaf 0, EAX) reaches it.
    let max = std::arch::x86_64::__cpuid(0).eax;
    max >= 7 && std::arch::x86_64::__cpuid_count(7, 0).edx & (1 << 10) != 0
}

/// The barrier instruction timed. Neither is a baseline: each is its own
/// cost, not a variant of the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instruction {
    Lfence,
    /// `clears`: the CPU has MD_CLEAR, so verw also clears its buffers.
    Verw {
        clears: bool,
    },
}

impl fmt::Display for Instruction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Instruction::Lfence => "lfence",
            Instruction::Verw { .. } => "verw",
        })
    }
}

impl Serialize for Instruction {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let params = match *self {
            Instruction::Lfence => json!({"instruction": "lfence"}),
            Instruction::Verw { clears } => json!({
                "instruction": "verw m16 (user SS selector)",
                "clears_cpu_buffers": clears,
                "why": if clears { "MD_CLEAR: verw also overwrites store, fill and load buffers" }
                       else { "no MD_CLEAR on this CPU: verw only checks the selector" },
            }),
        };
        params.serialize(s)
    }
}

impl Config for Instruction {}

impl Probe for Barrier {
    type Config = Instruction;

    fn configs(&self) -> Vec<Instruction> {
        vec![
            Instruction::Lfence,
            Instruction::Verw { clears: md_clear() },
        ]
    }

    fn measure(
        &self,
        instruction: &Instruction,
        placement: &Placement,
        harness: &Harness,
    ) -> Outcome {
        let measurement = if *instruction == Instruction::Lfence {
            harness.measure_each(lfence)
        } else {
            // The kernel issues verw with a valid writable data segment
            // selector; the user stack segment is one.
            let mut selector: u16 = 0;
            // SAFETY: reads the SS register into a local.
            unsafe {
                asm!("mov {0:x}, ss", out(reg) selector, options(nomem, nostack, preserves_flags))
            };
            let selector = selector;
            // SAFETY: verw only reads the 2-byte selector and sets ZF.
            harness.measure_each(|| unsafe {
                asm!("verw word ptr [{0}]", in(reg) &selector, options(nostack))
            })
        };
        Outcome::on_cpus(measurement, vec![placement.cpu])
    }
}
