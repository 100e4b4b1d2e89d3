//! Many mutations at once leave a consistent state.

use std::collections::BTreeSet;

use serde_json::json;

use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixty_concurrent_mutations_leave_a_consistent_state() {
    let emu = start(scenario(10, 1)).await;
    let roots: Vec<u64> = (0..10).map(|t| root_comment_id(&emu, t)).collect();
    let thread_ids: Vec<String> = (0..10).map(|t| thread_node_id(&emu, t)).collect();
    let api = emu.api_url();
    let graphql_url = emu.graphql_url();

    let mut tasks = Vec::new();
    // 20 REST replies, two per thread, alternating authors.
    for i in 0..20 {
        let url = format!(
            "{api}/repos/acme/widgets/pulls/1/comments/{}/replies",
            roots[i % 10]
        );
        let token = if i % 2 == 0 { ALICE } else { BOB };
        tasks.push(tokio::spawn(async move {
            let (status, _, body) = rest(
                reqwest::Method::POST,
                &url,
                Some(token),
                Some(json!({ "body": format!("reply {i}") })),
            )
            .await;
            (status, body)
        }));
    }
    // 20 issue comments.
    for i in 0..20 {
        let url = format!("{api}/repos/acme/widgets/issues/1/comments");
        tasks.push(tokio::spawn(async move {
            let (status, _, body) = rest(
                reqwest::Method::POST,
                &url,
                Some(ALICE),
                Some(json!({ "body": format!("comment {i}") })),
            )
            .await;
            (status, body)
        }));
    }
    // 10 GraphQL replies and 10 resolves (each thread resolved once, by two
    // racing callers: idempotent).
    for i in 0..10 {
        let (url, id) = (graphql_url.clone(), thread_ids[i].clone());
        tasks.push(tokio::spawn(async move {
            graphql_at(
                &url,
                Some(BOB),
                "mutation AddPullRequestReviewThreadReply($id: ID!, $b: String!) { addPullRequestReviewThreadReply(input: {pullRequestReviewThreadId: $id, body: $b}) { comment { id } } }",
                json!({ "id": id, "b": format!("graphql reply {i}") }),
            )
            .await
        }));
        let (url, id) = (graphql_url.clone(), thread_ids[i / 2 * 2].clone());
        tasks.push(tokio::spawn(async move {
            graphql_at(
                &url,
                Some(ALICE),
                "mutation ResolveReviewThread($id: ID!) { resolveReviewThread(input: {threadId: $id}) { thread { isResolved } } }",
                json!({ "id": id }),
            )
            .await
        }));
    }
    assert_eq!(tasks.len(), 60);
    for task in tasks {
        let (status, body) = task.await.unwrap();
        assert!(status == 200 || status == 201, "status {status}: {body}");
        assert!(body.get("errors").is_none(), "{body}");
    }

    let state = emu.state_json();
    let pr = &state["pull_requests"][0];
    let threads = pr["threads"].as_array().unwrap();
    let mut ids = BTreeSet::new();
    let mut count = 0;
    for (t, thread) in threads.iter().enumerate() {
        let comments = thread["comments"].as_array().unwrap();
        // The scenario's (one in thread 0, two elsewhere), two REST
        // replies, one GraphQL reply.
        let initial = if t == 0 { 1 } else { 2 };
        assert_eq!(comments.len(), initial + 3, "thread {t}");
        let root = comments[0]["database_id"].as_u64().unwrap();
        for reply in &comments[initial..] {
            assert_eq!(reply["reply_to"], root);
        }
        // Creation times follow the comment order.
        let times: Vec<&str> = comments
            .iter()
            .map(|c| c["created_at"].as_str().unwrap())
            .collect();
        let mut sorted = times.clone();
        sorted.sort();
        assert_eq!(times, sorted);
        assert_eq!(thread["resolved"], t % 2 == 0, "thread {t}");
        for c in comments {
            assert!(ids.insert(c["database_id"].as_u64().unwrap()));
            count += 1;
        }
    }
    assert_eq!(count, 1 + 9 * 2 + 10 * 3);
    let issue_comments = pr["issue_comments"].as_array().unwrap();
    assert_eq!(issue_comments.len(), 21);
    for c in issue_comments {
        assert!(ids.insert(c["database_id"].as_u64().unwrap()));
    }
    for r in pr["reviews"].as_array().unwrap() {
        assert!(ids.insert(r["database_id"].as_u64().unwrap()));
    }
    let bodies: BTreeSet<&str> = issue_comments
        .iter()
        .filter_map(|c| c["body"].as_str())
        .collect();
    assert_eq!(bodies.len(), 21);
    // Every request was counted.
    assert_eq!(
        emu.request_count(
            "POST /repos/{owner}/{repo}/pulls/{number}/comments/{comment_id}/replies"
        ),
        20
    );
    assert_eq!(
        emu.request_count("POST /repos/{owner}/{repo}/issues/{number}/comments"),
        20
    );
    assert_eq!(emu.request_count("graphql:ResolveReviewThread"), 10);
    assert_eq!(
        emu.request_count("graphql:AddPullRequestReviewThreadReply"),
        10
    );
}
