//! What an install puts beside the binary: the manual pages name every
//! command and option `--help` knows, and the completion scripts are made
//! for every shell offered.

use crate::common;

use clap::CommandFactory;
use common::mitbench;
use mitbench::cli::Cli;

/// A page's text with roff's escaped hyphens made plain.
fn text(roff: &[u8]) -> String {
    String::from_utf8_lossy(roff).replace("\\-", "-")
}

/// Each visible command with its page name (`mitbench-history-show`).
fn commands() -> Vec<(String, clap::Command)> {
    fn walk(command: &clap::Command, name: String, out: &mut Vec<(String, clap::Command)>) {
        out.push((name.clone(), command.clone()));
        for sub in command.get_subcommands() {
            if !sub.is_hide_set() && sub.get_name() != "help" {
                walk(sub, format!("{name}-{}", sub.get_name()), out);
            }
        }
    }
    let mut command = Cli::command();
    command.build();
    let mut out = Vec::new();
    walk(&command, "mitbench".to_string(), &mut out);
    out
}

#[test]
fn every_command_has_a_page_naming_each_of_its_options_and_subcommands() {
    let pages = mitbench::commands::pages();
    let commands = commands();
    assert!(
        commands.len() > 10,
        "the walk found {} commands",
        commands.len()
    );
    for (name, command) in &commands {
        let (_, roff) = pages
            .iter()
            .find(|(page, _)| page == name)
            .unwrap_or_else(|| panic!("no page for {name}"));
        let page = text(roff);
        assert!(
            page.starts_with(".ie") || page.contains(".TH"),
            "{name}: not roff"
        );
        for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
            if let Some(long) = arg.get_long() {
                assert!(
                    page.contains(&format!("--{long}")),
                    "{name}.1 lacks --{long}"
                );
            }
        }
        for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
            assert!(
                page.contains(sub.get_name()),
                "{name}.1 lacks {}",
                sub.get_name()
            );
        }
    }
    // The worker is started by mitbench itself and documented nowhere.
    assert!(!pages.iter().any(|(name, _)| name.contains("worker")));
}

#[test]
fn manpages_writes_one_file_per_page_and_refuses_a_missing_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = mitbench(&["manpages", dir.path().to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(written, commands().len());
    assert!(dir.path().join("mitbench-run.1").is_file());

    let missing = dir.path().join("no/such/dir");
    let out = mitbench(&["manpages", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a directory"));
}

#[test]
fn completions_are_made_for_each_shell_and_name_the_commands() {
    for shell in ["bash", "zsh", "fish"] {
        let out = mitbench(&["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8_lossy(&out.stdout);
        for command in ["run", "compare", "attribute", "tax", "completions"] {
            assert!(
                script.contains(command),
                "{shell} completion lacks {command}"
            );
        }
        assert!(
            !script.contains("__worker"),
            "{shell} completes the hidden worker"
        );
    }
    let out = mitbench(&["completions", "tcsh"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
}
