//! The attack-vector controls on fixture trees: which mitigations in force
//! each vector keeps, the boot `mitbench plan` offers per vector, and what
//! `mitbench plan --root` says of hostile `mitigations=` words. The
//! fixtures: the AMD Zen 4 and Zen 3 guests this project runs on (kernel
//! 6.18, `no_guest_host,no_guest_guest`), an Intel Xeon guest (family 6
//! model 143, the vulnerability lines of this project's Intel guests) and
//! an Intel server on kernel 5.15, which has no vector controls; and a
//! Zen 3 of tests/fixtures/cpus whose SRSO safe return has its microcode.

use crate::common;
use common::mitbench;
use mitbench::inventory::Inventory;
use mitbench::mitigations::vectors::Vector;
use mitbench::plan::plan;
use std::path::{Path, PathBuf};

fn root(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Each vector boot of the fixture's plan: its vector and what it turns off.
fn vector_boots(name: &str) -> Vec<(Vector, Vec<&'static str>)> {
    plan(&Inventory::collect(&root(name)), 5)
        .vector_boots
        .into_iter()
        .map(|b| (b.vector, b.turns_off))
        .collect()
}

#[test]
fn the_amd_guests_turn_off_their_kernel_entry_mitigations_with_user_kernel_alone() {
    for fixture in ["amd-epyc-guest", "amd-zen3-guest"] {
        let boots = vector_boots(fixture);
        assert_eq!(boots.len(), 1, "{fixture}: {boots:?}");
        let (vector, off) = &boots[0];
        assert_eq!(*vector, Vector::UserKernel);
        for name in [
            "retpoline / IBRS / eIBRS",
            "return thunks / SRSO safe-RET",
            "spectre_v1 barriers",
            "RSB filling",
        ] {
            assert!(off.contains(&name), "{fixture}: {name} not in {off:?}");
        }
        let p = plan(&Inventory::collect(&root(fixture)), 5);
        assert_eq!(
            p.vector_boots[0].adds, "mitigations=auto,no_guest_host,no_guest_guest,no_user_kernel",
            "the boot's own options stay"
        );
        assert!(
            p.vector_boots[0]
                .cmdline
                .starts_with("mitigations=auto,no_guest_host,no_guest_guest,no_user_kernel ")
        );
        // Their SRSO line is "Vulnerable: Safe RET, no microcode": without
        // user_kernel, user_user would keep SRSO's microcode-only mode,
        // which needs the IBPB-extending microcode these guests lack, so
        // the kernel falls to "Vulnerable: No microcode" (bugs.c as of
        // 6.18): the boot leaves nothing.
        assert!(p.vector_boots[0].leaves.is_empty(), "{fixture}");
    }
}

#[test]
fn the_intel_guest_keeps_verw_for_both_user_vectors_and_ibpb_for_user_user() {
    let boots = vector_boots("intel-xeon-guest");
    let of = |v: Vector| {
        boots
            .iter()
            .find(|(b, _)| *b == v)
            .map(|(_, off)| off.clone())
            .unwrap_or_default()
    };
    let user_kernel = of(Vector::UserKernel);
    assert!(user_kernel.contains(&"BHI (branch history clearing)"));
    assert!(user_kernel.contains(&"ITS (indirect target selection thunks)"));
    assert!(!user_kernel.contains(&"VERW buffer clearing (MDS / TAA / MMIO)"));
    assert_eq!(of(Vector::UserUser), ["IBPB"]);
}

#[test]
fn a_kernel_before_6_17_has_no_vector_boots_and_says_why() {
    let p = plan(&Inventory::collect(&root("intel-pti-ibrs")), 5);
    assert!(p.vector_boots.is_empty());
    let why = p.vectors.unavailable.as_deref().unwrap();
    assert!(why.contains("5.15") && why.contains("6.17"), "{why}");
    let out = mitbench(&["plan", "--root", root("intel-pti-ibrs").to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("no attack-vector controls"), "{text}");
}

/// `mitbench plan --root` (text, then JSON) on the Zen 4 guest's tree
/// with this command line.
fn plan_with(cmdline: &str) -> (String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    common::copy_tree(&root("amd-epyc-guest"), dir.path());
    std::fs::write(dir.path().join("proc/cmdline"), format!("{cmdline}\n")).unwrap();
    let at = dir.path().to_str().unwrap();
    let text = mitbench(&["plan", "--root", at]);
    let json = mitbench(&["plan", "--root", at, "--json"]);
    for out in [&text, &json] {
        assert_eq!(out.status.code(), Some(0), "{cmdline}");
        assert!(
            out.stderr.is_empty(),
            "{cmdline}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    (
        String::from_utf8_lossy(&text.stdout).into_owned(),
        serde_json::from_slice(&json.stdout).unwrap(),
    )
}

#[test]
fn hostile_mitigations_words_each_get_one_clear_line_and_the_plan_goes_on() {
    for (cmdline, says) in [
        (
            "ro mitigations=auto,frobnicate",
            "does not know \"frobnicate\"",
        ),
        (
            "ro mitigations=auto,no_user_user,no_user_user",
            "no_user_user is given twice",
        ),
        ("ro mitigations=", "empty"),
        ("ro mitigations=off,no_user_kernel", "change nothing"),
        (
            "ro mitigations=no_user_kernel",
            "off, auto or auto,nosmt first",
        ),
        ("ro mitigations=auto mitigations=off", "given 2 times"),
    ] {
        let (text, json) = plan_with(cmdline);
        let problems = json["vectors"]["problems"].as_array().unwrap();
        assert_eq!(problems.len(), 1, "{cmdline}: {problems:?}");
        assert!(
            problems[0].as_str().unwrap().contains(says),
            "{cmdline}: {problems:?}"
        );
        // The text says it as one note, wrapped to the width.
        let flowing = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(
            flowing.matches("note: mitigations=").count(),
            1,
            "{cmdline}:\n{text}"
        );
        assert!(flowing.contains(says), "{cmdline}:\n{text}");
        assert!(text.contains("to make a boot once"), "{cmdline}:\n{text}");
    }
}

#[test]
fn the_answer_says_what_turning_user_kernel_off_leaves_where_user_user_stays() {
    // Zen 3 on bare metal with the microcode ("Mitigation: Safe RET") and
    // the guest vectors off, as the guests above.
    let fixture = "cpus/amd-zen3-no-guest-vectors";
    let inventory = Inventory::collect(&root(fixture));
    let priced = mitbench::answer::vectors::of(&inventory, &Default::default());
    let user_kernel = priced
        .vectors
        .iter()
        .find(|v| v.vector == Vector::UserKernel)
        .expect("user_kernel is enabled");
    assert!(
        user_kernel
            .turns_off
            .contains(&"return thunks / SRSO safe-RET")
    );
    assert_eq!(user_kernel.leaves.len(), 1, "{fixture}");
    assert!(user_kernel.leaves[0].contains("microcode-only mode"));
    // user_user keeps nothing of SRSO's in full: it leaves nothing.
    let user_user = priced.vectors.iter().find(|v| v.vector == Vector::UserUser);
    assert!(user_user.is_none_or(|v| v.leaves.is_empty()));
}
