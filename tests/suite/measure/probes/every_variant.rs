//! Every probe variant, run with a tiny budget: the figures must be sane
//! whatever the machine's speed. No absolute timings are asserted.

use crate::common;
use mitbench::analysis::interval::Figure;

use mitbench::measure::probes::{self, Kind, Outcome, Placement};
use std::collections::BTreeMap;

#[test]
fn every_probe_variant_gives_sane_figures() {
    let cpu = common::measuring_cpu();
    let placement = cpu.placement.clone();
    let allowed = placement.allowed.clone();
    let harness = common::tiny_harness();
    let mut medians = Figures {
        timed: BTreeMap::new(),
        refused: BTreeMap::new(),
        placement: placement.clone(),
        harness: common::tiny_harness(),
    };
    for probe in probes::registry() {
        let id = probe.declaration().id;
        let variants = probe.variants();
        let baselines = variants.iter().filter(|v| v.is_baseline()).count();
        assert!(baselines <= 1, "{id}: {baselines} baselines");
        for variant in &variants {
            let label = format!("{id} {}", variant.name);
            match probe.run(variant, &placement, &harness) {
                Outcome::Measured(measured) => {
                    let m = &measured.measurement;
                    let s = &m.per_item;
                    // A round times at least one batch; how many samples
                    // more fit in it depends on the CPU share the round
                    // gets, which no test may assume.
                    assert!(s.n >= 1, "{label}: no sample");
                    let median = s.median.value;
                    let [lo, hi] = s.median.ends();
                    for value in [median, lo, hi, s.mad, s.p99, s.max] {
                        assert!(value.is_finite(), "{label}: non-finite figure");
                    }
                    assert!(lo <= median && median <= hi, "{label}: CI excludes median");
                    assert!(
                        s.min <= median && median <= s.max,
                        "{label}: median outside range"
                    );
                    assert!(m.items >= s.n as u64, "{label}: fewer items than samples");
                    for p in &m.phases {
                        let [lo, hi] = p.ticks.ends();
                        let ticks = p.ticks.value;
                        assert!(
                            ticks.is_finite() && ticks >= 0.0,
                            "{label}: phase {} costs {ticks}",
                            p.name,
                        );
                        assert!(lo <= ticks && ticks <= hi);
                        assert!(
                            (0.0..=100.0).contains(&p.share_pct.value),
                            "{label}: phase {} share {}",
                            p.name,
                            p.share_pct.value
                        );
                    }
                    assert!(m.base_batch >= 1);
                    assert_eq!(
                        measured.cpus[0], placement.cpu,
                        "{label}: measured off its CPU"
                    );
                    if id == "memory/shootdown" && variant.name.ends_with("/remote") {
                        // The second thread's own reading of its CPU.
                        assert_eq!(
                            measured.cpus.get(1).copied(),
                            placement.other_cpu(),
                            "{label}: remote thread CPU"
                        );
                        // How long the spinner stalled is a share of the
                        // round, measured on every remote round.
                        let stalled = measured.partner_stalled;
                        assert!(
                            stalled.is_some_and(|share| (0.0..=1.0).contains(&share)),
                            "{label}: partner stalled {stalled:?}"
                        );
                        // Where the host placed the two CPUs: a cache line's
                        // trip there and back, timed before the round.
                        let trip = measured
                            .figures
                            .iter()
                            .find(|f| f.name == mitbench::measure::probes::PARTNER_ROUND_TRIP);
                        assert!(
                            trip.is_some_and(|f| f.figure.value.is_finite() && f.figure.value > 0.0),
                            "{label}: round trip {trip:?}"
                        );
                    } else {
                        assert_eq!(measured.partner_stalled, None, "{label}");
                    }
                    if id != "harness/floor" {
                        assert!(s.median.value > 0.0, "{label}: median {:?}", s.median);
                    }
                    // The fixed cost of a sample is positive and below what
                    // a whole batch of the smallest size takes: the empty
                    // and the full samples are timed in turn, so a busy
                    // machine slows both, and this holds under co-runners
                    // as on a quiet machine (a fixed bound of 5,000 ticks
                    // failed at 77,870 beside two). Long items on the tiny
                    // budget leave one or two empty samples, whose median
                    // one interrupt can set; the claim needs samples.
                    assert!(
                        m.fit.intercept > 0.0,
                        "{label}: intercept {}",
                        m.fit.intercept
                    );
                    // Not above it: equal where one item costs less than
                    // the timer's own jitter (an indirect/call retpoline
                    // row read 78 ticks empty and at batch 1 in a CI run).
                    let smallest_batch = m.size_medians.iter().find(|(n, _)| *n > 0);
                    assert!(
                        s.n < 8 || smallest_batch.is_none_or(|(_, t)| m.fit.intercept <= *t),
                        "{label}: intercept {} against the smallest batch {smallest_batch:?}",
                        m.fit.intercept
                    );
                    medians.timed.insert(label, (s.median, s.min));
                }
                Outcome::Unsupported(why) => {
                    // Some refusals are the machine's (a force-disabled
                    // control, no io_uring, no THP); each says why, with a
                    // kind. A variant needing two CPUs has them whenever
                    // two exist.
                    assert!(
                        !why.reason.is_empty(),
                        "{label}: unsupported without a reason"
                    );
                    let needs_two =
                        variant.name.ends_with("cross-cpu") || variant.name.ends_with("/remote");
                    assert!(
                        !needs_two || allowed.len() == 1,
                        "{label} unsupported here: {why}"
                    );
                    if needs_two {
                        assert!(matches!(why.kind, Kind::NeedsCpus { needed: 2, .. }));
                    }
                    medians.refused.insert(label, why.to_string());
                }
                Outcome::Interrupted => panic!("{label}: interrupted without a signal"),
            }
        }
    }
    // A TLS session over a socketpair does all a bare socketpair does, and
    // a handshake besides.
    for t in ["T1", "T10", "T100"] {
        let churn = |v: &str| format!("thread/churn-{t} {v}");
        medians.dearer(&churn("tls"), &churn("socketpair"));
    }
    // A crossing is never cheaper than its bypass.
    medians.dearer("os/getpid syscall", "os/getpid cached");
    // An exit to the hypervisor does all a serialising barrier does in
    // the guest, and the round trip to the host besides (on a guest; the
    // probe refuses elsewhere).
    medians.dearer("guest/exit cpuid", "guest/exit lfence");
    // (Not the vDSO against the syscall: where the clocksource has no vDSO
    // read, the vDSO call makes the same syscall.)
    // Copying the page tables is never cheaper than sharing them.
    medians.dearer("os/fork fork", "os/fork vfork");
    // A thunked call is never cheaper than a plain one, and the wrapper's
    // miss pays the thunk.
    let call = |v: &str| format!("indirect/call {v}");
    medians.dearer(&call("retpoline"), &call("indirect"));
    medians.dearer(&call("return-thunk"), &call("indirect"));
    medians.dearer(&call("wrapper/miss"), &call("wrapper/hit"));
    // Every sequence the kernel runs for a mitigation does all a plain
    // call does, and more: a serialising LFENCE, 32 calls, 5 calls of 5
    // jumps, or a return the predictor cannot follow.
    let sequence = |v: &str| format!("kernel/sequences {v}");
    for v in ["srso-untrain", "srso-return-thunk", "rsb-fill", "bhb-clear"] {
        medians.dearer(&sequence(v), &sequence("call+ret"));
    }
    // A syscall does all a plain call and return does and a crossing
    // besides; made from a function it does all the inline one does, and
    // a call and return: never cheaper beyond the level a process's
    // placement sets (forks of one row disagreed by a median 2.2% on an
    // Intel guest, issue 61; 5% is the margin, fixed before the run).
    let returns = |v: &str| format!("os/syscall-return {v}");
    medians.dearer(&returns("getpid/inline"), &returns("call+ret"));
    // (Not the page fault or the signal: at these budgets their inline
    // rows read 30% and 26% above the in-function ones in two CI runs on
    // the AMD guest, 5293 against 4084 and 8026 against 6369 ticks, a
    // round's slow level or a fresh page's first touch; nor the yield's
    // switch: its partner shares the CPU with whatever else runs, and its
    // inline row read ±7% in a quiet run. No invariant at a tiny budget.)
    for syscall in ["getpid", "getuid", "getppid", "close-bad-fd"] {
        let inline = returns(&format!("{syscall}/inline"));
        medians.not_cheaper_beyond(&returns(&format!("{syscall}/in-fn")), &inline, 0.05);
        // Refilling the return stack after the crossing is never dearer
        // than the call from a function beyond what the pushes cost alone
        // (on a kernel that leaves the return stack to the user, the win
        // is nothing and the refill costs its pushes): the same 5%.
        for entries in [2, 4, 16] {
            medians.within_the_pushes(
                &returns(&format!("{syscall}/refill-{entries}")),
                &returns(&format!("{syscall}/in-fn")),
                [
                    &returns(&format!("refill-{entries}/alone")),
                    &returns("call+ret"),
                ],
                0.05,
            );
        }
    }
    // (Not the ITS thunks against the plain call and return: a jump more
    // may cost nothing, and a placement's own level made the thunked
    // return cheaper in one CI run, 5.6 against 6.5 ticks; no invariant.)
    for frame in ["64", "1500"] {
        let packet = |v: &str| format!("indirect/pipeline-{frame} {v}");
        medians.dearer(&packet("retpoline/B=1"), &packet("plain/B=1"));
        // Bulking shares each thunk among the bulk.
        medians.dearer(&packet("retpoline/B=1"), &packet("retpoline/B=64"));
    }
    // Changing protection of a 64-page range costs less per page than one
    // page at a time. (Whether a remote thread makes a flush dearer is the
    // machine's answer, not an invariant: a paravirtual TLB flush can skip
    // the IPI to a preempted vCPU.)
    medians.dearer("memory/mprotect B=1", "memory/mprotect B=64");
    // The same C built with thunks is never cheaper than built without.
    for kernel in ["pipeline", "interp"] {
        let cost = |set: &str| format!("cflags/{kernel} {set}");
        medians.dearer(&cost("retpoline"), &cost("plain"));
        medians.dearer(&cost("retpoline+return-thunk"), &cost("plain"));
    }
}

/// Each measured row's round figure and its 95% interval, by "probe
/// variant". A row the machine refused (no PROT_EXEC, one CPU) is kept
/// with its reason: an order that names it is skipped and said; an order
/// that names a row neither measured nor refused (a renamed variant)
/// fails.
struct Figures {
    timed: BTreeMap<String, Timed>,
    refused: BTreeMap<String, String>,
    placement: Placement,
    harness: mitbench::measure::harness::Harness,
}

/// A round's median with its 95% interval, and its fastest sample.
type Timed = (Figure, f64);

/// Rounds of each row when an order is measured again in turns.
const TURNS: usize = 3;

impl Figures {
    /// The rows' figures, or None (said) where the machine refused one.
    fn rows<const N: usize>(&self, labels: [&str; N]) -> Option<[Timed; N]> {
        let mut found = Vec::with_capacity(N);
        for label in labels {
            match (self.timed.get(label), self.refused.get(label)) {
                (Some(timed), _) => found.push(*timed),
                (None, Some(why)) => {
                    common::skipped(&format!("{labels:?}: {label} refused: {why}"));
                    return None;
                }
                (None, None) => panic!("{label}: no such row was run (renamed?)"),
            }
        }
        found.try_into().ok()
    }

    /// Whether `holds` holds of the rows `labels`; where it does not in
    /// their one round each, measured again in turns (`a b a b ...`,
    /// [`TURNS`] rounds each) and read at each row's fastest round. The
    /// rows ran seconds apart in the test, and a slow stretch of the host
    /// lifts every round in it (inline getpid read 447 ticks against 408
    /// from a function in one CI run): in turns, both see the host alike.
    /// The margins of the orders are not moved. None where the machine
    /// refused a row; else the rows' figures and whether the order held.
    fn hold<const N: usize>(
        &mut self,
        labels: [&str; N],
        holds: impl Fn(&[Timed; N]) -> bool,
    ) -> Option<([Timed; N], bool)> {
        let rows = self.rows(labels)?;
        if holds(&rows) {
            return Some((rows, true));
        }
        let registry = probes::registry();
        let mut fastest: BTreeMap<&str, Timed> = BTreeMap::new();
        for _ in 0..TURNS {
            for label in labels {
                let (id, name) = label.split_once(' ').expect("probe variant");
                let probe = registry
                    .iter()
                    .find(|p| p.declaration().id == id)
                    .unwrap_or_else(|| panic!("{label}: no probe {id}"));
                let variant = probe
                    .variants()
                    .into_iter()
                    .find(|v| v.name == name)
                    .unwrap_or_else(|| panic!("{label}: no variant {name}"));
                if let Outcome::Measured(m) = probe.run(&variant, &self.placement, &self.harness) {
                    let s = &m.measurement.per_item;
                    let round = (s.median, s.min);
                    let kept = fastest.entry(label).or_insert(round);
                    if round.0.value < kept.0.value {
                        *kept = round;
                    }
                }
            }
        }
        for (label, round) in fastest {
            self.timed.insert(label.to_string(), round);
        }
        let rows = self.rows(labels)?;
        Some((rows, holds(&rows)))
    }

    /// `more` is not cheaper than `less` beyond `margin` of its own figure
    /// and both intervals: orders whose gap may be nothing on some CPU.
    fn not_cheaper_beyond(&mut self, more: &str, less: &str, margin: f64) {
        let order = |[(a, _), (b, _)]: &[Timed; 2]| a.ends()[1] * (1.0 + margin) >= b.ends()[0];
        if let Some(([(a, _), (b, _)], held)) = self.hold([more, less], order) {
            assert!(
                held,
                "{more} ({}) is cheaper than {less} ({}) beyond noise",
                a.value, b.value
            );
        }
    }

    /// `refilled` costs no more than `plain` and what the pushes cost
    /// alone (`alone` less a plain `call`) beyond `margin` of `plain` and
    /// the intervals.
    fn within_the_pushes(
        &mut self,
        refilled: &str,
        plain: &str,
        [alone, call]: [&str; 2],
        margin: f64,
    ) {
        let order = |[(r, _), (p, _), (a, _), (c, _)]: &[Timed; 4]| {
            let pushes = (a.ends()[1] - c.ends()[0]).max(0.0);
            r.ends()[0] <= (p.ends()[1] + pushes) * (1.0 + margin)
        };
        if let Some(([r, p, ..], held)) = self.hold([refilled, plain, alone, call], order) {
            assert!(
                held,
                "{refilled} ({}) is dearer than {plain} ({}) and the pushes",
                r.0.value, p.0.value
            );
        }
    }

    /// `dearer` costs more than `cheaper`: orders whose gap is many times
    /// any noise (a thunk, a handshake, a page-table copy): in the medians
    /// or in the fastest samples, which nothing that only adds time lifts.
    fn dearer(&mut self, dearer: &str, cheaper: &str) {
        let order = |[(a, a_min), (b, b_min)]: &[Timed; 2]| a.value > b.value || a_min > b_min;
        if let Some(([(a, a_min), (b, b_min)], held)) = self.hold([dearer, cheaper], order) {
            assert!(
                held,
                "{dearer} ({}, fastest {a_min}) is not dearer than {cheaper} ({}, fastest {b_min})",
                a.value, b.value
            );
        }
    }
}

#[test]
fn cross_cpu_needs_a_second_cpu() {
    let ctx = probes::select(&["os/ctxswitch".to_string()]).unwrap()[0];
    let variants = ctx.variants();
    let cross = variants
        .iter()
        .find(|v| v.name == "futex/cross-cpu")
        .unwrap();
    let alone = Placement {
        cpu: 0,
        allowed: vec![0],
    };
    let why = ctx.check(cross, &alone).unwrap_err();
    assert!(why.reason.contains("second CPU"), "{why}");
    assert_eq!(
        why.kind,
        Kind::NeedsCpus {
            needed: 2,
            allowed: 1
        }
    );
    let pair = Placement {
        cpu: 1,
        allowed: vec![0, 1],
    };
    assert!(ctx.check(cross, &pair).is_ok());
    assert_eq!(pair.other_cpu(), Some(0));
}

#[test]
fn selection_by_id_glob_and_family() {
    let ids = |patterns: &[&str]| -> Vec<&'static str> {
        let patterns: Vec<String> = patterns.iter().map(|p| p.to_string()).collect();
        probes::select(&patterns)
            .unwrap()
            .iter()
            .map(|p| p.declaration().id)
            .collect()
    };
    assert_eq!(ids(&["os/getpid"]), vec!["os/getpid"]);
    assert_eq!(ids(&["os/*"]).len(), 7);
    assert_eq!(ids(&["os"]), ids(&["os/*"]));
    assert_eq!(
        ids(&["os/fork", "harness/*"]),
        vec!["harness/floor", "os/fork"],
        "registry order, no duplicates"
    );
    assert_eq!(ids(&[]).len(), probes::registry().len());
    let miss = probes::select(&["os/getpd".to_string()]).err().unwrap();
    assert_eq!(miss.closest.first(), Some(&"os/getpid"));
    let miss = probes::select(&["os/*".to_string(), "nothing/*".to_string()])
        .err()
        .unwrap();
    assert_eq!(miss.pattern, "nothing/*");
}

/// Every declaration is complete: an id of a known family, unique, a
/// summary and an item, and at least one variant with at most one baseline
/// (a probe of instructions side by side, such as barriers, has none).
#[test]
fn every_probe_is_declared_completely() {
    let probes = mitbench::measure::probes::registry();
    let mut ids = std::collections::BTreeSet::new();
    for probe in probes {
        let d = probe.declaration();
        assert!(ids.insert(d.id), "{} declared twice", d.id);
        assert!(
            mitbench::measure::probes::FAMILIES
                .iter()
                .any(|f| f.name == d.family()),
            "{}: no family {}",
            d.id,
            d.family()
        );
        assert!(
            !d.summary.is_empty() && d.summary == d.summary.trim(),
            "{}",
            d.id
        );
        assert!(!d.item.is_empty(), "{}", d.id);
        let variants = probe.variants();
        assert!(!variants.is_empty(), "{} has no variants", d.id);
        let baselines = variants.iter().filter(|v| v.is_baseline()).count();
        assert!(baselines <= 1, "{}: {baselines} baselines", d.id);
    }
}
