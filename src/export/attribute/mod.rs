//! An attribution across boots: for a terminal or a review ([`text`]),
//! and as an HTML page ([`html`]).

pub mod html;
pub mod text;

pub use html::render as render_html;
pub use text::render;

use crate::answer::returns::{ReturnScores, TollMove};
use crate::attribute::Attribution;
use crate::attribute::floors::{FloorScore, FloorScores};
use crate::export::run::summary::{ns, priced};

/// How many of its figures the attribution marked, each column held to the
/// false discovery rate over its rows.
pub(crate) fn marked(a: &Attribution) -> String {
    let d = a.discoveries;
    crate::export::false_discoveries(d.marked, d.tested, d.false_expected, "figures")
}

/// The kernel's price list against the boots, a sentence a switch, then
/// the record on this CPU model: what the text and the page say.
pub(crate) fn floor_lines(f: &FloorScores) -> Vec<String> {
    if let Some(why) = &f.unscored {
        return vec![format!("not scored: {why}")];
    }
    let mut lines: Vec<String> = f.scores.iter().chain(&f.whole).map(scored).collect();
    if !f.record.is_empty() {
        let held: Vec<String> = f
            .record
            .iter()
            .map(|h| format!("{} {} of {}", h.switch, h.honoured, h.scored))
            .collect();
        lines.push(format!(
            "record on {} (pairs of boots that honoured the floor): {}",
            f.cpu_model,
            held.join(", ")
        ));
    }
    lines.push(format!(
        "floors from {}: at least what each mitigation's sequences take of getpid, as the \
         price list replays them in user mode; a part below its floor says the replay or the \
         boot is not what the kernel runs",
        f.floors_from
    ));
    lines
}

/// The return toll against the boots: the present toll, then a sentence a
/// boot.
pub(crate) fn return_lines(r: &ReturnScores) -> Vec<String> {
    let mut lines = vec![format!(
        "{} made from a function pays {} on the return after the crossing in the present set \
         (os/syscall-return; the mean of its runs)",
        r.syscall,
        ns(r.present_ns)
    )];
    lines.extend(r.scores.iter().map(|s| {
        let without = if s.without == "all" {
            "every mitigation off".to_string()
        } else {
            format!("without {}", s.without)
        };
        let verdict = match s.outcome {
            TollMove::Gone => "gone: this boot's change explains the toll",
            TollMove::Fell => "fell, some stays: it explains a part",
            TollMove::FellUnresolved => {
                "fell: it explains a part, perhaps all (what is left is not shown above zero \
                 nor under a tenth of the toll; more runs tell)"
            }
            TollMove::Stays => "stays: it does not explain the toll",
        };
        format!(
            "{without} (boot {}): {}, less by {}: {verdict}",
            s.boot,
            ns(s.toll_ns),
            ns(s.fell_ns)
        )
    }));
    lines
}

fn scored(s: &FloorScore) -> String {
    let of = format!("{} ({})", s.switch, s.mitigations.join(", "));
    let Some(part) = s.part_ns else {
        return format!("{of}: no measured part of getpid (no set without it alone)");
    };
    let Some(floor) = s.floor_ns else {
        let prices: Vec<String> = s
            .prices
            .iter()
            .filter_map(|p| Some(priced(p, p.price_ns?)))
            .collect();
        return format!(
            "{of}: part of getpid {}; no floor (its sequences: {})",
            ns(part),
            prices.join(", ")
        );
    };
    let verdict = |honours: Option<bool>| match honours {
        Some(true) => "honoured",
        Some(false) => "NOT honoured: the part lies below it",
        None => "not scored",
    };
    let predicted = s.predicted_ns.map_or_else(String::new, |p| {
        format!(
            "; predicted with the counts given {} ({})",
            ns(p),
            verdict(s.honours_prediction)
        )
    });
    let beyond = s
        .beyond_floor_ns
        .map_or_else(String::new, |b| format!("; beyond the floor {}", ns(b)));
    format!(
        "{of}: part of getpid {} against a floor of {}: {}{beyond}{predicted}",
        ns(part),
        ns(floor),
        verdict(s.honours_floor)
    )
}
