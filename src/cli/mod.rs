//! The command line's shape: every command, option and value it takes,
//! with the help text a user reads. Parsing only; what a command does is in
//! [`crate::commands`].

pub mod duration;
pub mod values;

use crate::export::Format;
use crate::export::text_table::Style;
use crate::store::history::{self, HistoryError, RunRef, SideRef};
use crate::tax::workloads::Workload;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "mitbench",
    version,
    about = "Measure what the security mitigations on this machine cost, where, and how much batching wins back",
    long_about = "Measure what the security mitigations on this machine cost, where, and how much batching wins \
                  back.\n\nWith no subcommand, runs the default suite (same as `mitbench run`).",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Subcommand)]
pub enum Command {
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
    /// Print the boots that separate the kernel's mitigations in force here: each as its
    /// whole command line, how to make it once, and what to run on it
    #[command(
        after_help = "mitbench never reboots or changes a boot setting. The plan is read from \
                      /sys/devices/system/cpu/vulnerabilities and /proc/cmdline: the present boot, \
                      one with mitigations=off, and one per mitigation in force with only that one \
                      switched off (the kernel's documented parameters)."
    )]
    Plan {
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
        /// Runs a set on each boot should have
        #[arg(long, value_name = "N", default_value_t = crate::plan::DEFAULT_RUNS)]
        runs: usize,
        /// Read /proc and /sys under this directory instead of /
        #[arg(long, value_name = "DIR", default_value = "/")]
        root: PathBuf,
        #[command(flatten)]
        store: HistoryArgs,
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
        /// A change smaller than PCT% is not marked whatever its interval [default: 1]
        #[arg(long, value_name = "PCT", value_parser = values::percentage, allow_negative_numbers = true)]
        threshold: Option<f64>,
        #[command(flatten)]
        printed: Printed,
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
        #[command(flatten)]
        printed: Printed,
        /// Also test the estimate: run the command in pairs, plain and under a seccomp filter that adds a known toll to every syscall, and set the measured difference beside the predicted one
        #[arg(long, conflicts_with = "pid")]
        check: bool,
        /// Leave the counters' own cost in: shares are then of the counted run's CPU time, and the seconds of measuring that cost are saved
        #[arg(long)]
        no_correction: bool,
        /// Stop the command (SIGTERM, then SIGKILL 2 s later) when it runs longer than this, e.g. 30s, 5m; what it did until then is still counted and priced
        #[arg(long, value_name = "DURATION", value_parser = values::workload_time, conflicts_with = "pid")]
        timeout: Option<Duration>,
        /// Count a process that is already running, instead of a command, for --for
        #[arg(long, value_name = "PID", requires = "for_duration", value_parser = clap::value_parser!(i32).range(1..))]
        pid: Option<i32>,
        /// With --pid: how long to count, e.g. 10s, 1m (less when the process ends first)
        #[arg(long = "for", id = "for_duration", value_name = "DURATION", value_parser = values::workload_time, requires = "pid")]
        for_duration: Option<Duration>,
        #[command(flatten)]
        page: Page,
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
                            written by `mitbench run --json`. A side may be a set of runs: a range of the \
                            history (`last~5..last~3`, `12..14`) or names separated by commas; sets compare \
                            each side's runs together (`mitbench run --runs N` makes one). A row is marked \
                            when its change is beyond its noise, every level counted where it can be: \
                            within runs (their forks), between runs (a side's own runs, and the history's \
                            runs of the same host, boot, build and process controls), the machine's drift, \
                            and between boots where the sides ran under two (from the history's boots of \
                            the old side's command line; named where unknown); the rows are held to a 5% \
                            false discovery rate together, and each says the smallest change it would mark \
                            four times in five (`detectable`). See docs/history-and-compare.md.\n\nExit codes: 0 \
                            compared; 2 a run cannot be read or is of another schema; 3 with --fail-above, a \
                            row is slower by more than PCT beyond noise."
    )]
    Compare {
        /// The earlier run, or a set of runs: `A..B` (a range of the history) or `a,b,c`
        #[arg(value_parser = SideRef::parse)]
        old: SideRef,
        /// The later run, or a set of runs
        #[arg(value_parser = SideRef::parse)]
        new: SideRef,
        /// Exit 3 when a row is slower by more than PCT% beyond noise (its interval's lower end)
        #[arg(long, value_name = "PCT", value_parser = values::percentage, allow_negative_numbers = true)]
        fail_above: Option<f64>,
        /// Print every row, unchanged ones too, and the attribution of each (default: the
        /// summary, the marked rows and the unchanged counted per family)
        #[arg(long)]
        all: bool,
        /// Also say how the intervals, verdicts and noise are read
        #[arg(long)]
        explain: bool,
        #[command(flatten)]
        judged: JudgeArgs,
    },
    /// Break each row's toll down by mitigation over run sets made under the boots of
    /// `mitbench plan` (or under wrappers that set a process control)
    #[command(
        after_help = "Each SET is a run set as compare reads one: a range of the history (`4..8`), or \
                      runs separated by commas (ids, `last~N`, JSON files). Each set's boot is \
                      recognised by its command line and vulnerability files against the plan of \
                      the present boot (the set with every mitigation on); process controls a \
                      wrapper sets before exec (a seccomp filter, SSBD or indirect branch \
                      speculation by prctl) count as mitigations too. Per row: the whole toll \
                      (present against every mitigation off), each mitigation's part (present \
                      against the set without it only) and what the parts leave, each with its \
                      95% interval; per mitigation, the rows it moves and its share of each \
                      family's toll. mitbench never reboots.\n\nExit codes: 0 attributed; 2 a \
                      set cannot be read, the sets are of different machines, kernels or \
                      mitbench builds, or a set's boot matches no boot of the plan."
    )]
    Attribute {
        /// Two run sets or more, one per boot (or wrapper) [default: the history's newest set of
        /// each command line and process controls, of the last run's host and build]
        #[arg(value_parser = SideRef::parse, value_name = "SET")]
        sets: Vec<SideRef>,
        /// How many times one getpid runs a kernel sequence this kernel cannot count (its
        /// returns, its indirect calls), e.g. per-kernel-return=40: each adds count x price to
        /// the kernel price list's floor as a prediction, scored against the boots (repeatable)
        #[arg(long = "count", value_name = "OCCURS=N", value_parser = values::kernel_count)]
        counts: Vec<crate::attribute::floors::SequenceCount>,
        #[command(flatten)]
        judged: JudgeArgs,
    },
    /// Print a completion script for a shell
    #[command(
        after_help = "bash: `mitbench completions bash > ~/.local/share/bash-completion/completions/mitbench`; \
                      zsh: into a directory on $fpath as `_mitbench`; fish: \
                      `mitbench completions fish > ~/.config/fish/completions/mitbench.fish`. \
                      The Debian package installs all three."
    )]
    Completions {
        /// The shell to complete in
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write the manual pages (mitbench.1 and one per command, mitbench-run.1 ...) into a directory
    #[command(
        after_help = "e.g. `mitbench manpages ~/.local/share/man/man1`, then `man mitbench`. The pages \
                      are made from the same definitions as --help; the Debian package installs them."
    )]
    Manpages {
        /// The directory to write the pages into; it must exist
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
}

#[derive(Subcommand)]
pub enum HistoryCommand {
    /// Reprint a stored run's tables
    Show {
        /// A history id, `last`, `last~N`, or a JSON file
        #[arg(value_parser = RunRef::parse)]
        run: RunRef,
        /// Tables at their natural width with every note whole
        #[arg(long)]
        wide: bool,
    },
    /// What changed, and when: each row's change points over a machine's runs, the rows that moved at one run as one event, and what the inventory says changed there
    #[command(
        after_help = "Each machine (host, installation, quick or not, process controls) is read as \
                      one series over its stored runs, across boots and builds; runs of a slow state \
                      are left out. A row's figures are read at the runs' common reference speed, each \
                      with its own interval. Change points: E-divisive means with each split held to a \
                      Welch t-test (as Apache Otava), three runs a side at least. Name several \
                      histories (one per host, copied) for a fleet: the causes machines share are \
                      listed. See docs/history-and-compare.md.\n\nExit codes: 0 shown; 2 a history \
                      cannot be read."
    )]
    Changes {
        /// Histories to read, a fleet's [default: --history's]
        #[arg(value_name = "HISTORY")]
        histories: Vec<PathBuf>,
        /// A change smaller than PCT% is left out [default: 1]
        #[arg(long, value_name = "PCT", value_parser = values::percentage)]
        threshold: Option<f64>,
        #[command(flatten)]
        printed: Printed,
    },
}

/// What rendering a stored or saved run takes beside the run and the file.
#[derive(Args, Clone, Default)]
pub struct StoredRunArgs {
    /// The latency budget the batch-size advice is given for, e.g. 50us, 1ms [default: 50us]
    #[arg(long, value_name = "DURATION", value_parser = values::latency_budget)]
    pub latency_budget: Option<Duration>,
    #[command(flatten)]
    pub store: HistoryArgs,
}

#[derive(Args, Clone, Default)]
pub struct HistoryArgs {
    /// The history database [default: $XDG_DATA_HOME/mitbench/history.sqlite]
    #[arg(long, value_name = "PATH", global = true)]
    pub history: Option<PathBuf>,
}

impl HistoryArgs {
    pub fn path(&self) -> Result<PathBuf, HistoryError> {
        match &self.history {
            Some(path) => Ok(path.clone()),
            None => history::default_path(),
        }
    }
}

#[derive(Args, Clone, Default)]
pub struct RunArgs {
    /// Shorter budgets and a 2% CI target: less precision, faster
    #[arg(long)]
    pub quick: bool,
    /// Probe id, glob or family to run (repeatable), e.g. os/getpid, 'os/*', os
    #[arg(long = "probe", value_name = "PATTERN")]
    pub probes: Vec<String>,
    /// Also write the results as JSON to FILE (atomically)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// CPU to pin the measuring thread to [default: the highest allowed]
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub cpu: Option<usize>,
    /// Stop adding rounds to a variant once its 95% CI half-width is within PCT% of its cost [default: 1, --quick 2]
    #[arg(long, value_name = "PCT", value_parser = values::percentage, allow_negative_numbers = true)]
    pub target_ci: Option<f64>,
    /// Time budget per probe variant, all its rounds and forks together, in seconds [default: 3, --quick 0.5, or less: each variant's share of the whole suite's 220 s, --quick 36 s, or of 30 s, --quick 8 s, for a small selection]
    #[arg(long, value_name = "SECS", value_parser = values::seconds, allow_negative_numbers = true)]
    pub budget: Option<f64>,
    /// Passes over the probes, each in a fresh process, sharing each variant's budget; the interval is read across them [default: 3, --quick 2]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub forks: Option<u16>,
    /// Measure N runs back to back, each stored in the history as one set for `mitbench compare` [default: 1]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=100))]
    pub runs: Option<u16>,
    /// Seed of the random order of rounds, to repeat a run's order [default: from the clock]
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Start every round at once, without waiting for the canary to read the machine's quiet level
    #[arg(long)]
    pub no_wait: bool,
    /// Append one JSON line per finished round to FILE, to follow a long run
    #[arg(long, value_name = "FILE")]
    pub round_log: Option<PathBuf>,
    /// No progress bar
    #[arg(long, short)]
    pub quiet: bool,
    /// Tables at their natural width with every note whole, instead of
    /// keeping to the terminal (100 columns where stdout is not one)
    #[arg(long)]
    pub wide: bool,
    /// Also write the HTML report (self-contained, plots inline) to FILE
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Also write one row per record as CSV to FILE (columns: see README)
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
    /// Also write the tables as Markdown to FILE
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
    /// Also write the results as Prometheus metrics to FILE, for node_exporter's textfile collector
    #[arg(long, value_name = "FILE")]
    pub openmetrics: Option<PathBuf>,
    /// The latency budget the batch-size advice is given for, e.g. 50us, 1ms [default: 50us, Linux's default timer slack]
    #[arg(long, value_name = "DURATION", value_parser = values::latency_budget)]
    pub latency_budget: Option<Duration>,
    #[command(flatten)]
    pub store: HistoryArgs,
    /// Do not store this run in the history
    #[arg(long, conflicts_with = "history")]
    pub no_history: bool,
}

/// How a command prints its result on stdout: a table (the default), JSON
/// or Markdown. One group for every command that prints a table.
#[derive(Args, Clone, Copy, Default)]
pub struct Printed {
    /// Print JSON instead of a table
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Print the table as Markdown, for a review or a wiki
    #[arg(long)]
    pub markdown: bool,
}

impl Printed {
    /// The table's style where a table is printed.
    pub fn style(&self) -> Style {
        if self.markdown {
            Style::Markdown
        } else {
            Style::Terminal
        }
    }
}

/// What `compare` and `attribute` hold their runs to, and where the
/// result goes.
#[derive(Args)]
pub struct JudgeArgs {
    /// A change (or a mitigation's part) smaller than PCT% is `~` whatever its interval
    /// [default: 1 for compare, 2 for attribute]
    #[arg(long, value_name = "PCT", value_parser = values::percentage, allow_negative_numbers = true)]
    pub threshold: Option<f64>,
    #[command(flatten)]
    pub printed: Printed,
    #[command(flatten)]
    pub page: Page,
    #[command(flatten)]
    pub store: HistoryArgs,
}

/// `--html FILE`: the result also as a self-contained page.
#[derive(Args, Clone, Default)]
pub struct Page {
    /// Also write the result as a self-contained HTML page to FILE
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}
