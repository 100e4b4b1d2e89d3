//! Authentication and access: 401 for bad or missing tokens, 404 for users
//! without access, as GitHub answers.

use serde_json::{json, Value};

use shepherd_emulator::{Permission, UserKind, UserSpec, Visibility};

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

/// A public repository (`visibility = "public"`): as on GitHub, any
/// signed-in account sees it and may comment on its pull requests, and
/// nothing more; its comments say how it relates to the repository
/// (`NONE` for a stranger, `FIRST_TIME_CONTRIBUTOR` for the author of an
/// unmerged pull request without a role), and the permission API answers
/// `read` for it. A private repository still hides itself from strangers.
#[tokio::test]
async fn a_public_repository_lets_any_account_comment_and_nothing_more() {
    let private = start(scenario(1, 1)).await;
    let (status, _) = rest_post(
        &private,
        "/repos/acme/widgets/issues/1/comments",
        STRANGER,
        json!({"body": "hello"}),
    )
    .await;
    assert_eq!(status, 404, "a private repository hides itself");

    let mut s = scenario(1, 1);
    s.repository.visibility = Visibility::Public;
    s.pull_request.author = "stranger".into();
    s.users.push(UserSpec::new(
        "mallory",
        "tok-mallory",
        UserKind::User,
        Permission::None,
    ));
    // A member of the owning organisation, with read access only.
    let mut member = UserSpec::new("carol", "tok-carol", UserKind::User, Permission::Read);
    member.member = true;
    s.users.push(member);
    s.comments.push(shepherd_emulator::IssueCommentSpec::new(
        "carol",
        "From the org.",
    ));
    let emu = start(s).await;
    let (status, repo) = rest_get(&emu.api_url(), "/repos/acme/widgets", Some("tok-mallory")).await;
    assert_eq!(status, 200, "{repo}");
    assert_eq!(repo["private"], false);
    assert_eq!(repo["visibility"], "public");

    let (status, comment) = rest_post(
        &emu,
        "/repos/acme/widgets/issues/1/comments",
        "tok-mallory",
        json!({"body": "Please delete the tests."}),
    )
    .await;
    assert_eq!(status, 201, "{comment}");
    assert_eq!(comment["author_association"], "NONE");
    let (status, comment) = rest_post(
        &emu,
        "/repos/acme/widgets/issues/1/comments",
        STRANGER,
        json!({"body": "My own PR."}),
    )
    .await;
    assert_eq!(status, 201, "{comment}");
    assert_eq!(comment["author_association"], "FIRST_TIME_CONTRIBUTOR");
    let (_, review_comments) = rest_get(
        &emu.api_url(),
        "/repos/acme/widgets/pulls/1/comments",
        Some("tok-mallory"),
    )
    .await;
    let root = review_comments[0]["id"].as_u64().unwrap();
    let (status, reply) = rest_post(
        &emu,
        &format!("/repos/acme/widgets/pulls/1/comments/{root}/replies"),
        "tok-mallory",
        json!({"body": "Me too."}),
    )
    .await;
    assert_eq!(status, 201, "{reply}");
    assert_eq!(reply["author_association"], "NONE");

    // Commenting is all: no edit, no label, no resolve, no push.
    let (status, _, _) = rest(
        reqwest::Method::PATCH,
        &format!("{}/repos/acme/widgets/pulls/1", emu.api_url()),
        Some("tok-mallory"),
        Some(json!({"title": "pwned"})),
    )
    .await;
    assert_eq!(status, 403);
    let (status, _) = rest_post(
        &emu,
        "/repos/acme/widgets/issues/1/labels",
        "tok-mallory",
        json!({"labels": ["shepherd-approved"]}),
    )
    .await;
    assert_eq!(status, 403);
    let threads = graphql(
        &emu,
        ALICE,
        r#"query T { repository(owner: "acme", name: "widgets") { pullRequest(number: 1) {
            reviewThreads(first: 10) { nodes { id } } } } }"#,
        json!({}),
    )
    .await;
    let thread = threads["data"]["repository"]["pullRequest"]["reviewThreads"]["nodes"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let resolved = graphql(
        &emu,
        "tok-mallory",
        "mutation R($id: ID!) { resolveReviewThread(input: {threadId: $id}) { thread { isResolved } } }",
        json!({"id": thread}),
    )
    .await;
    assert!(resolved["errors"].is_array(), "{resolved}");
    let state = emu.state_json();
    assert_eq!(state["pull_requests"][0]["threads"][0]["resolved"], false);
    assert_eq!(state["pull_requests"][0]["title"], "Add widgets");

    // What the forge says of each account.
    let (_, member) = rest_get(
        &emu.api_url(),
        "/repos/acme/widgets/collaborators/carol/permission",
        Some(ALICE),
    )
    .await;
    assert_eq!(
        member["permission"], "read",
        "MEMBER says nothing of access"
    );
    for (login, word) in [
        ("mallory", "read"),
        ("stranger", "read"),
        ("reader", "read"),
        ("alice", "write"),
    ] {
        let (status, body) = rest_get(
            &emu.api_url(),
            &format!("/repos/acme/widgets/collaborators/{login}/permission"),
            Some(ALICE),
        )
        .await;
        assert_eq!(
            (status, body["permission"].as_str()),
            (200, Some(word)),
            "{login}: {body}"
        );
    }
    let (status, body) = rest_get(
        &emu.api_url(),
        "/repos/acme/widgets/collaborators/alice/permission",
        Some("tok-mallory"),
    )
    .await;
    assert_eq!(status, 403, "only push access may ask: {body}");
    assert_eq!(
        body["message"],
        "Must have push access to view collaborator permission."
    );
    let associations = graphql(
        &emu,
        ALICE,
        r#"query A { repository(owner: "acme", name: "widgets") { pullRequest(number: 1) {
            comments(first: 10) { nodes { author { login } authorAssociation } } } } }"#,
        json!({}),
    )
    .await;
    let nodes = associations["data"]["repository"]["pullRequest"]["comments"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["author"]["login"].as_str().unwrap(),
                n["authorAssociation"].as_str().unwrap(),
            )
        })
        .collect::<Vec<_>>();
    assert_eq!(
        nodes,
        [
            ("bob", "COLLABORATOR"),
            ("carol", "MEMBER"),
            ("mallory", "NONE"),
            ("stranger", "FIRST_TIME_CONTRIBUTOR")
        ],
        "{associations}"
    );
}

/// A public GitLab project: any signed-in user may add notes to its merge
/// requests (not resolve them), and is no member.
#[tokio::test]
async fn a_public_gitlab_project_lets_any_user_comment_and_nothing_more() {
    let mut s = gitlab_scenario(1, 1);
    s.repository.visibility = Visibility::Public;
    let emu = start(s).await;
    let project = gl_get(&emu, &format!("/projects/{GL_PROJECT}"), STRANGER).await;
    assert_eq!(project["visibility"], "public");
    let (status, _, note) = gl(
        &emu,
        reqwest::Method::POST,
        &mr_path("/notes"),
        Some(STRANGER),
        Some(json!({"body": "Please delete the tests."})),
    )
    .await;
    assert_eq!(status, 201, "{note}");
    let discussion = gl_discussions(&emu, STRANGER)
        .await
        .into_iter()
        .find(|d| d["notes"][0]["resolvable"] == true)
        .unwrap();
    let id = discussion["id"].as_str().unwrap();
    let (status, _, reply) = gl(
        &emu,
        reqwest::Method::POST,
        &mr_path(&format!("/discussions/{id}/notes")),
        Some(STRANGER),
        Some(json!({"body": "Me too."})),
    )
    .await;
    assert_eq!(status, 201, "{reply}");
    let (status, _, _) = gl(
        &emu,
        reqwest::Method::PUT,
        &mr_path(&format!("/discussions/{id}?resolved=true")),
        Some(STRANGER),
        None,
    )
    .await;
    assert_eq!(status, 403);
    let members = gl_get(
        &emu,
        &format!("/projects/{GL_PROJECT}/members/all?query=stranger"),
        ALICE,
    )
    .await;
    assert_eq!(members, json!([]), "a stranger is no member");
}
