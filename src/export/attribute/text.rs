//! An attribution (`crate::attribute`) as text: the sets and what each
//! has off, the mitigations separated, per family a table of each row's
//! whole toll, its parts and what they leave, then each mitigation's reach.

use crate::attribute::{Attributed, Attribution, RowParts, SetRole, SwitchKind};
use crate::compare::Verdict;
use crate::export::number::format_cost;
use crate::export::terminal::Prose;
use crate::export::text_table::{Style, fit, table};
use std::fmt::Write as _;

/// A figure with its interval's half-width, in parentheses where it is
/// within noise or under the threshold.
fn cell(estimate: Option<Attributed>) -> String {
    let Some(e) = estimate else {
        return "-".to_string();
    };
    let sign = if e.ns.value >= 0.0 { "+" } else { "" };
    let half =
        e.ns.half_width()
            .map_or_else(String::new, |half| format!(" ±{}", format_cost(half)));
    let text = format!("{sign}{}{half}", format_cost(e.ns.value));
    match e.verdict {
        Verdict::Same => format!("({text})"),
        _ => text,
    }
}

fn roles(roles: &[SetRole]) -> String {
    roles
        .iter()
        .map(|r| match r {
            SetRole::Present => "present: every mitigation on".to_string(),
            SetRole::AllOff => "every mitigation off".to_string(),
            SetRole::Without(name) => format!("without {name}"),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

pub fn render(a: &Attribution, style: Style, width: usize) -> String {
    let mut out = Prose::new(width);
    out.heading("Where each row's toll comes from", &a.machine);
    conditions(&mut out, a);
    tables(&mut out, a, style, width);
    let _ = writeln!(out);
    findings(&mut out, a);
    out.text
}

/// The sets, the mitigations they separate, and what they leave.
fn conditions(out: &mut Prose, a: &Attribution) {
    for set in &a.recognised.sets {
        out.say(
            &format!("set {}:", set.name),
            &format!(
                "{} run(s), boot \"{}\"; {}",
                set.runs,
                set.boot.name,
                roles(&set.roles)
            ),
            4,
        );
    }
    for s in &a.recognised.switches {
        out.say(
            &format!("mitigation {} ({}):", s.name, kind(s.kind)),
            &format!("{} (off: {})", s.present, s.off_by),
            4,
        );
    }
    if !a.recognised.not_separated.in_force.is_empty() {
        let names: Vec<&str> = a
            .recognised
            .not_separated
            .in_force
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        out.say(
            "in force in every set, not separated:",
            &names.join(", "),
            4,
        );
    }
    for boot in &a.recognised.not_separated.boots {
        out.say(
            "boot not measured:",
            &format!(
                "\"{}\" ({})",
                boot.name,
                boot.adds.as_deref().unwrap_or("the present boot")
            ),
            4,
        );
    }
    if a.recognised.switches.is_empty() {
        out.say(
            "note:",
            "every set has the same mitigations on: there is nothing to separate",
            2,
        );
    } else if a.recognised.roles.all_off.is_none() {
        out.say(
            "note:",
            "no set has every mitigation above off: the whole toll and what the parts leave are \
             not measured",
            2,
        );
    }
}

/// A table per family: each row's whole toll and parts.
fn tables(out: &mut Prose, a: &Attribution, style: Style, width: usize) {
    let mut header = vec![
        "row".to_string(),
        "present ns".to_string(),
        "whole toll".to_string(),
    ];
    header.extend(a.recognised.names());
    let left = has_residual(a);
    if left {
        header.push("left".to_string());
    }
    for (family, rows) in crate::measure::probes::by_family(&a.rows, |r| &r.key.family) {
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{} — {}", family.name, family.title);
        // A terminal's table keeps to its width: each probe's id heads its
        // variants (as the run's and compare's tables do).
        let terminal = style == Style::Terminal;
        let mut t = table(
            style,
            comfy_table::ContentArrangement::Dynamic,
            header.clone(),
            1..header.len(),
        );
        let mut probe = "";
        for r in &rows {
            let mut cells = row(r, left);
            if terminal {
                if r.key.id != probe {
                    probe = &r.key.id;
                    t.add_row([r.key.id.as_str()]);
                }
                cells[0] = format!("  {}", variant(r));
            }
            t.add_row(cells);
        }
        if terminal {
            fit(&mut t, Some(width));
        }
        let _ = writeln!(out, "{t}");
    }
}

/// Each mitigation's reach, the scores against the boots, and how to
/// read the tables.
fn findings(out: &mut Prose, a: &Attribution) {
    for reach in &a.reach {
        let shares: Vec<String> = reach
            .families
            .iter()
            .map(|f| format!("{} {:.0}% ({} rows)", f.family, f.share_pct, f.rows))
            .collect();
        out.say(
            &format!("{}:", reach.name),
            &format!(
                "moves {} row(s); share of the toll: {}",
                reach.moves.len(),
                if shares.is_empty() {
                    "no family's toll is beyond noise".to_string()
                } else {
                    shares.join(", ")
                }
            ),
            4,
        );
    }
    if !a.gaps.is_empty() {
        out.say("not measured in every set:", &a.gaps.join(", "), 4);
    }
    for line in a.floors.iter().flat_map(super::floor_lines) {
        out.say("kernel floors:", &line, 4);
    }
    for line in a.returns.iter().flat_map(super::return_lines) {
        out.say("return toll:", &line, 4);
    }
    out.say("boots:", &a.boot_variance.summary, 4);
    out.say("marked:", &super::marked(a), 4);
    out.say(
        "reading:",
        &format!(
            "nanoseconds an item; the whole toll is the present set less the set with every \
             mitigation off, a mitigation's part the present set less the set without it only, \
             left the whole less the parts (mitigations that overlap leave it negative, ones \
             that cost more together positive); ± is the 95% interval's half-width; a figure in \
             parentheses is within noise or under {}%, or not found when its column (the whole, \
             a part, left) is held to the false discovery rate over its rows{}.",
            a.threshold_pct,
            if a.rows.iter().any(|r| r.note.is_some()) {
                "; (slow): some sets' figure is the slow state's, others' the quiet state's, so \
                 the row has figures but no verdicts"
            } else {
                ""
            }
        ),
        2,
    );
}

fn variant(r: &RowParts) -> String {
    let slow = if r.note.is_some() { " (slow)" } else { "" };
    format!("{}{slow}", r.key.variant)
}

fn kind(kind: SwitchKind) -> &'static str {
    match kind {
        SwitchKind::Boot => "boot",
        SwitchKind::Process => "process control",
    }
}

/// Whether any row has a residual: with one mitigation separated it is
/// nothing by construction, and its column is left out.
pub(super) fn has_residual(a: &Attribution) -> bool {
    a.rows.iter().any(|r| r.residual.is_some())
}

/// A row's cells: its name, the present figure, the whole toll, each part
/// and, where `left`, what they leave.
pub(super) fn row(r: &RowParts, left: bool) -> Vec<String> {
    let mut cells = vec![
        format!("{} {}", r.key.id, variant(r)),
        format_cost(r.present_ns),
        cell(r.whole),
    ];
    cells.extend(r.parts.iter().map(|p| cell(*p)));
    if left {
        cells.push(cell(r.residual));
    }
    cells
}
