//! The kernel: version, command line, mitigation-related build options, the
//! preemption model, the clocksource, and its boot log.

use super::root::{Root, UNKNOWN, or_unknown};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Read;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Kernel {
    pub release: String,
    pub version: String,
    pub cmdline: String,
    /// Where the build configuration was read from, or "unknown".
    pub config_source: String,
    /// Mitigation-related options: name -> value ("y", "m", "n" for
    /// "is not set", or the literal value).
    pub mitigation_config: BTreeMap<String, String>,
    pub preemption: Preemption,
    pub clocksource: String,
    pub available_clocksources: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Preemption {
    /// none, voluntary, full, lazy, full (PREEMPT_RT), or unknown.
    pub model: String,
    /// How it was found.
    pub source: String,
}

/// Options whose names start with one of these say how a kernel defends
/// itself, or shape what a probe measures (timer rate, preemption).
const CONFIG_PREFIXES: &[&str] = &[
    "CONFIG_MITIGATION_",
    "CONFIG_CPU_MITIGATIONS",
    "CONFIG_SPECULATION_MITIGATIONS",
    "CONFIG_RETPOLINE",
    "CONFIG_RETHUNK",
    "CONFIG_PAGE_TABLE_ISOLATION",
    "CONFIG_CPU_IBRS_ENTRY",
    "CONFIG_CPU_IBPB_ENTRY",
    "CONFIG_CPU_UNRET_ENTRY",
    "CONFIG_CPU_SRSO",
    "CONFIG_CALL_DEPTH_TRACKING",
    "CONFIG_SLS",
    "CONFIG_X86_KERNEL_IBT",
    "CONFIG_HARDENED_USERCOPY",
    "CONFIG_INIT_ON_ALLOC_DEFAULT_ON",
    "CONFIG_INIT_ON_FREE_DEFAULT_ON",
    "CONFIG_INIT_STACK_",
    "CONFIG_STACKPROTECTOR",
    "CONFIG_RANDOMIZE_KSTACK_OFFSET",
    "CONFIG_PREEMPT",
    "CONFIG_HZ",
    "CONFIG_SECCOMP",
    "CONFIG_IO_URING",
];

pub fn collect(root: &Root, kernel_log: Option<&str>) -> Kernel {
    let release = or_unknown(root.read_trimmed("proc/sys/kernel/osrelease"));
    let cmdline = or_unknown(root.read_trimmed("proc/cmdline"));
    let (config_source, config) = match read_config(root, &release) {
        Some((source, text)) => (source, parse_config(&text)),
        None => (UNKNOWN.to_string(), BTreeMap::new()),
    };
    let preemption = preemption(root, kernel_log, &cmdline, &config);
    let mitigation_config = config
        .into_iter()
        .filter(|(key, _)| CONFIG_PREFIXES.iter().any(|p| key.starts_with(p)))
        .collect();
    Kernel {
        version: or_unknown(root.read_trimmed("proc/version")),
        release,
        cmdline,
        config_source,
        mitigation_config,
        preemption,
        clocksource: or_unknown(
            root.read_trimmed("sys/devices/system/clocksource/clocksource0/current_clocksource"),
        ),
        available_clocksources: or_unknown(
            root.read_trimmed("sys/devices/system/clocksource/clocksource0/available_clocksource"),
        ),
    }
}

/// /proc/config.gz when the kernel exposes it, else /boot/config-<release>.
fn read_config(root: &Root, release: &str) -> Option<(String, String)> {
    if let Some(gz) = root.read_bytes("proc/config.gz") {
        let mut text = String::new();
        // A compressed file may expand without bound; a config is ~300 KB.
        if flate2::read::GzDecoder::new(gz.as_slice())
            .take(super::root::MAX_FILE_BYTES)
            .read_to_string(&mut text)
            .is_ok()
        {
            return Some(("/proc/config.gz".into(), text));
        }
    }
    let boot = format!("boot/config-{release}");
    root.read(&boot).map(|text| (format!("/{boot}"), text))
}

/// Every option in a kernel .config: "CONFIG_X=v" and "# CONFIG_X is not set".
pub fn parse_config(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            if let Some(name) = line
                .strip_prefix("# ")
                .and_then(|l| l.strip_suffix(" is not set"))
            {
                return name
                    .starts_with("CONFIG_")
                    .then(|| (name.to_string(), "n".to_string()));
            }
            let (key, value) = line.split_once('=')?;
            key.starts_with("CONFIG_")
                .then(|| (key.to_string(), value.trim_matches('"').to_string()))
        })
        .collect()
}

/// The preemption model in force, most direct evidence first: debugfs shows
/// the current one (it can be switched at run time); the boot log and the
/// command line show the one chosen at boot; the build config the default.
fn preemption(
    root: &Root,
    kernel_log: Option<&str>,
    cmdline: &str,
    config: &BTreeMap<String, String>,
) -> Preemption {
    let found = |model: &str, source: &str| Preemption {
        model: model.to_string(),
        source: source.to_string(),
    };
    if let Some(text) = root.read_trimmed("sys/kernel/debug/sched/preempt")
        && let Some(model) = text
            .split_whitespace()
            .find_map(|w| w.strip_prefix('(')?.strip_suffix(')'))
    {
        return found(model, "debugfs sched/preempt");
    }
    if let Some(model) = kernel_log.and_then(|log| {
        log.lines().rev().find_map(|l| {
            l.split_once("Dynamic Preempt:")
                .map(|(_, m)| m.trim().to_string())
        })
    }) {
        return found(&model, "kernel log (Dynamic Preempt)");
    }
    let dynamic = config
        .get("CONFIG_PREEMPT_DYNAMIC")
        .is_some_and(|v| v == "y");
    if dynamic
        && let Some(model) = cmdline
            .split_whitespace()
            .find_map(|w| w.strip_prefix("preempt="))
    {
        return found(model, "kernel command line");
    }
    let set = |key: &str| config.get(key).is_some_and(|v| v == "y");
    let model = if set("CONFIG_PREEMPT_RT") {
        "full (PREEMPT_RT)"
    } else if set("CONFIG_PREEMPT") {
        "full"
    } else if set("CONFIG_PREEMPT_LAZY") {
        "lazy"
    } else if set("CONFIG_PREEMPT_VOLUNTARY") {
        "voluntary"
    } else if set("CONFIG_PREEMPT_NONE") {
        "none"
    } else {
        return found(UNKNOWN, "no debugfs, boot log line or build config found");
    };
    found(model, "kernel build config")
}

/// The kernel's log: the live ring buffer through syslog(2) when reading the
/// running system, else the boot log a distribution saved in /var/log/dmesg.
pub fn kernel_log(root: &Root) -> Option<String> {
    if root.is_live()
        && let Some(text) = read_ring_buffer()
    {
        return Some(text);
    }
    root.read("var/log/dmesg")
}

fn read_ring_buffer() -> Option<String> {
    const SYSLOG_ACTION_READ_ALL: libc::c_int = 3;
    const SYSLOG_ACTION_SIZE_BUFFER: libc::c_int = 10;
    // SAFETY: SIZE_BUFFER ignores the buffer arguments.
    let size = unsafe { libc::klogctl(SYSLOG_ACTION_SIZE_BUFFER, std::ptr::null_mut(), 0) };
    let size = usize::try_from(size).ok().filter(|&s| s > 0)?;
    let mut buf = vec![0u8; size];
    // SAFETY: buf is valid for `size` bytes.
    let read = unsafe {
        libc::klogctl(
            SYSLOG_ACTION_READ_ALL,
            buf.as_mut_ptr().cast(),
            size as libc::c_int,
        )
    };
    let read = usize::try_from(read).ok()?;
    buf.truncate(read);
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// The mitigation words of a kernel command line, in its order: the
/// parameters the catalogue knows (`mitigations::kernel::is_parameter`),
/// so a boot `mitbench plan` proposes (`tsa=off`,
/// `kvm.nx_huge_pages=off`) is told apart from the present one by plan,
/// compare and the history.
pub fn mitigation_words(cmdline: &str) -> Vec<String> {
    cmdline
        .split_whitespace()
        .filter(|word| crate::mitigations::kernel::is_parameter(word))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_words_are_the_mitigation_parameters() {
        let words = mitigation_words(
            "BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro mitigations=auto,nosmt nopti spectre_v2=retpoline quiet",
        );
        assert_eq!(
            words,
            ["mitigations=auto,nosmt", "nopti", "spectre_v2=retpoline"]
        );
    }

    #[test]
    fn every_word_plan_proposes_is_a_mitigation_word() {
        for (file, off) in crate::mitigations::kernel::SWITCHES {
            let cmdline = format!("ro quiet {off}");
            assert_eq!(mitigation_words(&cmdline), [*off], "{file}");
        }
    }
}
