//! The command line: parse, dispatch, exit codes. Exit 0 on success, 1 when
//! the machine cannot run mitbench or output cannot be written, 2 on bad
//! input (before anything runs, or runs that cannot be compared), 3 when
//! `compare --fail-above` finds a row slower by more than it allows, 124
//! when `tax --timeout` stopped the workload, 130 when Ctrl-C ended a run
//! or a `tax` workload.

use clap::{Args, Parser, Subcommand};
use mitbench::compare::{self, RunComparison};
use mitbench::duration;
use mitbench::export::compare::Style;
use mitbench::export::{self, Exporter, Format, TableExporter};
use mitbench::harness::affinity;
use mitbench::history::{self, History, HistoryError, RunRef};
use mitbench::inventory::Inventory;
use mitbench::probes::{self, Placement};
use mitbench::results::{RunDocument, advice};
use mitbench::run::{self, PlanError, RunOptions};
use mitbench::tax::Target;
use mitbench::tax::workloads::Workload;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// A message on stderr that never ends the process: when the reader of
/// stderr has gone (a closed pipe) the message is dropped, where
/// `eprintln!` would panic.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

#[derive(Parser)]
#[command(
    name = "mitbench",
    version,
    about = "Measure what the security mitigations on this machine cost, where, and how much batching wins back",
    long_about = "Measure what the security mitigations on this machine cost, where, and how much batching wins \
                  back.\n\nWith no subcommand, runs the default suite (same as `mitbench run`).",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Measure the selected probes and print a table per family
    Run(RunArgs),
    /// List every probe, its variants, and whether this machine supports it
    List {
        /// Print JSON instead of a table
        #[arg(long)]
        json: bool,
    },
    /// Print what this machine is: CPU, kernel, mitigations, clocks, counters
    Inventory {
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
        /// Read /proc and /sys under this directory instead of /
        #[arg(long, value_name = "DIR", default_value = "/")]
        root: PathBuf,
    },
    /// List the stored runs, or reprint one: `history show RUN`
    History {
        #[command(subcommand)]
        show: Option<HistoryCommand>,
        /// Print JSON instead of a table
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        store: HistoryArgs,
    },
    /// Write a run's HTML report: the machine, the tables, a plot per amortization curve, and which batch size a latency budget allows
    #[command(
        after_help = "RUN is a history id, `last`, `last~N`, or a JSON file written by `mitbench run --json`. \
                      The page is self-contained (inline SVG and CSS, no script), readable offline and printable."
    )]
    Report {
        /// The run to report on
        #[arg(value_parser = RunRef::parse, default_value = "last")]
        run: RunRef,
        /// Where to write the page
        #[arg(
            long,
            short,
            value_name = "FILE",
            default_value = "mitbench-report.html"
        )]
        output: PathBuf,
        #[command(flatten)]
        stored: StoredRunArgs,
    },
    /// Write a stored or saved run to a file: JSON, HTML, CSV (one row per record), Markdown or Prometheus metrics
    #[command(
        after_help = "RUN is a history id, `last`, `last~N`, or a JSON file written by `mitbench run --json`. \
                      The file is written atomically (a temporary file renamed into place)."
    )]
    Export {
        /// What to write
        #[arg(value_enum)]
        format: Format,
        /// The run to write
        #[arg(value_parser = RunRef::parse)]
        run: RunRef,
        /// Where to write it
        #[arg(value_name = "FILE")]
        output: PathBuf,
        #[command(flatten)]
        stored: StoredRunArgs,
    },
    /// Many runs in one table, typically one per host: grouped by identical inventory, rows that differ from the first run beyond noise marked
    #[command(
        after_help = "A run is a history id, `last`, `last~N`, or a JSON file written by `mitbench run --json` \
                      (copied from each host). The first run named is the reference column every other \
                      is compared with, as `mitbench compare` would.\n\nExit codes: 0 shown; 2 a run \
                      cannot be read or is of another schema."
    )]
    Fleet {
        /// The runs, two or more; the first is the reference
        #[arg(value_parser = RunRef::parse, num_args = 2.., required = true)]
        runs: Vec<RunRef>,
        /// A change smaller than PCT% is not marked whatever its interval [default: 2]
        #[arg(long, value_name = "PCT", value_parser = positive_percentage, allow_negative_numbers = true)]
        threshold: Option<f64>,
        /// Print the table as JSON
        #[arg(long, conflicts_with = "markdown")]
        json: bool,
        /// Print the table as Markdown
        #[arg(long)]
        markdown: bool,
        #[command(flatten)]
        store: HistoryArgs,
    },
    /// Run a command and estimate what share of its time goes to crossings of security boundaries
    #[command(
        after_help = "Counts the command's syscalls, context switches, page faults, thread and process \
                      creations and TLB flushes (its whole process tree, with perf_event counters), and \
                      prices each by what one costs on this machine: from the newest stored run of this \
                      boot that measured it, else from a quick run made now. Where perf_event is \
                      refused, context switches and page faults come from getrusage (or /proc with \
                      --pid) and TLB shootdowns from /proc/interrupts, each labelled.\n\nCtrl-C reaches \
                      the command and the counts up to its end are still printed; what the command \
                      leaves running when it ends is stopped.\n\nExit codes: 0 counted (whatever the \
                      command's own exit); 2 the command cannot be started, or no such --pid; 124 \
                      stopped at --timeout; 130 interrupted."
    )]
    Tax {
        /// Print the estimate as JSON
        #[arg(long)]
        json: bool,
        /// Also test the estimate: run the command in pairs, plain and under a seccomp filter that adds a known toll to every syscall, and set the measured difference beside the predicted one
        #[arg(long, conflicts_with = "pid")]
        check: bool,
        /// Stop the command (SIGTERM, then SIGKILL 2 s later) when it runs longer than this, e.g. 30s, 5m; what it did until then is still counted and priced
        #[arg(long, value_name = "DURATION", value_parser = duration_arg, conflicts_with = "pid")]
        timeout: Option<Duration>,
        /// Count a process that is already running, instead of a command, for --for
        #[arg(long, value_name = "PID", requires = "for_duration", value_parser = clap::value_parser!(i32).range(1..))]
        pid: Option<i32>,
        /// With --pid: how long to count, e.g. 10s, 1m (less when the process ends first)
        #[arg(long = "for", id = "for_duration", value_name = "DURATION", value_parser = duration_arg, requires = "pid")]
        for_duration: Option<Duration>,
        /// Also write the estimate as a self-contained HTML page to FILE
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        /// Pairs of runs for --check
        #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u16).range(2..=1000))]
        pairs: u16,
        /// Comparisons in --check's filter: the size of the injected toll
        #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u16).range(1..=4000))]
        rules: u16,
        #[command(flatten)]
        store: HistoryArgs,
        /// The command and its arguments
        #[arg(
            last = true,
            required_unless_present = "pid",
            conflicts_with = "pid",
            value_name = "COMMAND"
        )]
        command: Vec<String>,
    },
    /// Run one of the workloads shipped to try `mitbench tax` on, each heavy in one kind of crossing
    #[command(
        after_help = "e.g. `mitbench tax --check -- mitbench workload pingpong`. The workload runs in this \
                      process and prints nothing; exit 0 when it did all its work, 1 when a call failed."
    )]
    Workload {
        /// Which crossing to cross many times
        #[arg(value_enum)]
        kind: Workload,
        /// How many times [default: a few tenths of a second's worth]
        #[arg(value_name = "COUNT", value_parser = clap::value_parser!(u64).range(1..))]
        count: Option<u64>,
    },
    /// Compare two runs: what changed on the machine, which rows moved beyond noise, and why
    #[command(
        after_help = "A run is a history id, `last`, `last~N` (N runs before the last), or a JSON file \
                            written by `mitbench run --json`.\n\nExit codes: 0 compared; 2 a run cannot be \
                            read or is of another schema; 3 with --fail-above, a row is slower by more than \
                            PCT beyond noise."
    )]
    Compare {
        /// The earlier run
        #[arg(value_parser = RunRef::parse)]
        old: RunRef,
        /// The later run
        #[arg(value_parser = RunRef::parse)]
        new: RunRef,
        /// A change smaller than PCT% is `~` whatever its interval [default: 2]
        #[arg(long, value_name = "PCT", value_parser = positive_percentage, allow_negative_numbers = true)]
        threshold: Option<f64>,
        /// Exit 3 when a row is slower by more than PCT% beyond noise (its interval's lower end)
        #[arg(long, value_name = "PCT", value_parser = positive_percentage, allow_negative_numbers = true)]
        fail_above: Option<f64>,
        /// Print the comparison as JSON
        #[arg(long, conflicts_with = "markdown")]
        json: bool,
        /// Print the comparison as Markdown, for a review
        #[arg(long)]
        markdown: bool,
        /// Also write the comparison as a self-contained HTML page to FILE
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        #[command(flatten)]
        store: HistoryArgs,
    },
}

#[derive(Subcommand)]
enum HistoryCommand {
    /// Reprint a stored run's tables
    Show {
        /// A history id, `last`, `last~N`, or a JSON file
        #[arg(value_parser = RunRef::parse)]
        run: RunRef,
    },
}

/// What rendering a stored or saved run takes beside the run and the file.
#[derive(Args, Clone, Default)]
struct StoredRunArgs {
    /// The latency budget the batch-size advice is given for, e.g. 50us, 1ms [default: 50us]
    #[arg(long, value_name = "DURATION", value_parser = advice::parse_budget)]
    latency_budget: Option<Duration>,
    #[command(flatten)]
    store: HistoryArgs,
}

#[derive(Args, Clone, Default)]
struct HistoryArgs {
    /// The history database [default: $XDG_DATA_HOME/mitbench/history.sqlite]
    #[arg(long, value_name = "PATH")]
    history: Option<PathBuf>,
}

impl HistoryArgs {
    fn path(&self) -> Result<PathBuf, HistoryError> {
        match &self.history {
            Some(path) => Ok(path.clone()),
            None => history::default_path(),
        }
    }
}

#[derive(Args, Clone, Default)]
struct RunArgs {
    /// Shorter budgets and a 2% CI target: less precision, faster
    #[arg(long)]
    quick: bool,
    /// Probe id, glob or family to run (repeatable), e.g. os/getpid, 'os/*', os
    #[arg(long = "probe", value_name = "PATTERN")]
    probes: Vec<String>,
    /// Also write the results as JSON to FILE (atomically)
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// CPU to pin the measuring thread to [default: the highest allowed]
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    cpu: Option<usize>,
    /// Stop adding rounds to a variant once its 95% CI half-width is within PCT% of its cost [default: 1, --quick 2]
    #[arg(long, value_name = "PCT", value_parser = positive_percentage, allow_negative_numbers = true)]
    target_ci: Option<f64>,
    /// Time budget per probe variant, all its rounds together, in seconds [default: 3, --quick 0.5]
    #[arg(long, value_name = "SECS", value_parser = positive_seconds, allow_negative_numbers = true)]
    budget: Option<f64>,
    /// Seed of the random order of rounds, to repeat a run's order [default: from the clock]
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Append one JSON line per finished round to FILE, to follow a long run
    #[arg(long, value_name = "FILE")]
    round_log: Option<PathBuf>,
    /// No progress bar
    #[arg(long, short)]
    quiet: bool,
    /// Also write the HTML report (self-contained, plots inline) to FILE
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Also write one row per record as CSV to FILE (columns: see README)
    #[arg(long, value_name = "FILE")]
    export_csv: Option<PathBuf>,
    /// Also write the tables as Markdown to FILE
    #[arg(long, value_name = "FILE")]
    export_markdown: Option<PathBuf>,
    /// Also write the results as Prometheus metrics to FILE, for node_exporter's textfile collector
    #[arg(long, value_name = "FILE")]
    openmetrics: Option<PathBuf>,
    /// The latency budget the batch-size advice is given for, e.g. 50us, 1ms [default: 50us, Linux's default timer slack]
    #[arg(long, value_name = "DURATION", value_parser = advice::parse_budget)]
    latency_budget: Option<Duration>,
    #[command(flatten)]
    store: HistoryArgs,
    /// Do not store this run in the history
    #[arg(long, conflicts_with = "history")]
    no_history: bool,
}

fn positive_percentage(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a number"))?;
    if value.is_finite() && value > 0.0 && value < 100.0 {
        Ok(value)
    } else {
        Err("must be a percentage above 0 and below 100".into())
    }
}

fn positive_seconds(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a number"))?;
    if value.is_finite() && value > 0.0 && value <= 3600.0 {
        Ok(value)
    } else {
        Err("must be a number of seconds above 0 and at most 3600".into())
    }
}

/// A duration for `tax --timeout` and `--for`: a number with an optional
/// unit, s (the default), m or h; above 0 and at most 7 days.
fn duration_arg(text: &str) -> Result<Duration, String> {
    const WORKLOAD_TIME: duration::Syntax = duration::Syntax {
        units: &[(&["s"], 1e9), (&["m"], 60e9), (&["h"], 3600e9)],
        bare: duration::Bare::In(1e9),
        min_ns: 0.0,
        max_ns: 7.0 * 86400e9,
        range: "0s..7 days",
    };
    WORKLOAD_TIME.parse(text)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        None => run(cli.run),
        Some(Command::Run(args)) => run(args),
        Some(Command::List { json }) => list(json),
        Some(Command::Inventory { json, root }) => inventory(json, root),
        Some(Command::History { show, json, store }) => match show {
            None => history_list(&store, json),
            Some(HistoryCommand::Show { run }) => history_show(&store, &run),
        },
        Some(Command::Report {
            run,
            output,
            stored,
        }) => export_run(&stored, &run, Format::Html, &output),
        Some(Command::Export {
            format,
            run,
            output,
            stored,
        }) => export_run(&stored, &run, format, &output),
        Some(Command::Tax {
            json,
            html,
            check,
            timeout,
            pid,
            for_duration,
            pairs,
            rules,
            store,
            command,
        }) => {
            let workload = match (pid, for_duration) {
                (Some(pid), Some(duration)) => Target::Running { pid, duration },
                _ => Target::Command { command, timeout },
            };
            tax(
                &store,
                &workload,
                TaxOutput { json, html },
                check.then_some((usize::from(pairs), usize::from(rules))),
            )
        }
        Some(Command::Workload { kind, count }) => {
            match kind.run(count.unwrap_or_else(|| kind.default_count())) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(1, format!("the {} workload failed: {e}", kind.name())),
            }
        }
        Some(Command::Fleet {
            runs,
            threshold,
            json,
            markdown,
            store,
        }) => fleet(&store, &runs, threshold, json, markdown),
        Some(Command::Compare {
            old,
            new,
            threshold,
            fail_above,
            json,
            markdown,
            html,
            store,
        }) => {
            let output = CompareOutput {
                json,
                style: if markdown {
                    Style::Markdown
                } else {
                    Style::Terminal
                },
                html,
            };
            compare_runs(&store, &old, &new, threshold, fail_above, &output)
        }
    }
}

fn fail(code: u8, message: impl std::fmt::Display) -> ExitCode {
    say!("error: {message}");
    ExitCode::from(code)
}

fn run(args: RunArgs) -> ExitCode {
    let options = RunOptions {
        quick: args.quick,
        patterns: args.probes.clone(),
        outputs: [
            (Format::Json, &args.json),
            (Format::Html, &args.html),
            (Format::Csv, &args.export_csv),
            (Format::Markdown, &args.export_markdown),
            (Format::OpenMetrics, &args.openmetrics),
        ]
        .into_iter()
        .filter_map(|(format, path)| Some((format, path.clone()?)))
        .collect(),
        cpu: args.cpu,
        target_ci: args.target_ci,
        budget: args.budget,
        quiet: args.quiet,
        seed: args.seed,
        round_log: args.round_log.clone(),
        latency_budget: args.latency_budget.unwrap_or(advice::DEFAULT_BUDGET),
    };
    let mut plan = match run::plan(options) {
        Ok(plan) => plan,
        Err(PlanError::Usage(message)) => return fail(2, message),
        Err(PlanError::Machine(message)) => return fail(1, message),
    };
    let inventory = Inventory::collect(std::path::Path::new("/"));
    let doc = match run::execute(&plan, inventory) {
        Ok(doc) => doc,
        Err(message) => return fail(1, message),
    };
    if let Err(failed) = print_table(&doc) {
        return failed;
    }
    // One output that cannot be written (a full disk) costs that file, not
    // the others or the history: each is tried, and the run exits 1 after.
    let mut write_failed = false;
    for output in std::mem::take(&mut plan.outputs) {
        let (format, path) = (output.format, output.path);
        if doc.interrupted && format == Format::OpenMetrics {
            // A scrape would read a partial run as the host's figures; the
            // last whole run's file stays.
            say!(
                "{} not written: the run was interrupted, so {} keeps the last whole run's metrics",
                format.what(),
                path.display()
            );
            continue;
        }
        match export::write_atomically(format.exporter(), &doc, output.temp, &path) {
            Ok(()) => say!("{} written to {}", format.what(), path.display()),
            Err(e) => {
                say!(
                    "error: writing {} failed, nothing was left there: {e}",
                    path.display()
                );
                write_failed = true;
            }
        }
    }
    if !args.no_history {
        store_in_history(&args.store, &doc);
    }
    if write_failed {
        ExitCode::FAILURE
    } else if doc.interrupted {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    }
}

fn list(json: bool) -> ExitCode {
    let allowed = affinity::allowed_cpus().unwrap_or_default();
    let placement = Placement {
        cpu: allowed.last().copied().unwrap_or(0),
        allowed,
    };
    let listing = probes::listing(&placement);
    if json {
        return print_json(&listing);
    }
    print_out(&export::render_listing(&listing))
}

fn inventory(json: bool, root: PathBuf) -> ExitCode {
    if !root.is_dir() {
        return fail(
            2,
            format!(
                "invalid value for --root: {} is not a directory",
                root.display()
            ),
        );
    }
    let inventory = Inventory::collect(&root);
    if json {
        return print_json(&inventory);
    }
    print_out(&export::inventory::render(&inventory))
}

fn print_json(value: &impl serde::Serialize) -> ExitCode {
    match serde_json::to_string_pretty(value) {
        Ok(text) => print_out(&(text + "\n")),
        Err(e) => fail(1, format!("serialising JSON failed: {e}")),
    }
}

/// Writes `text` to stdout. A reader that closed the pipe early (`| head`)
/// wanted no more: that ends the command quietly with status 0, as a
/// finished listing would; any other write error is reported.
fn print_out(text: &str) -> ExitCode {
    // Whatever of the machine's text a rendering let through is shown, not
    // obeyed by the terminal.
    let text = export::terminal::terminal_safe(text, true);
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => fail(1, format!("writing to stdout failed: {e}")),
    }
}

/// Stores a finished run; a history that cannot take it costs a warning,
/// never the run (its tables are printed and its JSON written already).
fn store_in_history(store: &HistoryArgs, doc: &RunDocument) {
    let stored = store
        .path()
        .and_then(|path| History::open(&path, true))
        .and_then(|mut history| {
            let id = history.store(doc)?;
            Ok((id, history.path().to_path_buf()))
        });
    match stored {
        Ok((id, path)) => say!("stored as run {id} in {}", path.display()),
        Err(e) => say!("warning: the run was not stored in the history: {e}"),
    }
}

/// The history, when it exists; `None` where there is none yet (a run
/// named by a file needs none).
fn open_history(store: &HistoryArgs) -> Result<Option<History>, HistoryError> {
    let path = store.path()?;
    if !path.exists() {
        return Ok(None);
    }
    History::open(&path, false).map(Some)
}

fn history_list(store: &HistoryArgs, json: bool) -> ExitCode {
    let runs = match open_history(store) {
        Ok(Some(history)) => history.list(),
        Ok(None) => Ok(Vec::new()),
        Err(e) => Err(e),
    };
    let runs = match runs {
        Ok(runs) => runs,
        Err(e) => return fail(1, e),
    };
    if json {
        return print_json(&runs);
    }
    if runs.is_empty() {
        return print_out("no runs stored yet: `mitbench run` stores each run\n");
    }
    print_out(&export::render_history(&runs))
}

/// The runs named, in order; the history is opened once, and only when a
/// name is not a file.
fn resolve(store: &HistoryArgs, runs: &[&RunRef]) -> Result<Vec<RunDocument>, HistoryError> {
    let history = if runs.iter().any(|r| !matches!(r, RunRef::File(_))) {
        open_history(store)?
    } else {
        None
    };
    runs.iter().map(|r| r.resolve(history.as_ref())).collect()
}

fn history_show(store: &HistoryArgs, run: &RunRef) -> ExitCode {
    let doc = match resolve(store, &[run]) {
        Ok(mut docs) => docs.remove(0),
        Err(e) => return fail(2, e),
    };
    match print_table(&doc) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failed) => failed,
    }
}

/// A run's table on stdout, made safe for the terminal (a stored run may
/// hold control characters in its names).
fn print_table(doc: &RunDocument) -> Result<(), ExitCode> {
    let table = TableExporter
        .render(doc)
        .map_err(|e| fail(1, format!("rendering the table failed: {e}")))?;
    let table = String::from_utf8_lossy(&table);
    let _ = std::io::stdout().write_all(export::terminal::terminal_safe(&table, true).as_bytes());
    Ok(())
}

/// Writes a stored or saved run in `format`, the advice recomputed for
/// the budget asked for.
fn export_run(
    stored: &StoredRunArgs,
    run: &RunRef,
    format: Format,
    output: &std::path::Path,
) -> ExitCode {
    let mut doc = match resolve(&stored.store, &[run]) {
        Ok(mut docs) => docs.remove(0),
        Err(e) => return fail(2, e),
    };
    let budget = stored.latency_budget.unwrap_or(advice::DEFAULT_BUDGET);
    advice::advise_document(&mut doc, budget);
    let temp = match run::temp_file_beside(output, "output") {
        Ok(temp) => temp,
        Err(message) => return fail(2, message),
    };
    match export::write_atomically(format.exporter(), &doc, temp, output) {
        Ok(()) => {
            say!("{} written to {}", format.what(), output.display());
            ExitCode::SUCCESS
        }
        Err(e) => fail(1, format!("writing {} failed: {e}", output.display())),
    }
}

/// Where a tax estimate goes: stdout as JSON or a table, and maybe a page.
struct TaxOutput {
    json: bool,
    html: Option<PathBuf>,
}

/// Counts a workload's crossings and prices them (see `mitbench::tax`).
fn tax(
    store: &HistoryArgs,
    target: &Target,
    output: TaxOutput,
    check: Option<(usize, usize)>,
) -> ExitCode {
    // A page that cannot be written is found out before the workload runs.
    let html = match page_target(output.html.as_deref()) {
        Ok(target) => target,
        Err(message) => return fail(2, message),
    };
    // During the count Ctrl-C is the workload's (see tax::supervise); after
    // it, a first Ctrl-C only cuts the tolls' measurement short and the
    // counts are still printed, a second exits at once, and must not leave
    // the page's temporary file behind.
    if let Some((_, temp)) = &html {
        mitbench::harness::interrupt::remove_on_abort(temp.path());
    }
    mitbench::harness::interrupt::install();
    let counted = match mitbench::tax::count(target) {
        Ok(counted) => counted,
        Err(message) => return fail(2, message),
    };
    // What was counted is priced and printed whatever ended the workload;
    // the exit code says how it ended.
    let ending = if counted.interrupted {
        say!("interrupted: the counts are up to then");
        ExitCode::from(130)
    } else if counted.timed_out {
        say!("timed out: the workload was stopped; the counts are up to then");
        ExitCode::from(124)
    } else {
        ExitCode::SUCCESS
    };
    let check = check.filter(|_| ending == ExitCode::SUCCESS);
    let (tolls, from) = match tolls_for_tax(store) {
        Ok(found) => found,
        Err(message) => return fail(1, format!("measuring the tolls failed: {message}")),
    };
    let check_counts = counted.syscalls_and_switches();
    let mhz = tolls.inventory.tsc_mhz;
    // Skipped after Ctrl-C or a timeout: the user wants out.
    let observer = if ending == ExitCode::SUCCESS {
        say!("measuring what counting cost the workload");
        mitbench::tax::observer::correct(&counted)
    } else {
        Err("not measured: the count was cut short".into())
    };
    let mut estimate = mitbench::tax::estimate(counted, &tolls, from, observer);
    let command = match target {
        Target::Command { command, .. } => Some(command),
        Target::Running { .. } => None,
    };
    if let (Some((pairs, rules)), Some(command)) = (check, command) {
        match (check_counts, mhz) {
            (Some(counts), Some(mhz)) => {
                say!(
                    "checking: {pairs} pairs of runs, plain and under a {rules}-comparison seccomp filter"
                );
                match mitbench::tax::check::check(command, counts, rules, pairs, mhz) {
                    Ok(result) => estimate.check = Some(result),
                    Err(message) => estimate.check_unsupported = Some(message),
                }
            }
            _ => {
                estimate.check_unsupported = Some(
                    "it needs the syscall and context-switch counts and the TSC rate, and this machine gave not all three"
                        .into(),
                )
            }
        }
    }
    let printed = if output.json {
        print_json(&estimate)
    } else {
        print_out(&export::tax::render(&estimate))
    };
    if let Some(target) = html
        && let Err(code) = write_page(target, export::tax::render_html(&estimate), "estimate")
    {
        return code;
    }
    if printed == ExitCode::SUCCESS {
        ending
    } else {
        printed
    }
}

/// The run `tax` prices crossings by, and how to name it: the newest
/// stored run of this boot that measured every toll, else a quick run of
/// those probes made now.
fn tolls_for_tax(store: &HistoryArgs) -> Result<(RunDocument, String), String> {
    let machine = Inventory::collect(std::path::Path::new("/"));
    let stored = match open_history(store) {
        Ok(Some(history)) => mitbench::tax::tolls_in(&history, &machine.identity.boot_id),
        _ => None,
    };
    if let Some(found) = stored {
        return Ok(found);
    }
    say!("no stored run of this boot measured the tolls: measuring them now (quick)");
    let options = RunOptions {
        quick: true,
        quiet: true,
        patterns: mitbench::tax::toll_probes(),
        latency_budget: advice::DEFAULT_BUDGET,
        ..RunOptions::default()
    };
    let plan = run::plan(options).map_err(|e| match e {
        PlanError::Usage(m) | PlanError::Machine(m) => m,
    })?;
    let doc = run::execute(&plan, machine)?;
    Ok((doc, "a quick run made for this estimate".to_string()))
}

/// Many runs in one table (see `compare::fleet`).
fn fleet(
    store: &HistoryArgs,
    runs: &[RunRef],
    threshold: Option<f64>,
    json: bool,
    markdown: bool,
) -> ExitCode {
    let refs: Vec<&RunRef> = runs.iter().collect();
    let docs = match resolve(store, &refs) {
        Ok(docs) => docs,
        Err(e) => return fail(2, e),
    };
    let named: Vec<(String, RunDocument)> = runs.iter().map(|r| r.to_string()).zip(docs).collect();
    let fleet = compare::fleet(&named, threshold.unwrap_or(compare::DEFAULT_THRESHOLD_PCT));
    if json {
        return print_json(&fleet);
    }
    let style = if markdown {
        Style::Markdown
    } else {
        Style::Terminal
    };
    print_out(&export::fleet::render(&fleet, style))
}

/// The file an `--html FILE` page goes to and the temporary file beside it
/// it is written through; found unwritable before any work is done.
fn page_target(path: Option<&Path>) -> Result<Option<(&Path, tempfile::NamedTempFile)>, String> {
    path.map(|path| Ok((path, run::temp_file_beside(path, "html")?)))
        .transpose()
}

/// Writes a rendered page (`what` names it in the message) into place.
fn write_page(
    (path, temp): (&Path, tempfile::NamedTempFile),
    page: Result<Vec<u8>, export::ExportError>,
    what: &str,
) -> Result<(), ExitCode> {
    match page.and_then(|page| export::write_bytes_atomically(&page, temp, path)) {
        Ok(()) => {
            say!("{what} written to {}", path.display());
            Ok(())
        }
        Err(e) => Err(fail(1, format!("writing {} failed: {e}", path.display()))),
    }
}

/// Where a comparison goes: stdout as JSON or a table, and maybe a page.
struct CompareOutput {
    json: bool,
    style: Style,
    html: Option<PathBuf>,
}

fn compare_runs(
    store: &HistoryArgs,
    old: &RunRef,
    new: &RunRef,
    threshold: Option<f64>,
    fail_above: Option<f64>,
    output: &CompareOutput,
) -> ExitCode {
    let html = match page_target(output.html.as_deref()) {
        Ok(target) => target,
        Err(message) => return fail(2, message),
    };
    let docs = match resolve(store, &[old, new]) {
        Ok(docs) => docs,
        Err(e) => return fail(2, e),
    };
    let [old_doc, new_doc]: [RunDocument; 2] =
        docs.try_into().expect("two names resolve to two runs");
    let comparison: RunComparison = compare::compare(
        &old_doc,
        &old.to_string(),
        &new_doc,
        &new.to_string(),
        threshold.unwrap_or(compare::DEFAULT_THRESHOLD_PCT),
    );
    if output.json {
        let code = print_json(&comparison);
        if code != ExitCode::SUCCESS {
            return code;
        }
    } else {
        let code = print_out(&export::compare::render(&comparison, output.style));
        if code != ExitCode::SUCCESS {
            return code;
        }
    }
    if let Some(target) = html
        && let Err(code) = write_page(
            target,
            export::compare_html::render(&comparison),
            "comparison",
        )
    {
        return code;
    }
    match (fail_above, comparison.worst_slowdown_pct()) {
        (Some(limit), Some(worst)) if worst > limit => {
            say!(
                "a row is slower by at least {worst:.1}% beyond noise, above --fail-above {limit}%"
            );
            ExitCode::from(3)
        }
        _ => ExitCode::SUCCESS,
    }
}
