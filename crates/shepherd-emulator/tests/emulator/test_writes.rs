//! Write APIs with GitHub's effects: replies (REST and GraphQL), pending
//! reviews, resolve/unresolve, issue comments with Link pagination, PR
//! edits, labels, refusals for read-only tokens.

use reqwest::Method;
use serde_json::{json, Value};

use crate::common::*;

const PR: &str = "/repos/acme/widgets/pulls/1";

const RESOLVE: &str = r#"mutation ResolveReviewThread($threadId: ID!) {
  resolveReviewThread(input: { threadId: $threadId }) { thread { id isResolved } } }"#;
const UNRESOLVE: &str = r#"mutation UnresolveReviewThread($threadId: ID!) {
  unresolveReviewThread(input: { threadId: $threadId }) { thread { id isResolved viewerCanResolve } } }"#;
const ADD_REPLY: &str = r#"mutation AddPullRequestReviewThreadReply($id: ID!, $body: String!) {
  addPullRequestReviewThreadReply(input: { pullRequestReviewThreadId: $id, body: $body }) {
    comment { id databaseId body author { __typename login } pullRequestReview { state } replyTo { databaseId } } } }"#;
/// Shepherd's `ThreadById` document.
const THREAD_BY_ID: &str = r#"query ThreadById($id: ID!) {
  node(id: $id) { __typename ... on PullRequestReviewThread { id isResolved
    comments(first: 100) { totalCount pageInfo { hasNextPage endCursor }
      nodes { ...ReviewCommentFields } } } } }
fragment ReviewCommentFields on PullRequestReviewComment {
  id databaseId body url createdAt diffHunk author { __typename login } pullRequestReview { state } }"#;

#[tokio::test]
async fn rest_reply_is_201_with_githubs_shape_and_reads_back() {
    let emu = start(scenario(2, 1)).await;
    let root = root_comment_id(&emu, 0);
    let (status, reply) = rest_post(
        &emu,
        &format!("{PR}/comments/{root}/replies"),
        ALICE,
        json!({ "body": "Fixed in abc123." }),
    )
    .await;
    assert_eq!(status, 201, "{reply}");
    let id = reply["id"].as_u64().unwrap();
    assert!(reply["node_id"].as_str().unwrap().starts_with("PRRC_"));
    assert_eq!(reply["in_reply_to_id"], root);
    assert_eq!(reply["body"], "Fixed in abc123.");
    assert_eq!(reply["user"]["login"], "alice");
    assert_eq!(reply["user"]["type"], "User");
    assert_eq!(reply["path"], "src/lib.rs");
    assert!(reply["html_url"]
        .as_str()
        .unwrap()
        .ends_with(&format!("/pull/1#discussion_r{id}")));
    assert!(reply["created_at"].as_str().unwrap().ends_with('Z'));
    assert!(reply["diff_hunk"].as_str().unwrap().starts_with("@@ "));
    let review_id = reply["pull_request_review_id"].as_u64().unwrap();

    // Read back, over the Enterprise-style path too.
    let (status, _, read) = rest(
        Method::GET,
        &format!(
            "{}/repos/acme/widgets/pulls/comments/{id}",
            emu.enterprise_api_url()
        ),
        Some(BOB),
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(read["in_reply_to_id"], root);
    assert_eq!(read["body"], "Fixed in abc123.");
    let (status, review) = rest_get(
        &emu.api_url(),
        &format!("{PR}/reviews/{review_id}"),
        Some(ALICE),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(review["state"], "COMMENTED");
    assert!(review["submitted_at"].is_string());

    // A reply to the reply joins the same thread, answering the root.
    let (status, second) = rest_post(
        &emu,
        &format!("{PR}/comments/{id}/replies"),
        BOB,
        json!({ "body": "Thanks" }),
    )
    .await;
    assert_eq!(status, 201);
    assert_eq!(second["in_reply_to_id"], root);
    let threads = threads(&emu, BOB).await;
    assert_eq!(threads[0]["comments"]["totalCount"], 3);
    assert_eq!(threads[1]["comments"]["totalCount"], 2);

    let (status, _) = rest_post(
        &emu,
        &format!("{PR}/comments/999999/replies"),
        ALICE,
        json!({ "body": "x" }),
    )
    .await;
    assert_eq!(status, 404);
    let (status, body) = rest_post(
        &emu,
        &format!("{PR}/comments/{root}/replies"),
        ALICE,
        json!({ "body": "  " }),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        emu.request_count(
            "POST /repos/{owner}/{repo}/pulls/{number}/comments/{comment_id}/replies"
        ),
        4
    );
}

#[tokio::test]
async fn reply_lands_in_the_pending_review_and_only_its_author_sees_it() {
    let emu = start(scenario(1, 1)).await;
    // alice starts a review and leaves it pending (no event).
    let (status, pending) = rest_post(
        &emu,
        &format!("{PR}/reviews"),
        ALICE,
        json!({ "body": "draft", "comments": [{ "path": "src/lib.rs", "line": 5, "body": "draft note" }] }),
    )
    .await;
    assert_eq!(status, 200, "{pending}");
    assert_eq!(pending["state"], "PENDING");
    assert!(pending.get("submitted_at").is_none());
    let pending_id = pending["id"].as_u64().unwrap();

    let root = root_comment_id(&emu, 0);
    let (status, reply) = rest_post(
        &emu,
        &format!("{PR}/comments/{root}/replies"),
        ALICE,
        json!({ "body": "my reply" }),
    )
    .await;
    assert_eq!(status, 201);
    assert_eq!(reply["pull_request_review_id"], pending_id);
    let reply_id = reply["id"].as_u64().unwrap();

    // alice reads it back and sees the PENDING review: what Shepherd checks.
    let (status, review) = rest_get(
        &emu.api_url(),
        &format!("{PR}/reviews/{pending_id}"),
        Some(ALICE),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(review["state"], "PENDING");
    // Nobody else sees the reply, the review, or the draft thread.
    let (status, _) = rest_get(
        &emu.api_url(),
        &format!("/repos/acme/widgets/pulls/comments/{reply_id}"),
        Some(BOB),
    )
    .await;
    assert_eq!(status, 404);
    let (status, _) = rest_get(
        &emu.api_url(),
        &format!("{PR}/reviews/{pending_id}"),
        Some(BOB),
    )
    .await;
    assert_eq!(status, 404);
    let as_bob = threads(&emu, BOB).await;
    assert_eq!(as_bob.len(), 1);
    assert_eq!(as_bob[0]["comments"]["totalCount"], 1);
    let as_alice = threads(&emu, ALICE).await;
    assert_eq!(as_alice.len(), 2);
    let mine = &as_alice[0]["comments"]["nodes"][1];
    assert_eq!(mine["body"], "my reply");
    assert_eq!(mine["pullRequestReview"]["state"], "PENDING");
    let (_, _, listed) = rest(
        Method::GET,
        &format!("{}{PR}/comments", emu.api_url()),
        Some(BOB),
        None,
    )
    .await;
    assert_eq!(listed.as_array().unwrap().len(), 1);

    // The GraphQL reply lands there too.
    let body = graphql(
        &emu,
        ALICE,
        ADD_REPLY,
        json!({ "id": thread_node_id(&emu, 0), "body": "graphql reply" }),
    )
    .await;
    let comment = &body["data"]["addPullRequestReviewThreadReply"]["comment"];
    assert_eq!(comment["pullRequestReview"]["state"], "PENDING", "{body}");

    // Submitting makes everything visible.
    let (status, submitted) = rest_post(
        &emu,
        &format!("{PR}/reviews/{pending_id}/events"),
        ALICE,
        json!({ "event": "COMMENT" }),
    )
    .await;
    assert_eq!(status, 200, "{submitted}");
    assert_eq!(submitted["state"], "COMMENTED");
    let as_bob = threads(&emu, BOB).await;
    assert_eq!(as_bob.len(), 2);
    assert_eq!(as_bob[0]["comments"]["totalCount"], 3);
}

#[tokio::test]
async fn resolve_is_idempotent_and_unresolve_works() {
    let emu = start(scenario(2, 1)).await;
    let id = thread_node_id(&emu, 0);
    for _ in 0..2 {
        let body = graphql(&emu, ALICE, RESOLVE, json!({ "threadId": id })).await;
        assert!(body.get("errors").is_none(), "{body}");
        assert_eq!(
            body["data"]["resolveReviewThread"]["thread"]["isResolved"],
            true
        );
        assert_eq!(
            body["data"]["resolveReviewThread"]["thread"]["id"],
            id.as_str()
        );
    }
    let body = graphql(&emu, ALICE, THREAD_BY_ID, json!({ "id": id })).await;
    assert_eq!(
        body["data"]["node"]["__typename"],
        "PullRequestReviewThread"
    );
    assert_eq!(body["data"]["node"]["isResolved"], true);
    assert_eq!(body["data"]["node"]["comments"]["totalCount"], 1);
    assert_eq!(
        emu.state_json()["pull_requests"][0]["threads"][0]["resolved_by"],
        "alice"
    );
    // The other thread is untouched.
    assert_eq!(
        emu.state_json()["pull_requests"][0]["threads"][1]["resolved"],
        false
    );

    let body = graphql(&emu, BOB, UNRESOLVE, json!({ "threadId": id })).await;
    let thread = &body["data"]["unresolveReviewThread"]["thread"];
    assert_eq!(thread["isResolved"], false, "{body}");
    assert_eq!(thread["viewerCanResolve"], true);

    let body = graphql(&emu, ALICE, RESOLVE, json!({ "threadId": "PRRT_bm9wZQ" })).await;
    assert_eq!(body["data"]["resolveReviewThread"], Value::Null);
    assert_eq!(body["errors"][0]["type"], "NOT_FOUND");
    assert_eq!(emu.request_count("graphql:ResolveReviewThread"), 3);
}

#[tokio::test]
async fn add_thread_reply_mutation_answers_the_comment() {
    let emu = start(scenario(1, 2)).await;
    let body = graphql(
        &emu,
        BOB,
        ADD_REPLY,
        json!({ "id": thread_node_id(&emu, 0), "body": "via GraphQL" }),
    )
    .await;
    assert!(body.get("errors").is_none(), "{body}");
    let comment = &body["data"]["addPullRequestReviewThreadReply"]["comment"];
    assert_eq!(comment["body"], "via GraphQL");
    assert_eq!(comment["author"]["login"], "bob");
    assert_eq!(comment["pullRequestReview"]["state"], "COMMENTED");
    assert_eq!(comment["replyTo"]["databaseId"], root_comment_id(&emu, 0));
    assert!(comment["id"].as_str().unwrap().starts_with("PRRC_"));
    assert_eq!(threads(&emu, ALICE).await[0]["comments"]["totalCount"], 3);
}

/// Follows `rel="next"` links from `url`; returns every item in order.
async fn follow_pages(url: String, token: &str) -> (Vec<Value>, usize) {
    let mut items = Vec::new();
    let mut next = Some(url);
    let mut pages = 0;
    while let Some(url) = next.take() {
        let (status, headers, page) = rest(Method::GET, &url, Some(token), None).await;
        assert_eq!(status, 200, "{page}");
        pages += 1;
        items.extend(page.as_array().unwrap().iter().cloned());
        next = headers
            .get("link")
            .and_then(|l| l.to_str().ok())
            .and_then(|link| {
                link.split(',')
                    .find(|p| p.contains("rel=\"next\""))
                    .map(|p| {
                        let start = p.find('<').unwrap() + 1;
                        let end = p.find('>').unwrap();
                        p[start..end].to_owned()
                    })
            });
    }
    (items, pages)
}

#[tokio::test]
async fn issue_comments_are_created_and_paginate_with_link_headers() {
    let emu = start(scenario(0, 0)).await;
    for i in 0..5 {
        let (status, comment) = rest_post(
            &emu,
            "/repos/acme/widgets/issues/1/comments",
            ALICE,
            json!({ "body": format!("comment {i}") }),
        )
        .await;
        assert_eq!(status, 201, "{comment}");
        assert!(comment["node_id"].as_str().unwrap().starts_with("IC_"));
        assert!(comment["html_url"]
            .as_str()
            .unwrap()
            .contains("#issuecomment-"));
        assert!(comment["issue_url"]
            .as_str()
            .unwrap()
            .ends_with("/issues/1"));
    }
    for root in [emu.api_url(), emu.enterprise_api_url()] {
        let url = format!("{root}/repos/acme/widgets/issues/1/comments?per_page=2");
        let (status, headers, first) = rest(Method::GET, &url, Some(BOB), None).await;
        assert_eq!(status, 200);
        assert_eq!(first.as_array().unwrap().len(), 2);
        let link = headers["link"].to_str().unwrap();
        assert!(
            link.contains(&format!(
                "<{root}/repos/acme/widgets/issues/1/comments?per_page=2&page=2>; rel=\"next\""
            )),
            "{link}"
        );
        assert!(link.contains("page=3>; rel=\"last\""), "{link}");
        let (items, pages) = follow_pages(url, BOB).await;
        assert_eq!(pages, 3);
        let bodies: Vec<&str> = items.iter().map(|c| c["body"].as_str().unwrap()).collect();
        assert_eq!(
            bodies,
            [
                "top-level",
                "comment 0",
                "comment 1",
                "comment 2",
                "comment 3",
                "comment 4"
            ]
        );
    }
    let id = emu.state_json()["pull_requests"][0]["issue_comments"][1]["database_id"]
        .as_u64()
        .unwrap();
    let (status, one) = rest_get(
        &emu.api_url(),
        &format!("/repos/acme/widgets/issues/comments/{id}"),
        Some(BOB),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(one["body"], "comment 0");
    // GraphQL sees them too.
    let body = graphql(
        &emu,
        BOB,
        r#"query C { repository(owner: "acme", name: "widgets") { pullRequest(number: 1) { comments(first: 10) { totalCount } } } }"#,
        json!({}),
    )
    .await;
    assert_eq!(
        body["data"]["repository"]["pullRequest"]["comments"]["totalCount"],
        6
    );
}

#[tokio::test]
async fn pull_request_title_and_body_are_edited() {
    let emu = start(scenario(0, 0)).await;
    let (status, _, pr) = rest(
        Method::PATCH,
        &format!("{}{PR}", emu.api_url()),
        Some(ALICE),
        Some(json!({ "title": "Better title", "body": "Now with a body.\n\nMore." })),
    )
    .await;
    assert_eq!(status, 200, "{pr}");
    assert_eq!(pr["title"], "Better title");
    assert_eq!(pr["body"], "Now with a body.\n\nMore.");
    let body = graphql(
        &emu,
        BOB,
        r#"query T { repository(owner: "acme", name: "widgets") { pullRequest(number: 1) { title body } } }"#,
        json!({}),
    )
    .await;
    assert_eq!(
        body["data"]["repository"]["pullRequest"]["title"],
        "Better title"
    );
    // Only the fields sent change.
    let (_, _, pr) = rest(
        Method::PATCH,
        &format!("{}{PR}", emu.api_url()),
        Some(BOB),
        Some(json!({ "body": "b" })),
    )
    .await;
    assert_eq!(pr["title"], "Better title");
    assert_eq!(pr["body"], "b");
    let (status, _, _) = rest(
        Method::PATCH,
        &format!("{}{PR}", emu.api_url()),
        Some(ALICE),
        Some(json!({ "title": "" })),
    )
    .await;
    assert_eq!(status, 422);
}

#[tokio::test]
async fn put_labels_replaces_every_label_with_events() {
    let emu = start(scenario(0, 0)).await;
    let url = format!("{}/repos/acme/widgets/issues/1/labels", emu.api_url());
    let put = |body: Value, token: &'static str| {
        let url = url.clone();
        async move { rest(Method::PUT, &url, Some(token), Some(body)).await }
    };
    let names = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap_or_else(|| panic!("not a list: {v}"))
            .iter()
            .map(|l| l["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let (status, _, labels) = put(json!({ "labels": ["a", "b"] }), ALICE).await;
    assert_eq!(status, 200, "{labels}");
    assert_eq!(names(&labels), ["a", "b"]);
    // Every form GitHub takes: a bare array, `{"name"}` objects.
    let (_, _, labels) = put(json!(["b", { "name": "c" }]), BOB).await;
    assert_eq!(names(&labels), ["b", "c"]);
    let (_, _, labels) = put(json!({ "labels": [{ "name": "C" }] }), BOB).await;
    assert_eq!(names(&labels), ["c"]);
    // Who did what: `a` and `b` added by alice, `a` removed and `c` added
    // by bob, then `b` removed by bob.
    let (_, events) = rest_get(
        &emu.api_url(),
        "/repos/acme/widgets/issues/1/events",
        Some(ALICE),
    )
    .await;
    let seen: Vec<(String, String, String)> = events
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let text = |p: &str| e.pointer(p).and_then(Value::as_str).unwrap().to_owned();
            (text("/event"), text("/label/name"), text("/actor/login"))
        })
        .collect();
    let expect = |event: &str, label: &str, actor: &str| {
        (event.to_owned(), label.to_owned(), actor.to_owned())
    };
    assert_eq!(
        seen,
        [
            expect("labeled", "a", "alice"),
            expect("labeled", "b", "alice"),
            expect("unlabeled", "a", "bob"),
            expect("labeled", "c", "bob"),
            expect("unlabeled", "b", "bob"),
        ]
    );
    let (_, _, labels) = put(json!({ "labels": [] }), ALICE).await;
    assert_eq!(labels, json!([]));
    let (status, _, body) = put(json!({ "labels": ["x"] }), READER).await;
    assert_eq!(status, 403, "{body}");
    let (status, _, body) = put(json!({ "nope": 1 }), ALICE).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(emu.state_json()["pull_requests"][0]["labels"], json!([]));
}

#[tokio::test]
async fn labels_are_added_and_removed() {
    let emu = start(scenario(0, 0)).await;
    let labels_url = "/repos/acme/widgets/issues/1/labels";
    let (status, labels) = rest_post(
        &emu,
        labels_url,
        ALICE,
        json!({ "labels": ["bug", "needs review"] }),
    )
    .await;
    assert_eq!(status, 200, "{labels}");
    let names = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|l| l["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(&labels), ["bug", "needs review"]);
    assert!(labels[0]["node_id"].as_str().unwrap().starts_with("LA_"));
    let (_, labels) = rest_post(&emu, labels_url, ALICE, json!({ "labels": ["bug"] })).await;
    assert_eq!(names(&labels), ["bug", "needs review"]);

    let (status, _, left) = rest(
        Method::DELETE,
        &format!("{}{labels_url}/needs%20review", emu.api_url()),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!(status, 200, "{left}");
    assert_eq!(names(&left), ["bug"]);
    let (status, _, missing) = rest(
        Method::DELETE,
        &format!("{}{labels_url}/needs%20review", emu.api_url()),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(missing["message"], "Label does not exist");

    let body = graphql(
        &emu,
        BOB,
        r#"query L { repository(owner: "acme", name: "widgets") { pullRequest(number: 1) { labels(first: 10) { nodes { name } } } } }"#,
        json!({}),
    )
    .await;
    assert_eq!(
        body["data"]["repository"]["pullRequest"]["labels"]["nodes"],
        json!([{ "name": "bug" }])
    );
    let (_, pr) = rest_get(&emu.api_url(), PR, Some(BOB)).await;
    assert_eq!(names(&pr["labels"]), ["bug"]);
}

#[tokio::test]
async fn read_only_tokens_get_403_on_every_write() {
    let emu = start(scenario(1, 1)).await;
    let before = emu.state_json();
    let root = root_comment_id(&emu, 0);
    for (method, path, body) in [
        (
            Method::POST,
            format!("{PR}/comments/{root}/replies"),
            json!({ "body": "x" }),
        ),
        (
            Method::POST,
            "/repos/acme/widgets/issues/1/comments".to_owned(),
            json!({ "body": "x" }),
        ),
        (Method::PATCH, PR.to_owned(), json!({ "title": "x" })),
        (
            Method::POST,
            "/repos/acme/widgets/issues/1/labels".to_owned(),
            json!({ "labels": ["x"] }),
        ),
        (
            Method::POST,
            format!("{PR}/reviews"),
            json!({ "event": "COMMENT", "body": "x" }),
        ),
    ] {
        let (status, _, body) = rest(
            method.clone(),
            &format!("{}{path}", emu.api_url()),
            Some(READER),
            Some(body),
        )
        .await;
        assert_eq!(status, 403, "{method} {path}: {body}");
        assert_eq!(
            body["message"],
            "Resource not accessible by personal access token"
        );
    }
    let id = thread_node_id(&emu, 0);
    let body = graphql(&emu, READER, RESOLVE, json!({ "threadId": id })).await;
    assert_eq!(body["data"]["resolveReviewThread"], Value::Null);
    assert_eq!(body["errors"][0]["type"], "FORBIDDEN");
    let body = graphql(&emu, READER, ADD_REPLY, json!({ "id": id, "body": "x" })).await;
    assert_eq!(body["errors"][0]["type"], "FORBIDDEN");
    // Without access at all, the thread does not exist.
    let body = graphql(&emu, STRANGER, RESOLVE, json!({ "threadId": id })).await;
    assert_eq!(body["errors"][0]["type"], "NOT_FOUND");

    let after = emu.state_json();
    assert_eq!(before["pull_requests"], after["pull_requests"]);
}

#[tokio::test]
async fn bot_comments_are_typed_bot() {
    let emu = start(scenario(0, 0)).await;
    let outcome = emu
        .act(shepherd_emulator::Act::Review {
            user: "review-bot".into(),
            pr: None,
            event: None,
            body: Some("Actionable comments posted: 1".into()),
            threads: vec![shepherd_emulator::ActThread::new("src/lib.rs", 5, "nit")],
        })
        .await
        .unwrap();
    let threads = threads(&emu, ALICE).await;
    assert_eq!(threads.len(), 1);
    assert_eq!(threads[0]["id"], outcome.threads[0].id.as_str());
    assert_eq!(
        threads[0]["comments"]["nodes"][0]["author"],
        json!({ "__typename": "Bot", "login": "review-bot" })
    );
    let (_, _, comments) = rest(
        Method::GET,
        &format!("{}{PR}/comments", emu.api_url()),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!(comments[0]["user"]["type"], "Bot");
    assert_eq!(comments[0]["user"]["login"], "review-bot[bot]");
}
