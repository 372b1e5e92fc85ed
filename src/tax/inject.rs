//! A known toll to inject: a seccomp filter that reads every syscall's
//! first argument and compares it with `rules` constants before allowing
//! it. Reading an argument keeps the kernel from caching the verdict per
//! syscall number, so every syscall of the filtered process pays for the
//! whole program, inherited across fork and exec and gone with the process.

/// Offset of `args[0]` in `struct seccomp_data` (nr, arch, ip, args).
const ARG0: u32 = 16;

/// The filter program: load arg0, `rules` comparisons that fall through
/// whatever their outcome, allow.
pub fn every_syscall_filter(rules: usize) -> Vec<libc::sock_filter> {
    let stmt = |code: u32, k: u32| libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let mut program = vec![stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, ARG0)];
    program.extend(
        (0..rules as u32)
            .map(|i| stmt(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K, 0x5eed_0000 + i)),
    );
    program.push(stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW));
    program
}

/// Installs `program` on the calling thread (and what it starts after).
/// Only prctl calls: safe between fork and exec.
pub fn install(program: &[libc::sock_filter]) -> std::io::Result<()> {
    let fprog = libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_ptr().cast_mut(),
    };
    // SAFETY: prctl with valid arguments; the program outlives the call
    // (the kernel copies it).
    let failed = unsafe {
        libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &raw const fprog,
            ) != 0
    };
    if failed {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `prctl(PR_SET_SPECULATION_CTRL, PR_SPEC_STORE_BYPASS, PR_SPEC_DISABLE)`:
/// Speculative Store Bypass disabled for the calling thread, inherited by
/// what it starts and kept across exec. Refused where the kernel does not
/// let tasks choose (its spec_store_bypass file not "... via prctl").
pub fn disable_store_bypass() -> std::io::Result<()> {
    const PR_SET_SPECULATION_CTRL: libc::c_int = 53;
    const PR_SPEC_STORE_BYPASS: libc::c_ulong = 0;
    const PR_SPEC_DISABLE: libc::c_ulong = 1 << 2;
    // SAFETY: sets a per-task control of the calling thread only.
    let refused = unsafe {
        libc::prctl(
            PR_SET_SPECULATION_CTRL,
            PR_SPEC_STORE_BYPASS,
            PR_SPEC_DISABLE,
            0,
            0,
        )
    } != 0;
    if refused {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Replaces this process with `command` (searched in PATH); returns only
/// the error when that fails.
pub fn exec(command: &[String]) -> std::io::Error {
    let argv: Result<Vec<std::ffi::CString>, _> = command
        .iter()
        .map(|a| std::ffi::CString::new(a.as_str()))
        .collect();
    let Ok(argv) = argv else {
        return std::io::Error::new(std::io::ErrorKind::InvalidInput, "a NUL in an argument");
    };
    if argv.is_empty() {
        return std::io::Error::new(std::io::ErrorKind::InvalidInput, "no command");
    }
    let mut pointers: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    pointers.push(std::ptr::null());
    // SAFETY: a NULL-terminated argv of valid C strings that outlive the call.
    unsafe { libc::execvp(pointers[0], pointers.as_ptr()) };
    std::io::Error::last_os_error()
}
