//! The write side against a scripted local GitHub: exact requests, the reply
//! read-back, the marker look-up, resolves, and that mutations are sent once.

use std::sync::Arc;

use serde_json::{json, Value};
use shepherd_core::marker::Marker;
use shepherd_core::model::{AuthorKind, ReviewState};
use shepherd_forge::{Forge, ForgeError, ItemRef, ThreadRef};

use crate::support::{client_at, fixture, Reply, Responder, Seen, SECRET};

const THREAD: &str = "PRRT_kwDOABCD1M5aaaa1";
const ROOT: u64 = 1_543_210_987;
const REPLY_ID: u64 = 1_600_000_001;
const REVIEW_ID: u64 = 2_100_000_042;

fn thread() -> ThreadRef {
    ThreadRef {
        thread_id: THREAD.into(),
        root_comment_id: ROOT,
    }
}

fn reply_body() -> String {
    Marker::new(THREAD, 1, true)
        .append_to("Fixed in 4b825dc: the loop now stops after `max_attempts`.")
}

fn review(state: &str) -> Reply {
    let mut review = fixture("rest_review.json");
    review["state"] = state.into();
    Reply::json(200, review)
}

fn status(code: u16, message: &str) -> Reply {
    Reply::json(
        code,
        json!({ "message": message, "documentation_url": "https://docs.github.com/rest" }),
    )
}

/// The headers every request carries.
fn assert_github_headers(seen: &Seen) {
    assert_eq!(
        seen.headers["authorization"],
        format!("Bearer {SECRET}").as_str()
    );
    assert_eq!(seen.headers["accept"], "application/vnd.github+json");
    assert_eq!(seen.headers["x-github-api-version"], "2022-11-28");
}

#[tokio::test]
async fn a_reply_is_posted_once_then_read_back_with_its_review() {
    let server = Responder::start(vec![
        Reply::json(201, fixture("rest_review_comment.json")),
        Reply::json(200, fixture("rest_review_comment.json")),
        review("COMMENTED"),
    ])
    .await;
    let forge: Arc<dyn Forge> = Arc::new(client_at(&server.url()));
    let posted = forge
        .reply_to_thread(42, &thread(), &reply_body())
        .await
        .unwrap();

    assert_eq!(
        server.lines(),
        [
            format!("POST /repos/octo-org/widgets/pulls/42/comments/{ROOT}/replies"),
            format!("GET /repos/octo-org/widgets/pulls/comments/{REPLY_ID}"),
            format!("GET /repos/octo-org/widgets/pulls/42/reviews/{REVIEW_ID}"),
        ]
    );
    let seen = server.seen();
    assert_eq!(seen[0].json(), json!({ "body": reply_body() }));
    assert_eq!(seen[0].headers["content-type"], "application/json");
    for request in &seen {
        assert_github_headers(request);
    }
    assert_eq!(posted.id, "PRRC_kwDOABCD1M5fAKE1");
    assert_eq!(posted.database_id, Some(REPLY_ID));
    assert_eq!(
        posted.url,
        "https://github.com/octo-org/widgets/pull/42#discussion_r1600000001"
    );
    assert_eq!(posted.review_state, Some(ReviewState::Commented));
    assert_eq!(posted.marker, Some(Marker::new(THREAD, 1, true)));
    let author = posted.author.unwrap();
    assert_eq!(
        (author.login.as_str(), author.kind),
        ("shepherd-bot", AuthorKind::User)
    );
}

#[tokio::test]
async fn a_reply_that_landed_in_a_pending_review_is_an_error() {
    let server = Responder::start(vec![
        Reply::json(201, fixture("rest_review_comment.json")),
        Reply::json(200, fixture("rest_review_comment.json")),
        review("PENDING"),
    ])
    .await;
    let err = client_at(&server.url())
        .reply_to_thread(42, &thread(), &reply_body())
        .await
        .unwrap_err();
    match &err {
        ForgeError::ReplyInPendingReview {
            comment_id,
            review_id,
            request,
        } => {
            assert_eq!((*comment_id, *review_id), (REPLY_ID, REVIEW_ID));
            assert!(request.starts_with("POST /repos/octo-org/widgets/pulls/42/comments/"));
        }
        other => panic!("expected ReplyInPendingReview, got {other:?}"),
    }
    assert!(err.to_string().contains("pending review"), "{err}");
    assert_eq!(server.count(), 3);
}

#[tokio::test]
async fn a_reply_that_cannot_be_read_back_is_unconfirmed() {
    let server = Responder::start(vec![
        Reply::json(201, fixture("rest_review_comment.json")),
        status(404, "Not Found"),
    ])
    .await;
    let err = client_at(&server.url())
        .reply_to_thread(42, &thread(), &reply_body())
        .await
        .unwrap_err();
    assert!(matches!(err, ForgeError::Unconfirmed { .. }), "{err:?}");
    assert!(err.to_string().contains("1600000001"), "{err}");
    assert_eq!(server.count(), 2, "a 404 on the read-back is not retried");
}

#[tokio::test]
async fn a_reply_under_another_comment_is_unconfirmed() {
    let mut elsewhere = fixture("rest_review_comment.json");
    elsewhere["in_reply_to_id"] = 999.into();
    let server = Responder::start(vec![
        Reply::json(201, fixture("rest_review_comment.json")),
        Reply::json(200, elsewhere),
    ])
    .await;
    let err = client_at(&server.url())
        .reply_to_thread(42, &thread(), &reply_body())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("answers comment 999"), "{err}");
}

#[tokio::test]
async fn a_post_is_never_retried_after_a_502() {
    let server = Responder::start(vec![
        status(502, "Bad Gateway"),
        Reply::json(201, fixture("rest_review_comment.json")),
    ])
    .await;
    let err = client_at(&server.url())
        .reply_to_thread(42, &thread(), &reply_body())
        .await
        .unwrap_err();
    assert_eq!(server.count(), 1, "exactly one POST: it may have landed");
    assert!(
        matches!(err, ForgeError::Http { status: 502, .. }),
        "{err:?}"
    );
    assert!(err.is_transient());

    // Network failure after sending: the same, one attempt.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let err = client_at(&format!("http://127.0.0.1:{port}"))
        .post_issue_comment(42, "x")
        .await
        .unwrap_err();
    assert!(matches!(err, ForgeError::Network { .. }), "{err:?}");
}

#[tokio::test]
async fn a_post_refused_by_a_rate_limit_is_sent_again() {
    let server = Responder::start(vec![
        status(403, "You have exceeded a secondary rate limit").header("retry-after", "0"),
        Reply::json(201, fixture("rest_issue_comment.json")),
    ])
    .await;
    client_at(&server.url())
        .post_issue_comment(42, "hello")
        .await
        .unwrap();
    let lines = server.lines();
    assert_eq!(
        lines,
        [
            "POST /repos/octo-org/widgets/issues/42/comments",
            "POST /repos/octo-org/widgets/issues/42/comments"
        ]
    );
}

#[tokio::test]
async fn an_issue_comment_is_posted_with_its_body() {
    let server = Responder::start(vec![Reply::json(201, fixture("rest_issue_comment.json"))]).await;
    let body = Marker::new("IC_kwDOABCD1M6question", 1, false)
        .append_to("Thanks, the changelog now lists the retry fix.");
    let posted = client_at(&server.url())
        .post_issue_comment(42, &body)
        .await
        .unwrap();
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0].line(),
        "POST /repos/octo-org/widgets/issues/42/comments"
    );
    assert_eq!(seen[0].json(), json!({ "body": body }));
    assert_github_headers(&seen[0]);
    assert_eq!(posted.id, "IC_kwDOABCD1M6comment1");
    assert_eq!(posted.database_id, Some(2_200_000_001));
    assert_eq!(posted.review_state, None);
    assert_eq!(
        posted.marker.map(|m| m.item),
        Some("IC_kwDOABCD1M6question".to_owned())
    );
}

#[tokio::test]
async fn the_marker_is_found_in_the_thread_and_only_for_its_item() {
    let server = Responder::start(vec![Reply::json(200, fixture("thread_by_id.json"))]).await;
    let found = client_at(&server.url())
        .find_marker_reply(42, &ItemRef::Thread(THREAD.into()), "shepherd-bot")
        .await
        .unwrap()
        .expect("our reply carries the marker");
    assert_eq!(found.id, "PRRC_kwDOABCD1M5bbbb1");
    assert_eq!(found.database_id, Some(ROOT + 1));
    assert_eq!(found.review_state, Some(ReviewState::Commented));
    assert_eq!(found.marker, Some(Marker::new(THREAD, 1, true)));
    let seen = server.seen();
    assert_eq!(seen[0].operation().as_deref(), Some("ThreadById"));
    assert_eq!(seen[0].json()["variables"], json!({ "id": THREAD }));

    // A marker names one item: none in this thread names this one.
    let server = Responder::start(vec![Reply::json(200, fixture("thread_by_id.json"))]).await;
    let none = client_at(&server.url())
        .find_marker_reply(
            42,
            &ItemRef::Thread("PRRT_kwDOABCD1M5nothing".into()),
            "shepherd-bot",
        )
        .await
        .unwrap();
    assert_eq!(none, None);
}

#[tokio::test]
async fn a_marker_in_someone_elses_comment_is_never_the_reply() {
    // Comment 2 (by octocat) quotes a marker for another thread: markers
    // count only in the viewer's comments, so it is no reply of ours, and
    // it would be the reply of an octocat viewer.
    let mut thread = fixture("thread_by_id.json");
    thread["data"]["node"]["id"] = "PRRT_kwDOABCD1M5other".into();
    let server = Responder::start(vec![
        Reply::json(200, thread.clone()),
        Reply::json(200, thread),
    ])
    .await;
    let client = client_at(&server.url());
    let other = ItemRef::Thread("PRRT_kwDOABCD1M5other".into());
    let none = client
        .find_marker_reply(42, &other, "shepherd-bot")
        .await
        .unwrap();
    assert_eq!(none, None);
    let found = client
        .find_marker_reply(42, &other, "OctoCat")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.id, "PRRC_kwDOABCD1M5bbbb2");
    assert_eq!(found.author.unwrap().login, "octocat");
}

#[tokio::test]
async fn a_later_pasted_marker_does_not_hide_our_reply() {
    // Someone pastes our marker after our reply: the reply found is still
    // ours, so a retried reply is neither doubled nor suppressed.
    let mut thread = fixture("thread_by_id.json");
    let nodes = thread["data"]["node"]["comments"]["nodes"]
        .as_array_mut()
        .unwrap();
    let mut forged = nodes[2].clone();
    forged["id"] = "PRRC_kwDOABCD1M5forged".into();
    forged["body"] = Marker::new(THREAD, 2, false).append_to("Done!").into();
    nodes.push(forged);
    let server = Responder::start(vec![Reply::json(200, thread)]).await;
    let found = client_at(&server.url())
        .find_marker_reply(42, &ItemRef::Thread(THREAD.into()), "shepherd-bot")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.id, "PRRC_kwDOABCD1M5bbbb1");
    assert_eq!(found.marker, Some(Marker::new(THREAD, 1, true)));
}

#[tokio::test]
async fn the_marker_is_found_on_a_later_page_of_a_long_thread() {
    let mut first = fixture("thread_by_id.json");
    let nodes = &mut first["data"]["node"]["comments"];
    nodes["pageInfo"] = json!({ "hasNextPage": true, "endCursor": "c100" });
    nodes["nodes"].as_array_mut().unwrap().truncate(1);
    let later = json!({ "data": { "node": { "comments": {
        "totalCount": 101,
        "pageInfo": { "hasNextPage": false, "endCursor": "c101" },
        "nodes": [fixture("thread_by_id.json")["data"]["node"]["comments"]["nodes"][1].clone()],
    } } } });
    let server = Responder::start(vec![Reply::json(200, first), Reply::json(200, later)]).await;
    let found = client_at(&server.url())
        .find_marker_reply(42, &ItemRef::Thread(THREAD.into()), "shepherd-bot")
        .await
        .unwrap();
    assert_eq!(
        found.map(|f| f.id).as_deref(),
        Some("PRRC_kwDOABCD1M5bbbb1")
    );
    let seen = server.seen();
    assert_eq!(seen[1].operation().as_deref(), Some("ThreadComments"));
    assert_eq!(
        seen[1].json()["variables"],
        json!({ "id": THREAD, "cursor": "c100" })
    );
}

#[tokio::test]
async fn the_marker_of_a_top_level_item_is_found_among_conversation_comments() {
    let mut comments = fixture("pull_request_comments.json");
    let marked = Marker::new("IC_kwDOABCD1M5zzzz1", 2, false).append_to("Done.");
    comments["data"]["repository"]["pullRequest"]["comments"]["nodes"]
        .as_array_mut()
        .unwrap()
        .push(json!({
            "id": "IC_kwDOABCD1M5zzzz9",
            "databaseId": 2100000009,
            "body": marked,
            "url": "https://github.com/octo-org/widgets/pull/42#issuecomment-2100000009",
            "createdAt": "2024-05-02T12:00:00Z",
            "author": { "__typename": "User", "login": "shepherd-bot" }
        }));
    let server = Responder::start(vec![
        Reply::json(200, comments.clone()),
        Reply::json(200, comments),
    ])
    .await;
    let client = client_at(&server.url());
    let found = client
        .find_marker_reply(
            42,
            &ItemRef::TopLevel("IC_kwDOABCD1M5zzzz1".into()),
            "shepherd-bot",
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.id, "IC_kwDOABCD1M5zzzz9");
    assert_eq!(found.marker.unwrap().round, 2);
    let none = client
        .find_marker_reply(
            42,
            &ItemRef::TopLevel("IC_kwDOABCD1M5zzzz2".into()),
            "shepherd-bot",
        )
        .await
        .unwrap();
    assert_eq!(none, None);
    let seen = server.seen();
    assert_eq!(seen[0].operation().as_deref(), Some("PullRequestComments"));
    assert_eq!(seen[0].json()["variables"]["number"], 42);
}

fn resolved(is_resolved: bool) -> Reply {
    Reply::json(
        200,
        json!({ "data": { "resolveReviewThread": { "thread": { "id": THREAD, "isResolved": is_resolved } } } }),
    )
}

fn thread_state(is_resolved: bool) -> Reply {
    let mut thread = fixture("thread_by_id.json");
    thread["data"]["node"]["isResolved"] = is_resolved.into();
    Reply::json(200, thread)
}

#[tokio::test]
async fn resolve_sends_the_mutation_once() {
    let server = Responder::start(vec![resolved(true)]).await;
    client_at(&server.url())
        .resolve_thread(THREAD)
        .await
        .unwrap();
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    let body = seen[0].json();
    assert_eq!(body["operationName"], "ResolveReviewThread");
    assert!(body["query"]
        .as_str()
        .unwrap()
        .contains("mutation ResolveReviewThread("));
    assert_eq!(body["variables"], json!({ "threadId": THREAD }));
    assert_github_headers(&seen[0]);
}

#[tokio::test]
async fn a_resolve_lost_in_a_502_that_landed_is_not_sent_again() {
    let server = Responder::start(vec![status(502, "Bad Gateway"), thread_state(true)]).await;
    client_at(&server.url())
        .resolve_thread(THREAD)
        .await
        .unwrap();
    let ops: Vec<Option<String>> = server.seen().iter().map(Seen::operation).collect();
    assert_eq!(
        ops,
        [
            Some("ResolveReviewThread".into()),
            Some("ThreadById".into())
        ]
    );
}

#[tokio::test]
async fn a_resolve_lost_in_a_502_that_did_not_land_is_sent_once_more() {
    let server = Responder::start(vec![
        status(502, "Bad Gateway"),
        thread_state(false),
        resolved(true),
    ])
    .await;
    client_at(&server.url())
        .resolve_thread(THREAD)
        .await
        .unwrap();
    let ops: Vec<String> = server.seen().iter().filter_map(Seen::operation).collect();
    assert_eq!(
        ops,
        ["ResolveReviewThread", "ThreadById", "ResolveReviewThread"]
    );

    // Twice lost: the error, after two mutations in all.
    let server = Responder::start(vec![
        status(502, "Bad Gateway"),
        thread_state(false),
        status(502, "Bad Gateway"),
        resolved(true),
    ])
    .await;
    let err = client_at(&server.url())
        .resolve_thread(THREAD)
        .await
        .unwrap_err();
    assert!(
        matches!(err, ForgeError::Http { status: 502, .. }),
        "{err:?}"
    );
    assert_eq!(server.count(), 3);
}

#[tokio::test]
async fn a_refused_or_unconfirmed_resolve_is_an_error_at_once() {
    let server = Responder::start(vec![Reply::json(
        200,
        json!({ "data": { "resolveReviewThread": null }, "errors": [{
            "type": "FORBIDDEN",
            "path": ["resolveReviewThread"],
            "message": "shepherd-bot does not have the correct permissions to execute `ResolveReviewThread`"
        }] }),
    )])
    .await;
    let err = client_at(&server.url())
        .resolve_thread(THREAD)
        .await
        .unwrap_err();
    assert!(matches!(err, ForgeError::GraphQl { .. }), "{err:?}");
    assert_eq!(server.count(), 1);

    let server = Responder::start(vec![resolved(false)]).await;
    let err = client_at(&server.url())
        .resolve_thread(THREAD)
        .await
        .unwrap_err();
    assert!(matches!(err, ForgeError::Unconfirmed { .. }), "{err:?}");
    assert_eq!(server.count(), 1);
}

#[tokio::test]
async fn pull_request_edits_send_only_the_fields_given() {
    let pr = json!({ "number": 42, "title": "New title" });
    let server = Responder::start(vec![Reply::json(200, pr.clone()), Reply::json(200, pr)]).await;
    let client = client_at(&server.url());
    client
        .update_pull_request(42, Some("New title"), None)
        .await
        .unwrap();
    client.update_pull_request(42, None, None).await.unwrap();
    client
        .update_pull_request(42, Some("T"), Some("Body\n\nmore"))
        .await
        .unwrap();
    let seen = server.seen();
    assert_eq!(seen.len(), 2, "nothing to change sends nothing");
    assert_eq!(seen[0].line(), "PATCH /repos/octo-org/widgets/pulls/42");
    assert_eq!(seen[0].json(), json!({ "title": "New title" }));
    assert_eq!(
        seen[1].json(),
        json!({ "title": "T", "body": "Body\n\nmore" })
    );
}

#[tokio::test]
async fn labels_are_added_and_removed_by_name() {
    let labels = json!([{ "id": 208045946, "node_id": "MDU6TGFiZWwyMDgwNDU5NDY=", "name": "bug", "color": "f29513", "default": true }]);
    let server = Responder::start(vec![
        Reply::json(200, labels.clone()),
        Reply::json(200, labels),
        status(404, "Label does not exist"),
    ])
    .await;
    let client = client_at(&server.url());
    client
        .add_labels(42, &["bug".to_owned(), "needs review".to_owned()])
        .await
        .unwrap();
    client.add_labels(42, &[]).await.unwrap();
    client.remove_label(42, "area/ci").await.unwrap();
    client.remove_label(42, "absent").await.unwrap();
    assert!(client.remove_label(42, " ").await.is_err());
    let seen = server.seen();
    assert_eq!(
        server.lines(),
        [
            "POST /repos/octo-org/widgets/issues/42/labels",
            "DELETE /repos/octo-org/widgets/issues/42/labels/area%2Fci",
            "DELETE /repos/octo-org/widgets/issues/42/labels/absent",
        ]
    );
    assert_eq!(seen[0].json(), json!({ "labels": ["bug", "needs review"] }));
    assert_eq!(seen[1].json(), Value::Null);
}

#[tokio::test]
async fn rerunning_failed_jobs_is_one_post() {
    let server = Responder::start(vec![
        Reply::json(201, json!({})),
        status(502, "Bad Gateway"),
    ])
    .await;
    let client = client_at(&server.url());
    client.rerun_failed_jobs(30_433_642).await.unwrap();
    let err = client.rerun_failed_jobs(30_433_642).await.unwrap_err();
    assert!(err.is_transient());
    assert_eq!(
        server.lines(),
        [
            "POST /repos/octo-org/widgets/actions/runs/30433642/rerun-failed-jobs",
            "POST /repos/octo-org/widgets/actions/runs/30433642/rerun-failed-jobs",
        ]
    );
}

#[tokio::test]
async fn every_reply_of_ours_is_found_oldest_first_and_only_ours() {
    // Two runs replied at once: the viewer's two comments with the marker,
    // oldest first; someone else's pasted copy is not among them.
    let mut thread = fixture("thread_by_id.json");
    let nodes = thread["data"]["node"]["comments"]["nodes"]
        .as_array_mut()
        .unwrap();
    let ours = nodes[1].clone();
    let mut double = ours.clone();
    double["id"] = "PRRC_kwDOABCD1M5double".into();
    double["databaseId"] = json!(ROOT + 9);
    let mut pasted = ours.clone();
    pasted["id"] = "PRRC_kwDOABCD1M5pasted".into();
    pasted["author"]["login"] = "octocat".into();
    nodes.push(pasted);
    nodes.push(double);
    let server = Responder::start(vec![Reply::json(200, thread)]).await;
    let found = client_at(&server.url())
        .find_marker_replies(42, &ItemRef::Thread(THREAD.into()), "shepherd-bot")
        .await
        .unwrap();
    let ids: Vec<_> = found.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["PRRC_kwDOABCD1M5bbbb1", "PRRC_kwDOABCD1M5double"]);
}

#[tokio::test]
async fn a_reply_is_deleted_by_its_rest_route_once_and_a_gone_one_is_fine() {
    let server = Responder::start(vec![
        Reply::json(204, Value::Null),
        Reply::json(204, Value::Null),
        status(404, "Not Found"),
        status(403, "Must have admin rights to Repository."),
    ])
    .await;
    let client = client_at(&server.url());
    let thread = ItemRef::Thread(THREAD.into());
    let top = ItemRef::TopLevel("IC_kwDOABCD1M6question".into());
    client.delete_comment(42, &thread, REPLY_ID).await.unwrap();
    client
        .delete_comment(42, &top, 2_200_000_001)
        .await
        .unwrap();
    client.delete_comment(42, &thread, REPLY_ID).await.unwrap();
    let err = client.delete_comment(42, &top, 7).await.unwrap_err();
    assert!(matches!(err, ForgeError::Forbidden { .. }), "{err:?}");
    assert_eq!(
        server.lines(),
        [
            format!("DELETE /repos/octo-org/widgets/pulls/comments/{REPLY_ID}"),
            "DELETE /repos/octo-org/widgets/issues/comments/2200000001".to_owned(),
            format!("DELETE /repos/octo-org/widgets/pulls/comments/{REPLY_ID}"),
            "DELETE /repos/octo-org/widgets/issues/comments/7".to_owned(),
        ]
    );
    assert_github_headers(&server.seen()[0]);
}

/// `GET /repos/{o}/{r}/issues/{n}/events` in the shape of GitHub's "List
/// issue events" (REST): only `labeled` and `unlabeled` are label events;
/// a bot actor loses REST's `[bot]` suffix.
#[tokio::test]
async fn label_events_are_read_from_the_issue_events() {
    let actor = |login: &str, kind: &str| json!({ "login": login, "id": 1, "type": kind });
    let events = json!([
        { "id": 1, "node_id": "LE_1", "event": "labeled", "actor": actor("octocat", "User"),
          "commit_id": null, "commit_url": null, "created_at": "2024-03-01T10:00:00Z",
          "performed_via_github_app": null, "label": { "name": "shepherd-approved", "color": "ededed" } },
        { "id": 2, "node_id": "CE_2", "event": "closed", "actor": actor("octocat", "User"),
          "commit_id": null, "commit_url": null, "created_at": "2024-03-01T11:00:00Z",
          "performed_via_github_app": null },
        { "id": 3, "node_id": "UNLE_3", "event": "unlabeled", "actor": actor("github-actions[bot]", "Bot"),
          "commit_id": null, "commit_url": null, "created_at": "2024-03-01T12:00:00Z",
          "performed_via_github_app": null, "label": { "name": "shepherd-approved", "color": "ededed" } }
    ]);
    let server = Responder::start(vec![Reply::json(200, events)]).await;
    let client = client_at(&server.url());
    let got = client.label_events(42).await.unwrap();
    assert_eq!(
        server.lines(),
        ["GET /repos/octo-org/widgets/issues/42/events?per_page=100"]
    );
    let got: Vec<(bool, &str, &str, AuthorKind, &str)> = got
        .iter()
        .map(|e| {
            let a = e.actor.as_ref().unwrap();
            (
                e.added,
                e.label.as_str(),
                a.login.as_str(),
                a.kind,
                e.created_at.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                true,
                "shepherd-approved",
                "octocat",
                AuthorKind::User,
                "2024-03-01T10:00:00Z"
            ),
            (
                false,
                "shepherd-approved",
                "github-actions",
                AuthorKind::Bot,
                "2024-03-01T12:00:00Z"
            ),
        ]
    );
}
