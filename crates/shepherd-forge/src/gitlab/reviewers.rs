//! What GitLab shows of the reviews of a pushed head (issue 27), and asking
//! for a review again.
//!
//! GitLab's merge request notes carry no commit, so a reviewer's review of
//! a head is what it wrote or approved after the push (GitLab's REST API):
//! - `GET …/merge_requests/:iid/notes?sort=desc&order_by=updated_at`: the
//!   notes, newest change first; a system note "approved this merge
//!   request" is an approval with its time, and the latest "added N
//!   commits" says when the head arrived, by the forge's clock.
//! - `GET …/repository/commits/:sha/statuses`: the head's commit statuses
//!   (the latest of each name), each with its `author`.
//! - the merge request's `reviewers`: everyone asked to review. A reviewer
//!   stays listed after reviewing; only their state changes.
//! - `GET …/merge_requests/:iid/reviewers`: each reviewer's state
//!   (`unreviewed`, `review_started`, `reviewed`, `requested_changes`,
//!   `approved`, `unapproved`: GitLab's reviewer states,
//!   <https://docs.gitlab.com/api/merge_requests/#get-single-merge-request-reviewers>;
//!   gitlab-org/gitlab !134766 added `requested_changes`). A state names no
//!   commit, so a change request is never taken to be of the head. The
//!   `state` of the merge request's own `reviewers` is the account's
//!   (`active`), not the review's.
//!
//! So a listed reviewer is still asked (pending) only while their state
//! says they have not reviewed (`unreviewed`, `review_started`), or when no
//! state is known (a GitLab before 15.3, without the reviewers route).
//!
//! Asking someone not yet listed sets the merge request's `reviewer_ids` to
//! its reviewers and the asked ones (`PUT …/merge_requests/:iid`), each
//! login's id read from the project's members (`GET …/members/all?query=…`):
//! only a member can review. Putting a listed reviewer's id again changes
//! nothing, so a listed reviewer is asked again with the GraphQL mutation
//! `mergeRequestReviewerRereview(input: {projectPath: ID!, iid: String!,
//! userId: UserID!})`, whose payload is `{mergeRequest, errors}` (GitLab
//! 13.9+, <https://docs.gitlab.com/api/graphql/reference/#mutationmergerequestreviewerrereview>):
//! GitLab's `MergeRequests::RequestReviewService` resets their state to
//! `unreviewed`, notes "requested review from @login" and notifies them;
//! someone not among the reviewers gets the payload error "Reviewer not
//! found". A GitLab without the mutation answers a GraphQL error, and the
//! reviewer stays as is.

use reqwest::Method;
use serde::Deserialize;
use serde_json::json;
use shepherd_core::ci::CheckState;
use shepherd_core::model::{AuthorKind, ReviewState};
use shepherd_core::reviewers::{Activity, NoteSeen, ReviewSeen, SignalSeen};
use time::OffsetDateTime;

use super::client::GitLabClient;
use super::wire::{NoteWire, UserWire};
use crate::error::{ForgeError, Result};
use crate::times::forge_time;
use crate::transport::Conditional;

#[derive(Debug, Deserialize)]
struct StatusWire {
    name: String,
    status: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    author: Option<UserWire>,
}

/// One entry of `GET …/merge_requests/:iid/reviewers`.
#[derive(Debug, Deserialize)]
struct ReviewerStateWire {
    user: UserWire,
    #[serde(default)]
    state: Option<String>,
}

#[derive(Debug, Deserialize)]
struct MrReviewersWire {
    #[serde(default)]
    reviewers: Vec<UserWire>,
}

/// Whether a reviewer state says the reviewer has submitted nothing yet
/// (asked, and not answered).
fn is_pending(state: &str) -> bool {
    matches!(state, "unreviewed" | "review_started")
}

/// The system note GitLab writes when someone approves.
const APPROVED: &str = "approved this merge request";

/// GitLab's commit status states as the verdict spells them: `running` and
/// `created` are pending, `failed` a failure, `canceled` an error.
fn status_state(status: &str) -> &str {
    match status {
        "success" => "success",
        "failed" => "failure",
        "canceled" | "canceling" => "error",
        "skipped" => "skipped",
        _ => "pending",
    }
}

/// What GitLab shows of the reviews of MR `iid` on `head`.
pub(crate) async fn activity(client: &GitLabClient, iid: u64, head: &str) -> Result<Activity> {
    // The notes and the merge request are read plainly, not with
    // `If-None-Match` as GitHub's reads are: GitLab documents its ETag
    // caching for the web UI's polling routes (notes polling,
    // gitlab-org/gitlab#17580), not for these REST v4 reads, so a
    // conditional read is not known to save anything here.
    let url = client.mr_url(iid, &["notes"])?;
    let request = format!("GET {}", url.path());
    let pages: Vec<Vec<NoteWire>> = client
        .transport
        .get_pages(
            &url,
            &[("sort", "desc"), ("order_by", "updated_at")],
            Conditional::No,
        )
        .await?;
    let mut notes = Vec::new();
    let mut approvals = Vec::new();
    let mut pushed_at: Option<OffsetDateTime> = None;
    for note in pages.into_iter().flatten() {
        let Some(author) = note.author else { continue };
        let created_at = forge_time(&request, &note.created_at)?;
        let updated_at = note
            .updated_at
            .as_deref()
            .map(|t| forge_time(&request, t))
            .transpose()?;
        if note.system {
            if note.body.trim() == APPROVED {
                approvals.push((author.username, created_at));
            } else if note.body.starts_with("added ") && note.body.contains(" commit") {
                // GitLab notes every push ("added 1 commit"): the latest is
                // when the head arrived, by the forge's clock.
                pushed_at = Some(pushed_at.map_or(created_at, |p| p.max(created_at)));
            }
            continue;
        }
        notes.push(NoteSeen {
            author: author.username,
            body: note.body,
            created_at,
            updated_at,
        });
    }

    let url = client.project_url(&["repository", "commits", head, "statuses"])?;
    let pages: Vec<Vec<StatusWire>> = client
        .transport
        .get_pages(&url, &[], Conditional::Yes)
        .await?;
    let signals = pages
        .into_iter()
        .flatten()
        .map(|s| SignalSeen {
            outcome: CheckState::from_status_context(s.name.clone(), status_state(&s.status), None)
                .outcome(),
            name: s.name,
            creator: s.author.map(|a| a.username),
            description: s.description,
        })
        .collect();

    let url = client.mr_url(iid, &[])?;
    let mr: MrReviewersWire = client.transport.get(&url, &[], Conditional::No).await?;
    let url = client.mr_url(iid, &["reviewers"])?;
    // The route came with GitLab 15.3: an older GitLab answers 404, and
    // then no reviewer's state is known (the rest of the look still is).
    let states: Vec<ReviewerStateWire> =
        match client.transport.get(&url, &[], Conditional::No).await {
            Ok(states) => states,
            Err(ForgeError::NotFound { .. }) => Vec::new(),
            Err(err) => return Err(err),
        };
    // Still asked: a listed reviewer whose state, if known, says nothing
    // submitted.
    let requested = mr
        .reviewers
        .into_iter()
        .map(|u| u.username)
        .filter(|login| {
            states
                .iter()
                .find(|r| r.user.username.eq_ignore_ascii_case(login))
                .and_then(|r| r.state.as_deref())
                .is_none_or(is_pending)
        })
        .collect();
    // What a reviewer's state says of their review; the states that say
    // nothing submitted (`unreviewed`, `review_started`) are none.
    let reviews = states
        .into_iter()
        .filter_map(|r| {
            let state = match r.state.as_deref()? {
                "requested_changes" => ReviewState::ChangesRequested,
                "approved" => ReviewState::Approved,
                "reviewed" => ReviewState::Commented,
                _ => return None,
            };
            let author = r.user.author();
            Some(ReviewSeen {
                author_is_bot: author.kind == AuthorKind::Bot,
                author: author.login,
                commit: None,
                state,
                body: String::new(),
            })
        })
        .collect();
    Ok(Activity {
        reviews_carry_commit: false,
        reviews,
        signals,
        requested,
        notes,
        approvals,
        pushed_at,
    })
}

/// Ask `logins` to review MR `iid` (see the module docs): a listed
/// reviewer again through the rereview mutation, the others by adding them
/// to `reviewer_ids`.
pub(crate) async fn request_review(
    client: &GitLabClient,
    iid: u64,
    logins: &[String],
) -> Result<()> {
    if logins.is_empty() {
        return Ok(());
    }
    let url = client.mr_url(iid, &[])?;
    let mr: MrReviewersWire = client.transport.get(&url, &[], Conditional::No).await?;
    let mut ids: Vec<u64> = mr.reviewers.iter().filter_map(|u| u.id).collect();
    let mut added = false;
    for login in logins {
        let listed = mr
            .reviewers
            .iter()
            .find(|u| u.username.eq_ignore_ascii_case(login));
        if let Some(reviewer) = listed {
            let Some(id) = reviewer.id else {
                return Err(ForgeError::Decode {
                    request: format!("GET {}", url.path()),
                    message: format!("GitLab reviewer {login} has no id"),
                });
            };
            rereview(client, iid, id).await?;
            continue;
        }
        // A reviewer must be a member of the project (inherited ones
        // included); `query` matches names too, so the username is
        // compared exactly.
        let members_url = client.project_url(&["members", "all"])?;
        let request = format!("GET {}", members_url.path());
        let pages: Vec<Vec<UserWire>> = client
            .transport
            .get_pages(&members_url, &[("query", login.as_str())], Conditional::No)
            .await?;
        let user = pages
            .into_iter()
            .flatten()
            .find(|u| u.username.eq_ignore_ascii_case(login))
            .ok_or_else(|| ForgeError::NotFound {
                request: request.clone(),
                message: format!("{login} is not a member of the project"),
            })?;
        let Some(id) = user.id else {
            return Err(ForgeError::Decode {
                request,
                message: format!("GitLab member {login} has no id"),
            });
        };
        if !ids.contains(&id) {
            ids.push(id);
            added = true;
        }
    }
    if added {
        client
            .transport
            .send(Method::PUT, &url, Some(&json!({ "reviewer_ids": ids })))
            .await?;
    }
    Ok(())
}

/// The operation name of [`REREVIEW`].
const REREVIEW_OPERATION: &str = "MergeRequestReviewerRereview";

/// Asks a listed reviewer to review again (GitLab 13.9+; see the module
/// docs). Only `errors` is read back.
const REREVIEW: &str = "mutation MergeRequestReviewerRereview(\
$projectPath: ID!, $iid: String!, $userId: UserID!) { \
mergeRequestReviewerRereview(input: {projectPath: $projectPath, iid: $iid, userId: $userId}) \
{ errors } }";

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RereviewData {
    merge_request_reviewer_rereview: Option<RereviewPayload>,
}

#[derive(Debug, Deserialize)]
struct RereviewPayload {
    #[serde(default)]
    errors: Vec<String>,
}

/// Runs [`REREVIEW`] for the user of id `user_id` on MR `iid`: a GraphQL
/// error, top-level or in the payload's `errors`, is a
/// [`ForgeError::GraphQl`] with its messages.
async fn rereview(client: &GitLabClient, iid: u64, user_id: u64) -> Result<()> {
    let variables = json!({
        "projectPath": client.repo.full_name(),
        "iid": iid.to_string(),
        "userId": format!("gid://gitlab/User/{user_id}"),
    });
    let data: RereviewData = client
        .transport
        .graphql_mutation(REREVIEW_OPERATION, REREVIEW, variables)
        .await?;
    let Some(payload) = data.merge_request_reviewer_rereview else {
        return Err(ForgeError::Decode {
            request: format!("GraphQL {REREVIEW_OPERATION}"),
            message: "the mutation answered no payload".into(),
        });
    };
    if payload.errors.is_empty() {
        Ok(())
    } else {
        Err(ForgeError::GraphQl {
            operation: REREVIEW_OPERATION.to_owned(),
            messages: payload.errors,
        })
    }
}
