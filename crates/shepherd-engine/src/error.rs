//! Errors of running a run.

use std::path::PathBuf;

use crate::store::StoreError;
use crate::worktree::WorktreeError;

/// Why the engine could not start, resume or continue a run.
///
/// A run that fails *as a run* (a refused fork, a failing verify command, a
/// gate violation) is not an error: it ends with status `failed` and a
/// reason. These errors are what stops the engine itself.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The state store failed (this includes another run holding the PR's lock).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The worktree could not be created, synced or written.
    #[error(transparent)]
    Worktree(#[from] WorktreeError),
    /// The configuration is invalid.
    #[error("invalid configuration: {0}")]
    Config(#[from] shepherd_core::config::ConfigError),
    /// A run artifact could not be read or written.
    #[error("cannot {action} {path}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A run artifact could not be encoded or decoded.
    #[error("cannot {action} {path}")]
    Json {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// The configured agent provider cannot be used by this build.
    #[error(
        "agent provider `{provider}` is not supported by this build; use `builtin` or `command`"
    )]
    UnsupportedAgent {
        /// The provider's name.
        provider: String,
    },
    /// The run cannot be resumed.
    #[error("run {run} cannot be resumed: {reason}")]
    NotResumable {
        /// The run id.
        run: String,
        /// Why.
        reason: String,
    },
    /// A run of the same PR is paused: starting another would drop its
    /// decisions and any reply an approver wrote.
    #[error(
        "run {run} of {pr} is paused; continue it with `shepherd approve {run}` or \
         `shepherd resume {run}`, or abandon it with `shepherd reject {run}` before starting \
         another"
    )]
    PausedRunExists {
        /// The paused run.
        run: String,
        /// The PR.
        pr: String,
    },
    /// Approve or reject found nothing awaiting approval.
    #[error("run {run} has nothing awaiting approval")]
    NothingToApprove {
        /// The run id.
        run: String,
    },
    /// An approval names an item the paused round did not triage.
    #[error("item {item} is not part of round {round}'s triage of run {run}")]
    UnknownItem {
        /// The run id.
        run: String,
        /// The round.
        round: u32,
        /// The item named.
        item: String,
    },
    /// An approval changed an item's decision without a reply that fits
    /// the new decision.
    #[error(
        "item {item} was triaged {triaged} and is changed to {decision}: a changed decision needs \
         its own reply (add --reply TEXT after --decision); the drafted reply was written for \
         {triaged}"
    )]
    ReplyNeeded {
        /// The item.
        item: String,
        /// Triage's decision.
        triaged: String,
        /// The approver's decision.
        decision: String,
    },
    /// A background task panicked or was cancelled.
    #[error("internal task failed: {0}")]
    Task(String),
}

impl EngineError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        EngineError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

/// Results of the engine.
pub type Result<T, E = EngineError> = std::result::Result<T, E>;
