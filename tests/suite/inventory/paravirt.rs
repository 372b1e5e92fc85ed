//! A KVM guest's paravirtual features on trees made from the kernel's own
//! lines (arch/x86/kernel/kvm.c's `kvm-guest:` messages, the cpuidle
//! driver's name): what the kernel set up, and why not where it did not.
//! A tree that is no guest has no such section.

use crate::common;
use mitbench::inventory::Inventory;

/// (tree, [(feature, in use, a word its reason must hold)]).
type Expected = (&'static str, &'static [(&'static str, bool, &'static str)]);

const TREES: &[Expected] = &[
    (
        "kvm-every-feature",
        &[
            ("PV EOI", true, ""),
            ("PV unhalt", true, ""),
            ("PV TLB flush", true, ""),
            ("PV send-IPI", true, ""),
            ("poll control", true, ""),
            ("PV sched yield", true, ""),
        ],
    ),
    (
        "kvm-dedicated-cpus",
        &[
            ("PV EOI", true, ""),
            ("PV unhalt", false, "KVM_HINTS_REALTIME"),
            ("PV TLB flush", false, "a CPU of its own"),
            ("PV send-IPI", true, ""),
            ("PV sched yield", false, "a CPU of its own"),
        ],
    ),
    (
        "kvm-old-host",
        &[
            ("PV EOI", false, "eoi() replaced"),
            ("PV unhalt", false, "no host support"),
            ("PV TLB flush", false, "pv remote TLB flush"),
            ("poll control", false, "acpi_idle"),
        ],
    ),
    (
        "kvm-one-vcpu",
        &[
            ("PV unhalt", false, "single CPU"),
            ("PV TLB flush", false, "one vCPU"),
            ("PV send-IPI", false, "one vCPU"),
            ("poll control", false, "none"),
        ],
    ),
];

#[test]
fn each_paravirtual_feature_is_in_use_or_says_why_not() {
    for (tree, expected) in TREES {
        let p = Inventory::collect(&common::fixture_path("guests").join(tree)).paravirt;
        assert_eq!(p.source, "kernel log", "{tree}");
        assert_eq!(p.features.len(), 7, "{tree}: every feature listed");
        for &(name, in_use, reason) in *expected {
            let f = p
                .features
                .iter()
                .find(|f| f.name == name)
                .unwrap_or_else(|| panic!("{tree}: no {name}"));
            assert_eq!(f.offered, None, "{tree} {name}: no CPUID in a tree");
            assert_eq!(f.in_use, Some(in_use), "{tree} {name}: {f:?}");
            let why = f.why_not.as_deref().unwrap_or("");
            assert_eq!(why.is_empty(), in_use, "{tree} {name}: {f:?}");
            assert!(why.contains(reason), "{tree} {name}: {why}");
        }
    }
    let dedicated = Inventory::collect(&common::fixture_path("guests/kvm-dedicated-cpus"));
    assert_eq!(dedicated.paravirt.dedicated_cpus, Some(true));
}

#[test]
fn a_machine_that_is_no_kvm_guest_has_no_paravirtual_section() {
    let bare = Inventory::collect(&common::fixture_path("cpus/amd-zen3"));
    assert!(bare.paravirt.is_empty());
    let json = serde_json::to_value(&bare).unwrap();
    assert!(json.get("paravirt").is_none(), "absent from the JSON");
    let listing = mitbench::export::inventory::render(&bare);
    assert!(!listing.contains("paravirt"));
    let guest = Inventory::collect(&common::fixture_path("guests/kvm-old-host"));
    let listing = mitbench::export::inventory::render(&guest);
    assert!(listing.contains("paravirt (KVM)"), "{listing}");
    assert!(
        listing.contains("PV unhalt") && listing.contains("no host support"),
        "{listing}"
    );
}
