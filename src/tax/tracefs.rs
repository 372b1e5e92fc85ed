//! Tracepoint ids without changing the machine. The ids are in tracefs,
//! which many systems do not mount; mitbench then mounts it in a mount
//! namespace of a short-lived child of its own (`cat`, which prints the
//! ids), so nothing is mounted where anyone else can see it, and the mount
//! is gone with the child.

use std::os::unix::process::CommandExt;
use std::process::Command;

const MOUNT_POINT: &str = "/sys/kernel/tracing";

/// Each tracepoint's id ("raw_syscalls/sys_enter"), or why it is unknown.
pub fn tracepoint_ids(names: &[&str]) -> Vec<Result<u64, String>> {
    names.iter().map(|name| id_of(name)).collect()
}

fn id_of(name: &str) -> Result<u64, String> {
    let path = format!("{MOUNT_POINT}/events/{name}/id");
    if let Ok(text) = std::fs::read_to_string(&path) {
        return parse(&text, name);
    }
    let mut command = Command::new("cat");
    command.arg(&path);
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
    let out = command.output().map_err(|e| {
        format!("tracefs is not mounted and mounting it privately failed ({e}): {name} cannot be counted")
    })?;
    if !out.status.success() {
        return Err(format!(
            "{name}: no such tracepoint on this kernel ({})",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    parse(&String::from_utf8_lossy(&out.stdout), name)
}

fn parse(text: &str, name: &str) -> Result<u64, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("{name}: tracefs gave no id"))
}
