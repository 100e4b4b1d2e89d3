//! Terminal conventions: colour only on a TTY and never with `NO_COLOR`.

use std::io::IsTerminal;

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
    pub(crate) fn stdout() -> Self {
        Style {
            enabled: color_enabled_stdout(),
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
