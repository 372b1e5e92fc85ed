//! Builds csrc/kernels.c once per hardening flag set, each under its own
//! symbol prefix, into one static library, and writes the table of sets
//! (flags, compiler, and for a set the compiler refused, its reason) that
//! the `cflags` probes read.
//!
//! The compiler is invoked directly rather than through `cc::Build::compile`
//! because that appends CFLAGS from the environment, and a set's flags must
//! be exactly the ones it names.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Every set starts from this, so a compiler whose distribution turns
/// hardening on by default (Ubuntu's gcc enables the stack protector,
/// fortify and CET) still gives a plain baseline. -fPIC because the kernels
/// link into a position-independent executable. Functions and loops are
/// aligned to 64 bytes in every set, so where a set's code starts relative
/// to a cache line or a fetch block is not what differs between sets (the
/// layout controls below show how much that alone moves a kernel).
const BASE: &[&str] = &[
    "-O2",
    "-fPIC",
    "-fno-stack-protector",
    "-fcf-protection=none",
    "-fno-stack-clash-protection",
    "-U_FORTIFY_SOURCE",
    "-falign-functions=64",
    "-falign-loops=64",
];

const RETPOLINE: &[&str] = &[
    "-mindirect-branch=thunk-extern",
    "-mindirect-branch-register",
];

/// (name, flags added to BASE, what it is).
const SETS: &[(&str, &[&str], &str)] = &[
    ("plain", &[], "no hardening"),
    // Layout controls: no hardening, only the alignment changed (a later
    // -falign-* overrides BASE's). Their spread around `plain` is what
    // code placement alone does to a kernel; a hardening set that differs
    // from `plain` by less is not told apart from placement.
    (
        "plain/align-32",
        &["-falign-functions=32", "-falign-loops=32"],
        "layout control: no hardening, functions and loops aligned to 32 bytes",
    ),
    (
        "plain/align-16",
        &["-falign-functions=16", "-falign-loops=16"],
        "layout control: no hardening, functions and loops aligned to 16 bytes",
    ),
    (
        "retpoline",
        RETPOLINE,
        "indirect calls and jumps through __x86_indirect_thunk_<reg>",
    ),
    (
        "return-thunk",
        &["-mfunction-return=thunk-extern"],
        "returns through __x86_return_thunk",
    ),
    (
        "retpoline+return-thunk",
        &[
            "-mindirect-branch=thunk-extern",
            "-mindirect-branch-register",
            "-mfunction-return=thunk-extern",
        ],
        "both thunks, as a retpoline+rethunk kernel build",
    ),
    (
        "cet",
        &["-fcf-protection=full"],
        "endbr64 landing pads (IBT) and shadow-stack readiness",
    ),
    (
        "cet+retpoline",
        &[
            "-fcf-protection=full",
            "-mindirect-branch=thunk-extern",
            "-mindirect-branch-register",
        ],
        "CET landing pads and retpolines together",
    ),
    (
        "ssp-strong",
        &["-fstack-protector-strong"],
        "stack canary in functions with local arrays or address-taken locals",
    ),
    (
        "ssp-all",
        &["-fstack-protector-all"],
        "stack canary in every function",
    ),
    (
        "autoinit-zero",
        &["-ftrivial-auto-var-init=zero"],
        "locals zeroed on entry",
    ),
    (
        "autoinit-pattern",
        &["-ftrivial-auto-var-init=pattern"],
        "locals filled with a pattern on entry",
    ),
    (
        "zero-regs-used-gpr",
        &["-fzero-call-used-regs=used-gpr"],
        "used general registers zeroed before return",
    ),
    (
        "zero-regs-all",
        &["-fzero-call-used-regs=all"],
        "all call-used registers zeroed before return",
    ),
    (
        "fortify-3",
        &["-D_FORTIFY_SOURCE=3"],
        "bounds-checked string and memory calls (glibc, dynamic object sizes)",
    ),
    (
        "stack-clash",
        &["-fstack-clash-protection"],
        "stack probes for large frames",
    ),
    (
        "sls",
        &["-mharden-sls=all"],
        "int3 after every ret and indirect jmp (straight-line speculation)",
    ),
    // Debian 12: `dpkg-buildflags --get CFLAGS` / `--get CPPFLAGS` (dpkg-dev
    // 1.21.22, amd64 defaults), code-generation flags only: -O2
    // -fstack-protector-strong and -D_FORTIFY_SOURCE=2 (the rest are -g,
    // -ffile-prefix-map and warnings).
    (
        "debian-12",
        &["-fstack-protector-strong", "-D_FORTIFY_SOURCE=2"],
        "what Debian 12 builds packages with",
    ),
    // Fedora 40: redhat-rpm-config's %{optflags} for x86_64, code-generation
    // flags only (dropped: -g, -grecord-gcc-switches, -pipe, -Wall,
    // -Werror=format-security, the -specs files, -m64 -march/-mtune, -flto).
    (
        "fedora-40",
        &[
            "-fexceptions",
            "-D_FORTIFY_SOURCE=3",
            "-D_GLIBCXX_ASSERTIONS",
            "-fstack-protector-strong",
            "-fasynchronous-unwind-tables",
            "-fstack-clash-protection",
            "-fcf-protection",
            "-fno-omit-frame-pointer",
            "-mno-omit-leaf-frame-pointer",
        ],
        "what Fedora 40 builds packages with",
    ),
];

const KERNELS: &[&str] = &["init", "pipeline", "interp", "format"];

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let source = Path::new("csrc/kernels.c");
    println!("cargo:rerun-if-changed={}", source.display());
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CC");

    build_identity();
    let compiler = cc::Build::new().get_compiler();
    let version = Command::new(compiler.path())
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.lines().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into());

    let mut objects = Vec::new();
    let mut table = String::new();
    let mut externs = String::new();
    let _ = writeln!(table, "pub const COMPILER: &str = {version:?};\n");
    let _ = writeln!(table, "pub static SETS: &[FlagSet] = &[");
    for (index, &(name, extra, what)) in SETS.iter().enumerate() {
        let prefix = format!("mitbench_cflags{index}_");
        let object = out.join(format!("kernels-{}.o", name.replace('/', "-")));
        let flags: Vec<&str> = BASE.iter().chain(extra).copied().collect();
        let result = Command::new(compiler.path())
            .args(&flags)
            .arg(format!("-DMB_PREFIX={prefix}"))
            .args([
                "-c",
                &source.display().to_string(),
                "-o",
                &object.display().to_string(),
            ])
            .output();
        let refused = match result {
            Ok(o) if o.status.success() => None,
            Ok(o) => Some(first_error(&String::from_utf8_lossy(&o.stderr))),
            Err(e) => Some(format!("running {} failed: {e}", compiler.path().display())),
        };
        let _ = write!(
            table,
            "    FlagSet {{ name: {name:?}, flags: {:?}, what: {what:?}, ",
            flags.join(" ")
        );
        match refused {
            None => {
                objects.push(object);
                let kernels: Vec<String> = KERNELS
                    .iter()
                    .map(|k| format!("{k}: {prefix}{k}"))
                    .collect();
                let _ = writeln!(
                    table,
                    "kernels: Ok(Kernels {{ {} }}) }},",
                    kernels.join(", ")
                );
                let _ = writeln!(externs, "    fn {prefix}init();");
                for kernel in &KERNELS[1..] {
                    let _ = writeln!(externs, "    fn {prefix}{kernel}(items: u64) -> u64;");
                }
            }
            Some(reason) => {
                println!("cargo:warning=flag set {name} not built: {reason}");
                let _ = writeln!(table, "kernels: Err({reason:?}) }},");
            }
        }
    }
    let _ = writeln!(table, "];\n\nunsafe extern \"C\" {{\n{externs}}}");

    let library = out.join("libmitbench_kernels.a");
    let _ = std::fs::remove_file(&library);
    let status = cc::Build::new()
        .get_archiver()
        .arg("crs")
        .arg(&library)
        .args(&objects)
        .status()
        .expect("running the archiver");
    assert!(status.success(), "archiving the C kernels failed");
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=mitbench_kernels");
    std::fs::write(out.join("cflags_sets.rs"), table).expect("writing cflags_sets.rs");
    noop_program(&out, compiler.path());
}

/// csrc/noop.c as a static executable with no C library, for os/exec to
/// run, and `noop.rs` holding its bytes (or why it could not be built).
fn noop_program(out: &Path, compiler: &Path) {
    let source = Path::new("csrc/noop.c");
    println!("cargo:rerun-if-changed={}", source.display());
    let program = out.join("noop");
    let result = Command::new(compiler)
        .args([
            "-O2",
            "-static",
            "-nostdlib",
            "-no-pie",
            "-fno-pie",
            "-fno-stack-protector",
            "-fcf-protection=none",
            "-Wl,--build-id=none",
        ])
        .arg(source)
        .arg("-o")
        .arg(&program)
        .output();
    let held = match result {
        Ok(o) if o.status.success() => {
            format!("Ok(include_bytes!({:?}))", program.display().to_string())
        }
        Ok(o) => format!(
            "Err({:?})",
            first_error(&String::from_utf8_lossy(&o.stderr))
        ),
        Err(e) => format!(
            "Err({:?})",
            format!("running {} failed: {e}", compiler.display())
        ),
    };
    let rs = format!(
        "/// The static no-op program's bytes, or why it was not built.\npub const NOOP: Result<&[u8], &str> = {held};\n"
    );
    std::fs::write(out.join("noop.rs"), rs).expect("writing noop.rs");
}

/// The compiler's first error line, without the file position.
fn first_error(stderr: &str) -> String {
    stderr
        .lines()
        .find(|l| l.contains("error"))
        .map(|l| {
            l.split_once("error: ")
                .map_or(l, |(_, msg)| msg)
                .trim()
                .to_string()
        })
        .unwrap_or_else(|| stderr.trim().to_string())
}

/// The build's identity for the run document: the git commit (with
/// "-dirty" when the tree had changes) and the Rust compiler.
fn build_identity() {
    let output = |program: &str, args: &[&str]| {
        Command::new(program)
            .args(args)
            // `git status` refreshes .git/index where it may; that write
            // would rerun this script (it watches the index) and rebuild
            // mitbench and every C flag set on the next cargo command.
            .env("GIT_OPTIONAL_LOCKS", "0")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    let commit = output("git", &["rev-parse", "HEAD"]).map_or_else(
        || "unknown (not built from a git checkout)".to_string(),
        |commit| match output("git", &["status", "--porcelain", "--untracked-files=no"]) {
            Some(_) => format!("{commit}-dirty"),
            None => commit,
        },
    );
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let rustc = output(&rustc, &["--version"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=MITBENCH_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=MITBENCH_RUSTC={rustc}");
    println!(
        "cargo:rustc-env=MITBENCH_PROFILE={}",
        std::env::var("PROFILE").unwrap_or_default()
    );
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/index");
}
