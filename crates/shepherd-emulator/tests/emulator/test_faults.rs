//! Faults per REST route and GraphQL operation: status, GraphQL error,
//! delay, rate limits, commit-then-fail; nth, every, seeded probability; set
//! in the scenario or at run time.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{json, Value};
use shepherd_emulator::FaultSpec;

use crate::common::*;

const REPLIES: &str = "POST /repos/{owner}/{repo}/pulls/{number}/comments/{comment_id}/replies";
const RESOLVE: &str = r#"mutation ResolveReviewThread($threadId: ID!) {
  resolveReviewThread(input: { threadId: $threadId }) { thread { id isResolved } } }"#;

async fn reply(
    emu: &shepherd_emulator::RunningEmulator,
    body: &str,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let root = root_comment_id(emu, 0);
    rest(
        Method::POST,
        &format!(
            "{}/repos/acme/widgets/pulls/1/comments/{root}/replies",
            emu.api_url()
        ),
        Some(ALICE),
        Some(json!({ "body": body })),
    )
    .await
}

/// The status of alice's `GET` of PR 1.
async fn pull_status(emu: &shepherd_emulator::RunningEmulator) -> u16 {
    rest_get(&emu.api_url(), "/repos/acme/widgets/pulls/1", Some(ALICE))
        .await
        .0
}

/// The status of alice's conversation comment `x` on PR 1.
async fn comment_status(emu: &shepherd_emulator::RunningEmulator) -> u16 {
    let comment = json!({ "body": "x" });
    rest_post(emu, "/repos/acme/widgets/issues/1/comments", ALICE, comment)
        .await
        .0
}

fn replies_in_state(emu: &shepherd_emulator::RunningEmulator) -> usize {
    emu.state_json()["pull_requests"][0]["threads"][0]["comments"]
        .as_array()
        .unwrap()
        .len()
        - 1
}

#[tokio::test]
async fn the_nth_call_fails_counting_from_when_the_fault_is_set() {
    let emu = start(scenario(1, 1)).await;
    assert_eq!(reply(&emu, "before").await.0, 201);
    emu.set_fault(FaultSpec::nth(REPLIES, 2).with_status(500, None))
        .unwrap();
    assert_eq!(reply(&emu, "one").await.0, 201);
    let (status, _, body) = reply(&emu, "two").await;
    assert_eq!(status, 500);
    assert_eq!(body["message"], "Internal Server Error");
    assert_eq!(reply(&emu, "three").await.0, 201);
    // The failed call changed nothing.
    assert_eq!(replies_in_state(&emu), 3);
    let faults = &emu.state_json()["faults"];
    assert_eq!(faults[0]["calls"], 3);
    assert_eq!(faults[0]["fired"], 1);
    assert_eq!(faults[0]["target"], REPLIES);
}

#[tokio::test]
async fn every_call_fails_with_a_given_status_and_body_until_cleared() {
    let emu = start(scenario(1, 1)).await;
    let id = emu
        .set_fault(
            FaultSpec::every("GET /repos/{owner}/{repo}/pulls/{number}")
                .with_status(502, Some("<html>Bad gateway</html>")),
        )
        .unwrap();
    for root in [emu.api_url(), emu.enterprise_api_url()] {
        let response = client()
            .get(format!("{root}/repos/acme/widgets/pulls/1"))
            .bearer_auth(ALICE)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 502);
        assert!(response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain"));
        assert_eq!(response.text().await.unwrap(), "<html>Bad gateway</html>");
    }
    // Other routes are untouched.
    assert_eq!(rest_get(&emu.api_url(), "/user", Some(ALICE)).await.0, 200);
    assert!(emu.clear_fault(id));
    assert_eq!(pull_status(&emu).await, 200);
}

#[tokio::test]
async fn probability_with_a_seed_is_repeatable() {
    let pattern = |seed: u64| async move {
        let emu = start(scenario(0, 0)).await;
        emu.set_fault(FaultSpec::probability("GET /user", 0.5, seed).with_status(503, None))
            .unwrap();
        let mut statuses = Vec::new();
        for _ in 0..16 {
            statuses.push(rest_get(&emu.api_url(), "/user", Some(ALICE)).await.0);
        }
        statuses
    };
    let first = pattern(42).await;
    assert_eq!(first, pattern(42).await);
    assert!(first.contains(&503) && first.contains(&200), "{first:?}");
}

#[tokio::test]
async fn graphql_faults_hit_one_operation_with_an_error_in_a_200() {
    let emu = start(scenario(1, 1)).await;
    let mut fault = FaultSpec::nth("graphql:ResolveReviewThread", 1).with_graphql_error("boom");
    fault.error_type = Some("INTERNAL".into());
    emu.set_fault(fault).unwrap();
    // Another operation is not affected.
    let body = graphql(&emu, ALICE, "query Viewer { viewer { login } }", json!({})).await;
    assert_eq!(body["data"]["viewer"]["login"], "alice");
    let id = thread_node_id(&emu, 0);
    let (status, body) = graphql_at(
        &emu.graphql_url(),
        Some(ALICE),
        RESOLVE,
        json!({ "threadId": id }),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["data"], Value::Null);
    assert_eq!(body["errors"][0]["message"], "boom");
    assert_eq!(body["errors"][0]["type"], "INTERNAL");
    assert_eq!(
        emu.state_json()["pull_requests"][0]["threads"][0]["resolved"],
        false
    );
    let body = graphql(&emu, ALICE, RESOLVE, json!({ "threadId": id })).await;
    assert_eq!(
        body["data"]["resolveReviewThread"]["thread"]["isResolved"],
        true
    );
}

#[tokio::test]
async fn delays_slow_a_call_down_and_then_serve_it() {
    let emu = start(scenario(0, 0)).await;
    emu.set_fault(FaultSpec::nth("GET /user", 1).with_delay(300))
        .unwrap();
    let started = Instant::now();
    let (status, user) = rest_get(&emu.api_url(), "/user", Some(ALICE)).await;
    assert_eq!(status, 200);
    assert_eq!(user["login"], "alice");
    assert!(started.elapsed() >= Duration::from_millis(300));
    let started = Instant::now();
    rest_get(&emu.api_url(), "/user", Some(ALICE)).await;
    assert!(started.elapsed() < Duration::from_millis(300));
}

#[tokio::test]
async fn rate_limits_answer_403_or_429_with_githubs_headers() {
    let emu = start(scenario(1, 1)).await;
    emu.set_fault(FaultSpec::nth(REPLIES, 1).with_rate_limit(403, 7))
        .unwrap();
    emu.set_fault(FaultSpec::nth("graphql:Viewer", 1).with_rate_limit(429, 2))
        .unwrap();
    let (status, headers, body) = reply(&emu, "x").await;
    assert_eq!(status, 403);
    assert_eq!(headers["retry-after"], "7");
    assert_eq!(headers["x-ratelimit-remaining"], "0");
    assert_eq!(headers["x-ratelimit-resource"], "core");
    let reset: u64 = headers["x-ratelimit-reset"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(reset >= now && reset <= now + 8, "{reset} vs {now}");
    assert!(body["message"].as_str().unwrap().contains("rate limit"));
    assert_eq!(replies_in_state(&emu), 0);

    let response = client()
        .post(emu.graphql_url())
        .bearer_auth(ALICE)
        .json(&json!({ "query": "query Viewer { viewer { login } }" }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "2");
    assert_eq!(response.headers()["x-ratelimit-resource"], "graphql");
    assert!(response
        .text()
        .await
        .unwrap()
        .contains("secondary rate limit"));
}

#[tokio::test]
async fn commit_then_fail_makes_the_change_and_answers_502() {
    let emu = start(scenario(1, 1)).await;
    emu.set_fault(FaultSpec::nth(REPLIES, 1).with_commit_then_fail())
        .unwrap();
    let (status, _, _) = reply(&emu, "landed anyway").await;
    assert_eq!(status, 502);
    // The reply exists: a client that retries blindly would post it twice.
    let threads = threads(&emu, BOB).await;
    assert_eq!(threads[0]["comments"]["totalCount"], 2);
    assert_eq!(threads[0]["comments"]["nodes"][1]["body"], "landed anyway");

    emu.set_fault(FaultSpec::every("graphql:ResolveReviewThread").with_commit_then_fail())
        .unwrap();
    let (status, _) = graphql_at(
        &emu.graphql_url(),
        Some(ALICE),
        RESOLVE,
        json!({ "threadId": thread_node_id(&emu, 0) }),
    )
    .await;
    assert_eq!(status, 502);
    assert_eq!(
        emu.state_json()["pull_requests"][0]["threads"][0]["resolved"],
        true
    );
}

#[tokio::test]
async fn scenario_faults_are_active_from_the_start_and_listed() {
    let mut s = scenario(1, 1);
    s.faults
        .push(FaultSpec::nth("GET /repos/{o}/{r}/pulls/{n}", 1).with_status(404, None));
    let emu = start(s).await;
    let state = emu.state_json();
    assert_eq!(state["faults"][0]["effect"], "status");
    assert_eq!(state["faults"][0]["nth"], 1);
    assert_eq!(state["faults"][0]["calls"], 0);
    assert_eq!(pull_status(&emu).await, 404);
    assert_eq!(pull_status(&emu).await, 200);
}

#[tokio::test]
async fn faults_are_set_and_cleared_over_the_control_api() {
    let emu = start(scenario(1, 1)).await;
    let (status, created) = control(
        &emu,
        Method::POST,
        "faults",
        Some(json!({ "target": "POST /repos/{owner}/{repo}/issues/{number}/comments", "every": true, "effect": "status", "status": 500 })),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_u64().unwrap();
    assert_eq!(comment_status(&emu).await, 500);
    let (_, listed) = control(&emu, Method::GET, "faults", None).await;
    assert_eq!(listed[0]["id"], id);
    assert_eq!(listed[0]["fired"], 1);

    let (status, _) = control(&emu, Method::DELETE, &format!("faults/{id}"), None).await;
    assert_eq!(status, 204);
    let (status, _) = control(&emu, Method::DELETE, &format!("faults/{id}"), None).await;
    assert_eq!(status, 404);
    assert_eq!(comment_status(&emu).await, 201);

    // Refused faults say why; DELETE /faults clears them all.
    let (status, body) = control(
        &emu,
        Method::POST,
        "faults",
        Some(json!({ "target": "GET /user", "effect": "status" })),
    )
    .await;
    assert_eq!(status, 422);
    assert!(body["message"].as_str().unwrap().contains("exactly one"));
    let (status, _) = control(
        &emu,
        Method::POST,
        "faults",
        Some(json!({ "target": "GET /user", "every": true, "effect": "explode" })),
    )
    .await;
    assert_eq!(status, 400);
    emu.set_fault(FaultSpec::every("GET /user")).unwrap();
    let (status, _) = control(&emu, Method::DELETE, "faults", None).await;
    assert_eq!(status, 204);
    assert_eq!(emu.faults(), json!([]));
    assert_eq!(rest_get(&emu.api_url(), "/user", Some(ALICE)).await.0, 200);
}
