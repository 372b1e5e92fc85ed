//! The three ways the `indirect` probes reach a function through a pointer,
//! as inline asm so nothing but the call sequence differs between them:
//! a plain `call reg`, a call through the retpoline thunk, and the kernel's
//! INDIRECT_CALL wrapper (compare with the likely target, call it directly,
//! fall back to the thunk).

use crate::thunks::__x86_indirect_thunk_r11;
use std::arch::asm;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dispatch {
    Plain,
    Retpoline,
    /// Compare-then-direct-call; the likely target is given per call site.
    Wrapper,
}

impl Dispatch {
    pub const ALL: [Dispatch; 3] = [Dispatch::Plain, Dispatch::Retpoline, Dispatch::Wrapper];

    pub fn name(self) -> &'static str {
        match self {
            Dispatch::Plain => "plain",
            Dispatch::Retpoline => "retpoline",
            Dispatch::Wrapper => "wrapper",
        }
    }
}

/// A C-ABI function of up to three integer arguments returning one.
pub type Fn3 = unsafe extern "C" fn(usize, usize, usize) -> usize;

/// `call r11`.
///
/// # Safety
/// `target` must be a function with the [`Fn3`] ABI that is sound to call
/// with these arguments.
#[inline(always)]
pub unsafe fn call_plain(target: usize, a: usize, b: usize, c: usize) -> usize {
    let ret;
    unsafe {
        asm!("call r11", in("r11") target, inout("rdi") a => _, inout("rsi") b => _, inout("rdx") c => _,
             lateout("rax") ret, clobber_abi("C"));
    }
    ret
}

/// `call __x86_indirect_thunk_r11`, as gcc emits under
/// `-mindirect-branch=thunk-extern -mindirect-branch-register`.
///
/// # Safety
/// As [`call_plain`].
#[inline(always)]
pub unsafe fn call_retpoline(target: usize, a: usize, b: usize, c: usize) -> usize {
    let ret;
    unsafe {
        asm!("call {thunk}", thunk = sym __x86_indirect_thunk_r11, in("r11") target,
             inout("rdi") a => _, inout("rsi") b => _, inout("rdx") c => _, lateout("rax") ret, clobber_abi("C"));
    }
    ret
}

/// The kernel's INDIRECT_CALL_1: a direct call when the pointer is the
/// likely target, else the retpoline.
///
/// # Safety
/// As [`call_plain`], for both `target` and `likely`.
#[inline(always)]
pub unsafe fn call_wrapped(target: usize, likely: Fn3, a: usize, b: usize, c: usize) -> usize {
    if target == likely as usize {
        unsafe { likely(a, b, c) }
    } else {
        unsafe { call_retpoline(target, a, b, c) }
    }
}

/// Calls `target` the way `dispatch` says.
///
/// # Safety
/// As [`call_wrapped`].
#[inline(always)]
pub unsafe fn call(
    dispatch: Dispatch,
    target: usize,
    likely: Fn3,
    a: usize,
    b: usize,
    c: usize,
) -> usize {
    unsafe {
        match dispatch {
            Dispatch::Plain => call_plain(target, a, b, c),
            Dispatch::Retpoline => call_retpoline(target, a, b, c),
            Dispatch::Wrapper => call_wrapped(target, likely, a, b, c),
        }
    }
}
