//! A boot plan (`crate::plan`) as text that keeps to a width; the command
//! lines stay whole, one to a line, for copying.

use super::run::summary as run_summary;
use super::terminal::{Prose, terminal_safe};
use crate::mitigations::vectors::Vector;
use crate::plan::Plan;
use std::fmt::Write as _;

pub fn render(plan: &Plan, width: usize) -> String {
    let mut out = Prose::new(width);
    out.heading(
        "Boots that separate the kernel's mitigations on this machine",
        &plan.machine,
    );
    for f in &plan.in_force {
        out.say(
            &format!("in force: {}:", f.vulnerability),
            &format!("{} (off: {})", f.line, f.off),
            4,
        );
    }
    if let Some(note) = &plan.note {
        out.say("note:", note, 2);
    }
    let _ = writeln!(out);
    for (i, boot) in plan.boots.iter().enumerate() {
        let what = match &boot.adds {
            None => "the present boot".to_string(),
            Some(word) => format!("adds {word}"),
        };
        let _ = writeln!(out, "{}. {} ({what}):", i + 1, boot.name);
        let _ = writeln!(out, "   {}", terminal_safe(&boot.cmdline, false));
        if let Some(set) = &boot.measured {
            let _ = writeln!(out, "   measured: set {set}");
        } else if plan.history_read {
            let _ = writeln!(
                out,
                "   to do: no run set of this command line in the history"
            );
        }
    }
    vector_boots(plan, &mut out, plan.boots.len());
    return_toll(plan, &mut out);
    hooks(plan, &mut out);
    let _ = writeln!(out);
    out.say("on each boot:", &plan.run, 2);
    out.say(
        "then:",
        "mitbench attribute: the history's newest set of each boot (or name them: mitbench \
         attribute 1..5 6..10 11..15 ...): each row's whole toll (the present boot against \
         mitigations=off) and each mitigation's part (against the boot without it only), with \
         intervals",
        2,
    );
    let _ = writeln!(out, "\nto make a boot once (mitbench never reboots):");
    for how in crate::plan::HOW_TO_BOOT {
        out.say("  -", how, 4);
    }
    host_boots(plan, &mut out);
    out.text
}

/// What the return toll belongs to, whether this kernel runs it, and the
/// boots that would show the toll go with it.
fn return_toll(plan: &Plan, out: &mut Prose) {
    let r = &plan.return_toll;
    if r.boots.is_empty() && !r.cause_in_force {
        return;
    }
    let measured = match (r.present_ns, r.from_run) {
        (Some(toll), Some(run)) => format!(
            "getpid made from a function paid +{} in run {run}; ",
            run_summary::ns(toll)
        ),
        _ => String::new(),
    };
    let here = if r.cause_in_force {
        format!(
            "this kernel runs it, and the boots {} would show the toll go with it: run \
             os/syscall-return on them (the selection above has it); `mitbench attribute` \
             scores each boot",
            r.boots.join(", ")
        )
    } else {
        "this kernel does not run it, so no toll is expected here".to_string()
    };
    let _ = writeln!(out);
    out.say(
        "return toll:",
        &format!(
            "{measured}it belongs to {} ({}); {here}",
            r.cause, r.evidence
        ),
        2,
    );
}

/// The hooks every syscall pays for, each with what removes it: no boot,
/// and mitbench removes none.
fn hooks(plan: &Plan, out: &mut Prose) {
    if plan.hooks.is_empty() {
        return;
    }
    let _ = writeln!(out);
    let price = match &plan.hook_toll {
        Some(t) => format!("together {} in run {}; ", t.toll.priced(), t.from_run),
        None => String::new(),
    };
    out.say(
        "syscall hooks:",
        &format!(
            "{price}each is removed where it was added, not by a boot (mitbench removes none)"
        ),
        2,
    );
    for hook in &plan.hooks {
        out.say(
            &format!("  - {}:", terminal_safe(&hook.hook, false)),
            &terminal_safe(&hook.removed_by, false),
            4,
        );
    }
}

/// The attack-vector controls and a boot per vector whose option would
/// turn something off here, numbered on from the boots above.
fn vector_boots(plan: &Plan, out: &mut Prose, numbered: usize) {
    let c = &plan.vectors;
    let _ = writeln!(out);
    if let Some(why) = &c.unavailable {
        out.say("attack vectors:", &format!("{why}: no vector boots"), 2);
    } else {
        let names = |vs: &[Vector]| vs.iter().map(|v| v.name()).collect::<Vec<_>>().join(", ");
        let off = match c.disabled.is_empty() {
            true => String::new(),
            false => format!("; off: {}", names(&c.disabled)),
        };
        out.say(
            "attack vectors:",
            &format!("enabled: {}{off}", names(&c.enabled)),
            2,
        );
    }
    for problem in &c.problems {
        out.say("  note:", problem, 4);
    }
    for (i, boot) in plan.vector_boots.iter().enumerate() {
        let _ = writeln!(
            out,
            "{}. without {} (adds {} to mitigations=):",
            numbered + i + 1,
            boot.vector.name(),
            boot.vector.option()
        );
        let _ = writeln!(out, "   {}", terminal_safe(&boot.cmdline, false));
        out.say("   turns off:", &boot.turns_off.join(", "), 5);
        if !boot.leaves.is_empty() {
            out.say("   leaves:", &boot.leaves.join(", "), 5);
        }
        let predicted = match &boot.predicted {
            Some(p) => {
                let mut parts = Vec::new();
                if let Some(f) = p.getpid_floor_ns {
                    parts.push(format!("{} of getpid", run_summary::floor(f)));
                }
                if let Some(f) = p.per_switch_ns {
                    parts.push(format!("+{} a switch", run_summary::ns(f)));
                }
                format!("{}, as run {} replayed them", parts.join(", "), p.from_run)
            }
            None => "not priced: the history's last run of this machine priced none of them \
                     (mitbench run --probe kernel prices them)"
                .into(),
        };
        out.say("   saves:", &predicted, 5);
        out.say(
            "   protects:",
            &format!("{}: the saving is its price, not advice", boot.protects),
            5,
        );
        if let Some(set) = &boot.measured {
            let _ = writeln!(out, "   measured: set {set}");
        }
    }
}

/// On a guest, its host's boots: the guest cannot make them, and its
/// command line is the same under each, so the sets are told apart by
/// when they ran and compared two at a time.
fn host_boots(plan: &Plan, out: &mut Prose) {
    if plan.host_boots.is_empty() {
        return;
    }
    let _ = writeln!(out);
    out.say(
        "the host's boots:",
        "this is a guest: its host's guest_host mitigations run on each of its VM exits and are \
         switched on the host's command line, not on this one. On each, while the host runs it: \
         `mitbench run --runs 5 --probe guest --probe memory/shootdown`; then `mitbench compare \
         A..B C..D` (the set under the host's present boot, then this one) names the host's \
         side, per exit",
        2,
    );
    for b in &plan.host_boots {
        out.say(
            &format!("  - {}:", b.adds),
            &format!("turns off {}; shows in {}", b.turns_off, b.shows_in),
            4,
        );
    }
}
