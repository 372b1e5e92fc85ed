//! A boot plan (`crate::plan`) as text that keeps to a width; the command
//! lines stay whole, one to a line, for copying.

use super::terminal::terminal_safe;
use super::text_table::write_wrapped;
use crate::plan::Plan;
use std::fmt::Write as _;

pub fn render(plan: &Plan, width: usize) -> String {
    let mut out = String::new();
    let say = |out: &mut String, first: &str, text: &str, indent: usize| {
        write_wrapped(out, first, &terminal_safe(text, false), indent, width)
    };
    say(
        &mut out,
        "Boots that separate the kernel's mitigations on this machine",
        &format!("({})", plan.machine),
        2,
    );
    for f in &plan.in_force {
        say(
            &mut out,
            &format!("in force: {}:", f.vulnerability),
            &format!("{} (off: {})", f.line, f.off),
            4,
        );
    }
    if let Some(note) = &plan.note {
        say(&mut out, "note:", note, 2);
    }
    let _ = writeln!(out);
    for (i, boot) in plan.boots.iter().enumerate() {
        let what = match &boot.adds {
            None => "the present boot".to_string(),
            Some(word) => format!("adds {word}"),
        };
        let _ = writeln!(out, "{}. {} ({what}):", i + 1, boot.name);
        let _ = writeln!(out, "   {}", terminal_safe(&boot.cmdline, false));
    }
    let _ = writeln!(out);
    say(&mut out, "on each boot:", &plan.run, 2);
    say(
        &mut out,
        "then:",
        "mitbench attribute with one set a boot (history ranges: mitbench attribute 1..5 \
         6..10 11..15 ...): each row's whole toll (the present boot against mitigations=off) \
         and each mitigation's part (against the boot without it only), with intervals",
        2,
    );
    let _ = writeln!(out, "\nto make a boot once (mitbench never reboots):");
    for how in crate::plan::HOW_TO_BOOT {
        say(&mut out, "  -", how, 4);
    }
    out
}
