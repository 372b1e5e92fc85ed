//! What an install puts beside the binary, made from the command line's
//! own definitions so they cannot drift from `--help`: shell completions
//! and manual pages.

use super::Exit;
use crate::cli::Cli;
use clap::CommandFactory;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Prints the completion script for `shell` on stdout.
pub fn completions(shell: clap_complete::Shell) -> Exit {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "mitbench", &mut script);
    match std::io::stdout().write_all(&script) {
        Ok(()) => Exit::SUCCESS,
        // A closed pipe (`| head`) is not worth a message.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Exit::SUCCESS,
        Err(e) => {
            say!("error: writing the completion script: {e}");
            Exit::FAILURE
        }
    }
}

/// Writes mitbench.1 and a page per command into `dir`.
pub fn manpages(dir: &Path) -> Exit {
    if !dir.is_dir() {
        say!(
            "error: {} is not a directory; make it first (e.g. `mkdir -p {}`)",
            dir.display(),
            dir.display()
        );
        return Exit::USAGE;
    }
    match write_pages(dir) {
        Ok(written) => {
            for path in written {
                println!("{}", path.display());
            }
            Exit::SUCCESS
        }
        Err(e) => {
            say!("error: {e}");
            Exit::FAILURE
        }
    }
}

/// Every page: the command's name (`mitbench`, `mitbench-run`,
/// `mitbench-history-show`) and its roff text. Hidden commands (the
/// worker) get none.
pub fn pages() -> Vec<(String, Vec<u8>)> {
    let mut command = Cli::command();
    // Subcommands' pages are named and titled after their whole path.
    command.build();
    let mut pages = Vec::new();
    collect(&command, "mitbench", &mut pages);
    pages
}

fn collect(command: &clap::Command, name: &str, pages: &mut Vec<(String, Vec<u8>)>) {
    let mut roff = Vec::new();
    let page = command.clone().name(name.to_string());
    // Rendering into a Vec cannot fail.
    clap_mangen::Man::new(page)
        .render(&mut roff)
        .expect("render into memory");
    pages.push((name.to_string(), roff));
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        if sub.get_name() == "help" {
            continue;
        }
        collect(sub, &format!("{name}-{}", sub.get_name()), pages);
    }
}

fn write_pages(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut written = Vec::new();
    for (name, roff) in pages() {
        let path = dir.join(format!("{name}.1"));
        std::fs::write(&path, roff).map_err(|e| format!("writing {}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}
