//! The Prometheus export against the real parts: Debian's promtool checks
//! the file, and Debian's prometheus-node-exporter serves it from its
//! textfile directory on a loopback port, where a scrape finds mitbench's
//! series with the values of the run's JSON. `.ci/run` installs both;
//! outside CI a missing one is said and its part skipped.

use crate::common;

use common::{QUICK_RUN, mitbench, written_by};
use mitbench::export::{Exporter, MAX_LABEL_CHARS, OpenMetricsExporter, escape_label};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A tool from Debian's packages, or None outside CI when it is missing.
fn tool(name: &str, package: &str) -> Option<PathBuf> {
    let found = ["/usr/bin", "/usr/sbin", "/usr/local/bin"]
        .iter()
        .map(|dir| Path::new(dir).join(name))
        .find(|p| p.exists());
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have {name}: .ci/run installs Debian's {package}"
        );
        eprintln!("{name} is not installed ({package}): that part is skipped");
    }
    found
}

#[test]
fn label_values_are_escaped_and_bounded() {
    assert_eq!(escape_label(r#"a"b\c"#), r#"a\"b\\c"#);
    assert_eq!(escape_label("one\ntwo"), "one\\ntwo");
    assert_eq!(escape_label("bell\u{7}tab\t"), "bell tab ");
    let long = "x".repeat(8192);
    let cut = escape_label(&long);
    assert_eq!(cut.chars().count(), MAX_LABEL_CHARS);
    assert!(cut.ends_with("..."));
    // Escapes never split: a cut after a backslash would escape the quote
    // that closes the value.
    let slashes = "\\".repeat(8192);
    let cut = escape_label(&slashes);
    assert_eq!(cut.trim_end_matches("...").len() % 2, 0);
}

/// Every sample line is `name{labels} value` with a parseable value, every
/// family has HELP and TYPE before its samples, and no line is a fragment.
fn check_exposition(text: &str) {
    let mut typed: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let name = rest.split(' ').next().unwrap();
            assert!(!typed.iter().any(|t| t == name), "{name} typed twice");
            typed.push(name.to_string());
            continue;
        }
        if line.starts_with("# HELP ") {
            continue;
        }
        let name_end = line.find(['{', ' ']).expect(line);
        let name = &line[..name_end];
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "bad name in {line}"
        );
        assert_eq!(typed.last().map(String::as_str), Some(name), "{line}");
        let value = line.rsplit(' ').next().unwrap();
        assert!(value.parse::<f64>().is_ok(), "bad value in {line}");
    }
}

/// The label names of a sample line, read past quoted values and their
/// escapes.
fn label_names(line: &str) -> Vec<String> {
    let Some(open) = line.find('{') else {
        return Vec::new();
    };
    let mut names = Vec::new();
    let mut name = String::new();
    let mut chars = line[open + 1..].chars();
    while let Some(c) = chars.next() {
        match c {
            '=' => {
                names.push(std::mem::take(&mut name));
                assert_eq!(chars.next(), Some('"'), "{line}");
                while let Some(v) = chars.next() {
                    match v {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            ',' => {}
            '}' => break,
            c => name.push(c),
        }
    }
    names
}

/// Every series of a family has the same label names: node_exporter would
/// otherwise pad each with the family's other names, empty.
fn check_one_label_set_per_family(text: &str) {
    let mut seen: std::collections::HashMap<&str, Vec<String>> = Default::default();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let name = &line[..line.find(['{', ' ']).unwrap()];
        let mut names = label_names(line);
        names.sort();
        let first = seen.entry(name).or_insert_with(|| names.clone());
        assert_eq!(*first, names, "{line}");
    }
}

/// A stored run whose machine text is as hostile as a machine's can be.
fn hostile_document() -> mitbench::store::results::RunDocument {
    let mut doc = common::stored_run("run-a.json");
    let inv = &mut doc.inventory;
    inv.identity.hostname = "host\"name\\with\nnewline".into();
    inv.kernel.cmdline = format!("mitigations=auto \"{}\\\n", "a".repeat(8192));
    inv.cpu.model_name = "CPU } { \" = ,".into();
    inv.cpu
        .vulnerabilities
        .insert("spectre_v2".into(), "Mitigation: \\\"quoted\"\n\t".into());
    doc
}

#[test]
fn hostile_machine_text_cannot_break_the_format() {
    let text = exported_and_checked(&hostile_document());
    assert!(text.contains("mitbench_machine_info{host=\"host\\\"name\\\\with\\nnewline\""));
    let longest = text.lines().map(str::len).max().unwrap();
    assert!(longest < 4096, "a line of {longest} bytes");
    promtool_accepts(&text);
}

/// A run that measured the refills (tests/fixtures/refill-run.json): what
/// each refill wins back goes out per syscall and per other crossing, with
/// `entries` beside, where the one rule names the win
/// (`ReturnToll::win_of`, as the answer and tax do) and only there; each
/// family one label set, and promtool takes it.
#[test]
fn what_a_refill_wins_back_is_exported_per_crossing_where_the_rule_names_it() {
    use mitbench::answer::returns;
    let doc = common::stored_run("refill-run.json");
    let text = exported_and_checked(&doc);
    let kinds = [
        ("syscall", returns::of(&doc)),
        ("crossing", returns::of_other_crossings(&doc)),
    ];
    let (mut named, mut left_out) = (0, 0);
    for (label, tolls) in &kinds {
        for t in tolls {
            for r in &t.refills {
                let prefix = if *label == "syscall" {
                    "syscall"
                } else {
                    "crossing"
                };
                let series = format!(
                    "mitbench_{prefix}_return_refill_won_back_seconds{{{label}=\"{}\",entries=\"{}\"}}",
                    t.crossing, r.entries
                );
                let named_here = t.win_of(r).is_some();
                assert_eq!(named_here, r.named, "the JSON's flag is the rule's");
                assert_eq!(text.contains(&series), named_here, "{series}");
                if named_here {
                    named += 1
                } else {
                    left_out += 1
                }
            }
        }
    }
    assert!(
        named > 0 && left_out > 0,
        "{named} named, {left_out} left out"
    );
    // The other crossings were measured with 4 entries only.
    assert!(!text.contains("crossing=\"signal\",entries=\"2\""));
    promtool_accepts(&text);
}

/// `doc` as OpenMetrics text, checked against the format and for one label
/// set per family.
fn exported_and_checked(doc: &mitbench::store::results::RunDocument) -> String {
    let text = String::from_utf8(
        OpenMetricsExporter
            .render(&mitbench::export::RunView::of(doc))
            .unwrap(),
    )
    .unwrap();
    check_exposition(&text);
    check_one_label_set_per_family(&text);
    text
}

/// Debian's promtool checks `text` where it is installed.
fn promtool_accepts(text: &str) {
    let Some(promtool) = tool("promtool", "prometheus") else {
        return;
    };
    let mut child = Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool rejects the file: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// node_exporter on a loopback port, stopped when dropped.
struct NodeExporter {
    child: Child,
    port: u16,
}

impl Drop for NodeExporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl NodeExporter {
    fn start(binary: &Path, textfiles: &Path) -> NodeExporter {
        // A port the kernel says is free now; node_exporter takes it next.
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(binary)
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--collector.disable-defaults")
            .arg("--collector.textfile")
            .arg(format!(
                "--collector.textfile.directory={}",
                textfiles.display()
            ))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("node_exporter starts");
        NodeExporter { child, port }
    }

    /// GET /metrics, retried while node_exporter starts.
    fn scrape(&mut self) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("node_exporter exited: {status}");
            }
            if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) {
                stream
                    .write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                    .unwrap();
                let mut response = String::new();
                if stream.read_to_string(&mut response).is_ok() && response.contains("\r\n\r\n") {
                    return response;
                }
            }
            assert!(Instant::now() < deadline, "node_exporter never answered");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The value of the first sample of `name` whose labels hold every one
/// of `labels`.
fn sample(text: &str, name: &str, labels: &[&str]) -> Option<f64> {
    text.lines()
        .filter(|l| l.starts_with(name) && l[name.len()..].starts_with('{'))
        .find(|l| labels.iter().all(|want| l.contains(want)))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
}

#[test]
fn node_exporter_serves_a_real_runs_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let textfiles = dir.path().join("textfile");
    std::fs::create_dir(&textfiles).unwrap();
    let json = dir.path().join("run.json");
    let prom = textfiles.join("mitbench.prom");
    let out = mitbench(
        &[
            &QUICK_RUN[..],
            &["--probe", "os/getpid", "--probe", "memory/mprotect"],
            &[
                "--probe",
                "kernel/sequences",
                "--probe",
                "os/syscall-return",
            ],
            &["--json", json.to_str().unwrap()],
            &["--openmetrics", prom.to_str().unwrap()],
        ]
        .concat(),
    );
    assert!(out.status.success(), "{out:?}");
    let file = std::fs::read_to_string(&prom).unwrap();
    check_exposition(&file);
    check_one_label_set_per_family(&file);
    // Only the renamed file: no temporary left beside it to be collected.
    assert_eq!(std::fs::read_dir(&textfiles).unwrap().count(), 1);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    // The figure the run's table prints: at its reference speed where it
    // read one, else raw.
    let ticks_of = |variant: &str| {
        let cost = &doc["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == "os/getpid" && r["variant"] == variant)
            .unwrap()["cost"];
        cost["at_reference"]["ticks"]["value"]
            .as_f64()
            .or_else(|| cost["rounds_ticks"]["value"].as_f64())
            .unwrap()
    };

    // `export` writes the same file from the saved JSON.
    let again = written_by(
        &["export", "openmetrics", json.to_str().unwrap()],
        &dir.path().join("again.prom"),
    );
    assert_eq!(String::from_utf8(again).unwrap(), file);

    let Some(binary) = tool("prometheus-node-exporter", "prometheus-node-exporter") else {
        return;
    };
    let mut exporter = NodeExporter::start(&binary, &textfiles);
    let scraped = exporter.scrape();
    assert!(scraped.starts_with("HTTP/1.0 200") || scraped.starts_with("HTTP/1.1 200"));
    let scrape_error = scraped
        .lines()
        .find(|l| l.starts_with("node_textfile_scrape_error "))
        .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok());
    assert_eq!(
        scrape_error,
        Some(0.0),
        "node_exporter could not read the file"
    );
    for variant in ["syscall", "libc"] {
        let want = format!("variant=\"{variant}\"");
        let served = sample(
            &scraped,
            "mitbench_cost_ticks",
            &["probe=\"os/getpid\"", &want],
        )
        .unwrap_or_else(|| panic!("no mitbench_cost_ticks for getpid {variant}"));
        let ticks = ticks_of(variant);
        assert!(
            (served - ticks).abs() <= ticks * 1e-9,
            "{variant}: served {served}, the JSON says {ticks}"
        );
    }
    assert!(
        sample(
            &scraped,
            "mitbench_amortization_per_batch_seconds",
            &["probe=\"memory/mprotect\""]
        )
        .is_some()
    );
    assert!(sample(&scraped, "mitbench_machine_info", &["kernel="]) == Some(1.0));
    // The kernel's price list under its own names, each price the JSON's
    // (which sequences run depends on the CPU: none is assumed).
    for p in doc["summary"]["kernel"]["prices"].as_array().unwrap() {
        let Some(ns) = p["price_ns"]["value"].as_f64() else {
            continue;
        };
        let variant = format!("variant=\"{}\"", p["variant"].as_str().unwrap());
        let served = sample(
            &scraped,
            "mitbench_kernel_sequence_price_seconds",
            &[&variant],
        )
        .unwrap_or_else(|| panic!("no price served for {variant}"));
        assert!(
            (served - ns / 1e9).abs() <= ns * 1e-18,
            "{variant}: {served} vs {ns} ns"
        );
        // Joined to the vulnerability it serves by the file's name, the
        // label both series use.
        for file in p["vulnerabilities"].as_array().unwrap() {
            let name = format!("name=\"{}\"", file.as_str().unwrap());
            assert!(
                sample(
                    &scraped,
                    "mitbench_kernel_sequence_price_seconds",
                    &[&variant, &name]
                )
                .is_some(),
                "{variant} {name}"
            );
            assert_eq!(
                sample(&scraped, "mitbench_vulnerability_info", &[&name]),
                Some(1.0),
                "{name}"
            );
        }
    }
    // The floor is "at least": the answer's one-sided 95% bound, under the
    // figure wherever the figure has an interval.
    let floor = &doc["summary"]["kernel"]["getpid_floor_ns"];
    if let Some(value) = floor["value"].as_f64() {
        let served = scraped
            .lines()
            .find_map(|l| l.strip_prefix("mitbench_kernel_getpid_floor_seconds"))
            .and_then(|rest| rest.rsplit(' ').next()?.parse::<f64>().ok())
            .expect("the floor is served");
        let ci95 = floor["ci95"]
            .as_array()
            .map(|ends| [ends[0].as_f64().unwrap(), ends[1].as_f64().unwrap()]);
        let figure = mitbench::analysis::interval::Figure::new(value, ci95);
        let bound = figure.lower_bound_95().unwrap_or(value).max(0.0);
        assert!(
            (served - bound / 1e9).abs() <= 1e-18,
            "{served} vs {bound} ns"
        );
        assert!(
            ci95.is_none() || served < value / 1e9,
            "{served} vs {value} ns"
        );
    }
    // The return after a crossing: one series a kind, the crossing its
    // label.
    for (kind, series, count) in [
        ("syscall_return", "mitbench_syscall_return_toll_seconds", 4),
        (
            "other_crossing_return",
            "mitbench_crossing_return_toll_seconds",
            3,
        ),
    ] {
        let label = series
            .trim_start_matches("mitbench_")
            .split('_')
            .next()
            .unwrap();
        let tolls = doc["summary"][kind].as_array().unwrap();
        for t in tolls {
            let Some(ns) = t["extra_ns"]["value"].as_f64() else {
                continue;
            };
            let crossing = format!("{label}=\"{}\"", t["crossing"].as_str().unwrap());
            let served = sample(&scraped, series, &[&crossing]);
            assert!(
                served.is_some_and(|s| (s - ns / 1e9).abs() <= ns.abs() * 1e-18),
                "{crossing}: {served:?} vs {ns} ns"
            );
        }
        assert_eq!(tolls.len(), count, "{kind}");
    }
    // Each attack vector the kernel reads, enabled or not, and each
    // enabled one's replayed price as the JSON has it.
    let vectors = &doc["summary"]["attack_vectors"];
    if vectors["controls"]["unavailable"].is_null() {
        for v in vectors["controls"]["enabled"].as_array().unwrap() {
            let vector = format!("vector=\"{}\"", v.as_str().unwrap());
            let enabled = sample(&scraped, "mitbench_attack_vector_enabled", &[&vector]);
            assert_eq!(enabled, Some(1.0), "{vector}");
        }
        for cost in vectors["vectors"].as_array().unwrap() {
            let Some(ns) = cost["getpid_floor_ns"]["value"].as_f64() else {
                continue;
            };
            let vector = format!("vector=\"{}\"", cost["vector"].as_str().unwrap());
            let served = sample(
                &scraped,
                "mitbench_attack_vector_getpid_floor_seconds",
                &[&vector],
            );
            assert!(
                served.is_some_and(|s| (s - ns / 1e9).abs() <= ns * 1e-18),
                "{vector}: {served:?} vs {ns} ns"
            );
        }
    }
}

/// The PromQL docs/fleet-and-prometheus.md gives, as recording rules, against series a test
/// feeds in: the null syscall per host, and only the host whose retpoline
/// toll moved beyond both weeks' intervals.
#[test]
fn the_readme_promql_finds_what_it_says() {
    let Some(promtool) = tool("promtool", "prometheus") else {
        return;
    };
    let out = Command::new(promtool)
        .args(["test", "rules", "contrib/prometheus/rules_test.yml"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Series node_exporter serves that the dashboard reads, with the release
/// and collector that serve them (Debian's node_exporter may be older: a
/// name missing from its scrape is held to this list).
const NODE_EXPORTER_SERIES: &[(&str, &str)] = &[(
    "node_cpu_vulnerabilities_info",
    "node_exporter 1.7.0, --collector.cpu_vulnerabilities",
)];

/// Every query string of a Grafana dashboard: panels' and annotations'
/// `expr`, template variables' `query`.
fn dashboard_queries(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map {
                match (key.as_str(), v) {
                    ("expr", serde_json::Value::String(q)) => out.push(q.clone()),
                    ("query", serde_json::Value::Object(q)) => {
                        if let Some(q) = q.get("query").and_then(|q| q.as_str()) {
                            out.push(q.to_string());
                        }
                    }
                    _ => dashboard_queries(v, out),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| dashboard_queries(v, out)),
        _ => {}
    }
}

/// The series names a PromQL query (or a Grafana `label_values(...)`)
/// reads: identifiers outside quotes, label matchers and ranges, not
/// called as functions, not keywords, and not the label lists of `by`,
/// `on`, `without`, `ignoring` and `group_left`/`group_right`.
fn series_names(query: &str) -> Vec<String> {
    // Operators, and the aggregations, which may take `by (...)` before
    // their parenthesis.
    const KEYWORDS: &[&str] = &[
        "and",
        "or",
        "unless",
        "offset",
        "bool",
        "inf",
        "nan",
        "sum",
        "min",
        "max",
        "avg",
        "group",
        "count",
        "stddev",
        "stdvar",
        "topk",
        "bottomk",
        "quantile",
        "count_values",
    ];
    const LABEL_LISTS: &[&str] = &[
        "by",
        "on",
        "without",
        "ignoring",
        "group_left",
        "group_right",
    ];
    let chars: Vec<char> = query.chars().collect();
    let (mut names, mut i) = (Vec::new(), 0);
    let skip_to = |from: usize, close: char| -> usize {
        let mut j = from;
        let mut quoted = false;
        while j < chars.len() && (quoted || chars[j] != close) {
            if chars[j] == '"' {
                quoted = !quoted;
            }
            j += 1;
        }
        j + 1
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '"' {
            i = skip_to(i + 1, '"');
        } else if c == '{' {
            i = skip_to(i + 1, '}');
        } else if c == '[' {
            i = skip_to(i + 1, ']');
        } else if c.is_ascii_alphabetic() || c == '_' || c == ':' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || "_:".contains(chars[i])) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let mut next = i;
            while next < chars.len() && chars[next] == ' ' {
                next += 1;
            }
            let called = chars.get(next) == Some(&'(');
            if LABEL_LISTS.contains(&word.as_str()) {
                if called {
                    i = skip_to(next + 1, ')');
                }
            } else if !called && !KEYWORDS.contains(&word.as_str()) {
                // A `label_values(series, label)`'s label follows a comma.
                let after_comma = chars[..start].iter().rev().find(|c| **c != ' ') == Some(&',');
                if !after_comma {
                    names.push(word);
                }
            }
        } else if c.is_ascii_digit() {
            // A number, a duration or an exponent: digits and letters.
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    names
}

#[test]
fn promql_series_names_are_read_past_labels_ranges_and_label_lists() {
    assert_eq!(
        series_names(
            r#"sum by (instance) (rate(a_total{x="b{c}"}[5m] offset 1d)) / on(instance) group_left(kernel) b_info"#
        ),
        ["a_total", "b_info"]
    );
    assert_eq!(series_names("label_values(m_info, instance)"), ["m_info"]);
    assert_eq!(series_names("(time() - s) / 3600 > 2e3"), ["s"]);
    assert_eq!(series_names("x:y:z and w"), ["x:y:z", "w"]);
}

/// The Grafana dashboard shipped in contrib/grafana reads only series that
/// mitbench exports (from real runs' exports), that its recording rules
/// make, or that node_exporter serves.
#[test]
fn every_dashboard_query_names_a_series_mitbench_or_node_exporter_exports() {
    let dir = tempfile::tempdir().unwrap();
    let mut exported = std::collections::BTreeSet::new();
    // answer-run.json: a quick run of os/getpid, kernel/sequences and
    // os/syscall-return (2026-11-29, this AMD EPYC guest), which has every
    // figure of the answer.
    for fixture in [
        "default-run.json",
        "syscall-return-run.json",
        "answer-run.json",
    ] {
        let prom = dir.path().join(format!("{fixture}.prom"));
        let text = written_by(
            &[
                "export",
                "openmetrics",
                &format!("tests/fixtures/{fixture}"),
            ],
            &prom,
        );
        for line in String::from_utf8(text).unwrap().lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                exported.insert(rest.split(' ').next().unwrap().to_string());
            }
        }
    }
    let rules = std::fs::read_to_string("contrib/prometheus/mitbench-rules.yml").unwrap();
    let recorded: Vec<&str> = rules
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- record: "))
        .collect();
    assert!(!recorded.is_empty());
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string("contrib/grafana/mitbench-dashboard.json").unwrap(),
    )
    .unwrap();
    let mut queries = Vec::new();
    dashboard_queries(&dashboard, &mut queries);
    assert!(queries.len() >= 8, "{queries:?}");
    let mut read = std::collections::BTreeSet::new();
    for query in &queries {
        let names = series_names(query);
        assert!(!names.is_empty(), "{query} names no series");
        for name in names {
            let known = exported.contains(&name)
                || recorded.contains(&name.as_str())
                || NODE_EXPORTER_SERIES.iter().any(|(n, _)| *n == name);
            assert!(known, "{name} (in {query}) is exported by nothing");
            read.insert(name);
        }
    }
    // The panels the issue asks for: tolls over time, the answer's figures,
    // vulnerability status beside node_exporter's.
    for wanted in [
        "mitbench_cost_seconds",
        "mitbench_kernel_getpid_floor_seconds",
        "mitbench_vulnerability_info",
        "node_cpu_vulnerabilities_info",
    ] {
        assert!(read.contains(wanted), "the dashboard reads no {wanted}");
    }
}

/// A guest's VM exit is a row like any: its cost per exit is a series a
/// fleet's dashboard reads per host (the row's cost in the table, in
/// seconds), beside its ratio to the non-exiting baseline.
#[test]
fn a_guests_exit_price_is_a_series_per_host() {
    use mitbench::measure::probes::guest::{EXIT_PROBE, EXITING};
    let mut doc = common::stored_run("run-a.json");
    common::with_exit_rows(&mut doc);
    let text = exported_and_checked(&doc);
    let labels = [r#"probe="guest/exit""#, r#"variant="cpuid""#];
    let exit = sample(&text, "mitbench_cost_ticks", &labels).expect("the exit's cost");
    let row = doc.record(EXIT_PROBE, EXITING).unwrap();
    let table = row.shown_ticks().unwrap().value;
    assert!(
        (exit - table).abs() <= 1e-6 * table,
        "{exit} against {table}"
    );
    assert!(sample(&text, "mitbench_cost_seconds", &labels).is_some_and(|s| s > 0.0));
    assert!(sample(&text, "mitbench_vs_baseline_ratio", &labels).is_some());
}
