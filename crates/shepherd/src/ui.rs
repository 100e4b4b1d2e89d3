//! Terminal conventions: colour only on a TTY and never with `NO_COLOR`.

use std::io::{IsTerminal, Write};

/// `println!` that treats a closed stdout as a normal end: `shepherd status |
/// head -1` exits 0 quietly once `head` has read its line (as ripgrep does),
/// instead of panicking with a backtrace.
macro_rules! outln {
    () => {
        $crate::ui::write_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::ui::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}
pub(crate) use outln;

/// Write to stdout. A broken pipe ends the process with exit code 0 (the
/// reader has what it wanted); any other write error ends it with 1, said on
/// stderr.
pub(crate) fn write_stdout(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(err) = out.write_fmt(args).and_then(|()| out.flush()) {
        if err.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(i32::from(crate::exit_codes::SUCCESS));
        }
        let _ = writeln!(std::io::stderr(), "cannot write to stdout: {err}");
        std::process::exit(i32::from(crate::exit_codes::FAILURE));
    }
}

/// Whether `NO_COLOR` asks for no colour (any non-empty value, per no-color.org).
fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Whether to colour what goes to stdout.
pub(crate) fn color_enabled_stdout() -> bool {
    !no_color() && std::io::stdout().is_terminal()
}

/// Whether to colour what goes to stderr.
pub(crate) fn color_enabled_stderr() -> bool {
    !no_color() && std::io::stderr().is_terminal()
}

/// A tiny styling helper: wraps text in an ANSI style when colour is on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Style {
    enabled: bool,
}

impl Style {
    /// No colour, whatever the terminal.
    #[cfg(test)]
    pub(crate) fn plain() -> Self {
        Style { enabled: false }
    }

    pub(crate) fn stdout() -> Self {
        Style {
            enabled: color_enabled_stdout(),
        }
    }

    pub(crate) fn stderr() -> Self {
        Style {
            enabled: color_enabled_stderr(),
        }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.enabled {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    pub(crate) fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }

    pub(crate) fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }

    pub(crate) fn green(self, text: &str) -> String {
        self.paint("32", text)
    }

    pub(crate) fn yellow(self, text: &str) -> String {
        self.paint("33", text)
    }

    pub(crate) fn cyan(self, text: &str) -> String {
        self.paint("36", text)
    }
}

/// `word` as one POSIX shell word: unchanged when it has nothing a shell
/// reads specially, else in single quotes.
pub(crate) fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-:=+,@%".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod shell_word_tests {
    use super::shell_word;

    #[test]
    fn a_word_with_shell_characters_is_quoted() {
        assert_eq!(shell_word("/tmp/state/demo"), "/tmp/state/demo");
        assert_eq!(shell_word("/tmp/my state"), "'/tmp/my state'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word("$HOME"), "'$HOME'");
        assert_eq!(shell_word(""), "''");
    }
}
