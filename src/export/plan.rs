//! A boot plan (`crate::plan`) as text that keeps to a width; the command
//! lines stay whole, one to a line, for copying.

use super::terminal::{Prose, terminal_safe};
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
    out.text
}
