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
        "compare the present boot's set with each other boot's: mitbench compare 1..5 6..10 \
         (history ranges); the mitigations=off boot gives the whole toll, each other boot the \
         part of the mitigation it switched off",
        2,
    );
    let _ = writeln!(out, "\nto make a boot once (mitbench never reboots):");
    for how in crate::plan::HOW_TO_BOOT {
        say(&mut out, "  -", how, 4);
    }
    out
}
