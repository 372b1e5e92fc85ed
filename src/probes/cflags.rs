//! Family `cflags` (seed 001, generalised): the same C kernels compiled with
//! each hardening flag set (see build.rs), all linked into this binary, so
//! one run compares what each set costs on this CPU.

use super::{Outcome, Placement, Probe, ProbeInfo, Variant};
use crate::harness::Harness;
use serde_json::json;
use std::hint::black_box;

/// One set's entry points: `init` prepares the kernels' state, the others
/// perform n items and return a checksum.
pub struct Kernels {
    pub init: unsafe extern "C" fn(),
    pub pipeline: unsafe extern "C" fn(u64) -> u64,
    pub interp: unsafe extern "C" fn(u64) -> u64,
    pub format: unsafe extern "C" fn(u64) -> u64,
}

pub struct FlagSet {
    pub name: &'static str,
    /// The exact compiler flags.
    pub flags: &'static str,
    pub what: &'static str,
    /// The entry points, or the compiler's reason for refusing the flags.
    pub kernels: Result<Kernels, &'static str>,
}

// COMPILER, SETS and the kernels' extern declarations, made by build.rs.
include!(concat!(env!("OUT_DIR"), "/cflags_sets.rs"));

#[derive(Clone, Copy)]
pub enum Kernel {
    Pipeline,
    Interp,
    Format,
}

pub struct CflagsProbe(pub Kernel);

/// Whether a set is a layout control: `plain` at another alignment.
fn is_layout_control(name: &str) -> bool {
    name.starts_with("plain/align-")
}

/// The C compiler build.rs built the kernels with.
pub fn compiler() -> &'static str {
    COMPILER
}

pub fn probes() -> Vec<&'static dyn Probe> {
    vec![
        &CflagsProbe(Kernel::Pipeline),
        &CflagsProbe(Kernel::Interp),
        &CflagsProbe(Kernel::Format),
    ]
}

impl CflagsProbe {
    fn entry(&self, kernels: &Kernels) -> unsafe extern "C" fn(u64) -> u64 {
        match self.0 {
            Kernel::Pipeline => kernels.pipeline,
            Kernel::Interp => kernels.interp,
            Kernel::Format => kernels.format,
        }
    }

    fn set(variant: &Variant) -> Option<&'static FlagSet> {
        SETS.iter().find(|s| s.name == variant.name)
    }
}

impl Probe for CflagsProbe {
    fn info(&self) -> ProbeInfo {
        let (id, summary, item) = match self.0 {
            Kernel::Pipeline => (
                "cflags/pipeline",
                "parse, lookup, rewrite, transmit through function pointers, one packet at a time (C)",
                "packet (4 indirect calls)",
            ),
            Kernel::Interp => (
                "cflags/interp",
                "a bytecode interpreter dispatching through a handler table (C)",
                "instruction (1 indirect call + return)",
            ),
            Kernel::Format => (
                "cflags/format",
                "records formatted into local buffers with memcpy and strcpy (C)",
                "formatted record",
            ),
        };
        ProbeInfo {
            id,
            family: "cflags",
            seed: "001",
            summary,
            item,
            requirements: vec!["the compiler accepting the set's flags at build time"],
            variants: SETS
                .iter()
                .map(|set| Variant {
                    name: set.name,
                    baseline: set.name == "plain",
                    params: json!({
                        "flags": set.flags,
                        "what": set.what,
                        "compiler": COMPILER,
                        "layout_control": is_layout_control(set.name),
                    }),
                })
                .collect(),
            derived: None,
        }
    }

    fn check(&self, variant: &Variant, _placement: &Placement) -> Result<(), String> {
        match Self::set(variant).map(|s| &s.kernels) {
            Some(Ok(_)) => Ok(()),
            Some(Err(reason)) => Err(format!("{COMPILER} refused these flags: {reason}")),
            None => Err(format!("no flag set {}", variant.name)),
        }
    }

    fn measure(&self, variant: &Variant, placement: &Placement, harness: &Harness) -> Outcome {
        let Some(FlagSet {
            kernels: Ok(kernels),
            ..
        }) = Self::set(variant)
        else {
            return Outcome::Unsupported(self.check(variant, placement).err().unwrap_or_default());
        };
        let run = self.entry(kernels);
        // SAFETY: the kernels touch only their own static state, which init
        // sets up; any item count is valid.
        unsafe { (kernels.init)() };
        let measurement = harness.measure(|n| {
            black_box(unsafe { run(n) });
        });
        Outcome::on_cpus(measurement, vec![placement.cpu])
    }
}
