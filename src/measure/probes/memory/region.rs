//! Anonymous mappings owned by the probes: unmapped when dropped, so no
//! mapping (and no protection change) outlives a measurement.

use std::io;

pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096)
}

pub struct Region {
    base: *mut u8,
    len: usize,
}

impl Region {
    /// `pages` pages of private anonymous memory, not yet touched.
    pub fn anon(pages: usize) -> io::Result<Region> {
        Self::map(
            pages * page_size(),
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
        )
    }

    /// `len` bytes of `fd` mapped shared and read-only.
    pub fn file(fd: libc::c_int, len: usize) -> io::Result<Region> {
        Self::map_with(len, libc::PROT_READ, libc::MAP_SHARED, fd)
    }

    fn map(len: usize, flags: libc::c_int, fd: libc::c_int) -> io::Result<Region> {
        Self::map_with(len, libc::PROT_READ | libc::PROT_WRITE, flags, fd)
    }

    fn map_with(
        len: usize,
        prot: libc::c_int,
        flags: libc::c_int,
        fd: libc::c_int,
    ) -> io::Result<Region> {
        if len == 0 {
            return Ok(Region {
                base: std::ptr::null_mut(),
                len: 0,
            });
        }
        // SAFETY: a fresh mapping chosen by the kernel; checked below.
        let base = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, fd, 0) };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Region {
            base: base.cast(),
            len,
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn base(&self) -> *mut u8 {
        self.base
    }

    /// The address of byte `offset`.
    pub fn at(&self, offset: usize) -> *mut u8 {
        debug_assert!(offset < self.len);
        self.base.wrapping_add(offset)
    }

    /// Writes one byte of every page, faulting each in.
    pub fn touch_all(&self) {
        let page = page_size();
        for offset in (0..self.len).step_by(page) {
            // SAFETY: offset is inside the writable mapping.
            unsafe { self.at(offset).write_volatile(1) };
        }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: the mapping is ours; unmapping a range some of which a
            // probe already unmapped is allowed and harmless.
            unsafe { libc::munmap(self.base.cast(), self.len) };
        }
    }
}

/// Changes the protection of `pages` pages at `addr`; false when the
/// kernel refused (errno says why).
///
/// # Safety
/// The range must belong to a [`Region`] that is not accessed in a way the
/// new protection forbids.
#[must_use]
pub unsafe fn protect(addr: *mut u8, pages: usize, prot: libc::c_int) -> bool {
    unsafe { libc::mprotect(addr.cast(), pages * page_size(), prot) == 0 }
}

/// Drops the pages' contents: the next touch faults in a fresh zero page;
/// false when the kernel refused.
///
/// # Safety
/// The range must belong to a [`Region`].
#[must_use]
pub unsafe fn discard(addr: *mut u8, pages: usize) -> bool {
    unsafe { libc::madvise(addr.cast(), pages * page_size(), libc::MADV_DONTNEED) == 0 }
}

/// Unmaps `pages` pages at `addr`; false when the kernel refused.
///
/// # Safety
/// The range must belong to a [`Region`] that nothing accesses afterwards;
/// the Region's drop unmaps the (then empty) range again, harmlessly.
#[must_use]
pub unsafe fn unmap(addr: *mut u8, pages: usize) -> bool {
    unsafe { libc::munmap(addr.cast(), pages * page_size()) == 0 }
}

/// `n` pages mapped and faulted in, untimed; a failed map is noted (the
/// round then reports it instead of timing batches that did nothing).
pub fn touched(n: u64, failures: &crate::measure::probes::failures::Failures) -> Option<Region> {
    if n == 0 {
        return None;
    }
    let region = failures.ok("mmap", Region::anon(n as usize))?;
    region.touch_all();
    Some(region)
}
