//! A run's isolated git worktree (SPEC section 3, steps 2, 7 and 12).
//!
//! [`Worktree`] is a linked worktree of the user's checkout (or a cache
//! clone), detached at the PR head and re-synced to the live remote head each
//! round. Shepherd commits there ([`Worktree::commit_files`] stages only the
//! files named and refuses [`ProtectedPaths`]) and pushes without force.
//! Every git process comes from one factory, [`Git`]: sealed environment,
//! credentials in per-command environment only, redacted logs and errors.
//! Parallel fixers and review reproductions get [`ScratchWorktree`]s:
//! temporary linked worktrees whose diffs are applied back in order
//! ([`apply_patch`]). Git locks a killed process left behind are removed
//! by [`clear_stale_git_locks`] once nothing can be holding them.

mod error;
mod git;
mod guard;
mod imp;
mod locks;
mod protected;
mod scratch;

#[cfg(test)]
mod tests;

pub use error::WorktreeError;
pub use git::{Git, GitError, HttpCredentials};
pub use guard::{check_read_only, restore, undo_agent_commits, GitState, Violation};
pub use imp::{CommitSha, PushOutcome, SyncOutcome, Worktree};
pub use locks::{clear_stale_git_locks, LockSweep};
pub use protected::{ProtectedPaths, DEFAULT_PROTECTED};
pub use scratch::{
    apply_patch, commits_between, committer_email, diff_between, reset_hard, trailer_commits,
    ApplyOutcome, ScratchWorktree, TrailerCommit,
};
