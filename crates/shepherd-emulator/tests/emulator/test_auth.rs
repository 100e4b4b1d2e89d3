//! Authentication and access: 401 for bad or missing tokens, 404 for users
//! without access, as GitHub answers.

use serde_json::{json, Value};

use crate::common::*;

const WRONG: &str = "ghp_wrong_token_123";

#[tokio::test]
async fn wrong_token_is_401_bad_credentials_without_echoing_it() {
    let emu = start(scenario(1, 1)).await;
    let (status, body) = rest_get(&emu.api_url(), "/repos/acme/widgets/pulls/1", Some(WRONG)).await;
    assert_eq!(status, 401);
    assert_eq!(body["message"], "Bad credentials");
    assert!(!body.to_string().contains(WRONG));

    let (status, body) = graphql_at(
        &emu.graphql_url(),
        Some(WRONG),
        "query Viewer { viewer { login } }",
        json!({}),
    )
    .await;
    assert_eq!(status, 401);
    assert_eq!(body["message"], "Bad credentials");
    assert!(!body.to_string().contains(WRONG));
    // Refused requests are still counted: the client did make them.
    assert_eq!(emu.request_count("graphql:Viewer"), 1);
}

#[tokio::test]
async fn missing_token_is_401() {
    let emu = start(scenario(0, 0)).await;
    let (status, body) = rest_get(&emu.api_url(), "/user", None).await;
    assert_eq!(status, 401);
    assert_eq!(body["message"], "Requires authentication");
    let (status, _) = graphql_at(&emu.graphql_url(), None, "{ viewer { login } }", json!({})).await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn user_without_access_gets_404_and_null_repository() {
    let emu = start(scenario(1, 1)).await;
    let (status, body) = rest_get(
        &emu.api_url(),
        "/repos/acme/widgets/pulls/1",
        Some(STRANGER),
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(body["message"], "Not Found");

    let body = graphql(
        &emu,
        STRANGER,
        r#"query Pr { repository(owner: "acme", name: "widgets") { pullRequest(number: 1) { id } } }"#,
        json!({}),
    )
    .await;
    assert_eq!(body["data"]["repository"], Value::Null);
    assert_eq!(body["errors"][0]["type"], "NOT_FOUND");
    assert_eq!(
        body["errors"][0]["message"],
        "Could not resolve to a Repository with the name 'acme/widgets'."
    );

    // Node ids do not leak the repository either.
    let pr_id = emu.state_json()["pull_requests"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let body = graphql(
        &emu,
        STRANGER,
        "query Node($id: ID!) { node(id: $id) { id } }",
        json!({ "id": pr_id }),
    )
    .await;
    assert_eq!(body["data"]["node"], Value::Null);
}

#[tokio::test]
async fn read_only_user_can_read() {
    let emu = start(scenario(1, 1)).await;
    let (status, _) = rest_get(&emu.api_url(), "/repos/acme/widgets/pulls/1", Some(READER)).await;
    assert_eq!(status, 200);
    let body = graphql(
        &emu,
        READER,
        r#"query Pr { repository(owner: "acme", name: "widgets") { viewerPermission
            pullRequest(number: 1) { reviewThreads(first: 1) { nodes { viewerCanReply viewerCanResolve } } } } }"#,
        json!({}),
    )
    .await;
    let repo = &body["data"]["repository"];
    assert_eq!(repo["viewerPermission"], "READ");
    let thread = &repo["pullRequest"]["reviewThreads"]["nodes"][0];
    // A read-only token cannot write, replies included.
    assert_eq!(thread["viewerCanReply"], false);
    assert_eq!(thread["viewerCanResolve"], false);
}
