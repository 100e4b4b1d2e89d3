//! What happens after a push, whether over git smart HTTP or from the
//! control API: a pull request whose head branch moved gets the new head
//! (and `refs/pull/N/head`), its threads follow their lines or become
//! outdated (from the real `git diff` of old and new head), CI starts for the
//! new head, and the reviewer bots look at the added lines.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::git::{self, GitError, NewCommit};
use crate::scenario::EmulatedForge;
use crate::shared::Shared;
use crate::state::{HeadMoved, PushOutcome};

/// Runs `work` on the blocking pool; a panicked task is a git error.
async fn blocking<T, F>(what: &str, work: F) -> Result<T, GitError>
where
    F: FnOnce() -> Result<T, GitError> + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|join| panicked(what, join))?
}

/// A task that panicked (or was cancelled), as a git error.
fn panicked(what: &str, join: tokio::task::JoinError) -> GitError {
    GitError::Spawn {
        what: what.to_owned(),
        source: std::io::Error::other(join),
    }
}

/// Reads the repository's branches after a successful `git-receive-pack`
/// and applies the push. Returns the pull requests whose head moved. The
/// caller holds `Shared::push_lock`.
pub(crate) async fn after_receive_pack(
    shared: &Arc<Shared>,
    pusher: &str,
) -> Result<Vec<HeadMoved>, GitError> {
    let git_dir = shared.read().repository.git_dir.clone();
    let git_env = shared.git.clone();
    let branches = blocking("for-each-ref", move || git::branches(&git_env, &git_dir)).await?;

    let moved: Vec<HeadMoved> = {
        let mut state = shared.write();
        let heads: Vec<(String, String)> = state
            .pull_requests
            .iter()
            .filter_map(|pr| {
                let sha = branches.get(&pr.head_ref)?;
                (*sha != pr.head_sha).then(|| (pr.head_ref.clone(), sha.clone()))
            })
            .collect();
        heads
            .iter()
            .flat_map(|(branch, sha)| state.move_branch(branch, sha))
            .collect()
    };
    process_moves(shared, &moved, pusher).await?;
    Ok(moved)
}

/// GitHub's effects of moved heads, one pull request at a time.
pub(crate) async fn process_moves(
    shared: &Arc<Shared>,
    moved: &[HeadMoved],
    pusher: &str,
) -> Result<(), GitError> {
    for event in moved {
        tracing::info!(
            pr = event.number,
            old = %event.old_sha,
            new = %event.new_sha,
            "pull request head moved"
        );
        let outcome = apply_push_effects(shared, event, pusher).await?;
        if !outcome.outdated.is_empty() || !outcome.moved.is_empty() {
            tracing::info!(
                pr = event.number,
                outdated = outcome.outdated.len(),
                moved = outcome.moved.len(),
                "threads updated by the push"
            );
        }
    }
    Ok(())
}

/// Updates `refs/pull/N/head` (GitLab: `refs/merge-requests/N/head`), the threads, the PR's diff and commits, then
/// starts CI and wakes the bots.
async fn apply_push_effects(
    shared: &Arc<Shared>,
    event: &HeadMoved,
    pusher: &str,
) -> Result<PushOutcome, GitError> {
    let (git_dir, base_sha, head_ref) = {
        let state = shared.read();
        let Some(pr) = state.pull_request(event.number) else {
            return Ok(PushOutcome::default());
        };
        (
            state.repository.git_dir.clone(),
            pr.base_sha.clone(),
            pr.head_ref.clone(),
        )
    };
    let git_env = shared.git.clone();
    let (number, old, new) = (event.number, event.old_sha.clone(), event.new_sha.clone());
    let forge = shared.scenario.forge;
    let (push_diff, pr_diff, commits) = blocking("diff", move || {
        let pull_ref = git::pull_ref(forge, number);
        git_env.run(&git_dir, &["update-ref", &pull_ref, &new])?;
        let push_diff = git::diff(&git_env, &git_dir, &old, &new)?;
        let pr_diff = git::diff(&git_env, &git_dir, &base_sha, &new)?;
        let commits = git::rev_list(&git_env, &git_dir, &base_sha, &new)?;
        Ok((push_diff, pr_diff, commits))
    })
    .await?;
    let outcome = {
        let mut state = shared.write();
        let outcome = state.apply_push(event.number, &event.new_sha, &push_diff, pr_diff, commits);
        if state.forge == EmulatedForge::GitLab && outcome.new_commits > 0 {
            // GitLab notes every push on the merge request.
            let n = outcome.new_commits;
            let body = format!("added {n} commit{}", if n == 1 { "" } else { "s" });
            // The pull request exists: it was just updated.
            let _ = state.apply_system_note(event.number, pusher, &body);
        }
        outcome
    };
    crate::ci::start_run(shared, &event.new_sha, &head_ref, "pull_request", pusher);
    let added = git::added_lines(&push_diff);
    crate::bots::wake(shared, event.number, &event.new_sha, &added, false);
    Ok(outcome)
}

/// Errors of a push made through the control API.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ActPushError {
    /// The branch does not exist.
    #[error("no branch `{0}`")]
    NoBranch(String),
    /// git failed.
    #[error(transparent)]
    Git(#[from] GitError),
    /// The scratch directory could not be made.
    #[error("cannot create a scratch directory")]
    Scratch(#[source] std::io::Error),
}

/// A commit to make with git plumbing: by `author` on `branch`, changing
/// `changes` (a path to its new contents, `None` to delete it).
pub(crate) struct FileCommit {
    /// The author's login.
    pub(crate) author: String,
    /// The branch the commit goes on (its tip is the parent).
    pub(crate) branch: String,
    /// Each path changed, to its new contents or `None` (deleted).
    pub(crate) changes: BTreeMap<String, Option<Vec<u8>>>,
    /// The commit message.
    pub(crate) message: String,
}

/// `commit`, made with git plumbing, then processed as a push. Returns the
/// new commit's SHA. Like a push over git, it runs to its end on a task of
/// its own: a control client that goes away cannot leave the branch moved
/// and the pull request's head behind.
pub(crate) async fn push_files(
    shared: &Arc<Shared>,
    commit: FileCommit,
) -> Result<String, ActPushError> {
    let shared = Arc::clone(shared);
    tokio::spawn(async move { commit_and_push(&shared, commit).await })
        .await
        .map_err(|join| ActPushError::Git(panicked("push", join)))?
}

/// [`push_files`], in the task that runs it.
async fn commit_and_push(shared: &Arc<Shared>, commit: FileCommit) -> Result<String, ActPushError> {
    let _guard = shared.push_lock.lock().await;
    let (git_dir, epoch) = {
        let state = shared.read();
        (state.repository.git_dir.clone(), state.now_epoch())
    };
    let scratch = tempfile::Builder::new()
        .prefix("act-push-")
        .tempdir_in(&shared.work_dir)
        .map_err(ActPushError::Scratch)?;
    let git_env = shared.git.clone();
    let (branch, author) = (commit.branch.clone(), commit.author.clone());
    let index = scratch.path().join("index");
    let sha = tokio::task::spawn_blocking(move || -> Result<String, ActPushError> {
        let reference = format!("refs/heads/{}", commit.branch);
        let parent = git::resolve_commit(&git_env, &git_dir, &reference)
            .ok_or_else(|| ActPushError::NoBranch(commit.branch.clone()))?;
        let sha = git::commit_files(
            &git_env,
            &git_dir,
            &NewCommit {
                parent: &parent,
                changes: &commit.changes,
                author_login: &commit.author,
                message: &commit.message,
                epoch,
                index: &index,
            },
        )?;
        git_env.run(&git_dir, &["update-ref", &reference, &sha, &parent])?;
        Ok(sha)
    })
    .await
    .map_err(|join| ActPushError::Git(panicked("commit", join)))??;
    let moved = shared.write().move_branch(&branch, &sha);
    process_moves(shared, &moved, &author).await?;
    Ok(sha)
}
