//! `mitbench plan` on fixture trees of /proc and /sys: an Intel CPU with
//! PTI, IBRS and MDS clearing; an AMD Zen 2 with retbleed's untrained
//! return thunk and SRSO's safe RET; the AMD EPYC guest mitbench is built
//! on; a boot with mitigations=off.

use crate::common;
use common::mitbench;
use mitbench::inventory::Inventory;
use mitbench::mitigations::kernel::SWITCHES;
use mitbench::plan::plan;
use std::path::Path;

fn fixture(name: &str) -> Inventory {
    Inventory::collect(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
}

/// The parameter each boot adds, in order.
fn adds(name: &str) -> Vec<String> {
    plan(&fixture(name), 5)
        .boots
        .iter()
        .filter_map(|b| b.adds.clone())
        .collect()
}

#[test]
fn an_intel_cpu_with_pti_and_mds_clearing_gets_a_boot_without_each() {
    let p = plan(&fixture("intel-pti-ibrs"), 5);
    let adds = adds("intel-pti-ibrs");
    for word in [
        "mitigations=off",
        "pti=off",
        "mds=off",
        "spectre_v2=off",
        "l1tf=off",
    ] {
        assert!(
            adds.contains(&word.to_string()),
            "{word} missing from {adds:?}"
        );
    }
    assert_eq!(p.boots[0].name, "present");
    // The present spectre_v2=ibrs gives way to spectre_v2=off; the boot
    // loader's BOOT_IMAGE is left to the boot loader.
    let v2 = p
        .boots
        .iter()
        .find(|b| b.adds.as_deref() == Some("spectre_v2=off"))
        .unwrap();
    assert_eq!(
        v2.cmdline,
        "root=/dev/mapper/vg-root ro spectre_v2=off quiet splash"
    );
    for boot in &p.boots {
        assert!(!boot.cmdline.contains("BOOT_IMAGE"), "{}", boot.cmdline);
        // Only the boot's own word differs from the present line.
        let present: Vec<&str> = p.boots[0].cmdline.split_whitespace().collect();
        let differ = boot
            .cmdline
            .split_whitespace()
            .filter(|w| !present.contains(w))
            .count();
        assert!(differ <= 1, "{}", boot.cmdline);
    }
    assert!(p.run.contains("--runs 5") && p.run.contains("--probe os"));
}

#[test]
fn an_amd_zen_2_gets_boots_without_its_return_thunk_and_safe_ret() {
    let adds = adds("amd-zen2-retbleed");
    assert_eq!(
        adds,
        [
            "mitigations=off",
            "nospectre_v1",
            "spectre_v2=off",
            "spec_store_bypass_disable=off",
            "retbleed=off",
            "spec_rstack_overflow=off"
        ]
    );
}

#[test]
fn this_guest_gets_a_boot_without_srsos_safe_ret() {
    let p = plan(&fixture("amd-epyc-guest"), 3);
    let adds: Vec<&str> = p.boots.iter().filter_map(|b| b.adds.as_deref()).collect();
    assert_eq!(
        adds,
        [
            "mitigations=off",
            "nospectre_v1",
            "spectre_v2=off",
            "spec_rstack_overflow=off"
        ]
    );
    // mitigations=auto,... is replaced, and words after `--` (the init's)
    // stay after it.
    let off = &p.boots[1].cmdline;
    assert!(off.starts_with("mitigations=off "), "{off}");
    let srso = p.boots.last().unwrap();
    let kernel_part = srso.cmdline.split(" -- ").next().unwrap();
    assert!(
        kernel_part.ends_with("spec_rstack_overflow=off"),
        "{}",
        srso.cmdline
    );
}

/// The return toll belongs to SRSO's safe return (present under it on
/// Zen 3 and 4, absent on a Zen 2 that returns through retbleed's
/// untrained thunk): the boots that would show it go are mitigations=off
/// and SRSO's own, never one that leaves returns alone (PTI, MDS,
/// retbleed's); where the kernel runs no safe return, none is expected.
#[test]
fn the_return_toll_is_settled_by_the_boots_without_srsos_safe_return() {
    let toll = |fixture_name: &str| plan(&fixture(fixture_name), 5).return_toll;
    let zen2 = toll("amd-zen2-retbleed");
    assert!(zen2.cause_in_force, "its SRSO line says Safe RET");
    assert_eq!(
        zen2.boots,
        ["mitigations=off", "without spec_rstack_overflow"]
    );
    let intel = toll("intel-pti-ibrs");
    assert!(!intel.cause_in_force);
    assert_eq!(intel.boots, ["mitigations=off"]);
    assert!(toll("mitigations-off").boots.is_empty());
    let guest = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/cpus/amd-zen2-guest"
    );
    assert!(!toll(guest).cause_in_force, "SRSO mitigated by SMT off");
    // The text says what it belongs to and which boots would tell.
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/amd-epyc-guest");
    let said = |root: &str| -> String {
        let text = String::from_utf8(mitbench(&["plan", "--root", root]).stdout).unwrap();
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let text = said(root);
    assert!(text.contains("return toll:"), "{text}");
    assert!(text.contains("it belongs to SRSO's safe return"), "{text}");
    assert!(
        text.contains("without spec_rstack_overflow would"),
        "{text}"
    );
    assert!(said(guest).contains("no toll is expected here"));
}

#[test]
fn a_boot_with_mitigations_off_says_what_to_compare_it_with() {
    let p = plan(&fixture("mitigations-off"), 5);
    assert_eq!(p.boots.len(), 1);
    assert!(p.note.as_deref().unwrap().contains("mitigations=off"));
}

#[test]
fn the_command_prints_each_boot_whole_and_refuses_a_missing_root() {
    let root = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/amd-zen2-retbleed"
    );
    let out = mitbench(&["plan", "--root", root]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("root=UUID=3f1c2a5e-0d7b-4e51-9a8e-1b2c3d4e5f60 ro quiet retbleed=off"),
        "{text}"
    );
    assert!(text.contains("never reboots"), "{text}");
    let json = mitbench(&["plan", "--root", root, "--json", "--runs", "3"]);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["boots"].as_array().unwrap().len(), 7);
    assert!(value["run"].as_str().unwrap().contains("--runs 3"));
    let missing = mitbench(&["plan", "--root", "/nonexistent/root"]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn the_boots_the_history_holds_a_set_of_are_marked_measured_and_the_rest_to_do() {
    use mitbench::store::history::StoredSet;
    let mut p = plan(&fixture("amd-epyc-guest"), 3);
    let set = |first: i64, cmdline: &str, filtered: bool| StoredSet {
        set: first,
        ids: vec![first, first + 1, first + 2],
        cmdline: cmdline.to_string(),
        controls: if filtered {
            common::one_seccomp_filter()
        } else {
            Default::default()
        },
        started_at: "2026-11-25T10:00:00+00:00".to_string(),
    };
    let present = p.boots[0].cmdline.clone();
    let off = p.boots[1].cmdline.clone();
    p.mark_measured(&[
        // A wrapper's set of the present boot, and its own plain set.
        set(1, &present, true),
        set(4, &present, false),
        // The boot loader's BOOT_IMAGE= is not part of the boot.
        set(7, &format!("BOOT_IMAGE=/boot/vmlinuz {off}"), false),
    ]);
    assert_eq!(
        p.boots[0].measured.as_deref().map(|m| &m[..5]),
        Some("4,5,6")
    );
    assert!(
        p.boots[1]
            .measured
            .as_deref()
            .unwrap()
            .starts_with("7,8,9 (3 run(s)")
    );
    let to_do: Vec<&str> = p.to_do().map(|b| b.name.as_str()).collect();
    assert_eq!(
        to_do,
        [
            "without spectre_v1",
            "without spectre_v2",
            "without spec_rstack_overflow"
        ]
    );
    let text = mitbench::export::plan::render(&p, 100);
    assert!(text.contains("measured: set 4,5,6"), "{text}");
    assert_eq!(text.matches("to do: no run set").count(), 3, "{text}");
}

/// A run document of the intel fixture's machine with every vulnerability
/// file of the catalogue mitigated except `off`, booted with `cmdline`.
fn run_under(cmdline: &str, off: Option<&str>) -> mitbench::store::results::RunDocument {
    let mut doc: mitbench::store::results::RunDocument = common::stored_run("run-a.json");
    doc.inventory.kernel.cmdline = cmdline.to_string();
    doc.inventory.cpu.vulnerabilities = SWITCHES
        .iter()
        .map(|(file, _)| {
            let line = if Some(*file) == off {
                "Vulnerable"
            } else {
                "Mitigation: a catalogue test"
            };
            (file.to_string(), line.to_string())
        })
        .collect();
    doc
}

#[test]
fn every_boot_the_plan_proposes_is_that_boot_to_history_compare_and_attribute() {
    // Over the whole catalogue: a machine with every vulnerability file
    // mitigated gets a boot without each; each must be recognised as that
    // boot wherever a boot is read.
    let present = run_under("root=/dev/vda1 ro quiet", None);
    let p = plan(&present.inventory, 5);
    let without: Vec<&mitbench::plan::Boot> = p
        .boots
        .iter()
        .filter(|b| b.adds.as_ref().is_some_and(|w| w != "mitigations=off"))
        .collect();
    assert_eq!(without.len(), SWITCHES.len(), "a boot for every file");
    for (boot, (file, off)) in without.iter().zip(SWITCHES) {
        assert_eq!(boot.adds.as_deref(), Some(*off));
        // The history's conditions and compare's command-line diff read
        // the mitigation words.
        let words = mitbench::inventory::mitigation_words(&boot.cmdline);
        assert_eq!(words, [*off], "{file}: the history's conditions");
        let booted = run_under(&boot.cmdline, Some(file));
        let changes = mitbench::compare::inventory_changes(&present, &booted);
        let named: Vec<&str> = changes
            .iter()
            .filter(|c| c.key.starts_with("cmdline"))
            .flat_map(|c| mitbench::mitigations::switched_by(&c.key))
            .map(|m| m.name)
            .collect();
        for m in mitbench::mitigations::of_file(file, "Mitigation: a catalogue test") {
            assert!(named.contains(&m.name), "{off}: compare names {named:?}");
        }
        // attribute: the set under it is the boot without this file's
        // mitigation, and only it.
        let sets = [
            mitbench::attribute::NamedSet {
                name: "present".into(),
                runs: vec![present.clone()],
            },
            mitbench::attribute::NamedSet {
                name: (*off).into(),
                runs: vec![booted],
            },
        ];
        let recognised = mitbench::attribute::recognise(&sets).unwrap();
        assert_eq!(recognised.sets[1].boot.adds.as_deref(), Some(*off));
        assert_eq!(recognised.sets[1].off, [*file], "{off}");
    }
}

/// The hooks every syscall pays for are in the plan, each with what
/// removes it (no boot: mitbench removes none), and none where there are
/// none.
#[test]
fn the_plan_names_what_removes_each_hook_on_the_syscall_path() {
    use mitbench::inventory::audit::Audit;
    use mitbench::inventory::hooks::Reading;
    let mut inventory = fixture("amd-epyc-guest");
    assert!(plan(&inventory, 5).hooks.is_empty());
    inventory.hooks.audit = Reading::Read(Audit {
        enabled: 1,
        auditd_pid: 0,
        rules: 1,
        syscall_rules: 1,
        never_task: false,
    });
    let the_plan = plan(&inventory, 5);
    let shown = mitbench::export::plan::render(&the_plan, 100);
    assert!(shown.contains("syscall hooks:"), "{shown}");
    assert!(shown.contains("audit (1 syscall rule):"), "{shown}");
    assert!(shown.contains("-a never,task"), "{shown}");
    // A hook is no boot of the plan.
    assert!(
        the_plan
            .boots
            .iter()
            .all(|b| !b.cmdline.contains("audit=0"))
    );

    // Audit off and no never,task rule, but a stored run of this boot read
    // it on: named, with the rule that keeps new processes off its path;
    // not after a reboot, nor once the rule is there.
    let off = |never_task| Audit {
        enabled: 0,
        auditd_pid: 0,
        rules: usize::from(never_task),
        syscall_rules: 0,
        never_task,
    };
    inventory.hooks.audit = Reading::Read(off(false));
    let mut last = common::stored_run("run-a.json");
    last.audit_enabled_in_run = Some(7);
    last.inventory.identity.boot_id = inventory.identity.boot_id.clone();
    let named = |inventory: &Inventory, last: &mitbench::store::results::RunDocument| {
        let mut the_plan = plan(inventory, 5);
        the_plan.audit_enabled_earlier(inventory, 12, last);
        the_plan.hooks
    };
    let hooks = named(&inventory, &last);
    assert_eq!(hooks.len(), 1, "{hooks:?}");
    assert!(hooks[0].hook.contains("on in run 7"), "{hooks:?}");
    assert!(hooks[0].removed_by.contains("-a never,task"), "{hooks:?}");
    let mut rebooted = last.clone();
    rebooted.inventory.identity.boot_id.push_str("-before");
    assert!(named(&inventory, &rebooted).is_empty());
    // The last run read it on itself: that run is named.
    let mut on_then = last.clone();
    on_then.audit_enabled_in_run = None;
    on_then.inventory.hooks.audit = Reading::Read(Audit {
        enabled: 1,
        ..off(false)
    });
    assert!(named(&inventory, &on_then)[0].hook.contains("on in run 12"));
    inventory.hooks.audit = Reading::Read(off(true));
    assert!(named(&inventory, &last).is_empty());
}

/// On a guest the plan names its host's boots that would move what its
/// exits pay (SRSO's IBPB on exit only where the CPU is a Zen 1-4); on
/// bare metal none.
#[test]
fn a_guests_plan_names_the_host_boots_its_exits_would_show() {
    let words = |name: &str| -> Vec<&'static str> {
        plan(&fixture(name), 5)
            .host_boots
            .iter()
            .map(|b| b.adds)
            .collect()
    };
    let every = [
        "mitigations=auto,no_guest_host",
        "vmscape=off",
        "spec_rstack_overflow=ibpb-vmexit",
    ];
    assert_eq!(words("amd-zen3-guest"), every);
    assert_eq!(words("amd-epyc-vm"), every);
    assert_eq!(words("intel-xeon-guest"), every[..2]);
    for bare in ["amd-zen2-retbleed", "intel-pti-ibrs", "cpus/amd-zen4"] {
        assert!(words(bare).is_empty(), "{bare}: {:?}", words(bare));
    }
    let text = mitbench::export::plan::render(&plan(&fixture("amd-zen3-guest"), 5), 100);
    let (_, host) = text.split_once("the host's boots:").expect("said");
    // (The command lines above stay whole for copying; this keeps to 100.)
    for line in host.lines() {
        assert!(line.chars().count() <= 100, "{line}");
    }
}
