//! mitbench's front door: parse the command line, run the command, exit
//! with its status. The commands are in the library (`mitbench::commands`),
//! where tests reach them; exit statuses are listed on `commands::Exit`.

use clap::Parser;
use mitbench::cli::Cli;
use mitbench::measure::schedule::forks::WORKER_COMMAND;
use std::process::ExitCode;

fn main() -> ExitCode {
    // A fork of a run is mitbench started again as `mitbench __worker`. No
    // user types it, so it is not among the command line's definitions,
    // and --help, the man pages and the completions cannot show it.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|arg| arg == WORKER_COMMAND)
    {
        return ExitCode::from(mitbench::commands::serve_worker().0);
    }
    let cli = Cli::parse();
    ExitCode::from(mitbench::commands::dispatch(cli).0)
}
