//! mitbench's front door: parse the command line, run the command, exit
//! with its status. The commands are in the library (`mitbench::commands`),
//! where tests reach them; exit statuses are listed on `commands::Exit`.

use clap::Parser;
use mitbench::cli::Cli;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    ExitCode::from(mitbench::commands::dispatch(cli).0)
}
