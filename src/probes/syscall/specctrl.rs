//! Speculation controls a task may set for itself with prctl: Speculative
//! Store Bypass, indirect branch speculation, L1D flush on context switch.
//! Every control the kernel offers is read; where the task may change one
//! (PR_SPEC_PRCTL), a representative workload is measured with speculation
//! enabled and disabled. The controls are per task, so each setting is made
//! in a thread of its own that measures and exits: the process's other
//! threads never change.

use crate::harness::{Harness, Measurement};
use crate::probes::failures::Failures;
use crate::probes::{Outcome, Placement, Probe, ProbeInfo, Variant, measure_in_own_thread};
use crate::sys;
use serde_json::json;
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
pub enum Workload {
    Getpid,
    StoreLoad,
}

pub struct SpecCtrl(pub Workload);

/// The calling thread's state of one control: the raw prctl value, or why
/// it cannot be read.
fn read(which: libc::c_ulong) -> Result<i32, String> {
    // SAFETY: a read-only prctl.
    let state = unsafe { libc::prctl(PR_GET_SPECULATION_CTRL, which, 0, 0, 0) };
    if state < 0 {
        Err(format!(
            "PR_GET_SPECULATION_CTRL failed: {}",
            std::io::Error::last_os_error()
        ))
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
        .map(|&(name, which)| (name, read(which).map_or_else(|e| e, describe)))
        .collect()
}

/// Which control (index into CONTROLS) to set, and to what; None leaves
/// every control as the thread inherited it.
type Setting = Option<(usize, libc::c_ulong)>;

fn variants() -> &'static [(String, Setting)] {
    static ALL: std::sync::OnceLock<Vec<(String, Setting)>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let mut all = vec![("unchanged".to_string(), None)];
        for (i, (name, _)) in CONTROLS.iter().enumerate() {
            all.push((format!("{name}=enable"), Some((i, PR_SPEC_ENABLE))));
            all.push((format!("{name}=disable"), Some((i, PR_SPEC_DISABLE))));
        }
        all
    })
}

impl Probe for SpecCtrl {
    fn info(&self) -> ProbeInfo {
        let (id, summary, item) = match self.0 {
            Workload::Getpid => (
                "syscall/specctrl-getpid",
                "the null syscall with each task speculation control set",
                "getpid call",
            ),
            Workload::StoreLoad => (
                "syscall/specctrl-storeload",
                "a store whose address comes from a load, then a load: what SSBD serialises",
                "store + dependent load",
            ),
        };
        ProbeInfo {
            id,
            family: "syscall",
            seed: "004",
            summary,
            item,
            requirements: vec!["a control the kernel lets tasks set (PR_SPEC_PRCTL in its state)"],
            variants: variants()
                .iter()
                .map(|(name, setting)| Variant {
                    name: name.as_str(),
                    baseline: setting.is_none(),
                    params: json!({
                        "control": setting.map(|(i, _)| CONTROLS[i].0),
                        "speculation": setting.map(|(_, v)| if v == PR_SPEC_ENABLE { "enabled" } else { "disabled" }),
                    }),
                })
                .collect(),
            derived: None,
        }
    }

    fn check(&self, variant: &Variant, _placement: &Placement) -> Result<(), String> {
        let Some((_, Some((i, _)))) = variants().iter().find(|v| v.0 == variant.name) else {
            return Ok(());
        };
        let (name, which) = CONTROLS[*i];
        let state = read(which).map_err(|e| format!("{name}: {e}"))?;
        if state & PR_SPEC_PRCTL == 0 {
            return Err(format!(
                "{name} is not task-controllable here: state {}",
                describe(state)
            ));
        }
        Ok(())
    }

    fn measure(&self, variant: &Variant, placement: &Placement, harness: &Harness) -> Outcome {
        let setting = variants()
            .iter()
            .find(|v| v.0 == variant.name)
            .and_then(|v| v.1);
        let workload = self.0;
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
) -> Result<(Option<Measurement>, Vec<String>), String> {
    let mut notes = Vec::new();
    if let Some((i, value)) = setting {
        let (name, which) = CONTROLS[i];
        let before = read(which)?;
        // SAFETY: sets a per-task control of the calling thread only.
        if unsafe { libc::prctl(PR_SET_SPECULATION_CTRL, which, value, 0, 0) } != 0 {
            return Err(format!(
                "setting {name} refused: {}",
                std::io::Error::last_os_error()
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
        Workload::Getpid => harness.measure_each(|| {
            let pid = sys::syscall0(libc::SYS_getpid);
            failures.check_raw("getpid", pid);
            pid
        }),
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
