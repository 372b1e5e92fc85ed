//! What the machine is: the facts a reader needs to trust, compare and
//! explain a measurement. Everything is read relative to a root directory so
//! tests run the same code on fixture trees; what cannot be read is
//! "unknown", never a panic.

pub mod audit;
pub mod bpf;
mod cpu;
mod facilities;
pub mod hooks;
pub mod identity;
mod kernel;
pub mod paravirt;
mod root;
pub(crate) mod tracefs;

pub use cpu::{Cpu, RELEVANT_FLAGS};
pub use facilities::Facilities;
pub use kernel::{Kernel, Preemption, mitigation_words, parse_config};
pub use root::{Root, UNKNOWN};

use crate::measure::harness::tsc::{self, TscFrequency};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Inventory {
    pub root: String,
    /// Whether this describes the running system (live checks included).
    pub live: bool,
    /// TSC frequency used to turn ticks into ns; null when unknown.
    pub tsc_mhz: Option<f64>,
    pub tsc_mhz_source: String,
    /// Our own calibration against CLOCK_MONOTONIC_RAW (live only).
    pub tsc_calibrated_mhz: Option<f64>,
    /// Why ns figures may be unreliable here (see `tsc::clock_warnings`);
    /// empty when the clock checks out.
    pub clock_warnings: Vec<String>,
    pub identity: identity::Identity,
    pub cpu: Cpu,
    pub kernel: Kernel,
    pub facilities: Facilities,
    /// The hooks on the syscall path and the kernel's text (trace events,
    /// tracer, dynamic events, livepatches); runs before them read none.
    #[serde(default)]
    pub hooks: hooks::Hooks,
    /// A KVM guest's paravirtual features: offered by the host, used by
    /// the kernel; absent on other machines and in runs before it.
    #[serde(default, skip_serializing_if = "paravirt::Paravirt::is_empty")]
    pub paravirt: paravirt::Paravirt,
}

impl Inventory {
    pub fn collect(root_dir: &Path) -> Inventory {
        let root = Root::new(root_dir);
        let log = kernel::kernel_log(&root);
        let log = log.as_deref();
        let cpu = cpu::collect(&root, log);
        let kernel = kernel::collect(&root, log);
        let facilities = facilities::collect(&root, &kernel, log);
        let calibrated = if root.is_live() && tsc::rdtscp_available() {
            tsc::calibrate_mhz(Duration::from_millis(20), 3)
        } else {
            None
        };
        let frequency =
            TscFrequency::choose(log.and_then(tsc::frequency_from_kernel_log), calibrated);
        let clock_warnings = tsc::clock_warnings(
            frequency.as_ref(),
            |flag| cpu.flags.get(flag).copied(),
            &kernel.clocksource,
        );
        Inventory {
            identity: identity::collect(&root),
            clock_warnings,
            root: root.display(),
            live: root.is_live(),
            tsc_mhz: frequency.as_ref().map(|f| f.mhz),
            tsc_mhz_source: frequency
                .as_ref()
                .map_or_else(|| UNKNOWN.to_string(), |f| f.source.clone()),
            tsc_calibrated_mhz: frequency.and_then(|f| f.calibrated_mhz),
            hooks: hooks::collect(&root),
            paravirt: paravirt::collect(&root, log, &cpu.online),
            cpu,
            kernel,
            facilities,
        }
    }

    pub fn tsc(&self) -> Option<TscFrequency> {
        Some(TscFrequency {
            mhz: self.tsc_mhz?,
            source: self.tsc_mhz_source.clone(),
            calibrated_mhz: self.tsc_calibrated_mhz,
        })
    }
}
