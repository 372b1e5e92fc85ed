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
use crate::measure::harness::Harness;
use std::arch::global_asm;

probe! {
    /// each sequence the kernel runs for a mitigation (SRSO's and retbleed's untraining and return thunks, Zen 1/2's and Zen 3/4's, RSB filling, branch-history clearing, the ITS thunks, call-depth tracking), replayed in user mode
    pub struct Sequences: "kernel/sequences", seed "all", item "sequence, called once",
        requires ["x86-64"];
}

named_configs! {
    pub enum Sequence (baseline CallRet) {
        CallRet => "call+ret" {"sequence": "a call to a function that returns at once"},
        SrsoUntrain => "srso-untrain" {"sequence": "SRSO's untraining at entry on Zen 3/4: the aliased safe return"},
        SrsoReturnThunk => "srso-return-thunk" {"sequence": "a return through SRSO's return thunk on Zen 3/4"},
        SrsoUntrainZen12 => "srso-untrain-zen1-2" {"sequence": "SRSO's untraining at entry on Zen 1/2: a MOVABS over the safe return, LFENCE, a call to it"},
        SrsoReturnThunkZen12 => "srso-return-thunk-zen1-2" {"sequence": "a return through SRSO's return thunk on Zen 1/2"},
        RetbleedUntrain => "retbleed-untrain" {"sequence": "retbleed's untraining at entry on Zen 1/2: a TEST over the return thunk's ret, LFENCE, a jump back to it"},
        RetbleedReturnThunk => "retbleed-return-thunk" {"sequence": "a return through retbleed's return thunk: a ret on a 64-byte boundary"},
        RsbFill => "rsb-fill" {"sequence": "the return stack refilled: 32 calls, one LFENCE"},
        BhbClear => "bhb-clear" {"sequence": "the branch history cleared: 5 calls of 5 jumps, one LFENCE"},
        IndirectCall => "indirect-call" {"sequence": "an indirect call (call *%rax) to a function that returns at once: what an ITS thunk stands in for"},
        ItsIndirectThunk => "its-indirect-thunk" {"sequence": "the same call through an ITS thunk: a call to `jmp *%rax` in the upper half of a cache line"},
        ItsReturnThunk => "its-return-thunk" {"sequence": "a return through ITS's return thunk: `ret` in the upper half of a cache line"},
        CallDepthAccounting => "call-depth-accounting" {"sequence": "a call and its return counted by call-depth tracking (retbleed=stuff): the call thunk's shift right, the return thunk's shift left and test"},
        CallDepthStuffing => "call-depth-stuffing" {"sequence": "a return that underflows call-depth tracking's count: the return stack stuffed with 16 entries, the count credited"},
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
    // A plain indirect call, the reference of the ITS thunk below: the
    // target is the `ret` after it, RIP-relative, so a copy still works.
    ".p2align 6",
    ".globl mitbench_seq_indirect",
    "mitbench_seq_indirect:",
    "    lea rax, [rip + 9f]",
    "    call rax",
    "    ret",
    "9:  ret",
    ".globl mitbench_seq_indirect_end",
    "mitbench_seq_indirect_end:",
    // The kernel's `call *%rax` in the lower half of a line becomes a call
    // to __x86_indirect_its_thunk_rax: `jmp *%rax; int3` in an upper half.
    ".p2align 6",
    ".globl mitbench_seq_its_indirect",
    "mitbench_seq_its_indirect:",
    "    lea rax, [rip + 9f]",
    "    call 8f",
    "    ret",
    "9:  ret",
    ".p2align 6, 0xcc",
    ".skip 32, 0xcc",
    "8:  jmp rax",
    "    int3",
    ".globl mitbench_seq_its_indirect_end",
    "mitbench_seq_its_indirect_end:",
    // Its `ret` in the lower half of a line becomes a jump to
    // its_return_thunk: `ret; int3` in an upper half.
    ".p2align 6",
    ".globl mitbench_seq_its_return",
    "mitbench_seq_its_return:",
    "    jmp 8f",
    ".p2align 6, 0xcc",
    ".skip 32, 0xcc",
    "8:  ret",
    "    int3",
    ".globl mitbench_seq_its_return_end",
    "mitbench_seq_its_return_end:",
    // Zen 1/2's retbleed_untrain_ret, reached by a jump as the kernel's
    // entry_untrain_ret reaches it: 0xf6 ends a line, so from it the CPU
    // decodes `test bl, 0xcc` over the `ret; int3` that start the next,
    // then LFENCE and a jump back to that `ret`, which returns.
    ".p2align 6",
    ".globl mitbench_seq_retbleed_untrain",
    "mitbench_seq_retbleed_untrain:",
    "    jmp 7f",
    ".p2align 6, 0xcc",
    ".skip 63, 0xcc",
    "7:  .byte 0xf6",
    "8:  ret",
    "    int3",
    "    lfence",
    "    jmp 8b",
    "    int3",
    ".globl mitbench_seq_retbleed_untrain_end",
    "mitbench_seq_retbleed_untrain_end:",
    // Every kernel `ret` is a jump to retbleed_return_thunk, a `ret` that
    // starts a line.
    ".p2align 6",
    ".globl mitbench_seq_retbleed_return",
    "mitbench_seq_retbleed_return:",
    "    jmp 8f",
    ".p2align 6, 0xcc",
    "8:  ret",
    "    int3",
    ".globl mitbench_seq_retbleed_return_end",
    "mitbench_seq_retbleed_return_end:",
    // Zen 1/2's srso_untrain_ret: `movabs rax, imm64` whose immediate is
    // srso_safe_ret (`lea rsp, [rsp + 8]; ret; int3; int3`, starting a
    // line), then LFENCE and a call to that safe return, which drops the
    // call's return address and returns to the untraining's caller.
    ".p2align 6",
    ".globl mitbench_seq_srso_untrain_zen12",
    "mitbench_seq_srso_untrain_zen12:",
    "    jmp 7f",
    ".p2align 6, 0xcc",
    ".skip 62, 0xcc",
    "7:  .byte 0x48, 0xb8",
    "8:  lea rsp, [rsp + 8]",
    "    ret",
    "    int3",
    "    int3",
    "    lfence",
    "    call 8b",
    "    ud2",
    ".globl mitbench_seq_srso_untrain_zen12_end",
    "mitbench_seq_srso_untrain_zen12_end:",
    // Every kernel `ret` a jump to srso_return_thunk: `call srso_safe_ret;
    // ud2`, the safe return starting a line.
    ".p2align 6",
    ".globl mitbench_seq_srso_return_zen12",
    "mitbench_seq_srso_return_zen12:",
    "    jmp 9f",
    ".p2align 6, 0xcc",
    "8:  lea rsp, [rsp + 8]",
    "    ret",
    "    int3",
    "9:  call 8b",
    "    ud2",
    ".globl mitbench_seq_srso_return_zen12_end",
    "mitbench_seq_srso_return_zen12_end:",
    ".popsection",
);

// Intel's call-depth tracking (retbleed=stuff) keeps its count in a per-CPU
// variable the kernel reaches through %gs; here a thread-local one reached
// through %fs, whose offset from the thread pointer is a constant of the
// executable, so a copy of the code still reaches it. Each call goes
// through a thunk in the padding before the function (`sar 5`, falling
// into it); each `ret` is a jump to call_depth_return_thunk
// (arch/x86/lib/retpoline.S), written once here as a macro.
global_asm!(
    ".pushsection .tbss,\"awT\",@nobits",
    ".p2align 3",
    ".globl mitbench_call_depth",
    "mitbench_call_depth:",
    "    .zero 8",
    ".popsection",
    ".macro MITBENCH_CALL_DEPTH_RETURN",
    ".p2align 6, 0xcc",
    "8:  shl qword ptr fs:[mitbench_call_depth@tpoff], 5",
    "    jz 1f",
    "    ret",
    "    int3",
    "1:",
    ".rept 16",
    "    call 2f",
    "    int3",
    "2:",
    ".endr",
    "    add rsp, 128",
    "    mov qword ptr fs:[mitbench_call_depth@tpoff], -1",
    "    ret",
    "    int3",
    ".endm",
    ".pushsection .text.mitbench_kernel_sequences,\"ax\",@progbits",
    // A counted call: the thunk's shift, the function's `ret` through the
    // return thunk, at a balanced depth (no underflow).
    ".p2align 6",
    ".globl mitbench_seq_call_depth",
    "mitbench_seq_call_depth:",
    "    sar qword ptr fs:[mitbench_call_depth@tpoff], 5",
    "    jmp 8f",
    "MITBENCH_CALL_DEPTH_RETURN",
    ".globl mitbench_seq_call_depth_end",
    "mitbench_seq_call_depth_end:",
    // A return with no call counted since the count was reset, as after
    // entry: the count shifts to zero and the thunk stuffs.
    ".p2align 6",
    ".globl mitbench_seq_call_depth_stuff",
    "mitbench_seq_call_depth_stuff:",
    "    mov qword ptr fs:[mitbench_call_depth@tpoff], 0",
    "    jmp 8f",
    "MITBENCH_CALL_DEPTH_RETURN",
    ".globl mitbench_seq_call_depth_stuff_end",
    "mitbench_seq_call_depth_stuff_end:",
    // Credits the count (CREDIT_CALL_DEPTH): what a timing of the counted
    // call starts from.
    ".p2align 4",
    ".globl mitbench_call_depth_credit",
    "mitbench_call_depth_credit:",
    "    mov qword ptr fs:[mitbench_call_depth@tpoff], -1",
    "    ret",
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
    fn mitbench_seq_indirect();
    fn mitbench_seq_indirect_end();
    fn mitbench_seq_its_indirect();
    fn mitbench_seq_its_indirect_end();
    fn mitbench_seq_its_return();
    fn mitbench_seq_its_return_end();
    fn mitbench_seq_retbleed_untrain();
    fn mitbench_seq_retbleed_untrain_end();
    fn mitbench_seq_retbleed_return();
    fn mitbench_seq_retbleed_return_end();
    fn mitbench_seq_srso_untrain_zen12();
    fn mitbench_seq_srso_untrain_zen12_end();
    fn mitbench_seq_srso_return_zen12();
    fn mitbench_seq_srso_return_zen12_end();
    fn mitbench_seq_call_depth();
    fn mitbench_seq_call_depth_end();
    fn mitbench_seq_call_depth_stuff();
    fn mitbench_seq_call_depth_stuff_end();
    fn mitbench_call_depth_credit();
}

/// The sequences of the text above, in the order the mapping holds their
/// copies; Zen 3/4's SRSO pair is written there by [`placed`] itself.
const COPIED: [(Sequence, placed::Text); 12] = [
    (Sequence::CallRet, (mitbench_seq_ret, mitbench_seq_ret_end)),
    (
        Sequence::RsbFill,
        (mitbench_seq_rsb_fill, mitbench_seq_rsb_fill_end),
    ),
    (
        Sequence::BhbClear,
        (mitbench_seq_bhb_clear, mitbench_seq_bhb_clear_end),
    ),
    (
        Sequence::IndirectCall,
        (mitbench_seq_indirect, mitbench_seq_indirect_end),
    ),
    (
        Sequence::ItsIndirectThunk,
        (mitbench_seq_its_indirect, mitbench_seq_its_indirect_end),
    ),
    (
        Sequence::ItsReturnThunk,
        (mitbench_seq_its_return, mitbench_seq_its_return_end),
    ),
    (
        Sequence::RetbleedUntrain,
        (
            mitbench_seq_retbleed_untrain,
            mitbench_seq_retbleed_untrain_end,
        ),
    ),
    (
        Sequence::RetbleedReturnThunk,
        (
            mitbench_seq_retbleed_return,
            mitbench_seq_retbleed_return_end,
        ),
    ),
    (
        Sequence::SrsoUntrainZen12,
        (
            mitbench_seq_srso_untrain_zen12,
            mitbench_seq_srso_untrain_zen12_end,
        ),
    ),
    (
        Sequence::SrsoReturnThunkZen12,
        (
            mitbench_seq_srso_return_zen12,
            mitbench_seq_srso_return_zen12_end,
        ),
    ),
    (
        Sequence::CallDepthAccounting,
        (mitbench_seq_call_depth, mitbench_seq_call_depth_end),
    ),
    (
        Sequence::CallDepthStuffing,
        (
            mitbench_seq_call_depth_stuff,
            mitbench_seq_call_depth_stuff_end,
        ),
    ),
];

fn texts() -> [placed::Text; 12] {
    COPIED.map(|(_, text)| text)
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
        let code = match placed::Placed::new(&texts()) {
            Ok(code) => code,
            Err(why) => return Outcome::Unsupported(why),
        };
        let f = match sequence {
            Sequence::SrsoUntrain => code.untrain(),
            Sequence::SrsoReturnThunk => code.returning_through_thunk(),
            copied => {
                let at = COPIED.iter().position(|(s, _)| s == copied);
                code.copied(at.expect("every other sequence is copied"))
            }
        };
        // SAFETY: writes this thread's own count, and returns.
        unsafe { mitbench_call_depth_credit() };
        // The mapping lives until `code` drops, after the timing.
        time(harness, placement, f)
    }
}

pub fn probes() -> Vec<&'static dyn super::AnyProbe> {
    vec![&Sequences]
}
