//! Family `cflags` (seed 001, generalised): the same C kernels compiled with
//! each hardening flag set (see build.rs), all linked into this binary, so
//! one run compares what each set costs on this CPU.

use super::{AnyProbe, Config, Declaration, Outcome, Placement, Probe, Role, Unsupported};
use crate::measure::harness::Harness;
use serde::Serialize;
use serde_json::json;
use std::fmt;
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
enum Kernel {
    Pipeline,
    Interp,
    Format,
}

pub struct CflagsProbe {
    kernel: Kernel,
    declaration: Declaration,
}

const fn cflags(
    kernel: Kernel,
    id: &'static str,
    summary: &'static str,
    item: &'static str,
) -> CflagsProbe {
    CflagsProbe {
        kernel,
        declaration: Declaration::new(id, "001", item)
            .summary(summary)
            .requires(&["the compiler accepting the set's flags at build time"]),
    }
}

const PROBES: [CflagsProbe; 3] = [
    cflags(
        Kernel::Pipeline,
        "cflags/pipeline",
        "parse, lookup, rewrite, transmit through function pointers, one packet at a time (C)",
        "packet (4 indirect calls)",
    ),
    cflags(
        Kernel::Interp,
        "cflags/interp",
        "a bytecode interpreter dispatching through a handler table (C)",
        "instruction (1 indirect call + return)",
    ),
    cflags(
        Kernel::Format,
        "cflags/format",
        "records formatted into local buffers with memcpy and strcpy (C)",
        "formatted record",
    ),
];

/// One flag set as a variant: the kernels built with it.
#[derive(Clone, Copy)]
pub struct Flags(&'static FlagSet);

impl PartialEq for Flags {
    fn eq(&self, other: &Flags) -> bool {
        self.0.name == other.0.name
    }
}

impl fmt::Display for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

impl Serialize for Flags {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        json!({
            "flags": self.0.flags,
            "what": self.0.what,
            "compiler": COMPILER,
        })
        .serialize(s)
    }
}

impl Config for Flags {
    /// `plain` is the baseline; `plain/align-*`, the same code placed at
    /// other alignments, are its layout controls.
    fn role(&self) -> Role {
        match self.0.name {
            "plain" => Role::Baseline,
            name if name.starts_with("plain/align-") => Role::LayoutControl,
            _ => Role::Compared,
        }
    }
}

/// The C compiler build.rs built the kernels with.
pub fn compiler() -> &'static str {
    COMPILER
}

pub fn probes() -> Vec<&'static dyn AnyProbe> {
    PROBES.iter().map(|p| p as &dyn AnyProbe).collect()
}

impl CflagsProbe {
    fn entry(&self, kernels: &Kernels) -> unsafe extern "C" fn(u64) -> u64 {
        match self.kernel {
            Kernel::Pipeline => kernels.pipeline,
            Kernel::Interp => kernels.interp,
            Kernel::Format => kernels.format,
        }
    }
}

described_by_field!(CflagsProbe);

impl Probe for CflagsProbe {
    type Config = Flags;

    fn configs(&self) -> Vec<Flags> {
        SETS.iter().map(Flags).collect()
    }

    fn check(&self, flags: &Flags, _placement: &Placement) -> Result<(), Unsupported> {
        match &flags.0.kernels {
            Ok(_) => Ok(()),
            Err(reason) => Err(Unsupported::missing(
                flags.0.flags,
                format!("{COMPILER} refused these flags: {reason}"),
            )),
        }
    }

    fn measure(&self, flags: &Flags, placement: &Placement, harness: &Harness) -> Outcome {
        let kernels = match &flags.0.kernels {
            Ok(kernels) => kernels,
            Err(_) => {
                return Outcome::Unsupported(Probe::check(self, flags, placement).unwrap_err());
            }
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
