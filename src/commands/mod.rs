//! What each command does, behind the command line of [`crate::cli`]:
//! `main` parses and calls [`dispatch`], which runs one command and says
//! how the process should end. The logic a command adds to the library
//! (which run prices tax's tolls, which outputs an interrupted run keeps,
//! when `--fail-above` fails) is in small functions unit-tested here.

/// A message on stderr that never ends the process: when the reader of
/// stderr has gone (a closed pipe) the message is dropped, where
/// `eprintln!` would panic.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod compare;
mod install;
mod machine;
mod output;
mod run;
mod stored_runs;
mod tax;

use crate::cli::{Cli, Command, HistoryCommand};
use crate::export::Format;

pub use install::pages;
pub use output::Exit;
pub use run::serve_worker;

/// Runs the command `cli` names (the default suite when it names none).
pub fn dispatch(cli: Cli) -> Exit {
    match cli.command {
        None => run::run(cli.run),
        Some(Command::Run(args)) => run::run(args),
        Some(Command::List { json }) => machine::list(json),
        Some(Command::Inventory { json, root }) => machine::inventory(json, &root),
        Some(Command::Workload { kind, count }) => machine::workload(kind, count),
        Some(Command::Plan {
            json,
            runs,
            root,
            store,
        }) => machine::plan(json, runs, &root, &store),
        Some(Command::History { show, json, store }) => match show {
            None => stored_runs::history_list(&store, json),
            Some(HistoryCommand::Show { run, wide }) => {
                stored_runs::history_show(&store, &run, wide)
            }
            Some(HistoryCommand::Changes {
                histories,
                threshold,
                printed,
            }) => stored_runs::history_changes(&store, &histories, threshold, printed),
        },
        Some(Command::Report {
            run,
            output,
            stored,
        }) => stored_runs::export_run(&stored, &run, Format::Html, &output),
        Some(Command::Export {
            format,
            run,
            output,
            stored,
        }) => stored_runs::export_run(&stored, &run, format, &output),
        Some(Command::Tax {
            printed,
            page,
            check,
            no_correction,
            timeout,
            pid,
            for_duration,
            pairs,
            rules,
            store,
            command,
        }) => {
            let target = match (pid, for_duration) {
                (Some(pid), Some(duration)) => crate::tax::Watched::Running { pid, duration },
                _ => crate::tax::Watched::Command { command, timeout },
            };
            let check = check.then_some((usize::from(pairs), usize::from(rules)));
            tax::tax(&store, &target, printed, page, check, !no_correction)
        }
        Some(Command::Fleet {
            runs,
            threshold,
            printed,
            store,
        }) => compare::fleet(&store, &runs, threshold, printed),
        Some(Command::Compare {
            old,
            new,
            fail_above,
            all,
            explain,
            judged,
        }) => {
            let view = crate::export::compare::text::View { all, explain };
            compare::compare_runs([&old, &new], fail_above, view, judged)
        }
        Some(Command::Attribute {
            sets,
            counts,
            judged,
        }) => compare::attribute(&sets, &counts, judged),
        Some(Command::Completions { shell }) => install::completions(shell),
        Some(Command::Manpages { dir }) => install::manpages(&dir),
    }
}
