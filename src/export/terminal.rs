//! Text from the machine (a command line, a hostname, a vulnerability
//! line) is printed to a terminal that would obey the escape sequences in
//! it. Control characters are shown as escapes instead; the JSON and the
//! other files keep the text exact.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` with every control character (C0, DEL, C1) written as `\n`,
/// `\t` or `\xNN`/`\u{NN}`; line feeds kept where `keep_newlines` holds
/// (whole rendered pages, whose lines are mitbench's own).
pub fn terminal_safe(text: &str, keep_newlines: bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && !(keep_newlines && c == '\n');
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if !unsafe_char(c) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    Cow::Owned(out)
}

/// Text from the machine wrapped to `width` onto `out` after `first`, its
/// continuations indented by `indent`, made safe for the terminal.
pub fn say(out: &mut String, first: &str, text: &str, indent: usize, width: usize) {
    super::text_table::write_wrapped(out, first, &terminal_safe(text, false), indent, width)
}

/// Text of lines kept to a width: machine text made terminal-safe and
/// wrapped ([`Prose::say`]), other lines written as they are (`writeln!`).
pub struct Prose {
    pub text: String,
    width: usize,
}

impl Prose {
    pub fn new(width: usize) -> Prose {
        Prose {
            text: String::new(),
            width,
        }
    }

    /// `text` after `first`, its continuations indented by `indent`.
    pub fn say(&mut self, first: &str, text: &str, indent: usize) {
        say(&mut self.text, first, text, indent, self.width)
    }

    /// A page's first line: its `title` and the machine it is of.
    pub fn heading(&mut self, title: &str, machine: &str) {
        self.say(title, &format!("({machine})"), 2)
    }
}

impl std::fmt::Write for Prose {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.text.push_str(s);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_and_line_breaks_are_shown_not_obeyed() {
        assert_eq!(terminal_safe("plain text", false), "plain text");
        assert_eq!(
            terminal_safe("a\x1b[2Jb\nc\td\u{9b}e\x7f", false),
            "a\\x1b[2Jb\\nc\\td\\x9be\\x7f"
        );
        assert_eq!(terminal_safe("one\ntwo\x07", true), "one\ntwo\\x07");
    }
}
