//! The command line: parse, dispatch, exit codes. Exit 0 on success, 1 when
//! the machine cannot run mitbench or output cannot be written, 2 on bad
//! input (before anything runs), 130 when Ctrl-C ended a run.

use clap::{Args, Parser, Subcommand};
use mitbench::export::{self, Exporter, JsonExporter, TableExporter};
use mitbench::harness::affinity;
use mitbench::inventory::Inventory;
use mitbench::probes::{self, Placement};
use mitbench::run::{self, PlanError, RunOptions};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        None => run(cli.run),
        Some(Command::Run(args)) => run(args),
        Some(Command::List { json }) => list(json),
        Some(Command::Inventory { json, root }) => inventory(json, root),
    }
}

fn fail(code: u8, message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(code)
}

fn run(args: RunArgs) -> ExitCode {
    let options = RunOptions {
        quick: args.quick,
        patterns: args.probes,
        json: args.json,
        cpu: args.cpu,
        target_ci: args.target_ci,
        budget: args.budget,
        quiet: args.quiet,
        seed: args.seed,
        round_log: args.round_log,
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
    match TableExporter.render(&doc) {
        Ok(table) => {
            let _ = std::io::stdout().write_all(&table);
        }
        Err(e) => return fail(1, format!("rendering the table failed: {e}")),
    }
    if let Some((path, temp)) = plan.json.take() {
        if let Err(e) = export::write_atomically(&JsonExporter, &doc, temp, &path) {
            return fail(1, format!("writing {} failed: {e}", path.display()));
        }
        eprintln!("results written to {}", path.display());
    }
    if doc.interrupted {
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
    print!("{}", export::render_listing(&listing));
    ExitCode::SUCCESS
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
    print!("{}", inventory.render());
    ExitCode::SUCCESS
}

fn print_json(value: &impl serde::Serialize) -> ExitCode {
    match serde_json::to_string_pretty(value) {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => fail(1, format!("serialising JSON failed: {e}")),
    }
}
