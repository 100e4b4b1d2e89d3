//! Shepherd's engine: the state store and the per-run git worktree.
//!
//! - [`store`]: runs, rounds, events, approvals, the append-only ledger and
//!   the per-PR lock, in one SQLite database per user.
//! - [`worktree`]: an isolated, detached git worktree per run, driven through
//!   the real `git` binary with a sealed environment; commits that stage only
//!   named files and refuse protected paths; pushes that are never forced.
#![warn(missing_docs)]

pub mod store;
pub mod worktree;

pub use store::{
    Approval, ApprovalState, Event, LedgerRecord, LockInfo, LockOutcome, PrKey, Round, Run,
    RunStatus, StateDir, Store, StoreError, Timestamp,
};
pub use worktree::{
    CommitSha, Git, GitError, HttpCredentials, ProtectedPaths, PushOutcome, SyncOutcome, Worktree,
    WorktreeError,
};
