//! Kernel facilities probes depend on: perf events, seccomp, io_uring.
//! Each is described from files under the root; on the live system a cheap,
//! self-cleaning attempt (open a counter, create a ring) has the last word.

use super::kernel::Kernel;
use super::root::{Root, UNKNOWN, or_unknown};
use crate::measure::harness::counters;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Facilities {
    pub perf_event_paranoid: String,
    /// "available", or "unavailable: <reason>", or "unknown".
    pub pmu: String,
    pub seccomp: String,
    pub io_uring: String,
    /// Whether this machine can run guests of its own (/dev/kvm, the kvm
    /// modules), which makes the guest attack vectors relevant: "can run
    /// guests: ...", "runs no guests: ...", or "unknown" (empty in runs
    /// stored before it was read).
    #[serde(default)]
    pub guests: String,
}

pub fn collect(root: &Root, kernel: &Kernel, kernel_log: Option<&str>) -> Facilities {
    Facilities {
        perf_event_paranoid: or_unknown(root.read_trimmed("proc/sys/kernel/perf_event_paranoid")),
        pmu: pmu(root, kernel_log),
        seccomp: seccomp(root, kernel),
        io_uring: io_uring(root, kernel),
        guests: guests(root),
    }
}

/// /dev/kvm and the loaded kvm modules: a machine that has neither runs
/// no guests under this kernel (a guest itself may still have them, for
/// nested guests).
fn guests(root: &Root) -> String {
    let found: Vec<&str> = [
        "dev/kvm",
        "sys/module/kvm",
        "sys/module/kvm_amd",
        "sys/module/kvm_intel",
    ]
    .into_iter()
    .filter(|p| root.exists(p))
    .collect();
    if !found.is_empty() {
        let names: Vec<String> = found.iter().map(|p| format!("/{p}")).collect();
        return format!("can run guests: {}", names.join(", "));
    }
    if root.is_live() || root.exists("sys/module") {
        return "runs no guests: no /dev/kvm and no kvm module".into();
    }
    UNKNOWN.into()
}

fn pmu(root: &Root, kernel_log: Option<&str>) -> String {
    if root.is_live() {
        return match counters::hardware_status() {
            Ok(()) => "available".into(),
            Err(why) => format!("unavailable: {why}"),
        };
    }
    if let Some(line) =
        kernel_log.and_then(|log| log.lines().find(|l| l.contains("PMU not available")))
    {
        let text = line
            .split_once("Performance Events:")
            .map_or(line, |(_, rest)| rest)
            .trim();
        return format!("unavailable: {text} (kernel log)");
    }
    let devices = [
        "sys/bus/event_source/devices/cpu",
        "sys/bus/event_source/devices/cpu_core",
    ];
    if devices.iter().any(|d| root.exists(d)) {
        return "available (core PMU device in sysfs)".into();
    }
    if root.exists("sys/bus/event_source/devices") {
        return "unavailable: no core PMU device in sysfs".into();
    }
    UNKNOWN.into()
}

fn seccomp(root: &Root, kernel: &Kernel) -> String {
    let current = root.read("proc/self/status").and_then(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Seccomp:").map(|v| v.trim().to_string()))
    });
    let running_under = match current.as_deref() {
        Some("0") | None => String::new(),
        Some(mode) => format!("; this process already runs under seccomp mode {mode}"),
    };
    if let Some(actions) = root.read_trimmed("proc/sys/kernel/seccomp/actions_avail") {
        return format!("available (actions: {actions}){running_under}");
    }
    match kernel
        .mitigation_config
        .get("CONFIG_SECCOMP_FILTER")
        .map(String::as_str)
    {
        Some("y") => format!("available (CONFIG_SECCOMP_FILTER=y){running_under}"),
        Some(_) => "unavailable: kernel built without CONFIG_SECCOMP_FILTER".into(),
        None if current.is_some() => {
            format!("available (Seccomp field in /proc/self/status){running_under}")
        }
        None => UNKNOWN.into(),
    }
}

fn io_uring(root: &Root, kernel: &Kernel) -> String {
    if kernel
        .mitigation_config
        .get("CONFIG_IO_URING")
        .is_some_and(|v| v == "n")
    {
        return "unavailable: kernel built without CONFIG_IO_URING".into();
    }
    let sysctl = match root
        .read_trimmed("proc/sys/kernel/io_uring_disabled")
        .as_deref()
    {
        Some("2") => return "unavailable: disabled by sysctl kernel.io_uring_disabled=2".into(),
        Some("1") => Some("restricted to the io_uring_group by kernel.io_uring_disabled=1"),
        Some(_) => Some("enabled (kernel.io_uring_disabled=0)"),
        None => None,
    };
    if root.is_live() {
        return match try_io_uring_setup() {
            Ok(()) => "available".into(),
            Err(e) => format!("unavailable: io_uring_setup failed: {e}"),
        };
    }
    match (
        sysctl,
        kernel
            .mitigation_config
            .get("CONFIG_IO_URING")
            .map(String::as_str),
    ) {
        (Some(text), _) => text.into(),
        (None, Some("y")) => "available (CONFIG_IO_URING=y)".into(),
        _ => UNKNOWN.into(),
    }
}

/// Creates and at once closes a one-entry ring.
fn try_io_uring_setup() -> std::io::Result<()> {
    // struct io_uring_params is 120 bytes; all zero asks for defaults.
    let mut params = [0u8; 120];
    // SAFETY: io_uring_setup(entries, params) with a valid params buffer.
    let fd = unsafe { libc::syscall(libc::SYS_io_uring_setup, 1u32, params.as_mut_ptr()) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd was just returned to us and is closed once.
    unsafe { libc::close(fd as libc::c_int) };
    Ok(())
}
