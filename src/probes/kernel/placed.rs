//! SRSO's safe return as the kernel lays it out on Zen 3 and 4
//! (arch/x86/lib/retpoline.S, placed by arch/x86/kernel/vmlinux.lds.S):
//! the untraining function and the safe return sit at addresses that
//! differ in bits 2, 8, 14 and 20 exactly, so the untraining evicts the
//! branch predictor's entry for the safe return's `ret`. The linker places
//! the kernel's copies; here they are written into a mapping at such
//! addresses, then made executable (never writable and executable at once).
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
/// safe_ret lands above it in the same stretch) and the returning function.
const UNTRAIN: usize = 0x40;
const RETURNING: usize = 0x1000;

/// The sequences written at their addresses; unmapped when the region
/// drops.
pub(super) struct Aliased {
    region: Region,
}

fn jump_to(from_end: usize, target: usize) -> [u8; 4] {
    // A rel32 from the end of its instruction; every address here lies in
    // one 4 MiB mapping, so it always fits.
    ((target as i64 - from_end as i64) as i32).to_le_bytes()
}

impl Aliased {
    pub(super) fn new() -> Result<Aliased, Unsupported> {
        let pages = MAPPED / region::page_size();
        let region = Region::anon(pages).map_err(|e| Unsupported::io("mmap", &e))?;
        let code = Aliased { region };
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
            (untrain, &untrain_bytes),
            (safe_ret, &thunk_bytes),
            (returning, &returning_bytes),
        ] {
            debug_assert!(at + bytes.len() <= code.region.base() as usize + MAPPED);
            // SAFETY: inside the writable mapping (the stretch from `base`
            // is 2 MiB and every offset is under 1.1 MiB).
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
    fn the_two_sequences_alias_as_the_kernels_and_both_return() {
        let code = Aliased::new().expect("a mapping");
        let (untrain, safe_ret) = (code.base() + UNTRAIN, (code.base() + UNTRAIN) ^ ALIAS);
        assert_eq!(untrain ^ safe_ret, ALIAS);
        assert!(safe_ret > untrain && safe_ret - code.base() < ALIGN);
        // SAFETY: both return to here with the stack as it was; a wrong
        // byte would crash this test rather than pass it.
        unsafe {
            (code.untrain())();
            (code.returning_through_thunk())();
        }
    }
}
