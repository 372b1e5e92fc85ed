//! The answer first: what the mitigations cost on this machine, in one
//! screen, built from a run's records. Each toll names the records its
//! figures come from; a toll the run did not measure is left out, one the
//! machine could not measure says why in one line. The renderings
//! (terminal, Markdown, HTML) and the JSON all start with it.

use super::advice;
use crate::analysis::interval::Figure;
use crate::measure::probes::{FigureRole, guest};
use crate::mitigations::crossing::{RETURN_TOLL_SYSCALL, SYSCALL};
use crate::mitigations::kernel::{self as switches, InForce};
use crate::store::results::answered::{AttributedPart, HookToll};
use crate::store::results::{Record, RunDocument};
use serde::Serialize;

/// The answer of one run (the JSON's `summary`).
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    /// The CPU and the kernel release.
    pub machine: String,
    /// The kernel's mitigations in force, by its vulnerability files.
    pub in_force: Vec<InForce>,
    /// The command line's mitigation words (`mitigations=auto`, `nopti`).
    pub command_line: Vec<String>,
    pub tolls: Vec<Toll>,
    /// The kernel's mitigations in force, each sequence priced per time it
    /// runs, and the floor of the null syscall they make: never measured
    /// parts (those need another boot).
    pub kernel: super::prices::KernelPrices,
    /// The kernel's attack-vector controls and what each enabled vector's
    /// mitigations cost here, replayed.
    pub attack_vectors: super::vectors::AttackVectors,
    /// What a syscall made from inside a function pays beyond the raw
    /// instruction, per syscall (empty where the run did not measure it).
    pub syscall_return: Vec<super::returns::ReturnToll>,
    /// The same for the other crossings measured: a page fault, a signal
    /// handled and returned from, a yield that switches.
    pub other_crossing_return: Vec<super::returns::ReturnToll>,
    /// What the run cannot tell, and the boots that would.
    pub next_step: NextStep,
    /// The mitigations' parts of the tolls, where stored run sets of other
    /// boots or wrappers were attributed.
    pub attributed: Vec<AttributedPart>,
    /// The hooks in force that every syscall pays for (audit, BPF programs
    /// and trace events on the syscall path), and what they cost one
    /// syscall where the history held a run of this boot without them.
    pub hooks: Vec<crate::inventory::hooks::OnPath>,
    pub hook_toll: Option<HookToll>,
}

/// Which record a figure comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct From {
    pub probe: String,
    pub variant: String,
}

/// One figure of a toll.
#[derive(Debug, Clone, Serialize)]
pub struct Quantity {
    /// What the figure is ("per call", "retpoline +").
    pub what: String,
    /// The figure in `unit`, with its interval (JSON: `value`, `ci95`).
    #[serde(flatten)]
    pub figure: Figure,
    pub unit: Unit,
    pub from: From,
    /// What the figure's line must say beside it: why it has no interval,
    /// or that it is a slow level's (no quiet round); None for a figure of
    /// the quiet level with its interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The note on a figure of a row that no round measured at the quiet
/// level: its figure is a slow level's, whatever it reads.
pub const SLOW_LEVEL: &str = "slow level: no quiet round in this run";

/// The note on a figure read from pairs of rounds where the run had too
/// few pairs of two quiet rounds (none, in a run whose rows had no quiet
/// round): it stands on pairs of every state, not the quiet level's.
pub const PAIRS_OFF_THE_QUIET_LEVEL: &str = "off the quiet level: too few quiet pairs in this run";

/// The notes on the largest batch a latency budget allows, where the fit
/// gives it no interval or no size.
pub const NO_BATCH_FITS: &str = "no batch fits: one batch's toll alone outlasts the budget";
pub const ANY_BATCH_FITS: &str = "any batch fits: no per-item cost above zero";
pub const NO_UPPER_BATCH: &str =
    "no upper end: the per-item cost's interval reaches zero, where any batch fits";

/// Why a figure read over `rounds` rounds (or pairs) of its row has no
/// interval: fewer than an interval needs.
fn too_few(rounds: usize, of: &str) -> String {
    format!(
        "no interval: {rounds} {of}, under {}",
        crate::analysis::rounds::MIN_ROUNDS_FOR_CI
    )
}

/// The note a row's own figure carries: a slow level's, or one without an
/// interval over too few quiet rounds.
fn cost_note(r: &Record, has_interval: bool) -> Option<String> {
    let cost = r.cost.as_ref()?;
    if no_quiet_round(r) {
        Some(SLOW_LEVEL.to_string())
    } else {
        (!has_interval).then(|| too_few(cost.rounds_used, "quiet rounds"))
    }
}

/// Why a figure is printed without its interval: wider than a figure is
/// read with, and on how many of the forks its rounds ran in it stands.
fn too_wide_note(r: &Record) -> String {
    let quiet = r.cost.as_ref().map_or(0, |c| c.forks);
    let forks = crate::analysis::rounds::fork_count(r.rounds.each.iter().map(|round| round.fork));
    crate::analysis::interval::too_wide_reason(Some((quiet, forks.max(quiet))))
}

/// A figure read from `r` (its cost, what it adds, a ratio, a wait) whose
/// interval reaches past ±50% of it: the reason in the place of the
/// interval, unless the line already says why it stands apart. A
/// difference that small against its noise says as little as a cost that
/// wide. A slope (a fit's per item, a step per rule) keeps its interval: a
/// small slope's range is what it says ("under a nanosecond a rule").
/// `r` is None for a figure read from more than one record (the return
/// toll's): its reason then names no forks.
fn readable(mut q: Quantity, r: Option<&Record>) -> Quantity {
    if q.figure.too_wide_to_read() {
        q.figure.ci95 = None;
        let reason = || match r {
            Some(r) => too_wide_note(r),
            None => crate::analysis::interval::too_wide_reason(None),
        };
        q.note = q.note.or_else(|| Some(reason()));
    }
    q
}

/// Whether no round of a measured row was at the quiet level.
fn no_quiet_round(r: &Record) -> bool {
    r.cost
        .as_ref()
        .is_some_and(|c| c.estimator == crate::analysis::rounds::Basis::NoQuietRound)
}

/// The note a co-runner's p99 wait carries. The wait is read over every
/// round, whatever its state; where no round of its row was at the quiet
/// level, every round it is read over was a slow level's, and it says so
/// as the row's own figure does (three quick runs on a 2-vCPU AMD EPYC
/// guest, 2026-12-03: the 4 KiB yields' p99 read 846 us, every round
/// slow, against 64 and 91 us [37, 110] beside it, the line silent).
fn wait_note(r: &Record, has_interval: bool) -> Option<String> {
    if no_quiet_round(r) {
        Some(SLOW_LEVEL.to_string())
    } else {
        (!has_interval).then(|| too_few(r.rounds.total, "rounds"))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unit {
    Ns,
    Us,
    /// A ratio against another figure (1.0 = the same).
    Times,
    /// A number of items per batch.
    Batch,
}

/// One toll the summary reports.
#[derive(Debug, Clone, Serialize)]
pub struct Toll {
    pub kind: TollKind,
    #[serde(flatten)]
    pub outcome: TollStatus,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum TollStatus {
    Measured { figures: Vec<Quantity> },
    Unsupported { reason: String, from: From },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TollKind {
    NullSyscall,
    IndirectCall,
    PipelineBulk,
    SpeculationControl,
    Seccomp,
    PageTableChange,
    Shootdown,
    ThreadChannel,
    CryptoSection,
    Teardown,
    VmExit,
}

impl TollKind {
    pub fn label(self) -> &'static str {
        match self {
            TollKind::NullSyscall => "null syscall",
            TollKind::IndirectCall => "indirect call",
            TollKind::PipelineBulk => "packet pipeline",
            TollKind::SpeculationControl => "SSBD (prctl)",
            TollKind::Seccomp => "seccomp filter",
            TollKind::PageTableChange => "mprotect",
            TollKind::Shootdown => "TLB shootdown",
            TollKind::ThreadChannel => "thread + channel",
            TollKind::CryptoSection => "16 MiB sha256",
            TollKind::Teardown => "lock-held teardown",
            TollKind::VmExit => "VM exit",
        }
    }
}

/// Where a toll's figures come from: a probe, the variants it reads (all
/// measured, or the toll says why not), and each figure.
struct TollSpec {
    kind: TollKind,
    probe: &'static str,
    variants: &'static [&'static str],
    figures: &'static [FigureSpec],
}

struct FigureSpec {
    what: &'static str,
    /// Which of the spec's variants it reads.
    record: usize,
    reads: Reads,
}

/// What a figure reads from its record.
#[derive(Clone, Copy)]
enum Reads {
    /// The record's own cost.
    Cost,
    /// What it adds to its baseline, from pairs of rounds.
    Added,
    /// Its cost over another variant's of the spec.
    Over(usize),
    /// A same-CPU co-runner's p99 wait beside it.
    WaitP99,
    /// The record's series (a batch group): its fitted toll per call, its
    /// cost per item, the largest batch the latency budget allows.
    FitPerCall(&'static str),
    FitPerItem(&'static str),
    WithinBudget(&'static str),
    /// The step from another variant's cost to this one's, over `steps`.
    Step {
        from: usize,
        steps: f64,
    },
}

const fn toll(
    kind: TollKind,
    probe: &'static str,
    variants: &'static [&'static str],
    figures: &'static [FigureSpec],
) -> TollSpec {
    TollSpec {
        kind,
        probe,
        variants,
        figures,
    }
}

const fn figure(what: &'static str, record: usize, reads: Reads) -> FigureSpec {
    FigureSpec {
        what,
        record,
        reads,
    }
}

/// What the VM exit's line calls the exit's own price.
const EXIT: &str = "a CPUID exit to the host +";

/// The answer's lines, in the order it prints them, each a toll and the
/// figures it reads (kept as written, not as rustfmt would fold it). What
/// prices a crossing is the crossings' one table
/// ([`crate::mitigations::crossing::TOLLS`]): the null syscall's line reads
/// its row.
#[rustfmt::skip]
const LINES: &[TollSpec] = &[
    toll(TollKind::NullSyscall, SYSCALL.probe, &[SYSCALL.variant], &[figure("getpid", 0, Reads::Cost)]),
    toll(TollKind::IndirectCall, "indirect/call", &["indirect", "retpoline", "return-thunk"], &[
        figure("plain", 0, Reads::Cost),
        figure("retpoline +", 1, Reads::Added),
        figure("return thunk +", 2, Reads::Added),
    ]),
    toll(TollKind::PipelineBulk, "indirect/pipeline-64", &["retpoline/B=1"], &[
        figure("retpoline toll a bulk", 0, Reads::FitPerCall("retpoline")),
        figure("largest bulk", 0, Reads::WithinBudget("retpoline")),
    ]),
    toll(TollKind::SpeculationControl, "syscall/specctrl-storeload",
        &["store_bypass=enable", "store_bypass=disable"],
        &[figure("store-load loop, SSBD on vs off", 1, Reads::Over(0))]),
    toll(TollKind::Seccomp, "syscall/seccomp",
        &["number/F=1/R=1", "args/F=1/R=1", "args/F=1/R=50"], &[
        figure("one filter +", 0, Reads::Added),
        figure("reading arguments +", 1, Reads::Added),
        // From one rule to fifty: what each further rule costs.
        figure("per rule", 2, Reads::Step { from: 1, steps: 49.0 }),
    ]),
    toll(TollKind::PageTableChange, "memory/mprotect", &["B=1"], &[
        figure("per call", 0, Reads::FitPerCall("")),
        figure("per page", 0, Reads::FitPerItem("")),
        figure("most pages a call", 0, Reads::WithinBudget("")),
    ]),
    toll(TollKind::Shootdown, "memory/shootdown", &["mprotect/alone", "mprotect/remote"], &[
        figure("mprotect, one CPU", 0, Reads::Cost),
        figure("a remote CPU +", 1, Reads::Added),
    ]),
    toll(TollKind::ThreadChannel, "thread/churn-T1", &["eventfd", "tls"], &[
        figure("with eventfd", 0, Reads::Cost),
        figure("with TLS", 1, Reads::Cost),
    ]),
    toll(TollKind::CryptoSection, "section/chunked",
        &["never/16MiB", "every/4KiB", "waiting/4KiB"], &[
        figure("co-runner p99 wait: never yielding", 0, Reads::WaitP99),
        figure("yielding every 4 KiB", 1, Reads::WaitP99),
        figure("only when waited for", 2, Reads::WaitP99),
    ]),
    toll(TollKind::Teardown, "teardown/index-2^19", &["K=1", "K=4096"], &[
        figure("lookup p99 wait at K=1", 0, Reads::WaitP99),
        figure("at K=4096", 1, Reads::WaitP99),
    ]),
    toll(TollKind::VmExit, guest::EXIT_PROBE, &[guest::EXITING], &[
        figure(EXIT, 0, Reads::Added),
    ]),
];

/// Every (probe, variant) the summary's tolls read, for the test that
/// holds each against the registry.
pub fn rows_read() -> Vec<(&'static str, &'static str)> {
    LINES
        .iter()
        .flat_map(|t| t.variants.iter().map(|v| (t.probe, *v)))
        .collect()
}

/// Every (probe, variant) the answer reads, the return toll's and the
/// kernel price list's rows too: the rows a run measures first at the
/// quiet level (`schedule::Scheduler::decide`).
pub fn answer_rows() -> Vec<(String, String)> {
    let tolls = rows_read()
        .into_iter()
        .chain(
            crate::mitigations::sequences::SEQUENCES
                .iter()
                .map(|s| s.row),
        )
        .map(|(probe, variant)| (probe.to_string(), variant.to_string()));
    let returns = super::returns::rows_answered()
        .into_iter()
        .map(|(probe, variant)| (probe.to_string(), variant));
    tolls.chain(returns).collect()
}

/// What only another boot can measure.
#[derive(Debug, Clone, Serialize)]
pub struct NextStep {
    /// Boot parameters, each switching one mitigation in force off.
    pub boots: Vec<String>,
    /// What to run on such a boot, and the comparison that follows.
    pub then: String,
}

/// The summary of `doc`.
pub fn of(doc: &RunDocument) -> Answer {
    let in_force = switches::in_force(&doc.inventory.cpu.vulnerabilities);
    let mhz = doc.inventory.tsc_mhz.filter(|m| *m > 0.0);
    let run = Lookup { doc, mhz };
    let mut tolls: Vec<Toll> = LINES
        .iter()
        .filter_map(|spec| run.toll(spec))
        .filter(|t| !not_a_guest(t))
        .collect();
    let syscall_return = super::returns::of(doc);
    through_a_function(&mut tolls, &syscall_return);
    exits_on_one_scale(&mut tolls);
    let mut boots: Vec<String> = vec!["mitigations=off".to_string()];
    boots.extend(in_force.iter().map(|f| f.off.clone()));
    let kernel = super::prices::of(doc);
    let mut attack_vectors = super::vectors::of(&doc.inventory, &kernel);
    attack_vectors.pays_its_host = measured_figures(&mut tolls, TollKind::VmExit).is_some();
    Answer {
        machine: format!(
            "{}, kernel {}",
            doc.inventory.cpu.model_name, doc.inventory.kernel.release
        ),
        command_line: crate::inventory::mitigation_words(&doc.inventory.kernel.cmdline),
        in_force,
        tolls,
        attack_vectors,
        kernel,
        syscall_return,
        other_crossing_return: super::returns::of_other_crossings(doc),
        next_step: NextStep {
            boots,
            then: "`mitbench run` on each, `mitbench attribute` (`mitbench plan`)".to_string(),
        },
        attributed: doc.attributed.clone(),
        hooks: doc.hooks_on_path(),
        hook_toll: doc.hook_toll.clone(),
    }
}

/// Whether `toll` is the VM exit's on a machine that is no guest: the
/// answer then says nothing of exits (there are none to price), where any
/// other toll the machine cannot measure, and the exit for any other
/// reason, says why.
fn not_a_guest(toll: &Toll) -> bool {
    toll.kind == TollKind::VmExit
        && matches!(&toll.outcome, TollStatus::Unsupported { reason, .. }
            if reason == guest::NOT_A_GUEST)
}

/// The VM exit's line puts the other boundaries a guest's program crosses
/// on its scale: how many null syscalls one exit is worth, and how many
/// exits a remote TLB shootdown's extra cost is (an IPI is an exit on the
/// sender and, where the receiver halted, on the receiver). Ratios of
/// figures of other probes, so added here rather than by the line's spec.
fn exits_on_one_scale(tolls: &mut [Toll]) {
    let figure = |kind: TollKind, what: &str| -> Option<Quantity> {
        match &tolls.iter().find(|t| t.kind == kind)?.outcome {
            TollStatus::Measured { figures } => figures.iter().find(|q| q.what == what).cloned(),
            TollStatus::Unsupported { .. } => None,
        }
    };
    let Some(exit) = figure(TollKind::VmExit, EXIT) else {
        return;
    };
    // A ratio of a figure off the quiet level is off it too: it keeps
    // the first note of its two.
    let ratio = |what: &str, over: &Quantity, under: &Quantity| {
        let q = Quantity {
            what: what.to_string(),
            figure: crate::analysis::combine::ratio(over.figure, under.figure),
            unit: Unit::Times,
            from: exit.from.clone(),
            note: over.note.clone().or_else(|| under.note.clone()),
        };
        readable(q, None)
    };
    let mut scaled = Vec::new();
    if let Some(getpid) = figure(TollKind::NullSyscall, "getpid") {
        scaled.push(ratio("in getpid calls", &exit, &getpid));
    }
    if let Some(remote) = figure(TollKind::Shootdown, "a remote CPU +") {
        scaled.push(ratio(
            "a remote shootdown's extra, in exits",
            &remote,
            &exit,
        ));
    }
    if let Some(figures) = measured_figures(tolls, TollKind::VmExit) {
        figures.extend(scaled);
    }
}

/// The figures of the measured line of `kind`, for a figure added outside
/// the line's spec; None where the line is missing or unsupported.
fn measured_figures(tolls: &mut [Toll], kind: TollKind) -> Option<&mut Vec<Quantity>> {
    match &mut tolls.iter_mut().find(|t| t.kind == kind)?.outcome {
        TollStatus::Measured { figures } => Some(figures),
        TollStatus::Unsupported { .. } => None,
    }
}

/// The null syscall's line says what a program pays beyond the raw
/// instruction when its getpid comes through a function (the return after
/// the crossing, `answer::returns`): a figure of another probe than the
/// line's own, so it is added here rather than by the line's spec. Read
/// from pairs of every state where too few were quiet, it says so, as a
/// slow level's figure does (the refill's win is then not named at all,
/// `ReturnToll::named_refill_win`).
fn through_a_function(tolls: &mut [Toll], returns: &[super::returns::ReturnToll]) {
    let getpid = returns.iter().find(|r| r.crossing == RETURN_TOLL_SYSCALL);
    let off_the_quiet_level = getpid
        .and_then(|r| r.from_pairs.as_ref())
        .is_some_and(|p| p.off_the_quiet_level());
    let Some(extra) = getpid.and_then(|r| r.extra_ns) else {
        return;
    };
    let refill = getpid.and_then(|r| r.named_refill_win());
    if let Some(figures) = measured_figures(tolls, TollKind::NullSyscall) {
        let added = Quantity {
            what: "from a function +".to_string(),
            figure: extra,
            unit: Unit::Ns,
            from: From {
                probe: super::returns::PROBE.to_string(),
                variant: format!("{RETURN_TOLL_SYSCALL}/in-fn"),
            },
            note: off_the_quiet_level.then(|| PAIRS_OFF_THE_QUIET_LEVEL.to_string()),
        };
        figures.push(readable(added, None));
        if let Some(won) = refill {
            let won = Quantity {
                what: format!(
                    "refilling the return stack ({} entries) after the crossing wins back ",
                    super::returns::ANSWERED_REFILL
                ),
                figure: won,
                unit: Unit::Ns,
                from: From {
                    probe: super::returns::PROBE.to_string(),
                    variant: format!(
                        "{RETURN_TOLL_SYSCALL}/refill-{}",
                        super::returns::ANSWERED_REFILL
                    ),
                },
                note: None,
            };
            figures.push(readable(won, None));
        }
    }
}

/// The records of one run, looked up by probe and variant.
struct Lookup<'d> {
    doc: &'d RunDocument,
    mhz: Option<f64>,
}

impl<'d> Lookup<'d> {
    /// A record with a figure, or the toll's outcome where the machine
    /// could not measure it; None where the run has no such record or it
    /// was not measured (interrupted).
    fn record(&self, probe: &str, variant: &str) -> Option<Result<&'d Record, TollStatus>> {
        let r = self.doc.record(probe, variant)?;
        match (&r.cost, &r.unsupported) {
            (Some(_), _) => Some(Ok(r)),
            (None, Some(u)) => Some(Err(TollStatus::Unsupported {
                reason: u.reason.clone(),
                from: from(r),
            })),
            (None, None) => None,
        }
    }

    /// The measured records of `probe` among `variants`, in that order;
    /// the toll says unsupported where the first is, and is left out where
    /// any is missing.
    fn all(&self, probe: &str, variants: &[&str]) -> Option<Result<Vec<&'d Record>, TollStatus>> {
        let mut found = Vec::new();
        for v in variants {
            match self.record(probe, v)? {
                Ok(r) => found.push(r),
                Err(why) => return Some(Err(why)),
            }
        }
        Some(Ok(found))
    }

    /// A toll as its spec reads it from this run; None where the run did
    /// not measure its records (or they gave no figure).
    fn toll(&self, spec: &TollSpec) -> Option<Toll> {
        let outcome = match self.all(spec.probe, spec.variants)? {
            Ok(records) => {
                let figures: Vec<Quantity> = spec
                    .figures
                    .iter()
                    .filter_map(|f| self.figure(spec.probe, f, &records))
                    .collect();
                if figures.is_empty() {
                    return None;
                }
                TollStatus::Measured { figures }
            }
            Err(why) => why,
        };
        Some(Toll {
            kind: spec.kind,
            outcome,
        })
    }

    fn figure(&self, probe: &str, f: &FigureSpec, records: &[&Record]) -> Option<Quantity> {
        let r = records[f.record];
        let series = |group: &str| From {
            probe: probe.to_string(),
            variant: if group.is_empty() {
                "B=*".to_string()
            } else {
                format!("{group}/B=*")
            },
        };
        match f.reads {
            Reads::Cost => self.cost(f.what, r).map(|q| readable(q, Some(r))),
            Reads::Added => self.added(f.what, r).map(|q| readable(q, Some(r))),
            Reads::Over(base) => self
                .times(f.what, r, records[base])
                .map(|q| readable(q, Some(r))),
            Reads::WaitP99 => self.wait_p99(f.what, r).map(|q| readable(q, Some(r))),
            Reads::FitPerCall(group) => self.fit(f.what, probe, group, series(group), true),
            Reads::FitPerItem(group) => self.fit(f.what, probe, group, series(group), false),
            Reads::WithinBudget(group) => self.within_budget(f.what, probe, group, series(group)),
            Reads::Step { from, steps } => self.step(f.what, records[from], r, steps),
        }
    }

    fn ns(&self, ticks: f64) -> Option<f64> {
        self.mhz.map(|mhz| ticks / mhz * 1000.0)
    }

    /// A record's own cost, in ns (held to the ±50% rule by [`readable`]).
    fn cost(&self, what: &str, r: &Record) -> Option<Quantity> {
        // The figure the table shows: at the run's reference speed.
        let shown = r.shown_ns()?;
        Some(Quantity {
            what: what.to_string(),
            figure: shown,
            unit: Unit::Ns,
            from: from(r),
            note: cost_note(r, shown.ci95.is_some()),
        })
    }

    /// What a record adds to its baseline, in ns (the paired difference),
    /// with where the next run's may land. Read from pairs of every state
    /// where a run of two had too few quiet ones, it says so.
    fn added(&self, what: &str, r: &Record) -> Option<Quantity> {
        let vs = r.vs_baseline.as_ref()?;
        let delta = vs.next_run_delta();
        let off_the_quiet_level = vs
            .basis
            .off_the_quiet_level(self.doc.machine_states.model.two_states);
        let note = cost_note(r, true)
            .or_else(|| off_the_quiet_level.then(|| PAIRS_OFF_THE_QUIET_LEVEL.to_string()))
            .or_else(|| {
                delta
                    .ci95
                    .is_none()
                    .then(|| too_few(vs.pairs, "pairs of rounds"))
            });
        Some(Quantity {
            what: what.to_string(),
            figure: self.ns_figure(delta)?,
            unit: Unit::Ns,
            from: from(r),
            note,
        })
    }

    /// The step from `a`'s cost to `r`'s over `steps` (a further rule of
    /// a filter), in ns: the two rows' shown figures less each other, their
    /// intervals in quadrature (a bound for rows of one run,
    /// `analysis::combine`).
    fn step(&self, what: &str, a: &Record, r: &Record, steps: f64) -> Option<Quantity> {
        let (from_shown, to_shown) = (a.shown_ticks()?, r.shown_ticks()?);
        let step = crate::analysis::combine::difference(to_shown, from_shown).map(|t| t / steps);
        let note = cost_note(r, true)
            .or_else(|| cost_note(a, true))
            .or_else(|| {
                step.ci95
                    .is_none()
                    .then(|| "no interval: one of the two rows it steps between has none".into())
            });
        Some(Quantity {
            what: what.to_string(),
            figure: self.ns_figure(step)?,
            unit: Unit::Ns,
            from: self::from(r),
            note,
        })
    }

    /// A figure in ticks, its interval too, in ns.
    fn ns_figure(&self, ticks: Figure) -> Option<Figure> {
        Some(Figure::new(
            self.ns(ticks.value)?,
            ticks
                .ci95
                .and_then(|[lo, hi]| Some([self.ns(lo)?, self.ns(hi)?])),
        ))
    }

    /// `variant`'s cost over `base`'s: their headlines' ratio, with the
    /// interval of the ratio over pairs of their rounds run side by side
    /// (same pass, same fork), widened to hold the headlines' own and the
    /// ratio of the two headlines' next-run intervals
    /// (`analysis::combine::ratio`): the pairs see this run's rounds only,
    /// and three quick runs on the busy Zen 3 guest read SSBD's 4.37x
    /// [4.33, 4.37], 3.68x and 4.17x.
    fn times(&self, what: &str, r: &Record, base: &Record) -> Option<Quantity> {
        let (a, b) = (r.shown_ticks()?, base.shown_ticks()?);
        if b.value <= 0.0 {
            return None;
        }
        let pairs = crate::analysis::rounds::pair_by_pass(r.pass_rounds(), &base.pass_rounds());
        let paired = crate::analysis::rounds::paired(
            &pairs,
            self.doc.machine_states.model.two_states,
            crate::analysis::rounds::seed_of(&r.id),
        );
        let apart = crate::analysis::combine::ratio(a, b);
        let ratio = apart.value;
        let from_pairs = paired
            .as_ref()
            .and_then(|p| p.ratio.ci95)
            .map(|[lo, hi]| [lo.min(ratio), hi.max(ratio)]);
        let interval = match (from_pairs, apart.ci95) {
            (Some([lo, hi]), Some([a_lo, a_hi])) => Some([lo.min(a_lo), hi.max(a_hi)]),
            (pairs, apart) => pairs.or(apart),
        };
        let note = cost_note(r, true)
            .or_else(|| cost_note(base, true))
            .or_else(|| {
                interval.is_none().then(|| {
                    too_few(
                        paired.map_or(0, |p| p.pairs),
                        "pairs of rounds run side by side",
                    )
                })
            });
        Some(Quantity {
            what: what.to_string(),
            figure: Figure::new(ratio, interval),
            unit: Unit::Times,
            from: from(r),
            note,
        })
    }

    /// A co-runner's p99 wait beside a record, µs.
    fn wait_p99(&self, what: &str, r: &Record) -> Option<Quantity> {
        let f = r
            .figures
            .iter()
            .find(|f| f.role == FigureRole::CoRunnerWaitP99)?;
        Some(Quantity {
            what: what.to_string(),
            figure: f.figure,
            unit: Unit::Us,
            from: from(r),
            note: wait_note(r, f.figure.ci95.is_some()),
        })
    }

    /// The largest batch of a series one of which fits the run's latency
    /// budget, from the fit's centre, with the band's two ends as its
    /// interval: the batch size the budget allows, which the curve's
    /// uncertainty moves (the share of the toll a batch wins back does not
    /// need the fit: B0/B is left at B, so the advice gives it apart).
    fn within_budget(&self, what: &str, probe: &str, group: &str, from: From) -> Option<Quantity> {
        let fit = self.doc.fit_of(probe, group)?;
        let budget = self.latency_budget();
        let batches = advice::batches_within(fit, self.mhz?, budget);
        let largest_measured = self.doc.measured_sizes(probe, group).max()?;
        let (value, said) = match batches.central {
            None => (0.0, Some(NO_BATCH_FITS.to_string())),
            Some(u64::MAX) => (
                largest_measured as f64,
                Some(format!(
                    "{ANY_BATCH_FITS}, up to B={largest_measured} measured"
                )),
            ),
            Some(b) => (
                b as f64,
                (b > largest_measured)
                    .then(|| format!("the fit's line beyond B={largest_measured} measured")),
            ),
        };
        let interval = match (batches.central, batches.cautious, batches.bold) {
            (None | Some(u64::MAX), ..) | (_, _, Some(u64::MAX)) => None,
            (_, low, high) => Some([low.unwrap_or(0) as f64, high.unwrap_or(0) as f64]),
        };
        let unbounded = (batches.central.is_some_and(|b| b != u64::MAX) && interval.is_none())
            .then(|| NO_UPPER_BATCH.to_string());
        let notes: Vec<String> = [self.series_note(probe, group), said, unbounded]
            .into_iter()
            .flatten()
            .collect();
        let note = (!notes.is_empty()).then(|| notes.join("; "));
        Some(Quantity {
            what: format!("{what} in {}", advice::budget_words(budget)),
            figure: Figure::new(value, interval),
            unit: Unit::Batch,
            from,
            note,
        })
    }

    /// The latency budget the run's advice was made for (either kind's:
    /// a run whose fits win nothing back has only the co-runners').
    fn latency_budget(&self) -> std::time::Duration {
        let doc = self.doc;
        doc.advice
            .first()
            .map(|a| a.latency_budget_us)
            .or_else(|| doc.latency_advice.first().map(|a| a.latency_budget_us))
            .map_or(advice::DEFAULT_LATENCY_BUDGET, |us| {
                std::time::Duration::from_secs_f64(us / 1e6)
            })
    }

    /// A series' fitted toll per batch (per call), or per item, in ns.
    fn fit(
        &self,
        what: &str,
        probe: &str,
        group: &str,
        from: From,
        per_call: bool,
    ) -> Option<Quantity> {
        let fit = self.doc.fit_of(probe, group)?;
        let fitted = if per_call {
            fit.fit.per_batch
        } else {
            fit.fit.per_item
        };
        let [lo, hi] = fitted.ends();
        Some(Quantity {
            what: what.to_string(),
            figure: Figure::new(self.ns(fitted.value)?, Some([self.ns(lo)?, self.ns(hi)?])),
            unit: Unit::Ns,
            from,
            note: self.series_note(probe, group),
        })
    }

    /// The note a fit over a series carries where some of its batch sizes
    /// had no quiet round: the curve then stands partly on a slow level
    /// (five quick runs on a 2-vCPU AMD EPYC guest, 2026-12-03: mprotect's
    /// "per call" read 2,045 ns [1,958, 2,133] with every batch size slow,
    /// against 1,513-1,531 in the other runs, its line silent).
    fn series_note(&self, probe: &str, group: &str) -> Option<String> {
        let series: Vec<&Record> = self
            .doc
            .series(probe, group)
            .filter(|r| r.cost.is_some())
            .collect();
        match series.iter().filter(|r| no_quiet_round(r)).count() {
            0 => None,
            slow if slow == series.len() => Some(SLOW_LEVEL.to_string()),
            slow => Some(format!(
                "slow level in part: {slow} of {} batch sizes without a quiet round in this run",
                series.len()
            )),
        }
    }
}

fn from(r: &Record) -> From {
    From {
        probe: r.id.clone(),
        variant: r.variant.clone(),
    }
}
