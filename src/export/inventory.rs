//! What the machine is, as text for a terminal: `mitbench inventory` and
//! the report's machine section.

use super::terminal::terminal_safe;
use crate::inventory::bpf;
use crate::inventory::hooks::{self, Hooks, Reading};
use crate::inventory::paravirt::Paravirt;
use crate::inventory::{Inventory, UNKNOWN};
use std::fmt::Write as _;

/// An inventory as a human-readable listing, one fact per line.
pub fn render(inventory: &Inventory) -> String {
    let mut out = String::new();
    let cpu = &inventory.cpu;
    let k = &inventory.kernel;
    let f = &inventory.facilities;
    // Values are the machine's text: a newline or an escape sequence
    // in them is shown, not obeyed (the JSON keeps them exact).
    let mut line = |key: &str, value: &str| {
        let value = terminal_safe(value, false);
        let _ = writeln!(out, "{key:<22} {value}");
    };
    line(
        "root",
        &format!(
            "{}{}",
            inventory.root,
            if inventory.live { " (live system)" } else { "" }
        ),
    );
    line("cpu", &cpu.model_name);
    line(
        "cpu id",
        &format!(
            "vendor {} family {} model {} stepping {} microcode {}",
            cpu.vendor, cpu.family, cpu.model, cpu.stepping, cpu.microcode
        ),
    );
    line("cpus online", &cpu.online);
    let flags = if cpu.flags.is_empty() {
        UNKNOWN.to_string()
    } else {
        cpu.flags
            .iter()
            .map(|(name, on)| format!("{}{name}", if *on { "+" } else { "-" }))
            .collect::<Vec<_>>()
            .join(" ")
    };
    line("cpu flags", &flags);
    line(
        "smt",
        &format!("control {}, active {}", cpu.smt_control, cpu.smt_active),
    );
    line("hypervisor", &cpu.hypervisor);
    paravirt_lines(&inventory.paravirt, &mut line);
    let tsc = match (inventory.tsc_mhz, inventory.tsc_calibrated_mhz) {
        (Some(mhz), Some(cal)) => format!(
            "{mhz:.3} MHz from {} (calibrated: {cal:.3} MHz)",
            inventory.tsc_mhz_source
        ),
        (Some(mhz), None) => format!("{mhz:.3} MHz from {}", inventory.tsc_mhz_source),
        (None, _) => UNKNOWN.to_string(),
    };
    line("tsc", &tsc);
    line(
        "clocksource",
        &format!(
            "{} (available: {})",
            k.clocksource, k.available_clocksources
        ),
    );
    line("kernel", &k.release);
    line("kernel version", &k.version);
    line("cmdline", &k.cmdline);
    line(
        "preemption",
        &format!("{} ({})", k.preemption.model, k.preemption.source),
    );
    line("perf_event_paranoid", &f.perf_event_paranoid);
    line("pmu", &f.pmu);
    line("seccomp", &f.seccomp);
    line("io_uring", &f.io_uring);
    hook_lines(&inventory.hooks, &mut line);
    let _ = writeln!(
        out,
        "\nvulnerabilities (/sys/devices/system/cpu/vulnerabilities):"
    );
    if cpu.vulnerabilities.is_empty() {
        let _ = writeln!(out, "  {UNKNOWN}");
    }
    for (name, text) in &cpu.vulnerabilities {
        let _ = writeln!(out, "  {name:<26} {text}");
    }
    let _ = writeln!(
        out,
        "\nmitigation-related kernel config ({}):",
        k.config_source
    );
    if k.mitigation_config.is_empty() {
        let _ = writeln!(out, "  {UNKNOWN}");
    }
    for (key, value) in &k.mitigation_config {
        let _ = writeln!(out, "  {key}={value}");
    }
    out
}

/// A KVM guest's paravirtual features, a line each: in use, or offered
/// and not, with the reason (see `inventory::paravirt`).
fn paravirt_lines(p: &Paravirt, line: &mut impl FnMut(&str, &str)) {
    if p.is_empty() {
        return;
    }
    let dedicated = match p.dedicated_cpus {
        Some(true) => ", the host hints a CPU per vCPU",
        _ => "",
    };
    line(
        "paravirt (KVM)",
        &format!(
            "from {}{dedicated}; idle driver {}",
            p.source, p.idle_driver
        ),
    );
    for f in &p.features {
        let state = match (f.offered, f.in_use) {
            (_, Some(true)) => "in use".to_string(),
            (Some(false), _) => "not offered".to_string(),
            (Some(true), _) => "offered, not in use".to_string(),
            (None, Some(false)) => "not in use".to_string(),
            (None, None) => UNKNOWN.to_string(),
        };
        let why = f
            .why_not
            .as_ref()
            .map_or_else(String::new, |w| format!(": {w}"));
        line(&format!("  {}", f.name), &format!("{state}{why}"));
    }
}

/// The hooks on the syscall path, a line each (see `inventory::hooks`).
fn hook_lines(h: &Hooks, line: &mut impl FnMut(&str, &str)) {
    let listed = |list: &Vec<String>| hooks::listed(list);
    let syscall_events = h.syscall_events();
    let events = shown(&h.trace_events, |events| match syscall_events.is_empty() {
        true => listed(events),
        false => format!(
            "{} ({} on the syscall path: every syscall takes the slow path)",
            listed(events),
            syscall_events.len()
        ),
    });
    line("trace events", &events);
    line("tracer", &shown(&h.tracer, String::clone));
    line("dynamic events", &shown(&h.dynamic_events, listed));
    line("livepatches", &shown(&h.livepatches, listed));
    line("audit", &shown(&h.audit, ToString::to_string));
    line(
        "bpf programs",
        &shown(&h.bpf_programs, |programs| {
            let hooked: Vec<String> = programs
                .iter()
                .filter(|p| bpf::on_kernel_paths(&p.kind))
                .map(ToString::to_string)
                .collect();
            format!(
                "{} loaded, {} on kernel paths{}",
                programs.len(),
                hooked.len(),
                match hooked.is_empty() {
                    true => String::new(),
                    false => format!(": {}", hooked.join(", ")),
                }
            )
        }),
    );
}

/// A hook's reading as a line shows it, or why it could not be read.
fn shown<T>(reading: &Reading<T>, show: impl Fn(&T) -> String) -> String {
    match reading {
        Reading::Read(value) => show(value),
        Reading::Unreadable(why) => format!("{UNKNOWN}: {why}"),
    }
}
