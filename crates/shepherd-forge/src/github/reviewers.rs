//! What GitHub shows of the reviews of a pushed head (issue 27: reviewers
//! settle), and asking for a review again.
//!
//! Read through REST, each list in full:
//! - `GET /repos/{o}/{r}/pulls/{n}/reviews`: every review with its
//!   `commit_id` (Codex's and Copilot's reviews name the commit they
//!   reviewed) and its author's `type` (`Bot`).
//! - `GET /repos/{o}/{r}/commits/{sha}/statuses`: the head's statuses,
//!   newest first, each with its `creator` (CodeRabbit's `CodeRabbit`
//!   status goes from pending to success; anyone with write access can
//!   post a status of that name, so the creator is what counts).
//! - the head's check runs, each by its app (`slug[bot]` is the app's
//!   account).
//! - `GET /repos/{o}/{r}/pulls/{n}/requested_reviewers`: the users review
//!   is still requested from (GitHub drops a reviewer from it once they
//!   review).
//! - `GET /repos/{o}/{r}/issues/{n}/comments`: the conversation's comments
//!   (a bot's notice that it did not review, or its summary comment edited
//!   in place to say so), each with the forge's times; the head's first
//!   status says, by the same clock, when the head arrived.
//!
//! The reviewers stage reads these every few seconds while it waits, so
//! every read is conditional (`If-None-Match` with the kept `ETag`, as the
//! CI wait's are): an unchanged list comes back `304 Not Modified`, which
//! GitHub does not count against the rate limit.

use serde::Deserialize;
use serde_json::json;
use shepherd_core::ci::CheckState;
use shepherd_core::model::{RepoRef, ReviewState};
use shepherd_core::reviewers::{Activity, NoteSeen, ReviewSeen, SignalSeen};
use time::OffsetDateTime;

use super::client::repo_url;
use super::rest_wire::{IssueCommentRest, ReviewListedRest, StatusRest, UserRest};
use crate::error::Result;
use crate::times::forge_time;
use crate::transport::{Conditional, Transport};

#[derive(Debug, Deserialize)]
struct RequestedRest {
    #[serde(default)]
    users: Vec<UserRest>,
}

/// What GitHub shows of the reviews of PR `number` on `head`.
pub(crate) async fn activity(
    transport: &Transport,
    repo: &RepoRef,
    number: u64,
    head: &str,
) -> Result<Activity> {
    let n = number.to_string();
    let url = repo_url(transport, repo, &["pulls", &n, "reviews"])?;
    let pages: Vec<Vec<ReviewListedRest>> =
        transport.get_pages(&url, &[], Conditional::Yes).await?;
    let reviews = pages
        .into_iter()
        .flatten()
        .filter_map(|r| {
            let user = r.user?;
            Some(ReviewSeen {
                author_is_bot: user.kind.as_deref() == Some("Bot"),
                author: user.login,
                commit: r.commit_id,
                state: review_state(&r.state)?,
                body: r.body.unwrap_or_default(),
            })
        })
        .collect();

    let url = repo_url(transport, repo, &["commits", head, "statuses"])?;
    let pages: Vec<Vec<StatusRest>> = transport.get_pages(&url, &[], Conditional::Yes).await?;
    let mut signals: Vec<SignalSeen> = Vec::new();
    let mut first_status: Option<OffsetDateTime> = None;
    let statuses_request = format!("GET {}", url.path());
    // Newest first: the first of each context and creator is its state.
    for status in pages.into_iter().flatten() {
        if let Some(at) = status.created_at.as_deref() {
            let at = forge_time(&statuses_request, at)?;
            first_status = Some(first_status.map_or(at, |f| f.min(at)));
        }
        let creator = status.creator.map(|c| c.login);
        let seen = signals
            .iter()
            .any(|s| s.name == status.context && s.creator == creator);
        if !seen {
            let outcome =
                CheckState::from_status_context(status.context.clone(), &status.state, None)
                    .outcome();
            signals.push(SignalSeen {
                name: status.context,
                creator,
                outcome,
                description: status.description,
            });
        }
    }
    let checks = super::checks::check_runs(transport, repo, head).await?;
    signals.extend(
        checks
            .iter()
            .filter(|c| c.head_sha == head)
            .map(|c| SignalSeen {
                name: c.name.clone(),
                creator: c.app_slug.as_ref().map(|slug| format!("{slug}[bot]")),
                outcome: c.to_state().outcome(),
                description: None,
            }),
    );

    let url = repo_url(transport, repo, &["pulls", &n, "requested_reviewers"])?;
    let requested: RequestedRest = transport.get(&url, &[], Conditional::Yes).await?;
    let requested = requested.users.into_iter().map(|u| u.login).collect();

    // Every comment: their times are the forge's, compared with the
    // head's first status, never with the local clock.
    let url = repo_url(transport, repo, &["issues", &n, "comments"])?;
    let request = format!("GET {}", url.path());
    let pages: Vec<Vec<IssueCommentRest>> =
        transport.get_pages(&url, &[], Conditional::Yes).await?;
    let mut notes = Vec::new();
    for c in pages.into_iter().flatten() {
        let (Some(user), Some(created_at)) = (c.user, c.created_at) else {
            continue;
        };
        notes.push(NoteSeen {
            author: user.login,
            body: c.body,
            created_at: forge_time(&request, &created_at)?,
            updated_at: c
                .updated_at
                .as_deref()
                .map(|t| forge_time(&request, t))
                .transpose()?,
        });
    }
    Ok(Activity {
        reviews_carry_commit: true,
        reviews,
        signals,
        requested,
        notes,
        approvals: Vec::new(),
        // The head's first status came right after its push.
        pushed_at: first_status,
    })
}

fn review_state(text: &str) -> Option<ReviewState> {
    Some(match text {
        "APPROVED" => ReviewState::Approved,
        "CHANGES_REQUESTED" => ReviewState::ChangesRequested,
        "COMMENTED" => ReviewState::Commented,
        "DISMISSED" => ReviewState::Dismissed,
        "PENDING" => ReviewState::Pending,
        _ => return None,
    })
}

/// `POST /repos/{o}/{r}/pulls/{n}/requested_reviewers`: ask `logins` to
/// review (again). GitHub takes a bot's login with its `[bot]` suffix
/// (`copilot-pull-request-reviewer[bot]`) for the apps that accept review
/// requests.
pub(crate) async fn request_review(
    transport: &Transport,
    repo: &RepoRef,
    number: u64,
    logins: &[String],
) -> Result<()> {
    if logins.is_empty() {
        return Ok(());
    }
    let n = number.to_string();
    let url = repo_url(transport, repo, &["pulls", &n, "requested_reviewers"])?;
    transport
        .send(
            reqwest::Method::POST,
            &url,
            Some(&json!({ "reviewers": logins })),
        )
        .await?;
    Ok(())
}
