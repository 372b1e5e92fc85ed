//! Runs a command under a seccomp filter that allows every syscall after
//! reading its first argument and comparing it with RULES constants: one
//! known toll on every syscall of the command's whole process, inherited
//! across exec. It injects a mitigation-like cost that `mitbench compare`
//! must flag on the rows that cross into the kernel, attribute to seccomp
//! (the run's inventory records the process's Seccomp status), and leave
//! `~` on rows of user-space work.
//!
//!     cargo run --release --example under_seccomp -- [RULES] -- mitbench run ...
//!
//! Reading an argument keeps the kernel from caching the verdict per
//! syscall number, so the program really runs on every call.

use std::ffi::CString;

/// Offset of `args[0]` in `struct seccomp_data` (nr, arch, ip, args).
const ARG0: u32 = 16;

fn filter(rules: usize) -> Vec<libc::sock_filter> {
    let stmt = |code: u32, k: u32| libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let mut program = vec![stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, ARG0)];
    // Each comparison falls through whatever its outcome: cost, no effect.
    program.extend(
        (0..rules as u32)
            .map(|i| stmt(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K, 0x5eed_0000 + i)),
    );
    program.push(stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW));
    program
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let rules = match args.first().map(|a| a.parse::<usize>()) {
        Some(Ok(n)) if n <= 4000 => {
            args.remove(0);
            n
        }
        _ => 32,
    };
    if args.first().map(String::as_str) == Some("--") {
        args.remove(0);
    }
    if args.is_empty() {
        eprintln!("usage: under_seccomp [RULES] -- COMMAND [ARGS...]");
        std::process::exit(2);
    }
    let program = filter(rules);
    let fprog = libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_ptr().cast_mut(),
    };
    // SAFETY: prctl with valid arguments; the program outlives the call.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &raw const fprog,
            ) != 0
        {
            eprintln!(
                "installing the filter failed: {}",
                std::io::Error::last_os_error()
            );
            std::process::exit(1);
        }
    }
    let argv: Vec<CString> = args
        .iter()
        .map(|a| CString::new(a.as_str()).expect("no NUL in arguments"))
        .collect();
    let mut pointers: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    pointers.push(std::ptr::null());
    // SAFETY: a NULL-terminated argv of valid C strings.
    unsafe { libc::execvp(pointers[0], pointers.as_ptr()) };
    eprintln!(
        "cannot run {}: {}",
        args[0],
        std::io::Error::last_os_error()
    );
    std::process::exit(127);
}
