//! The process controls a task (or a wrapper before exec) can set, read
//! from the /proc/self/status lines the inventory and tax keep, and the one
//! rule for each of "this control is on": the task itself set it. A state
//! the whole machine imposes ("globally mitigated") is the kernel's, and
//! stands in its vulnerability file instead.

use super::Id;
use std::collections::BTreeMap;

/// One process control.
#[derive(Debug, Clone, Copy)]
pub struct ProcessControl {
    /// How attribute names it as a switch.
    pub name: &'static str,
    /// Its /proc/<pid>/status line.
    pub status_line: &'static str,
    /// The catalogue's mitigation it is ([`super::MITIGATIONS`]).
    pub mitigation: Id,
    /// Whether the line's value says the task set it.
    on: fn(&str) -> bool,
}

impl ProcessControl {
    pub fn is_on(&self, value: &str) -> bool {
        (self.on)(value)
    }
}

pub const SECCOMP: ProcessControl = ProcessControl {
    name: "seccomp filter",
    status_line: "Seccomp_filters",
    mitigation: Id::SeccompFilters,
    on: |v| v.trim().parse::<u64>().is_ok_and(|n| n > 0),
};

pub const SSBD: ProcessControl = ProcessControl {
    name: "SSBD by prctl",
    status_line: "Speculation_Store_Bypass",
    mitigation: Id::Ssbd,
    on: |v| v.contains("thread mitigated") || v.contains("thread force mitigated"),
};

pub const INDIRECT_BRANCH: ProcessControl = ProcessControl {
    name: "indirect branch speculation off by prctl",
    status_line: "SpeculationIndirectBranch",
    mitigation: Id::Ibpb,
    on: |v| v.starts_with("conditional") && v.contains("disabled"),
};

/// Every process control, in the order they are reported.
pub const PROCESS_CONTROLS: &[ProcessControl] = &[SECCOMP, SSBD, INDIRECT_BRANCH];

/// The controls on in a task with these status lines (line -> value), each
/// with its value, in [`PROCESS_CONTROLS`]' order.
pub fn on(status: &BTreeMap<String, String>) -> Vec<(&'static ProcessControl, &str)> {
    PROCESS_CONTROLS
        .iter()
        .filter_map(|c| {
            let value = status.get(c.status_line)?;
            c.is_on(value).then_some((c, value.as_str()))
        })
        .collect()
}

/// The controls on in `status`, in a line ("none" where none is).
pub fn described(status: &BTreeMap<String, String>) -> String {
    let on: Vec<String> = on(status)
        .iter()
        .map(|(c, value)| format!("{}: {value}", c.status_line))
        .collect();
    if on.is_empty() {
        "none".to_string()
    } else {
        on.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_on(line: &str, value: &str) -> bool {
        let status = BTreeMap::from([(line.to_string(), value.to_string())]);
        !on(&status).is_empty()
    }

    #[test]
    fn a_control_is_on_only_where_the_task_itself_set_it() {
        assert!(is_on("Seccomp_filters", "2"));
        assert!(!is_on("Seccomp_filters", "0"));
        assert!(is_on("Speculation_Store_Bypass", "thread force mitigated"));
        assert!(is_on("Speculation_Store_Bypass", "thread mitigated"));
        // The boot's choice, not the task's: a vulnerability file tells it.
        assert!(!is_on("Speculation_Store_Bypass", "globally mitigated"));
        assert!(!is_on("Speculation_Store_Bypass", "vulnerable"));
        assert!(is_on(
            "SpeculationIndirectBranch",
            "conditional force disabled"
        ));
        assert!(!is_on("SpeculationIndirectBranch", "conditional enabled"));
        assert!(!is_on("SpeculationIndirectBranch", "always enabled"));
    }
}
