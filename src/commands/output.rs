//! How a command ends and what it writes: its exit status, its result on
//! stdout (made safe for the terminal), its errors on stderr, and the
//! pages it writes atomically beside the result.

use crate::export::destination::Destination;
use crate::export::{self, ExportError, Exporter, TableExporter};
use std::io::IsTerminal;
use std::io::Write;
use std::path::Path;

/// The process's exit status. 0 success, 1 when the machine cannot run
/// mitbench or output cannot be written, 2 on bad input (before anything
/// runs, or runs that cannot be compared), 3 when `compare --fail-above`
/// finds a row slower than it allows, 124 when `tax --timeout` stopped the
/// workload, 130 when Ctrl-C ended a run or a `tax` workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit(pub u8);

impl Exit {
    pub const SUCCESS: Exit = Exit(0);
    pub const FAILURE: Exit = Exit(1);
    pub const USAGE: Exit = Exit(2);
    pub const ABOVE_LIMIT: Exit = Exit(3);
    pub const TIMED_OUT: Exit = Exit(124);
    pub const INTERRUPTED: Exit = Exit(130);

    pub fn is_success(self) -> bool {
        self == Exit::SUCCESS
    }
}

/// Says `error: message` on stderr and returns `code`.
pub fn fail(code: Exit, message: impl std::fmt::Display) -> Exit {
    say!("error: {message}");
    code
}

/// Writes `text` to stdout. A reader that closed the pipe early (`| head`)
/// wanted no more: that ends the command quietly with status 0, as a
/// finished listing would; any other write error is reported.
pub fn print_out(text: &str) -> Exit {
    // Whatever of the machine's text a rendering let through is shown, not
    // obeyed by the terminal.
    let text = export::terminal::terminal_safe(text, true);
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => Exit::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Exit::SUCCESS,
        Err(e) => fail(Exit::FAILURE, format!("writing to stdout failed: {e}")),
    }
}

pub fn print_json(value: &impl serde::Serialize) -> Exit {
    match serde_json::to_string_pretty(value) {
        Ok(text) => print_out(&(text + "\n")),
        Err(e) => fail(Exit::FAILURE, format!("serialising JSON failed: {e}")),
    }
}

/// A run's table on stdout, made safe for the terminal (a stored run may
/// hold control characters in its names); the answer last on a terminal,
/// first on a pipe or in a file.
pub fn print_table(run: &export::RunView, wide: bool) -> Result<(), Exit> {
    let width = (!wide).then(export::text_table::terminal_width);
    let answer = match std::io::stdout().is_terminal() {
        true => export::run::AnswerAt::Last,
        false => export::run::AnswerAt::First,
    };
    let table = TableExporter { width, answer }
        .render(run)
        .map_err(|e| fail(Exit::FAILURE, format!("rendering the table failed: {e}")))?;
    let table = String::from_utf8_lossy(&table);
    let _ = std::io::stdout().write_all(export::terminal::terminal_safe(&table, true).as_bytes());
    Ok(())
}

/// The file an `--html FILE` page goes to and the temporary file beside it
/// it is written through; found unwritable before any work is done.
pub type PageTarget<'a> = Option<(&'a Path, Destination)>;

pub fn page_target(path: Option<&Path>) -> Result<PageTarget<'_>, String> {
    path.map(|path| Ok((path, Destination::of(path, "html")?)))
        .transpose()
}

/// Writes a rendered page (`what` names it in the message) into place.
pub fn write_page(
    (path, target): (&Path, Destination),
    page: Result<Vec<u8>, ExportError>,
    what: &str,
) -> Result<(), Exit> {
    match page.and_then(|page| target.write(&page, path)) {
        Ok(()) => {
            say!("{what} written to {}", path.display());
            Ok(())
        }
        Err(e) => Err(fail(
            Exit::FAILURE,
            format!("writing {} failed: {e}", path.display()),
        )),
    }
}

/// Prints a result as JSON or as the text `text` renders in the table
/// style asked for, at the terminal's width.
pub fn print_shown<T: serde::Serialize>(
    value: &T,
    printed: crate::cli::Printed,
    text: impl FnOnce(export::text_table::Style, usize) -> String,
) -> Exit {
    if printed.json {
        print_json(value)
    } else {
        print_out(&text(printed.style(), export::text_table::terminal_width()))
    }
}

/// [`print_shown`], then writes its `--html` page where one was asked for
/// (also when stdout failed: the page is a file of its own). The exit is
/// the page's failure, else the print's.
pub fn show<T: serde::Serialize>(
    value: &T,
    printed: crate::cli::Printed,
    text: impl FnOnce(export::text_table::Style, usize) -> String,
    target: PageTarget,
    page: impl FnOnce() -> Result<Vec<u8>, ExportError>,
    what: &str,
) -> Exit {
    let shown = print_shown(value, printed, text);
    if let Some(target) = target
        && let Err(code) = write_page(target, page(), what)
    {
        return code;
    }
    shown
}
