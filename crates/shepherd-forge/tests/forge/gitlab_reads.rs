//! The GitLab client's reads against a local responder answering with
//! GitLab's shapes: the merge request and the viewer's pending review, fork
//! detection, discussions (pagination by `X-Next-Page`, threads and items,
//! positions, outdated lines), project paths, and the transport's behaviour
//! with GitLab's errors, rate limits and headers.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use shepherd_core::model::{AuthorKind, DiffSide, ForgeKind, PrStatus, SubjectType};
use shepherd_forge::{Forge, ForgeError, ProjectId};

use crate::support::{
    all_text, fixture, gap, gitlab_client_at, Reply, Responder, Seen, PROJECT, SECRET,
};

const HEAD: &str = "8f1c0e7a9d2b4c6e8f0a1b3c5d7e9f1a2b4c6d8e";
const OLD: &str = "2be7ddb704c7b6b83732fdd5b9f09d5a397b5f8f";

fn not_found() -> Reply {
    Reply::json(404, json!({ "message": "404 Not found" }))
}

/// A GitLab serving merge request !17 of `group/sub/project`: two pages of
/// discussions, one comparison; `mr` and `drafts` replace the fixtures.
fn gitlab(mr: Value, drafts: Option<Value>) -> impl Fn(&Seen) -> Reply + Send + Sync {
    move |seen: &Seen| {
        let path = seen.uri.path();
        let query = seen.uri.query().unwrap_or("");
        let mr_path = format!("{PROJECT}/merge_requests/17");
        match (seen.method.as_str(), path) {
            ("GET", "/api/v4/user") => Reply::json(200, fixture("gitlab/user.json")),
            ("GET", p) if p == mr_path => Reply::json(200, mr.clone()),
            ("GET", p) if p == format!("{mr_path}/draft_notes") => match &drafts {
                Some(drafts) => Reply::json(200, drafts.clone()),
                None => not_found(),
            },
            ("GET", p) if p == format!("{mr_path}/discussions") => {
                if query.contains("page=2") {
                    Reply::json(200, fixture("gitlab/discussions_page2.json"))
                        .header("x-page", "2")
                        .header("x-next-page", "")
                        .header("x-per-page", "100")
                } else {
                    // The Link names another origin (GitLab's external URL
                    // behind a proxy): the client follows X-Next-Page.
                    Reply::json(200, fixture("gitlab/discussions_page1.json"))
                        .header("x-page", "1")
                        .header("x-next-page", "2")
                        .header("x-per-page", "100")
                        .header(
                            "link",
                            "<https://gitlab.example.com/api/v4/projects/4242/merge_requests/17/discussions?page=2&per_page=100>; rel=\"next\"",
                        )
                }
            }
            ("GET", p) if p == format!("{PROJECT}/repository/compare") => {
                Reply::json(200, fixture("gitlab/compare.json"))
            }
            _ => not_found(),
        }
    }
}

#[tokio::test]
async fn merge_request_state_viewer_and_pending_review() {
    let server = Responder::start_fn(gitlab(
        fixture("gitlab/merge_request.json"),
        Some(fixture("gitlab/draft_notes.json")),
    ))
    .await;
    let forge: Arc<dyn Forge> = Arc::new(gitlab_client_at(&server.url()));
    assert_eq!(forge.kind(), ForgeKind::GitLab);
    let pr = forge.pull_request(17).await.unwrap();
    assert_eq!(pr.number, 17);
    assert_eq!(pr.id.as_deref(), Some("93958054"));
    assert_eq!(pr.title, "Stop the retry loop after max_attempts");
    assert_eq!(
        pr.url,
        "https://gitlab.example.com/group/sub/project/-/merge_requests/17"
    );
    assert_eq!(pr.state, PrStatus::Open);
    assert!(!pr.is_draft);
    assert_eq!(
        (
            pr.head_ref.as_str(),
            pr.head_sha.as_str(),
            pr.base_ref.as_str()
        ),
        ("fix/retry-loop", HEAD, "main")
    );
    assert!(!pr.is_cross_repository);
    assert!(pr.viewer_has_pending_review, "a draft note of the viewer");
    assert_eq!(pr.author.unwrap().login, "shepherd");
    assert_eq!(forge.viewer().await.unwrap(), "shepherd");
    assert_eq!(server.count(), 3, "the viewer is fetched once");

    let mut lines = server.lines();
    lines.sort();
    assert_eq!(
        lines,
        [
            format!("GET {PROJECT}/merge_requests/17"),
            format!("GET {PROJECT}/merge_requests/17/draft_notes?per_page=100"),
            "GET /api/v4/user".to_owned(),
        ]
    );
    for seen in server.seen() {
        assert_eq!(
            seen.headers["authorization"],
            format!("Bearer {SECRET}").as_str()
        );
        assert_eq!(seen.headers["accept"], "application/json");
        assert!(seen.headers.get("x-github-api-version").is_none());
        assert!(seen.headers.get("private-token").is_none());
    }
}

#[tokio::test]
async fn a_fork_is_cross_repository_and_others_drafts_are_not_pending() {
    let mut mr = fixture("gitlab/merge_request.json");
    mr["source_project_id"] = json!(9999);
    mr["draft"] = json!(true);
    let mut drafts = fixture("gitlab/draft_notes.json");
    drafts[0]["author_id"] = json!(777);
    let server = Responder::start_fn(gitlab(mr.clone(), Some(drafts))).await;
    let pr = gitlab_client_at(&server.url())
        .pull_request(17)
        .await
        .unwrap();
    assert!(pr.is_cross_repository, "the source project is a fork");
    assert!(pr.is_draft);
    assert!(!pr.viewer_has_pending_review);

    // A GitLab without the draft notes API has no pending review.
    let server = Responder::start_fn(gitlab(mr, None)).await;
    let pr = gitlab_client_at(&server.url())
        .pull_request(17)
        .await
        .unwrap();
    assert!(!pr.viewer_has_pending_review);
}

#[tokio::test]
async fn discussions_become_threads_and_items() {
    let server = Responder::start_fn(gitlab(
        fixture("gitlab/merge_request.json"),
        Some(json!([])),
    ))
    .await;
    let forge: Arc<dyn Forge> = Arc::new(gitlab_client_at(&server.url()));
    let snapshot = forge.snapshot(17).await.unwrap();
    assert_eq!(snapshot.forge, ForgeKind::GitLab);
    assert_eq!(snapshot.viewer, "shepherd");
    assert!(!snapshot.pr.viewer_has_pending_review);

    // Two pages of discussions, by X-Next-Page; one comparison for the two
    // threads anchored at an older head.
    let lines = server.lines();
    let discussions: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("/discussions"))
        .collect();
    assert_eq!(
        discussions,
        [
            &format!("GET {PROJECT}/merge_requests/17/discussions?per_page=100"),
            &format!("GET {PROJECT}/merge_requests/17/discussions?per_page=100&page=2"),
        ]
    );
    let compares: Vec<&String> = lines.iter().filter(|l| l.contains("/compare")).collect();
    assert_eq!(
        compares,
        [&format!(
            "GET {PROJECT}/repository/compare?from={OLD}&to={HEAD}&straight=true"
        )]
    );
    assert_eq!(lines.len(), 6, "{lines:#?}");

    let ids: Vec<&str> = snapshot.threads.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "6a9c1750b37d513a43987b574953fceb50b03ce7",
            "5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d7c6b",
            "7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d",
            "0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b",
            "e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6",
        ],
        "resolved and system discussions are not threads"
    );
    let [current, left, moved, outdated, overview] = &snapshot.threads[..] else {
        panic!("five threads");
    };

    // A diff note on the head: every note, in order, bodies untouched.
    assert_eq!(
        (current.path.as_str(), current.line),
        ("src/retry.rs", Some(12))
    );
    assert_eq!(current.diff_side, DiffSide::Right);
    assert_eq!(current.subject_type, SubjectType::Line);
    assert!(!current.is_outdated && !current.is_resolved);
    let notes: Vec<(&str, Option<u64>)> = current
        .comments
        .iter()
        .map(|c| (c.id.as_str(), c.database_id))
        .collect();
    assert_eq!(
        notes,
        [
            ("1126", Some(1126)),
            ("1129", Some(1129)),
            ("1131", Some(1131))
        ]
    );
    assert!(current.comments[0]
        .body
        .contains("```suggestion:-0+0\n    for attempt in 0..max_attempts {\n```"));
    assert_eq!(
        current.comments[0].url,
        "https://gitlab.example.com/group/sub/project/-/merge_requests/17#note_1126"
    );
    assert_eq!(current.comments[0].created_at, "2024-05-02T10:01:00.000Z");
    let reviewer = current.comments[0].author.as_ref().unwrap();
    assert_eq!(
        (reviewer.login.as_str(), reviewer.kind),
        ("reviewer", AuthorKind::User)
    );

    // A removed line: the old side, its old path.
    assert_eq!(
        (left.path.as_str(), left.line, left.diff_side),
        ("src/http.rs", Some(40), DiffSide::Left)
    );

    // Written on an older head, its lines shifted by two: traced, current.
    assert!(!moved.is_outdated);
    assert_eq!((moved.start_line, moved.line), (Some(28), Some(30)));
    assert_eq!(
        (moved.original_start_line, moved.original_line),
        (Some(26), Some(28))
    );
    assert_eq!(
        moved.comments[0].author.as_ref().unwrap().kind,
        AuthorKind::Bot
    );

    // Written on an older head, its line changed since: outdated, kept.
    assert!(outdated.is_outdated);
    assert_eq!((outdated.line, outdated.original_line), (None, Some(50)));
    assert_eq!(
        outdated.comments[0].author.as_ref().unwrap().kind,
        AuthorKind::Bot
    );

    // A thread started on the overview: no file, no line.
    assert_eq!((overview.path.as_str(), overview.line), ("", None));
    assert_eq!(overview.subject_type, SubjectType::File);

    // Individual notes of people and bots are items, oldest first; the
    // system note is not.
    let items: Vec<(&str, &str)> = snapshot
        .comments
        .iter()
        .map(|c| (c.id.as_str(), c.author.as_ref().unwrap().login.as_str()))
        .collect();
    assert_eq!(
        items,
        [("1210", "project_4242_bot_3f9a1c"), ("1150", "alice")]
    );
    assert_eq!(
        snapshot.comments[0].author.as_ref().unwrap().kind,
        AuthorKind::Bot
    );
    assert_eq!(
        snapshot.comments[1].body,
        "Could you also add a changelog entry?"
    );
}

#[tokio::test]
async fn a_failed_comparison_leaves_stale_threads_outdated() {
    let server = Responder::start_fn(move |seen: &Seen| {
        if seen.uri.path().ends_with("/repository/compare") {
            return not_found();
        }
        gitlab(fixture("gitlab/merge_request.json"), Some(json!([])))(seen)
    })
    .await;
    let threads = gitlab_client_at(&server.url())
        .review_threads(17)
        .await
        .unwrap();
    let stale: Vec<bool> = threads
        .iter()
        .filter(|t| t.original_line == Some(28) || t.original_line == Some(50))
        .map(|t| t.is_outdated)
        .collect();
    assert_eq!(stale, [true, true]);
    assert!(
        !threads[0].is_outdated,
        "threads on the head need no comparison"
    );
}

#[tokio::test]
async fn a_project_by_numeric_id() {
    let server = Responder::start_fn(|seen: &Seen| {
        if seen.uri.path() == "/api/v4/projects/4242/merge_requests/17" {
            Reply::json(200, fixture("gitlab/merge_request.json"))
        } else if seen.uri.path() == "/api/v4/user" {
            Reply::json(200, fixture("gitlab/user.json"))
        } else {
            Reply::json(200, json!([]))
        }
    })
    .await;
    let client = gitlab_client_at(&server.url()).with_project(ProjectId::Id(4242));
    let pr = client.pull_request(17).await.unwrap();
    assert_eq!(pr.number, 17);
    assert!(server
        .lines()
        .contains(&"GET /api/v4/projects/4242/merge_requests/17".to_owned()));
}

#[tokio::test]
async fn errors_name_the_request_and_never_the_token() {
    let echo = format!("401 Unauthorized: token {SECRET} is revoked");
    let server = Responder::start(vec![
        Reply::json(401, json!({ "message": echo })),
        Reply::json(404, json!({ "message": "404 Project Not Found" })),
        Reply::json(
            403,
            json!({ "error": "insufficient_scope", "error_description": "The request requires higher privileges than provided by the access token.", "scope": "api" }),
        ),
        Reply::json(400, json!({ "message": { "title": ["can't be blank"] } })),
    ])
    .await;
    let client = gitlab_client_at(&server.url());
    let mut errors = Vec::new();
    for _ in 0..4 {
        errors.push(client.pull_request(17).await.unwrap_err());
    }
    let unauthorized = &errors[0];
    assert!(
        matches!(unauthorized, ForgeError::Unauthorized { .. }),
        "{unauthorized:?}"
    );
    let text = unauthorized.to_string();
    assert!(text.contains("GITLAB_TOKEN"), "{text}");
    assert!(text.contains("glab auth login"), "{text}");
    assert!(text.contains("GET /api/v4/user"), "{text}");
    assert!(
        matches!(errors[1], ForgeError::NotFound { .. }),
        "{:?}",
        errors[1]
    );
    let forbidden = errors[2].to_string();
    assert!(
        forbidden.contains("insufficient_scope: The request requires"),
        "{forbidden}"
    );
    assert!(
        errors[3].to_string().contains("can't be blank"),
        "{}",
        errors[3]
    );
    for err in &errors {
        assert!(
            !all_text(err).contains(SECRET),
            "token leaked: {}",
            all_text(err)
        );
    }
    assert!(!format!("{client:?}").contains(SECRET));
}

#[tokio::test]
async fn gitlab_rate_limits_are_honoured() {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let server = Responder::start(vec![
        Reply::json(429, json!({ "message": "Retry later" })).header("retry-after", "1"),
        Reply::json(200, fixture("gitlab/user.json")),
    ])
    .await;
    let client = gitlab_client_at(&server.url());
    assert_eq!(client.viewer().await.unwrap(), "shepherd");
    let seen = server.seen();
    assert!(
        gap(&seen, 0) >= Duration::from_millis(950),
        "{:?}",
        gap(&seen, 0)
    );

    // GitLab's own headers: the limit used up, reset in an hour.
    let reset = now + 3600;
    let server = Responder::start(vec![Reply::json(429, json!({ "message": "Retry later" }))
        .header("ratelimit-remaining", "0")
        .header("ratelimit-reset", reset.to_string())])
    .await;
    let err = gitlab_client_at(&server.url()).viewer().await.unwrap_err();
    assert_eq!(server.count(), 1, "no retry past the longest accepted wait");
    let ForgeError::RateLimited { reset_at, .. } = &err else {
        panic!("expected RateLimited, got {err:?}");
    };
    assert_eq!(*reset_at, Some(reset));
}

#[tokio::test]
async fn a_next_page_that_does_not_advance_is_an_error() {
    let server = Responder::start_fn(|seen: &Seen| {
        if seen.uri.path().ends_with("/discussions") {
            return Reply::json(200, json!([])).header("x-next-page", "1");
        }
        Reply::json(200, fixture("gitlab/merge_request.json"))
    })
    .await;
    let err = gitlab_client_at(&server.url())
        .review_threads(17)
        .await
        .unwrap_err();
    assert!(matches!(err, ForgeError::Decode { .. }), "{err:?}");
    assert!(err.to_string().contains("does not advance"), "{err}");
    assert_eq!(server.count(), 2, "no endless loop");
}
