//! Stage 12, push: the detached HEAD to the PR's head branch, never forced.
//! A rejected push (someone pushed meanwhile) re-syncs and re-runs the round;
//! it never overwrites. A push whose answer was lost is checked against the
//! remote head before anything else happens, so a push that landed is never
//! repeated. A push interrupted on the way (a 5xx, a rate limit, the network)
//! is sent again, at most 4 times in all, with backoff or after the
//! remote's `Retry-After`. Before anything is sent, the commits from the
//! round's start to HEAD must be exactly the round's own (`push.json`).

use std::time::Duration;

use serde::Serialize;

use super::guard;
use super::pr_state::short;
use super::runner::Books;
use super::state::{Gated, Round, RoundEnd, Step, Synced};
use super::workspace::Workspace;
use crate::error::{EngineError, Result};
use crate::options::{ProgressEvent, Stage};
use crate::store::{LedgerRecord, Timestamp};
use crate::worktree::{PushOutcome, WorktreeError};

#[derive(Serialize)]
struct PushArtifact<'a> {
    pushed: bool,
    head_ref: &'a str,
    from: &'a str,
    sha: Option<String>,
    commits: &'a [String],
    outcome: String,
    /// The retries of a push interrupted on the way (a 5xx, a rate limit,
    /// the network), one note each.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    retries: &'a [String],
}

/// How many times a push is sent when it fails on the way, the first included.
const PUSH_ATTEMPTS: u32 = 4;
/// The wait before the second attempt; it doubles for each later one.
const PUSH_BACKOFF: Duration = Duration::from_millis(500);
/// The longest computed wait between two attempts.
const PUSH_MAX_BACKOFF: Duration = Duration::from_secs(8);
/// The longest `Retry-After` a push waits for; beyond it the push fails.
const PUSH_MAX_RETRY_AFTER: Duration = Duration::from_secs(120);

/// The first line of an error (git's stderr runs over several).
fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

/// What a push sends: the worktree's HEAD to the PR's head branch, from
/// the head the forge has, with these commits of Shepherd's between.
#[derive(Clone, Copy)]
pub(crate) struct Outgoing<'a> {
    pub(crate) head_ref: &'a str,
    /// The head the forge has: the commits from it to HEAD must be exactly
    /// `commits`.
    pub(crate) from: &'a str,
    pub(crate) commits: &'a [String],
    /// The round's artifact the push is recorded in (`push.json`).
    pub(crate) artifact: &'a str,
}

/// The push's artifact when nothing was pushed, and why.
fn not_pushed(books: &Books, round: &Round, out: Outgoing<'_>, outcome: String) -> Result<()> {
    books.artifact(
        round,
        out.artifact,
        &PushArtifact {
            pushed: false,
            head_ref: out.head_ref,
            from: out.from,
            sha: None,
            commits: out.commits,
            outcome,
            retries: &[],
        },
    )
}

/// Push what the gate passed; the pushed head, `None` when there was
/// nothing to push.
pub(crate) async fn stage(
    books: &mut Books,
    round: &Round,
    synced: &Synced,
    ws: &Workspace,
    gated: &Gated,
) -> Result<Step<Option<String>>> {
    let Gated(changes) = gated;
    let out = Outgoing {
        head_ref: &synced.snapshot.pr.head_ref,
        from: &synced.start_sha,
        commits: &changes.commits,
        artifact: "push.json",
    };
    if changes.commits.is_empty() {
        not_pushed(books, round, out, "nothing to push".to_owned())?;
        return Ok(Ok(None));
    }
    let (pushed, summary) = match send(books, round, ws, out).await? {
        Ok(sent) => sent,
        Err(end) => return Ok(Err(end)),
    };
    books.stage_done(round, Stage::Push, summary)?;
    Ok(pushed)
}

/// Send `out`'s commits: checked to be exactly Shepherd's, pushed (never
/// forced, retried when interrupted on the way), recorded in its
/// artifact. The pushed head (`Err` of the inner step: the round ends,
/// with the head the push may have left) and a one-line summary.
pub(crate) async fn send(
    books: &mut Books,
    round: &Round,
    ws: &Workspace,
    out: Outgoing<'_>,
) -> Result<Step<(Step<Option<String>>, String)>> {
    let head_ref = out.head_ref.to_owned();
    // Only Shepherd's own commits of this round go out: an agent's
    // commit that slipped past the guards stops the round here.
    if let Err(reason) =
        guard::check_commits_to_push(books, ws, round, out.from, out.commits).await?
    {
        books.emit(ProgressEvent::Note {
            message: reason.clone(),
        });
        not_pushed(books, round, out, reason.clone())?;
        return Ok(Err(RoundEnd::Failed { reason }));
    }
    let local = ws.git(|wt| wt.head_sha()).await?.0;
    let mut retries: Vec<String> = Vec::new();
    books.event(
        Some(round.n),
        "push-started",
        serde_json::json!({ "sha": local, "head_ref": head_ref }),
    )?;
    let mut attempt = 1u32;
    let outcome = loop {
        let target = head_ref.clone();
        let outcome = ws.git(move |wt| wt.push(&target)).await;
        let Err(EngineError::Worktree(WorktreeError::PushInterrupted { retry_after, .. })) =
            &outcome
        else {
            break outcome;
        };
        if attempt >= PUSH_ATTEMPTS {
            break outcome;
        }
        // A push that landed with its answer lost is not sent again.
        let target = head_ref.clone();
        if let Ok(remote) = ws.git(move |wt| wt.remote_head(&target)).await {
            if remote.0 == local {
                break outcome;
            }
        }
        let computed = PUSH_BACKOFF * 2u32.saturating_pow(attempt - 1);
        let wait = match retry_after {
            Some(wait) if *wait > PUSH_MAX_RETRY_AFTER => break outcome,
            Some(wait) => *wait,
            None => computed.min(PUSH_MAX_BACKOFF),
        };
        let error = outcome
            .as_ref()
            .err()
            .map(ToString::to_string)
            .unwrap_or_default();
        let note = format!(
            "the push to {head_ref} failed on the way ({}); retrying in {} ms (attempt {} of {PUSH_ATTEMPTS})",
            first_line(&error),
            wait.as_millis(),
            attempt + 1
        );
        tracing::warn!(%error, wait_ms = wait.as_millis() as u64, "push interrupted; retrying");
        books.emit(ProgressEvent::Note {
            message: note.clone(),
        });
        books.event(
            Some(round.n),
            "push-retry",
            serde_json::json!({ "attempt": attempt, "wait_ms": wait.as_millis() as u64, "error": error }),
        )?;
        retries.push(note);
        tokio::time::sleep(wait).await;
        attempt += 1;
    };
    let (pushed, text, end) = match outcome {
        Ok(PushOutcome::Pushed { sha }) => (Some(sha.0), "pushed".to_owned(), None),
        Ok(PushOutcome::Rejected { stderr }) => {
            let note = format!(
                "the push to {head_ref} was rejected (someone pushed meanwhile); re-syncing and \
                 re-running the round"
            );
            books.emit(ProgressEvent::Note {
                message: note.clone(),
            });
            (
                None,
                format!("rejected: {stderr}"),
                Some(RoundEnd::Restart { note }),
            )
        }
        Err(err) => {
            // The push may have landed with its answer lost.
            let target = head_ref.clone();
            let remote = ws.git(move |wt| wt.remote_head(&target)).await;
            match remote {
                Ok(remote) if remote.0 == local => (
                    Some(local.clone()),
                    format!("the push reported an error but the remote has it: {err}"),
                    None,
                ),
                _ => (
                    None,
                    format!("failed: {err}"),
                    Some(RoundEnd::Failed {
                        reason: format!("cannot push to {head_ref}: {err}"),
                    }),
                ),
            }
        }
    };
    books.artifact(
        round,
        out.artifact,
        &PushArtifact {
            pushed: pushed.is_some(),
            head_ref: &head_ref,
            from: out.from,
            sha: pushed.clone(),
            commits: out.commits,
            outcome: text.clone(),
            retries: &retries,
        },
    )?;
    books.event(
        Some(round.n),
        "push-finished",
        serde_json::json!({ "sha": pushed, "outcome": text }),
    )?;
    let summary = match &pushed {
        Some(sha) => format!(
            "{} commit(s) pushed to {head_ref} at {}",
            out.commits.len(),
            short(sha)
        ),
        None => text,
    };
    if let Some(sha) = &pushed {
        books.run.review_base = Some(sha.clone());
    }
    Ok(Ok((
        match end {
            Some(end) => Err(end),
            None => Ok(pushed),
        },
        summary,
    )))
}

/// After a rejected push: every result the gate recorded for this
/// attempt (commits that were not pushed, replies that were not posted)
/// is superseded in the ledger by an entry that claims nothing, so the
/// report lists neither, and a reply another runner posted with the same
/// marker is never taken for this run's. Metadata edits (already public)
/// keep their entries.
pub(crate) fn abandon_unpushed(books: &mut Books, round: &Round, gated: &Gated) -> Result<()> {
    let Gated(changes) = gated;
    let now = Timestamp::now();
    for (_, p) in changes.planned.iter().filter(|(_, p)| !p.carried) {
        if p.result.metadata_applied {
            continue;
        }
        books.store().append_ledger(&LedgerRecord {
            run_id: books.run.run_id.clone(),
            entry: shepherd_core::LedgerEntry::new(&p.result.item_id, round.n),
            fix_kind: None,
            reply_body: None,
            at: now,
        })?;
    }
    books.event(
        Some(round.n),
        "attempt-abandoned",
        serde_json::json!({
            "reason": "push rejected",
            "unpushed_commits": changes.commits,
        }),
    )
}
