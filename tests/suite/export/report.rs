//! The HTML report of a small real run, looked at as a person would: in
//! headless Chromium, at a desktop and a phone width. Chromium is Debian's
//! (`.ci/run` installs it); where it is missing outside CI the browser part
//! says so and the checks on the file still run.

use crate::common;

use common::histories::{Laid, NOTHING, RUNS, STEP_RUN, history};
use common::{QUICK_RUN, mitbench, refused, written_by};
use mitbench::analysis::figure::Figure;
use mitbench::analysis::stats::Amortization;
use mitbench::answer::advice::{self, advise};
use mitbench::cli::values::latency_budget as parse_budget;
use mitbench::measure::probes::StepUnit;
use mitbench::store::results::AmortizationFit;
use mitbench::store::results::answered::LatencyPoint;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn fit(per_item: f64, per_batch: f64, half: f64) -> AmortizationFit {
    AmortizationFit {
        id: "memory/mprotect".into(),
        group: String::new(),
        item: "page".into(),
        fit: Amortization {
            per_item: Figure::within(per_item, Some(half)),
            per_batch: Figure::within(per_batch, Some(half)),
            r2: 0.99,
            points: 10,
        },
    }
}

#[test]
fn advice_follows_from_the_fitted_curve() {
    // 1000 MHz: 50 us is 50,000 ticks; at the upper ends (110 per item,
    // 1,010 per batch) (50,000 - 1,010) / 110 = 445 items fit.
    let a = advise(
        &fit(100.0, 1000.0, 10.0),
        1,
        1000.0,
        Duration::from_micros(50),
    )
    .unwrap();
    assert_eq!(a.batch_to_win_back, 10);
    assert_eq!(a.largest_within_budget, Some(445));
    assert_eq!(a.largest_within_budget_central, Some(490));
    assert!(!a.conflict, "{}", a.summary);
    assert!((a.won_back_per_item.value - 900.0).abs() < 1e-9);
    // A 1.5 us budget holds (1,500 - 1,010) / 110 = 4 items: the 90% batch
    // does not fit, and
    // what the allowed batch wins back is said.
    let tight = advise(
        &fit(100.0, 1000.0, 10.0),
        1,
        1000.0,
        Duration::from_nanos(1500),
    )
    .unwrap();
    assert!(tight.conflict);
    assert_eq!(tight.largest_within_budget, Some(4));
    let share = tight.won_back_within_budget.unwrap();
    assert!((share - 0.75).abs() < 1e-9, "{share}");
    // A toll the fit cannot tell from zero is said to be so.
    let none = advise(&fit(100.0, 5.0, 10.0), 1, 1000.0, Duration::from_micros(50)).unwrap();
    assert!(
        none.summary.contains("wins nothing measurable"),
        "{}",
        none.summary
    );
}

#[test]
fn the_batch_a_budget_allows_is_read_at_the_fits_centre_and_both_ends_of_its_band() {
    // 1000 MHz, 50,000 ticks: (50,000 - 1,000) / 100 = 490 at the centre,
    // (50,000 - 1,010) / 110 = 445 at both upper ends and
    // (50,000 - 990) / 90 = 544 at both lower ends.
    let budget = Duration::from_micros(50);
    let b = advice::batches_within(&fit(100.0, 1000.0, 10.0), 1000.0, budget);
    assert_eq!(
        (b.cautious, b.central, b.bold),
        (Some(445), Some(490), Some(544))
    );
    // A per-batch toll that leaves less than an item's room at the upper
    // ends fits no batch there: 50,000 - 49,910 < 160; at the lower ends
    // (50,000 - 49,790) / 40 = 5.
    let b = advice::batches_within(&fit(100.0, 49_850.0, 60.0), 1000.0, budget);
    assert_eq!((b.cautious, b.central, b.bold), (None, Some(1), Some(5)));
    // A per-item cost whose interval reaches zero has no upper end.
    let b = advice::batches_within(&fit(5.0, 1000.0, 10.0), 1000.0, budget);
    assert_eq!(b.bold, Some(u64::MAX));
    // The budget as the answer's line names it.
    for (budget, words) in [
        (budget, "50 us"),
        (Duration::from_micros(1500), "1.5 ms"),
        (Duration::from_millis(100), "100 ms"),
        (Duration::from_secs(2), "2 s"),
        (Duration::from_nanos(2500), "2.5 us"),
    ] {
        assert_eq!(advice::budget_words(budget), words);
    }
}

fn point(step: u64, wait: f64, ci: Option<[f64; 2]>, ticks: f64) -> LatencyPoint {
    LatencyPoint {
        step,
        wait_p99: Figure::new(wait, ci),
        ticks: Figure::new(ticks, None),
        seed_choice: None,
    }
}

#[test]
fn latency_advice_holds_the_upper_end_of_the_measured_wait_to_the_budget() {
    let points = || {
        vec![
            point(1, 5.0, Some([4.0, 6.0]), 400.0),
            point(16, 20.0, Some([18.0, 25.0]), 200.0),
            point(256, 28.0, Some([26.0, 31.0]), 120.0),
            point(4096, 60.0, None, 100.0),
        ]
    };
    let budget = Duration::from_micros(30);
    // A series of K entries, each an entry of work.
    let entries = |budget, fit| {
        advice::advise_latency("p/q", "", StepUnit::Entries, "entry", points(), budget, fit)
    };
    let a = entries(budget, None);
    // 256's median wait (28 us) fits, its interval's upper end (31) does not.
    assert_eq!(a.largest_within_budget, Some(16));
    assert_eq!(a.cost_vs_cheapest, Some(2.0));
    assert!(a.summary.contains("16 entries"), "{}", a.summary);
    assert!(!a.summary.contains("would allow"), "{}", a.summary);

    // A fit that allows more than the measured wait is called out.
    let a = entries(budget, Some(300));
    assert!(
        a.summary.contains("would allow up to 300 entries"),
        "{}",
        a.summary
    );

    // Without an interval the figure itself is held to the budget.
    let a = entries(Duration::from_micros(60), None);
    assert_eq!(a.largest_within_budget, Some(4096));

    let a = advice::advise_latency(
        "p/q",
        "g",
        StepUnit::Bytes,
        "buffer",
        points(),
        Duration::from_micros(1),
        None,
    );
    assert_eq!(a.largest_within_budget, None);
    assert_eq!(a.cost_vs_cheapest, None);
    assert!(a.summary.contains("no step keeps"), "{}", a.summary);
    assert!(
        a.summary.contains("5.0 us [4.0, 6.0] at 1 byte"),
        "{}",
        a.summary
    );
}

#[test]
fn budgets_are_read_with_their_unit() {
    assert_eq!(parse_budget("50us"), Ok(Duration::from_micros(50)));
    assert_eq!(parse_budget("1.5ms"), Ok(Duration::from_micros(1500)));
    assert_eq!(parse_budget("2s"), Ok(Duration::from_secs(2)));
    for bad in ["50", "us", "-1us", "5 parsecs", "100s", "0ns", ""] {
        assert!(parse_budget(bad).is_err(), "{bad}");
    }
    assert_eq!(advice::DEFAULT_LATENCY_BUDGET, Duration::from_micros(50));
}

/// The CSV columns docs/json-and-csv.md documents, in order.
const CSV_COLUMNS: [&str; 38] = [
    "probe",
    "family",
    "variant",
    "role",
    "batch_group",
    "batch_size",
    "item",
    "unsupported_kind",
    "unsupported_reason",
    "ns",
    "ticks",
    "ci95_low_ticks",
    "ci95_high_ticks",
    "ci95_half_width_pct",
    "rounds_used",
    "rounds_total",
    "estimator",
    "ratio",
    "ratio_ci95_low",
    "ratio_ci95_high",
    "delta_ticks",
    "delta_ci95_low_ticks",
    "delta_ci95_high_ticks",
    "all_states_median_ticks",
    "slow_round_share",
    "machine_drift_pct",
    "co_runner_wait_p99_us",
    "notes",
    "speed_coefficient",
    "speed_normalized_ns",
    "speed_normalized_ticks",
    "speed_normalized_ci95_low_ticks",
    "speed_normalized_ci95_high_ticks",
    "raw_ns",
    "raw_ticks",
    "raw_ci95_low_ticks",
    "raw_ci95_high_ticks",
    "raw_ci95_half_width_pct",
];

/// Read back with a CSV reader: the documented columns, one row per
/// record in the JSON's order, and the same figures.
fn csv_holds_every_record(path: &Path, doc: &serde_json::Value) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let headers: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(headers, CSV_COLUMNS, "the CSV's columns changed");
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let records = doc["results"].as_array().unwrap();
    assert_eq!(rows.len(), records.len());
    let column = |name: &str| CSV_COLUMNS.iter().position(|c| *c == name).unwrap();
    for (row, record) in rows.iter().zip(records) {
        assert_eq!(&row[column("probe")], record["id"].as_str().unwrap());
        assert_eq!(&row[column("variant")], record["variant"].as_str().unwrap());
        // The figure the table prints: at the run's reference speed where
        // it read one; the raw figure beside it.
        let cost = &record["cost"];
        let at_reference = &cost["at_reference"]["ticks"];
        let raw = &cost["rounds_ticks"]["value"];
        match at_reference["value"].as_f64().or(raw.as_f64()) {
            Some(ticks) => {
                let read: f64 = row[column("ticks")].parse().unwrap();
                assert_eq!(read, ticks, "{row:?}");
                let raw_read: f64 = row[column("raw_ticks")].parse().unwrap();
                assert_eq!(Some(raw_read), raw.as_f64(), "{row:?}");
                // The interval the table prints: empty where neither the
                // forks nor enough rounds gave one.
                let lo = row[column("ci95_low_ticks")].parse::<f64>();
                let hi = row[column("ci95_high_ticks")].parse::<f64>();
                let shown_interval = if at_reference.is_object() {
                    at_reference["ci95"].is_array()
                } else {
                    cost["next_run_ticks"]["ci95"].is_array()
                        || cost["rounds_ticks"]["ci95"].is_array()
                };
                assert_eq!(lo.is_ok(), shown_interval, "{row:?}");
                if let (Ok(lo), Ok(hi)) = (lo, hi) {
                    assert!(lo <= read && read <= hi, "{row:?}");
                }
            }
            None => assert_eq!(&row[column("ticks")], "", "{row:?}"),
        }
    }
}

/// Every Markdown table row has the header's cell count once escaped pipes
/// are read as text, and every record is a row.
fn markdown_tables_hold_every_record(text: &str, doc: &serde_json::Value) {
    let cells = |line: &str| -> usize {
        let unescaped_pipes = line
            .char_indices()
            .filter(|&(i, c)| c == '|' && (i == 0 || line.as_bytes()[i - 1] != b'\\'))
            .count();
        unescaped_pipes - 1
    };
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| :--"))
        .collect();
    let headers = rows.iter().filter(|l| l.starts_with("| probe |")).count();
    assert!(headers >= 1, "no table header in\n{text}");
    for row in &rows {
        assert_eq!(cells(row), 9, "a row with another cell count: {row}");
    }
    let records = doc["results"].as_array().unwrap();
    assert_eq!(rows.len(), records.len() + headers, "{text}");
    assert!(text.contains("| :-- | :-- | --: |"), "no alignment row");
}

fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// Runs headless Chromium on `page` with what it needs on a closed network
/// and a fresh profile; returns its stdout and stderr.
fn headless(browser: &Path, profile: &Path, args: &[String], page: &Path) -> (String, String) {
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium starts");
    assert!(out.status.success(), "chromium failed: {out:?}");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The page as headless Chromium builds it, and the browser, checked to
/// have logged nothing to the console; None outside CI where Chromium is
/// missing (said), never in CI.
fn dom_in_chromium(page: &Path, profile: &Path, what: &str) -> Option<(PathBuf, String)> {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have Chromium: .ci/run installs Debian's chromium"
        );
        common::skipped(&format!(
            "chromium is not installed: {what} was not opened in a browser"
        ));
        return None;
    };
    let (dom, log) = headless(&browser, profile, &["--dump-dom".into()], page);
    assert!(
        !log.contains("CONSOLE"),
        "the page logged to the console: {log}"
    );
    Some((browser, dom))
}

#[test]
fn the_report_of_a_real_run_renders_with_its_plots_and_advice() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let html = dir.path().join("run.html");
    let csv = dir.path().join("run.csv");
    let markdown = dir.path().join("run.md");
    let out = mitbench(
        &[
            &QUICK_RUN[..],
            &["--probe", "memory/mprotect", "--probe", "os/getpid"],
            &[
                "--probe",
                "thread/churn-T1",
                "--probe",
                "teardown/index-2^16",
            ],
            &["--json", json.to_str().unwrap()],
            &["--html", html.to_str().unwrap()],
            &["--export-csv", csv.to_str().unwrap()],
            &["--export-markdown", markdown.to_str().unwrap()],
        ]
        .concat(),
    );
    assert!(out.status.success(), "{out:?}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    csv_holds_every_record(&csv, &doc);
    markdown_tables_hold_every_record(&std::fs::read_to_string(&markdown).unwrap(), &doc);
    // `export` writes the same CSV from the saved JSON.
    let again_csv = written_by(
        &["export", "csv", json.to_str().unwrap()],
        &dir.path().join("again.csv"),
    );
    assert_eq!(std::fs::read(&csv).unwrap(), again_csv);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg"), "no plot");
    assert!(!page.contains("<script"), "the page must need no script");
    for fetch in ["src=\"http", "href=\"http", "url(http", "@import"] {
        assert!(!page.contains(fetch), "the page fetches something: {fetch}");
    }
    assert!(page.contains("B=10 wins back 90%"), "no advice line");

    // `report` on the saved JSON gives the same page for the same budget,
    // and another budget changes the advice.
    let report = |extra: &[&str], name: &str| {
        let page = written_by(
            &[&["report", json.to_str().unwrap()], extra, &["-o"]].concat(),
            &dir.path().join(name),
        );
        String::from_utf8(page).unwrap()
    };
    assert_eq!(report(&[], "again.html"), page);
    let tight = report(&["--latency-budget", "1us"], "tight.html");
    assert!(tight.contains("1 µs latency budget"));
    let never = dir.path().join("never.html");
    refused(
        &[
            "report",
            "/nonexistent/run.json",
            "-o",
            never.to_str().unwrap(),
        ],
        "cannot read /nonexistent/run.json",
    );
    assert!(!never.exists());

    let profile = dir.path().join("profile");
    let Some((browser, dom)) = dom_in_chromium(&html, &profile, "the report") else {
        return;
    };
    // The answer's chart; mprotect and teardown: a curve each; getpid and
    // thread churn: bars against the baseline; thread churn: its phases;
    // and teardown's
    // co-runner wait where the run recorded it at two K or more (a quick
    // run on a slow machine may see no lookup finish within a release).
    let waited = doc["latency_advice"]
        .as_array()
        .is_some_and(|a| !a.is_empty());
    let svgs = dom.matches("<svg").count();
    assert_eq!(svgs, 6 + usize::from(waited), "plots on the page");
    for part in [
        "batch size B",
        "ticks per page",
        "fit: ",
        "measured, with its 95%",
        "XA_CHECK_SCHED",
        "os/getpid: × base",
        "syscall (base)",
        "thread/churn-T1: where an item",
        "handshake",
    ] {
        assert!(dom.contains(part), "the plots lack {part:?}");
    }
    assert!(
        dom.contains("wins back 90%"),
        "the advice is not on the page"
    );
    // The answer first: the summary, with the tolls this run measured,
    // above the machine and the tables.
    let summary = dom.find("id=\"summary\"").expect("a summary section");
    assert!(
        summary < dom.find("id=\"machine\"").unwrap(),
        "the summary is not first"
    );
    for toll in ["null syscall", "mprotect", "thread + channel"] {
        assert!(dom[summary..].contains(toll), "the summary lacks {toll:?}");
    }
    if waited {
        for part in [
            "teardown/index-2^16: what a co-runner waits",
            "co-runner wait p99",
            "budget 50 µs",
            "same-CPU co-runner",
        ] {
            assert!(dom.contains(part), "the page lacks {part:?}");
        }
    } else {
        common::skipped("no co-runner wait recorded at two K: the latency plot");
    }

    layout_at_1280(&browser, &profile, &page, dir.path());
    // The answer's chart first: in the summary, above its table and the
    // machine.
    let chart = dom
        .find("What each toll costs here")
        .expect("the answer's chart");
    assert!(summary < chart, "the answer's chart is not in the summary");
    assert!(
        chart < dom[summary..].find("<table").unwrap() + summary,
        "the chart is not the answer's first part"
    );

    let shots = Path::new(env!("CARGO_TARGET_TMPDIR"));
    for (width, name) in [(1280, "report-1280.png"), (390, "report-390.png")] {
        let shot = shots.join(name);
        let _ = std::fs::remove_file(&shot);
        headless(
            &browser,
            &profile,
            &[
                format!("--window-size={width},2000"),
                format!("--screenshot={}", shot.display()),
            ],
            &html,
        );
        let size = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
        assert!(size > 10_000, "no screenshot at {width} px ({size} bytes)");
    }
}

/// What the test measures in the page as Chromium lays it out: the page's
/// width against the window's, every scrolling box that scrolls sideways,
/// and the size every SVG text is drawn at (its font size times the SVG's
/// scale). The page has no script of its own; this one goes into a copy.
const MEASURE: &str = r#"<script>
(function () {
  var out = { scroll: document.documentElement.scrollWidth, window: window.innerWidth,
              sideways: [], small: [], texts: 0 };
  document.querySelectorAll('.scroll').forEach(function (e) {
    if (e.scrollWidth > e.clientWidth + 1) out.sideways.push(e.scrollWidth);
  });
  document.querySelectorAll('svg').forEach(function (svg) {
    var scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    svg.querySelectorAll('text').forEach(function (t) {
      out.texts++;
      var px = parseFloat(getComputedStyle(t).fontSize) * scale;
      if (px < 11) out.small.push(t.textContent.trim() + ' ' + px.toFixed(1) + 'px');
    });
  });
  var pre = document.createElement('pre');
  pre.id = 'measured';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"#;

/// The report in a 1280-pixel window: nothing wider than the window,
/// nothing that scrolls sideways, no SVG text under 11 px.
fn layout_at_1280(browser: &Path, profile: &Path, page: &str, dir: &Path) {
    let measured = dir.join("measured.html");
    std::fs::write(
        &measured,
        page.replace("</body>", &format!("{MEASURE}</body>")),
    )
    .unwrap();
    let (dom, _) = headless(
        browser,
        profile,
        &["--window-size=1280,2000".into(), "--dump-dom".into()],
        &measured,
    );
    let json = dom
        .split_once("<pre id=\"measured\">")
        .and_then(|(_, rest)| rest.split_once("</pre>"))
        .map(|(json, _)| {
            json.replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&")
        })
        .expect("the measuring script ran");
    let m: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(
        m["scroll"].as_f64() <= m["window"].as_f64(),
        "the page is wider than a 1280-pixel window: {m}"
    );
    assert_eq!(
        m["sideways"],
        serde_json::json!([]),
        "a box scrolls sideways"
    );
    assert!(m["texts"].as_u64().unwrap() > 0, "no SVG text measured");
    assert_eq!(m["small"], serde_json::json!([]), "SVG text under 11 px");
}

/// Where the history holds the run's machine, the report shows its
/// timeline: the event with the rows it moved and what changed, and a
/// plot of figures over the runs, laid out in Chromium as the rest is.
/// Without a history there is none.
#[test]
fn the_report_has_a_timeline_where_the_history_holds_the_machine() {
    let (dir, path) = common::temp_history();
    let laid = Laid {
        step: 1.3,
        kernel_update: true,
        ..NOTHING
    };
    history(&path, "vm", laid, 40);
    let html = dir.path().join("timeline.html");
    let page = written_by(&["report", "--history", &path, "last", "-o"], &html);
    let page = String::from_utf8(page).unwrap();
    let section = page.find("id=\"timeline\"").expect("a timeline section");
    assert!(section < page.find("id=\"machine\"").unwrap());
    for part in [
        format!("What changed, and when: {RUNS} runs of this machine"),
        format!("run {STEP_RUN} ("),
        "changed: kernel release: ".into(),
        "6.18.45-next".into(),
        "os: ".into(),
        "vm: what changed, and when".into(),
    ] {
        assert!(
            page[section..].contains(&part),
            "the timeline lacks {part:?}"
        );
    }
    // The same stored run written to a file and reported without a
    // history: no timeline.
    let json = dir.path().join("last.json");
    written_by(&["export", "json", "--history", &path, "last"], &json);
    let alone = written_by(
        &["report", json.to_str().unwrap(), "-o"],
        &dir.path().join("alone.html"),
    );
    assert!(
        !String::from_utf8(alone)
            .unwrap()
            .contains("id=\"timeline\"")
    );

    let profile = dir.path().join("profile");
    let Some((browser, dom)) = dom_in_chromium(&html, &profile, "the timeline") else {
        return;
    };
    let shown = dom
        .find("id=\"timeline\"")
        .expect("the timeline in the DOM");
    assert!(
        dom[shown..].contains(&format!("run {STEP_RUN}: ")),
        "no event line in the plot"
    );
    layout_at_1280(&browser, &profile, &page, dir.path());
}

/// A stored run with twelve rows of three reasons the machine could not
/// measure them: the report lists each reason once with its rows, and so
/// does the terminal under its tables.
#[test]
fn unsupported_rows_are_listed_once_per_reason() {
    let fixture = common::fixture_path("default-run.json");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&fixture).unwrap()).unwrap();
    let mut reasons: Vec<(String, usize)> = Vec::new();
    for r in doc["results"].as_array().unwrap() {
        if let Some(reason) = r["unsupported"]["reason"].as_str() {
            match reasons.iter_mut().find(|(known, _)| known == reason) {
                Some((_, rows)) => *rows += 1,
                None => reasons.push((reason.to_string(), 1)),
            }
        }
    }
    assert!(reasons.iter().any(|(_, rows)| *rows > 1), "{reasons:?}");
    let dir = tempfile::tempdir().unwrap();
    let page = written_by(
        &["report", fixture.to_str().unwrap(), "-o"],
        &dir.path().join("page.html"),
    );
    let page = String::from_utf8(page).unwrap();
    let out = mitbench(&["history", "show", fixture.to_str().unwrap(), "--wide"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout).replace('\n', " ");
    for (reason, rows) in &reasons {
        let listed = format!("unsupported: {reason} ({rows} rows: ");
        assert_eq!(page.matches(&listed).count(), 1, "{listed}");
        assert_eq!(
            text.matches(&format!("unsupported here: {reason} ("))
                .count(),
            1,
            "{reason}"
        );
    }
    assert_eq!(page.matches("class=\"unsupported\"").count(), reasons.len());
}
