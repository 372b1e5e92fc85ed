//! Page faults, one per item: first touch of anonymous memory (4 KiB pages,
//! and transparent huge pages where enabled), first touch of a file mapping
//! whose pages are in the page cache, and copy-on-write after fork. The
//! memory to fault in is prepared untimed before each sample and released
//! untimed after it.

use super::region::{Region, page_size};
use crate::measure::harness::Harness;
use crate::measure::probes::failures::Failures;
use crate::measure::probes::{Outcome, Placement, Probe, Unsupported};
use crate::sys::retry_eintr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

probe! {
    /// page faults on first touch (anonymous 4 KiB, THP, page-cache file) and on copy-on-write
    /// after fork
    pub struct Fault: "memory/fault", seed "003", item "page fault (one page, or one huge page for anon-thp)",
        requires ["THP enabled (always or madvise) for anon-thp"];
}

const HUGE: usize = 2 << 20;

/// The system's THP mode, or why huge pages cannot be had.
fn thp_mode() -> Result<String, Unsupported> {
    const PATH: &str = "/sys/kernel/mm/transparent_hugepage/enabled";
    let text = std::fs::read_to_string(PATH).map_err(|e| {
        Unsupported::missing("transparent huge pages", format!("cannot read {PATH}: {e}"))
    })?;
    let mode = text
        .split_whitespace()
        .find_map(|w| w.strip_prefix('[')?.strip_suffix(']'))
        .unwrap_or("unknown");
    if mode == "never" {
        Err(Unsupported::missing(
            "transparent huge pages",
            "transparent huge pages are disabled ([never])",
        ))
    } else {
        Ok(mode.to_string())
    }
}

named_configs! {
    pub enum Memory (baseline Anon) {
        Anon => "anon" {"memory": "private anonymous", "page_bytes": page_size()},
        AnonThp => "anon-thp" {"memory": "private anonymous, MADV_HUGEPAGE", "page_bytes": HUGE},
        File => "file" {"memory": "shared memfd mapping, pages already in the page cache",
                         "note": "fault-around may map neighbouring pages in the same fault"},
        Cow => "cow" {"memory": "private anonymous, written after fork while the child holds it"},
    }
}

impl Probe for Fault {
    type Config = Memory;

    fn check(&self, memory: &Memory, _placement: &Placement) -> Result<(), Unsupported> {
        if *memory == Memory::AnonThp {
            thp_mode()?;
        }
        Ok(())
    }

    fn measure(&self, memory: &Memory, placement: &Placement, harness: &Harness) -> Outcome {
        let page = page_size();
        // A probe that cannot get its memory says so instead of timing
        // nothing.
        if let Err(e) = Region::anon(1) {
            return Outcome::Unsupported(Unsupported::io("mmap", &e));
        }
        // A prepare that fails leaves a batch that faults nothing in: noted,
        // and the round is reported as failed instead of timed.
        let failures = Failures::new();
        let measurement = match memory {
            Memory::Anon => harness.measure_prepared(
                |n| failures.ok("mmap", Region::anon(n as usize)),
                |region, n| touch(region.as_ref(), 0, n as usize, page),
            ),
            Memory::AnonThp => harness.measure_prepared(
                |n| failures.ok("mmap", huge_region(n as usize)),
                |huge, n| {
                    touch(
                        huge.as_ref().map(|(r, _)| r),
                        huge.as_ref().map_or(0, |h| h.1),
                        n as usize,
                        HUGE,
                    )
                },
            ),
            Memory::File => {
                let file = match PageCacheFile::new() {
                    Ok(file) => file,
                    Err(e) => return Outcome::Unsupported(Unsupported::io("memfd_create", &e)),
                };
                harness.measure_prepared(
                    |n| failures.ok("mmap of the page-cache file", file.map(n as usize)),
                    |region, n| read(region.as_ref(), n as usize, page),
                )
            }
            Memory::Cow => {
                if ForkedPages::new(1).region.is_none() {
                    return Outcome::Unsupported(Unsupported::probe_failed(
                        "could not map memory and fork a child holding it",
                    ));
                }
                harness.measure_prepared(
                    |n| {
                        let pages = ForkedPages::new(n);
                        failures.check("mmap and fork", n == 0 || pages.region.is_some());
                        pages
                    },
                    |pages, n| touch(pages.region.as_ref(), 0, n as usize, page),
                )
            }
        };
        failures.outcome(measurement, vec![placement.cpu])
    }
}

/// Writes the first byte of `n` strides from `start`.
fn touch(region: Option<&Region>, start: usize, n: usize, stride: usize) {
    if let Some(region) = region {
        for i in 0..n.min((region.len() - start) / stride) {
            // SAFETY: inside the writable mapping.
            unsafe { region.at(start + i * stride).write_volatile(1) };
        }
    }
}

/// Reads the first byte of `n` strides.
fn read(region: Option<&Region>, n: usize, stride: usize) {
    if let Some(region) = region {
        for i in 0..n.min(region.len() / stride) {
            // SAFETY: inside the readable mapping.
            std::hint::black_box(unsafe { region.at(i * stride).read_volatile() });
        }
    }
}

/// `n` huge pages: a mapping one huge page larger than needed, and the
/// offset of its first 2 MiB boundary, from where the window is advised for
/// THP. The slack stays untouched and is unmapped with the rest.
fn huge_region(n: usize) -> std::io::Result<(Region, usize)> {
    let region = Region::anon((n + 1) * HUGE / page_size())?;
    let start = (region.base() as usize).next_multiple_of(HUGE) - region.base() as usize;
    // SAFETY: the advised range lies inside the region.
    unsafe { libc::madvise(region.at(start).cast(), n * HUGE, libc::MADV_HUGEPAGE) };
    Ok((region, start))
}

/// A memfd whose pages are all in the page cache; grown as needed.
struct PageCacheFile {
    fd: OwnedFd,
    pages: std::cell::Cell<usize>,
}

impl PageCacheFile {
    fn new() -> std::io::Result<PageCacheFile> {
        // SAFETY: a fresh anonymous file, owned below.
        let fd = unsafe { libc::memfd_create(c"mitbench-fault".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: fd was just created.
        Ok(PageCacheFile {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            pages: std::cell::Cell::new(0),
        })
    }

    /// Maps the first `n` pages, writing them first if the file is shorter,
    /// so every page is in the page cache before it is faulted in.
    fn map(&self, n: usize) -> std::io::Result<Region> {
        let page = page_size();
        if n > self.pages.get() {
            let chunk = vec![0x5au8; page];
            for i in self.pages.get()..n {
                // SAFETY: writes one page from a valid buffer to our memfd.
                retry_eintr(|| unsafe {
                    libc::pwrite(
                        self.fd.as_raw_fd(),
                        chunk.as_ptr().cast(),
                        page,
                        (i * page) as libc::off_t,
                    )
                })?;
            }
            self.pages.set(n);
        }
        Region::file(self.fd.as_raw_fd(), n * page)
    }
}

/// Touched pages shared with a forked child that holds them until dropped,
/// so every write copies.
struct ForkedPages {
    region: Option<Region>,
    child: libc::pid_t,
    release: Option<OwnedFd>,
}

impl ForkedPages {
    fn new(n: u64) -> ForkedPages {
        let mut pages = ForkedPages {
            region: None,
            child: -1,
            release: None,
        };
        if n == 0 {
            return pages;
        }
        let Ok(region) = Region::anon(n as usize) else {
            return pages;
        };
        region.touch_all();
        let Ok((hold, release)) = crate::sys::pipe(0) else {
            return pages;
        };
        // SAFETY: the child only blocks on a read and exits, both
        // async-signal-safe.
        let child = unsafe { libc::fork() };
        if child < 0 {
            return pages;
        }
        if child == 0 {
            let mut byte = 0u8;
            unsafe {
                libc::close(release.as_raw_fd());
                libc::read(hold.as_raw_fd(), (&raw mut byte).cast(), 1);
                libc::_exit(0);
            }
        }
        pages.region = Some(region);
        pages.child = child;
        pages.release = Some(release);
        pages
    }
}

impl Drop for ForkedPages {
    fn drop(&mut self) {
        // Closing the write end ends the child's read; then reap it.
        self.release.take();
        if self.child > 0 {
            let mut status = 0;
            // SAFETY: waits for our own child.
            let _ = retry_eintr(|| unsafe { libc::waitpid(self.child, &mut status, 0) });
        }
    }
}
