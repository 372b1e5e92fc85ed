//! The processor: identity, the feature flags mitigations depend on, SMT,
//! the hypervisor, and the kernel's own verdict per vulnerability.

use super::root::{Root, UNKNOWN, or_unknown};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Flags that decide which mitigations a kernel can use and what they cost.
pub const RELEVANT_FLAGS: &[&str] = &[
    "pcid",
    "invpcid",
    "ibrs",
    "ibpb",
    "stibp",
    "ssbd",
    "amd_ssbd",
    "virt_ssbd",
    "md_clear",
    "ibrs_enhanced",
    "flush_l1d",
    "arch_capabilities",
    "ibt",
    "user_shstk",
    "smep",
    "smap",
    "umip",
    "pti",
    "retpoline",
    "rdtscp",
    "constant_tsc",
    "nonstop_tsc",
    "tsc_known_freq",
    "hypervisor",
];

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cpu {
    pub vendor: String,
    pub model_name: String,
    pub family: String,
    pub model: String,
    pub stepping: String,
    pub microcode: String,
    /// Online CPUs as the kernel lists them ("0-1").
    pub online: String,
    /// Each relevant flag: present or not. Empty when cpuinfo is unreadable.
    pub flags: BTreeMap<String, bool>,
    pub smt_control: String,
    pub smt_active: String,
    pub hypervisor: String,
    /// Every file in /sys/devices/system/cpu/vulnerabilities with its text.
    pub vulnerabilities: BTreeMap<String, String>,
    /// The bugs cpuinfo lists for the CPU (`swapgs`, `retbleed`, ...):
    /// what a vulnerability's line leaves unsaid (spectre_v1's line is one
    /// text whether or not the CPU needs the SWAPGS fence). Empty where
    /// cpuinfo has no such line, or in a run stored before it was read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bugs: Vec<String>,
}

/// The `key: value` fields of the first processor block of /proc/cpuinfo.
fn first_processor(cpuinfo: &str) -> BTreeMap<String, String> {
    cpuinfo
        .lines()
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| {
            let (key, value) = line.split_once(':')?;
            Some((key.trim().to_string(), value.trim().to_string()))
        })
        .collect()
}

pub fn collect(root: &Root, kernel_log: Option<&str>) -> Cpu {
    let fields = root
        .read("proc/cpuinfo")
        .map(|text| first_processor(&text))
        .unwrap_or_default();
    let field = |key: &str| {
        fields
            .get(key)
            .cloned()
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| UNKNOWN.into())
    };
    let flags: BTreeMap<String, bool> = match fields.get("flags") {
        Some(list) => {
            let present: Vec<&str> = list.split_whitespace().collect();
            RELEVANT_FLAGS
                .iter()
                .map(|f| (f.to_string(), present.contains(f)))
                .collect()
        }
        None => BTreeMap::new(),
    };
    let hypervisor = hypervisor(root, flags.get("hypervisor").copied(), kernel_log);
    Cpu {
        vendor: field("vendor_id"),
        model_name: field("model name"),
        family: field("cpu family"),
        model: field("model"),
        stepping: field("stepping"),
        microcode: field("microcode"),
        online: or_unknown(root.read_trimmed("sys/devices/system/cpu/online")),
        flags,
        smt_control: or_unknown(root.read_trimmed("sys/devices/system/cpu/smt/control")),
        smt_active: or_unknown(root.read_trimmed("sys/devices/system/cpu/smt/active")),
        hypervisor,
        vulnerabilities: root
            .read_dir_files("sys/devices/system/cpu/vulnerabilities")
            .into_iter()
            .collect(),
        bugs: fields
            .get("bugs")
            .map(|list| list.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
    }
}

fn hypervisor(root: &Root, flag: Option<bool>, kernel_log: Option<&str>) -> String {
    if let Some(kind) = root.read_trimmed("sys/hypervisor/type") {
        return format!("{kind} (sys/hypervisor/type)");
    }
    if let Some(vendor) = kernel_log.and_then(|log| {
        log.lines().find_map(|l| {
            l.split_once("Hypervisor detected:")
                .map(|(_, v)| v.trim().to_string())
        })
    }) {
        return format!("{vendor} (kernel log)");
    }
    if root.is_live()
        && let Some(vendor) = cpuid_hypervisor_vendor()
    {
        return format!("{vendor} (cpuid)");
    }
    match flag {
        Some(true) => "present, vendor unknown".into(),
        Some(false) => "none".into(),
        None => UNKNOWN.into(),
    }
}

/// The hypervisor's vendor signature from CPUID leaf 0x40000000, when the
/// hypervisor bit (leaf 1, ECX bit 31) is set.
fn cpuid_hypervisor_vendor() -> Option<String> {
    let (bytes, _) = crate::sys::hypervisor_leaf()?;
    let text = String::from_utf8_lossy(&bytes)
        .trim_matches(char::from(0))
        .trim()
        .to_string();
    (!text.is_empty()).then_some(text)
}
