//! Stage 1, PR state: fetch the PR and its feedback; refuse a fork before
//! any mutation, end on a closed or merged PR, stop on a pending review of
//! the viewer (`pr-state.json`). On GitLab: the merge request, a source
//! project other than the target (a fork), the viewer's draft notes.

use serde::Serialize;
use shepherd_core::model::{ForgeKind, PrSnapshot, PrStatus, PullRequest};
use shepherd_core::target::{Mode, TargetedThread};

use shepherd_forge::Forge;

use super::runner::Books;
use super::state::{Round, RoundEnd, Step};
use crate::error::Result;
use crate::options::Stage;
use crate::run_dir::PauseKind;

#[derive(Serialize)]
struct PrStateArtifact<'a> {
    forge: &'a str,
    repo: String,
    viewer: &'a str,
    pr: &'a PullRequest,
    threads: usize,
    top_level_comments: usize,
    verdict: &'a str,
}

/// The PR as fetched, and the end of the round when it stops here
/// (after the snapshot: what it shows is still reported).
pub(crate) async fn stage(
    books: &mut Books,
    forge: &dyn Forge,
    round: &Round,
) -> Result<Step<(PrSnapshot, Option<RoundEnd>)>> {
    let number = books.run.target.number;
    let kind = books.run.target.forge;
    let noun = pr_noun(kind);
    let snapshot = match forge.snapshot(number).await {
        Ok(s) => s,
        Err(err) => {
            return Ok(Err(RoundEnd::Failed {
                reason: format!("cannot fetch the {noun}: {err}"),
            }))
        }
    };
    let pr = &snapshot.pr;
    let (verdict, end) = if pr.is_cross_repository {
        (
            "refused: fork",
            Some(RoundEnd::Failed {
                reason: format!(
                    "the head of {} lives in a fork; shepherd refuses fork {noun}s \
                     (a push would target the base repository)",
                    books.run.target
                ),
            }),
        )
    } else if pr.state != PrStatus::Open {
        let word = if pr.state == PrStatus::Merged {
            "merged"
        } else {
            "closed"
        };
        (
            "ended: not open",
            Some(RoundEnd::Ended {
                reason: format!("the {noun} is {word}; nothing more to do"),
            }),
        )
    } else if pr.viewer_has_pending_review {
        (
            "stopped: pending review",
            Some(RoundEnd::Paused {
                kind: PauseKind::PendingReview,
                reason: match kind {
                    ForgeKind::GitHub => format!(
                        "@{} has a pending (draft) review on this pull request: replies \
                         posted now could vanish into it. Submit or discard that review, then \
                         run `shepherd resume {}`",
                        snapshot.viewer, books.run.run_id
                    ),
                    ForgeKind::GitLab => format!(
                        "@{} has draft notes (a pending review) on this merge request: they \
                         would be published with the next review, mixed with Shepherd's \
                         replies. Publish or discard them, then run `shepherd resume {}`",
                        snapshot.viewer, books.run.run_id
                    ),
                },
            }),
        )
    } else {
        ("open", None)
    };
    let end = end.or_else(|| match books.run.target.mode {
        Mode::Targeted(TargetedThread::GitHubDiscussion(id) | TargetedThread::GitLabNote(id)) => {
            let found = snapshot
                .threads
                .iter()
                .any(|t| t.comments.iter().any(|c| c.database_id == Some(id)));
            let resolved_or_missing = !found;
            let comment = kind.spec().comment_noun;
            resolved_or_missing.then(|| RoundEnd::Ended {
                reason: format!(
                    "the targeted thread ({comment} {id}) is not an unresolved thread of the \
                     {noun}"
                ),
            })
        }
        Mode::Full => None,
    });
    books.artifact(
        round,
        "pr-state.json",
        &PrStateArtifact {
            forge: snapshot.forge.as_str(),
            repo: snapshot.repo.full_name(),
            viewer: &snapshot.viewer,
            pr,
            threads: snapshot.threads.len(),
            top_level_comments: snapshot.comments.len(),
            verdict,
        },
    )?;
    books.run.head_ref = Some(pr.head_ref.clone());
    books.run.pr_url = pr.url.clone();
    books.run.pr_title = pr.title.clone();
    let summary = format!(
        "{} {} at {}, {} thread(s), {} top-level comment(s): {verdict}",
        pr.head_ref,
        match pr.state {
            PrStatus::Open => "open",
            PrStatus::Closed => "closed",
            PrStatus::Merged => "merged",
        },
        short(&pr.head_sha),
        snapshot.threads.len(),
        snapshot.comments.len(),
    );
    books.stage_done(round, Stage::PrState, summary)?;
    Ok(Ok((snapshot, end)))
}

/// What the forge calls the target: a pull request, or a merge request.
pub(crate) fn pr_noun(forge: ForgeKind) -> &'static str {
    forge.request_noun()
}

/// The first 10 characters of a SHA.
pub(crate) fn short(sha: &str) -> &str {
    sha.get(..10).unwrap_or(sha)
}
