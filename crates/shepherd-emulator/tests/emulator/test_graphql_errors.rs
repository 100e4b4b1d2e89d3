//! GraphQL errors and partial results in GitHub's shape: a failed nullable
//! field is `null` beside its error, the rest of `data` stays; queries that
//! do not validate get graphql-ruby's messages and codes, and no `data`.

use serde_json::{json, Value};

use crate::common::*;

fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable();
    keys
}

#[tokio::test]
async fn a_bogus_node_is_null_beside_its_error() {
    let emu = start(scenario(1, 1)).await;
    let body = graphql(&emu, ALICE, r#"{ node(id: "bogus") { id } }"#, json!({})).await;
    assert_eq!(body["data"], json!({ "node": null }), "{body}");
    let error = &body["errors"][0];
    assert_eq!(error["type"], "NOT_FOUND");
    assert_eq!(error["path"], json!(["node"]));
    assert_eq!(error["locations"], json!([{ "line": 1, "column": 3 }]));
    assert_eq!(
        error["message"],
        "Could not resolve to a node with the global id of 'bogus'."
    );

    // Beside another root field the key is still there, as null.
    let body = graphql(
        &emu,
        ALICE,
        r#"{ viewer { login } node(id: "bogus") { id } }"#,
        json!({}),
    )
    .await;
    assert_eq!(
        body["data"],
        json!({ "viewer": { "login": "alice" }, "node": null })
    );
    assert_eq!(body["errors"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_missing_repository_or_pull_request_is_null_not_dropped() {
    let emu = start(scenario(1, 1)).await;
    let body = graphql(
        &emu,
        ALICE,
        r#"{ repository(owner: "nope", name: "x") { id } viewer { login } }"#,
        json!({}),
    )
    .await;
    assert_eq!(
        body["data"],
        json!({ "repository": null, "viewer": { "login": "alice" } })
    );
    assert_eq!(body["errors"][0]["type"], "NOT_FOUND");

    let body = graphql(
        &emu,
        ALICE,
        r#"{ repository(owner: "acme", name: "widgets") { name pullRequest(number: 99) { id } } }"#,
        json!({}),
    )
    .await;
    assert_eq!(
        body["data"],
        json!({ "repository": { "name": "widgets", "pullRequest": null } })
    );
    assert_eq!(
        body["errors"][0]["path"],
        json!(["repository", "pullRequest"])
    );

    // Alone under its parent, the parent stays an object.
    let body = graphql(
        &emu,
        ALICE,
        r#"{ repository(owner: "acme", name: "widgets") { pullRequest(number: 99) { id } } }"#,
        json!({}),
    )
    .await;
    assert_eq!(
        body["data"],
        json!({ "repository": { "pullRequest": null } })
    );
}

#[tokio::test]
async fn a_failed_non_null_connection_nulls_its_nullable_parent() {
    let emu = start(scenario(2, 1)).await;
    let body = graphql(
        &emu,
        ALICE,
        r#"{ viewer { login } repository(owner: "acme", name: "widgets") { name pullRequest(number: 1) { number reviewThreads(first: 101) { totalCount } } } }"#,
        json!({}),
    )
    .await;
    assert_eq!(
        body["data"],
        json!({ "viewer": { "login": "alice" }, "repository": { "name": "widgets", "pullRequest": null } })
    );
    assert_eq!(body["errors"][0]["type"], "EXCESSIVE_PAGINATION");
}

#[tokio::test]
async fn a_failed_mutation_is_null_beside_its_error() {
    let emu = start(scenario(1, 1)).await;
    let body = graphql(
        &emu,
        ALICE,
        r#"mutation { resolveReviewThread(input: { threadId: "PRRT_bm9wZQ" }) { thread { id } } }"#,
        json!({}),
    )
    .await;
    assert_eq!(
        body["data"],
        json!({ "resolveReviewThread": null }),
        "{body}"
    );
    assert_eq!(body["errors"][0]["type"], "NOT_FOUND");
    assert_eq!(body["errors"][0]["path"], json!(["resolveReviewThread"]));
    assert_eq!(
        body["errors"][0]["message"],
        "Could not resolve to a node with the global id of 'PRRT_bm9wZQ'."
    );
}

#[tokio::test]
async fn a_well_formed_id_of_nothing_gets_the_same_message_as_a_bogus_one() {
    let emu = start(scenario(1, 1)).await;
    // A pull request id of the right kind that names no pull request.
    let body = graphql(
        &emu,
        ALICE,
        r#"query Q($id: ID!) { node(id: $id) { id } }"#,
        json!({ "id": "PR_kwDOAAAAAAAAAAAA" }),
    )
    .await;
    assert_eq!(body["data"], json!({ "node": null }), "{body}");
    let error = &body["errors"][0];
    assert_eq!(
        (&error["type"], &error["path"], &error["message"]),
        (
            &json!("NOT_FOUND"),
            &json!(["node"]),
            &json!("Could not resolve to a node with the global id of 'PR_kwDOAAAAAAAAAAAA'.")
        ),
        "{body}"
    );
}

#[tokio::test]
async fn undefined_fields_get_githubs_message_and_code() {
    let emu = start(scenario(1, 1)).await;
    let body = graphql(
        &emu,
        ALICE,
        "query Who {\n  viewer { login nope }\n}",
        json!({}),
    )
    .await;
    assert_eq!(keys(&body), ["errors"], "no data when nothing ran: {body}");
    assert_eq!(
        body["errors"],
        json!([{
            "path": ["query Who", "viewer", "nope"],
            "extensions": { "code": "undefinedField", "typeName": "User", "fieldName": "nope" },
            "locations": [{ "line": 2, "column": 18 }],
            "message": "Field 'nope' doesn't exist on type 'User'",
        }])
    );

    // An unknown field's arguments are not blamed on its parent field.
    let body = graphql(
        &emu,
        ALICE,
        r#"{ repository(owner: "acme", name: "widgets") { pullRequest(number: 1) { nope(first: 1) { id } } } }"#,
        json!({}),
    )
    .await;
    let errors = body["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{body}");
    assert_eq!(
        errors[0]["message"],
        "Field 'nope' doesn't exist on type 'PullRequest'"
    );

    let body = graphql(
        &emu,
        ALICE,
        r#"{ repository(owner: "acme", name: "widgets") { pullRequest(number: 1, first: 2) { id } } }"#,
        json!({}),
    )
    .await;
    assert_eq!(
        body["errors"][0]["message"],
        "Field 'pullRequest' doesn't accept argument 'first'"
    );
    assert_eq!(
        body["errors"][0]["extensions"]["code"],
        "argumentNotAccepted"
    );
}

#[tokio::test]
async fn a_syntax_error_has_no_data() {
    let emu = start(scenario(1, 1)).await;
    let body = graphql(&emu, ALICE, "{ viewer { login ", json!({})).await;
    assert_eq!(keys(&body), ["errors"], "{body}");
    assert!(body["errors"][0]["message"].is_string());
}
