//! The GraphQL fields and mutations the `gh` CLI asks for, in the shapes of
//! its own queries (`api/query_builder.go`: `gh pr view --json …`,
//! `gh pr checks`, `gh pr comment`, `gh pr review`, `gh pr list`,
//! `gh repo view --json defaultBranchRef`).

use serde_json::{json, Value};
use shepherd_emulator::{CheckSpec, ReviewSpec, ReviewStateSpec};

use crate::common::*;

/// `gh pr view --json …`'s query, shared with the unit test that proves
/// the JSON fast path equal to the resolvers (`graphql/fast_path_equal.rs`).
const PR_VIEW: &str = include_str!("../queries/gh_pr_view.graphql");

fn vars() -> Value {
    json!({ "owner": "acme", "repo": "widgets", "pr_number": 1 })
}

async fn pr_view(emu: &shepherd_emulator::RunningEmulator) -> Value {
    let body = graphql(emu, ALICE, PR_VIEW, vars()).await;
    assert!(body.get("errors").is_none(), "{body}");
    body["data"]["repository"]["pullRequest"].clone()
}

#[tokio::test]
async fn gh_pr_view_fields_resolve() {
    let mut s = scenario(1, 1);
    s.reviews.push(ReviewSpec::new(
        "bob",
        ReviewStateSpec::ChangesRequested,
        "Please fix",
    ));
    s.checks = vec![CheckSpec::new("tests", "true")];
    let emu = start(s).await;
    idle(&emu).await;
    let pr = pr_view(&emu).await;
    assert_eq!(pr["number"], 1);
    assert_eq!(pr["author"]["login"], "alice");
    assert_eq!(pr["headRepository"]["name"], "widgets");
    assert_eq!(pr["maintainerCanModify"], false);
    assert_eq!(pr["mergeable"], "UNKNOWN");
    assert_eq!(pr["reviewDecision"], "CHANGES_REQUESTED");
    assert_eq!(pr["closedAt"], Value::Null);
    assert_eq!(pr["mergedAt"], Value::Null);
    let contexts =
        &pr["statusCheckRollup"]["nodes"][0]["commit"]["statusCheckRollup"]["contexts"]["nodes"];
    let run = &contexts[0];
    assert_eq!(run["__typename"], "CheckRun", "{pr}");
    assert_eq!(run["name"], "tests");
    assert!(
        run["checkSuite"]["workflowRun"]["workflow"]["name"].is_string(),
        "{run}"
    );
}

#[tokio::test]
async fn gh_pr_comment_and_review_mutations_write() {
    let emu = start(scenario(1, 1)).await;
    let before = pr_view(&emu).await;
    let pr_id = before["id"].clone();
    let comments_before = before["comments"]["totalCount"].as_u64().unwrap();

    let comment = graphql(
        &emu,
        ALICE,
        "mutation CommentCreate($input: AddCommentInput!) { addComment(input: $input) { commentEdge { node { url body } } } }",
        json!({ "input": { "subjectId": pr_id, "body": "from gh" } }),
    )
    .await;
    assert!(comment.get("errors").is_none(), "{comment}");
    let node = &comment["data"]["addComment"]["commentEdge"]["node"];
    assert_eq!(node["body"], "from gh");
    assert!(node["url"].as_str().unwrap().contains("#issuecomment-"));

    let review = graphql(
        &emu,
        BOB,
        "mutation PullRequestReviewAdd($input: AddPullRequestReviewInput!) { addPullRequestReview(input: $input) { clientMutationId pullRequestReview { state body } } }",
        json!({ "input": { "pullRequestId": pr_id, "event": "APPROVE", "body": "ok" } }),
    )
    .await;
    assert!(review.get("errors").is_none(), "{review}");
    assert_eq!(
        review["data"]["addPullRequestReview"]["pullRequestReview"],
        json!({ "state": "APPROVED", "body": "ok" })
    );

    let pr = pr_view(&emu).await;
    assert_eq!(pr["comments"]["totalCount"], comments_before + 1);
    let last = pr["comments"]["nodes"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["body"], "from gh");
    assert_eq!(last["viewerDidAuthor"], true);
    assert_eq!(pr["reviewDecision"], "APPROVED");

    // A reader cannot write; a bogus subject is null beside NOT_FOUND.
    let refused = graphql(
        &emu,
        READER,
        "mutation { addComment(input: { subjectId: \"x\", body: \"b\" }) { clientMutationId } }",
        json!({}),
    )
    .await;
    assert_eq!(refused["data"], json!({ "addComment": null }), "{refused}");
    let bogus = graphql(
        &emu,
        ALICE,
        "mutation { addComment(input: { subjectId: \"PR_bm9wZQ\", body: \"b\" }) { clientMutationId } }",
        json!({}),
    )
    .await;
    assert_eq!(bogus["errors"][0]["type"], "NOT_FOUND");
}

#[tokio::test]
async fn gh_pr_list_and_repo_view_fields_resolve() {
    let emu = start(scenario(1, 1)).await;
    let body = graphql(
        &emu,
        ALICE,
        r#"query PullRequestList($owner: String!, $repo: String!) {
          repository(owner: $owner, name: $repo) {
            defaultBranchRef{name}
            open: pullRequests(states: OPEN){totalCount}
            closed: pullRequests(states: [CLOSED, MERGED]){totalCount}
            pullRequests(first: 30, states: [OPEN], headRefName: "feature/widgets") {
              totalCount nodes { number title headRefName isCrossRepository headRepository { name } }
              pageInfo { hasNextPage endCursor }
            }
          }
        }"#,
        json!({ "owner": "acme", "repo": "widgets" }),
    )
    .await;
    assert!(body.get("errors").is_none(), "{body}");
    let repo = &body["data"]["repository"];
    assert_eq!(repo["defaultBranchRef"]["name"], "main");
    assert_eq!(repo["open"]["totalCount"], 1);
    assert_eq!(repo["closed"]["totalCount"], 0);
    assert_eq!(repo["pullRequests"]["nodes"][0]["number"], 1);
    assert_eq!(repo["pullRequests"]["pageInfo"]["hasNextPage"], false);

    let viewer = graphql(&emu, ALICE, "{ viewer { login name } }", json!({})).await;
    assert_eq!(
        viewer["data"]["viewer"],
        json!({ "login": "alice", "name": null })
    );
}
