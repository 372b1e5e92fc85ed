//! The kernel's own switches for its mitigations: for each vulnerability
//! file under /sys/devices/system/cpu/vulnerabilities, the boot parameter
//! that turns its mitigation off (Documentation/admin-guide/
//! kernel-parameters.txt). Only another boot can measure what these cost;
//! this table says which boots would (`mitbench plan`, and the summary's
//! last line).

use std::collections::BTreeMap;

/// Each vulnerability file (its name under
/// /sys/devices/system/cpu/vulnerabilities) and the kernel command-line
/// word that turns its mitigation off.
pub const SWITCHES: &[(&str, &str)] = &[
    ("meltdown", "pti=off"),
    ("spectre_v1", "nospectre_v1"),
    ("spectre_v2", "spectre_v2=off"),
    ("spec_store_bypass", "spec_store_bypass_disable=off"),
    ("l1tf", "l1tf=off"),
    ("mds", "mds=off"),
    ("tsx_async_abort", "tsx_async_abort=off"),
    ("mmio_stale_data", "mmio_stale_data=off"),
    ("reg_file_data_sampling", "reg_file_data_sampling=off"),
    ("retbleed", "retbleed=off"),
    ("spec_rstack_overflow", "spec_rstack_overflow=off"),
    ("srbds", "srbds=off"),
    ("gather_data_sampling", "gather_data_sampling=off"),
    ("indirect_target_selection", "indirect_target_selection=off"),
    ("tsa", "tsa=off"),
    ("vmscape", "vmscape=off"),
    ("itlb_multihit", "kvm.nx_huge_pages=off"),
];

/// Command-line parameters that set mitigations besides the words of
/// [`SWITCHES`]: the umbrella, the older spellings and the ones that set
/// a mode rather than turn one off.
const OTHER_PARAMETERS: &[&str] = &[
    "mitigations",
    "nopti",
    "pti",
    "kpti",
    "nospectre_v2",
    "spectre_v2_user",
    "spectre_bhi",
    "nospec_store_bypass_disable",
    "ssbd",
    "l1d_flush",
    "tsx",
    "nosmt",
    "noibrs",
    "noibpb",
];

/// Whether a command-line word (`name` or `name=value`) sets a
/// mitigation: a parameter of [`SWITCHES`] or of the others above.
pub fn is_parameter(word: &str) -> bool {
    fn name(word: &str) -> &str {
        word.split_once('=').map_or(word, |(name, _)| name)
    }
    let word = name(word);
    OTHER_PARAMETERS.contains(&word) || SWITCHES.iter().any(|(_, off)| name(off) == word)
}

/// A mitigation the running kernel has in force, from its vulnerability
/// file, with the boot parameter that turns it off.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct InForce {
    pub vulnerability: String,
    /// The file's text ("Mitigation: Retpolines; ...").
    pub line: String,
    pub off: String,
    /// The catalogue's mitigations the line says run: the key the price
    /// list and tax name theirs by.
    pub mitigations: Vec<super::Id>,
}

/// What bugs.c prints after "Vulnerable: " (or "Mitigation: ") where
/// nothing runs after all: a mitigation waiting for microcode the CPU
/// lacks (TSA, RFDS, GDS, SRBDS and SRSO: "No microcode"), SRSO's
/// microcode on its own (it extends IBPB; nothing runs on a crossing),
/// and ITS's "Mitigation: Vulnerable, KVM: Not affected" (no thunks; only
/// guest/host isolation holds).
const RUNS_NOTHING: [&str; 3] = ["No microcode", "Microcode, no safe RET", "Vulnerable"];

/// Whether a vulnerability file's text says a mitigation runs: "Mitigation:
/// ...", or "Vulnerable: ..." with a partial mitigation after the colon
/// (SRSO's "Vulnerable: Safe RET, no microcode" runs the safe-RET
/// sequence, MDS's "Clear CPU buffers attempted, no microcode" runs
/// VERW). "Not affected", a bare "Vulnerable" and the states of
/// [`RUNS_NOTHING`] do not.
pub fn mitigated(line: &str) -> bool {
    let line = line.trim();
    let after = line
        .strip_prefix("Mitigation:")
        .or_else(|| line.strip_prefix("Vulnerable:"))
        .map(str::trim);
    after.is_some_and(|rest| {
        !rest.is_empty() && !RUNS_NOTHING.iter().any(|none| rest.starts_with(none))
    })
}

/// The mitigations in force by the vulnerability files (name -> text):
/// a file that says "Mitigation: ...", or "Vulnerable: ..." with a partial
/// mitigation after the colon (SRSO's "Vulnerable: Safe RET, no
/// microcode" runs the safe-RET sequence). "Not affected", a bare
/// "Vulnerable" and files this table does not know are left out.
pub fn in_force(vulnerabilities: &BTreeMap<String, String>) -> Vec<InForce> {
    SWITCHES
        .iter()
        .filter_map(|&(vulnerability, off)| {
            let line = vulnerabilities.get(vulnerability)?.trim();
            mitigated(line).then(|| InForce {
                vulnerability: vulnerability.to_string(),
                line: line.to_string(),
                off: off.to_string(),
                mitigations: super::of_file(vulnerability, line)
                    .iter()
                    .map(|m| m.id)
                    .collect(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::mitigations::lines_of as files;

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
    fn each_partial_state_bugs_c_prints_is_read_as_running_or_not() {
        // arch/x86/kernel/cpu/bugs.c (6.18): every "Vulnerable: " and
        // "Mitigation: Vulnerable" string, with whether a sequence runs.
        let states = [
            ("Vulnerable: Safe RET, no microcode", true),
            (
                "Vulnerable: Clear CPU buffers attempted, no microcode",
                true,
            ),
            (
                "Vulnerable: Clear CPU buffers attempted, no microcode; SMT vulnerable",
                true,
            ),
            (
                "Vulnerable: __user pointer sanitization and usercopy barriers only; no swapgs barriers",
                true,
            ),
            ("Vulnerable: LFENCE", true),
            ("Vulnerable: eIBRS with unprivileged eBPF", true),
            (
                "Vulnerable: eIBRS+LFENCE with unprivileged eBPF and SMT",
                true,
            ),
            (
                "Vulnerable: untrained return thunk / IBPB on non-AMD based uarch",
                true,
            ),
            ("Vulnerable: No microcode", false),
            ("Vulnerable: Microcode, no safe RET", false),
            ("Mitigation: Vulnerable, KVM: Not affected", false),
            ("Vulnerable", false),
            ("Vulnerable; SMT vulnerable", false),
            ("Not affected", false),
            ("Mitigation: Safe RET", true),
        ];
        for (line, runs) in states {
            assert_eq!(mitigated(line), runs, "{line}");
        }
    }

    #[test]
    fn every_switch_names_its_own_file_once() {
        let mut names: Vec<&str> = SWITCHES.iter().map(|(file, _)| *file).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), SWITCHES.len());
        for (file, off) in SWITCHES {
            let word = off.split_once('=').map_or(*off, |(name, _)| name);
            assert!(!word.is_empty() && !off.contains(' '), "{file}: {off}");
        }
    }
}
