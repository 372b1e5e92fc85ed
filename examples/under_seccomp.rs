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
    let program = mitbench::tax::inject::every_syscall_filter(rules);
    if let Err(e) = mitbench::tax::inject::install(&program) {
        eprintln!("installing the filter failed: {e}");
        std::process::exit(1);
    }
    let error = mitbench::tax::inject::exec(&args);
    eprintln!("cannot run {}: {error}", args[0]);
    std::process::exit(127);
}
