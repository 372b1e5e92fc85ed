//! The terminal report: one table per family, then what the columns mean.

use crate::analysis::figure::half_width;
use crate::analysis::rounds::Basis;
use crate::answer::summary::Answer;
use crate::export::number::{format_cost, format_ratio};
use crate::export::text_table::{DEFAULT_WIDTH, Style, fit, table, write_wrapped};
use crate::export::{ExportError, Exporter, RunView};
use crate::measure::probes::Role;
use crate::measure::schedule::Stop;
use crate::store::results::{AmortizationFit, Record, RunDocument};
use comfy_table::{ColumnConstraint, ContentArrangement, Table, Width};
use std::fmt::Write as _;

/// The tables a terminal shows, keeping to `width` columns (long notes
/// become short tags, long cells wrap), or at their natural width where
/// `width` is None (`--wide`, every note whole).
pub struct TableExporter {
    pub width: Option<usize>,
    /// Where the answer goes: last, where a terminal leaves its reader, or
    /// first, where the reader of a log or a pipe (`| head`, a CI page)
    /// looks before 1,800 lines of tables.
    pub answer: AnswerAt,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerAt {
    First,
    Last,
}

impl Exporter for TableExporter {
    fn render(&self, run: &RunView) -> Result<Vec<u8>, ExportError> {
        Ok(render(run, self.width, self.answer).into_bytes())
    }
}

/// The answer block: what the mitigations cost here, in a few lines.
fn answer(out: &mut String, summary: &Answer, width: Option<usize>) {
    let summary_width = width.unwrap_or(DEFAULT_WIDTH);
    for line in super::summary::lines(summary, summary_width) {
        let _ = writeln!(out, "{line}");
    }
}

fn render(run: &RunView, width: Option<usize>, answer_at: AnswerAt) -> String {
    let doc = run.doc;
    let mut out = String::new();
    let text_width = width.unwrap_or(usize::MAX);
    let say = |out: &mut String, first: &str, text: &str, indent: usize| {
        write_wrapped(out, first, text, indent, text_width)
    };
    for line in header_lines(doc) {
        say(&mut out, "", &line, 2);
    }
    if answer_at == AnswerAt::First {
        let _ = writeln!(out);
        answer(&mut out, &run.summary, width);
    }
    let mut tags_used: Vec<Tag> = Vec::new();
    for (family, records) in doc.by_family() {
        let _ = writeln!(out);
        say(
            &mut out,
            "",
            &format!("{} — {}", family.name, family.title),
            2,
        );
        let _ = writeln!(out, "{}", family_table(&records, width, &mut tags_used));
        out.push_str(&super::phases::render(&records, width));
        for a in doc.fits_among(&records) {
            say(&mut out, " ", &fit_line(a), 4);
        }
        for advice in family_advice(doc, &records) {
            say(&mut out, "  advice:", advice, 4);
        }
    }
    if doc.interrupted {
        let _ = writeln!(
            out,
            "\ninterrupted: the run stopped early; the rows above are what was measured."
        );
    }
    let _ = writeln!(out);
    say(&mut out, "", &doc.machine_states.summary, 2);
    for (reason, rows) in doc.unsupported_by_reason() {
        say(
            &mut out,
            "unsupported here:",
            &format!("{reason} ({})", rows.join(", ")),
            2,
        );
    }
    say(&mut out, "", LEGEND, 0);
    if !tags_used.is_empty() {
        let tags: Vec<String> = tags_used
            .iter()
            .map(|t| format!("{}: {}", t.short(), t.means()))
            .collect();
        say(
            &mut out,
            "tags:",
            &format!(
                "{}. The whole notes: `mitbench history show RUN --wide`, the JSON, HTML and Markdown.",
                tags.join("; ")
            ),
            2,
        );
    }
    if answer_at == AnswerAt::Last {
        let _ = writeln!(out);
        answer(&mut out, &run.summary, width);
    }
    out
}

/// What ran where: the lines above the tables.
pub fn header_lines(doc: &RunDocument) -> Vec<String> {
    let mut lines = Vec::new();
    let inv = &doc.inventory;
    let s = &doc.settings;
    lines.push(format!(
        "mitbench {} · {} · kernel {} · preemption {} · TSC {}",
        doc.tool_version,
        inv.cpu.model_name,
        inv.kernel.release,
        inv.kernel.preemption.model,
        inv.tsc_mhz
            .map_or_else(|| "unknown".to_string(), |mhz| format!("{mhz:.1} MHz")),
    ));
    let others: Vec<String> = s
        .allowed_cpus
        .iter()
        .filter(|&&c| c != s.cpu)
        .map(|c| c.to_string())
        .collect();
    lines.push(format!(
        "measuring thread pinned to CPU {}; same-cpu co-runners share it, cross-cpu ones run on CPU {}",
        s.cpu,
        if others.is_empty() {
            "-".to_string()
        } else {
            others.join(",")
        },
    ));
    for warning in &inv.clock_warnings {
        lines.push(format!("warning: {warning}; ns figures may be off"));
    }
    lines
}

/// One amortization fit as a line of text.
pub fn fit_line(a: &AmortizationFit) -> String {
    let f = &a.fit;
    let half = |fitted: crate::analysis::figure::Figure| {
        fitted.half_width().map_or_else(String::new, format_cost)
    };
    format!(
        "{}{}: cost(B) = {} ±{} per {} + {} ±{} per batch / B ticks (R² {:.3}, {} sizes)",
        a.id,
        if a.group.is_empty() {
            String::new()
        } else {
            format!(" {}", a.group)
        },
        format_cost(f.per_item.value),
        half(f.per_item),
        a.item,
        format_cost(f.per_batch.value),
        half(f.per_batch),
        f.r2,
        f.points,
    )
}

/// The advice lines, from the fits and from the measured waits, for the
/// probes among `records`.
pub fn family_advice<'a>(
    doc: &'a RunDocument,
    records: &'a [&Record],
) -> impl Iterator<Item = &'a str> {
    let here = |id: &str| records.iter().any(|r| r.id == id);
    doc.advice
        .iter()
        .filter(move |a| here(&a.id))
        .map(|a| a.summary.as_str())
        .chain(
            doc.latency_advice
                .iter()
                .filter(move |a| here(&a.id))
                .map(|a| a.summary.as_str()),
        )
}

/// What the columns mean, under the tables.
pub const LEGEND: &str = "ns and ticks: the cost of one item in the machine's quiet state, at the \
    run's reference speed (the machine line): each round's figure carried to that speed by how the \
    row moves with the reference, then the median of the rounds the canary classed quiet in each \
    fork (fresh worker process), their geometric mean across forks (all rounds when the machine \
    showed one state). ticks: TSC reference cycles, not core cycles. ±CI: half-width of the 95% \
    interval where the next run's figure, read at the same reference speed, may land, as a \
    percentage of it: from the spread of the forks' figures (other processes, other minutes), and \
    at least this run's rounds (a run without reference readings: with the drift of the machine's \
    quiet speed added), and never under 0.2% of it (rounds that agree to the tick hold no next \
    run); rounds lifted by a burst inside them are left out; `few-quiet`: fewer quiet rounds than an interval needs, `no-quiet`: none \
    (the figure is a slow level's). \
    rounds: quiet rounds used / all rounds. × base and Δ ticks: the ratio and difference to the \
    probe's baseline from pairs of rounds run side by side (same pass, same fork), read as the \
    headlines are (medians in each fork, across forks their mean), ± the half-width of their 95% \
    interval (for Δ, where the next run's difference may land, never under 0.2% of the row's \
    cost nor a clock tick over a batch's items).";

/// The columns of a family's table, as the terminal and the HTML report
/// show them.
pub const COLUMNS: [&str; 9] = [
    "probe", "variant", "ns", "ticks", "±CI", "rounds", "× base", "Δ ticks", "note",
];

/// Why a measured row has no interval, in one word for the ±CI column:
/// no round at the quiet level, or fewer than an interval needs.
fn no_interval_word(r: &Record) -> &'static str {
    match r.cost.as_ref().map(|c| c.estimator) {
        Some(Basis::NoQuietRound) => "no-quiet",
        _ => "few-quiet",
    }
}

/// One record's cells under [`COLUMNS`].
pub fn cells(r: &Record) -> [String; 9] {
    let cost = r.cost.as_ref();
    let shown = cost.map(|c| c.shown_ticks());
    let ci = match shown.map(|s| (s.half_width_pct(), s.ci95, s.value)) {
        Some((Some(pct), _, _)) if pct < 0.005 => "<±0.01%".into(),
        Some((Some(pct), _, _)) => format!("±{pct:.2}%"),
        Some((None, Some(interval), m)) => format!("±{:.2}t", half_width(m, interval)),
        Some(_) => no_interval_word(r).into(),
        None => "-".into(),
    };
    let base = match (&r.vs_baseline, r.is_baseline()) {
        (_, true) if cost.is_some() => "1.00 (base)".to_string(),
        (Some(c), _) => format_ratio(c.ratio.value),
        _ => "-".into(),
    };
    // Quiet rounds used of all, where the two differ.
    let rounds = match cost.map(|c| c.rounds_used) {
        Some(used) if used != r.rounds.total => format!("{used}/{}", r.rounds.total),
        Some(used) => used.to_string(),
        None => "-".into(),
    };
    [
        r.id.clone(),
        r.variant.clone(),
        r.shown_ns().map_or("-".into(), |s| format_cost(s.value)),
        shown.map_or("-".into(), |s| format_cost(s.value)),
        ci,
        rounds,
        base,
        delta(r),
        note(r),
    ]
}

fn family_table(records: &[&Record], width: Option<usize>, tags_used: &mut Vec<Tag>) -> Table {
    if width.is_none() {
        let mut table = table(
            Style::Terminal,
            ContentArrangement::Disabled,
            COLUMNS,
            2..=7,
        );
        for r in records {
            table.add_row(cells(r));
        }
        return table;
    }
    // Keeping to a width: each probe's id on a row of its own above its
    // variants, so the widest column is a variant's name, not both names.
    let mut table = table(
        Style::Terminal,
        ContentArrangement::Dynamic,
        &COLUMNS[1..],
        1..=6,
    );
    fit(&mut table, width);
    // Names whole; the note column is the one that wraps.
    let names = records
        .iter()
        .map(|r| r.id.chars().count().max(r.variant.chars().count() + 2))
        .max()
        .unwrap_or(0)
        .min(width.unwrap_or(usize::MAX) / 3);
    if let Some(column) = table.column_mut(0) {
        // The boundary counts the cell's padding, one column each side.
        column.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(
            u16::try_from(names + 2).unwrap_or(u16::MAX),
        )));
    }
    let mut probe = "";
    for r in records {
        if r.id != probe {
            probe = &r.id;
            table.add_row([r.id.as_str()]);
        }
        let mut row = cells(r);
        row[1] = format!("  {}", row[1]);
        if r.is_baseline() && r.cost.is_some() {
            row[6] = "base".to_string();
        }
        row[8] = short_note(r, tags_used);
        table.add_row(row[1..].to_vec());
    }
    table
}

/// A note too long for a table that keeps to the terminal, as a tag; the
/// line under the tables says what each tag used means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    TargetMissed,
    SlowState,
    LayoutSpread,
    Dropped,
    OneFork,
    MoreNotes,
}

impl Tag {
    fn short(self) -> &'static str {
        match self {
            Tag::TargetMissed => "ci-miss",
            Tag::SlowState => "slow",
            Tag::LayoutSpread => "layout",
            Tag::Dropped => "dropped",
            Tag::OneFork => "1-fork",
            Tag::MoreNotes => "+note",
        }
    }

    fn means(self) -> &'static str {
        match self {
            Tag::TargetMissed => {
                "the CI target was not met (budget, rounds or the final state split)"
            }
            Tag::SlowState => "no round in the quiet state, the slow state's figure",
            Tag::LayoutSpread => "within the spread code placement alone gives",
            Tag::Dropped => "samples dropped (CPU changed or the clock went backwards)",
            Tag::OneFork => {
                "measured in one process: its ±CI and Δ borrow the spread between processes \
                 from its probe's other rows, or where none has one (--forks 1) stand on this \
                 run's rounds alone (the note says which)"
            }
            Tag::MoreNotes => "the record has a note",
        }
    }
}

/// The note column with its long parts as tags: figures stay (rates,
/// throughput, waits, the toll recovered, the CPUs), the rest is tagged.
fn short_note(r: &Record, tags_used: &mut Vec<Tag>) -> String {
    if let Some(why) = &r.unsupported {
        let reason = if why.reason.chars().count() <= 40 {
            why.reason.as_str()
        } else {
            why.kind_name()
        };
        return format!("unsupported: {reason}");
    }
    let mut parts = figure_notes(r);
    let mut tag = |t: Tag, parts: &mut Vec<String>| {
        if !tags_used.contains(&t) {
            tags_used.push(t);
        }
        parts.push(t.short().to_string());
    };
    if r.layout
        .as_ref()
        .is_some_and(|l| l.within_spread == Some(true))
    {
        tag(Tag::LayoutSpread, &mut parts);
    }
    if r.rounds.interrupted {
        parts.push("interrupted".to_string());
    } else if r.cost.as_ref().is_some_and(|c| !c.target_met) {
        tag(Tag::TargetMissed, &mut parts);
    }
    if r.cost.as_ref().map(|c| c.estimator) == Some(Basis::NoQuietRound) {
        tag(Tag::SlowState, &mut parts);
    }
    if r.rounds.dropped_migrated + r.rounds.dropped_backwards > 0 {
        tag(Tag::Dropped, &mut parts);
    }
    if r.cost.as_ref().is_some_and(|c| c.forks == 1) {
        tag(Tag::OneFork, &mut parts);
    }
    if !r.notes.is_empty() {
        tag(Tag::MoreNotes, &mut parts);
    }
    parts.join("; ")
}

/// The difference to the baseline with the half-width of where the next
/// run's may land: the pairs' interval within this run's forks printed
/// `srso-untrain +48.5 ±0.00` where the next run landed elsewhere.
fn delta(r: &Record) -> String {
    let Some(next) = r.vs_baseline.as_ref().map(|c| c.next_run_delta()) else {
        return String::new();
    };
    match next.half_width() {
        Some(half) => {
            let sign = if next.value >= 0.0 { "+" } else { "" };
            format!("{sign}{} ±{}", format_cost(next.value), format_cost(half))
        }
        None => String::new(),
    }
}

fn note(r: &Record) -> String {
    if let Some(why) = &r.unsupported {
        return format!("unsupported: {}", why.reason);
    }
    let mut notes = figure_notes(r);
    if let Some(layout) = &r.layout {
        let spread = layout.spread_pct;
        match (layout.within_spread, r.role) {
            (Some(true), _) => notes.push(format!(
                "within the layout spread (±{spread:.1}%): not told apart from code placement"
            )),
            (None, Role::LayoutControl) => {
                notes.push(format!("layout control; spread ±{spread:.1}%"))
            }
            _ => {}
        }
    }
    if r.rounds.interrupted {
        notes.push("interrupted".to_string());
    } else if r.cost.as_ref().is_some_and(|c| !c.target_met) {
        // A variant can stop on target by the state split known then and
        // miss it by the run's final one, which has seen every canary.
        let why = match r.rounds.stopped {
            Some(Stop::TargetMet) | None => "by the run's final state split",
            Some(stop) => stop.describe(),
        };
        notes.push(format!("CI target not met: {why}"));
    }
    if r.cost.as_ref().map(|c| c.estimator) == Some(Basis::NoQuietRound) {
        notes.push("no round in the quiet state: slow-state figure".to_string());
    }
    notes.extend(r.notes.iter().cloned());
    if r.rounds.dropped_migrated > 0 {
        notes.push(format!(
            "{} samples dropped (CPU changed)",
            r.rounds.dropped_migrated
        ));
    }
    if r.rounds.dropped_backwards > 0 {
        notes.push(format!(
            "{} samples dropped (clock went backwards)",
            r.rounds.dropped_backwards
        ));
    }
    notes.join("; ")
}

/// The figures a note shows beside the cost: rate, throughput, figures
/// measured beside it, the toll recovered, the CPUs a co-runner used.
fn figure_notes(r: &Record) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(rate) = &r.derived.rate {
        notes.push(format!("{:.1} {}", rate.millions_per_s, rate.unit));
    }
    if let Some(t) = &r.derived.throughput {
        notes.push(format!(
            "{} MiB/s, {:.2} ticks/B",
            format_cost(t.mib_per_s),
            t.ticks_per_byte
        ));
    }
    for f in &r.figures {
        notes.push(format!(
            "{} {}{}",
            f.name,
            format_figure(f.figure.value),
            f.unit
        ));
    }
    if let Some(toll) = &r.derived.toll_recovered {
        let interval = toll
            .pct
            .ci95
            .map_or(String::new(), |[lo, hi]| format!(" [{lo:.0}, {hi:.0}]"));
        notes.push(format!(
            "{:.0}%{interval} of toll recovered",
            toll.pct.value
        ));
    }
    if crate::measure::probes::on_other_cpus(&r.cpus) {
        let cpus: Vec<String> = r.cpus.iter().map(|c| c.to_string()).collect();
        notes.push(format!("CPUs {}", cpus.join("+")));
    }
    notes
}

/// A count without decimals, other figures as costs.
fn format_figure(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format_cost(value).trim_end_matches(".00").to_string()
    } else {
        format_cost(value)
    }
}
