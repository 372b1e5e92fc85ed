//! The kernel's own switches for its mitigations: for each vulnerability
//! file under /sys/devices/system/cpu/vulnerabilities, the boot parameter
//! that turns its mitigation off (Documentation/admin-guide/
//! kernel-parameters.txt) and the mitigation it stands for in the
//! attribution table. Only another boot can measure what these cost; this
//! table says which boots would.

use std::collections::BTreeMap;

/// One vulnerability file and the boot parameter that switches its
/// mitigation off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Switch {
    /// The file's name under /sys/devices/system/cpu/vulnerabilities.
    pub vulnerability: &'static str,
    /// The kernel command-line word that turns the mitigation off.
    pub off: &'static str,
    /// What the kernel does while it is on, in a few words.
    pub what: &'static str,
}

pub const SWITCHES: &[Switch] = &[
    Switch {
        vulnerability: "meltdown",
        off: "pti=off",
        what: "page-table isolation on every kernel entry",
    },
    Switch {
        vulnerability: "spectre_v1",
        off: "nospectre_v1",
        what: "swapgs barriers and user-pointer masking",
    },
    Switch {
        vulnerability: "spectre_v2",
        off: "spectre_v2=off",
        what: "retpolines or IBRS in the kernel, RSB filling",
    },
    Switch {
        vulnerability: "spec_store_bypass",
        off: "spec_store_bypass_disable=off",
        what: "speculative store bypass disabled for tasks that ask",
    },
    Switch {
        vulnerability: "l1tf",
        off: "l1tf=off",
        what: "page-table entry inversion and L1D flushes",
    },
    Switch {
        vulnerability: "mds",
        off: "mds=off",
        what: "CPU buffers cleared (VERW) on every return to user",
    },
    Switch {
        vulnerability: "tsx_async_abort",
        off: "tsx_async_abort=off",
        what: "CPU buffers cleared on return to user",
    },
    Switch {
        vulnerability: "mmio_stale_data",
        off: "mmio_stale_data=off",
        what: "CPU buffers cleared on return to user",
    },
    Switch {
        vulnerability: "reg_file_data_sampling",
        off: "reg_file_data_sampling=off",
        what: "register files cleared on return to user",
    },
    Switch {
        vulnerability: "retbleed",
        off: "retbleed=off",
        what: "return thunks or IBRS on kernel returns",
    },
    Switch {
        vulnerability: "spec_rstack_overflow",
        off: "spec_rstack_overflow=off",
        what: "the safe-RET sequence on every kernel return",
    },
    Switch {
        vulnerability: "srbds",
        off: "srbds=off",
        what: "RDRAND and RDSEED serialised by microcode",
    },
    Switch {
        vulnerability: "gather_data_sampling",
        off: "gather_data_sampling=off",
        what: "AVX gather instructions slowed by microcode",
    },
    Switch {
        vulnerability: "indirect_target_selection",
        off: "indirect_target_selection=off",
        what: "indirect branches moved to safe cache lines",
    },
    Switch {
        vulnerability: "tsa",
        off: "tsa=off",
        what: "CPU buffers cleared on return to user",
    },
    Switch {
        vulnerability: "vmscape",
        off: "vmscape=off",
        what: "a prediction barrier on exits to a VM's user space",
    },
    Switch {
        vulnerability: "itlb_multihit",
        off: "kvm.nx_huge_pages=off",
        what: "KVM's huge pages split for executable guest memory",
    },
];

/// A mitigation the running kernel has in force, from its vulnerability
/// file, with the boot parameter that turns it off.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct InForce {
    pub vulnerability: String,
    /// The file's text ("Mitigation: Retpolines; ...").
    pub line: String,
    pub off: String,
}

/// The mitigations in force by the vulnerability files (name -> text):
/// a file that says "Mitigation: ...", or "Vulnerable: ..." with a partial
/// mitigation after the colon (SRSO's "Vulnerable: Safe RET, no
/// microcode" runs the safe-RET sequence). "Not affected", a bare
/// "Vulnerable" and files this table does not know are left out.
pub fn in_force(vulnerabilities: &BTreeMap<String, String>) -> Vec<InForce> {
    SWITCHES
        .iter()
        .filter_map(|switch| {
            let line = vulnerabilities.get(switch.vulnerability)?.trim();
            let partial = line
                .strip_prefix("Vulnerable:")
                .is_some_and(|rest| !rest.trim().is_empty());
            (line.starts_with("Mitigation") || partial).then(|| InForce {
                vulnerability: switch.vulnerability.to_string(),
                line: line.to_string(),
                off: switch.off.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_mitigation_is_in_force_when_its_file_says_so() {
        let found = in_force(&files(&[
            ("meltdown", "Not affected"),
            ("spec_store_bypass", "Vulnerable"),
            ("spec_rstack_overflow", "Vulnerable: Safe RET, no microcode"),
            (
                "spectre_v2",
                "Mitigation: Retpolines; STIBP: disabled; RSB filling",
            ),
            ("a_future_one", "Mitigation: something new"),
        ]));
        let offs: Vec<&str> = found.iter().map(|f| f.off.as_str()).collect();
        assert_eq!(offs, ["spectre_v2=off", "spec_rstack_overflow=off"]);
    }

    #[test]
    fn every_switch_names_its_own_file_once() {
        let mut names: Vec<&str> = SWITCHES.iter().map(|s| s.vulnerability).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), SWITCHES.len());
        for s in SWITCHES {
            let word = s.off.split_once('=').map_or(s.off, |(name, _)| name);
            assert!(!word.is_empty() && !s.off.contains(' '), "{s:?}");
        }
    }
}
