//! One call per item, by every route the mitigations offer: direct, plain
//! indirect (one predictable target, or cycling among 2, 4 or 16), through
//! the retpoline thunk, returning through the return thunk, and the
//! compare-then-direct-call wrapper when its guess hits and when it misses.

use super::dispatch::{Fn3, call_plain, call_retpoline, call_wrapped};
use crate::measure::harness::Harness;
use crate::measure::probes::{Config, Outcome, Placement, Probe, Role};
use serde::Serialize;
use std::arch::{asm, global_asm};
use std::fmt;

// The callees: `x + 1`, each at its own address so cycling targets are
// distinct branches for the predictor; one returns through the return thunk.
macro_rules! callees {
    ($($n:literal)*) => {
        $(global_asm!(concat!(
            ".globl mitbench_callee_", $n, "\n.p2align 4\nmitbench_callee_", $n, ":\n",
            "    lea rax, [rdi + 1]\n    ret\n",
        ));)*
    };
}
callees!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
global_asm!(
    ".globl mitbench_callee_rethunk",
    ".p2align 4",
    "mitbench_callee_rethunk:",
    "    lea rax, [rdi + 1]",
    "    jmp __x86_return_thunk",
);

unsafe extern "C" {
    fn mitbench_callee_0(a: usize, b: usize, c: usize) -> usize;
    fn mitbench_callee_1(a: usize, b: usize, c: usize) -> usize;
    fn mitbench_callee_2(a: usize, b: usize, c: usize) -> usize;
    fn mitbench_callee_3(a: usize, b: usize, c: usize) -> usize;
    fn mitbench_callee_4(a: usize, b: usize, c: usize) -> usize;
    fn mitbench_callee_5(a: usize, b: usize, c: usize) -> usize;
    fn mitbench_callee_6(a: usize, b: usize, c: usize) -> usize;
    fn mitbench_callee_7(a: usize, b: usize, c: usize) -> usize;
    fn mitbench_callee_8(a: usize, b: usize, c: usize) -> usize;
    fn mitbench_callee_9(a: usize, b: usize, c: usize) -> usize;
    fn mitbench_callee_10(a: usize, b: usize, c: usize) -> usize;
    fn mitbench_callee_11(a: usize, b: usize, c: usize) -> usize;
    fn mitbench_callee_12(a: usize, b: usize, c: usize) -> usize;
    fn mitbench_callee_13(a: usize, b: usize, c: usize) -> usize;
    fn mitbench_callee_14(a: usize, b: usize, c: usize) -> usize;
    fn mitbench_callee_15(a: usize, b: usize, c: usize) -> usize;
    fn mitbench_callee_rethunk(a: usize, b: usize, c: usize) -> usize;
}

const TARGETS: [Fn3; 16] = [
    mitbench_callee_0,
    mitbench_callee_1,
    mitbench_callee_2,
    mitbench_callee_3,
    mitbench_callee_4,
    mitbench_callee_5,
    mitbench_callee_6,
    mitbench_callee_7,
    mitbench_callee_8,
    mitbench_callee_9,
    mitbench_callee_10,
    mitbench_callee_11,
    mitbench_callee_12,
    mitbench_callee_13,
    mitbench_callee_14,
    mitbench_callee_15,
];

/// How each item's call is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Direct,
    /// Plain `call reg`, cycling among this many targets.
    Indirect(usize),
    Retpoline(usize),
    ReturnThunk,
    RetpolineReturnThunk,
    WrapperHit,
    WrapperMiss,
}

impl Route {
    const ALL: [Route; 13] = [
        Route::Indirect(1),
        Route::Direct,
        Route::Indirect(2),
        Route::Indirect(4),
        Route::Indirect(16),
        Route::Retpoline(1),
        Route::Retpoline(2),
        Route::Retpoline(4),
        Route::Retpoline(16),
        Route::ReturnThunk,
        Route::RetpolineReturnThunk,
        Route::WrapperHit,
        Route::WrapperMiss,
    ];

    fn targets(self) -> usize {
        match self {
            Route::Indirect(n) | Route::Retpoline(n) => n,
            _ => 1,
        }
    }

    fn how(self) -> &'static str {
        match self {
            Route::Direct => "call rel32",
            Route::Indirect(1) => "call reg, one target",
            Route::Indirect(_) => "call reg, cycling among the targets",
            Route::Retpoline(1) => "call __x86_indirect_thunk_r11, one target",
            Route::Retpoline(_) => "retpoline thunk, cycling among the targets",
            Route::ReturnThunk => "call reg; the callee returns through __x86_return_thunk",
            Route::RetpolineReturnThunk => "both thunks",
            Route::WrapperHit => {
                "INDIRECT_CALL_1: the pointer is the likely target, called directly"
            }
            Route::WrapperMiss => "INDIRECT_CALL_1: compare fails, retpoline thunk",
        }
    }
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Route::Direct => f.write_str("direct"),
            Route::Indirect(1) => f.write_str("indirect"),
            Route::Indirect(n) => write!(f, "indirect/{n}-targets"),
            Route::Retpoline(1) => f.write_str("retpoline"),
            Route::Retpoline(n) => write!(f, "retpoline/{n}-targets"),
            Route::ReturnThunk => f.write_str("return-thunk"),
            Route::RetpolineReturnThunk => f.write_str("retpoline+return-thunk"),
            Route::WrapperHit => f.write_str("wrapper/hit"),
            Route::WrapperMiss => f.write_str("wrapper/miss"),
        }
    }
}

impl Serialize for Route {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serde_json::json!({"call": self.how(), "targets": self.targets()}).serialize(s)
    }
}

impl Config for Route {
    fn listed() -> Vec<Route> {
        Route::ALL.to_vec()
    }

    fn role(&self) -> Role {
        Role::baseline_if(*self == Route::Indirect(1))
    }
}

probe! {
    /// one call per item to a function returning x + 1, by each route mitigations offer
    pub struct Calls: "indirect/call", seed "001", item "call + return", requires ["x86-64"];
}

impl Probe for Calls {
    type Config = Route;

    fn measure(&self, route: &Route, placement: &Placement, harness: &Harness) -> Outcome {
        let all = TARGETS.map(|f| f as usize);
        let only = |f: Fn3| [f as usize; 16];
        // SAFETY (all arms): every target is one of the callees above, which
        // read only rdi and write only rax.
        let measurement = match *route {
            Route::Direct => chain(harness, all, 1, |_, x| unsafe { direct(x) }),
            Route::Indirect(n) => chain(harness, all, n, |t, x| unsafe { call_plain(t, x, 0, 0) }),
            Route::Retpoline(n) => chain(harness, all, n, |t, x| unsafe {
                call_retpoline(t, x, 0, 0)
            }),
            Route::ReturnThunk => chain(harness, only(mitbench_callee_rethunk), 1, |t, x| unsafe {
                call_plain(t, x, 0, 0)
            }),
            Route::RetpolineReturnThunk => {
                chain(harness, only(mitbench_callee_rethunk), 1, |t, x| unsafe {
                    call_retpoline(t, x, 0, 0)
                })
            }
            Route::WrapperHit => chain(harness, only(TARGETS[0]), 1, |t, x| unsafe {
                call_wrapped(t, TARGETS[0], x, 0, 0)
            }),
            Route::WrapperMiss => chain(harness, only(TARGETS[1]), 1, |t, x| unsafe {
                call_wrapped(t, TARGETS[0], x, 0, 0)
            }),
        };
        Outcome::on_cpus(measurement, vec![placement.cpu])
    }
}

/// Times a chain of calls, each taking the previous result, to targets
/// cycling through the first `n` (a power of two) of `targets`. Generic over
/// the route so each is its own loop with no switch inside; the targets pass
/// through black_box so the compiler cannot see which function is called.
fn chain(
    harness: &Harness,
    targets: [usize; 16],
    n: usize,
    mut call: impl FnMut(usize, usize) -> usize,
) -> Option<crate::measure::harness::Measurement> {
    let targets = std::hint::black_box(targets);
    let mask = n - 1;
    let mut x = 0usize;
    let mut i = 0usize;
    harness.measure_each(|| {
        i = i.wrapping_add(1);
        x = call(targets[i & mask], x);
        x
    })
}

/// `call mitbench_callee_0`: the direct call the others are compared with.
#[inline(always)]
unsafe fn direct(x: usize) -> usize {
    let ret;
    unsafe {
        asm!("call {f}", f = sym mitbench_callee_0, inout("rdi") x => _, lateout("rax") ret, clobber_abi("C"));
    }
    ret
}
