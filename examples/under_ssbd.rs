//! Runs a command with Speculative Store Bypass disabled for its whole
//! process (prctl PR_SPEC_STORE_BYPASS, PR_SPEC_DISABLE, kept across exec):
//! the per-task SSBD a boot with spec_store_bypass_disable=prctl lets a
//! program choose, set from outside as a wrapper would. With under_seccomp
//! it makes the run sets `mitbench attribute` separates without a reboot.
//!
//!     cargo run --release --example under_ssbd -- mitbench run ...
//!
//! Where the kernel does not let tasks choose (its spec_store_bypass file
//! not "... via prctl"), it says so and exits 3 without running anything.

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--") {
        args.remove(0);
    }
    if args.is_empty() {
        eprintln!("usage: under_ssbd [--] COMMAND [ARGS...]");
        std::process::exit(2);
    }
    if let Err(e) = mitbench::tax::inject::disable_store_bypass() {
        eprintln!("unsupported: the kernel refused SSBD for this task ({e})");
        std::process::exit(3);
    }
    let error = mitbench::tax::inject::exec(&args);
    eprintln!("cannot run {}: {error}", args[0]);
    std::process::exit(127);
}
