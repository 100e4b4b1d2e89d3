//! What `gh pr status`, `gh pr view --json` and `gh pr edit` ask beyond
//! the fields of `test_graphql_gh.rs`: `search`, `mergeStateStatus`, the
//! base branch's protection rule, `latestReviews`, commit messages and
//! `updatePullRequest`, with the values the emulator's state gives.

use std::collections::BTreeMap;

use serde_json::{json, Value};
use shepherd_emulator::{CheckSpec, ReviewSpec, ReviewStateSpec, RunningEmulator};

use crate::common::*;

const SEARCH: &str = r#"query S($q: String!, $type: SearchType!) {
  search(query: $q, type: $type, first: 10) {
    issueCount
    edges { cursor node { ...on PullRequest { number } } }
    pageInfo { hasNextPage }
  }
}"#;

async fn search(emu: &RunningEmulator, token: &str, q: &str, kind: &str) -> Value {
    let body = graphql(emu, token, SEARCH, json!({ "q": q, "type": kind })).await;
    assert!(body.get("errors").is_none(), "{q}: {body}");
    body["data"]["search"].clone()
}

#[tokio::test]
async fn search_finds_pull_requests_by_gh_qualifiers() {
    let emu = start(scenario(1, 1)).await;
    let found = search(
        &emu,
        ALICE,
        "repo:acme/widgets state:open is:pr author:alice",
        "ISSUE",
    )
    .await;
    assert_eq!(found["issueCount"], 1, "{found}");
    assert_eq!(found["edges"][0]["node"]["number"], 1, "{found}");
    for q in [
        "repo:acme/widgets author:@me",
        "Widgets",
        "is:open draft:false base:main head:feature/widgets",
    ] {
        assert_eq!(
            search(&emu, ALICE, q, "ISSUE").await["issueCount"],
            1,
            "{q}"
        );
    }
    for q in [
        "repo:acme/widgets state:open review-requested:alice",
        "author:bob",
        "repo:acme/other",
        "is:closed",
        "is:merged",
        "is:issue",
        "no-such-word",
        "milestone:v1",
    ] {
        let found = search(&emu, ALICE, q, "ISSUE").await;
        assert_eq!(found["issueCount"], 0, "{q}: {found}");
        assert_eq!(found["edges"], json!([]), "{q}");
    }
    let repos = search(&emu, ALICE, "widgets", "REPOSITORY").await;
    assert_eq!(repos["issueCount"], 0, "{repos}");

    let missing = graphql(
        &emu,
        ALICE,
        r#"{ search(query: "is:pr", type: ISSUE) { edges { cursor } } }"#,
        json!({}),
    )
    .await;
    assert_eq!(
        missing["errors"][0]["type"], "MISSING_PAGINATION_BOUNDARIES",
        "{missing}"
    );
}

const STATUS: &str = r#"query P($n: Int!) {
  repository(owner: "acme", name: "widgets") {
    pullRequest(number: $n) {
      mergeStateStatus
      baseRef { name branchProtectionRule { requiresStrictStatusChecks requiredStatusCheckContexts } }
      latestReviews(first: 10) { nodes { author { login } state } }
      additions deletions changedFiles
      files(first: 10) { totalCount nodes { path additions deletions changeType } }
      headRepositoryOwner { __typename login ...on User { name } }
      reactionGroups { content users { totalCount } }
      assignees(first: 10) { totalCount }
      reviewRequests(first: 10) { totalCount nodes { requestedReviewer { __typename } } }
      projectCards(first: 10) { totalCount }
      milestone { title }
      commits(last: 1) { nodes { commit { oid messageHeadline messageBody authoredDate
        authors(first: 5) { nodes { name email user { login } } } } } }
      comments(first: 1) { nodes { authorAssociation isMinimized includesCreatedEdit } }
    }
  }
}"#;

async fn status(emu: &RunningEmulator, token: &str) -> Value {
    let body = graphql(emu, token, STATUS, json!({ "n": 1 })).await;
    assert!(body.get("errors").is_none(), "{body}");
    body["data"]["repository"]["pullRequest"].clone()
}

#[tokio::test]
async fn a_failing_required_check_blocks_and_the_base_is_protected() {
    let mut s = scenario(0, 0);
    let mut tests = CheckSpec::new("tests", "exit 1");
    tests.required = true;
    s.checks = vec![tests];
    s.reviews
        .push(ReviewSpec::new("bob", ReviewStateSpec::Commented, "first"));
    s.reviews
        .push(ReviewSpec::new("bob", ReviewStateSpec::Approved, "then"));
    s.reviews.push(ReviewSpec::new(
        "review-bot",
        ReviewStateSpec::Pending,
        "draft",
    ));
    let emu = start(s).await;
    idle(&emu).await;
    let pr = status(&emu, ALICE).await;
    assert_eq!(pr["mergeStateStatus"], "BLOCKED", "{pr}");
    assert_eq!(
        pr["baseRef"],
        json!({ "name": "main", "branchProtectionRule": {
            "requiresStrictStatusChecks": false,
            "requiredStatusCheckContexts": ["tests"] } })
    );
    // Each author's latest submitted review; pending ones do not count.
    assert_eq!(
        pr["latestReviews"]["nodes"],
        json!([{ "author": { "login": "bob" }, "state": "APPROVED" }])
    );
    assert_eq!(pr["headRepositoryOwner"]["__typename"], "Organization");
    assert_eq!(pr["headRepositoryOwner"]["login"], "acme");
    // Only src/lib.rs changed (README.md is the same on both sides).
    assert_eq!(
        pr["files"],
        json!({ "totalCount": 1, "nodes": [
            { "path": "src/lib.rs", "additions": 1, "deletions": 0, "changeType": "MODIFIED" }] })
    );
    assert_eq!(
        (&pr["additions"], &pr["deletions"], &pr["changedFiles"]),
        (&json!(1), &json!(0), &json!(1))
    );
    let groups = pr["reactionGroups"].as_array().unwrap();
    assert_eq!(groups.len(), 8, "{pr}");
    assert!(groups.iter().all(|g| g["users"]["totalCount"] == 0), "{pr}");
    for key in ["assignees", "reviewRequests", "projectCards"] {
        assert_eq!(pr[key]["totalCount"], 0, "{key}: {pr}");
    }
    assert_eq!(pr["milestone"], Value::Null);
    // Bob (admin, not the owner `acme`) comments as a collaborator.
    assert_eq!(
        pr["comments"]["nodes"][0],
        json!({ "authorAssociation": "COLLABORATOR", "isMinimized": false, "includesCreatedEdit": false })
    );
}

#[tokio::test]
async fn merge_state_is_clean_when_checks_pass_and_draft_for_a_draft() {
    let mut s = scenario(0, 0);
    let mut tests = CheckSpec::new("tests", "true");
    tests.required = true;
    s.checks = vec![tests];
    let emu = start(s).await;
    idle(&emu).await;
    assert_eq!(status(&emu, ALICE).await["mergeStateStatus"], "CLEAN");

    let mut s = scenario(0, 0);
    s.pull_request.draft = true;
    let emu = start(s).await;
    let pr = status(&emu, ALICE).await;
    assert_eq!(pr["mergeStateStatus"], "DRAFT");
    // No required checks: the base has no protection rule.
    assert_eq!(pr["baseRef"]["branchProtectionRule"], Value::Null, "{pr}");
}

#[tokio::test]
async fn commit_messages_and_authors_come_from_git() {
    let emu = start(scenario(0, 0)).await;
    let files = BTreeMap::from([("NEW.md".to_owned(), Some("new\n".to_owned()))]);
    let sha = emu
        .act_push(
            "alice",
            "feature/widgets",
            files,
            "Add NEW.md\n\nWith a body.\nTwo lines.",
        )
        .await
        .unwrap();
    let pr = status(&emu, ALICE).await;
    let commit = &pr["commits"]["nodes"][0]["commit"];
    assert_eq!(commit["oid"], sha.as_str());
    assert_eq!(commit["messageHeadline"], "Add NEW.md");
    assert_eq!(commit["messageBody"], "With a body.\nTwo lines.");
    let date = commit["authoredDate"].as_str().unwrap();
    assert!(date.ends_with('Z') && date.len() == 20, "{date}");
    let author = &commit["authors"]["nodes"][0];
    assert_eq!(author["name"], "alice", "{commit}");
    assert_eq!(author["user"], Value::Null, "{commit}");
}

const UPDATE: &str = r#"mutation U($input: UpdatePullRequestInput!) {
  updatePullRequest(input: $input) { clientMutationId pullRequest { title body state closed } }
}"#;

async fn update(emu: &RunningEmulator, token: &str, input: Value) -> Value {
    graphql(emu, token, UPDATE, json!({ "input": input })).await
}

#[tokio::test]
async fn update_pull_request_edits_title_body_and_state_as_rest_does() {
    let emu = start(scenario(0, 0)).await;
    let id = head_pr_id(&emu).await;
    let done = update(
        &emu,
        ALICE,
        json!({ "pullRequestId": id, "title": "New title", "body": "New body", "clientMutationId": "m1" }),
    )
    .await;
    assert_eq!(
        done["data"]["updatePullRequest"],
        json!({ "clientMutationId": "m1", "pullRequest": {
            "title": "New title", "body": "New body", "state": "OPEN", "closed": false } })
    );
    let (_, rest) = rest_get(&emu.api_url(), "/repos/acme/widgets/pulls/1", Some(ALICE)).await;
    assert_eq!(rest["title"], "New title");

    // Bob (admin) may close alice's PR; the reader may not touch it.
    let closed = update(&emu, BOB, json!({ "pullRequestId": id, "state": "CLOSED" })).await;
    assert_eq!(
        closed["data"]["updatePullRequest"]["pullRequest"]["state"], "CLOSED",
        "{closed}"
    );
    assert_eq!(status(&emu, ALICE).await["mergeStateStatus"], "UNKNOWN");
    let refused = update(&emu, READER, json!({ "pullRequestId": id, "title": "x" })).await;
    assert_eq!(refused["errors"][0]["type"], "FORBIDDEN", "{refused}");
    assert_eq!(refused["data"], json!({ "updatePullRequest": null }));
    let hidden = update(&emu, STRANGER, json!({ "pullRequestId": id, "title": "x" })).await;
    assert_eq!(hidden["errors"][0]["type"], "NOT_FOUND", "{hidden}");

    // What the emulator does not keep is refused, and nothing changes.
    let labels = update(
        &emu,
        ALICE,
        json!({ "pullRequestId": id, "title": "with labels", "labelIds": ["LA_x"] }),
    )
    .await;
    assert_eq!(labels["errors"][0]["type"], "UNPROCESSABLE", "{labels}");
    assert!(
        labels["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("labelIds"),
        "{labels}"
    );
    let (_, rest) = rest_get(&emu.api_url(), "/repos/acme/widgets/pulls/1", Some(ALICE)).await;
    assert_eq!(rest["title"], "New title");
    assert_eq!(rest["state"], "closed");
}

#[tokio::test]
async fn pull_requests_take_gh_order_by() {
    let emu = start(scenario(0, 0)).await;
    let body = graphql(
        &emu,
        ALICE,
        r#"{ repository(owner: "acme", name: "widgets") {
          pullRequests(first: 5, orderBy: {field: CREATED_AT, direction: DESC}) {
            totalCount nodes { number } pageInfo { hasNextPage endCursor } } } }"#,
        json!({}),
    )
    .await;
    assert!(body.get("errors").is_none(), "{body}");
    let prs = &body["data"]["repository"]["pullRequests"];
    assert_eq!(prs["totalCount"], 1);
    assert_eq!(prs["nodes"], json!([{ "number": 1 }]));
    let after = prs["pageInfo"]["endCursor"].as_str().unwrap().to_owned();
    let next = graphql(
        &emu,
        ALICE,
        r#"query N($after: String) { repository(owner: "acme", name: "widgets") {
          pullRequests(first: 5, after: $after, orderBy: {field: UPDATED_AT, direction: ASC}) {
            nodes { number } } } }"#,
        json!({ "after": after }),
    )
    .await;
    assert_eq!(
        next["data"]["repository"]["pullRequests"]["nodes"],
        json!([]),
        "{next}"
    );
}

/// The PR's node id.
async fn head_pr_id(emu: &RunningEmulator) -> String {
    let body = graphql(
        emu,
        ALICE,
        r#"{ repository(owner: "acme", name: "widgets") { pullRequest(number: 1) { id } } }"#,
        json!({}),
    )
    .await;
    body["data"]["repository"]["pullRequest"]["id"]
        .as_str()
        .unwrap()
        .to_owned()
}
