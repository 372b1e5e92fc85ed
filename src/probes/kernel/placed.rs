//! Every replayed sequence written into one mapping at fixed offsets of a
//! 2 MiB-aligned stretch, then made executable (never writable and
//! executable at once), so that each process lays them out alike: run from
//! the binary's text, the plain call and RSB filling each sat at one of two
//! speeds per process (1.35 or 2.16 ns for the call on the AMD guest, in
//! about a third of the processes each way), and a price, a difference from
//! the call, moved by 0.8 ns from run to run; written here, the call took
//! 2.16 ns in all 15 processes of five runs.
//!
//! SRSO's safe return is laid out as the kernel does on Zen 3 and 4
//! (arch/x86/lib/retpoline.S, placed by arch/x86/kernel/vmlinux.lds.S):
//! the untraining function and the safe return sit at addresses that
//! differ in bits 2, 8, 14 and 20 exactly, so the untraining evicts the
//! branch predictor's entry for the safe return's `ret`. The others are
//! copied from the binary's text (position-independent: their branches
//! stay inside them), each at a 64-byte-aligned offset as it is aligned
//! there.
//!
//! ```text
//! untrain:       nop2; lfence; jmp return_thunk
//! safe_ret:      lea rsp, [rsp + 8]; ret; int3      (at untrain ^ ALIAS)
//! return_thunk:  call safe_ret; ud2                 (right after safe_ret)
//! returning:     jmp return_thunk                   (a function's `ret`)
//! ```

use crate::probes::Unsupported;
use crate::probes::memory::region::{self, Region};

/// The bits in which the two addresses differ (the kernel's linker script
/// asserts `srso_alias_untrain_ret ^ srso_alias_safe_ret` is this).
const ALIAS: usize = (1 << 2) | (1 << 8) | (1 << 14) | (1 << 20);
/// The mapping, and the 2 MiB-aligned stretch of it the code goes in.
const MAPPED: usize = 4 << 20;
const ALIGN: usize = 2 << 20;
/// Offsets from the aligned base: untrain (clear of every alias bit, so
/// safe_ret lands above it in the same stretch), the returning function,
/// and the copies of the binary's sequences.
const UNTRAIN: usize = 0x40;
const RETURNING: usize = 0x1000;
const PLAIN: usize = 0x2000;
const RSB_FILL: usize = 0x3000;
const BHB_CLEAR: usize = 0x4000;

/// A sequence of the binary's text: its first byte and the byte past it.
pub(super) type Text = (unsafe extern "C" fn(), unsafe extern "C" fn());

/// The binary's sequences to copy: the plain return, RSB filling, the
/// branch-history clearing loop.
pub(super) struct Copies {
    pub plain: Text,
    pub rsb_fill: Text,
    pub bhb_clear: Text,
}

/// The sequences written at their addresses; unmapped when the region
/// drops.
pub(super) struct Placed {
    region: Region,
}

fn jump_to(from_end: usize, target: usize) -> [u8; 4] {
    // A rel32 from the end of its instruction; every address here lies in
    // one 4 MiB mapping, so it always fits.
    ((target as i64 - from_end as i64) as i32).to_le_bytes()
}

/// The bytes of a sequence of the binary's text.
fn bytes_of((start, end): Text) -> Vec<u8> {
    let (start, end) = (start as usize, end as usize);
    // SAFETY: both are symbols of one function in the binary's text, which
    // is mapped readable; `end` follows `start`.
    unsafe { std::slice::from_raw_parts(start as *const u8, end - start) }.to_vec()
}

impl Placed {
    pub(super) fn new(copies: &Copies) -> Result<Placed, Unsupported> {
        let pages = MAPPED / region::page_size();
        let region = Region::anon(pages).map_err(|e| Unsupported::io("mmap", &e))?;
        let code = Placed { region };
        let base = code.base();
        let untrain = base + UNTRAIN;
        let safe_ret = untrain ^ ALIAS;
        let thunk = safe_ret + 7;
        let returning = base + RETURNING;
        let mut untrain_bytes = vec![0x66, 0x90, 0x0f, 0xae, 0xe8, 0xe9];
        untrain_bytes.extend(jump_to(untrain + 10, thunk));
        let mut thunk_bytes = vec![0x48, 0x8d, 0x64, 0x24, 0x08, 0xc3, 0xcc, 0xe8];
        thunk_bytes.extend(jump_to(thunk + 5, safe_ret));
        thunk_bytes.extend([0x0f, 0x0b]);
        let mut returning_bytes = vec![0xe9];
        returning_bytes.extend(jump_to(returning + 5, thunk));
        for (at, bytes) in [
            (untrain, untrain_bytes),
            (safe_ret, thunk_bytes),
            (returning, returning_bytes),
            (base + PLAIN, bytes_of(copies.plain)),
            (base + RSB_FILL, bytes_of(copies.rsb_fill)),
            (base + BHB_CLEAR, bytes_of(copies.bhb_clear)),
        ] {
            debug_assert!(at + bytes.len() <= code.region.base() as usize + MAPPED);
            // SAFETY: inside the writable mapping (the stretch from `base`
            // is 2 MiB, every offset under 1.1 MiB, every copy under 4 KiB).
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), at as *mut u8, bytes.len()) };
        }
        // SAFETY: the region made above, from here on read and executed
        // only.
        let exec = libc::PROT_READ | libc::PROT_EXEC;
        if !unsafe { region::protect(code.region.base(), pages, exec) } {
            return Err(Unsupported::io(
                "mprotect(PROT_EXEC)",
                &std::io::Error::last_os_error(),
            ));
        }
        Ok(code)
    }

    /// The 2 MiB-aligned start of the stretch the code is written in.
    fn base(&self) -> usize {
        (self.region.base() as usize).next_multiple_of(ALIGN)
    }

    fn function(&self, offset: usize) -> unsafe extern "C" fn() {
        // SAFETY: `offset` starts one of the sequences written above, each
        // a function that returns to its caller with the stack as it was.
        unsafe { std::mem::transmute::<usize, unsafe extern "C" fn()>(self.base() + offset) }
    }

    pub(super) fn plain(&self) -> unsafe extern "C" fn() {
        self.function(PLAIN)
    }

    pub(super) fn rsb_fill(&self) -> unsafe extern "C" fn() {
        self.function(RSB_FILL)
    }

    pub(super) fn bhb_clear(&self) -> unsafe extern "C" fn() {
        self.function(BHB_CLEAR)
    }

    /// The untraining the kernel calls at entry.
    pub(super) fn untrain(&self) -> unsafe extern "C" fn() {
        self.function(UNTRAIN)
    }

    /// A function whose `ret` is the kernel's: a jump to the return thunk.
    pub(super) fn returning_through_thunk(&self) -> unsafe extern "C" fn() {
        self.function(RETURNING)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_sequences_alias_as_the_kernels_and_every_copy_returns() {
        let copies = super::super::copies();
        for text in [copies.plain, copies.rsb_fill, copies.bhb_clear] {
            let len = bytes_of(text).len();
            assert!(len > 0 && len < 0x1000, "a copy fits its slot: {len} bytes");
        }
        let code = Placed::new(&copies).expect("a mapping");
        let (untrain, safe_ret) = (code.base() + UNTRAIN, (code.base() + UNTRAIN) ^ ALIAS);
        assert_eq!(untrain ^ safe_ret, ALIAS);
        assert!(safe_ret > untrain && safe_ret - code.base() < ALIGN);
        // SAFETY: each returns to here with the stack as it was; a wrong
        // byte would crash this test rather than pass it.
        unsafe {
            (code.untrain())();
            (code.returning_through_thunk())();
            (code.plain())();
            (code.rsb_fill())();
            (code.bhb_clear())();
        }
    }
}
