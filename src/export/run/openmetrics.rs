//! A run as metrics for Prometheus: the text exposition format that
//! node_exporter's textfile collector reads (version 0.0.4, which
//! OpenMetrics' text form grew out of; nothing here needs what only
//! OpenMetrics has). Gauges without timestamps, since the collector
//! refuses timestamped samples; base units (`_seconds`, `_ratio`), an
//! `_info` gauge of 1 for what describes the machine. Every label value is
//! escaped and cut to [`MAX_LABEL_CHARS`], so no text from the machine can
//! break the format or grow a series without bound.

use crate::analysis::figure::Figure;
use crate::export::{ExportError, Exporter, RunView};
use crate::store::results::{Record, RunDocument};
use std::fmt::Write as _;

pub struct OpenMetricsExporter;

/// The longest label value written; longer text is cut and marked `...`.
pub const MAX_LABEL_CHARS: usize = 120;

type Labels = Vec<(String, String)>;

/// One metric family: its samples are written together under one HELP
/// and TYPE, as the format requires.
struct Family {
    name: &'static str,
    help: &'static str,
    samples: Vec<(Labels, f64)>,
}

impl Family {
    fn new(name: &'static str, help: &'static str) -> Family {
        Family {
            name,
            help,
            samples: Vec::new(),
        }
    }

    fn add(&mut self, labels: &Labels, value: f64) {
        if value.is_finite() {
            self.samples.push((labels.clone(), value));
        }
    }

    fn write(&self, out: &mut String) {
        if self.samples.is_empty() {
            return;
        }
        let _ = writeln!(out, "# HELP {} {}", self.name, escape_help(self.help));
        let _ = writeln!(out, "# TYPE {} gauge", self.name);
        for (labels, value) in &self.samples {
            out.push_str(self.name);
            if !labels.is_empty() {
                out.push('{');
                for (i, (name, value)) in labels.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{name}=\"{}\"", escape_label(value));
                }
                out.push('}');
            }
            let _ = writeln!(out, " {}", number(*value));
        }
    }
}

/// A figure in ns as seconds: its value, and its interval's ends where it
/// has one, each in its family.
fn add_seconds([value, low, high]: [&mut Family; 3], labels: &Labels, f: Figure) {
    value.add(labels, f.value / 1e9);
    if let Some([lo, hi]) = f.ci95 {
        low.add(labels, lo / 1e9);
        high.add(labels, hi / 1e9);
    }
}

/// The help of a toll's interval's two ends, and of a win's.
const TOLL_ENDS: [&str; 2] = [
    "Lower end of the 95% interval another run's toll may land in.",
    "Upper end of the 95% interval another run's toll may land in.",
];
const WIN_ENDS: [&str; 2] = [
    "Lower end of the 95% interval another run's win may land in.",
    "Upper end of the 95% interval another run's win may land in.",
];

/// A figure's three families: its value and its interval's two ends.
fn with_interval(
    names: [&'static str; 3],
    help: &'static str,
    [low_help, high_help]: [&'static str; 2],
) -> [Family; 3] {
    let [value, low, high] = names;
    [
        Family::new(value, help),
        Family::new(low, low_help),
        Family::new(high, high_help),
    ]
}

/// What pushing return-stack entries after each crossing of a kind wins
/// back, by crossing and entries pushed, with the 95% interval another
/// run's may land in: only wins the answer would name
/// (`ReturnToll::win_of`), so no series says a refill wins what is its
/// own cost.
fn refill_won_back(
    series: &ReturnSeries,
    tolls: &[crate::answer::returns::ReturnToll],
) -> [Family; 3] {
    let mut families = with_interval(series.refill_names, series.refill_help, WIN_ENDS);
    for t in tolls {
        for r in &t.refills {
            let Some(f) = t.win_of(r) else { continue };
            let labels = vec![
                label(series.label, t.crossing),
                label("entries", &r.entries.to_string()),
            ];
            let [value, low, high] = &mut families;
            add_seconds([value, low, high], &labels, f);
        }
    }
    families
}

/// Each attack vector: whether the command line leaves it enabled, and
/// for an enabled one what its mitigations that `no_<vector>` would turn
/// off cost, replayed: per getpid (a floor) and per context switch, each
/// with the 95% interval another run's figure may land in.
fn attack_vectors(v: &crate::answer::vectors::AttackVectors) -> Vec<Family> {
    let mut enabled = Family::new(
        "mitbench_attack_vector_enabled",
        "1 where the kernel's mitigations= options leave the attack vector mitigated, 0 where they turn it off.",
    );
    // A kernel without the controls has no vectors to report.
    let read = v.controls.unavailable.is_none();
    for vector in v
        .controls
        .enabled
        .iter()
        .chain(&v.controls.disabled)
        .filter(|_| read)
    {
        let on = v.controls.enables(*vector);
        enabled.add(
            &vec![label("vector", vector.name())],
            f64::from(u8::from(on)),
        );
    }
    let mut figures = [
        Family::new(
            "mitbench_attack_vector_getpid_floor_seconds",
            "The part of one getpid that the mitigations no_<vector> would turn off take at least, replayed in user mode; not a measured part.",
        ),
        Family::new(
            "mitbench_attack_vector_getpid_floor_ci95_low_seconds",
            "Lower end of the 95% interval another run's floor may land in.",
        ),
        Family::new(
            "mitbench_attack_vector_getpid_floor_ci95_high_seconds",
            "Upper end of the 95% interval another run's floor may land in.",
        ),
        Family::new(
            "mitbench_attack_vector_switch_price_seconds",
            "What the mitigations no_<vector> would turn off add to a context switch, replayed in user mode.",
        ),
        Family::new(
            "mitbench_attack_vector_switch_price_ci95_low_seconds",
            "Lower end of the 95% interval another run's price may land in.",
        ),
        Family::new(
            "mitbench_attack_vector_switch_price_ci95_high_seconds",
            "Upper end of the 95% interval another run's price may land in.",
        ),
    ];
    for cost in &v.vectors {
        let labels = vec![label("vector", cost.vector.name())];
        for (figure, first) in [(cost.getpid_floor_ns, 0), (cost.per_switch_ns, 3)] {
            let Some(f) = figure else { continue };
            let [value, low, high] = &mut figures[first..first + 3] else {
                unreachable!("three families a figure")
            };
            add_seconds([value, low, high], &labels, f);
        }
    }
    std::iter::once(enabled).chain(figures).collect()
}

/// One kind of return toll's series: its label, its three names and its
/// refill's three.
struct ReturnSeries {
    label: &'static str,
    names: [&'static str; 3],
    help: &'static str,
    refill_names: [&'static str; 3],
    refill_help: &'static str,
}

const SYSCALL_RETURN: ReturnSeries = ReturnSeries {
    label: "syscall",
    names: [
        "mitbench_syscall_return_toll_seconds",
        "mitbench_syscall_return_toll_ci95_low_seconds",
        "mitbench_syscall_return_toll_ci95_high_seconds",
    ],
    help: "What a syscall made from inside a function adds to the same syscall made inline: the return after the crossing.",
    refill_names: [
        "mitbench_syscall_return_refill_won_back_seconds",
        "mitbench_syscall_return_refill_won_back_ci95_low_seconds",
        "mitbench_syscall_return_refill_won_back_ci95_high_seconds",
    ],
    refill_help: "What pushing return-stack entries after a syscall made from a function wins back of the return after it, net of the pushes' own cost; only where the toll is there and the win's interval lies above 0.",
};

const CROSSING_RETURN: ReturnSeries = ReturnSeries {
    label: "crossing",
    names: [
        "mitbench_crossing_return_toll_seconds",
        "mitbench_crossing_return_toll_ci95_low_seconds",
        "mitbench_crossing_return_toll_ci95_high_seconds",
    ],
    help: "What a page fault, a signal or a switch met inside a function adds to the same met inline: the return after it.",
    refill_names: [
        "mitbench_crossing_return_refill_won_back_seconds",
        "mitbench_crossing_return_refill_won_back_ci95_low_seconds",
        "mitbench_crossing_return_refill_won_back_ci95_high_seconds",
    ],
    refill_help: "What pushing return-stack entries after a page fault, a signal or a switch met inside a function wins back of the return after it, net of the pushes' own cost; only where the toll is there and the win's interval lies above 0.",
};

/// What a crossing made from inside a function pays beyond the same
/// crossing made inline: one series name per kind, the crossing its label.
fn return_toll(series: &ReturnSeries, tolls: &[crate::answer::returns::ReturnToll]) -> [Family; 3] {
    let mut families = with_interval(series.names, series.help, TOLL_ENDS);
    for t in tolls {
        let Some(f) = t.extra_ns else { continue };
        let labels = vec![label(series.label, t.crossing)];
        let [value, low, high] = &mut families;
        add_seconds([value, low, high], &labels, f);
    }
    families
}

/// A sample value: Go's float syntax accepts Rust's shortest round-trip
/// form, and integers print without a fraction.
fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        format!("{value:e}")
    }
}

/// A label value as the format escapes it (backslash, double quote,
/// line feed), other control characters as spaces; text longer than
/// [`MAX_LABEL_CHARS`] characters is cut to that many, the last three
/// `...`. The cut falls between characters, never inside an escape.
pub fn escape_label(value: &str) -> String {
    let mut out = String::with_capacity(value.len().min(MAX_LABEL_CHARS * 2));
    let count = value.chars().count();
    for (i, c) in value.chars().enumerate() {
        if i == MAX_LABEL_CHARS - 3 && count > MAX_LABEL_CHARS {
            out.push_str("...");
            break;
        }
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

fn escape_help(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\n', "\\n")
}

/// The same label names on every record's series: node_exporter's
/// textfile collector gives every series of a family the union of the
/// family's label names, so labels that vary by probe (each probe's own
/// params) would pad every series with dozens of empty ones. The params are
/// in `mitbench_variant_info` instead, as one bounded JSON label.
fn record_labels(r: &Record) -> Labels {
    vec![
        label("probe", &r.id),
        label("family", &r.family),
        label("variant", &r.variant),
        label(
            "batch_group",
            r.batch.as_ref().map_or("", |b| b.group.as_str()),
        ),
        label(
            "batch_size",
            &r.batch
                .as_ref()
                .map_or(String::new(), |b| b.size.to_string()),
        ),
    ]
}

fn label(name: &str, value: &str) -> (String, String) {
    (name.to_string(), value.to_string())
}

impl Exporter for OpenMetricsExporter {
    fn render(&self, run: &RunView) -> Result<Vec<u8>, ExportError> {
        let (doc, summary) = (run.doc, &run.summary);
        let mut out = String::new();
        for family in records(doc)
            .iter()
            .chain(&amortization(doc))
            .chain(&kernel_prices(&summary.kernel)?)
            .chain(&attack_vectors(&summary.attack_vectors))
            .chain(&return_toll(&SYSCALL_RETURN, &summary.syscall_return))
            .chain(&refill_won_back(&SYSCALL_RETURN, &summary.syscall_return))
            .chain(&return_toll(
                &CROSSING_RETURN,
                &summary.other_crossing_return,
            ))
            .chain(&refill_won_back(
                &CROSSING_RETURN,
                &summary.other_crossing_return,
            ))
            .chain(&machine(doc))
        {
            family.write(&mut out);
        }
        Ok(out.into_bytes())
    }
}

/// A row's figure in seconds at the run's TSC rate (NaN where unknown).
fn seconds_of(doc: &RunDocument) -> impl Fn(f64) -> f64 {
    let mhz = doc.inventory.tsc_mhz.filter(|m| *m > 0.0);
    move |ticks: f64| mhz.map_or(f64::NAN, |mhz| ticks / mhz / 1e6)
}

/// Each variant: what it is, whether it ran, its cost and its ratio to
/// its baseline, with their intervals.
fn records(doc: &RunDocument) -> Vec<Family> {
    let seconds = seconds_of(doc);
    let mut info = Family::new(
        "mitbench_variant_info",
        "What each variant is: its role and its params as JSON (cut to a bounded length); the value is always 1.",
    );
    let mut up = Family::new(
        "mitbench_variant_up",
        "1 when the variant was measured, 0 when this machine could not run it (the reason label says why).",
    );
    let mut cost = Family::new(
        "mitbench_cost_seconds",
        "Cost of one item in the machine's quiet state, as the run's table prints it: the median of the variant's quiet rounds, at the run's reference speed where it read one.",
    );
    let mut cost_ticks = Family::new(
        "mitbench_cost_ticks",
        "Cost of one item in TSC ticks (reference cycles), as the run's table prints it.",
    );
    let mut low = Family::new(
        "mitbench_cost_ci95_low_seconds",
        "Lower end of the cost's run-to-run 95% interval, as the run's table prints it.",
    );
    let mut high = Family::new(
        "mitbench_cost_ci95_high_seconds",
        "Upper end of the cost's run-to-run 95% interval, as the run's table prints it.",
    );
    let mut ratio = Family::new(
        "mitbench_vs_baseline_ratio",
        "The variant's cost over its probe's baseline's: median over pairs of rounds adjacent in time.",
    );
    let mut ratio_low = Family::new(
        "mitbench_vs_baseline_ci95_low_ratio",
        "Lower end of the 95% interval of the ratio to the baseline.",
    );
    let mut ratio_high = Family::new(
        "mitbench_vs_baseline_ci95_high_ratio",
        "Upper end of the 95% interval of the ratio to the baseline.",
    );
    for r in &doc.results {
        let labels = record_labels(r);
        let mut described = labels.clone();
        described.push(label("role", r.role.name()));
        described.push(label("params", &r.params.to_string()));
        info.add(&described, 1.0);
        let with_reason = |reason: &str| {
            let mut labels = labels.clone();
            labels.push(label("reason", reason));
            labels
        };
        match (&r.unsupported, &r.cost) {
            (Some(why), _) => up.add(&with_reason(&why.reason), 0.0),
            (None, Some(c)) => {
                up.add(&with_reason(""), 1.0);
                // The figure the run's table prints: at its reference
                // speed where it read one, so a dashboard and the
                // terminal of one run agree.
                let shown = c.shown_ticks();
                cost.add(&labels, seconds(shown.value));
                cost_ticks.add(&labels, shown.value);
                if let Some([lo, hi]) = shown.ci95 {
                    low.add(&labels, seconds(lo));
                    high.add(&labels, seconds(hi));
                }
            }
            (None, None) => {}
        }
        if let Some(vs) = &r.vs_baseline {
            ratio.add(&labels, vs.ratio.value);
            if let Some([lo, hi]) = vs.ratio.ci95 {
                ratio_low.add(&labels, lo);
                ratio_high.add(&labels, hi);
            }
        }
    }

    vec![
        info, up, cost, cost_ticks, low, high, ratio, ratio_low, ratio_high,
    ]
}

/// Each amortization fit's two parts.
fn amortization(doc: &RunDocument) -> Vec<Family> {
    let seconds = seconds_of(doc);
    let mut per_item = Family::new(
        "mitbench_amortization_per_item_seconds",
        "Fitted cost(B) = per item + per batch / B: the part every item pays.",
    );
    let mut per_batch = Family::new(
        "mitbench_amortization_per_batch_seconds",
        "Fitted cost(B) = per item + per batch / B: the toll one batch pays, shared by its B items.",
    );
    for fit in &doc.amortization {
        let labels = vec![label("probe", &fit.id), label("group", &fit.group)];
        per_item.add(&labels, seconds(fit.fit.per_item.value));
        per_batch.add(&labels, seconds(fit.fit.per_batch.value));
    }

    vec![per_item, per_batch]
}

/// The kernel's price list (`summary.kernel`): per occurrence and, where
/// a syscall runs the sequence a known number of times, the floor of
/// getpid.
fn kernel_prices(kernel: &crate::answer::prices::KernelPrices) -> Result<Vec<Family>, ExportError> {
    // The kernel's price list: per occurrence and, where a syscall runs
    // the sequence a known number of times, the floor of getpid. Never
    // under a cost's name: these are replays, not measured parts.
    let mut price = Family::new(
        "mitbench_kernel_sequence_price_seconds",
        "A kernel mitigation's sequence replayed in user mode: what it adds each time the kernel runs it (occurs says when); a floor or a price, never a measured part.",
    );
    let mut price_low = Family::new(
        "mitbench_kernel_sequence_price_ci95_low_seconds",
        "Lower end of the 95% interval another run's price may land in.",
    );
    let mut price_high = Family::new(
        "mitbench_kernel_sequence_price_ci95_high_seconds",
        "Upper end of the 95% interval another run's price may land in.",
    );
    let mut floor = Family::new(
        "mitbench_kernel_getpid_floor_seconds",
        "The part of one getpid the kernel's sequences in force take at least (sum of those a syscall runs a known number of times), as the one-sided 95% lower bound the answer prints; not a measured part.",
    );
    for p in &kernel.prices {
        let Some(f) = p.price_ns else { continue };
        // One sample per vulnerability file it serves, under the label
        // mitbench_vulnerability_info names a file by: a query joins
        // the two on `name`.
        for file in p.vulnerabilities {
            let labels = vec![
                label("mitigation", p.mitigation),
                label("id", p.id.key()),
                label("name", file),
                label("probe", p.probe),
                label("variant", p.variant),
                // The JSON's word for it ("per-entry").
                label(
                    "occurs",
                    serde_json::to_value(p.occurs)?.as_str().unwrap_or(""),
                ),
            ];
            add_seconds([&mut price, &mut price_low, &mut price_high], &labels, f);
        }
    }
    // "At least" is the bound, not the point figure above it.
    if let Some(f) = kernel.getpid_floor_ns {
        let bound = f.lower_bound_95().unwrap_or(f.value).max(0.0);
        floor.add(&Vec::new(), bound / 1e9);
    }

    Ok(vec![price, price_low, price_high, floor])
}

/// The machine, its vulnerability lines, the build and the run's times.
fn machine(doc: &RunDocument) -> Vec<Family> {
    let inv = &doc.inventory;
    let mut machine = Family::new(
        "mitbench_machine_info",
        "The machine the run measured; the value is always 1.",
    );
    machine.add(
        &vec![
            label("host", &inv.identity.hostname),
            label("kernel", &inv.kernel.release),
            label("cpu_model", &inv.cpu.model_name),
            label("microcode", &inv.cpu.microcode),
            label("hypervisor", &inv.cpu.hypervisor),
            label("preemption", &inv.kernel.preemption.model),
            label(
                "mitigation_words",
                &crate::inventory::mitigation_words(&inv.kernel.cmdline).join(" "),
            ),
        ],
        1.0,
    );
    let mut vulnerability = Family::new(
        "mitbench_vulnerability_info",
        "Each line of /sys/devices/system/cpu/vulnerabilities; the value is always 1.",
    );
    for (name, text) in &inv.cpu.vulnerabilities {
        vulnerability.add(&vec![label("name", name), label("status", text)], 1.0);
    }
    let mut build = Family::new(
        "mitbench_build_info",
        "The mitbench that made the run; the value is always 1.",
    );
    build.add(
        &vec![
            label("version", &doc.tool_version),
            label("git_commit", &doc.build.git_commit),
        ],
        1.0,
    );
    let started = chrono::DateTime::parse_from_rfc3339(&doc.started_at).ok();
    let finished = chrono::DateTime::parse_from_rfc3339(&doc.finished_at).ok();
    let mut start = Family::new(
        "mitbench_run_start_time_seconds",
        "When the run started, seconds since the Unix epoch.",
    );
    let mut duration = Family::new("mitbench_run_duration_seconds", "How long the run took.");
    let mut interrupted = Family::new(
        "mitbench_run_interrupted",
        "1 when Ctrl-C stopped the run early: its rows are what was measured.",
    );
    if let Some(s) = started {
        start.add(&Vec::new(), s.timestamp_millis() as f64 / 1000.0);
    }
    if let (Some(s), Some(f)) = (started, finished) {
        duration.add(&Vec::new(), (f - s).num_milliseconds() as f64 / 1000.0);
    }
    interrupted.add(&Vec::new(), f64::from(u8::from(doc.interrupted)));

    vec![machine, vulnerability, build, start, duration, interrupted]
}
