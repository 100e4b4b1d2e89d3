//! Shepherd's engine: the converge loop, its state store and the per-run
//! git worktree.
//!
//! - [`run`]: [`Engine::start`] and [`Engine::resume`] drive a run of rounds
//!   (SPEC section 3) to convergence, a pause, a failure or the round limit.
//! - `round`: the round's named stages, one module each, each writing its
//!   artifact into the run directory.
//! - [`store`]: runs, rounds, events, approvals, the append-only ledger and
//!   the per-PR lock, in one SQLite database per user.
//! - [`worktree`]: an isolated, detached git worktree per run, driven through
//!   the real `git` binary with a sealed environment; commits that stage only
//!   named files and refuse protected paths; pushes that are never forced.
#![warn(missing_docs)]

// Read from the bottom up: `error`, `options`, `run_dir` and `config` are
// shared by `round` (the stages) and `run` (the driver); `run` uses `round`.
mod config;
mod error;
mod options;
mod round;
pub mod run;
mod run_dir;
pub mod store;
pub mod worktree;

pub use round::approval::{changed_decision_needs_reply, drafted_reply};
pub use round::reviewers::{reviewer_wait, ReviewerWait};
pub use run::{
    approval_request, approve_run, effective_status, load_run_file, reject_run, run_report, Agents,
    ApprovalChange, ApprovalItem, ApprovalRequest, ApprovalVerdict, Approver, ConfigRecord, Engine,
    EngineError, EngineOptions, NoProgress, PauseKind, Progress, ProgressEvent, RepoConfigSource,
    RepoFile, RunDir, RunFile, RunOutcome, RunSpec, Stage,
};
pub use store::{
    Approval, ApprovalState, Event, LedgerRecord, LockInfo, LockOutcome, PrKey, Round, Run,
    RunStatus, StateDir, Store, StoreError, Timestamp,
};
pub use worktree::{
    CommitSha, Git, GitError, HttpCredentials, ProtectedPaths, PushOutcome, SyncOutcome, Worktree,
    WorktreeError,
};
