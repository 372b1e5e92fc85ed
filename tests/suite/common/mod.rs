//! What the tests share: a harness with a tiny budget and the placement
//! the CLI would choose, for tests that run probes in-process; and how to
//! start the mitbench binary, for tests of the command line. Tests assert
//! invariants, never absolute timings, so tiny budgets suffice.

pub mod histories;
pub mod sides;

/// Where a file of tests/fixtures is, wherever the test runs from.
pub fn fixture_path(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Every Rust source file under `dir`, its subdirectories' too.
pub fn rust_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
    found
}

/// A stored run of tests/fixtures as mitbench reads one (`results::load`:
/// a document of an older schema made this one's shape): the one way a
/// test loads a run document.
pub fn stored_run(name: &str) -> mitbench::store::results::RunDocument {
    mitbench::store::results::load::document_from_file(&fixture_path(name))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

use mitbench::analysis::figure::Figure;
use mitbench::measure::harness::{Harness, Settings, affinity, tsc};
use mitbench::measure::probes::{
    self, AnyProbe, Measured, NamedFigure, Outcome, Placement, Variant,
};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

pub fn tiny_harness() -> Harness {
    let settings = Settings {
        budget_s: 0.05,
        warmup_s: 0.005,
        round_s: 0.005,
        max_samples: 400,
        sample_us: 5.0,
        ..Settings::quick()
    };
    let mhz = tsc::calibrate_mhz(Duration::from_millis(10), 3).expect("TSC calibration");
    Harness::new(settings, mhz)
}

/// The highest allowed CPU, as `mitbench run` picks by default.
pub fn placement() -> Placement {
    let allowed = affinity::allowed_cpus().expect("sched_getaffinity");
    Placement {
        cpu: *allowed.last().expect("an allowed CPU"),
        allowed,
    }
}

/// The CPU `mitbench run` measures on, this test's thread pinned to it
/// and no other test of this process measuring meanwhile: while held,
/// every helper thread a probe starts is this test's, and two tests'
/// probes never share the one CPU they would both be pinned to. Two
/// tests measuring at once would only have taken turns on it.
pub struct MeasuringCpu {
    pub placement: Placement,
    _pin: affinity::PinGuard,
    _alone: MutexGuard<'static, ()>,
}

static MEASURING: Mutex<()> = Mutex::new(());

pub fn measuring_cpu() -> MeasuringCpu {
    // A test that failed while measuring leaves the lock poisoned; the
    // CPU is free all the same.
    let alone = MEASURING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let placement = placement();
    let pin = affinity::pin_current_thread(placement.cpu).expect("pinning");
    MeasuringCpu {
        placement,
        _pin: pin,
        _alone: alone,
    }
}

impl MeasuringCpu {
    /// One round of `variant` of probe `id` with the tiny harness; panics
    /// unless it was measured.
    pub fn measure(&self, id: &str, variant: &str) -> Box<Measured> {
        let (probe, v) = probe_variant(id, variant);
        match probe.run(&v, &self.placement, &tiny_harness()) {
            Outcome::Measured(m) => m,
            other => panic!("{id} {variant}: not measured: {other:?}"),
        }
    }
}

/// Environment variable naming the one test a process of its own runs.
const ALONE: &str = "MITBENCH_TEST_ALONE";

/// Whether the caller, the test `name` of module `module` (its
/// `module_path!()`), is running in a process of its own: the tests of
/// this binary share one process, so a test that counts the process's
/// threads, children or descriptors, or reaps any child, runs again in
/// this binary with only itself selected. In the test's first process
/// this runs that second one, asserts it passed, and returns false (the
/// caller returns); in the second it returns true.
pub fn alone(module: &str, name: &str) -> bool {
    let path = match module.split_once("::") {
        Some((_crate, path)) => format!("{path}::{name}"),
        None => name.to_string(),
    };
    if std::env::var(ALONE).is_ok_and(|running| running == path) {
        return true;
    }
    let exe = std::env::current_exe().expect("this test binary");
    let out = Command::new(exe)
        .args([path.as_str(), "--exact", "--test-threads=1", "--nocapture"])
        .env(ALONE, &path)
        .output()
        .expect("run the test in a process of its own");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{path}, in a process of its own:\n{said}"
    );
    assert!(
        said.contains("1 passed"),
        "{path} did not run alone:\n{said}"
    );
    false
}

/// Says on the terminal that part of a test did not run here and why.
/// Written to stderr directly: libtest would swallow an `eprintln!` of a
/// passing test.
pub fn skipped(what: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "skipped: {what}");
}

/// mitbench's named helper threads ("mitbench-...") alive in this process.
/// Other tests' threads come and go meanwhile, so only these are counted.
pub fn helper_threads() -> usize {
    let count = || {
        std::fs::read_dir("/proc/self/task")
            .expect("/proc/self/task")
            .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
            .filter(|comm| comm.trim().starts_with("mitbench-"))
            .count()
    };
    // A joined thread's task stays listed until the kernel has finished
    // its exit, which the joiner can outrun on a busy CPU it shares with
    // it (a clean-clone CI read one "left behind" after the teardown
    // probe had joined it): a thread still listed a second on was left.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    loop {
        let left = count();
        if left == 0 || std::time::Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Asserts every figure is finite and not negative, and returns a lookup
/// of a figure's value by name.
pub fn sane_figures<'a>(label: &'a str, figures: &'a [NamedFigure]) -> impl Fn(&str) -> f64 + 'a {
    for f in figures {
        assert!(
            f.figure.value.is_finite() && f.figure.value >= 0.0,
            "{label}: {} {}",
            f.name,
            f.figure.value
        );
    }
    move |name| {
        figures
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("{label}: no figure {name}"))
            .figure
            .value
    }
}

/// Probe `id` and its variant named `variant`; panics if there is none.
pub fn probe_variant(id: &str, variant: &str) -> (&'static dyn AnyProbe, Variant) {
    let probe = probes::select(&[id.to_string()]).expect("a probe id")[0];
    let v = probe
        .variants()
        .into_iter()
        .find(|v| v.name == variant)
        .unwrap_or_else(|| panic!("{id} has no variant {variant}"));
    (probe, v)
}

/// A history nothing can create: a test's runs warn, and never touch the
/// user's own history.
pub const NO_HISTORY_HOME: &str = "/proc/mitbench-test-no-history";

/// The start of a short real run: quick, no progress bar, nothing stored,
/// 50 ms per variant.
pub const QUICK_RUN: [&str; 6] = [
    "run",
    "--quick",
    "--quiet",
    "--no-history",
    "--budget",
    "0.05",
];

/// The mitbench binary with `args`, its history pointed nowhere.
pub fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mitbench"));
    command.args(args).env("XDG_DATA_HOME", NO_HISTORY_HOME);
    command
}

/// The mitbench binary run to the end, its output collected.
pub fn mitbench(args: &[&str]) -> Output {
    command(args).output().expect("run mitbench")
}

/// A copy of the directory tree `from` at `to` (fixture trees a test may
/// make hostile).
pub fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Runs mitbench with `args` and asserts it refused them as bad input: exit
/// 2, `reason` in its stderr, and nothing on stdout (nothing was measured).
/// Returns the stderr.
pub fn refused(args: &[&str], reason: &str) -> String {
    let out = mitbench(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(stderr.contains(reason), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
    stderr
}

/// Runs mitbench with `args` followed by the path `to` (`export KIND RUN`,
/// `report RUN -o`), asserts it succeeded, and returns the file's bytes.
pub fn written_by(args: &[&str], to: &std::path::Path) -> Vec<u8> {
    let out = mitbench(&[args, &[to.to_str().unwrap()]].concat());
    assert!(out.status.success(), "{args:?}: {out:?}");
    std::fs::read(to).unwrap()
}

/// Asserts that `hits` of `trials` intervals covered the truth within the
/// share `range`: a 95% interval should, give or take the trials' own
/// binomial spread.
pub fn assert_coverage(
    what: &str,
    hits: usize,
    trials: usize,
    range: std::ops::RangeInclusive<f64>,
) {
    let coverage = hits as f64 / trials as f64;
    assert!(
        range.contains(&coverage),
        "{what}: coverage {coverage} over {trials} trials, expected {range:?}"
    );
}

/// A history of the test's own: its directory, which the caller keeps alive
/// while it is used, and its path as the command line takes it.
pub fn temp_history() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite").display().to_string();
    (dir, path)
}

/// `doc` as a guest's run: the VM exit's rows laid on it, copies of the
/// retpoline call's (as CPUID's) and the plain call's (as LFENCE's)
/// figures, which any pair of a row dearer than its baseline would serve.
pub fn with_exit_rows(doc: &mut mitbench::store::results::RunDocument) {
    use mitbench::measure::probes::guest::{EXIT_PROBE, EXITING};
    for (from, to) in [("retpoline", EXITING), ("indirect", "lfence")] {
        let mut row = doc.record("indirect/call", from).unwrap().clone();
        row.id = EXIT_PROBE.into();
        row.variant = to.into();
        doc.results.push(row);
    }
}

/// Every figure of the rows of `id` in `doc` made `factor` times as large:
/// a known toll laid on a stored run.
pub fn scale_rows(doc: &mut mitbench::store::results::RunDocument, id: &str, factor: f64) {
    scale_variant(doc, id, None, factor);
}

/// As [`scale_rows`], on one variant of `id` where `variant` names one.
/// Every figure of `cost` (its intervals too) times `factor`, as a run
/// whose row cost that much more reads.
pub fn scale_cost(cost: &mut mitbench::store::results::Cost, factor: f64) {
    let scaled = |f: Figure| f.map(|t| t * factor);
    cost.rounds_ticks = scaled(cost.rounds_ticks);
    cost.next_run_ticks = cost.next_run_ticks.map(scaled);
    // The figure at the run's reference speed, where it read one.
    if let Some(at) = cost.at_reference.as_mut() {
        at.ticks = scaled(at.ticks);
    }
}

pub fn scale_variant(
    doc: &mut mitbench::store::results::RunDocument,
    id: &str,
    variant: Option<&str>,
    factor: f64,
) {
    let chosen = |r: &&mut mitbench::store::results::Record| {
        r.id == id && variant.is_none_or(|v| r.variant == v)
    };
    for r in doc.results.iter_mut().filter(chosen) {
        if let Some(cost) = r.cost.as_mut() {
            scale_cost(cost, factor);
        }
        for round in &mut r.rounds.each {
            round.figure = round.figure.map(|t| t * factor);
        }
    }
}

/// `count` syscalls counted elsewhere in one CPU second, by a workload
/// under one seccomp filter: what tax prices per mitigation in the tests.
pub fn syscalls_under_a_filter(count: u64) -> mitbench::tax::count::Counted {
    mitbench::tax::count::Counted::of(
        vec![mitbench::tax::count::Count {
            kind: mitbench::tax::crossing::Crossing::Syscall,
            source: "a test".into(),
            count: Some(count),
            unsupported: None,
        }],
        one_seccomp_filter(),
    )
}

/// The process controls of a process under one seccomp filter, as
/// /proc/PID/status reads them: how a test makes a run or a workload
/// filtered.
pub fn one_seccomp_filter() -> std::collections::BTreeMap<String, String> {
    [("Seccomp", "2"), ("Seccomp_filters", "1")]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .into()
}

/// `doc` as a run under one seccomp filter reads.
pub fn under_a_seccomp_filter(doc: &mut mitbench::store::results::RunDocument) {
    doc.inventory
        .identity
        .process_controls
        .extend(one_seccomp_filter());
}

/// Binomial standard deviations a rate may stray from its nominal value by
/// chance, but for one time in a thousand (one-sided 99.9% normal point).
const CHANCE_SD: f64 = 3.09;

/// The most a rate whose nominal value is `nominal` reads over `trials`
/// trials by chance alone: the bound a test holds a false-alarm rate (or a
/// coverage's upper end) to, fixed by the nominal rate and the number of
/// trials before the run, never by a measured value. Trials that share a
/// machine are not quite independent, so the bound is a guide, not exact.
pub fn at_most_by_chance(nominal: f64, trials: usize) -> f64 {
    nominal + CHANCE_SD * (nominal * (1.0 - nominal) / trials.max(1) as f64).sqrt()
}

/// The least a rate whose nominal value is `nominal` reads over `trials`
/// trials by chance alone (see [`at_most_by_chance`]).
pub fn at_least_by_chance(nominal: f64, trials: usize) -> f64 {
    nominal - CHANCE_SD * (nominal * (1.0 - nominal) / trials.max(1) as f64).sqrt()
}

/// `trial(seed)` for each seed, on as many threads as the machine has CPUs,
/// in seed order. Each trial draws only from its own seed, so the results
/// are those a loop would give; the long statistical tests take half the
/// time on two CPUs.
pub fn in_parallel<T: Send>(
    seeds: std::ops::Range<u64>,
    trial: impl Fn(u64) -> T + Sync,
) -> Vec<T> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let trial = &trial;
    std::thread::scope(|scope| {
        let lanes: Vec<_> = (0..threads)
            .map(|lane| {
                let seeds = seeds.clone().skip(lane as usize).step_by(threads as usize);
                scope.spawn(move || seeds.map(|seed| (seed, trial(seed))).collect::<Vec<_>>())
            })
            .collect();
        let mut all: Vec<(u64, T)> = lanes
            .into_iter()
            .flat_map(|lane| lane.join().expect("a trial panicked"))
            .collect();
        all.sort_by_key(|&(seed, _)| seed);
        all.into_iter().map(|(_, result)| result).collect()
    })
}

/// `doc` with no trace event enabled, and a copy with one on the syscall
/// path: two runs a trace event was enabled between.
pub fn around_a_trace_event(
    mut doc: mitbench::store::results::RunDocument,
) -> (
    mitbench::store::results::RunDocument,
    mitbench::store::results::RunDocument,
) {
    use mitbench::inventory::hooks::Reading;
    doc.inventory.hooks.trace_events = Reading::Read(Vec::new());
    let mut with = doc.clone();
    with.inventory.hooks.trace_events = Reading::Read(vec!["raw_syscalls:sys_enter".into()]);
    (doc, with)
}

/// The run `doc` as the analysis states one whose canary stayed `factor`
/// above the boot's known level (`known`) longer than a slow stretch
/// lasts: its own level is its quiet level, moved.
pub fn moved(doc: &mut mitbench::store::results::RunDocument, known: f64, factor: f64) {
    let model = &mut doc.machine_states.model;
    model.known_quiet = Some(known);
    model.quiet_canary = known * factor;
    model.moved_pct = Some((factor - 1.0) * 100.0);
}
