//! The inventory on fixture trees: real text from three kinds of machine,
//! an empty tree, and hostile files. Nothing may panic; what is missing is
//! "unknown".

use mitbench::inventory::{Inventory, UNKNOWN, parse_config};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

#[test]
fn amd_vm_with_retpolines_and_no_pmu() {
    let inv = Inventory::collect(&fixture("amd-epyc-vm"));
    assert!(!inv.live);
    assert_eq!(inv.cpu.vendor, "AuthenticAMD");
    assert_eq!(inv.cpu.family, "23");
    assert_eq!(inv.cpu.microcode, "0x1000065");
    assert_eq!(inv.cpu.flags.get("pcid"), Some(&false));
    assert_eq!(inv.cpu.flags.get("ibpb"), Some(&true));
    assert_eq!(inv.cpu.flags.get("tsc_known_freq"), Some(&true));
    assert_eq!(inv.cpu.hypervisor, "KVM (kernel log)");
    assert_eq!(inv.cpu.smt_control, "notsupported");
    assert!(inv.cpu.vulnerabilities["spectre_v2"].starts_with("Mitigation: Retpolines"));
    assert_eq!(inv.cpu.vulnerabilities["meltdown"], "Not affected");
    assert_eq!(inv.cpu.vulnerabilities.len(), 19);
    assert_eq!(inv.tsc_mhz, Some(1996.249));
    assert!(
        inv.tsc_mhz_source
            .contains("tsc: Detected 1996.249 MHz processor")
    );
    assert_eq!(
        inv.tsc_calibrated_mhz, None,
        "no calibration on a fixture tree"
    );
    assert_eq!(inv.kernel.release, "6.18.44-fc-v657");
    assert!(inv.kernel.cmdline.starts_with("mitigations=auto"));
    assert_eq!(inv.kernel.config_source, "/proc/config.gz");
    assert_eq!(
        inv.kernel.mitigation_config["CONFIG_MITIGATION_RETPOLINE"],
        "y"
    );
    assert_eq!(inv.kernel.mitigation_config["CONFIG_MITIGATION_SLS"], "n");
    assert!(
        !inv.kernel
            .mitigation_config
            .contains_key("CONFIG_LOCALVERSION")
    );
    assert_eq!(inv.kernel.preemption.model, "none");
    assert_eq!(inv.kernel.preemption.source, "kernel log (Dynamic Preempt)");
    assert_eq!(inv.kernel.clocksource, "tsc");
    assert_eq!(inv.facilities.perf_event_paranoid, "2");
    assert!(
        inv.facilities
            .pmu
            .starts_with("unavailable: PMU not available due to virtualization")
    );
    assert!(
        inv.facilities
            .seccomp
            .starts_with("available (actions: kill_process")
    );
    assert_eq!(
        inv.facilities.io_uring,
        "enabled (kernel.io_uring_disabled=0)"
    );
}

#[test]
fn intel_with_pti_and_ibrs() {
    let inv = Inventory::collect(&fixture("intel-pti-ibrs"));
    assert_eq!(inv.cpu.vendor, "GenuineIntel");
    assert_eq!(inv.cpu.model, "85");
    assert_eq!(inv.cpu.stepping, "4");
    for flag in [
        "pcid",
        "invpcid",
        "pti",
        "ibrs",
        "stibp",
        "md_clear",
        "flush_l1d",
    ] {
        assert_eq!(inv.cpu.flags.get(flag), Some(&true), "{flag}");
    }
    assert_eq!(inv.cpu.flags.get("hypervisor"), Some(&false));
    assert_eq!(inv.cpu.hypervisor, "none");
    assert_eq!(
        (inv.cpu.smt_control.as_str(), inv.cpu.smt_active.as_str()),
        ("on", "1")
    );
    assert_eq!(inv.cpu.vulnerabilities["meltdown"], "Mitigation: PTI");
    assert!(inv.cpu.vulnerabilities["spectre_v2"].starts_with("Mitigation: IBRS;"));
    assert_eq!(inv.cpu.vulnerabilities["retbleed"], "Mitigation: IBRS");
    // The refined calibration wins over the early "Detected" lines.
    assert_eq!(inv.tsc_mhz, Some(2394.381));
    assert!(
        inv.tsc_mhz_source
            .contains("Refined TSC clocksource calibration")
    );
    // No config.gz: the /boot config of the running release is read.
    assert_eq!(inv.kernel.config_source, "/boot/config-5.15.0-91-generic");
    assert_eq!(
        inv.kernel.mitigation_config["CONFIG_PAGE_TABLE_ISOLATION"],
        "y"
    );
    assert_eq!(inv.kernel.mitigation_config["CONFIG_CPU_UNRET_ENTRY"], "n");
    // debugfs shows the model in force now, which beats the boot log.
    assert_eq!(inv.kernel.preemption.model, "full");
    assert_eq!(inv.kernel.preemption.source, "debugfs sched/preempt");
    assert_eq!(inv.facilities.pmu, "available (core PMU device in sysfs)");
    assert_eq!(
        inv.facilities.seccomp,
        "available (CONFIG_SECCOMP_FILTER=y)"
    );
    assert_eq!(inv.facilities.io_uring, "available (CONFIG_IO_URING=y)");
}

#[test]
fn mitigations_off_and_sparse() {
    let inv = Inventory::collect(&fixture("mitigations-off"));
    assert_eq!(inv.kernel.cmdline, "mitigations=off quiet");
    assert_eq!(inv.cpu.vulnerabilities["meltdown"], "Vulnerable");
    assert!(inv.cpu.vulnerabilities["spectre_v2"].starts_with("Vulnerable;"));
    assert_eq!(inv.cpu.flags.get("pcid"), Some(&true));
    assert_eq!(
        inv.facilities.io_uring,
        "unavailable: disabled by sysctl kernel.io_uring_disabled=2"
    );
    // Nothing says how fast the TSC is or how the kernel preempts.
    assert_eq!(inv.tsc_mhz, None);
    assert_eq!(inv.tsc_mhz_source, UNKNOWN);
    assert_eq!(inv.kernel.preemption.model, UNKNOWN);
    assert_eq!(inv.kernel.config_source, UNKNOWN);
    assert_eq!(inv.kernel.clocksource, UNKNOWN);
    assert_eq!(inv.facilities.pmu, UNKNOWN);
    assert_eq!(inv.cpu.smt_control, UNKNOWN);
}

#[test]
fn empty_tree_is_all_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let inv = Inventory::collect(dir.path());
    assert_eq!(inv.cpu.vendor, UNKNOWN);
    assert_eq!(inv.cpu.model_name, UNKNOWN);
    assert!(inv.cpu.flags.is_empty());
    assert!(inv.cpu.vulnerabilities.is_empty());
    assert_eq!(inv.cpu.hypervisor, UNKNOWN);
    assert_eq!(inv.kernel.release, UNKNOWN);
    assert_eq!(inv.facilities.seccomp, UNKNOWN);
    assert_eq!(inv.facilities.io_uring, UNKNOWN);
    assert_eq!(inv.tsc_mhz, None);
    // Rendering and serialising an all-unknown inventory works too.
    assert!(mitbench::export::inventory::render(&inv).contains("unknown"));
    serde_json::to_string(&inv).unwrap();
}

#[test]
fn hostile_files_do_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |rel: &str, bytes: &[u8]| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    };
    // Binary garbage where text is expected, lines without colons, a
    // config.gz that is not gzip, a directory where a file should be.
    write(
        "proc/cpuinfo",
        b"\xff\xfe\x00garbage\nno colon here\nflags\n:::\n",
    );
    write("proc/config.gz", b"not gzip at all");
    write(
        "var/log/dmesg",
        b"tsc: Detected -5 MHz processor\ntsc: Detected NaN MHz processor\nDynamic Preempt:\n",
    );
    write("proc/sys/kernel/osrelease", b"\n\n");
    std::fs::create_dir_all(root.join("sys/devices/system/cpu/vulnerabilities/meltdown")).unwrap();
    std::fs::create_dir_all(root.join("proc/sys/kernel/perf_event_paranoid")).unwrap();
    let inv = Inventory::collect(root);
    assert_eq!(inv.cpu.vendor, UNKNOWN);
    assert!(
        inv.cpu.flags.is_empty(),
        "a 'flags' line without a value names no flags"
    );
    assert_eq!(inv.kernel.release, UNKNOWN);
    assert_eq!(inv.kernel.config_source, UNKNOWN);
    assert_eq!(
        inv.tsc_mhz, None,
        "negative and NaN frequencies are rejected"
    );
    assert_eq!(inv.cpu.vulnerabilities["meltdown"], UNKNOWN);
    assert_eq!(inv.facilities.perf_event_paranoid, UNKNOWN);
}

#[test]
fn config_parser_reads_set_unset_and_quoted() {
    let config = parse_config(
        "# comment\nCONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=\"text\"\nCONFIG_D=250\nnot a line\nOTHER=1\n",
    );
    assert_eq!(config["CONFIG_A"], "y");
    assert_eq!(config["CONFIG_B"], "n");
    assert_eq!(config["CONFIG_C"], "text");
    assert_eq!(config["CONFIG_D"], "250");
    assert_eq!(config.len(), 4);
}

/// A tree of `(path, bytes)` files.
fn tree(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, bytes) in files {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    dir
}

#[test]
fn hooks_are_read_from_tracefs_and_the_livepatch_directory() {
    use mitbench::inventory::hooks::Reading;
    // As tracefs lists them on a 6.18 kernel with two syscall events, a
    // sched event and a kprobe, and one livepatch loaded.
    let dir = tree(&[
        (
            "sys/kernel/tracing/set_event",
            b"raw_syscalls:sys_enter\nsyscalls:sys_enter_getppid\nsched:sched_switch\n",
        ),
        ("sys/kernel/tracing/current_tracer", b"nop\n"),
        (
            "sys/kernel/tracing/dynamic_events",
            b"p:kprobes/p_do_sys_openat2_0 do_sys_openat2\n",
        ),
        ("sys/kernel/livepatch/livepatch_fix_1/enabled", b"1\n"),
        ("sys/kernel/livepatch/livepatch_old/enabled", b"0\n"),
    ]);
    let hooks = Inventory::collect(dir.path()).hooks;
    assert_eq!(
        hooks.syscall_events(),
        ["raw_syscalls:sys_enter", "syscalls:sys_enter_getppid"]
    );
    assert_eq!(hooks.trace_events.read().unwrap().len(), 3);
    assert_eq!(hooks.tracer, Reading::Read("nop".to_string()));
    assert_eq!(
        hooks.dynamic_events,
        Reading::Read(vec![
            "p:kprobes/p_do_sys_openat2_0 do_sys_openat2".to_string()
        ])
    );
    assert_eq!(
        hooks.livepatches,
        Reading::Read(vec![
            "livepatch_fix_1 (enabled)".to_string(),
            "livepatch_old (disabled)".to_string()
        ])
    );
    let shown = mitbench::export::inventory::render(&Inventory::collect(dir.path()));
    assert!(shown.contains("raw_syscalls:sys_enter"), "{shown}");
}

#[test]
fn hooks_that_cannot_be_read_say_why_and_hostile_files_do_not_panic() {
    // No tracefs and no livepatch directory: each reading says why.
    let empty = tempfile::tempdir().unwrap();
    let hooks = Inventory::collect(empty.path()).hooks;
    for why in [
        format!("{:?}", hooks.trace_events),
        format!("{:?}", hooks.tracer),
        format!("{:?}", hooks.livepatches),
    ] {
        assert!(why.starts_with("Unreadable(\"no sys/kernel/"), "{why}");
    }
    assert!(hooks.syscall_events().is_empty());
    // Garbage where a listing is expected, a directory where a file
    // should be, a livepatch without its state.
    let dir = tree(&[
        (
            "sys/kernel/tracing/set_event",
            b"\xff\xfe\x00\n\n   \n# comment\n",
        ),
        ("sys/kernel/livepatch/broken/transition", b"0\n"),
    ]);
    std::fs::create_dir_all(dir.path().join("sys/kernel/tracing/current_tracer")).unwrap();
    let hooks = Inventory::collect(dir.path()).hooks;
    assert!(hooks.syscall_events().is_empty(), "{hooks:?}");
    assert!(hooks.tracer.read().is_none(), "{hooks:?}");
    assert_eq!(
        hooks.livepatches.read().unwrap(),
        &vec!["broken (state unknown)".to_string()]
    );
    serde_json::to_string(&hooks).unwrap();
}

/// A netlink message of `kind` with `payload`, padded to four bytes, as
/// the kernel frames its replies.
fn netlink(kind: u16, payload: &[u8]) -> Vec<u8> {
    let mut message = Vec::new();
    message.extend_from_slice(&((16 + payload.len()) as u32).to_ne_bytes());
    message.extend_from_slice(&kind.to_ne_bytes());
    message.extend_from_slice(&2u16.to_ne_bytes()); // NLM_F_MULTI
    message.extend_from_slice(&[0; 8]);
    message.extend_from_slice(payload);
    message.resize(message.len().next_multiple_of(4), 0);
    message
}

/// `struct audit_status` with audit `enabled` and auditd at `pid`.
fn audit_status(enabled: u32, pid: u32) -> Vec<u8> {
    let words = [0x7f, enabled, 1, pid, 0, 8192, 0, 0, 0x7f, 60_000, 0];
    words.iter().flat_map(|w: &u32| w.to_ne_bytes()).collect()
}

/// `struct audit_rule_data` on filter list `list` with `action`, no
/// fields, one syscall in the mask, and a buffer of `buf` bytes.
fn audit_rule(list: u32, action: u32, buf: usize) -> Vec<u8> {
    let mut words = vec![0u32; 3 + 4 * 64 + 1];
    words[0] = list;
    words[1] = action;
    words[3 + 110 / 32] = 1 << (110 % 32); // getppid's bit
    words[3 + 4 * 64] = buf as u32;
    let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    bytes.resize(bytes.len() + buf, b'x');
    bytes
}

#[test]
fn audit_status_and_rules_are_read_as_the_kernel_frames_them() {
    use mitbench::inventory::audit::{from_replies, messages};
    // `auditctl -e 1 -a exit,always -S getppid` then `-a never,task`
    // (prepended, as the rule lists it), with a key in the buffer; then
    // the listing's end.
    let mut listing = netlink(1013, &audit_rule(0x04, 2, 7));
    listing.extend(netlink(1013, &audit_rule(0x01 | 0x10, 0, 0)));
    listing.extend(netlink(3, &[0; 4]));
    let replies = messages(&listing).unwrap();
    assert_eq!(replies.len(), 3);
    let rules: Vec<&[u8]> = replies
        .iter()
        .filter(|r| r.0 == 1013)
        .map(|r| r.1)
        .collect();
    let status = audit_status(1, 4242);
    let audit = from_replies(&status, &rules).unwrap();
    assert_eq!((audit.enabled, audit.auditd_pid), (1, 4242));
    assert_eq!((audit.rules, audit.syscall_rules), (2, 1));
    assert!(audit.never_task);
    assert_eq!(
        audit.to_string(),
        "on, 2 rule(s), 1 on the syscall path, new processes kept off it (never,task)"
    );
    // Audit off, no rules: the listing is its end alone.
    let off = from_replies(&audit_status(0, 0), &[]).unwrap();
    assert_eq!(
        off.to_string(),
        "off, 0 rule(s), 0 on the syscall path, no never,task rule"
    );
}

#[test]
fn hostile_netlink_replies_say_what_is_wrong_in_one_line() {
    use mitbench::inventory::audit::{from_replies, messages};
    let whole = netlink(1013, &audit_rule(0x04, 2, 0));
    // Cut anywhere: a header or a message that does not fit is an error,
    // never a panic.
    for cut in 1..whole.len() {
        if let Err(why) = messages(&whole[..cut]) {
            assert!(!why.contains('\n') && why.starts_with("a netlink"), "{why}");
        }
    }
    assert!(messages(&whole[..10]).is_err());
    // A length below the header's own.
    let mut short = whole.clone();
    short[0..4].copy_from_slice(&8u32.to_ne_bytes());
    assert!(messages(&short).is_err());
    // The kernel's refusal (EPERM) is said as its errno.
    let mut refusal = (-1i32).to_ne_bytes().to_vec();
    refusal.extend_from_slice(&[0; 16]);
    let why = messages(&netlink(2, &refusal)).unwrap_err();
    assert!(why.contains("not permitted"), "{why}");
    // A rule or a status too short for its struct.
    let rule = audit_rule(0x04, 2, 0);
    let why = from_replies(&audit_status(1, 0), &[&rule[..100]]).unwrap_err();
    assert!(why.contains("too short"), "{why}");
    assert!(from_replies(&[1, 2, 3], &[]).is_err());
    // An unknown filter list or action is a rule, on no known list.
    let odd = audit_rule(0x3f, 99, 0);
    let audit = from_replies(&audit_status(1, 0), &[&odd]).unwrap();
    assert_eq!(
        (audit.rules, audit.syscall_rules, audit.never_task),
        (1, 0, false)
    );
}

/// The head of a `struct bpf_prog_info` of program type `kind` named
/// `name` (up to 16 bytes, NUL-padded as the kernel writes it).
fn bpf_info(kind: u32, name: &[u8]) -> Vec<u8> {
    let mut info = vec![0u8; 80];
    info[0..4].copy_from_slice(&kind.to_ne_bytes());
    info[4..8].copy_from_slice(&17u32.to_ne_bytes());
    info[64..64 + name.len()].copy_from_slice(name);
    info
}

#[test]
fn bpf_programs_are_read_by_type_and_name_and_odd_infos_do_not_panic() {
    use mitbench::inventory::bpf::{on_kernel_paths, program_from_info};
    // As bpftrace loads `tracepoint:raw_syscalls:sys_enter { ... }`.
    let program = program_from_info(&bpf_info(5, b"sys_enter")).unwrap();
    assert_eq!(program.to_string(), "tracepoint sys_enter");
    assert!(on_kernel_paths(&program.kind));
    let lsm = program_from_info(&bpf_info(29, b"restrict_exec")).unwrap();
    assert!(on_kernel_paths(&lsm.kind), "{lsm}");
    let cgroup = program_from_info(&bpf_info(15, b"sd_devices")).unwrap();
    assert!(!on_kernel_paths(&cgroup.kind), "{cgroup}");
    // A type this build does not know, a name that fills its 16 bytes,
    // no name, bytes that are not UTF-8.
    assert_eq!(
        program_from_info(&bpf_info(99, b"")).unwrap().to_string(),
        "type 99 (unnamed)"
    );
    let long = program_from_info(&bpf_info(2, b"sixteen_bytes_ab")).unwrap();
    assert_eq!(long.name, "sixteen_bytes_ab");
    assert!(program_from_info(&bpf_info(2, b"\xff\xfe")).is_ok());
    // Less than the head.
    let why = program_from_info(&[0; 40]).unwrap_err();
    assert!(why.contains("too short"), "{why}");
}

/// The head of a `struct bpf_link_info` of link type `kind` for program
/// `prog_id`, with `words` written from offset 16 (the type's union).
fn link_info(kind: u32, prog_id: u32, words: &[u32]) -> Vec<u8> {
    let mut info = vec![0u8; mitbench::inventory::bpf::LINK_INFO_HEAD];
    info[0..4].copy_from_slice(&kind.to_ne_bytes());
    info[4..8].copy_from_slice(&9u32.to_ne_bytes());
    info[8..12].copy_from_slice(&prog_id.to_ne_bytes());
    for (i, w) in words.iter().enumerate() {
        info[16 + 4 * i..20 + 4 * i].copy_from_slice(&w.to_ne_bytes());
    }
    info
}

#[test]
fn bpf_attach_points_are_read_from_links_and_perf_events_and_odd_ones_do_not_panic() {
    use mitbench::inventory::bpf::{Program, attach_from_fd_query, link_from_info, link_name_at};
    // A raw tracepoint link names its tracepoint through a buffer at 16;
    // a perf event link (type 5: a tracepoint) at 24.
    let raw = link_info(1, 41, &[]);
    assert_eq!(link_name_at(&raw), Some((16, 24)));
    assert_eq!(
        link_from_info(&raw, "sys_enter").unwrap(),
        (41, "raw tracepoint sys_enter".to_string())
    );
    let perf = link_info(7, 42, &[5]);
    assert_eq!(link_name_at(&perf), Some((24, 32)));
    assert_eq!(
        link_from_info(&perf, "sys_enter_getppid").unwrap().1,
        "tracepoint sys_enter_getppid"
    );
    // An fentry program (tracing link, attach type 24) by its BTF type;
    // no name to read.
    let fentry = link_info(2, 43, &[24, 1, 52331]);
    assert_eq!(link_name_at(&fentry), None);
    assert_eq!(
        link_from_info(&fentry, "").unwrap().1,
        "fentry (BTF type 52331)"
    );
    assert_eq!(
        link_from_info(&link_info(99, 1, &[]), "").unwrap().1,
        "link type 99"
    );
    assert_eq!(
        link_from_info(&link_info(7, 1, &[9]), "").unwrap().1,
        "perf event"
    );
    assert!(
        link_from_info(&raw[..20], "")
            .unwrap_err()
            .contains("too short")
    );
    assert_eq!(link_name_at(&[]), None);
    // As BCC and bpftrace attach a tracepoint: a perf event, no link.
    assert_eq!(attach_from_fd_query(1, "sys_enter"), "tracepoint sys_enter");
    assert_eq!(attach_from_fd_query(7, "x"), "perf event (fd type 7)");

    let program = |attached: &[&str]| Program {
        kind: "tracepoint".into(),
        name: "agent".into(),
        attached: attached.iter().map(|a| a.to_string()).collect(),
    };
    for (attached, on_path) in [
        (&["tracepoint sys_enter"][..], true),
        (&["raw tracepoint sys_exit"], true),
        (&["tracepoint sys_enter_openat"], true),
        (&["tracepoint sched_switch"], false),
        (&["kprobe sys_enter"], false),
        (&[], false),
    ] {
        assert_eq!(program(attached).on_syscall_path(), on_path, "{attached:?}");
    }
    assert_eq!(
        program(&["tracepoint sys_enter"]).to_string(),
        "tracepoint agent on tracepoint sys_enter"
    );
}

#[test]
fn the_hooks_every_syscall_pays_for_are_named_with_what_removes_them() {
    use mitbench::inventory::audit::Audit;
    use mitbench::inventory::bpf::Program;
    use mitbench::inventory::hooks::{Hooks, Reading};
    let audit = |enabled, syscall_rules, never_task| Audit {
        enabled,
        auditd_pid: 0,
        rules: syscall_rules,
        syscall_rules,
        never_task,
    };
    let hooks = |audit: Audit, events: &[&str], programs: Vec<Program>| Hooks {
        trace_events: Reading::Read(events.iter().map(|e| e.to_string()).collect()),
        audit: Reading::Read(audit),
        bpf_programs: Reading::Read(programs),
        ..Hooks::default()
    };
    let named = |h: &Hooks| {
        h.on_syscall_path()
            .into_iter()
            .map(|p| p.hook)
            .collect::<Vec<_>>()
    };
    // A machine without hooks: none.
    assert!(named(&hooks(audit(0, 0, false), &[], Vec::new())).is_empty());
    // Audit on keeps every new process on its path, rule or none, unless
    // a never,task rule keeps them off.
    assert_eq!(
        named(&hooks(audit(1, 1, false), &[], Vec::new())),
        ["audit (1 syscall rule)"]
    );
    assert_eq!(
        named(&hooks(audit(1, 0, false), &[], Vec::new())),
        ["audit (on, no syscall rule)"]
    );
    assert!(named(&hooks(audit(1, 3, true), &[], Vec::new())).is_empty());
    let locked = hooks(audit(2, 2, false), &[], Vec::new()).on_syscall_path();
    assert!(locked[0].removed_by.contains("audit=0"), "{locked:?}");
    assert!(!locked[0].removed_by.contains("never,task"), "{locked:?}");
    let on = hooks(audit(1, 1, false), &[], Vec::new()).on_syscall_path();
    assert!(on[0].removed_by.contains("-a never,task"), "{on:?}");
    // Syscall trace events and BPF programs on a syscall tracepoint; not
    // the others.
    let agent = Program {
        kind: "tracepoint".into(),
        name: "watch".into(),
        attached: vec!["tracepoint sys_enter".into()],
    };
    let elsewhere = Program {
        attached: vec!["tracepoint sched_switch".into()],
        ..agent.clone()
    };
    let h = hooks(
        audit(0, 0, false),
        &["raw_syscalls:sys_enter", "sched:sched_switch"],
        vec![agent, elsewhere],
    );
    let on_path = h.on_syscall_path();
    assert_eq!(
        named(&h),
        [
            "trace event raw_syscalls:sys_enter",
            "BPF tracepoint watch on tracepoint sys_enter"
        ]
    );
    assert!(
        on_path[0]
            .removed_by
            .contains("events/raw_syscalls/sys_enter/enable")
    );
    assert!(
        on_path[1]
            .removed_by
            .contains("bpftool prog show name watch")
    );
    // Unread hooks (an older run) name none.
    assert!(Hooks::default().on_syscall_path().is_empty());
}
