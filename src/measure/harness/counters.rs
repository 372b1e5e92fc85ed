//! Kernel event counters around a measurement, via perf_event_open.
//!
//! Software events exist on every Linux; hardware events need a PMU, which
//! virtual machines often hide. Which of them this machine has is found out
//! by trying, once, and an absent PMU is reported with the kernel's error,
//! never filled in.

use crate::unsupported::{Kind, Unsupported};
use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Event, Hardware, Software};
use perf_event::{Builder, Counter, Group};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// Counter values for one measurement.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CounterReport {
    /// Whose events were counted.
    pub scope: String,
    /// Whether kernel-mode events were counted too (needs root, CAP_PERFMON
    /// or perf_event_paranoid <= 1).
    pub kernel_included: bool,
    /// Event count divided by the items timed while counting.
    pub per_item: BTreeMap<String, f64>,
    pub totals: BTreeMap<String, u64>,
    /// Whether the hardware events (cycles, instructions, branch and dTLB
    /// misses) could be counted.
    pub hardware: HardwareCounters,
    /// Share of the enabled time the group was on the PMU. Under 1 the
    /// kernel multiplexed it, and the counts are scaled up by its inverse:
    /// estimates, not counts.
    pub running_share: Option<f64>,
}

/// Whether this machine counts hardware events, and if not, why.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum HardwareCounters {
    Available,
    Unavailable(Unsupported),
}

/// A count read from a group that was on the PMU `running` of the
/// `enabled` nanoseconds, scaled to the whole enabled time as perf does;
/// None when it never ran (nothing was counted, which is not zero).
pub fn scaled(value: u64, enabled: u64, running: u64) -> Option<u64> {
    if running == 0 {
        return (enabled == 0 && value == 0).then_some(0);
    }
    if running >= enabled {
        return Some(value);
    }
    Some((value as u128 * enabled as u128 / running as u128).min(u64::MAX as u128) as u64)
}

pub struct CounterSet {
    group: Group,
    members: Vec<(&'static str, Counter)>,
    kernel_included: bool,
}

const SOFTWARE: [(&str, Software); 4] = [
    ("task_clock_ns", Software::TASK_CLOCK),
    ("context_switches", Software::CONTEXT_SWITCHES),
    ("page_faults", Software::PAGE_FAULTS),
    ("cpu_migrations", Software::CPU_MIGRATIONS),
];

const HARDWARE: [(&str, Hardware); 3] = [
    ("cycles", Hardware::CPU_CYCLES),
    ("instructions", Hardware::INSTRUCTIONS),
    ("branch_misses", Hardware::BRANCH_MISSES),
];

/// Whether the PMU answers: Ok, or the reason it does not. Asked once.
pub fn hardware_status() -> &'static Result<(), Unsupported> {
    static STATUS: OnceLock<Result<(), Unsupported>> = OnceLock::new();
    STATUS.get_or_init(|| {
        let attempt = |kernel: bool| builder(Hardware::CPU_CYCLES, kernel).build();
        match attempt(true).or_else(|_| attempt(false)) {
            Ok(_) => Ok(()),
            // The kernel answers ENOENT (no such event) or EOPNOTSUPP
            // where there is no PMU; anything else is a refusal or a
            // failure, kinded by its errno.
            Err(e) => Err(match e.raw_os_error() {
                Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV) => Unsupported::new(
                    Kind::NoPmu,
                    format!(
                        "perf_event_open(cycles) failed: {e}; the PMU is absent or hidden (usual in VMs)"
                    ),
                ),
                _ => Unsupported::io("perf_event_open(cycles)", &e),
            }),
        }
    })
}

fn builder<E: Event>(event: E, kernel: bool) -> Builder<'static> {
    let mut b = Builder::new(event);
    b.observe_self().any_cpu().exclude_kernel(!kernel);
    b
}

impl CounterSet {
    /// Opens the counters for the calling thread, disabled. Kernel-mode
    /// counting is tried first and dropped if the kernel refuses it.
    pub fn open() -> Result<CounterSet, Unsupported> {
        Self::open_with(true).or_else(|first| Self::open_with(false).map_err(|_| first))
    }

    fn open_with(kernel: bool) -> Result<CounterSet, Unsupported> {
        let mut leader = Group::builder();
        leader.observe_self().any_cpu().exclude_kernel(!kernel);
        let mut group = leader
            .build_group()
            .map_err(|e| Unsupported::io("perf_event_open", &e))?;
        let mut members = Vec::new();
        for (name, event) in SOFTWARE {
            let counter = group
                .add(&builder(event, kernel))
                .map_err(|e| Unsupported::io(&format!("perf_event_open({name})"), &e))?;
            members.push((name, counter));
        }
        if hardware_status().is_ok() {
            for (name, event) in HARDWARE {
                if let Ok(counter) = group.add(&builder(event, kernel)) {
                    members.push((name, counter));
                }
            }
            // The memory probes' evidence, as the seed's dTLB misses per
            // second were XPFO's.
            let dtlb = Cache {
                which: CacheId::DTLB,
                operation: CacheOp::READ,
                result: CacheResult::MISS,
            };
            if let Ok(counter) = group.add(&builder(dtlb, kernel)) {
                members.push(("dtlb_load_misses", counter));
            }
        }
        Ok(CounterSet {
            group,
            members,
            kernel_included: kernel,
        })
    }

    pub fn enable(&mut self) {
        // A failed ioctl leaves the counters stopped; read() then reports
        // zero counts, which is visible, rather than aborting a measurement.
        let _ = self.group.enable();
    }

    pub fn disable(&mut self) {
        let _ = self.group.disable();
    }

    pub fn read(&mut self, items: u64) -> Result<CounterReport, Unsupported> {
        let data = self
            .group
            .read()
            .map_err(|e| Unsupported::io("reading counters", &e))?;
        let nanos = |d: Option<std::time::Duration>| d.map_or(0, |d| d.as_nanos() as u64);
        let (enabled, running) = (nanos(data.time_enabled()), nanos(data.time_running()));
        let mut totals = BTreeMap::new();
        let mut per_item = BTreeMap::new();
        for (name, counter) in &self.members {
            let value = data.get(counter).map(|entry| entry.value()).unwrap_or(0);
            // A group that never ran counted nothing: left out, not zero.
            let Some(value) = scaled(value, enabled, running) else {
                continue;
            };
            totals.insert(name.to_string(), value);
            per_item.insert(name.to_string(), value as f64 / items.max(1) as f64);
        }
        Ok(CounterReport {
            scope: "measuring thread".into(),
            kernel_included: self.kernel_included,
            per_item,
            totals,
            running_share: (enabled > 0).then(|| running.min(enabled) as f64 / enabled as f64),
            hardware: match hardware_status() {
                Ok(()) => HardwareCounters::Available,
                Err(why) => HardwareCounters::Unavailable(why.clone()),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::scaled;

    #[test]
    fn multiplexed_counts_are_scaled_to_the_enabled_time() {
        assert_eq!(scaled(1000, 500, 500), Some(1000), "ran throughout");
        assert_eq!(
            scaled(1000, 1000, 250),
            Some(4000),
            "ran a quarter of the time"
        );
        assert_eq!(scaled(7, 300, 0), None, "never ran: unknown, not zero");
        assert_eq!(scaled(0, 0, 0), Some(0), "never enabled");
        assert_eq!(scaled(u64::MAX, 2, 1), Some(u64::MAX), "saturates");
    }
}
