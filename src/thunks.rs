//! The speculation-safe thunks compilers emit calls to, written out here so
//! the `indirect` probes can call through them and the `cflags` C kernels
//! built with `-mindirect-branch=thunk-extern` / `-mfunction-return=
//! thunk-extern` link against them. The instruction sequences are gcc's
//! (gcc/config/i386/i386.cc, output_indirect_thunk), which are also what the
//! kernel's retpoline uses:
//!
//! ```text
//! __x86_indirect_thunk_REG:          __x86_return_thunk:
//!     call 2f                            call 2f
//! 1:  pause                          1:  pause
//!     lfence                             lfence
//!     jmp 1b                             jmp 1b
//! 2:  mov [rsp], REG                 2:  lea rsp, [rsp + 8]
//!     ret                                ret
//! ```
//!
//! The `call` pushes a return address the return stack buffer predicts; the
//! `mov` (or `lea`) replaces it with the real target, so the `ret` is
//! mispredicted into the pause/lfence loop: speculation is captured there
//! instead of running at an attacker-trained target. That capture is the
//! toll.

use std::arch::global_asm;

macro_rules! indirect_thunk {
    ($reg:literal) => {
        global_asm!(concat!(
            ".pushsection .text.__x86_indirect_thunk_",
            $reg,
            ",\"ax\",@progbits\n",
            ".globl __x86_indirect_thunk_",
            $reg,
            "\n",
            ".type __x86_indirect_thunk_",
            $reg,
            ",@function\n",
            ".p2align 5\n",
            "__x86_indirect_thunk_",
            $reg,
            ":\n",
            "    call 2f\n",
            "3:  pause\n",
            "    lfence\n",
            "    jmp 3b\n",
            "2:  mov [rsp], ",
            $reg,
            "\n",
            "    ret\n",
            ".size __x86_indirect_thunk_",
            $reg,
            ", . - __x86_indirect_thunk_",
            $reg,
            "\n",
            ".popsection\n",
        ));
    };
}

// Every general-purpose register but rsp, as -mindirect-branch-register may
// use any of them.
indirect_thunk!("rax");
indirect_thunk!("rbx");
indirect_thunk!("rcx");
indirect_thunk!("rdx");
indirect_thunk!("rsi");
indirect_thunk!("rdi");
indirect_thunk!("rbp");
indirect_thunk!("r8");
indirect_thunk!("r9");
indirect_thunk!("r10");
indirect_thunk!("r11");
indirect_thunk!("r12");
indirect_thunk!("r13");
indirect_thunk!("r14");
indirect_thunk!("r15");

global_asm!(
    ".pushsection .text.__x86_return_thunk,\"ax\",@progbits",
    ".globl __x86_return_thunk",
    ".type __x86_return_thunk,@function",
    ".p2align 5",
    "__x86_return_thunk:",
    "    call 2f",
    "3:  pause",
    "    lfence",
    "    jmp 3b",
    "2:  lea rsp, [rsp + 8]",
    "    ret",
    ".size __x86_return_thunk, . - __x86_return_thunk",
    ".popsection",
);

unsafe extern "C" {
    /// Jump target in r11: the thunk the probes call through.
    pub fn __x86_indirect_thunk_r11();
    pub fn __x86_return_thunk();
}
