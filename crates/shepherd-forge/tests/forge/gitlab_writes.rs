//! The GitLab client's write side against a local responder: replies as
//! notes read back through their discussion, merge request notes, the marker
//! look-up, resolves (never of a resolved discussion), edits and labels.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use shepherd_core::marker::Marker;
use shepherd_core::model::AuthorKind;
use shepherd_forge::{Forge, ForgeError, ItemRef, ThreadRef};

use crate::support::{fixture, gitlab_client_at, Reply, Responder, Seen, PROJECT, SECRET};

const DISCUSSION: &str = "6a9c1750b37d513a43987b574953fceb50b03ce7";

fn thread() -> ThreadRef {
    ThreadRef {
        thread_id: DISCUSSION.into(),
        root_comment_id: 1126,
    }
}

/// The first discussion of the fixture, resolved or not, with `extra` notes.
fn discussion(resolved: bool, extra: &[Value]) -> Value {
    let mut discussion = fixture("gitlab/discussions_page1.json")[0].clone();
    let notes = discussion["notes"].as_array_mut().unwrap();
    for note in notes.iter_mut() {
        note["resolved"] = json!(resolved);
    }
    notes.extend(extra.iter().cloned());
    discussion
}

fn reply_body() -> String {
    Marker::new(DISCUSSION, 2, true)
        .append_to("Fixed in 8f1c0e7: the loop now stops after `max_attempts`.")
}

#[tokio::test]
async fn a_reply_is_a_note_on_the_discussion_read_back() {
    let created = fixture("gitlab/note_created.json");
    let server = Responder::start(vec![
        Reply::json(201, created.clone()),
        Reply::json(200, discussion(false, &[created])),
    ])
    .await;
    let forge: Arc<dyn Forge> = Arc::new(gitlab_client_at(&server.url()));
    let posted = forge
        .reply_to_thread(17, &thread(), &reply_body())
        .await
        .unwrap();
    assert_eq!(
        server.lines(),
        [
            format!("POST {PROJECT}/merge_requests/17/discussions/{DISCUSSION}/notes"),
            format!("GET {PROJECT}/merge_requests/17/discussions/{DISCUSSION}"),
        ]
    );
    let seen = server.seen();
    assert_eq!(seen[0].json(), json!({ "body": reply_body() }));
    assert_eq!(seen[0].headers["content-type"], "application/json");
    assert_eq!(
        seen[0].headers["authorization"],
        format!("Bearer {SECRET}").as_str()
    );
    assert_eq!(
        (posted.id.as_str(), posted.database_id),
        ("1302", Some(1302))
    );
    assert_eq!(
        posted.url,
        format!(
            "{}/group/sub/project/-/merge_requests/17#note_1302",
            server.url()
        )
    );
    assert_eq!(posted.review_state, None);
    assert_eq!(posted.marker, Some(Marker::new(DISCUSSION, 2, true)));
    let author = posted.author.unwrap();
    assert_eq!(
        (author.login.as_str(), author.kind),
        ("shepherd", AuthorKind::User)
    );
}

#[tokio::test]
async fn a_reply_missing_from_its_discussion_is_unconfirmed() {
    let server = Responder::start(vec![
        Reply::json(201, fixture("gitlab/note_created.json")),
        Reply::json(200, discussion(false, &[])),
    ])
    .await;
    let err = gitlab_client_at(&server.url())
        .reply_to_thread(17, &thread(), &reply_body())
        .await
        .unwrap_err();
    assert!(matches!(err, ForgeError::Unconfirmed { .. }), "{err:?}");
    assert!(err.to_string().contains("1302"), "{err}");
    assert_eq!(server.count(), 2);
}

#[tokio::test]
async fn a_reply_lost_to_a_502_is_not_resent() {
    let server = Responder::start(vec![Reply::json(
        502,
        json!({ "message": "502 Bad Gateway" }),
    )])
    .await;
    let err = gitlab_client_at(&server.url())
        .reply_to_thread(17, &thread(), &reply_body())
        .await
        .unwrap_err();
    assert!(err.is_transient());
    assert_eq!(server.count(), 1, "a mutation is sent once");
}

/// A GitLab whose discussion is resolved or not, counting PUTs.
fn resolvable(resolved: Arc<Mutex<bool>>) -> impl Fn(&Seen) -> Reply + Send + Sync {
    move |seen: &Seen| {
        let path = format!("{PROJECT}/merge_requests/17/discussions/{DISCUSSION}");
        if seen.uri.path() != path {
            return Reply::json(404, json!({ "message": "404 Not found" }));
        }
        let mut state = resolved.lock().unwrap();
        if seen.method == "PUT" {
            *state = true;
        }
        Reply::json(200, discussion(*state, &[]))
    }
}

#[tokio::test]
async fn a_resolved_discussion_is_never_resolved_again() {
    let resolved = Arc::new(Mutex::new(true));
    let server = Responder::start_fn(resolvable(Arc::clone(&resolved))).await;
    let client = gitlab_client_at(&server.url()).with_merge_request(17);
    client.resolve_thread(DISCUSSION).await.unwrap();
    assert_eq!(
        server.lines(),
        [format!(
            "GET {PROJECT}/merge_requests/17/discussions/{DISCUSSION}"
        )],
        "no PUT: GitLab would record a second resolve"
    );
}

#[tokio::test]
async fn an_unresolved_discussion_is_resolved_once() {
    let resolved = Arc::new(Mutex::new(false));
    let server = Responder::start_fn(resolvable(Arc::clone(&resolved))).await;
    let client = gitlab_client_at(&server.url()).with_merge_request(17);
    client.resolve_thread(DISCUSSION).await.unwrap();
    assert_eq!(
        server.lines(),
        [
            format!("GET {PROJECT}/merge_requests/17/discussions/{DISCUSSION}"),
            format!("PUT {PROJECT}/merge_requests/17/discussions/{DISCUSSION}?resolved=true"),
        ]
    );
    assert!(*resolved.lock().unwrap());
    // Again: read, found resolved, nothing sent.
    client.resolve_thread(DISCUSSION).await.unwrap();
    let puts = server
        .lines()
        .iter()
        .filter(|l| l.starts_with("PUT"))
        .count();
    assert_eq!(puts, 1);
}

#[tokio::test]
async fn a_resolve_lost_to_a_502_is_checked_before_resending() {
    // The PUT lands but its answer is a 502: the re-read finds it resolved.
    let landed = Arc::new(Mutex::new(false));
    let state = Arc::clone(&landed);
    let server = Responder::start_fn(move |seen: &Seen| {
        let mut resolved = state.lock().unwrap();
        if seen.method == "PUT" {
            *resolved = true;
            return Reply::json(502, json!({ "message": "502 Bad Gateway" }));
        }
        Reply::json(200, discussion(*resolved, &[]))
    })
    .await;
    let client = gitlab_client_at(&server.url()).with_merge_request(17);
    client.resolve_thread(DISCUSSION).await.unwrap();
    let methods: Vec<String> = server.seen().iter().map(|s| s.method.to_string()).collect();
    assert_eq!(methods, ["GET", "PUT", "GET"]);
}

#[tokio::test]
async fn a_resolve_needs_the_discussions_merge_request() {
    let server = Responder::start(Vec::new()).await;
    let err = gitlab_client_at(&server.url())
        .resolve_thread(DISCUSSION)
        .await
        .unwrap_err();
    assert!(matches!(err, ForgeError::CannotResolve { .. }), "{err:?}");
    assert!(err.to_string().contains("with_merge_request"), "{err}");
    assert_eq!(server.count(), 0, "nothing is sent");

    // A discussion read as a merge request's thread is known afterwards.
    let resolved = Arc::new(Mutex::new(false));
    let server = Responder::start_fn(resolvable(Arc::clone(&resolved))).await;
    let client = gitlab_client_at(&server.url());
    client
        .find_marker_reply(17, &ItemRef::Thread(DISCUSSION.into()), "shepherd")
        .await
        .unwrap();
    client.resolve_thread(DISCUSSION).await.unwrap();
    assert!(*resolved.lock().unwrap());

    // An individual note cannot be resolved: refused before any PUT.
    let server = Responder::start(vec![Reply::json(
        200,
        fixture("gitlab/discussions_page1.json")[2].clone(),
    )])
    .await;
    let err = gitlab_client_at(&server.url())
        .with_merge_request(17)
        .resolve_thread("3d8e7a64b12c0f9e5d4c3b2a1f0e9d8c7b6a5f4e")
        .await
        .unwrap_err();
    assert!(matches!(err, ForgeError::CannotResolve { .. }), "{err:?}");
    assert_eq!(server.count(), 1);
}

#[tokio::test]
async fn markers_are_found_in_the_discussion_and_among_notes() {
    let older = {
        let mut note = fixture("gitlab/note_created.json");
        note["id"] = json!(1290);
        note["body"] = json!(Marker::new(DISCUSSION, 1, false).append_to("First try."));
        note
    };
    let latest = fixture("gitlab/note_created.json");
    let forged = {
        let mut note = fixture("gitlab/note_created.json");
        note["id"] = json!(1310);
        note["author"] = json!({ "id": 77, "username": "mallory" });
        note["body"] = json!(Marker::new(DISCUSSION, 3, true).append_to("Done!"));
        note
    };
    let server = Responder::start_fn(move |seen: &Seen| {
        let path = seen.uri.path();
        if path.ends_with(&format!("/discussions/{DISCUSSION}")) {
            let notes = [older.clone(), latest.clone(), forged.clone()];
            return Reply::json(200, discussion(false, &notes));
        }
        if path.ends_with("/merge_requests/17/notes") {
            let page = |id: u64, item: &str| {
                json!({
                    "id": id, "type": null, "system": false, "resolvable": false,
                    "body": Marker::new(item, 1, false).append_to("Added."),
                    "author": { "id": 501, "username": "shepherd" },
                    "created_at": "2024-05-02T10:50:00.000Z",
                })
            };
            if seen.uri.query().unwrap_or("").contains("page=2") {
                // A later note of someone else pasting our marker is not ours.
                let mut forged = page(1403, "1150");
                forged["author"] = json!({ "id": 77, "username": "mallory" });
                return Reply::json(200, json!([page(1402, "1150"), forged]));
            }
            return Reply::json(200, json!([page(1401, "1150"), page(1400, "1210")]))
                .header("x-next-page", "2");
        }
        Reply::json(404, json!({ "message": "404 Not found" }))
    })
    .await;
    let client = gitlab_client_at(&server.url());
    let found = client
        .find_marker_reply(17, &ItemRef::Thread(DISCUSSION.into()), "shepherd")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        found.id, "1302",
        "the viewer's latest marker of the discussion, not mallory's"
    );
    assert_eq!(found.marker.unwrap().round, 2);

    let top = client
        .find_marker_reply(17, &ItemRef::TopLevel("1150".into()), "shepherd")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        top.id, "1402",
        "every page is read, the viewer's latest wins"
    );
    let other = client
        .find_marker_reply(17, &ItemRef::TopLevel("1210".into()), "shepherd")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(other.id, "1400");
    assert!(client
        .find_marker_reply(17, &ItemRef::TopLevel("9999".into()), "shepherd")
        .await
        .unwrap()
        .is_none());
    assert!(server.lines().contains(&format!(
        "GET {PROJECT}/merge_requests/17/notes?sort=asc&order_by=created_at&per_page=100&page=2"
    )));
}

#[tokio::test]
async fn a_top_level_reply_is_a_merge_request_note() {
    let mut created = fixture("gitlab/note_created.json");
    created["type"] = Value::Null;
    created["resolvable"] = json!(false);
    let server = Responder::start(vec![Reply::json(201, created)]).await;
    let posted = gitlab_client_at(&server.url())
        .post_issue_comment(17, "Added the changelog entry.")
        .await
        .unwrap();
    assert_eq!(
        server.lines(),
        [format!("POST {PROJECT}/merge_requests/17/notes")]
    );
    assert_eq!(
        server.seen()[0].json(),
        json!({ "body": "Added the changelog entry." })
    );
    assert_eq!(posted.database_id, Some(1302));
}

#[tokio::test]
async fn merge_request_edits_and_labels() {
    let server = Responder::start(vec![
        Reply::json(200, fixture("gitlab/merge_request.json")),
        Reply::json(200, fixture("gitlab/merge_request.json")),
        Reply::json(200, fixture("gitlab/merge_request.json")),
        Reply::json(200, fixture("gitlab/merge_request.json")),
    ])
    .await;
    let client = gitlab_client_at(&server.url());
    client
        .update_pull_request(17, Some("New title"), Some("New body"))
        .await
        .unwrap();
    client.update_pull_request(17, None, None).await.unwrap();
    client
        .update_pull_request(17, None, Some("Only the body"))
        .await
        .unwrap();
    client
        .add_labels(17, &["bug".into(), "needs review".into()])
        .await
        .unwrap();
    client.remove_label(17, "needs review").await.unwrap();
    assert!(client.add_labels(17, &["a,b".into()]).await.is_err());
    assert!(client.remove_label(17, " ").await.is_err());

    let seen = server.seen();
    let mr = format!("PUT {PROJECT}/merge_requests/17");
    assert_eq!(server.lines(), [mr.clone(), mr.clone(), mr.clone(), mr]);
    assert_eq!(
        seen[0].json(),
        json!({ "title": "New title", "description": "New body" })
    );
    assert_eq!(seen[1].json(), json!({ "description": "Only the body" }));
    assert_eq!(seen[2].json(), json!({ "add_labels": "bug,needs review" }));
    assert_eq!(seen[3].json(), json!({ "remove_labels": "needs review" }));
}

#[tokio::test]
async fn a_note_is_deleted_by_the_notes_route_and_a_gone_one_is_fine() {
    let server = Responder::start(vec![
        Reply::json(204, Value::Null),
        Reply::json(404, json!({ "message": "404 Note Not Found" })),
        Reply::json(403, json!({ "message": "403 Forbidden" })),
    ])
    .await;
    let client = gitlab_client_at(&server.url());
    let thread = ItemRef::Thread(DISCUSSION.into());
    client.delete_comment(17, &thread, 1300).await.unwrap();
    client
        .delete_comment(17, &ItemRef::TopLevel("1150".into()), 1301)
        .await
        .unwrap();
    let err = client.delete_comment(17, &thread, 1302).await.unwrap_err();
    assert!(matches!(err, ForgeError::Forbidden { .. }), "{err:?}");
    assert_eq!(
        server.lines(),
        [
            format!("DELETE {PROJECT}/merge_requests/17/notes/1300"),
            format!("DELETE {PROJECT}/merge_requests/17/notes/1301"),
            format!("DELETE {PROJECT}/merge_requests/17/notes/1302"),
        ]
    );
}

/// `GET …/merge_requests/:iid/resource_label_events` in the shape of
/// GitLab's "Resource label events" API: `add` and `remove`; an event whose
/// label was deleted since (`label: null`) names nothing and is left out.
#[tokio::test]
async fn label_events_are_read_from_the_resource_label_events() {
    let user = json!({ "id": 1, "name": "Administrator", "username": "root", "state": "active",
                       "avatar_url": null, "web_url": "http://gitlab.example/root" });
    let label =
        json!({ "id": 73, "name": "shepherd-approved", "color": "#34495E", "description": "" });
    let events = json!([
        { "id": 142, "user": user, "created_at": "2018-08-20T13:38:20.077Z",
          "resource_type": "MergeRequest", "resource_id": 253, "label": label, "action": "add" },
        { "id": 143, "user": user, "created_at": "2018-08-20T13:40:20.077Z",
          "resource_type": "MergeRequest", "resource_id": 253, "label": null, "action": "add" },
        { "id": 144, "user": user, "created_at": "2018-08-20T13:42:20.077Z",
          "resource_type": "MergeRequest", "resource_id": 253, "label": label, "action": "remove" }
    ]);
    let server = Responder::start(vec![Reply::json(200, events)]).await;
    let client = gitlab_client_at(&server.url());
    let got = client.label_events(17).await.unwrap();
    assert_eq!(
        server.lines(),
        [format!(
            "GET {PROJECT}/merge_requests/17/resource_label_events?per_page=100"
        )]
    );
    let got: Vec<(bool, &str, &str, &str)> = got
        .iter()
        .map(|e| {
            (
                e.added,
                e.label.as_str(),
                e.actor.as_ref().unwrap().login.as_str(),
                e.created_at.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                true,
                "shepherd-approved",
                "root",
                "2018-08-20T13:38:20.077Z"
            ),
            (
                false,
                "shepherd-approved",
                "root",
                "2018-08-20T13:42:20.077Z"
            ),
        ]
    );
}
