//! The agent guard of every stage (SPEC section 7): read-only roles change
//! nothing, whatever the provider's CLI allows, and agent-made commits never
//! reach the forge as they are. The state compared is
//! [`GitState`]'s; this module runs the checks
//! around an agent call and records what they found.
//!
//! - [`read_only_call`] (triage, fix-validation, review): the state
//!   of the worktree before and after the call; any change (a commit, a ref,
//!   a file) fails the call closed: the worktree is restored, a
//!   `read-only-violation` event and a progress note say what changed, and
//!   the caller ends the round before anything is pushed.
//! - [`writing_call`] (repair, apply-review: writers in the run's
//!   worktree): commits and ref changes the agent made are taken back, its
//!   files kept for Shepherd to stage and commit (`agent-commits-undone`).
//! - [`check_commits_to_push`] (the push stage): the commits from
//!   the round's start to HEAD must be exactly the round's own commits.

use std::future::Future;
use std::path::PathBuf;
use std::time::Instant;

use shepherd_agent::{AgentContext, UsageLog};

use super::runner::Books;
use super::state::{Changes, Round};
use super::workspace::Workspace;
use crate::error::{EngineError, Result};
use crate::options::ProgressEvent;
use crate::worktree::{
    check_read_only, commits_between, undo_agent_commits, Git, GitState, Violation,
};

/// The state of the worktree at `dir`, off the async threads.
async fn capture_state(git: &Git, dir: PathBuf) -> Result<GitState> {
    let git = git.clone();
    tokio::task::spawn_blocking(move || GitState::capture(&git, &dir))
        .await
        .map_err(|e| EngineError::Task(e.to_string()))?
        .map_err(Into::into)
}

/// One agent call of a read-only role: which role, the provider's name,
/// and the directory it works in.
pub(crate) struct ReadOnly<'a> {
    /// The role (`triage`, `review`): the transcripts' label, the usage's
    /// role, and the guard's word for it.
    pub(crate) role: &'static str,
    pub(crate) provider: &'a str,
    pub(crate) dir: PathBuf,
}

/// Run `call` (given the call's context: transcripts in the round,
/// usage accounted to the role), an agent call of a read-only role, and
/// check that it changed nothing in its directory. `Ok(Err(reason))` when
/// it did (or when the state could not be read): the call failed closed,
/// the worktree was restored, and the round must stop before any push.
pub(crate) async fn read_only_call<T, Fut>(
    books: &mut Books,
    git: &Git,
    round: &Round,
    agent: ReadOnly<'_>,
    call: impl FnOnce(AgentContext) -> Fut,
) -> Result<std::result::Result<T, String>>
where
    Fut: Future<Output = T>,
{
    let ReadOnly {
        role,
        provider,
        dir,
    } = agent;
    let usage = UsageLog::new();
    let ctx = round.agent_ctx(role, &usage);
    let started = Instant::now();
    let guarded = check_unchanged(books, git, round, role, dir, call(ctx)).await;
    books.account_agent(role, provider, started.elapsed(), &usage);
    guarded
}

async fn check_unchanged<T>(
    books: &mut Books,
    git: &Git,
    round: &Round,
    role: &str,
    dir: PathBuf,
    call: impl Future<Output = T>,
) -> Result<std::result::Result<T, String>> {
    let before = match capture_state(git, dir.clone()).await {
        Ok(state) => state,
        Err(err) => {
            return Ok(Err(format!(
                "cannot record the worktree before the {role} call (read-only roles are \
                 checked): {err}"
            )))
        }
    };
    let out = call.await;
    let git = git.clone();
    let d = dir.clone();
    let verdict = tokio::task::spawn_blocking(move || check_read_only(&git, &d, &before))
        .await
        .map_err(|e| EngineError::Task(e.to_string()))?;
    let Some(violation) = verdict else {
        return Ok(Ok(out));
    };
    let reason = violation.describe(role);
    record_violation(books, round, role, &dir.display().to_string(), &violation)?;
    Ok(Err(reason))
}

/// Say that a read-only `role` changed the worktree `place` names (a
/// path, or a fixer's unit): a progress note and a `read-only-violation`
/// event.
pub(crate) fn record_violation(
    books: &mut Books,
    round: &Round,
    role: &str,
    place: &str,
    violation: &Violation,
) -> Result<()> {
    books.emit(ProgressEvent::Note {
        message: violation.describe(role),
    });
    books.event(
        Some(round.n),
        "read-only-violation",
        serde_json::json!({
            "role": role,
            "worktree": place,
            "changes": violation.changes,
            "restored": violation.restored.is_ok(),
            "restore_error": violation.restored.as_ref().err(),
        }),
    )
}

/// Run `call`, an agent call of writing `role` in the run's worktree,
/// then take back any commit or ref change it made (its files stay, for
/// Shepherd to stage and commit).
pub(crate) async fn writing_call<T>(
    books: &mut Books,
    ws: &Workspace,
    round: &Round,
    role: &str,
    call: impl Future<Output = T>,
) -> Result<T> {
    let dir = ws.path().to_path_buf();
    let before = capture_state(&ws.git, dir.clone()).await?;
    let out = call.await;
    let git = ws.git.clone();
    let undone = tokio::task::spawn_blocking(move || undo_agent_commits(&git, &dir, &before))
        .await
        .map_err(|e| EngineError::Task(e.to_string()))??;
    if !undone.is_empty() {
        books.emit(ProgressEvent::Note {
            message: format!(
                "the {role} agent committed or changed refs itself ({}); taken back: \
                 Shepherd commits only the files it stages",
                undone.join("; ")
            ),
        });
        books.event(
            Some(round.n),
            "agent-commits-undone",
            serde_json::json!({ "role": role, "undone": undone }),
        )?;
    }
    Ok(out)
}

/// After the fix stage: a fix-validation call (in a fixer's worktree)
/// that changed its worktree stops the round before anything is pushed.
pub(crate) fn check_fix_validations(
    books: &mut Books,
    round: &Round,
    changes: &Changes,
) -> Result<std::result::Result<(), String>> {
    let violations: Vec<(String, Violation)> = changes
        .fix_validations
        .iter()
        .filter_map(|r| r.read_only_violation.clone().map(|v| (r.unit.clone(), v)))
        .collect();
    let mut reasons = Vec::new();
    for (unit, violation) in &violations {
        record_violation(books, round, "fix-validation", unit, violation)?;
        reasons.push(format!("{unit}: {}", violation.describe("fix-validation")));
    }
    if reasons.is_empty() {
        Ok(Ok(()))
    } else {
        Ok(Err(reasons.join("; ")))
    }
}

/// The push stage's last check: the commits between the round's start
/// and HEAD are exactly those Shepherd made in this round. `Err(reason)`
/// names the strangers (or the missing ones).
pub(crate) async fn check_commits_to_push(
    books: &mut Books,
    ws: &Workspace,
    round: &Round,
    start_sha: &str,
    commits: &[String],
) -> Result<std::result::Result<(), String>> {
    let git = ws.git.clone();
    let start = start_sha.to_owned();
    let listed = ws
        .git(move |wt| {
            let head = wt.head_sha()?;
            commits_between(&git, wt.path(), &start, head.as_str())
        })
        .await?;
    let found: Vec<String> = listed.into_iter().map(|(sha, _)| sha.0).collect();
    let strangers: Vec<&str> = found
        .iter()
        .filter(|c| !commits.contains(c))
        .map(String::as_str)
        .collect();
    let missing: Vec<&str> = commits
        .iter()
        .filter(|c| !found.contains(c))
        .map(String::as_str)
        .collect();
    if strangers.is_empty() && missing.is_empty() {
        return Ok(Ok(()));
    }
    let mut why = Vec::new();
    if !strangers.is_empty() {
        why.push(format!(
            "commit(s) Shepherd did not make in this round: {}",
            strangers.join(", ")
        ));
    }
    if !missing.is_empty() {
        why.push(format!(
            "Shepherd's commit(s) no longer on HEAD: {}",
            missing.join(", ")
        ));
    }
    let reason = format!("refusing to push: {}", why.join("; "));
    books.event(
        Some(round.n),
        "push-refused",
        serde_json::json!({ "strangers": strangers, "missing": missing }),
    )?;
    Ok(Err(reason))
}
