//! The kernel's own mitigation sequences, replayed in user mode and timed
//! like every other item: what each costs on this CPU per time the kernel
//! runs it. Which mitigation each belongs to, when the kernel runs it and
//! the source it follows are in the catalogue
//! ([`crate::mitigations::sequences`]); the summary turns the prices into
//! the part of a crossing each mitigation takes at least.
//!
//! Every sequence is a function called once per item, as the kernel calls
//! (or jumps to) it; the baseline calls a function that returns at once,
//! so a variant's difference from it is the sequence's price. All of them
//! run from one mapping where each process lays them out alike
//! ([`placed`]). The single instructions (LFENCE, VERW) are
//! `indirect/barrier`'s rows.

mod placed;

use super::{Outcome, Placement, Probe};
use crate::harness::Harness;
use std::arch::global_asm;

probe! {
    /// each sequence the kernel runs for a mitigation (safe-RET untraining, the safe return, RSB filling, branch-history clearing), replayed in user mode
    pub struct Sequences: "kernel/sequences", seed "all", item "sequence, called once",
        requires ["x86-64"];
}

named_configs! {
    pub enum Sequence (baseline CallRet) {
        CallRet => "call+ret" {"sequence": "a call to a function that returns at once"},
        SrsoUntrain => "srso-untrain" {"sequence": "SRSO's untraining at entry: the aliased safe return"},
        SrsoReturnThunk => "srso-return-thunk" {"sequence": "a return through SRSO's return thunk"},
        RsbFill => "rsb-fill" {"sequence": "the return stack refilled: 32 calls, one LFENCE"},
        BhbClear => "bhb-clear" {"sequence": "the branch history cleared: 5 calls of 5 jumps, one LFENCE"},
    }
}

// The sequences that need no particular address, each its own function on
// its own cache line. Intel syntax, as Rust's assembler reads it.
global_asm!(
    ".pushsection .text.mitbench_kernel_sequences,\"ax\",@progbits",
    ".p2align 6",
    ".globl mitbench_seq_ret",
    "mitbench_seq_ret:",
    "    ret",
    ".globl mitbench_seq_ret_end",
    "mitbench_seq_ret_end:",
    // Two return-stack slots a loop, 16 loops (RSB_CLEAR_LOOPS = 32): each
    // call's return address is dropped from the stack unused; the LFENCE
    // stops a mispredicted loop exit.
    ".p2align 6",
    ".globl mitbench_seq_rsb_fill",
    "mitbench_seq_rsb_fill:",
    "    mov ecx, 16",
    "2:  call 3f",
    "    int3",
    "3:  call 4f",
    "    int3",
    "4:  add rsp, 16",
    "    dec ecx",
    "    jnz 2b",
    "    lfence",
    "    ret",
    ".globl mitbench_seq_rsb_fill_end",
    "mitbench_seq_rsb_fill_end:",
    // Five calls, each running five taken jumps before the next, then the
    // returns; the LFENCE the kernel puts after the call.
    ".p2align 6",
    ".globl mitbench_seq_bhb_clear",
    "mitbench_seq_bhb_clear:",
    "    push rbp",
    "    mov rbp, rsp",
    "    mov ecx, 5",
    "    call 1f",
    "    jmp 5f",
    ".p2align 6, 0xcc",
    "1:  call 2f",
    "    ret",
    ".p2align 6, 0xcc",
    "2:  mov eax, 5",
    "3:  jmp 4f",
    "    nop",
    "4:  sub eax, 1",
    "    jnz 3b",
    "    sub ecx, 1",
    "    jnz 1b",
    "    ret",
    "5:  lfence",
    "    pop rbp",
    "    ret",
    ".globl mitbench_seq_bhb_clear_end",
    "mitbench_seq_bhb_clear_end:",
    ".popsection",
);

// Each sequence's first byte and the byte past it: what is copied.
unsafe extern "C" {
    fn mitbench_seq_ret();
    fn mitbench_seq_ret_end();
    fn mitbench_seq_rsb_fill();
    fn mitbench_seq_rsb_fill_end();
    fn mitbench_seq_bhb_clear();
    fn mitbench_seq_bhb_clear_end();
}

/// The sequences of the text above, to copy into the mapping.
fn copies() -> placed::Copies {
    placed::Copies {
        plain: (mitbench_seq_ret, mitbench_seq_ret_end),
        rsb_fill: (mitbench_seq_rsb_fill, mitbench_seq_rsb_fill_end),
        bhb_clear: (mitbench_seq_bhb_clear, mitbench_seq_bhb_clear_end),
    }
}

/// Times `f`, a function of the sequences above, once per item.
fn time(harness: &Harness, placement: &Placement, f: unsafe extern "C" fn()) -> Outcome {
    // SAFETY: each sequence keeps the stack balanced and clobbers only
    // caller-saved registers (rax, rcx), as the C calling convention lets
    // a callee.
    Outcome::on_cpus(harness.measure_each(|| unsafe { f() }), vec![placement.cpu])
}

impl Probe for Sequences {
    type Config = Sequence;

    fn measure(&self, sequence: &Sequence, placement: &Placement, harness: &Harness) -> Outcome {
        let code = match placed::Placed::new(&copies()) {
            Ok(code) => code,
            Err(why) => return Outcome::Unsupported(why),
        };
        let f = match sequence {
            Sequence::CallRet => code.plain(),
            Sequence::RsbFill => code.rsb_fill(),
            Sequence::BhbClear => code.bhb_clear(),
            Sequence::SrsoUntrain => code.untrain(),
            Sequence::SrsoReturnThunk => code.returning_through_thunk(),
        };
        // The mapping lives until `code` drops, after the timing.
        time(harness, placement, f)
    }
}

pub fn probes() -> Vec<&'static dyn super::AnyProbe> {
    vec![&Sequences]
}
