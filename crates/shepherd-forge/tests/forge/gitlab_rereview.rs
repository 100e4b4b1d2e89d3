//! Asking a GitLab reviewer again (issue 27): a reviewer stays listed in the
//! merge request's `reviewers` after reviewing, so one whose state says
//! they reviewed is not pending, and asking them again goes through the
//! GraphQL mutation `mergeRequestReviewerRereview`, which resets their state
//! to `unreviewed`; a login not listed is still added through
//! `reviewer_ids`.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use shepherd_forge::{Forge, ForgeError};

use crate::support::{all_text, gitlab_client_at, Reply, Responder, Seen, PROJECT, SECRET};

const HEAD: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// The merge request's reviewers: id, username, reviewer state.
type Reviewers = Arc<Mutex<Vec<(u64, &'static str, String)>>>;

/// A merge request `17` listing `duo-bot` (53, not reviewed yet) and
/// `alice` (55, who requested changes), with the project's members; the
/// rereview mutation sets a listed reviewer's state to `unreviewed`, and
/// answers `mutation` instead when given.
fn gitlab(states: Reviewers, mutation: Option<Value>) -> impl Fn(&Seen) -> Reply + Send + Sync {
    move |seen: &Seen| {
        let path = seen.uri.path();
        let mut states = states.lock().unwrap();
        let user = |id: u64, login: &str| json!({ "id": id, "username": login, "state": "active" });
        match (seen.method.as_str(), path) {
            ("POST", "/api/graphql") => {
                if let Some(answer) = &mutation {
                    return Reply::json(200, answer.clone());
                }
                let gid = seen.json()["variables"]["userId"]
                    .as_str()
                    .unwrap()
                    .to_owned();
                let listed = states
                    .iter_mut()
                    .find(|(id, _, _)| gid == format!("gid://gitlab/User/{id}"));
                let errors: Vec<&str> = match listed {
                    Some(reviewer) => {
                        reviewer.2 = "unreviewed".into();
                        Vec::new()
                    }
                    None => vec!["Reviewer not found"],
                };
                Reply::json(
                    200,
                    json!({ "data": { "mergeRequestReviewerRereview": {
                        "errors": errors, "mergeRequest": { "iid": "17" } } } }),
                )
            }
            ("GET", p) if p == format!("{PROJECT}/merge_requests/17/reviewers") => Reply::json(
                200,
                Value::Array(
                    states
                        .iter()
                        .map(|(id, login, state)| {
                            json!({ "user": user(*id, login), "state": state,
                                    "created_at": "2026-12-05T09:00:00Z" })
                        })
                        .collect(),
                ),
            ),
            ("GET", p) if p == format!("{PROJECT}/merge_requests/17") => Reply::json(
                200,
                json!({ "iid": 17, "reviewers": states
                    .iter()
                    .map(|(id, login, _)| user(*id, login))
                    .collect::<Vec<_>>() }),
            ),
            ("GET", p)
                if p == format!("{PROJECT}/merge_requests/17/notes")
                    || p == format!("{PROJECT}/repository/commits/{HEAD}/statuses") =>
            {
                Reply::json(200, json!([]))
            }
            ("GET", p) if p == format!("{PROJECT}/members/all") => Reply::json(
                200,
                json!([{ "id": 52, "username": "coderabbitai", "access_level": 30 }]),
            ),
            ("PUT", p) if p == format!("{PROJECT}/merge_requests/17") => {
                Reply::json(200, json!({ "iid": 17 }))
            }
            (m, p) => Reply::json(404, json!({ "message": format!("not scripted: {m} {p}") })),
        }
    }
}

fn listed() -> Reviewers {
    Arc::new(Mutex::new(vec![
        (53, "duo-bot", "unreviewed".to_owned()),
        (55, "alice", "requested_changes".to_owned()),
    ]))
}

/// `alice` requested changes and stays listed: she is not pending. Asking
/// her again is one rereview mutation (her global id, the project's path,
/// the iid; the token as on every request), no `reviewer_ids` write; after
/// it her state is `unreviewed` and she is pending again.
#[tokio::test]
async fn a_listed_reviewer_who_reviewed_is_asked_again_by_the_rereview_mutation() {
    let server = Responder::start_fn(gitlab(listed(), None)).await;
    let client = gitlab_client_at(&server.url());
    let before = client.reviewer_activity(17, HEAD).await.unwrap();
    assert_eq!(before.requested, ["duo-bot"], "alice has reviewed");
    assert_eq!(before.reviews.len(), 1, "{:?}", before.reviews);

    let asked_from = server.count();
    client
        .request_review(17, &["alice".to_owned()])
        .await
        .unwrap();
    let seen = server.seen();
    let asks = &seen[asked_from..];
    assert_eq!(
        asks.iter().map(Seen::line).collect::<Vec<_>>(),
        [
            format!("GET {PROJECT}/merge_requests/17"),
            "POST /api/graphql".to_owned(),
        ]
    );
    let body = asks[1].json();
    assert_eq!(body["operationName"], "MergeRequestReviewerRereview");
    assert!(
        body["query"]
            .as_str()
            .unwrap()
            .contains("mergeRequestReviewerRereview(input: {projectPath: $projectPath, iid: $iid, userId: $userId})"),
        "{body}"
    );
    assert_eq!(
        body["variables"],
        json!({ "projectPath": "group/sub/project", "iid": "17", "userId": "gid://gitlab/User/55" })
    );
    assert_eq!(
        asks[1].headers["authorization"],
        format!("Bearer {SECRET}").as_str()
    );

    let after = client.reviewer_activity(17, HEAD).await.unwrap();
    assert_eq!(after.requested, ["duo-bot", "alice"], "asked again");
    assert!(after.reviews.is_empty(), "{:?}", after.reviews);
}

/// One listed and one new login: the listed one through the mutation, the
/// new one added to `reviewer_ids` (after the listed ones) as before.
#[tokio::test]
async fn a_new_login_still_goes_through_reviewer_ids() {
    let server = Responder::start_fn(gitlab(listed(), None)).await;
    let client = gitlab_client_at(&server.url());
    client
        .request_review(17, &["alice".to_owned(), "coderabbitai".to_owned()])
        .await
        .unwrap();
    let seen = server.seen();
    let graphql: Vec<&Seen> = seen
        .iter()
        .filter(|s| s.uri.path() == "/api/graphql")
        .collect();
    assert_eq!(graphql.len(), 1);
    assert_eq!(
        graphql[0].json()["variables"]["userId"],
        "gid://gitlab/User/55"
    );
    let puts: Vec<&Seen> = seen.iter().filter(|s| s.method == "PUT").collect();
    assert_eq!(puts.len(), 1);
    assert_eq!(puts[0].json(), json!({ "reviewer_ids": [53, 55, 52] }));
}

/// The mutation's errors, in its payload or at the top (a GitLab before
/// 13.9 has no such field), are the request's error, with GitLab's
/// message and never the token; nothing else is written.
#[tokio::test]
async fn an_error_from_the_rereview_mutation_surfaces() {
    let answers = [
        (
            json!({ "data": { "mergeRequestReviewerRereview": {
                "errors": ["Reviewer not found"], "mergeRequest": null } } }),
            "Reviewer not found",
        ),
        (
            json!({ "errors": [{ "message":
                "Field 'mergeRequestReviewerRereview' doesn't exist on type 'Mutation'",
                "locations": [{ "line": 1, "column": 90 }] }] }),
            "doesn't exist on type 'Mutation'",
        ),
    ];
    for (answer, message) in answers {
        let server = Responder::start_fn(gitlab(listed(), Some(answer))).await;
        let client = gitlab_client_at(&server.url());
        let err = client
            .request_review(17, &["alice".to_owned()])
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ForgeError::GraphQl { operation, messages }
                if operation == "MergeRequestReviewerRereview"
                    && messages.iter().any(|m| m.contains(message))),
            "{err:?}"
        );
        assert!(!all_text(&err).contains(SECRET), "{err:?}");
        let seen = server.seen();
        assert_eq!(
            seen.iter()
                .filter(|s| s.uri.path() == "/api/graphql")
                .count(),
            1,
            "a mutation is sent once"
        );
        assert!(seen.iter().all(|s| s.method != "PUT"));
    }
}

/// A GitLab without the reviewers route (before 15.3) gives no state: every
/// listed reviewer counts as asked, as before.
#[tokio::test]
async fn without_reviewer_states_every_listed_reviewer_is_pending() {
    let states = listed();
    let handler = gitlab(states, None);
    let server = Responder::start_fn(move |seen: &Seen| {
        if seen.uri.path() == format!("{PROJECT}/merge_requests/17/reviewers") {
            return Reply::json(404, json!({ "message": "404 Not Found" }));
        }
        handler(seen)
    })
    .await;
    let client = gitlab_client_at(&server.url());
    let activity = client.reviewer_activity(17, HEAD).await.unwrap();
    assert_eq!(activity.requested, ["duo-bot", "alice"]);
}
