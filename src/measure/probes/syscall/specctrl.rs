//! Speculation controls a task may set for itself with prctl: Speculative
//! Store Bypass, indirect branch speculation, L1D flush on context switch.
//! Every control the kernel offers is read; where the task may change one
//! (PR_SPEC_PRCTL), a representative workload is measured with speculation
//! enabled and disabled: the null syscall, a store-to-load chain (what SSBD
//! serialises), and a round trip to another process on the same CPU (the
//! switch where the kernel issues IBPB or flushes L1D for a task that
//! asked). The controls are per task, so each setting is made in a thread
//! of its own that measures and exits: the process's other threads never
//! change (the round trip's partner, forked after the setting, has it too,
//! and is killed before the thread ends).

use crate::measure::harness::{Harness, Measurement};
use crate::measure::probes::failures::Failures;
use crate::measure::probes::os::pingpong::ProcessPartner;
use crate::measure::probes::os::syscall::measure_raw_getpid;
use crate::measure::probes::{
    Config, Declaration, Outcome, Placement, Probe, Role, Unsupported, measure_in_own_thread,
};
use serde::Serialize;
use serde_json::json;
use std::fmt;
use std::hint::black_box;

const PR_GET_SPECULATION_CTRL: libc::c_int = 52;
const PR_SET_SPECULATION_CTRL: libc::c_int = 53;
const PR_SPEC_PRCTL: i32 = 1 << 0;
const PR_SPEC_ENABLE: libc::c_ulong = 1 << 1;
const PR_SPEC_DISABLE: libc::c_ulong = 1 << 2;

const CONTROLS: [(&str, libc::c_ulong); 3] = [
    ("store_bypass", 0),
    ("indirect_branch", 1),
    ("l1d_flush", 2),
];

#[derive(Clone, Copy, PartialEq)]
enum Workload {
    Getpid,
    StoreLoad,
    Switch,
}

impl Workload {
    /// The controls (indices into CONTROLS) whose price this workload
    /// shows: a switch pays only for those the kernel acts on there.
    fn controls(self) -> &'static [usize] {
        match self {
            Workload::Getpid | Workload::StoreLoad => &[0, 1, 2],
            Workload::Switch => &[1, 2],
        }
    }
}

pub struct SpecCtrl {
    workload: Workload,
    declaration: Declaration,
}

const fn spec_ctrl(
    workload: Workload,
    id: &'static str,
    summary: &'static str,
    item: &'static str,
) -> SpecCtrl {
    SpecCtrl {
        workload,
        declaration: Declaration::new(id, "004", item)
            .summary(summary)
            .requires(&["a control the kernel lets tasks set (PR_SPEC_PRCTL in its state)"]),
    }
}

pub const SPECCTRL_GETPID: SpecCtrl = spec_ctrl(
    Workload::Getpid,
    "syscall/specctrl-getpid",
    "the null syscall with each task speculation control set",
    "getpid call",
);
pub const SPECCTRL_SWITCH: SpecCtrl = spec_ctrl(
    Workload::Switch,
    "syscall/specctrl-switch",
    "a round trip to another process on the same CPU with each control a switch obeys set",
    "round trip to a process on this CPU (two switches of address space)",
);
pub const SPECCTRL_STORELOAD: SpecCtrl = spec_ctrl(
    Workload::StoreLoad,
    "syscall/specctrl-storeload",
    "a store whose address comes from a load, then a load: what SSBD serialises",
    "store + dependent load",
);

/// The calling thread's state of one control: the raw prctl value, or why
/// it cannot be read.
fn read(which: libc::c_ulong) -> Result<i32, Unsupported> {
    // SAFETY: a read-only prctl.
    let state = unsafe { libc::prctl(PR_GET_SPECULATION_CTRL, which, 0, 0, 0) };
    if state < 0 {
        let error = std::io::Error::last_os_error();
        Err(Unsupported::io("PR_GET_SPECULATION_CTRL", &error))
    } else {
        Ok(state)
    }
}

/// A state in words, as Documentation/userspace-api/spec_ctrl.rst has them.
pub fn describe(state: i32) -> String {
    if state == 0 {
        return "not affected".into();
    }
    let bits = [
        (1, "prctl"),
        (2, "enable"),
        (4, "disable"),
        (8, "force-disable"),
        (16, "disable-noexec"),
    ];
    let names: Vec<&str> = bits
        .iter()
        .filter(|(b, _)| state & b != 0)
        .map(|(_, n)| *n)
        .collect();
    format!("{state:#x} ({})", names.join(", "))
}

/// Every control's state in the calling thread, for the inventory of a run.
pub fn states() -> Vec<(&'static str, String)> {
    CONTROLS
        .iter()
        .map(|&(name, which)| (name, read(which).map_or_else(|e| e.reason, describe)))
        .collect()
}

/// Which control (index into CONTROLS) to set, and whether to enable
/// speculation; None leaves every control as the thread inherited it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting(Option<(usize, bool)>);

impl Setting {
    fn value(enable: bool) -> libc::c_ulong {
        if enable {
            PR_SPEC_ENABLE
        } else {
            PR_SPEC_DISABLE
        }
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => f.write_str("unchanged"),
            Some((i, enable)) => {
                let to = if enable { "enable" } else { "disable" };
                write!(f, "{}={to}", CONTROLS[i].0)
            }
        }
    }
}

impl Serialize for Setting {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let speculation = |enable: bool| if enable { "enabled" } else { "disabled" };
        json!({
            "control": self.0.map(|(i, _)| CONTROLS[i].0),
            "speculation": self.0.map(|(_, enable)| speculation(enable)),
        })
        .serialize(s)
    }
}

impl Config for Setting {
    fn role(&self) -> Role {
        Role::baseline_if(self.0.is_none())
    }
}

described_by_field!(SpecCtrl);

impl Probe for SpecCtrl {
    type Config = Setting;

    fn configs(&self) -> Vec<Setting> {
        let set = self
            .workload
            .controls()
            .iter()
            .flat_map(|&i| [true, false].map(|e| Setting(Some((i, e)))));
        std::iter::once(Setting(None)).chain(set).collect()
    }

    fn check(&self, setting: &Setting, _placement: &Placement) -> Result<(), Unsupported> {
        let Some((i, _)) = setting.0 else {
            return Ok(());
        };
        let (name, which) = CONTROLS[i];
        let state = read(which)?;
        if state & PR_SPEC_PRCTL == 0 {
            return Err(Unsupported::missing(
                name,
                format!(
                    "{name} is not task-controllable here: state {}",
                    describe(state)
                ),
            ));
        }
        Ok(())
    }

    fn measure(&self, setting: &Setting, placement: &Placement, harness: &Harness) -> Outcome {
        let (setting, workload) = (*setting, self.workload);
        measure_in_own_thread(placement.cpu, || {
            controlled_measurement(harness, setting, workload)
        })
    }
}

/// On the thread of its own: sets the control (if any), checks it took,
/// measures, and returns; the setting ends with the thread.
fn controlled_measurement(
    harness: &Harness,
    setting: Setting,
    workload: Workload,
) -> Result<(Option<Measurement>, Vec<String>), Unsupported> {
    let mut notes = Vec::new();
    if let Some((i, enable)) = setting.0 {
        let (name, which) = CONTROLS[i];
        let before = read(which)?;
        let value = Setting::value(enable);
        // SAFETY: sets a per-task control of the calling thread only.
        if unsafe { libc::prctl(PR_SET_SPECULATION_CTRL, which, value, 0, 0) } != 0 {
            let error = std::io::Error::last_os_error();
            return Err(Unsupported::errno(
                "PR_SET_SPECULATION_CTRL",
                error.raw_os_error().unwrap_or(0),
                format!("setting {name} refused: {error}"),
            ));
        }
        let after = read(which)?;
        notes.push(format!(
            "{name}: {} -> {} in the measuring thread only",
            describe(before),
            describe(after)
        ));
    }
    let failures = Failures::new();
    let measurement = match workload {
        Workload::Getpid => measure_raw_getpid(harness, &failures),
        Workload::Switch => {
            // Started after the control is set: the child inherits it.
            let partner = ProcessPartner::start()?;
            let measurement = harness.measure_each(|| partner.round_trip());
            if let Some(reason) = partner.failure() {
                return Err(reason);
            }
            measurement
        }
        Workload::StoreLoad => {
            let slots = black_box([0usize, 3, 5, 1, 7, 2, 6, 4]);
            let mut buf = [0usize; 8];
            let mut x = 0usize;
            let mut i = 0usize;
            harness.measure_each(|| {
                i = i.wrapping_add(1);
                // The store's address comes from a load, so a later load
                // may only run ahead of it speculatively; SSBD forbids that.
                let slot = slots[i & 7];
                // SAFETY: slot and the index are below 8.
                unsafe {
                    std::ptr::write_volatile(&mut buf[slot], x);
                    x = std::ptr::read_volatile(&buf[(i + 1) & 7]).wrapping_add(1);
                }
                x
            })
        }
    };
    match failures.reason() {
        Some(reason) => Err(reason),
        None => Ok((measurement, notes)),
    }
}
