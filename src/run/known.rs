//! What a run reads from the history, read once, before it measures: the
//! measuring reads nothing but its own rounds, and what the history adds
//! to the run's document is written into it in one place at the end.

use crate::analysis::rounds::{UsualGap, UsualGaps};
use crate::analysis::spread::RunToRun;
use crate::analysis::states::QuietLevel;
use crate::attribute::Attribution;
use crate::compare::{DEFAULT_THRESHOLD_PCT, HistoryNoise, MachineTimeline};
use crate::inventory::Inventory;
use crate::inventory::identity::Identity;
use crate::mitigations::crossing::SYSCALL;
use crate::store::history::{Builds, History};
use crate::store::results::RunDocument;
use crate::store::results::answered::HookToll;

/// What the history knew before the run; nothing without a history.
#[derive(Default)]
pub struct Known {
    /// The quiet level the history read on this boot under the same
    /// process controls, which a run that never reaches the quiet level is
    /// held against (`StateModel::fit_anchored`).
    pub quiet: Option<QuietLevel>,
    /// How far rows moved between the history's earlier runs of these
    /// conditions (the typical row's by this build or those before it on
    /// this boot): the floor under every interval for the next run.
    pub run_to_run: Option<RunToRun>,
    /// How far above its fastest sample each row's clean rounds stood in
    /// the history's earlier runs of these conditions: what a round slowed
    /// inside is told by where most of a row's rounds were.
    pub usual_gaps: UsualGaps,
    /// The attribution of the history's newest run sets of this host and
    /// build (other boots and wrappers), which the answer cites.
    attribution: Option<Attribution>,
    /// The stored run of this boot that read audit enabled, where audit is
    /// off now and no rule keeps new processes off its path.
    audit_enabled_earlier: Option<i64>,
    /// The newest stored run of this boot without the hooks in force now,
    /// and the noise a comparison with it reads.
    hookless: Option<Hookless>,
    /// The machine's stored runs as the report's timeline, where the run
    /// writes a report.
    pub timeline: Option<MachineTimeline>,
}

struct Hookless {
    id: i64,
    run: RunDocument,
    noise: HistoryNoise,
}

/// Runs of this boot looked through for one without the hooks: a few, so
/// that a run is not held against one from hours of other conditions.
const HOOKLESS_RUNS_LOOKED_AT: usize = 10;

impl Known {
    /// Read from `history` for a run on the machine `inventory` describes,
    /// on `cpu`, quick or standard; the report's timeline only where
    /// `with_timeline`. What the history cannot say is left unknown: the
    /// run then stands on its own readings.
    pub fn read(
        history: &History,
        inventory: &Inventory,
        (quick, cpu): (bool, usize),
        with_timeline: bool,
    ) -> Known {
        let like = &inventory.identity;
        let build = crate::store::results::BuildIdentity::of_this_binary();
        let conditions = crate::store::history::conditions(like, &build.git_commit, quick);
        let known_boot = like.boot_id != crate::inventory::UNKNOWN;
        let audit_enabled_earlier = audit_enabled_earlier(history, inventory);
        let hooks_in_force =
            !inventory.hooks.on_syscall_path().is_empty() || audit_enabled_earlier.is_some();
        Known {
            quiet: known_boot
                .then(|| history.quiet_level_like(like, cpu).ok().flatten())
                .flatten(),
            run_to_run: known_boot
                .then(|| run_to_run(history, &conditions))
                .flatten(),
            usual_gaps: if known_boot {
                usual_gaps(history, &conditions)
            } else {
                UsualGaps::new()
            },
            attribution: crate::attribute::newest_sets(history, &conditions).ok(),
            audit_enabled_earlier,
            hookless: hooks_in_force
                .then(|| hookless(history, &like.boot_id))
                .flatten(),
            timeline: with_timeline
                .then(|| report_timeline(history, like, quick))
                .flatten(),
        }
    }

    /// What the history knew, written into the run's document: the
    /// attribution's parts the answer cites, audit enabled earlier in the
    /// boot, and the toll of the hooks in force against the run without
    /// them.
    pub fn complete(&self, doc: &mut RunDocument) {
        if let Some(attribution) = &self.attribution {
            doc.attributed = crate::attribute::summary_parts(attribution);
        }
        doc.audit_enabled_in_run = self.audit_enabled_earlier;
        doc.hook_toll = self.hook_toll(doc);
    }

    /// What the hooks on the syscall path in force cost one syscall: `doc`
    /// compared with the newest stored run of its boot that had none of
    /// them (`compare::hook_toll`, which reads a price only where the hooks
    /// are all that changed); None where no hook is in force or no such run
    /// is stored.
    fn hook_toll(&self, doc: &RunDocument) -> Option<HookToll> {
        if doc.hooks_on_path().is_empty() {
            return None;
        }
        let hookless = self.hookless.as_ref()?;
        let against = format!("run {}", hookless.id);
        hookless
            .noise
            .compare(
                [
                    (std::slice::from_ref(&hookless.run), &against),
                    (std::slice::from_ref(doc), "this run"),
                ],
                DEFAULT_THRESHOLD_PCT,
            )
            .hook_toll
    }
}

/// How far rows moved between the history's earlier runs of `conditions`,
/// the co-runners' waits with them. The typical row's and wait's steps,
/// medians, are read over any build's runs (each build's a stretch of its
/// own), so that a new build's first runs hold the next run as well as
/// its later ones; a row's own floor, a variance, over this build's runs
/// where there are enough, else over every build's with their stray
/// figures left out (`RowFloor::of_any_build`).
pub fn run_to_run(history: &History, conditions: &str) -> Option<RunToRun> {
    let rows = |builds| history.row_figures(conditions, builds, &[]).ok();
    let waits = |builds| history.wait_figures(conditions, builds).unwrap_or_default();
    let any = rows(Builds::Any)?;
    let moved = RunToRun::of(&any)?;
    Some(
        moved
            .with_rows(&rows(Builds::This).unwrap_or_default(), &any)
            .with_waits(&waits(Builds::This), &waits(Builds::Any)),
    )
}

/// Each row's usual gap over the quiet rounds of the history's newest runs
/// of `conditions` by any build (`History::quiet_rounds`), where it had
/// enough of them; `examples/reanalyse.rs` reads it as a run does.
pub fn usual_gaps(history: &History, conditions: &str) -> UsualGaps {
    history
        .quiet_rounds(conditions)
        .map(UsualGap::of_rows)
        .unwrap_or_default()
}

/// Where audit is off and no `never,task` rule keeps new processes off its
/// path, the stored run of this boot that read it enabled (see
/// `RunDocument::audit_enabled_in_run`).
fn audit_enabled_earlier(history: &History, inventory: &Inventory) -> Option<i64> {
    if !inventory.hooks.audit.read()?.off_and_unkept() {
        return None;
    }
    history
        .audit_enabled_in_boot(&inventory.identity.boot_id)
        .ok()?
}

/// The newest stored run of `boot_id` without a hook on the syscall path,
/// and the noise a comparison with the run to come reads (the run to come
/// is not stored, so leaving it out of the rows' noise leaves nothing).
fn hookless(history: &History, boot_id: &str) -> Option<Hookless> {
    let row = (SYSCALL.probe, SYSCALL.variant);
    let ids = history
        .newest_of_boot(boot_id, row, HOOKLESS_RUNS_LOOKED_AT)
        .ok()?;
    let (id, run) = ids
        .into_iter()
        .filter_map(|id| Some((id, history.load(id).ok()?)))
        .find(|(_, old)| old.hooks_on_path().is_empty())?;
    let old = std::slice::from_ref(&run);
    let noise = HistoryNoise::read(Some(history), old, &[run.started_at.as_str()]);
    Some(Hookless { id, run, noise })
}

/// The report's timeline of the stored runs of the machine `id`, quick or
/// standard; a history that cannot give it costs the report its
/// timeline, said, never the run or the report.
pub fn report_timeline(history: &History, id: &Identity, quick: bool) -> Option<MachineTimeline> {
    crate::compare::report_timeline(history, id, quick)
        .inspect_err(|e| {
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "warning: the report has no timeline: {e}"
            );
        })
        .ok()
        .flatten()
}
