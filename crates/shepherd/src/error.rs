//! The one error type of the CLI edge: a message, hints, and the exit code it maps to.

use std::fmt;

use crate::exit_codes;

/// What kind of failure a [`CliError`] is; decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad usage or input: exit 2.
    Usage,
    /// Anything else that failed: exit 1.
    Failure,
}

/// An error reported to the user once, at the CLI edge.
#[derive(Debug)]
pub struct CliError {
    kind: ErrorKind,
    error: anyhow::Error,
    hints: Vec<String>,
}

impl CliError {
    /// A usage error (exit 2).
    pub fn usage(error: impl Into<anyhow::Error>) -> Self {
        CliError {
            kind: ErrorKind::Usage,
            error: error.into(),
            hints: Vec::new(),
        }
    }

    /// A failure (exit 1).
    pub fn failure(error: impl Into<anyhow::Error>) -> Self {
        CliError {
            kind: ErrorKind::Failure,
            error: error.into(),
            hints: Vec::new(),
        }
    }

    /// Add a hint printed after the error.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    /// The exit code this error maps to.
    pub fn exit_code(&self) -> u8 {
        match self.kind {
            ErrorKind::Usage => exit_codes::USAGE,
            ErrorKind::Failure => exit_codes::FAILURE,
        }
    }

    /// The kind of error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// Whether the forge could not be reached (network or TLS): then the
    /// endpoint that was tried is worth naming.
    pub fn is_unreachable_forge(&self) -> bool {
        self.error.chain().any(|cause| {
            matches!(
                cause.downcast_ref::<shepherd_forge::ForgeError>(),
                Some(
                    shepherd_forge::ForgeError::Network { .. }
                        | shepherd_forge::ForgeError::Certificate { .. }
                )
            )
        })
    }

    /// Add `hint` when the forge could not be reached.
    pub fn with_unreachable_hint(self, hint: impl FnOnce() -> String) -> Self {
        if self.is_unreachable_forge() {
            self.with_hint(hint())
        } else {
            self
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error: {}", self.error)?;
        for cause in self.error.chain().skip(1) {
            write!(f, "\n  caused by: {cause}")?;
        }
        for hint in &self.hints {
            write!(f, "\nhint: {hint}")?;
        }
        Ok(())
    }
}

impl From<anyhow::Error> for CliError {
    fn from(error: anyhow::Error) -> Self {
        CliError::failure(error)
    }
}

/// The result of a command.
pub type CliResult<T = u8> = Result<T, CliError>;
