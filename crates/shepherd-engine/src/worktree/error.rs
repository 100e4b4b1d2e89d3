//! Errors of the worktree.

use std::path::PathBuf;

use super::git::GitError;

/// Everything that can go wrong managing a run's worktree.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    /// A git command failed or could not start.
    #[error(transparent)]
    Git(#[from] GitError),
    /// A push failed on the way (a 5xx, a rate limit, the network): nothing
    /// says the remote refused it, so it may be tried again (it is never
    /// forced, and a push that landed is recognized by the remote head).
    #[error("{source} (transient)")]
    PushInterrupted {
        /// Git's failure, redacted.
        #[source]
        source: GitError,
        /// The `Retry-After` the remote asked for, if any.
        retry_after: Option<std::time::Duration>,
    },
    /// A branch name git would not accept (or that could be read as an option).
    #[error("invalid branch name {name:?}")]
    InvalidBranch {
        /// The name.
        name: String,
    },
    /// A remote name or URL that could be read as an option.
    #[error("invalid remote {remote:?}")]
    InvalidRemote {
        /// The remote, redacted.
        remote: String,
    },
    /// A revision that could be read as an option.
    #[error("invalid revision {rev:?}")]
    InvalidRevision {
        /// The revision.
        rev: String,
    },
    /// A path to commit that is not a plain repository-relative path.
    #[error("refusing to commit {path:?}: {reason}")]
    InvalidPath {
        /// The path.
        path: String,
        /// Why (`absolute`, `leaves the repository`, ...).
        reason: &'static str,
    },
    /// A path to commit matches a protected glob.
    #[error("refusing to commit protected path {path} (matches {pattern})")]
    ProtectedPath {
        /// The path.
        path: String,
        /// The glob it matches.
        pattern: String,
    },
    /// The named files hold no change.
    #[error("nothing to commit: the files hold no change")]
    NothingToCommit,
    /// The commit message is empty.
    #[error("refusing to commit with an empty message")]
    EmptyMessage,
    /// A protected-path glob does not compile (configuration validation
    /// refuses it first; this is for patterns given otherwise).
    #[error("protected paths: {0}")]
    Glob(#[from] shepherd_core::glob::GlobError),
    /// A directory that should be a worktree of the repository is not.
    #[error("{path} is not a git worktree of the run's repository")]
    NotAWorktree {
        /// The directory.
        path: PathBuf,
    },
    /// A scratch worktree (or a file beside it) could not be prepared or removed.
    #[error("cannot prepare scratch path {path}")]
    Scratch {
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A path could not be made absolute.
    #[error("cannot resolve path {path}")]
    Path {
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}
