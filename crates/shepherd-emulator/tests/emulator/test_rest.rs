//! REST: shapes, both path styles, request counting.

use serde_json::{json, Value};

use crate::common::*;

#[tokio::test]
async fn pull_request_has_githubs_shape() {
    let emu = start(scenario(2, 1)).await;
    let (status, pr) = rest_get(&emu.api_url(), "/repos/acme/widgets/pulls/1", Some(ALICE)).await;
    assert_eq!(status, 200, "{pr}");
    assert_eq!(pr["number"], 1);
    assert_eq!(pr["state"], "open");
    assert_eq!(pr["merged"], false);
    assert_eq!(pr["draft"], false);
    assert_eq!(pr["title"], "Add widgets");
    assert_eq!(pr["user"]["login"], "alice");
    assert_eq!(pr["user"]["type"], "User");
    assert_eq!(pr["head"]["ref"], "feature/widgets");
    assert_eq!(pr["base"]["ref"], "main");
    assert_eq!(pr["head"]["repo"]["full_name"], "acme/widgets");
    assert_eq!(pr["base"]["repo"]["full_name"], "acme/widgets");
    assert!(pr["html_url"]
        .as_str()
        .unwrap()
        .ends_with("/acme/widgets/pull/1"));
    let head_sha = pr["head"]["sha"].as_str().unwrap();
    assert_eq!(head_sha.len(), 40);
    assert_ne!(head_sha, pr["base"]["sha"].as_str().unwrap());
    assert_eq!(head_sha, head_ref_oid(&emu, ALICE).await);
}

#[tokio::test]
async fn fork_and_merged_pull_requests_report_as_github_does() {
    let mut s = scenario(0, 0);
    s.pull_request.fork = true;
    s.pull_request.state = shepherd_emulator::PullRequestStatus::Merged;
    let emu = start(s).await;
    let (_, pr) = rest_get(&emu.api_url(), "/repos/acme/widgets/pulls/1", Some(ALICE)).await;
    assert_eq!(pr["state"], "closed");
    assert_eq!(pr["merged"], true);
    assert_eq!(pr["head"]["repo"]["full_name"], "alice/widgets");
    assert_eq!(pr["head"]["repo"]["fork"], true);
    let body = graphql(
        &emu,
        ALICE,
        r#"query Fork { repository(owner: "acme", name: "widgets") { pullRequest(number: 1) { isCrossRepository state } } }"#,
        json!({}),
    )
    .await;
    let pr = &body["data"]["repository"]["pullRequest"];
    assert_eq!(pr["isCrossRepository"], true);
    assert_eq!(pr["state"], "MERGED");
}

#[tokio::test]
async fn user_endpoint_reports_login_and_type() {
    let emu = start(scenario(0, 0)).await;
    let (status, user) = rest_get(&emu.api_url(), "/user", Some(BOB)).await;
    assert_eq!(status, 200);
    assert_eq!(user["login"], "bob");
    assert_eq!(user["type"], "User");
    let (_, bot) = rest_get(&emu.api_url(), "/user", Some(BOT)).await;
    assert_eq!(bot["login"], "review-bot[bot]");
    assert_eq!(bot["type"], "Bot");
}

#[tokio::test]
async fn enterprise_style_paths_serve_the_same_api() {
    let emu = start(scenario(1, 1)).await;
    assert_eq!(
        emu.enterprise_api_url(),
        format!("{}/api/v3", emu.api_url())
    );
    let (status, pr) = rest_get(
        &emu.enterprise_api_url(),
        "/repos/acme/widgets/pulls/1",
        Some(ALICE),
    )
    .await;
    assert_eq!(status, 200, "{pr}");
    assert_eq!(pr["number"], 1);
    let (status, user) = rest_get(&emu.enterprise_api_url(), "/user", Some(ALICE)).await;
    assert_eq!(status, 200);
    assert_eq!(user["login"], "alice");
    let (status, body) = graphql_at(
        &emu.enterprise_graphql_url(),
        Some(ALICE),
        "query Viewer { viewer { login } }",
        json!({}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["viewer"]["login"], "alice");
}

#[tokio::test]
async fn requests_are_counted_per_route_and_operation() {
    let emu = start(scenario(1, 1)).await;
    rest_get(&emu.api_url(), "/repos/acme/widgets/pulls/1", Some(ALICE)).await;
    rest_get(
        &emu.enterprise_api_url(),
        "/repos/acme/widgets/pulls/1",
        Some(ALICE),
    )
    .await;
    rest_get(&emu.api_url(), "/user", Some(ALICE)).await;
    graphql(&emu, ALICE, "query Viewer { viewer { login } }", json!({})).await;
    graphql(&emu, ALICE, "{ viewer { login } }", json!({})).await;
    let (status, _) = graphql_at(
        &emu.graphql_url(),
        Some(ALICE),
        "query A { viewer { login } } query B { viewer { login } }",
        json!({}),
    )
    .await;
    assert_eq!(status, 200);
    // operationName wins over the document.
    let body: Value = client()
        .post(emu.graphql_url())
        .bearer_auth(ALICE)
        .json(&json!({ "query": "query A { viewer { login } } query B { viewer { login } }", "operationName": "B" }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["data"]["viewer"]["login"], "alice");

    assert_eq!(
        emu.request_count("GET /repos/{owner}/{repo}/pulls/{number}"),
        2
    );
    assert_eq!(emu.request_count("GET /user"), 1);
    assert_eq!(emu.request_count("graphql:Viewer"), 1);
    assert_eq!(emu.request_count("graphql:<anonymous>"), 1);
    assert_eq!(emu.request_count("graphql:B"), 1);
    assert_eq!(emu.request_count("graphql:<ambiguous>"), 1);
    assert_eq!(emu.request_counts().values().sum::<u64>(), 7);
    emu.reset_request_counts();
    assert!(emu.request_counts().is_empty());
}

#[tokio::test]
async fn state_dump_is_served_as_json() {
    let emu = start(scenario(2, 1)).await;
    let response = client()
        .get(format!("{}/_emulator/state", emu.api_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let state: Value = response.json().await.unwrap();
    assert_eq!(state, emu.state_json());
    assert_eq!(state["repository"]["owner"], "acme");
    assert_eq!(
        state["pull_requests"][0]["threads"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(state["users"][0]["login"], "alice");
    assert_eq!(state["urls"]["api"], emu.api_url());
}

#[tokio::test]
async fn unknown_route_is_a_github_404() {
    let emu = start(scenario(0, 0)).await;
    let (status, body) = rest_get(
        &emu.api_url(),
        "/repos/acme/widgets/frobnicate",
        Some(ALICE),
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(body["message"], "Not Found");
    assert!(body["documentation_url"].is_string());
}
