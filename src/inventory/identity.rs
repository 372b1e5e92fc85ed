//! Which machine and boot a run came from, and the settings outside
//! mitbench that move its figures: the CPU frequency governor, transparent
//! huge pages, and the CPU quota of the cgroup it runs in. Compare only
//! runs whose identity says they are comparable.

use super::root::{Root, UNKNOWN, or_unknown};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Identity {
    pub hostname: String,
    /// /etc/machine-id: the same across boots of one installation.
    pub machine_id: String,
    /// A new one every boot.
    pub boot_id: String,
    /// cpufreq's governor of CPU 0, or why there is none.
    pub cpu_governor: String,
    /// Whether the CPU may boost above its base clock, where readable.
    pub cpu_boost: String,
    /// The transparent huge page mode, e.g. "always [madvise] never".
    pub thp: String,
    /// The `cpu.max` of this process's cgroup (quota and period, "max"
    /// for none), where the cgroup v2 hierarchy is readable.
    pub cgroup_cpu_max: String,
    /// The controls this process inherited and that persist across exec:
    /// its seccomp mode and filters, no_new_privs, and its speculation
    /// controls (/proc/self/status). A wrapper that set one moves figures
    /// without any change to the machine.
    #[serde(default)]
    pub process_controls: BTreeMap<String, String>,
}

/// The /proc/self/status lines that name controls inherited across exec.
const PROCESS_CONTROLS: &[&str] = &[
    "NoNewPrivs",
    "Seccomp",
    "Seccomp_filters",
    "Speculation_Store_Bypass",
    "SpeculationIndirectBranch",
];

pub fn collect(root: &Root) -> Identity {
    let governor = root.read_trimmed("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    let cpu_governor = match governor {
        Some(governor) => governor,
        None if root.exists("sys/devices/system/cpu/cpu0") => {
            "none: no cpufreq driver (usual in VMs; the host sets the clock)".into()
        }
        None => UNKNOWN.into(),
    };
    Identity {
        hostname: or_unknown(
            root.read_trimmed("proc/sys/kernel/hostname")
                .or_else(|| root.read_trimmed("etc/hostname")),
        ),
        machine_id: or_unknown(root.read_trimmed("etc/machine-id")),
        boot_id: or_unknown(root.read_trimmed("proc/sys/kernel/random/boot_id")),
        cpu_governor,
        cpu_boost: or_unknown(
            root.read_trimmed("sys/devices/system/cpu/cpufreq/boost")
                .or_else(|| {
                    root.read_trimmed("sys/devices/system/cpu/intel_pstate/no_turbo")
                        .map(|no_turbo| {
                            if no_turbo == "1" {
                                "0".into()
                            } else {
                                "1".into()
                            }
                        })
                }),
        ),
        thp: or_unknown(root.read_trimmed("sys/kernel/mm/transparent_hugepage/enabled")),
        cgroup_cpu_max: or_unknown(cgroup_cpu_max(root)),
        process_controls: root
            .read("proc/self/status")
            .map(|status| process_controls(&status))
            .unwrap_or_default(),
    }
}

/// The inherited controls (seccomp, speculation) of a /proc/PID/status.
pub fn process_controls(status: &str) -> BTreeMap<String, String> {
    status
        .lines()
        .filter_map(|line| {
            let (key, value) = line.split_once(':')?;
            PROCESS_CONTROLS
                .contains(&key)
                .then(|| (key.to_string(), value.trim().to_string()))
        })
        .collect()
}

/// cpu.max of the cgroup named in /proc/self/cgroup's v2 line ("0::/path").
fn cgroup_cpu_max(root: &Root) -> Option<String> {
    let cgroups = root.read("proc/self/cgroup")?;
    let path = cgroup_v2_path(&cgroups)?;
    let relative = format!("sys/fs/cgroup{path}/cpu.max");
    root.read_trimmed(relative.trim_end_matches('/'))
        .or_else(|| root.read_trimmed("sys/fs/cgroup/cpu.max"))
}

/// The path of the v2 entry ("0::/user.slice/x.scope") of a
/// /proc/PID/cgroup listing; "" for the root.
pub fn cgroup_v2_path(listing: &str) -> Option<String> {
    listing.lines().find_map(|line| {
        let path = line.strip_prefix("0::")?;
        Some(if path == "/" {
            String::new()
        } else {
            path.to_string()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_controls_keep_only_the_inherited_ones() {
        let status = "Name:\tmitbench\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\n\
                      Speculation_Store_Bypass:\tthread force mitigated\nVmRSS:\t1 kB\n";
        let controls = process_controls(status);
        assert_eq!(controls.len(), 4);
        assert_eq!(controls["Seccomp"], "2");
        assert_eq!(
            controls["Speculation_Store_Bypass"],
            "thread force mitigated"
        );
        assert!(!controls.contains_key("VmRSS"));
    }

    #[test]
    fn the_v2_cgroup_line_names_the_path() {
        assert_eq!(
            cgroup_v2_path("12:cpu:/old\n0::/user.slice/run.scope\n").as_deref(),
            Some("/user.slice/run.scope")
        );
        assert_eq!(cgroup_v2_path("0::/\n").as_deref(), Some(""));
        assert_eq!(cgroup_v2_path("3:memory:/x\n"), None);
    }
}
