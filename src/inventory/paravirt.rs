//! The hypervisor's side of a guest: the paravirtual features a KVM host
//! offers to take exits off a guest's hot paths, and what this guest's
//! kernel made of each. The host offers them in CPUID leaf 0x40000001
//! (EAX: features, EDX: hints), read where mitbench runs live under a KVM
//! host; the kernel says what it set up in its log, in the words of
//! arch/x86/kernel/kvm.c (`kvm-guest: setup PV IPIs`), which a stored tree
//! keeps in var/log/dmesg; the idle driver is in sysfs.

use super::root::Root;
use serde::{Deserialize, Serialize};

/// The KVM interface's signature in CPUID leaf 0x40000000.
const KVM_SIGNATURE: &str = "KVMKVMKVM";

/// What the host offers and the guest kernel uses, a feature a line; empty
/// where the machine is no KVM guest (or a run stored before it was read).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Paravirt {
    /// Where the offers were read: "cpuid 0x40000001", or "kernel log"
    /// where only the kernel's lines were (a stored tree).
    pub source: String,
    /// The host's hint that each vCPU has a physical CPU of its own
    /// (KVM_HINTS_REALTIME), from CPUID or the kernel's spinlock line;
    /// None where neither says.
    pub dedicated_cpus: Option<bool>,
    pub features: Vec<Feature>,
    /// The cpuidle driver: `haltpoll` polls in the guest before it halts.
    pub idle_driver: String,
}

impl Paravirt {
    pub fn is_empty(&self) -> bool {
        self.features.is_empty()
    }
}

/// One paravirtual feature.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Feature {
    pub name: String,
    /// The exits it takes away where it is in use.
    pub spares: String,
    /// Whether the host offers it (its CPUID bit); None where not read.
    pub offered: Option<bool>,
    /// Whether the guest kernel uses it; None where nothing says.
    pub in_use: Option<bool>,
    /// Why not, where it is not in use (or not known to be).
    pub why_not: Option<String>,
}

/// A feature as the kernel knows it: its CPUID bit, the exits it spares,
/// and how the kernel says it took it up.
struct Known {
    name: &'static str,
    bit: u32,
    spares: &'static str,
    taken_up: TakenUp,
}

/// How the guest kernel's use of a feature shows.
#[derive(Clone, Copy)]
enum TakenUp {
    /// A `kvm-guest:` line of the kernel log, printed where it set it up.
    Logged(&'static str),
    /// The kernel's PV spinlock lines: `PV spinlocks enabled`, or
    /// `PV spinlocks disabled, <why>`.
    Spinlocks,
    /// Used wherever offered (steal time: registered on every vCPU).
    WhereOffered,
    /// The cpuidle driver is `haltpoll`.
    IdleDriver,
}

const FEATURES: &[Known] = &[
    Known {
        name: "steal time",
        bit: 5,
        spares: "none itself: the guest reads the time its vCPUs were preempted, which PV TLB flush and PV sched yield need",
        taken_up: TakenUp::WhereOffered,
    },
    Known {
        name: "PV EOI",
        bit: 6,
        spares: "the exit of an interrupt's end-of-interrupt write",
        taken_up: TakenUp::Logged("APIC: eoi() replaced with kvm_guest_apic_eoi_write()"),
    },
    Known {
        name: "PV unhalt",
        bit: 7,
        spares: "spinning on a lock whose holder's vCPU was preempted (PV spinlocks): the waiter halts and is kicked",
        taken_up: TakenUp::Spinlocks,
    },
    Known {
        name: "PV TLB flush",
        bit: 9,
        spares: "the flush IPIs (an exit each side) to preempted vCPUs: the host flushes when it runs them",
        taken_up: TakenUp::Logged("KVM setup pv remote TLB flush"),
    },
    Known {
        name: "PV send-IPI",
        bit: 11,
        spares: "an exit per destination: one hypercall sends an IPI to many vCPUs",
        taken_up: TakenUp::Logged("setup PV IPIs"),
    },
    Known {
        name: "poll control",
        bit: 12,
        spares: "the halt exits of short idles: the guest polls before it halts",
        taken_up: TakenUp::IdleDriver,
    },
    Known {
        name: "PV sched yield",
        bit: 13,
        spares: "waiting on a preempted vCPU for a function-call IPI: the sender yields to it",
        taken_up: TakenUp::Logged("setup PV sched yield"),
    },
];

/// The offers CPUID makes, where read: the feature bits (EAX) and hints
/// (EDX) of leaf 0x40000001.
#[derive(Debug, Clone, Copy)]
pub struct Offers {
    pub features: u32,
    pub hints: u32,
}

impl Offers {
    fn has(&self, bit: u32) -> bool {
        self.features & (1 << bit) != 0
    }

    fn dedicated_cpus(&self) -> bool {
        self.hints & 1 != 0
    }
}

/// The KVM host's offers from CPUID, where this process runs under one.
pub fn read_offers() -> Option<Offers> {
    let (signature, highest) = crate::sys::hypervisor_leaf()?;
    if !signature.starts_with(KVM_SIGNATURE.as_bytes()) || highest < 0x4000_0001 {
        return None;
    }
    let leaf = std::arch::x86_64::__cpuid(0x4000_0001);
    Some(Offers {
        features: leaf.eax,
        hints: leaf.edx,
    })
}

/// The guest's side: from `offers` (CPUID, live) and the kernel's lines in
/// `kernel_log`; empty where neither says this is a KVM guest.
pub fn collect(root: &Root, kernel_log: Option<&str>, cpus_online: &str) -> Paravirt {
    let offers = root.is_live().then(read_offers).flatten();
    let guest_lines: Vec<&str> = kernel_log
        .map(|log| {
            log.lines()
                .filter_map(|l| l.split_once("kvm-guest: ").map(|(_, rest)| rest.trim()))
                .collect()
        })
        .unwrap_or_default();
    if offers.is_none() && guest_lines.is_empty() {
        return Paravirt::default();
    }
    let idle_driver = root
        .read_trimmed("sys/devices/system/cpu/cpuidle/current_driver")
        .unwrap_or_else(|| super::UNKNOWN.to_string());
    // Where CPUID was not read, the kernel's spinlock line still names
    // the hint when it is the reason PV spinlocks are off.
    let dedicated_cpus = offers.map(|o| o.dedicated_cpus()).or_else(|| {
        guest_lines
            .iter()
            .any(|l| l.contains("KVM_HINTS_REALTIME"))
            .then_some(true)
    });
    // A log without the boot's first lines (unreadable, or a ring buffer
    // that has wrapped) cannot say what the kernel set up at boot.
    let boot_logged = kernel_log.is_some_and(|log| log.contains("Hypervisor detected:"));
    let facts = Facts {
        offers,
        dedicated_cpus,
        boot_logged,
        lines: &guest_lines,
        idle_driver: &idle_driver,
        one_cpu: cpus_online.trim() == "0",
    };
    Paravirt {
        source: match offers {
            Some(_) => "cpuid 0x40000001".to_string(),
            None => "kernel log".to_string(),
        },
        dedicated_cpus,
        features: FEATURES.iter().map(|k| facts.feature(k)).collect(),
        idle_driver,
    }
}

/// What is known of the guest, to judge each feature by.
struct Facts<'a> {
    offers: Option<Offers>,
    dedicated_cpus: Option<bool>,
    boot_logged: bool,
    lines: &'a [&'a str],
    idle_driver: &'a str,
    one_cpu: bool,
}

impl Facts<'_> {
    fn feature(&self, known: &Known) -> Feature {
        let offered = self.offers.map(|o| o.has(known.bit));
        let (in_use, why_not) = match offered {
            Some(false) => (Some(false), Some("the host does not offer it".to_string())),
            _ => self.taken_up(known),
        };
        Feature {
            name: known.name.to_string(),
            spares: known.spares.to_string(),
            offered,
            in_use,
            why_not,
        }
    }

    /// Whether the kernel took an offered (or unread) feature up, and
    /// why not where it did not: the kernel's own conditions
    /// (`pv_tlb_flush_supported` and its kin in arch/x86/kernel/kvm.c).
    fn taken_up(&self, known: &Known) -> (Option<bool>, Option<String>) {
        match known.taken_up {
            TakenUp::WhereOffered => (self.offers.map(|_| true), None),
            TakenUp::IdleDriver if self.idle_driver == super::UNKNOWN => (
                None,
                Some("the cpuidle driver could not be read".to_string()),
            ),
            TakenUp::Logged(_) | TakenUp::Spinlocks if !self.boot_logged => (
                None,
                Some("the kernel log does not hold the boot's lines".to_string()),
            ),
            TakenUp::IdleDriver => {
                let polls = self.idle_driver == "haltpoll";
                let why = format!(
                    "the cpuidle driver is {} (haltpoll is the guest's, cpuidle-haltpoll)",
                    self.idle_driver
                );
                (Some(polls), (!polls).then_some(why))
            }
            TakenUp::Logged(line) => match self.lines.contains(&line) {
                true => (Some(true), None),
                false => (Some(false), Some(self.not_set_up(known, line))),
            },
            TakenUp::Spinlocks => {
                let said = self
                    .lines
                    .iter()
                    .find_map(|l| l.strip_prefix("PV spinlocks "));
                match said {
                    Some("enabled") => (Some(true), None),
                    Some(other) => (
                        Some(false),
                        Some(format!("the kernel: PV spinlocks {other}")),
                    ),
                    None => (None, Some("the kernel log does not say".to_string())),
                }
            }
        }
    }

    /// Why the kernel did not print `line`, as far as its conditions can
    /// be read here.
    fn not_set_up(&self, known: &Known, line: &str) -> String {
        let needs_a_preempted_vcpu = matches!(known.bit, 9 | 13);
        if self.one_cpu {
            return "one vCPU: no other to send to".to_string();
        }
        if needs_a_preempted_vcpu && self.dedicated_cpus == Some(true) {
            return "the host hints each vCPU has a CPU of its own (KVM_HINTS_REALTIME)"
                .to_string();
        }
        if needs_a_preempted_vcpu && self.offers.is_some_and(|o| !o.has(5)) {
            return "the host offers no steal time, which it needs".to_string();
        }
        format!("the kernel log has no `kvm-guest: {line}` line")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every feature offered, the boot's lines gone from the log (a ring
    /// buffer that wrapped, a log that could not be read): nothing is said
    /// to be off for want of a line the log no longer holds.
    #[test]
    fn a_log_without_the_boots_lines_says_so_rather_than_not_in_use() {
        let facts = Facts {
            offers: Some(Offers {
                features: u32::MAX,
                hints: 0,
            }),
            dedicated_cpus: Some(false),
            boot_logged: false,
            lines: &[],
            idle_driver: "haltpoll",
            one_cpu: false,
        };
        for known in FEATURES {
            let f = facts.feature(known);
            assert_eq!(f.offered, Some(true), "{}", f.name);
            match known.taken_up {
                TakenUp::Logged(_) | TakenUp::Spinlocks => {
                    assert_eq!(f.in_use, None, "{}", f.name);
                    assert!(f.why_not.unwrap().contains("boot's lines"));
                }
                TakenUp::WhereOffered | TakenUp::IdleDriver => {
                    assert_eq!(f.in_use, Some(true), "{}", f.name)
                }
            }
        }
    }
}
