//! What the worktree stage sets up for the stages after it: the run's
//! worktree, synced to the PR's live head, and the agents that work there.
//!
//! Only the worktree stage makes a [`Workspace`]; a stage that reads the
//! worktree, runs git or calls an agent takes one, so it cannot run before
//! the worktree exists and the agents are set up.

use std::path::Path;
use std::sync::Arc;

use crate::error::{EngineError, Result};
use crate::options::{Agents, CheckAgents};
use crate::worktree::{Git, Worktree, WorktreeError};

/// The run's worktree and its agents, as the worktree stage left them.
#[derive(Clone)]
pub(crate) struct Workspace {
    wt: Arc<Worktree>,
    /// Triage, fix and cluster-fix.
    pub(crate) agents: Agents,
    /// Fix-validation, review and apply-review.
    pub(crate) checks: CheckAgents,
    /// The git binary the run drives, with its identity and credentials.
    pub(crate) git: Git,
}

impl Workspace {
    /// The worktree stage's product.
    pub(super) fn new(wt: Arc<Worktree>, agents: Agents, checks: CheckAgents, git: Git) -> Self {
        Workspace {
            wt,
            agents,
            checks,
            git,
        }
    }

    /// The worktree's directory (where the agents work).
    pub(crate) fn path(&self) -> &Path {
        self.wt.path()
    }

    /// The bare cache clone the worktree is linked to.
    pub(crate) fn repo_dir(&self) -> &Path {
        self.wt.repo_dir()
    }

    /// Run a blocking git operation on the worktree, off the async threads.
    pub(crate) async fn git<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Worktree) -> std::result::Result<T, WorktreeError> + Send + 'static,
    {
        git_in(&self.wt, f).await
    }
}

/// Run a blocking git operation on `wt`, off the async threads: what the
/// worktree stage does before its [`Workspace`] is made.
pub(super) async fn git_in<T, F>(wt: &Arc<Worktree>, f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(&Worktree) -> std::result::Result<T, WorktreeError> + Send + 'static,
{
    let wt = Arc::clone(wt);
    tokio::task::spawn_blocking(move || f(&wt))
        .await
        .map_err(|e| EngineError::Task(e.to_string()))?
        .map_err(Into::into)
}
