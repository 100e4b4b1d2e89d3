//! What a CLI module gets and gives for one call: the [`Request`], the
//! [`Invocation`] it builds, the [`Parsed`] output and the [`CliFailure`] it
//! reports. Shared by `cli` (which runs the call) and each CLI's module
//! (which builds and reads it).

use std::path::{Path, PathBuf};

use crate::task::Role;

/// An endpoint a CLI calls that its own configuration names (not a
/// variable Shepherd reads): said in an error about a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConfiguredEndpoint {
    /// Its base URL.
    pub url: String,
    /// Where it is configured (`model provider `x` of /home/u/.codex/config.toml`).
    pub source: String,
    /// The variable its key is read from, when the configuration names one.
    pub key_variable: Option<String>,
}

/// A CLI's own account of a failed call: the HTTP status it got, if any,
/// and its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CliFailure {
    pub status: Option<u16>,
    pub message: String,
}

impl CliFailure {
    /// A failure with `message` (a CLI's own error), and the HTTP status the
    /// message names, else the first one its stdout or stderr names.
    pub(crate) fn from_message(message: String, stdout: &str, stderr: &str) -> Self {
        let status = crate::providers::extract::http_status(&message)
            .or_else(|| crate::providers::extract::http_status(stdout))
            .or_else(|| crate::providers::extract::http_status(stderr));
        CliFailure { status, message }
    }
}

/// One call of one CLI, as its module sees it.
pub(crate) struct Request<'a> {
    /// The role asked: decides read-only or writing tools.
    pub role: Role,
    /// Where it runs.
    pub worktree: &'a Path,
    /// The full prompt (with the retry section on the retry).
    pub prompt: &'a str,
    /// The answer's JSON Schema.
    pub schema: &'a serde_json::Value,
    /// The model, if configured.
    pub model: Option<&'a str>,
    /// Extra arguments from the configuration.
    pub extra_args: &'a [String],
}

/// How one call is run: the arguments, stdin, and scratch files that live
/// as long as the call.
pub(crate) struct Invocation {
    pub args: Vec<String>,
    pub stdin: Vec<u8>,
    /// Holds the scratch files; removed when dropped.
    pub scratch: Option<tempfile::TempDir>,
    /// A file the CLI writes its answer (or its usage) to, read after it exits.
    pub answer_file: Option<PathBuf>,
    /// Variables set for this call (Shepherd's own settings for the CLI;
    /// token-like names are dropped like any fixed value).
    pub env: Vec<(String, String)>,
}

impl Invocation {
    pub(crate) fn new(args: Vec<String>, stdin: Vec<u8>) -> Self {
        Invocation {
            args,
            stdin,
            scratch: None,
            answer_file: None,
            env: Vec::new(),
        }
    }
}

/// What a CLI's output says: the answer's text and the usage it reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Parsed {
    pub text: String,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cost_usd: Option<f64>,
}

/// The sum of the numbers among `values`; `None` when there are none.
pub(crate) fn sum_u64<'a>(
    values: impl IntoIterator<Item = Option<&'a serde_json::Value>>,
) -> Option<u64> {
    values
        .into_iter()
        .flatten()
        .filter_map(serde_json::Value::as_u64)
        .fold(None, |acc, n| Some(acc.unwrap_or(0) + n))
}
