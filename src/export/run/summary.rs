//! The summary of a run (`answer::summary`) as text lines that fit a
//! width, as Markdown, and as an HTML section: the same entries, laid out.

use crate::analysis::figure::Figure;
use crate::answer::prices::{KernelPrice, KernelPrices};
use crate::answer::summary::{Answer, Quantity, Toll, TollStatus, Unit};
use crate::answer::vectors::{AttackVectors, VectorCost};
use crate::export::number::format_cost;
use crate::export::text_table::wrap;
use crate::mitigations::vectors::Vector;
use std::fmt::Write as _;

/// Columns the label takes before a toll's figures.
const LABEL: usize = 19;

/// One figure as a reader reads it: "retpoline adds +9.9 ns ±0.3".
fn quantity(q: &Quantity) -> String {
    // Times in the unit that keeps them short: `37,421 ns` reads `37.4 us`.
    let (scale, unit) = match q.unit {
        Unit::Ns | Unit::Us => {
            let ns = if q.unit == Unit::Ns { 1.0 } else { 1e3 };
            match (q.figure.value * ns).abs() {
                v if v >= 1e6 => (ns / 1e6, " ms"),
                v if v >= 1e4 => (ns / 1e3, " us"),
                _ => (ns, " ns"),
            }
        }
        Unit::Times => (1.0, "x"),
        Unit::Batch => (1.0, ""),
    };
    let value = match q.unit {
        // A batch is whole: grouped past a thousand as a cost is, never
        // with decimals below it.
        Unit::Batch if q.figure.value < 1000.0 => format!("{:.0}", q.figure.value),
        Unit::Batch => format_cost(q.figure.value),
        _ => format!("{}{unit}", format_cost(q.figure.value * scale)),
    };
    let signed = if q.what.ends_with('+') && q.figure.value >= 0.0 {
        format!("+{value}")
    } else {
        value
    };
    let spread = match q.figure.ci95 {
        Some([lo, hi]) if q.figure.lopsided() => {
            let end = |x: f64| format_cost(x * scale);
            format!(" [{}, {}]", end(lo), end(hi))
        }
        _ => q
            .figure
            .half_width()
            .map(f64::abs)
            .filter(|half| half.is_finite() && *half > 0.0)
            .map_or_else(String::new, |half| {
                format!(" ±{}", two_digits(half * scale))
            }),
    };
    let note = q
        .note
        .as_ref()
        .map_or_else(String::new, |note| format!(" ({note})"));
    format!("{} {signed}{spread}{note}", q.what.trim_end_matches('+'))
}

/// A spread to two significant digits (0.0042, 0.31, 27, 1,200).
fn two_digits(x: f64) -> String {
    if x >= 100.0 {
        format_cost(x)
    } else {
        let decimals = (1.0 - x.log10().floor()).max(0.0) as usize;
        format!("{x:.decimals$}")
    }
}

/// Where a toll's figures come from: each probe once, with its variants.
fn sources(toll: &Toll) -> String {
    let froms: Vec<&crate::answer::summary::From> = match &toll.outcome {
        TollStatus::Measured { figures } => figures.iter().map(|q| &q.from).collect(),
        TollStatus::Unsupported { from, .. } => vec![from],
    };
    let mut probes: Vec<(&str, Vec<&str>)> = Vec::new();
    for f in froms {
        match probes.iter_mut().find(|(p, _)| *p == f.probe) {
            Some((_, variants)) if !variants.contains(&f.variant.as_str()) => {
                variants.push(&f.variant)
            }
            Some(_) => {}
            None => probes.push((&f.probe, vec![&f.variant])),
        }
    }
    probes
        .iter()
        .map(|(p, v)| format!("{p} {}", v.join(",")))
        .collect::<Vec<_>>()
        .join("; ")
}

fn body(toll: &Toll) -> String {
    match &toll.outcome {
        TollStatus::Measured { figures } => {
            figures.iter().map(quantity).collect::<Vec<_>>().join("; ")
        }
        TollStatus::Unsupported { reason, .. } => format!("unsupported: {reason}"),
    }
}

/// The summary in lines of at most `width` columns (a word longer than
/// the width stays whole).
pub fn lines(summary: &Answer, width: usize) -> Vec<String> {
    let mut out = vec![format!(
        "What the mitigations cost on this machine ({})",
        summary.machine
    )];
    let in_force: Vec<String> = summary
        .in_force
        .iter()
        .map(|f| match short(&f.line) {
            what if what.chars().count() <= 20 => format!("{} ({what})", f.vulnerability),
            _ => f.vulnerability.clone(),
        })
        .collect();
    // Where the vectors paragraph names every mitigation in force, the
    // files' line would repeat it on a screen with no line to spare (the
    // JSON, the Markdown and the report keep it).
    let vectors = &summary.attack_vectors;
    if vectors.controls.unavailable.is_some() || !vectors.unkept.is_empty() {
        out.extend(wrap(
            "in force:",
            &if in_force.is_empty() {
                "none the vulnerability files name".to_string()
            } else {
                in_force.join(", ")
            },
            2,
            width,
        ));
    }
    let others: Vec<&str> = summary
        .command_line
        .iter()
        .map(String::as_str)
        .filter(|w| !w.starts_with("mitigations="))
        .collect();
    if !others.is_empty() {
        out.extend(wrap("command line:", &others.join(" "), 2, width));
    }
    out.extend(wrap(
        "vectors, replayed:",
        &attack_vectors(&summary.attack_vectors),
        2,
        width,
    ));
    for toll in &summary.tolls {
        let label = format!("{:<LABEL$}", toll.kind.label());
        let text = format!("{} [{}]", body(toll), sources(toll));
        out.extend(wrap(&label, &text, LABEL + 1, width));
    }
    if let Some(hooks) = hooks(summary) {
        out.extend(wrap("syscall hooks:", &hooks, 2, width));
    }
    if let Some(first) = summary.attributed.first() {
        let parts: Vec<&str> = summary.attributed.iter().map(|p| p.text.as_str()).collect();
        out.extend(wrap(
            "attributed:",
            &format!("{} (run sets {})", parts.join("; "), first.sets),
            2,
            width,
        ));
    }
    // What the run cannot tell closes the price list's paragraph, where
    // there is one: a line of the screen the Intel price list needs.
    let rest = format!(
        "not measured: {} (the boots that would: `mitbench plan`)",
        not_measured(summary).trim_end_matches('.')
    );
    match kernel_prices(&summary.kernel) {
        Some(prices) => out.extend(wrap(
            "kernel, replayed:",
            &format!("{prices}; {rest}"),
            2,
            width,
        )),
        None => out.extend(wrap(&rest, "", 2, width)),
    }
    out
}

/// The hooks every syscall pays for and their price, in one paragraph;
/// None where no hook is in force and none was priced (the answer of a
/// machine without hooks is no longer for them).
pub fn hooks(summary: &Answer) -> Option<String> {
    let named: Vec<&str> = summary.hooks.iter().map(|h| h.hook.as_str()).collect();
    let price = match &summary.hook_toll {
        Some(toll) => format!(
            "{} against this boot's newest stored run without them",
            toll.priced()
        ),
        None if named.is_empty() => return None,
        None => "not priced (no stored run of this boot without them)".to_string(),
    };
    let named = match named.is_empty() {
        true => "none in force now".to_string(),
        false => named.join(", "),
    };
    Some(format!(
        "{named}: {price}; what removes each: `mitbench plan`"
    ))
}

/// The vector controls and each enabled vector's price in one paragraph:
/// "mitigations=auto,no_guest_host: user_kernel keeps retpoline, ...:
/// ≥ 17.8 ns of getpid, +33 ns ±5 a switch; ...".
pub fn attack_vectors(v: &AttackVectors) -> String {
    let c = &v.controls;
    if let Some(why) = &c.unavailable {
        return why.clone();
    }
    let (bare, kept): (Vec<&VectorCost>, Vec<&VectorCost>) =
        v.vectors.iter().partition(|v| v.keeps.is_empty());
    let mut parts: Vec<String> = kept.into_iter().map(vector_cost).collect();
    parts.extend(kept_by_several(&v.vectors));
    let names = |vs: &mut dyn Iterator<Item = Vector>| vs.map(Vector::name).collect::<Vec<_>>();
    if !bare.is_empty() {
        let bare = names(&mut bare.iter().map(|v| v.vector));
        parts.push(format!("{}: none", bare.join(", ")));
    }
    if !c.disabled.is_empty() {
        let guests = match v.guests.split(':').next() {
            Some(g @ ("can run guests" | "runs no guests")) => format!(" (this machine {g})"),
            _ => String::new(),
        };
        let off = names(&mut c.disabled.iter().copied());
        parts.push(format!("{} off{guests}", off.join(", ")));
    }
    // This kernel's vectors are not the whole bill of a guest: its host's
    // guest_host runs on every exit, and only the host's boots move it.
    if v.pays_its_host {
        parts.push(
            "its host's guest_host: on each VM exit (that line), set by the host's boot".into(),
        );
    }
    // The word itself is in the JSON; the answer says what it did, and
    // what of it the kernel does not take as written.
    parts.extend(c.problems.iter().cloned());
    parts.join("; ")
}

/// "user_kernel ≥ 17.8 ns of getpid, +33 ns ±5 a switch (retpoline, RSB
/// filling)": what `no_<vector>` would turn off and its price.
fn vector_cost(v: &VectorCost) -> String {
    let mut prices: Vec<String> = Vec::new();
    if let Some(f) = v.getpid_floor_ns {
        prices.push(format!("{} of getpid", floor(f)));
    }
    if let Some(f) = v.per_switch_ns {
        prices.push(format!("+{} a switch", ns(f)));
    }
    let mut off: Vec<String> = v.turns_off.iter().map(|m| brief(m)).collect();
    if !v.leaves.is_empty() && !off.is_empty() {
        off.push(format!("leaving {}", v.leaves.join(", ")));
    }
    match (prices.is_empty(), off.is_empty()) {
        (_, true) => format!("{} turns none off alone", v.vector.name()),
        (true, false) => format!(
            "{} ({}): not priced in this run",
            v.vector.name(),
            off.join(", ")
        ),
        (false, false) => format!(
            "{} {} ({})",
            v.vector.name(),
            prices.join(", "),
            off.join(", ")
        ),
    }
}

/// The mitigations in force that no one vector turns off, each with the
/// vectors that keep it: "user_kernel+user_user keep VERW buffer
/// clearing".
fn kept_by_several(vectors: &[VectorCost]) -> Vec<String> {
    let mut shared: Vec<(&str, Vec<&str>)> = Vec::new();
    for v in vectors {
        for m in v.keeps.iter().filter(|m| !v.turns_off.contains(m)) {
            match shared.iter_mut().find(|(name, _)| name == m) {
                Some((_, by)) => by.push(v.vector.name()),
                None => shared.push((m, vec![v.vector.name()])),
            }
        }
    }
    shared
        .into_iter()
        .map(|(m, by)| format!("{} keep {}", by.join("+"), brief(m)))
        .collect()
}

/// A mitigation's name without its parenthesis, its alternatives run
/// together: "retpoline/IBRS/eIBRS" (which one runs, the price list says).
fn brief(name: &str) -> String {
    short_name(name).replace(" / ", "/")
}

/// What a run cannot tell of the kernel's mitigations.
pub fn not_measured(summary: &Answer) -> String {
    let k = &summary.kernel;
    if k.prices.iter().any(|p| p.price_ns.is_some()) {
        "the rest.".to_string()
    } else if !k.prices.is_empty() {
        format!(
            "the kernel's own entry and return mitigations (`mitbench run --probe {}` prices \
             each per occurrence).",
            crate::mitigations::sequences::PROBE
        )
    } else {
        "the kernel's own entry and return mitigations.".to_string()
    }
}

/// A figure in ns with its half-width: "19.5 ns ±0.71".
pub fn ns(f: Figure) -> String {
    let half = f
        .half_width()
        .filter(|h| h.is_finite() && *h > 0.0)
        .map_or_else(String::new, |h| format!(" ±{}", two_digits(h)));
    format!("{} ns{half}", format_cost(f.value))
}

/// A floor as the lower bound it is, one-sided at 95%: "≥ 17.5 ns" (a
/// figure ± a half-width claimed both sides of a bound); "≥ ~19 ns" where
/// the price has no interval.
pub fn floor(f: Figure) -> String {
    match f.lower_bound_95() {
        Some(bound) => format!("≥ {} ns", format_cost(bound.max(0.0))),
        None => format!("≥ ~{} ns", format_cost(f.value)),
    }
}

/// One sequence's price as the summary and `tax` say it: "≥ 19 ns of
/// getpid at entry", "+31 ns per context switch", "+6 ns per kernel
/// return" (that the count inside the kernel is unknown is said once, by
/// the list).
pub fn priced(p: &KernelPrice, price: Figure) -> String {
    // A price without an interval says so, as every figure of the answer.
    let bare = if price.ci95.is_none() {
        " (no interval: too few pairs of rounds)"
    } else {
        ""
    };
    match p.getpid_floor_ns {
        Some(bound) => format!("{} of getpid {}{bare}", floor(bound), p.occurs.describe()),
        None => format!("+{} {}{bare}", ns(price), p.occurs.describe()),
    }
}

/// A mitigation's name without what its parenthesis explains: "ITS", not
/// "ITS (indirect target selection thunks)".
fn short_name(name: &str) -> &str {
    name.split(" (").next().unwrap_or(name)
}

/// `item` added to `mitigation`'s group, which starts where it is first
/// seen: the groups keep the price list's order.
fn grouped<'a, T>(groups: &mut Vec<(&'a str, Vec<T>)>, mitigation: &'a str, item: T) {
    match groups.iter_mut().find(|(m, _)| *m == mitigation) {
        Some((_, items)) => items.push(item),
        None => groups.push((mitigation, vec![item])),
    }
}

/// The kernel's mitigations in force, each sequence's price per time the
/// kernel runs it, grouped by mitigation, and the null syscall's floor:
/// None where this run priced none of them.
pub fn kernel_prices(k: &KernelPrices) -> Option<String> {
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    // A mitigation's rows this run did not price, by name: one catalogue
    // name can cover two CPUs' sequences (retbleed's untraining and SRSO's
    // safe return), and the rows say which of them is missing.
    let mut unpriced: Vec<(&str, Vec<&str>)> = Vec::new();
    for p in &k.prices {
        match p.price_ns {
            Some(price) => grouped(&mut groups, p.mitigation, priced(p, price)),
            None => grouped(&mut unpriced, p.mitigation, p.variant),
        }
    }
    if groups.is_empty() && k.unreplayed.is_empty() {
        return None;
    }
    let mut line: Vec<String> = groups
        .iter()
        .map(|(m, texts)| format!("{}: {}", short_name(m), texts.join(", ")))
        .collect();
    // A mitigation in force whose sequence this CPU does not need, or
    // whose sequence here (retbleed's untrained return on Zen 2, say) the
    // price list does not replay.
    // Said once a mitigation, however many of its sequences it skips.
    let mut said: Vec<&str> = groups.iter().map(|(m, _)| *m).collect();
    for n in k.not_run.iter().filter(|n| n.in_force && n.cpu_needs_none) {
        if !said.contains(&n.mitigation) {
            said.push(n.mitigation);
            line.push(format!("{}: none on this CPU", short_name(n.mitigation)));
        }
    }
    // Every other one in force, with why it has no price here.
    for u in &k.unreplayed {
        line.push(format!(
            "{} ({}): {}",
            short_name(u.mitigation),
            u.vulnerabilities.join(", "),
            u.why
        ));
    }
    // A sequence a task asks for, which this kernel does not offer: said,
    // since a user reading for its price would otherwise see nothing.
    for n in k
        .not_run
        .iter()
        .filter(|n| !n.in_force && n.asked_by.is_some())
    {
        line.push(format!(
            "{} on request: not offered ({} names none)",
            short_name(n.mitigation),
            n.vulnerabilities.join(", ")
        ));
    }
    if !unpriced.is_empty() {
        let each = unpriced
            .iter()
            .map(|(m, rows)| format!("{} ({})", short_name(m), rows.join(", ")))
            .collect::<Vec<_>>();
        line.push(format!("not priced in this run: {}", each.join(", ")));
    }
    if let (Some(floor), Some(getpid)) = (k.getpid_floor_ns, k.getpid_ns) {
        line.push(format!(
            "together {} of getpid's {} ns",
            self::floor(floor),
            format_cost(getpid.value)
        ));
    }
    // Said once for every price per occurrence inside the kernel.
    let uncounted = k
        .prices
        .iter()
        .any(|p| p.price_ns.is_some() && p.occurs.per_syscall().is_none());
    if uncounted {
        line.push("counts in the kernel unknown".into());
    }
    Some(line.join("; "))
}

/// The boots that would measure the kernel's own mitigations, each
/// parameter between `quote`s.
fn next_step(summary: &Answer, quote: &str) -> String {
    format!(
        "Boot with {}, then {}.",
        summary
            .next_step
            .boots
            .iter()
            .map(|b| format!("{quote}{b}{quote}"))
            .collect::<Vec<_>>()
            .join(" or "),
        summary.next_step.then
    )
}

/// A vulnerability line without its "Mitigation: " and past its first
/// clause: what the kernel does, in a few words.
fn short(line: &str) -> String {
    let text = line
        .strip_prefix("Mitigation: ")
        .or_else(|| line.strip_prefix("Vulnerable: "))
        .unwrap_or(line);
    text.split(';').next().unwrap_or(text).trim().to_string()
}

/// The summary as Markdown: a heading, the mitigations, a table of tolls.
pub fn markdown(summary: &Answer) -> String {
    // Text from the machine stays on its line and out of the code spans.
    let text = |t: &str| t.replace(['\n', '\r'], " ").replace('`', "'");
    let mut out = format!(
        "## What the mitigations cost on this machine ({})\n\n",
        summary.machine
    );
    for f in &summary.in_force {
        let _ = writeln!(
            out,
            "- in force: `{}`: {} (off: `{}`)",
            text(&f.vulnerability),
            text(&f.line),
            f.off
        );
    }
    if !summary.command_line.is_empty() {
        let _ = writeln!(
            out,
            "- command line: `{}`",
            text(&summary.command_line.join(" "))
        );
    }
    out.push('\n');
    for [label, figures, from] in rows(summary) {
        let _ = writeln!(out, "- **{label}**: {figures} (`{from}`)");
    }
    if let Some(hooks) = hooks(summary) {
        let _ = writeln!(out, "\nHooks on the syscall path: {}.", text(&hooks));
    }
    if let Some(first) = summary.attributed.first() {
        let parts: Vec<&str> = summary.attributed.iter().map(|p| p.text.as_str()).collect();
        let _ = writeln!(
            out,
            "\nAttributed over stored run sets {}: {}.",
            first.sets,
            text(&parts.join("; "))
        );
    }
    let _ = writeln!(
        out,
        "\nAttack vectors, replayed in user mode: {}.",
        text(&attack_vectors(&summary.attack_vectors))
    );
    if let Some(prices) = kernel_prices(&summary.kernel) {
        let _ = writeln!(
            out,
            "\nThe kernel's mitigations, replayed in user mode: {}.",
            text(&prices)
        );
    }
    let _ = writeln!(
        out,
        "\nNot measured here: {} {}\n",
        not_measured(summary),
        next_step(summary, "`")
    );
    out
}

/// Each toll as the table rows of the report and the Markdown export
/// show it: label, figures, and where they come from.
pub fn rows(summary: &Answer) -> Vec<[String; 3]> {
    summary
        .tolls
        .iter()
        .map(|t| [t.kind.label().to_string(), body(t), sources(t)])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::summary::{From, Unit};

    fn wait(figure: Figure) -> String {
        quantity(&Quantity {
            what: "lookup p99 wait".into(),
            figure,
            unit: Unit::Ns,
            from: From {
                probe: "teardown/index-2^19".into(),
                variant: "K=1".into(),
            },
            note: None,
        })
    }

    #[test]
    fn a_lopsided_interval_is_printed_as_its_ends() {
        // A p99 wait read on a log scale: four times as far above.
        assert_eq!(
            wait(Figure::new(4_943.0, Some([1_500.0, 20_700.0]))),
            "lookup p99 wait 4,943 ns [1,500, 20,700]"
        );
        // Within twice as far on one side as on the other: a half-width.
        let even = Figure::new(500.0, Some([480.0, 530.0]));
        assert_eq!(wait(even), "lookup p99 wait 500 ns ±30");
    }
}
