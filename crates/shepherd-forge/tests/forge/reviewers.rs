//! What the forges show of a pushed head's reviews (issue 27), read into
//! the core's reviewer states, and review requests.

use serde_json::json;
use shepherd_core::ci::CheckOutcome;
use shepherd_core::model::ReviewState;
use shepherd_core::reviewers::{state_of, Evidence, ReviewerState};
use shepherd_forge::Forge;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::support::{client_at, gitlab_client_at, Reply, Responder, Seen, PROJECT};

const HEAD: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
/// When the head was pushed.
fn pushed() -> OffsetDateTime {
    OffsetDateTime::parse("2026-12-05T10:00:00Z", &Rfc3339).unwrap()
}

const OLD: &str = "0000000000000000000000000000000000000001";

fn github(seen: &Seen) -> Reply {
    let base = "/repos/octo-org/widgets";
    match seen.uri.path().strip_prefix(base).unwrap_or("") {
        "/pulls/7/reviews" => Reply::json(
            200,
            json!([
                { "id": 1, "node_id": "PRR_1", "html_url": "https://github.com/octo-org/widgets/pull/7#pullrequestreview-1", "user": { "login": "chatgpt-codex-connector[bot]", "type": "Bot" },
                  "body": "Reviewed commit: 0000000", "state": "COMMENTED", "commit_id": OLD },
                { "id": 2, "node_id": "PRR_2", "html_url": "https://github.com/octo-org/widgets/pull/7#pullrequestreview-2", "user": { "login": "chatgpt-codex-connector[bot]", "type": "Bot" },
                  "body": "Reviewed commit: 4b825dc", "state": "COMMENTED", "commit_id": HEAD },
                { "id": 3, "node_id": "PRR_3", "html_url": "https://github.com/octo-org/widgets/pull/7#pullrequestreview-3", "user": { "login": "alice", "type": "User" },
                  "body": "", "state": "CHANGES_REQUESTED", "commit_id": OLD },
            ]),
        ),
        p if p == format!("/commits/{HEAD}/statuses") => Reply::json(
            200,
            json!([
                { "id": 12, "context": "CodeRabbit", "state": "success", "description": "Review completed",
                  "created_at": "2026-12-05T10:03:00Z",
                  "creator": { "login": "mallory", "type": "User" } },
                { "id": 11, "context": "CodeRabbit", "state": "pending", "description": "Review in progress",
                  "creator": { "login": "coderabbitai[bot]", "type": "Bot" } },
                { "id": 10, "context": "CodeRabbit", "state": "error", "description": "older",
                  "created_at": "2026-12-05T10:00:00Z",
                  "creator": { "login": "coderabbitai[bot]", "type": "Bot" } },
            ]),
        ),
        p if p == format!("/commits/{HEAD}/check-runs") => Reply::json(
            200,
            json!({ "total_count": 1, "check_runs": [
                { "id": 5, "name": "Copilot review", "head_sha": HEAD, "status": "completed",
                  "conclusion": "success", "app": { "slug": "copilot-pull-request-reviewer" } }
            ]}),
        ),
        "/pulls/7/requested_reviewers" => Reply::json(
            200,
            json!({ "users": [{ "login": "gemini-code-assist[bot]", "type": "Bot" }], "teams": [] }),
        ),
        "/issues/7/comments" => Reply::json(
            200,
            json!([
                { "id": 30, "node_id": "IC_30", "html_url": "https://github.com/octo-org/widgets/pull/7#issuecomment-30",
                  "user": { "login": "coderabbitai[bot]", "type": "Bot" },
                  "body": "## Review limit reached\n**Next review available in:** **32 minutes**",
                  "created_at": "2026-12-05T09:00:00Z", "updated_at": "2026-12-05T10:05:00Z" }
            ]),
        ),
        other => Reply::json(404, json!({ "message": format!("not scripted: {other}") })),
    }
}

#[tokio::test]
async fn github_reviews_statuses_checks_requests_and_notices_make_the_states() {
    let server = Responder::start_fn(github).await;
    let client = client_at(&server.url());
    let pushed = pushed();
    // The local clock says nothing: the forge's times are compared.
    let local = OffsetDateTime::parse("2030-01-01T00:00:00Z", &Rfc3339).unwrap();
    let activity = client.reviewer_activity(7, HEAD).await.unwrap();
    assert!(activity.reviews_carry_commit);
    assert_eq!(activity.reviews.len(), 3);
    assert!(activity.reviews[0].author_is_bot && !activity.reviews[2].author_is_bot);
    assert_eq!(activity.reviews[2].state, ReviewState::ChangesRequested);
    // The latest status of each context and creator.
    let codes: Vec<(&str, Option<&str>, CheckOutcome)> = activity
        .signals
        .iter()
        .map(|s| (s.name.as_str(), s.creator.as_deref(), s.outcome))
        .collect();
    assert_eq!(
        codes,
        [
            ("CodeRabbit", Some("mallory"), CheckOutcome::Pass),
            (
                "CodeRabbit",
                Some("coderabbitai[bot]"),
                CheckOutcome::Pending
            ),
            (
                "Copilot review",
                Some("copilot-pull-request-reviewer[bot]"),
                CheckOutcome::Pass
            ),
        ]
    );
    assert_eq!(activity.requested, ["gemini-code-assist[bot]"]);
    // The head's first status, by the forge's clock, is when it arrived.
    assert_eq!(activity.pushed_at, Some(pushed));
    let look = activity.look(HEAD, local);
    assert_eq!(
        state_of("chatgpt-codex-connector[bot]", &look, false),
        ReviewerState::Reviewed {
            evidence: Evidence::Review {
                state: ReviewState::Commented
            }
        }
    );
    assert_eq!(
        state_of("copilot-pull-request-reviewer[bot]", &look, false).as_str(),
        "reviewed"
    );
    // Its status is pending and mallory's success is not its own; its
    // summary comment, edited after the push, says it is rate limited.
    assert_eq!(
        state_of("coderabbitai[bot]", &look, false).as_str(),
        "declined"
    );
    assert_eq!(
        state_of("gemini-code-assist[bot]", &look, false).as_str(),
        "pending"
    );
}

#[tokio::test]
async fn a_github_review_request_names_the_logins() {
    let server = Responder::start(vec![Reply::json(201, json!({ "number": 7 }))]).await;
    let client = client_at(&server.url());
    client
        .request_review(7, &["copilot-pull-request-reviewer[bot]".to_owned()])
        .await
        .unwrap();
    client.request_review(7, &[]).await.unwrap();
    let seen = server.seen();
    assert_eq!(seen.len(), 1, "an empty request sends nothing");
    assert_eq!(
        seen[0].line(),
        "POST /repos/octo-org/widgets/pulls/7/requested_reviewers"
    );
    assert_eq!(
        seen[0].json(),
        json!({ "reviewers": ["copilot-pull-request-reviewer[bot]"] })
    );
}

fn gitlab(seen: &Seen) -> Reply {
    let path = seen.uri.path();
    match (seen.method.as_str(), path) {
        ("GET", p) if p == format!("{PROJECT}/merge_requests/17/notes") => Reply::json(
            200,
            json!([
                { "id": 3, "author": { "id": 50, "username": "review-bot" }, "body": "one finding",
                  "system": false, "created_at": "2026-12-05T10:02:00Z", "updated_at": "2026-12-05T10:02:00Z" },
                { "id": 2, "author": { "id": 51, "username": "approver-bot" }, "body": "approved this merge request",
                  "system": true, "created_at": "2026-12-05T10:01:00Z", "updated_at": "2026-12-05T10:01:00Z" },
                { "id": 1, "author": { "id": 54, "username": "dev" }, "body": "added 1 commit\n\n* 4b825dc - Fix",
                  "system": true, "created_at": "2026-12-05T10:00:00Z", "updated_at": "2026-12-05T10:00:00Z" },
                { "id": 0, "author": { "id": 50, "username": "review-bot" }, "body": "older",
                  "system": false, "created_at": "2026-12-05T09:00:00Z", "updated_at": "2026-12-05T09:00:00Z" },
            ]),
        ),
        ("GET", p) if p == format!("{PROJECT}/repository/commits/{HEAD}/statuses") => Reply::json(
            200,
            json!([
                { "id": 9, "name": "CodeRabbit", "status": "running", "description": null,
                  "author": { "id": 52, "username": "coderabbitai" } }
            ]),
        ),
        ("GET", p) if p == format!("{PROJECT}/merge_requests/17/reviewers") => Reply::json(
            200,
            json!([
                { "user": { "id": 53, "username": "duo-bot" }, "state": "unreviewed",
                  "created_at": "2026-12-05T09:00:00Z" },
                { "user": { "id": 55, "username": "alice", "state": "active" }, "state": "requested_changes",
                  "created_at": "2026-12-05T09:00:00Z" },
            ]),
        ),
        ("GET", p) if p == format!("{PROJECT}/merge_requests/17") => Reply::json(
            200,
            json!({ "iid": 17, "reviewers": [{ "id": 53, "username": "duo-bot" }] }),
        ),
        ("GET", p) if p == format!("{PROJECT}/members/all") => Reply::json(
            200,
            json!([
                { "id": 56, "username": "coderabbitai-fan", "access_level": 30 },
                { "id": 52, "username": "coderabbitai", "access_level": 30 },
            ]),
        ),
        ("PUT", p) if p == format!("{PROJECT}/merge_requests/17") => {
            Reply::json(200, json!({ "iid": 17 }))
        }
        (m, p) => Reply::json(404, json!({ "message": format!("not scripted: {m} {p}") })),
    }
}

#[tokio::test]
async fn gitlab_notes_approvals_statuses_and_reviewers_make_the_states() {
    let server = Responder::start_fn(gitlab).await;
    let client = gitlab_client_at(&server.url());
    let pushed = pushed();
    // The local clock says nothing: GitLab's push note is when the head came.
    let local = OffsetDateTime::parse("2030-01-01T00:00:00Z", &Rfc3339).unwrap();
    let activity = client.reviewer_activity(17, HEAD).await.unwrap();
    assert!(!activity.reviews_carry_commit);
    assert_eq!(activity.pushed_at, Some(pushed));
    assert_eq!(activity.notes.len(), 2, "every note is read; time decides");
    assert_eq!(activity.approvals.len(), 1);
    assert_eq!(activity.requested, ["duo-bot"]);
    // Reviewer states name no commit; only a submitted one is a review.
    let reviews: Vec<(&str, ReviewState, Option<&str>)> = activity
        .reviews
        .iter()
        .map(|r| (r.author.as_str(), r.state, r.commit.as_deref()))
        .collect();
    assert_eq!(reviews, [("alice", ReviewState::ChangesRequested, None)]);
    let look = activity.look(HEAD, local);
    assert_eq!(
        state_of("review-bot", &look, false),
        ReviewerState::Reviewed {
            evidence: Evidence::Note
        }
    );
    assert_eq!(
        state_of("approver-bot", &look, false),
        ReviewerState::Reviewed {
            evidence: Evidence::Approval
        }
    );
    assert_eq!(state_of("coderabbitai", &look, false).as_str(), "pending");
    assert_eq!(
        state_of("coderabbitai", &look, true),
        ReviewerState::NotSeen { started: true }
    );
    assert_eq!(
        state_of("duo-bot", &look, true),
        ReviewerState::NotSeen { started: true }
    );
}

/// GitLab before 15.3 has no reviewers route: the rest of the look is
/// still read, and no reviewer's state is known.
#[tokio::test]
async fn a_gitlab_without_the_reviewers_route_still_gives_the_activity() {
    let server = Responder::start_fn(|seen: &Seen| {
        if seen.uri.path() == format!("{PROJECT}/merge_requests/17/reviewers") {
            return Reply::json(404, json!({ "message": "404 Not Found" }));
        }
        gitlab(seen)
    })
    .await;
    let client = gitlab_client_at(&server.url());
    let activity = client.reviewer_activity(17, HEAD).await.unwrap();
    assert!(activity.reviews.is_empty());
    assert_eq!(activity.notes.len(), 2);
    assert_eq!(activity.requested, ["duo-bot"]);
}

#[tokio::test]
async fn a_gitlab_review_request_adds_to_the_reviewers() {
    let server = Responder::start_fn(gitlab).await;
    let client = gitlab_client_at(&server.url());
    client
        .request_review(17, &["coderabbitai".to_owned()])
        .await
        .unwrap();
    let seen = server.seen();
    let put = seen.iter().find(|s| s.method == "PUT").unwrap();
    assert_eq!(put.json(), json!({ "reviewer_ids": [53, 52] }));
}

/// [`github`] behind conditional GETs as the emulator serves them (its
/// `conditional_get` middleware): a weak `ETag` of each body, and `304 Not
/// Modified` when `If-None-Match` names it.
fn github_with_etags(seen: &Seen) -> Reply {
    use std::hash::{Hash, Hasher};
    let reply = github(seen);
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    reply.body.hash(&mut hasher);
    let etag = format!("W/\"{:016x}\"", hasher.finish());
    let asked = seen
        .headers
        .get("if-none-match")
        .and_then(|v| v.to_str().ok());
    if asked == Some(etag.as_str()) {
        return Reply {
            status: 304,
            headers: Vec::new(),
            body: String::new(),
        }
        .header("etag", etag);
    }
    reply.header("etag", etag)
}

/// The wait's second look at nothing new: every read sends the `ETag` it
/// got, each is answered `304`, and the activity is the same.
#[tokio::test]
async fn a_second_look_at_the_reviews_is_conditional() {
    let server = Responder::start_fn(github_with_etags).await;
    let client = client_at(&server.url());
    let first = client.reviewer_activity(7, HEAD).await.unwrap();
    let reads = server.seen().len();
    assert!(
        server
            .seen()
            .iter()
            .all(|s| s.headers.get("if-none-match").is_none()),
        "the first look has nothing to send"
    );
    let second = client.reviewer_activity(7, HEAD).await.unwrap();
    assert_eq!(second, first);
    let seen = server.seen();
    let again = &seen[reads..];
    assert_eq!(again.len(), reads, "the same reads again");
    for s in again {
        assert!(
            s.headers.get("if-none-match").is_some(),
            "{} was not conditional",
            s.line()
        );
    }
}
