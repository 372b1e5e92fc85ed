//! A level shift between the sides: the syscall path's quiet level (the
//! raw getpid canary) read apart. It is one finding, said once above the
//! rows: a trace event, an audit rule or a BPF program adds its cost to
//! every syscall, and the host's speed moves every row, so forty rows
//! marked slower under one shift are one change, not forty. What the runs
//! can tell is said with it, and only that: whether the shifted side's
//! canary stayed away from the other's level longer than a host's slow
//! stretch lasts (a level that moved), or came back to it when watched (a
//! slow stretch, as far as the runs tell), or each run sat at a level of
//! its own with none to hold against (a change between the runs); and
//! whether the reference, work no mitigation touches, moved with it. The
//! rows keep their verdicts as measured: a regression is never host noise.

use super::inventory_diff::{HOOKS, InventoryChange};
use super::{RowChange, Side, Sides};
use crate::analysis::interval::Figure;
use crate::analysis::rounds::across_forks;
use crate::analysis::states::{QuietLevel, StateModel};
use crate::analysis::verdict::{Verdict, percent_change};
use crate::measure::schedule::gate::LEVEL_MOVED_AFTER_S;
use crate::mitigations::crosses_kernel;
use serde::Serialize;

/// What the runs tell of a shift.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShiftCause {
    /// The shifted side's canary never came back to the other's level and
    /// stayed away from it [`LEVEL_MOVED_AFTER_S`] on end: the level moved.
    Moved,
    /// The shifted side never reached the other's level in its rounds, but
    /// its canary came back to it when watched (or the watch was cut
    /// short): a slow stretch of the host, as far as the runs can tell.
    /// Its rows are that slow level's and are not compared.
    SlowStretch,
    /// Each run sat at a level of its own throughout, with no level of the
    /// other's held against it (another boot, no history): the change lies
    /// between the runs.
    Between,
}

/// The syscall path's level on each side and what moved with it.
#[derive(Debug, Clone, Serialize)]
pub struct LevelShift {
    /// Each side's level, canary ticks per call: the quiet level its rows
    /// stand on, or, for a run that never reached the other's, the level of
    /// its own fastest readings (each side's runs' geometric mean).
    pub canary_ticks: Sides,
    /// new / old - 1, percent.
    pub change_pct: f64,
    /// How far apart the levels must lie to be a shift, percent: the wider
    /// of the sides' quiet bands (a level's own spread).
    pub band_pct: f64,
    pub told: ShiftCause,
    /// Which side shifted where the runs say (`old` or `new`); None for a
    /// change between the runs.
    pub shifted: Option<String>,
    /// The reference's change between the sides, percent, where both read
    /// it: a host's speed moves it, a cost on the syscall path does not.
    pub reference_change_pct: Option<f64>,
    /// Whether the reference held within the band while the canary moved.
    pub reference_held: Option<bool>,
    /// "probe variant" of each row marked in the shift's direction that no
    /// inventory change explains: the rows that moved with it.
    pub rows: Vec<String>,
    /// Rows marked against the shift's direction.
    pub rows_against: usize,
    /// Where the cost was added on the syscall path (the reference held):
    /// each row that moved with it, its change read beyond the shift.
    pub beyond: Vec<Beyond>,
    pub summary: String,
}

/// A row that moved with a cost added on the syscall path, its change
/// counted in what the shift added to one raw syscall (the canary): a
/// trace event or an audit rule adds its cost to every crossing, so a row
/// that makes one crossing an item and changed in nothing else reads 1, a
/// row that makes two reads 2, and what lies beyond the crossings it makes
/// is a change of its own.
#[derive(Debug, Clone, Serialize)]
pub struct Beyond {
    /// "probe variant".
    pub row: String,
    /// The row's change in ticks over the canary's, with the row's
    /// change interval.
    pub canary_calls: Figure,
}

/// The shift between `old` and `new`, where their levels lie further
/// apart than the wider quiet band; None where they do not or a side has
/// no level. `inventory` is what mitbench records that changed between
/// the sides, which the shift's sentence points to: a hook on the syscall
/// path by name, as the likely cause.
pub(super) fn between(old: &Side, new: &Side, inventory: &[InventoryChange]) -> Option<LevelShift> {
    // A side's level is its runs' geometric mean, as its figures are.
    let level = |side: &Side| {
        let levels: Vec<f64> = side.models().map(StateModel::level).collect();
        let canary = across_forks(&levels);
        (canary.is_finite() && canary > 0.0).then(|| QuietLevel {
            canary,
            band: side.models().map(|m| m.quiet_band).fold(0.0, f64::max),
        })
    };
    let (old_level, new_level) = (level(old)?, level(new)?);
    if old_level.holds(&new_level) {
        return None;
    }
    let canary_ticks = Sides {
        old: old_level.canary,
        new: new_level.canary,
    };
    let change_pct = percent_change(canary_ticks.old, canary_ticks.new);
    let band_pct = old_level.band_with(&new_level) * 100.0;
    let told_of = |side: &Side| {
        if side.models().any(|m| m.above_known_pct.is_some()) {
            Some(ShiftCause::SlowStretch)
        } else if side.models().any(|m| m.moved_pct.is_some()) {
            Some(ShiftCause::Moved)
        } else {
            None
        }
    };
    let (told, shifted) = match (told_of(old), told_of(new)) {
        (_, Some(told)) => (told, Some(new.name.clone())),
        (Some(told), None) => (told, Some(old.name.clone())),
        (None, None) => (ShiftCause::Between, None),
    };
    let reference_change_pct = old
        .reference()
        .zip(new.reference())
        .map(|(o, n)| percent_change(o, n));
    let reference_held = reference_change_pct.map(|pct| pct.abs() <= band_pct);
    let mut shift = LevelShift {
        canary_ticks,
        change_pct,
        band_pct,
        told,
        shifted,
        reference_change_pct,
        reference_held,
        rows: Vec::new(),
        rows_against: 0,
        beyond: Vec::new(),
        summary: String::new(),
    };
    shift.summary = shift.say([&old.name, &new.name]);
    let hooks: Vec<String> = inventory
        .iter()
        .filter_map(InventoryChange::hook_change)
        .collect();
    if !hooks.is_empty() {
        shift.summary += &format!(
            "; a hook on the syscall path changed between the runs ({}): the likely cause",
            hooks.join("; ")
        );
    } else if !inventory.is_empty() {
        shift.summary += "; what mitbench records of the machine changed too (listed below)";
    }
    Some(shift)
}

impl LevelShift {
    /// Whether the shift is a change (a level that moved, or one between
    /// the runs) rather than a host's slow stretch: its rows are then
    /// compared at the levels they stood on.
    pub fn is_a_change(&self) -> bool {
        self.told != ShiftCause::SlowStretch
    }

    /// The verdict of a row that moved with the shift.
    fn direction(&self) -> Verdict {
        if self.change_pct > 0.0 {
            Verdict::Slower
        } else {
            Verdict::Faster
        }
    }

    /// Takes the rows marked in the shift's direction that cross into the
    /// kernel and that no inventory change explains but a hook's (a hook
    /// moves any row it sits on) out of `unexplained` into the shift's,
    /// and counts those marked against it; the summary then says how many
    /// moved. A row of user-space work is not moved by the syscall path:
    /// where it is marked, it is by its own evidence, and it stays listed
    /// as such.
    pub(super) fn gather(&mut self, rows: &[RowChange], unexplained: &mut Vec<String>) {
        let with = self.direction();
        let by_hook_alone = |r: &RowChange| {
            !r.consistent_with.is_empty() && r.consistent_with.iter().all(|c| c.starts_with(HOOKS))
        };
        let moved_with: Vec<(String, &RowChange)> = rows
            .iter()
            .filter(|r| r.verdict == with && crosses_kernel(&r.key.id))
            .map(|r| (format!("{} {}", r.key.id, r.key.variant), r))
            .filter(|(name, r)| unexplained.contains(name) || by_hook_alone(r))
            .collect();
        unexplained.retain(|name| moved_with.iter().all(|(moved, _)| moved != name));
        // What the shift added to one raw syscall, in ticks.
        let added = self.canary_ticks.new - self.canary_ticks.old;
        if self.reference_held == Some(true) {
            self.beyond = moved_with
                .iter()
                .map(|(row, r)| Beyond {
                    row: row.clone(),
                    canary_calls: r.change_pct.map(|pct| r.old_ticks * pct / 100.0 / added),
                })
                .collect();
        }
        let moved_with: Vec<String> = moved_with.into_iter().map(|(name, _)| name).collect();
        self.rows = moved_with;
        self.rows_against = rows
            .iter()
            .filter(|r| r.verdict != Verdict::Same && r.verdict != with)
            .count();
        let against = match self.rows_against {
            0 => String::new(),
            n => format!(", {n} against it"),
        };
        if self.told != ShiftCause::SlowStretch {
            self.summary = format!(
                "{}; {} marked row(s) {} with it that nothing else mitbench records explains{against}",
                self.summary,
                self.rows.len(),
                with.symbol()
            );
        }
    }

    /// The shift in one line: by how much, what the runs tell of it, the
    /// hook among `inventory` that likely caused it, the rows that moved
    /// with it (the summary's line; [`LevelShift::summary`] says it all).
    pub fn short(&self, inventory: &[InventoryChange]) -> String {
        let told = match self.told {
            ShiftCause::Moved => "a level that moved",
            ShiftCause::SlowStretch => "a slow stretch of the host (its rows not compared)",
            ShiftCause::Between => "a change between the runs",
        };
        let reference = match self.reference_held {
            Some(true) => ", the machine's own speed held",
            Some(false) => ", the machine's own speed moved with it",
            None => "",
        };
        let hooks: Vec<String> = inventory
            .iter()
            .filter_map(|c| Some(format!("{} -> {}", c.hook()?, c.new)))
            .collect();
        let cause = match hooks.is_empty() {
            true => String::new(),
            false => format!("; likely cause: {}", hooks.join("; ")),
        };
        let rows = match self.rows.len() {
            0 => String::new(),
            n => format!("; {n} marked rows moved with it"),
        };
        format!(
            "level shift: the syscall path {:+.0} ticks ({:+.1}%, {:.0} -> {:.0}): {told}\
             {reference}{cause}{rows}",
            self.canary_ticks.new - self.canary_ticks.old,
            self.change_pct,
            self.canary_ticks.old,
            self.canary_ticks.new
        )
    }

    fn say(&self, [old, new]: [&str; 2]) -> String {
        let levels = format!(
            "the syscall path's quiet level (the canary, a raw getpid) read {:+.1}% from {old}'s \
             to {new}'s ({:.0} -> {:.0} ticks, beyond its ±{:.0}% band)",
            self.change_pct, self.canary_ticks.old, self.canary_ticks.new, self.band_pct
        );
        let other = |shifted: &str| if shifted == new { old } else { new };
        let reference = match (self.reference_held, self.reference_change_pct) {
            (Some(true), Some(pct)) => format!(
                "the reference (work no mitigation touches) held ({pct:+.1}%): the syscall path \
                 moved, not the machine's own speed"
            ),
            (Some(false), Some(pct)) => format!(
                "the reference (work no mitigation touches) moved {pct:+.1}% with it: the \
                 machine's own speed moved too"
            ),
            _ => "the reference was not read on both sides".to_string(),
        };
        match (self.told, &self.shifted) {
            (ShiftCause::Moved, Some(shifted)) => format!(
                "{levels}; {shifted}'s canary never came back to {}'s level and stayed away from \
                 it {LEVEL_MOVED_AFTER_S:.0} s on end, longer than a host's slow stretch lasts: a \
                 level that moved (a cost added on the syscall path, such as a trace event, an \
                 audit rule or a BPF program, or the host's speed), not host noise; {reference}",
                other(shifted)
            ),
            (ShiftCause::SlowStretch, Some(shifted)) => format!(
                "{levels}; {shifted}'s rounds never reached {}'s level, but its canary came back \
                 to it when watched (or the watch was cut short): a slow stretch of the host as \
                 far as the runs tell, not a regression, and not a level that moved either; \
                 {shifted}'s rows are that slow level's and are not compared (`~`, noted); \
                 {reference}; a run later tells a level that stays from a stretch that ends",
                other(shifted)
            ),
            _ => format!(
                "{levels}; each run sat at a level of its own throughout, with no level of the \
                 other's held against it: a change between the runs (the boot, a cost added on \
                 the syscall path, or the host's speed); {reference}"
            ),
        }
    }
}
