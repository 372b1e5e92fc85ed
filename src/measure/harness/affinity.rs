//! Pinning threads to CPUs. Only the calling thread's own affinity changes,
//! and a guard puts it back, so nothing outlives the measurement.

use std::io;
use std::mem::MaybeUninit;

/// The CPUs this process may run on, ascending.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    let set = get_affinity()?;
    Ok((0..libc::CPU_SETSIZE as usize)
        // SAFETY: set is an initialised cpu_set_t and cpu < CPU_SETSIZE.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect())
}

/// The CPU the calling thread is running on right now.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: no arguments, no memory touched.
    let cpu = unsafe { libc::sched_getcpu() };
    usize::try_from(cpu).ok()
}

/// Restores the thread's previous affinity when dropped.
pub struct PinGuard {
    previous: libc::cpu_set_t,
}

impl Drop for PinGuard {
    fn drop(&mut self) {
        // Restoring can only fail if the old set no longer exists (CPU
        // hot-unplugged); there is nothing better to do than stay pinned.
        let _ = set_affinity(&self.previous);
    }
}

/// Pins the calling thread to `cpu` until the guard drops.
pub fn pin_current_thread(cpu: usize) -> io::Result<PinGuard> {
    let previous = get_affinity()?;
    pin_current_thread_forever(cpu)?;
    Ok(PinGuard { previous })
}

/// Pins the calling thread to `cpu` for the rest of its life; for helper
/// threads that end before the measurement does.
pub fn pin_current_thread_forever(cpu: usize) -> io::Result<()> {
    set_affinity(&only(cpu)?)
}

/// The CPU set that holds `cpu` alone.
pub fn only(cpu: usize) -> io::Result<libc::cpu_set_t> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("CPU {cpu} out of range"),
        ));
    }
    // SAFETY: an all-zero cpu_set_t is the empty set; cpu < CPU_SETSIZE.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(cpu, &mut set) };
    Ok(set)
}

fn get_affinity() -> io::Result<libc::cpu_set_t> {
    let mut set = MaybeUninit::<libc::cpu_set_t>::zeroed();
    // SAFETY: pid 0 is the calling thread; set is large enough.
    let rc = unsafe { libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), set.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel filled it (and it was zeroed before).
    Ok(unsafe { set.assume_init() })
}

fn set_affinity(set: &libc::cpu_set_t) -> io::Result<()> {
    // SAFETY: pid 0 is the calling thread; set is a valid cpu_set_t.
    let rc = unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Formats CPU lists the way the kernel does: "0-3,6".
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        let mut end = start;
        while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
            i += 1;
            end = cpus[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::format_cpu_list;

    #[test]
    fn cpu_lists_read_like_the_kernel_writes_them() {
        assert_eq!(format_cpu_list(&[]), "");
        assert_eq!(format_cpu_list(&[3]), "3");
        assert_eq!(format_cpu_list(&[0, 1]), "0-1");
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
    }
}
