//! Files of tracefs without changing the machine. Many systems do not
//! mount tracefs; mitbench then mounts it in a mount namespace of a
//! short-lived child of its own (`cat`, which prints the file), so nothing
//! is mounted where anyone else can see it, and the mount is gone with the
//! child.

use super::Root;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// Where tracefs sits below a root.
pub const TRACEFS: &str = "sys/kernel/tracing";

/// The file `relative` of tracefs (e.g. "set_event"): read below `root`
/// where it is there (a fixture tree, or a mounted tracefs), else, on the
/// live system, through a private mount; Err says why it cannot be read.
pub fn read(root: &Root, relative: &str) -> Result<String, String> {
    let path = format!("{TRACEFS}/{relative}");
    if let Some(text) = root.read(&path) {
        return Ok(text);
    }
    if !root.is_live() {
        return Err(format!("no {path} in this tree"));
    }
    read_privately(&format!("/{path}"))
}

/// Each tracepoint's id ("raw_syscalls/sys_enter"), or why it is unknown.
pub fn tracepoint_ids(names: &[&str]) -> Vec<Result<u64, String>> {
    let live = Root::new("/");
    names
        .iter()
        .map(|name| {
            let text = read(&live, &format!("events/{name}/id"))
                .map_err(|e| format!("{name} cannot be counted: {e}"))?;
            text.trim()
                .parse()
                .map_err(|_| format!("{name}: tracefs gave no id"))
        })
        .collect()
}

fn read_privately(path: &str) -> Result<String, String> {
    let mut command = Command::new("cat");
    command.arg(path);
    // SAFETY: unshare and mount are async-signal-safe syscalls; the
    // strings are made before the fork.
    let (fs, target, private_root) = (c"tracefs", c"/sys/kernel/tracing", c"/");
    unsafe {
        command.pre_exec(move || {
            if libc::unshare(libc::CLONE_NEWNS) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Keep the new mount out of the parent namespace.
            if libc::mount(
                std::ptr::null(),
                private_root.as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
                || libc::mount(
                    fs.as_ptr(),
                    target.as_ptr(),
                    fs.as_ptr(),
                    0,
                    std::ptr::null(),
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = command
        .output()
        .map_err(|e| format!("tracefs is not mounted and mounting it privately failed ({e})"))?;
    if !out.status.success() {
        return Err(format!(
            "{path}: not on this kernel ({})",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
