//! Every replayed sequence written into one mapping at fixed offsets of a
//! 2 MiB-aligned stretch, then made executable (never writable and
//! executable at once), so that each process lays them out alike: run from
//! the binary's text, the plain call and RSB filling each sat at one of two
//! speeds per process, and a price, a difference from the call, moved from
//! run to run with how the forks drew (docs/why-the-code-is-so.md).
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

use crate::measure::probes::Unsupported;
use crate::measure::probes::memory::region::{self, Region};

/// The bits in which the two addresses differ (the kernel's linker script
/// asserts `srso_alias_untrain_ret ^ srso_alias_safe_ret` is this).
const ALIAS: usize = (1 << 2) | (1 << 8) | (1 << 14) | (1 << 20);
/// The mapping, and the 2 MiB-aligned stretch of it the code goes in.
const MAPPED: usize = 4 << 20;
const ALIGN: usize = 2 << 20;
/// Offsets from the aligned base: untrain (clear of every alias bit, so
/// safe_ret lands above it in the same stretch), the returning function,
/// and the copies of the binary's sequences, each in a slot of its own.
const UNTRAIN: usize = 0x40;
const RETURNING: usize = 0x1000;
const COPIES: usize = 0x2000;
const SLOT: usize = 0x1000;

/// A sequence of the binary's text: its first byte and the byte past it.
pub(super) type Text = (unsafe extern "C" fn(), unsafe extern "C" fn());

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

/// How many bytes a sequence of the binary's text is.
fn len_of((start, end): Text) -> usize {
    (end as usize).saturating_sub(start as usize)
}

/// The bytes of a sequence of the binary's text.
fn bytes_of(text: Text) -> Vec<u8> {
    // SAFETY: both ends are symbols of one function in the binary's text,
    // which is mapped readable.
    unsafe { std::slice::from_raw_parts(text.0 as *const u8, len_of(text)) }.to_vec()
}

impl Placed {
    pub(super) fn new(copies: &[Text]) -> Result<Placed, Unsupported> {
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
        let too_long = copies.iter().map(|t| len_of(*t)).find(|len| *len > SLOT);
        // The copies' slots end below the safe return, the next code up.
        let crowded = COPIES + copies.len() * SLOT > UNTRAIN ^ ALIAS;
        if let Some(len) = too_long.or(crowded.then_some(0)) {
            return Err(Unsupported::missing(
                "room in the mapping",
                format!(
                    "{} sequences, one of {len} bytes, do not fit their slots",
                    copies.len()
                ),
            ));
        }
        let copied = copies
            .iter()
            .enumerate()
            .map(|(i, text)| (base + COPIES + i * SLOT, bytes_of(*text)));
        for (at, bytes) in [
            (untrain, untrain_bytes),
            (safe_ret, thunk_bytes),
            (returning, returning_bytes),
        ]
        .into_iter()
        .chain(copied)
        {
            // SAFETY: inside the writable mapping: the 2 MiB stretch from
            // `base` holds every slot below the safe return, checked above.
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

    /// The `i`th copy of [`Placed::new`]'s `copies`.
    pub(super) fn copied(&self, i: usize) -> unsafe extern "C" fn() {
        self.function(COPIES + i * SLOT)
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
        let texts = super::super::texts();
        let code = Placed::new(&texts).expect("a mapping");
        let (untrain, safe_ret) = (code.base() + UNTRAIN, (code.base() + UNTRAIN) ^ ALIAS);
        assert_eq!(untrain ^ safe_ret, ALIAS);
        assert!(safe_ret > untrain && safe_ret - code.base() < ALIGN);
        // A copy keeps its place in a cache line: ITS's thunks sit in an
        // upper half there as in the text.
        for (i, text) in texts.iter().enumerate() {
            assert_eq!(text.0 as usize % 64, 0, "copy {i} starts a line");
        }
        // SAFETY: each returns to here with the stack as it was; a wrong
        // byte would crash this test rather than pass it.
        unsafe {
            (code.untrain())();
            (code.returning_through_thunk())();
            for i in 0..texts.len() {
                (code.copied(i))();
            }
        }
    }

    #[test]
    fn a_sequence_too_long_for_its_slot_is_refused() {
        // A sequence longer than its slot (the text grew) is refused before
        // a byte is read: an end two slots past a start stands in for it.
        let start = super::super::texts()[0].0;
        let far = (start as usize + 2 * SLOT) as *const ();
        // SAFETY: only compared as an address, never called.
        let end = unsafe { std::mem::transmute::<*const (), unsafe extern "C" fn()>(far) };
        assert!(Placed::new(&[(start, end)]).is_err());
    }
}
