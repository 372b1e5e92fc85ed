//! memfd_secret (Linux 5.14), what remained of XPFO's idea: memory removed
//! from the kernel's direct map. One item is the whole life of one page:
//! create, size, map, first touch, unmap, close; against the same for an
//! ordinary anonymous page.

use super::region::page_size;
use crate::measure::harness::Harness;
use crate::measure::probes::failures::Failures;
use crate::measure::probes::{Outcome, Placement, Probe, Unsupported};

probe! {
    /// the life of one page: memfd_secret (out of the direct map) against ordinary anonymous
    /// memory
    pub struct Secret: "memory/secret", seed "003", item "create + map + first touch + unmap",
        requires [
            "memfd_secret (CONFIG_SECRETMEM, secretmem.enable), and RLIMIT_MEMLOCK room for one page",
        ];
}

const SYS_MEMFD_SECRET: libc::c_long = 447;

/// One secret page, made, touched and released; Err with the kernel's
/// reason when it refuses.
fn secret_page() -> std::io::Result<()> {
    // SAFETY: memfd_secret(flags = 0) returns a new descriptor or -errno.
    let fd = unsafe { libc::syscall(SYS_MEMFD_SECRET, 0) } as libc::c_int;
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let page = page_size();
    // SAFETY: fd is ours and closed below; the mapping is ours and unmapped
    // below; the touch is inside it.
    let result = unsafe {
        if libc::ftruncate(fd, page as libc::off_t) != 0 {
            Err(std::io::Error::last_os_error())
        } else {
            let p = libc::mmap(
                std::ptr::null_mut(),
                page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            );
            if p == libc::MAP_FAILED {
                Err(std::io::Error::last_os_error())
            } else {
                p.cast::<u8>().write_volatile(1);
                libc::munmap(p, page);
                Ok(())
            }
        }
    };
    // SAFETY: closes our own descriptor once.
    unsafe { libc::close(fd) };
    result
}

/// One anonymous page mapped, touched and unmapped; false when the map
/// failed.
fn anon_page() -> bool {
    let page = page_size();
    // SAFETY: a fresh private mapping, touched inside, then unmapped.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            page,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            return false;
        }
        p.cast::<u8>().write_volatile(1);
        libc::munmap(p, page) == 0
    }
}

named_configs! {
    pub enum Page (baseline Anon) {
        Anon => "anon" {"memory": "mmap(MAP_ANONYMOUS)"},
        Secret => "secret" {"memory": "memfd_secret + ftruncate + mmap(MAP_SHARED)"},
    }
}

impl Probe for Secret {
    type Config = Page;

    fn check(&self, page: &Page, _placement: &Placement) -> Result<(), Unsupported> {
        if *page == Page::Secret {
            secret_page().map_err(|e| match e.raw_os_error() {
                Some(libc::ENOSYS) => Unsupported::errno(
                    "memfd_secret",
                    libc::ENOSYS,
                    "the kernel has no memfd_secret (CONFIG_SECRETMEM off or secretmem.enable=0)",
                ),
                _ => Unsupported::io("memfd_secret", &e),
            })?;
        }
        Ok(())
    }

    fn measure(&self, page: &Page, placement: &Placement, harness: &Harness) -> Outcome {
        let failures = Failures::new();
        let measurement = if *page == Page::Secret {
            harness.measure_each(|| {
                let page = secret_page();
                failures.check("memfd_secret, ftruncate or mmap", page.is_ok());
            })
        } else {
            harness.measure_each(|| failures.check("mmap", anon_page()))
        };
        failures.outcome(measurement, vec![placement.cpu])
    }
}
