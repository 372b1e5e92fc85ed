//! The one-screen summary, from a stored real run of the default suite
//! (`tests/fixtures/default-run.json`: `mitbench run --json` on a 2-vCPU
//! AMD EPYC guest, each record's rounds left out to keep it small).

use crate::common;

use mitbench::answer::summary::{Answer, Quantity, TollKind, TollStatus, of};
use mitbench::export::Exporter;
use mitbench::export::TableExporter;
use mitbench::export::run::AnswerAt;
use mitbench::export::run::summary;
use mitbench::store::results::RunDocument;

fn fixture() -> RunDocument {
    common::stored_run("default-run.json")
}

/// The figures of the answer's line of `kind`, which must be measured.
fn measured(answer: &Answer, kind: TollKind) -> &[Quantity] {
    let line = answer.tolls.iter().find(|t| t.kind == kind);
    let Some(TollStatus::Measured { figures }) = line.map(|t| &t.outcome) else {
        panic!("no measured {kind:?} line: {line:?}");
    };
    figures
}

#[test]
fn every_entry_names_a_measured_record_of_the_run() {
    let doc = fixture();
    let s = of(&doc);
    let kinds: Vec<TollKind> = s.tolls.iter().map(|t| t.kind).collect();
    for kind in [
        TollKind::NullSyscall,
        TollKind::IndirectCall,
        TollKind::PipelineBulk,
        TollKind::Seccomp,
        TollKind::PageTableChange,
        TollKind::Shootdown,
        TollKind::ThreadChannel,
        TollKind::CryptoSection,
        TollKind::Teardown,
    ] {
        assert!(kinds.contains(&kind), "{kind:?} missing from {kinds:?}");
    }
    for toll in &s.tolls {
        let TollStatus::Measured { figures } = &toll.outcome else {
            continue;
        };
        assert!(!figures.is_empty());
        for q in figures {
            assert!(q.figure.value.is_finite(), "{q:?}");
            let variant = q.from.variant.trim_end_matches('*');
            assert!(
                doc.results.iter().any(|r| r.id == q.from.probe
                    && r.variant.starts_with(variant)
                    && r.cost.is_some()),
                "{:?} names no measured record: {q:?}",
                toll.kind
            );
            if let Some([lo, hi]) = q.figure.ci95 {
                assert!(lo <= q.figure.value && q.figure.value <= hi, "{q:?}");
            }
        }
    }
    // The null syscall is the getpid record's own figure.
    let getpid = doc
        .results
        .iter()
        .find(|r| r.id == "os/getpid" && r.variant == "syscall")
        .unwrap();
    let TollStatus::Measured { figures } = &s.tolls[0].outcome else {
        panic!("the null syscall was measured")
    };
    assert_eq!(figures[0].figure.value, getpid.cost.as_ref().unwrap().ns());
}

#[test]
fn a_run_without_a_family_leaves_its_lines_out() {
    let mut doc = fixture();
    doc.results
        .retain(|r| r.family != "section" && r.family != "teardown");
    let kinds: Vec<TollKind> = of(&doc).tolls.iter().map(|t| t.kind).collect();
    assert!(!kinds.contains(&TollKind::CryptoSection), "{kinds:?}");
    assert!(!kinds.contains(&TollKind::Teardown), "{kinds:?}");
    assert!(kinds.contains(&TollKind::NullSyscall));
}

#[test]
fn a_toll_the_machine_could_not_measure_says_why_in_one_line() {
    let mut doc = fixture();
    let thread = doc
        .results
        .iter_mut()
        .find(|r| r.id == "thread/churn-T1" && r.variant == "eventfd")
        .unwrap();
    thread.cost = None;
    thread.unsupported = Some(mitbench::measure::probes::Unsupported::missing(
        "eventfd",
        "eventfd is not available",
    ));
    let s = of(&doc);
    let toll = s
        .tolls
        .iter()
        .find(|t| t.kind == TollKind::ThreadChannel)
        .unwrap();
    assert!(
        matches!(&toll.outcome, TollStatus::Unsupported { reason, .. } if reason.contains("eventfd"))
    );
    let lines = summary::lines(&s, 100);
    let line = lines
        .iter()
        .find(|l| l.starts_with("thread + channel"))
        .unwrap();
    assert!(
        line.contains("unsupported: eventfd is not available"),
        "{line}"
    );
}

/// The fixture with the kernel's price list replayed: each sequence of
/// `kernel/sequences` 20 ns above its baseline.
fn with_price_list() -> RunDocument {
    let mut doc = fixture();
    let base = doc
        .results
        .iter()
        .find(|r| r.id == "indirect/call" && r.variant == "retpoline")
        .unwrap()
        .clone();
    for variant in ["srso-untrain", "srso-return-thunk", "rsb-fill", "bhb-clear"] {
        let mut r = base.clone();
        r.id = "kernel/sequences".into();
        r.variant = variant.into();
        doc.results.push(r);
    }
    doc
}

#[test]
fn the_summary_fits_one_screen_and_the_tables_fit_the_width() {
    // One screen: the tolls, the kernel's price list and the boots, in at
    // most 30 lines of 100 columns (25 before the price list).
    let doc = with_price_list();
    let lines = summary::lines(&of(&doc), 100);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("kernel, replayed: return thunks / SRSO")),
        "{lines:#?}"
    );
    assert!(
        lines.len() <= 30,
        "{} lines:\n{}",
        lines.len(),
        lines.join("\n")
    );
    for l in &lines {
        assert!(l.chars().count() <= 100, "{l}");
    }
    for width in [80, 100, 132] {
        let text = TableExporter {
            width: Some(width),
            answer: AnswerAt::Last,
        }
        .render(&mitbench::export::RunView::of(&doc))
        .unwrap();
        let text = String::from_utf8(text).unwrap();
        for l in text.lines() {
            assert!(l.chars().count() <= width, "{width}: {l}");
        }
        // The summary is the last thing printed, whole.
        let summary = summary::lines(&of(&doc), width);
        let last: Vec<&str> = text.trim_end().lines().rev().take(summary.len()).collect();
        let last: Vec<String> = last.into_iter().rev().map(str::to_string).collect();
        assert_eq!(last, summary, "no summary at the end at {width} columns");
    }
    // On a pipe the answer comes right after the header, whole, before
    // the first table.
    let piped = TableExporter {
        width: Some(100),
        answer: AnswerAt::First,
    }
    .render(&mitbench::export::RunView::of(&doc))
    .unwrap();
    let piped = String::from_utf8(piped).unwrap();
    let summary = summary::lines(&of(&doc), 100).join("\n");
    let answer_at = piped.find(&summary).expect("the whole answer on a pipe");
    let first_table = piped.find('┌').expect("a table");
    assert!(
        answer_at < first_table,
        "the answer after a table on a pipe"
    );
    assert_eq!(piped.matches(&summary).count(), 1, "the answer twice");
    // --wide: every note whole, in one row.
    let wide = String::from_utf8(
        TableExporter {
            width: None,
            answer: AnswerAt::Last,
        }
        .render(&mitbench::export::RunView::of(&doc))
        .unwrap(),
    )
    .unwrap();
    let notes: Vec<&str> = doc
        .results
        .iter()
        .filter(|r| r.cost.as_ref().is_some_and(|c| !c.target_met))
        .map(|_| "CI target not met")
        .collect();
    if !notes.is_empty() {
        assert!(wide.contains("CI target not met"));
    }
}

#[test]
fn the_json_and_the_markdown_begin_with_the_summary() {
    let doc = fixture();
    let json = mitbench::export::JsonExporter
        .render(&mitbench::export::RunView::of(&doc))
        .unwrap();
    let text = String::from_utf8(json.clone()).unwrap();
    assert!(text.starts_with("{\n  \"summary\": {"), "{}", &text[..80]);
    let value: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let tolls = value["summary"]["tolls"].as_array().unwrap();
    assert!(
        tolls
            .iter()
            .all(|t| t["kind"].is_string() && t["status"].is_string())
    );
    // A program reading it back as a run document skips it.
    let back: RunDocument = serde_json::from_slice(&json).unwrap();
    assert_eq!(back.results.len(), doc.results.len());
    let md = mitbench::export::MarkdownExporter
        .render(&mitbench::export::RunView::of(&doc))
        .unwrap();
    let md = String::from_utf8(md).unwrap();
    let summary_at = md.find("## What the mitigations cost").unwrap();
    let first_family = md.find("\n## ").unwrap();
    assert!(summary_at <= first_family + 1, "the summary is not first");
}

/// An Intel guest's kernel runs more sequences (branch-history clearing,
/// ITS thunks, the SWAPGS LFENCE, VERW): its price list is longer, and the
/// answer still fits one screen.
#[test]
fn an_intel_kernels_longer_price_list_still_fits_one_screen() {
    use mitbench::answer::prices::lay_price;
    let mut doc = fixture();
    for (row, ns) in [
        (("kernel/sequences", "bhb-clear"), 17.3),
        (("kernel/sequences", "rsb-fill"), 31.4),
        (("kernel/sequences", "indirect-call"), 1.1),
        (("kernel/sequences", "its-indirect-thunk"), 1.5),
        (("kernel/sequences", "its-return-thunk"), 0.3),
        // The return after a crossing, which the null syscall's line names.
        (("os/syscall-return", "call+ret"), 0.0),
        (("os/syscall-return", "getpid/inline"), 102.0),
        (("os/syscall-return", "getpid/in-fn"), 135.0),
        (
            ("syscall/specctrl-switch", "indirect_branch=disable"),
            1800.0,
        ),
    ] {
        lay_price(&mut doc, row, ns);
    }
    let cpu = &mut doc.inventory.cpu;
    cpu.vendor = "GenuineIntel".into();
    cpu.model_name = "Intel(R) Xeon(R) Platinum 8480+".into();
    for (file, line) in [
        (
            "spectre_v2",
            "Mitigation: Enhanced / Automatic IBRS; IBPB: conditional; RSB filling; \
             PBRSB-eIBRS: SW sequence; BHI: SW loop, KVM: SW loop",
        ),
        (
            "spectre_v1",
            "Mitigation: usercopy/swapgs barriers and __user pointer sanitization",
        ),
        (
            "indirect_target_selection",
            "Mitigation: Aligned branch/return thunks",
        ),
        (
            "mds",
            "Mitigation: Clear CPU buffers; SMT Host state unknown",
        ),
        ("spec_rstack_overflow", "Not affected"),
    ] {
        cpu.vulnerabilities.insert(file.into(), line.into());
    }
    let lines = summary::lines(&of(&doc), 100);
    let text = lines.join("\n");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("null syscall") && l.contains("from a function +33")),
        "{text}"
    );
    prices_join_in_force(&doc);
    for named in ["BHI", "ITS", "IBPB", "spectre_v1 barriers", "VERW"] {
        assert!(text.contains(named), "{named} not in:\n{text}");
    }
    assert!(lines.len() <= 30, "{} lines:\n{text}", lines.len());
}

/// A fixture tree of an Intel guest booted with `spectre_v2=retpoline`,
/// whose spectre_v2 line reads "BHI: Retpoline": the retpolines are the
/// BHI mitigation and no clearing loop runs (tests/fixtures/
/// intel-bhi-retpoline, made from the intel-xeon-guest tree with that
/// line; not captured from one machine). A run on it that replayed the
/// clearing loop anyway: no output names the loop in force or charges it
/// per crossing; the retpolines are in force.
#[test]
fn bhi_mitigated_by_the_retpolines_is_no_clearing_loop_in_any_output() {
    use mitbench::answer::prices::lay_price;
    use mitbench::export::RunView;
    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/intel-bhi-retpoline");
    let tree = mitbench::inventory::Inventory::collect(&root);
    assert!(tree.cpu.vulnerabilities["spectre_v2"].ends_with("BHI: Retpoline"));
    let mut doc = fixture();
    lay_price(&mut doc, ("kernel/sequences", "bhb-clear"), 17.3);
    doc.inventory.cpu.vendor = tree.cpu.vendor.clone();
    doc.inventory.cpu.model_name = tree.cpu.model_name.clone();
    doc.inventory.cpu.vulnerabilities = tree.cpu.vulnerabilities.clone();
    doc.inventory.kernel.cmdline = tree.kernel.cmdline.clone();
    let s = of(&doc);
    let in_force: Vec<&str> = mitbench::answer::vectors::in_force(&doc.inventory)
        .iter()
        .map(|m| m.name)
        .collect();
    assert!(
        in_force.iter().any(|m| m.starts_with("retpoline")),
        "{in_force:?}"
    );
    assert!(
        !in_force.iter().any(|m| m.starts_with("BHI")),
        "{in_force:?}"
    );
    assert!(
        s.kernel
            .prices
            .iter()
            .all(|p| !p.mitigation.starts_with("BHI")),
        "{:?}",
        s.kernel.prices
    );
    // The loop the run replayed is listed as not in force, with the line.
    let bhi = s
        .kernel
        .not_run
        .iter()
        .find(|n| n.mitigation.starts_with("BHI"))
        .expect("the replayed loop is accounted for");
    assert!(
        !bhi.in_force && bhi.why.contains("BHI: Retpoline"),
        "{bhi:?}"
    );
    let run = RunView::of(&doc);
    let text = |out: Vec<u8>| String::from_utf8(out).unwrap();
    let metrics = text(mitbench::export::OpenMetricsExporter.render(&run).unwrap());
    assert!(!metrics.contains("mitigation=\"BHI"), "{metrics}");
    for page in [
        text(mitbench::export::MarkdownExporter.render(&run).unwrap()),
        text(mitbench::export::HtmlExporter.render(&run).unwrap()),
        text(
            TableExporter {
                width: Some(100),
                answer: AnswerAt::First,
            }
            .render(&run)
            .unwrap(),
        ),
    ] {
        assert!(!page.contains("cleared by a loop"), "{page}");
        assert!(!page.contains("BHI (branch history clearing) +"), "{page}");
    }
    // The plan offers no boot for BHI beside spectre_v2's own.
    let plan = mitbench::plan::plan(&tree, 3);
    for boot in &plan.vector_boots {
        assert!(
            !boot.turns_off.iter().any(|m| m.starts_with("BHI")),
            "{:?}",
            boot.turns_off
        );
    }
}

/// A machine reader joins each priced entry of the kernel price list to
/// the vulnerability line that put it in force, by key: every price names
/// the sysfs files it serves, one of them is in `summary.in_force`, and
/// that line lists the price's catalogue id among the mitigations it runs.
fn prices_join_in_force(doc: &RunDocument) {
    let json = serde_json::to_value(of(doc)).unwrap();
    let in_force = json["in_force"].as_array().unwrap();
    let prices = json["kernel"]["prices"].as_array().unwrap();
    assert!(!prices.is_empty());
    for p in prices {
        let serves = |f: &serde_json::Value| {
            p["vulnerabilities"]
                .as_array()
                .unwrap()
                .contains(&f["vulnerability"])
        };
        let joined = in_force
            .iter()
            .filter(|f| serves(f))
            .any(|f| f["mitigations"].as_array().unwrap().contains(&p["id"]));
        assert!(joined, "{p} joins none of {in_force:?}");
    }
}

#[test]
fn the_amd_guests_prices_join_its_in_force_lines_by_key() {
    prices_join_in_force(&with_price_list());
}

/// The return toll is read from pairs of the in-function and inline
/// rounds of one pass: a slowdown both shapes share in a pass (here
/// ±30%, far more than the toll) cancels, and the interval holds the
/// planted toll to within a few ticks, where two rows' intervals added
/// would carry the whole spread. Where a document kept no rounds (the
/// fixture's), the rows' differences are read instead.
#[test]
fn the_return_toll_is_read_from_pairs_of_rounds_of_one_pass() {
    use mitbench::analysis::rounds::RoundState;
    use mitbench::answer::returns;
    use mitbench::store::results::record::RoundRow;
    let mut doc = common::stored_run("syscall-return-run.json");
    let rows_read = returns::of_one(&doc, "getpid").and_then(|t| t.extra_ns);
    assert!(
        rows_read.is_some(),
        "a document without rounds reads its rows"
    );
    let (toll, inline) = (80.0, 300.0);
    let mut rng = fastrand::Rng::with_seed(5);
    let mut made: [Vec<RoundRow>; 2] = Default::default();
    for fork in 0..3 {
        for pass in 0..12 {
            let slowdown = 1.0 + 0.3 * rng.f64();
            for (shape, rounds) in made.iter_mut().enumerate() {
                let ticks = (inline + toll * shape as f64) * slowdown + rng.f64() - 0.5;
                rounds.push(RoundRow {
                    pass,
                    fork,
                    started_s: pass as f64,
                    figure: mitbench::analysis::figure::Figure::new(
                        ticks,
                        Some([ticks - 1.0, ticks + 1.0]),
                    ),
                    n: 100,
                    min_ticks: ticks - 1.0,
                    p99_ticks: ticks + 2.0,
                    fixed_ticks: 0.0,
                    batch_medians_ticks: Vec::new(),
                    canary_before: None,
                    canary_after: None,
                    reference_ticks: None,
                    partner_stalled_pct: None,
                    figures: Default::default(),
                    state: RoundState::Quiet,
                    worker_pid: 1,
                });
            }
        }
    }
    let [inline_rounds, in_fn_rounds] = made;
    for (variant, rounds) in [
        ("getpid/inline", inline_rounds),
        ("getpid/in-fn", in_fn_rounds),
    ] {
        let record = doc
            .results
            .iter_mut()
            .find(|r| r.id == returns::PROBE && r.variant == variant)
            .unwrap();
        record.rounds.each = rounds;
        record.rounds.base_batch = Some(100);
    }
    let mhz = doc.inventory.tsc_mhz.unwrap();
    let read = returns::of_one(&doc, "getpid")
        .and_then(|t| t.extra_ns)
        .unwrap();
    let ticks = |ns: f64| ns * mhz / 1000.0;
    let [lo, hi] = read.ci95.unwrap().map(ticks);
    // The pass's slowdown scales the toll too (80 ticks x up to 1.3), so
    // the pairs' figure is the toll at the passes' own speed; it moves
    // each row by up to 90 ticks, the difference by up to 24.
    assert!(lo <= toll * 1.3 && hi >= toll, "[{lo:.1}, {hi:.1}] ticks");
    assert!(hi - lo < 0.3 * inline / 2.0, "[{lo:.1}, {hi:.1}] ticks");
}

/// The hooks every syscall pays for take one or two lines of the answer
/// where any is in force, with their price where one was read, and none
/// where there are none.
#[test]
fn hooks_on_the_syscall_path_take_a_line_or_two_and_none_without_them() {
    use mitbench::analysis::figure::Figure;
    use mitbench::inventory::hooks::Reading;
    use mitbench::store::results::answered::HookToll;
    let mut doc = fixture();
    doc.inventory.hooks.trace_events = Reading::Read(Vec::new());
    let without = summary::lines(&of(&doc), 100);
    assert!(
        without.iter().all(|l| !l.contains("syscall hooks")),
        "{without:#?}"
    );

    doc.inventory.hooks.trace_events = Reading::Read(vec!["raw_syscalls:sys_enter".into()]);
    let unpriced = summary::lines(&of(&doc), 100);
    let hooks = |lines: &[String]| {
        let at = lines
            .iter()
            .position(|l| l.starts_with("syscall hooks:"))
            .unwrap();
        // The paragraph: its first line and those indented under it.
        let more = lines[at + 1..]
            .iter()
            .take_while(|l| l.starts_with("  "))
            .count();
        let words: Vec<&str> = lines[at..=at + more]
            .iter()
            .flat_map(|l| l.split_whitespace())
            .collect();
        words.join(" ")
    };
    assert!(
        (1..=2).contains(&(unpriced.len() - without.len())),
        "{unpriced:#?}"
    );
    assert!(hooks(&unpriced).contains("trace event raw_syscalls:sys_enter"));
    assert!(
        hooks(&unpriced).contains("not priced"),
        "{}",
        hooks(&unpriced)
    );

    doc.hook_toll = Some(HookToll {
        changed: vec!["trace events enabled: none -> raw_syscalls:sys_enter".into()],
        row: "os/getpid syscall".into(),
        ticks: Figure::new(825.0, Some([800.0, 850.0])),
        ns: Figure::new(275.0, Some([266.7, 283.3])),
        pct: Figure::new(308.0, Some([298.0, 318.0])),
    });
    let priced = summary::lines(&of(&doc), 100);
    assert!(
        (1..=2).contains(&(priced.len() - without.len())),
        "{priced:#?}"
    );
    assert!(
        hooks(&priced).contains("+825 ticks [+800, +850] (+308% [+298, +318]) per syscall"),
        "{}",
        hooks(&priced)
    );
    let markdown = summary::markdown(&of(&doc));
    assert!(
        markdown.contains("Hooks on the syscall path: trace event"),
        "{markdown}"
    );

    // Audit off now, but a stored run of this boot read it on: every new
    // process still pays its path, which the kernel does not say.
    let mut earlier = fixture();
    earlier.inventory.hooks.trace_events = Reading::Read(Vec::new());
    earlier.audit_enabled_in_run = Some(3);
    let lines = summary::lines(&of(&earlier), 100);
    let words = lines
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        words.contains(
            "audit (off, but on in run 3 of this boot: every new process still pays its path)"
        ),
        "{words}"
    );
}

/// A run that measured the refills (tests/fixtures/refill-run.json:
/// `mitbench run --probe os/syscall-return` on the busy 2-vCPU AMD EPYC
/// Zen 3 guest, SRSO safe-RET, 2026-11-29; rounds kept without their batch
/// medians, floats cut to six digits) gives each syscall's win and what
/// the refill leaves, by entries pushed: the win and what is left together
/// are the toll less the pushes' own cost, so never more than the toll.
/// The other crossings have the one refill they were measured with. The
/// answer's null syscall line names the win of the refill it names. A run
/// without the refills (the older fixture) gives none, and no line.
#[test]
fn a_refill_of_the_return_stack_is_priced_where_the_run_measured_it() {
    use mitbench::answer::returns;
    let refilled = common::stored_run("refill-run.json");
    let tolls = returns::of(&refilled);
    assert_eq!(tolls.len(), returns::SYSCALLS.len());
    for t in &tolls {
        let extra = t.extra_ns.expect("the toll");
        let entries: Vec<usize> = t.refills.iter().map(|r| r.entries).collect();
        assert_eq!(entries, returns::REFILLS, "{}", t.crossing);
        for r in &t.refills {
            let (won, left) = (r.won_back_ns.unwrap(), r.left_ns.unwrap());
            for f in [won, left] {
                let [lo, hi] = f.ci95.unwrap();
                assert!(lo <= f.value && f.value <= hi, "{} {f:?}", t.crossing);
            }
            assert!(won.value > 0.0, "{} {}: {won:?}", t.crossing, r.entries);
            assert!(won.value + left.value < extra.value, "{}", t.crossing);
        }
    }
    for t in returns::of_other_crossings(&refilled) {
        let entries: Vec<usize> = t.refills.iter().map(|r| r.entries).collect();
        assert_eq!(entries, [returns::ANSWERED_REFILL], "{}", t.crossing);
    }
    // The answer: the present boot's null syscall line from another run of
    // the same guest, this run's returns.
    let mut doc = fixture();
    doc.results.retain(|r| r.id != returns::PROBE);
    doc.results.extend(refilled.results.iter().cloned());
    let said = null_syscall_line(&doc);
    assert!(
        said.iter()
            .any(|w| w.starts_with("refilling the return stack")),
        "{said:?}"
    );
    let older = common::stored_run("syscall-return-run.json");
    assert!(returns::of(&older).iter().all(|t| t.refills.is_empty()));
    let mut doc = fixture();
    doc.results.retain(|r| r.id != returns::PROBE);
    doc.results.extend(older.results.iter().cloned());
    assert!(
        !null_syscall_line(&doc)
            .iter()
            .any(|w| w.starts_with("refilling"))
    );
}

/// What the answer's null syscall line says, figure by figure.
fn null_syscall_line(doc: &RunDocument) -> Vec<String> {
    let s = of(doc);
    let null = s.tolls.iter().find(|t| t.kind == TollKind::NullSyscall);
    match null.map(|t| &t.outcome) {
        Some(TollStatus::Measured { figures }) => figures.iter().map(|q| q.what.clone()).collect(),
        _ => panic!("no null syscall line"),
    }
}

/// Where a run found no return toll (a CPU or kernel without it), its
/// refill rows say so and nothing reads them as a win: getpid's in-function
/// row of tests/fixtures/refill-run.json laid over with its inline one
/// (the same rounds: a toll of nothing), the other syscalls' as measured.
/// Neither the answer nor tax names a win for it.
#[test]
fn a_refill_is_not_read_as_a_win_where_the_run_found_no_toll() {
    use mitbench::answer::returns;
    let mut run = common::stored_run("refill-run.json");
    let inline = run.record(returns::PROBE, "getpid/inline").unwrap().clone();
    let in_fn = run
        .results
        .iter_mut()
        .find(|r| r.id == returns::PROBE && r.variant == "getpid/in-fn")
        .unwrap();
    in_fn.cost = inline.cost;
    in_fn.rounds = inline.rounds;
    returns::note_refill_rows(&mut run);
    let noted = |variant: String| {
        let row = run.record(returns::PROBE, &variant).unwrap();
        row.notes
            .iter()
            .any(|n| n.starts_with("this run found no return toll to win back: getpid"))
    };
    for n in returns::REFILLS {
        assert!(noted(format!("getpid/refill-{n}")), "getpid/refill-{n}");
        assert!(!noted(format!("getuid/refill-{n}")), "getuid/refill-{n}");
    }
    let getpid = returns::of_one(&run, "getpid").unwrap();
    assert!(!getpid.is_paid(), "{:?}", getpid.extra_ns);
    assert!(returns::of_one(&run, "getuid").unwrap().is_paid());
    let mut doc = fixture();
    doc.results.retain(|r| r.id != returns::PROBE);
    doc.results.extend(run.results.iter().cloned());
    let said = null_syscall_line(&doc);
    assert!(
        said.iter().any(|w| w.starts_with("from a function")),
        "{said:?}"
    );
    assert!(!said.iter().any(|w| w.starts_with("refilling")), "{said:?}");
    let counted = common::syscalls_under_a_filter(100_000);
    let tax = mitbench::tax::estimate(counted, &run, "a fixture".into(), Err("none".into()));
    assert!(tax.syscall_return.is_some());
    assert!(tax.syscall_return_refill.is_none());
}

/// A win read without enough pairs of quiet rounds stands on pairs of
/// every state, and its row says so: the rounds of the refill the answer
/// names (getpid/refill-4 of tests/fixtures/refill-run.json) all made slow,
/// so no pair of it and the in-function row is quiet; the other refills
/// keep their quiet pairs. `named_refill_win`, the one rule the answer's
/// line reads, gives none, and tax names no win.
#[test]
fn a_win_off_the_quiet_level_says_so() {
    use mitbench::analysis::rounds::{PairBasis, RoundState};
    use mitbench::answer::returns;
    let mut run = common::stored_run("refill-run.json");
    assert!(run.machine_states.model.two_states);
    let named = format!("getpid/refill-{}", returns::ANSWERED_REFILL);
    assert!(
        returns::of_one(&run, "getpid")
            .unwrap()
            .named_refill_win()
            .is_some()
    );
    let slowed = run
        .results
        .iter_mut()
        .find(|r| r.id == returns::PROBE && r.variant == named)
        .unwrap();
    for round in &mut slowed.rounds.each {
        round.state = RoundState::Slow;
    }
    let getpid = returns::of_one(&run, "getpid").unwrap();
    for refill in &getpid.refills {
        let pairs = refill.from_pairs.unwrap();
        let off = refill.entries == returns::ANSWERED_REFILL;
        assert!(pairs.used > 0);
        let basis = if off {
            PairBasis::All
        } else {
            PairBasis::Quiet
        };
        assert_eq!(pairs.basis, basis, "refill-{}", refill.entries);
        assert_eq!(pairs.off_the_quiet_level(), off);
    }
    assert!(getpid.is_paid());
    assert!(getpid.named_refill_win().is_none());
    returns::note_refill_rows(&mut run);
    let noted = |variant: &str| {
        let row = run.record(returns::PROBE, variant).unwrap();
        row.notes
            .iter()
            .any(|n| n.contains("not the quiet level's figure"))
    };
    assert!(noted(&named));
    assert!(!noted("getpid/refill-2"));
    assert!(!noted(&format!(
        "getuid/refill-{}",
        returns::ANSWERED_REFILL
    )));
    let counted = common::syscalls_under_a_filter(100_000);
    let tax = mitbench::tax::estimate(counted, &run, "a fixture".into(), Err("none".into()));
    assert!(tax.syscall_return.is_some());
    assert!(tax.syscall_return_refill.is_none());
}

#[test]
fn every_figure_of_every_fixtures_answer_has_an_interval_or_says_why_not() {
    // The rounds' intervals, a pair's, a fit's, or a reason on the line:
    // a bare figure says nothing of where the next run's will land.
    for name in [
        "default-run.json",
        "answer-run.json",
        "answer-run-schema5.json",
        "refill-run.json",
        "run-a.json",
        "syscall-return-run.json",
    ] {
        let answer = of(&common::stored_run(name));
        // The lines as one run of words: a note may wrap.
        let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
        let lines = words(&summary::lines(&answer, 100).join(" "));
        for toll in &answer.tolls {
            let TollStatus::Measured { figures } = &toll.outcome else {
                continue;
            };
            for q in figures {
                assert!(
                    q.figure.ci95.is_some() || q.note.is_some(),
                    "{name}: {:?} {} has neither an interval nor a reason",
                    toll.kind,
                    q.what
                );
                if let Some(note) = &q.note {
                    assert!(lines.contains(&words(note)), "{name}: {note}\n{lines}");
                }
            }
        }
    }
}

/// The cost of getpid's syscall row, to change as a test's run reads it.
fn getpid_cost(doc: &mut RunDocument) -> &mut mitbench::store::results::Cost {
    doc.results
        .iter_mut()
        .find(|r| r.id == "os/getpid" && r.variant == "syscall")
        .and_then(|r| r.cost.as_mut())
        .unwrap()
}

#[test]
fn a_figure_of_no_quiet_round_says_it_is_a_slow_levels() {
    let mut doc = fixture();
    let getpid = getpid_cost(&mut doc);
    getpid.estimator = mitbench::analysis::rounds::Basis::NoQuietRound;
    let answer = of(&doc);
    let figures = measured(&answer, TollKind::NullSyscall);
    assert_eq!(
        figures[0].note.as_deref(),
        Some(mitbench::answer::summary::SLOW_LEVEL)
    );
    let json = serde_json::to_value(&answer).unwrap();
    assert!(
        json.to_string()
            .contains(mitbench::answer::summary::SLOW_LEVEL)
    );
    let lines = summary::lines(&answer, 100).join(" ");
    let words = lines.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(mitbench::answer::summary::SLOW_LEVEL),
        "{lines}"
    );
}

/// A co-runner's p99 wait is read over every round; where its row had no
/// quiet round, every one of them was the slow level's, and the answer's
/// line and JSON say so as they do of a row's own figure.
#[test]
fn a_wait_of_a_row_without_a_quiet_round_says_it_is_a_slow_levels() {
    let wait_notes = |doc: &RunDocument| -> Vec<Option<String>> {
        let answer = of(doc);
        measured(&answer, TollKind::CryptoSection)
            .iter()
            .map(|f| f.note.clone())
            .collect()
    };
    let mut doc = fixture();
    let slow = Some(mitbench::answer::summary::SLOW_LEVEL.to_string());
    assert!(
        !wait_notes(&doc).contains(&slow),
        "the fixture's waits are quiet"
    );
    let yielding = doc
        .results
        .iter_mut()
        .find(|r| r.id == "section/chunked" && r.variant == "every/4KiB")
        .and_then(|r| r.cost.as_mut())
        .unwrap();
    yielding.estimator = mitbench::analysis::rounds::Basis::NoQuietRound;
    let notes = wait_notes(&doc);
    assert_eq!(notes.iter().filter(|n| **n == slow).count(), 1, "{notes:?}");
}

/// What a call from a function adds to getpid, in the answer's null
/// syscall line, is read from pairs of rounds of the return probe's rows;
/// where too few of those pairs were quiet it stands on every state's and
/// says so, as a slow level's figure does (a run under a toggled trace
/// event read "from a function +56.0 ns" against 39.1 in the runs beside
/// it, its rows without a quiet round and the line silent about it).
#[test]
fn a_figure_read_from_pairs_off_the_quiet_level_says_so() {
    use mitbench::analysis::rounds::RoundState;
    use mitbench::answer::returns;
    let mut doc = fixture();
    doc.results.retain(|r| r.id != returns::PROBE);
    doc.results.extend(
        common::stored_run("refill-run.json")
            .results
            .iter()
            .cloned(),
    );
    let from_a_function = |doc: &RunDocument| {
        let answer = of(doc);
        let q = measured(&answer, TollKind::NullSyscall)
            .iter()
            .find(|q| q.what == "from a function +")
            .expect("the figure");
        q.note.clone()
    };
    assert_eq!(from_a_function(&doc), None);
    for row in &mut doc.results {
        if row.id == returns::PROBE && row.variant == "getpid/in-fn" {
            for round in &mut row.rounds.each {
                round.state = RoundState::Slow;
            }
        }
    }
    assert_eq!(
        from_a_function(&doc).as_deref(),
        Some(mitbench::answer::summary::PAIRS_OFF_THE_QUIET_LEVEL)
    );
}

/// A toll read as a row's difference from its baseline says so where the
/// pairs it stands on are of every state, the run having had too few quiet
/// ones: seccomp's "one filter +" of a run under a toggled trace event was
/// such a figure, and its line was silent.
#[test]
fn a_difference_from_pairs_of_every_state_says_it_is_off_the_quiet_level() {
    use mitbench::analysis::rounds::PairBasis;
    let one_filter = |doc: &RunDocument| {
        let answer = of(doc);
        let q = measured(&answer, TollKind::Seccomp)
            .iter()
            .find(|q| q.what == "one filter +")
            .unwrap();
        q.note.clone()
    };
    let mut doc = fixture();
    assert!(doc.machine_states.model.two_states);
    assert_eq!(one_filter(&doc), None);
    let row = doc
        .results
        .iter_mut()
        .find(|r| r.id == "syscall/seccomp" && r.variant == "number/F=1/R=1")
        .unwrap();
    row.vs_baseline.as_mut().unwrap().basis = PairBasis::All;
    assert_eq!(
        one_filter(&doc).as_deref(),
        Some(mitbench::answer::summary::PAIRS_OFF_THE_QUIET_LEVEL)
    );
    // A run of one state has no quiet level to be off.
    doc.machine_states.model.two_states = false;
    assert_eq!(one_filter(&doc), None);
}

/// The answer's mprotect batch that a latency budget allows.
fn pages_a_call(doc: &RunDocument) -> Quantity {
    measured(&of(doc), TollKind::PageTableChange)
        .iter()
        .find(|q| q.what.starts_with("most pages a call"))
        .cloned()
        .unwrap()
}

#[test]
fn the_batch_sizes_of_the_answer_are_the_budgets_with_the_fits_band() {
    use mitbench::answer::advice::advise_document;
    use std::time::Duration;
    let mut doc = fixture();
    let pages = pages_a_call(&doc);
    let advice = doc
        .advice
        .iter()
        .find(|a| a.id == "memory/mprotect")
        .unwrap();
    // The advice's own 95% end (both intervals' upper ends) is the lower
    // end of the figure's interval, its centre the figure.
    assert_eq!(
        Some(pages.figure.value as u64),
        advice.largest_within_budget_central
    );
    let [low, high] = pages.figure.ci95.unwrap();
    assert_eq!(Some(low as u64), advice.largest_within_budget);
    assert!(low <= pages.figure.value && pages.figure.value <= high);
    assert!(pages.what.ends_with("in 50 us"), "{}", pages.what);

    // Read again for a tighter budget, the figure follows the advice.
    advise_document(&mut doc, Duration::from_micros(10));
    let pages = pages_a_call(&doc);
    assert!(pages.what.ends_with("in 10 us"), "{}", pages.what);
    assert!(pages.figure.value < low, "{pages:?}");

    // A budget mprotect's per-call toll alone outlasts fits no batch: no
    // interval, and the line says why.
    advise_document(&mut doc, Duration::from_micros(1));
    let pages = pages_a_call(&doc);
    assert_eq!(pages.figure.ci95, None, "{pages:?}");
    assert_eq!(
        pages.note.as_deref(),
        Some(mitbench::answer::summary::NO_BATCH_FITS)
    );
}

#[test]
fn a_figure_wider_than_fifty_percent_prints_why_in_place_of_its_interval() {
    // getpid's interval as a quick run on a host slow half the time read
    // it (one fork quiet, ±77%): the answer gives the reason, not the
    // interval; a figure within ±50% keeps its interval.
    let mut doc = fixture();
    let getpid = getpid_cost(&mut doc);
    let widen = |f: mitbench::analysis::figure::Figure| mitbench::analysis::figure::Figure {
        ci95: Some([f.value / 1.77, f.value * 1.77]),
        ..f
    };
    getpid.rounds_ticks = widen(getpid.rounds_ticks);
    getpid.next_run_ticks = getpid.next_run_ticks.map(widen);
    if let Some(at) = getpid.at_reference.as_mut() {
        at.ticks = widen(at.ticks);
    }
    let answer = of(&doc);
    let null = measured(&answer, TollKind::NullSyscall);
    let wide = null.iter().find(|q| q.what == "getpid").unwrap();
    assert_eq!(wide.figure.ci95, None, "{wide:?}");
    let note = wide.note.as_deref().unwrap_or_default();
    assert!(note.starts_with("wider than ±50%"), "{note}");
    let plain = of(&fixture());
    let kept = measured(&plain, TollKind::NullSyscall)
        .iter()
        .find(|q| q.what == "getpid")
        .unwrap();
    assert!(
        kept.figure.ci95.is_some() && kept.note.is_none(),
        "{kept:?}"
    );
}

#[test]
fn a_difference_wider_than_fifty_percent_prints_why_in_place_of_its_interval() {
    // What every row adds to its baseline, its interval made to reach
    // three times the difference: each "+" figure of the answer gives the
    // reason instead, as a cost that wide does.
    let mut doc = fixture();
    for r in doc.results.iter_mut() {
        if let Some(vs) = r.vs_baseline.as_mut() {
            let d = vs.delta.value.abs().max(1.0);
            vs.delta.ci95 = Some([vs.delta.value - 3.0 * d, vs.delta.value + 3.0 * d]);
        }
    }
    let answer = of(&doc);
    let added: Vec<&Quantity> = answer
        .tolls
        .iter()
        .filter_map(|t| match &t.outcome {
            TollStatus::Measured { figures } => Some(figures),
            _ => None,
        })
        .flatten()
        .filter(|q| q.what.ends_with(" +"))
        .collect();
    assert!(!added.is_empty(), "the fixture's answer adds nothing");
    for q in added {
        assert_eq!(q.figure.ci95, None, "{q:?}");
        assert!(q.note.is_some(), "{q:?}");
    }
}

#[test]
fn a_guest_prices_its_exit_in_getpid_calls_and_other_machines_say_nothing_of_exits() {
    use mitbench::answer::summary::Unit;
    let mut doc = fixture();
    let mut exit = doc.record("indirect/call", "retpoline").unwrap().clone();
    exit.id = "guest/exit".into();
    exit.variant = "cpuid".into();
    doc.results.push(exit.clone());
    let s = of(&doc);
    let figures = measured(&s, TollKind::VmExit);
    assert_eq!(figures.len(), 3, "{figures:?}");
    let getpid = measured(&s, TollKind::NullSyscall)[0].figure.value;
    let remote = measured(&s, TollKind::Shootdown)[1].figure.value;
    let (added, in_getpids, shootdown) = (&figures[0], &figures[1], &figures[2]);
    assert_eq!(
        [added.unit, in_getpids.unit, shootdown.unit],
        [Unit::Ns, Unit::Times, Unit::Times]
    );
    let exit = added.figure.value;
    assert!((in_getpids.figure.value - exit / getpid).abs() < 1e-9 * exit / getpid);
    assert!((shootdown.figure.value - remote / exit).abs() < 1e-9 * remote / exit);
    let lines = summary::lines(&s, 100);
    assert!(lines.iter().any(|l| l.starts_with("VM exit")), "{lines:#?}");
    // The vectors say what a guest pays beyond its own kernel's vectors.
    let text = lines.join(" ");
    assert!(
        text.contains("its host's guest_host: on each VM exit"),
        "{lines:#?}"
    );
    assert!(lines.len() <= 30, "{} lines: {lines:#?}", lines.len());
    // A ratio to a figure of a slow level is a slow level's too.
    let mut slow_getpid = doc.clone();
    getpid_cost(&mut slow_getpid).estimator = mitbench::analysis::rounds::Basis::NoQuietRound;
    let s = of(&slow_getpid);
    let in_getpids = &measured(&s, TollKind::VmExit)[1];
    assert_eq!(
        in_getpids.note.as_deref(),
        Some(mitbench::answer::summary::SLOW_LEVEL)
    );
    // A machine that is no guest: the probe says so, and the answer says
    // nothing of exits.
    doc.inventory.cpu.flags.insert("hypervisor".into(), false);
    let row = doc.results.last_mut().unwrap();
    row.cost = None;
    row.unsupported = Some(mitbench::measure::probes::Unsupported::missing(
        "hypervisor",
        mitbench::measure::probes::guest::NOT_A_GUEST,
    ));
    let s = of(&doc);
    assert!(s.tolls.iter().all(|t| t.kind != TollKind::VmExit));
    let lines = summary::lines(&s, 100);
    assert!(lines.iter().all(|l| !l.contains("exit")), "{lines:#?}");
    // A guest whose exit could not be measured says why, as any line does.
    doc.results.last_mut().unwrap().unsupported =
        Some(mitbench::measure::probes::Unsupported::new(
            mitbench::measure::probes::Kind::SamplesDropped,
            "every sample of a round was dropped",
        ));
    let s = of(&doc);
    let exit = s.tolls.iter().find(|t| t.kind == TollKind::VmExit);
    assert!(
        matches!(
            exit.map(|t| &t.outcome),
            Some(TollStatus::Unsupported { .. })
        ),
        "{exit:?}"
    );
}

/// "together ≥ X ns of getpid" is never below a part it sums, where a
/// part's interval is lopsided (a replay's difference to its baseline
/// read from pairs of rounds): the sum keeps each side of its parts'
/// intervals (issue 106: "≥ 18.6 ns ... together ≥ 18.5 ns").
#[test]
fn a_together_floor_is_never_below_a_part_it_sums() {
    use mitbench::answer::prices;
    use mitbench::mitigations::sequences::SEQUENCES;
    let mut doc = common::stored_run("answer-run.json");
    let rows: Vec<(&str, &str)> = SEQUENCES.iter().map(|s| s.row).collect();
    doc.results
        .retain(|r| !rows.contains(&(r.id.as_str(), r.variant.as_str())));
    for (i, row) in rows.iter().enumerate() {
        prices::lay_price(&mut doc, *row, 10.0 + i as f64);
    }
    // One replay read with a long upper side: its floor stays near its
    // figure while its wider side is seven times the lower.
    let lopsided = doc
        .results
        .iter_mut()
        .find(|r| r.id == "kernel/sequences" && r.variant == "srso-untrain")
        .unwrap();
    let cmp = lopsided.vs_baseline.as_mut().unwrap();
    let t = cmp.delta.value;
    cmp.next_run_delta_ticks = Some(mitbench::analysis::figure::Figure::new(
        t,
        Some([t * 0.99, t * 1.07]),
    ));
    let s = of(&doc);
    let floors: Vec<f64> = s
        .kernel
        .prices
        .iter()
        .filter_map(|p| p.getpid_floor_ns?.lower_bound_95())
        .collect();
    let together = s.kernel.getpid_floor_ns.unwrap().lower_bound_95().unwrap();
    assert!(!floors.is_empty());
    for part in &floors {
        assert!(
            together >= part - 1e-9,
            "together {together} below a part {part}"
        );
    }
}
