//! GitLab's REST API v4 over real HTTP: authentication, projects by path
//! and id, merge requests (read and edit), notes, discussions (list, one,
//! replies, resolve with the duplicate system note), draft notes, the
//! comparison, error shapes, faults and the control API of a GitLab
//! scenario.

use std::collections::BTreeMap;

use reqwest::Method;
use serde_json::{json, Value};
use shepherd_emulator::{
    Act, ActThread, EmulatedForge, FaultSpec, ReviewSpec, ReviewStateSpec, ThreadCommentSpec,
    ThreadSpec,
};

use crate::common::*;

#[tokio::test]
async fn only_the_scenarios_forge_api_is_served() {
    let emu = start(gitlab_scenario(1, 1)).await;
    assert_eq!(emu.forge(), EmulatedForge::GitLab);

    let (status, _, user) = gl(&emu, Method::GET, "/user", Some(ALICE), None).await;
    assert_eq!(status, 200, "{user}");
    assert_eq!(user["username"], "alice");
    assert_eq!(user["bot"], false);
    assert!(user["id"].as_u64().unwrap() > 0);
    // GitLab's own header.
    let response = client()
        .get(format!("{}/user", emu.gitlab_api_url()))
        .header("PRIVATE-TOKEN", BOT)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let bot: Value = response.json().await.unwrap();
    assert_eq!(
        (bot["username"].as_str(), bot["bot"].as_bool()),
        (Some("review-bot"), Some(true))
    );

    for token in [None, Some("nope")] {
        let (status, _, body) = gl(&emu, Method::GET, "/user", token, None).await;
        assert_eq!(status, 401);
        assert_eq!(body, json!({ "message": "401 Unauthorized" }));
    }
    // GitHub's API is not served for a GitLab scenario...
    let (status, _) = graphql_at(
        &emu.graphql_url(),
        Some(ALICE),
        "{ viewer { login } }",
        json!({}),
    )
    .await;
    assert_eq!(status, 404);
    let (status, _) = rest_get(&emu.api_url(), "/repos/acme/tools/widgets", Some(ALICE)).await;
    assert_eq!(status, 404);
    // ...nor GitLab's for a GitHub one.
    let github = start(scenario(1, 1)).await;
    let (status, _, _) = gl(&github, Method::GET, "/user", Some(ALICE), None).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn projects_by_path_or_id_and_the_merge_request() {
    let emu = start(gitlab_scenario(1, 1)).await;
    let project = gl_get(&emu, &format!("/projects/{GL_PROJECT}"), ALICE).await;
    let id = project["id"].as_u64().unwrap();
    assert_eq!(id, emu.gitlab_project_id());
    assert_eq!(project["path_with_namespace"], "acme/tools/widgets");
    assert_eq!(project["namespace"]["full_path"], "acme/tools");
    assert_eq!(project["permissions"]["project_access"]["access_level"], 30);
    let by_id = gl_get(&emu, &format!("/projects/{id}"), ALICE).await;
    assert_eq!(by_id, project);
    let (status, _, body) = gl(
        &emu,
        Method::GET,
        &format!("/projects/{GL_PROJECT}"),
        Some(STRANGER),
        None,
    )
    .await;
    assert_eq!(
        (status, body),
        (404, json!({ "message": "404 Project Not Found" }))
    );
    let (status, _, _) = gl(
        &emu,
        Method::GET,
        "/projects/acme%2Fother",
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!(status, 404);

    let mr = gl_get(&emu, &mr_path(""), ALICE).await;
    assert_eq!(mr["iid"], 1);
    assert_eq!(mr["project_id"], id);
    assert_eq!(mr["title"], "Add widgets");
    assert_eq!(mr["state"], "opened");
    assert_eq!(mr["draft"], false);
    assert_eq!(mr["source_branch"], "feature/widgets");
    assert_eq!(mr["target_branch"], "main");
    let head = emu.head_sha(1).unwrap();
    let base = emu.base_sha(1).unwrap();
    assert_eq!(mr["sha"], head.as_str());
    assert_eq!(mr["source_project_id"], id);
    assert_eq!(mr["target_project_id"], id);
    assert_eq!(mr["author"]["username"], "alice");
    assert_eq!(mr["author"]["bot"], false);
    assert_eq!(mr["labels"], json!([]));
    assert_eq!(
        mr["diff_refs"],
        json!({ "base_sha": base, "head_sha": head, "start_sha": base })
    );
    assert_eq!(
        mr["head_pipeline"],
        Value::Null,
        "no checks in this scenario"
    );
    assert!(mr["web_url"]
        .as_str()
        .unwrap()
        .ends_with("/acme/tools/widgets/-/merge_requests/1"));
    assert!(mr["created_at"].as_str().unwrap().ends_with(".000Z"));
    let by_id = gl_get(&emu, &format!("/projects/{id}/merge_requests/1"), ALICE).await;
    assert_eq!(by_id, mr);
    let list = gl_get(
        &emu,
        &format!("/projects/{id}/merge_requests?state=opened"),
        ALICE,
    )
    .await;
    assert_eq!(list.as_array().unwrap().len(), 1);
    let (status, _, body) = gl(
        &emu,
        Method::GET,
        &format!("/projects/{GL_PROJECT}/merge_requests/2"),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!((status, body), (404, json!({ "message": "404 Not found" })));
}

#[tokio::test]
async fn a_fork_and_a_draft_read_as_such() {
    let mut s = gitlab_scenario(0, 1);
    s.pull_request.fork = true;
    s.pull_request.draft = true;
    let emu = start(s).await;
    let mr = gl_get(&emu, &mr_path(""), ALICE).await;
    assert_ne!(mr["source_project_id"], mr["target_project_id"]);
    assert_eq!(mr["draft"], true);
    assert_eq!(mr["work_in_progress"], true);
}

#[tokio::test]
async fn merge_request_edits_title_description_labels_and_state() {
    let emu = start(gitlab_scenario(0, 1)).await;
    let put = |body: Value, token: &'static str| {
        let emu = &emu;
        async move { gl(emu, Method::PUT, &mr_path(""), Some(token), Some(body)).await }
    };
    let (status, _, mr) = put(
        json!({ "title": "New title", "description": "Body." }),
        ALICE,
    )
    .await;
    assert_eq!(status, 200, "{mr}");
    assert_eq!(
        (mr["title"].as_str(), mr["description"].as_str()),
        (Some("New title"), Some("Body."))
    );
    let (_, _, mr) = put(json!({ "add_labels": "bug,needs review" }), BOB).await;
    assert_eq!(mr["labels"], json!(["bug", "needs review"]));
    let (_, _, mr) = put(json!({ "remove_labels": "bug,absent" }), BOB).await;
    assert_eq!(
        mr["labels"],
        json!(["needs review"]),
        "an absent label is ignored"
    );
    let (_, _, mr) = put(json!({ "labels": "a,b" }), BOB).await;
    assert_eq!(mr["labels"], json!(["a", "b"]));
    let (status, _, body) = put(json!({ "title": "x" }), READER).await;
    assert_eq!((status, body), (403, json!({ "message": "403 Forbidden" })));
    let (status, _, body) = put(json!({}), ALICE).await;
    assert_eq!(status, 400);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("at least one parameter"),
        "{body}"
    );
    let (_, _, mr) = put(json!({ "state_event": "close" }), ALICE).await;
    assert_eq!(mr["state"], "closed");
    // Query parameters work too, as GitLab takes them.
    let (status, _, mr) = gl(
        &emu,
        Method::PUT,
        &mr_path("?state_event=reopen"),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!((status, mr["state"].as_str()), (200, Some("opened")));
    let state = emu.state_json();
    assert_eq!(state["pull_requests"][0]["title"], "New title");
}

#[tokio::test]
async fn notes_are_listed_posted_and_read_back() {
    let emu = start(gitlab_scenario(1, 2)).await;
    let (status, _, note) = gl(
        &emu,
        Method::POST,
        &mr_path("/notes"),
        Some(ALICE),
        Some(json!({ "body": "Thanks!" })),
    )
    .await;
    assert_eq!(status, 201, "{note}");
    assert_eq!(note["type"], Value::Null);
    assert_eq!(note["system"], false);
    assert_eq!(note["resolvable"], false);
    assert_eq!(note["author"]["username"], "alice");
    assert_eq!(note["noteable_type"], "MergeRequest");
    let id = note["id"].as_u64().unwrap();
    let read = gl_get(&emu, &mr_path(&format!("/notes/{id}")), BOB).await;
    assert_eq!(read, note);

    // Newest first by default; oldest first with sort=asc.
    let desc = gl_get(&emu, &mr_path("/notes"), BOB).await;
    let asc = gl_get(&emu, &mr_path("/notes?sort=asc&order_by=created_at"), BOB).await;
    let ids = |v: &Value| -> Vec<u64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|n| n["id"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(
        ids(&desc).len(),
        4,
        "two diff notes, bob's comment, alice's"
    );
    assert_eq!(ids(&desc)[0], id);
    let mut reversed = ids(&asc);
    reversed.reverse();
    assert_eq!(reversed, ids(&desc));
    assert_eq!(asc[0]["type"], "DiffNote");

    let (status, _, _) = gl(
        &emu,
        Method::POST,
        &mr_path("/notes"),
        Some(READER),
        Some(json!({ "body": "x" })),
    )
    .await;
    assert_eq!(status, 403);
    let (status, _, body) = gl(
        &emu,
        Method::POST,
        &mr_path("/notes"),
        Some(ALICE),
        Some(json!({})),
    )
    .await;
    assert_eq!((status, body), (400, json!({ "error": "body is missing" })));
    let (status, _, _) = gl(
        &emu,
        Method::GET,
        &mr_path("/notes/999999"),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn threads_are_discussions_of_diff_notes_with_positions() {
    let mut s = gitlab_scenario(2, 2);
    let mut ranged = ThreadSpec::new(
        "src/lib.rs",
        12,
        vec![ThreadCommentSpec::new("bob", "these lines")],
    );
    ranged.start_line = Some(10);
    s.threads.push(ranged);
    let mut file_level = ThreadSpec::new(
        "README.md",
        1,
        vec![ThreadCommentSpec::new("bob", "the file")],
    );
    file_level.line = None;
    s.threads.push(file_level);
    let emu = start(s).await;
    let head = emu.head_sha(1).unwrap();
    let base = emu.base_sha(1).unwrap();
    let all = gl_discussions(&emu, ALICE).await;
    assert_eq!(all.len(), 5, "four threads and bob's top-level comment");
    let individual: Vec<&Value> = all
        .iter()
        .filter(|d| d["individual_note"] == true)
        .collect();
    assert_eq!(individual.len(), 1);
    assert_eq!(individual[0]["notes"][0]["body"], "top-level");

    let threads = gl_threads(&emu, ALICE).await;
    let first = &threads[0];
    let id = first["id"].as_str().unwrap();
    assert_eq!(id.len(), 40);
    assert_eq!(
        Some(id.to_owned()),
        emu.discussion_id(&thread_node_id(&emu, 0))
    );
    let notes = first["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 2);
    let root = &notes[0];
    assert_eq!(root["type"], "DiffNote");
    assert_eq!(root["resolvable"], true);
    assert_eq!(root["resolved"], false);
    assert_eq!(root["author"]["username"], "bob");
    assert_eq!(notes[1]["author"]["username"], "review-bot");
    assert_eq!(notes[1]["author"]["bot"], true);
    let position = &root["position"];
    assert_eq!(position["position_type"], "text");
    assert_eq!(position["new_path"], "src/lib.rs");
    assert_eq!(position["old_path"], "src/lib.rs");
    assert_eq!(position["new_line"], 1);
    assert_eq!(position["old_line"], Value::Null);
    assert_eq!(position["head_sha"], head.as_str());
    assert_eq!(position["base_sha"], base.as_str());
    assert_eq!(position["start_sha"], base.as_str());
    assert_eq!(position["line_range"], Value::Null);

    let range = &threads[2]["notes"][0]["position"];
    assert_eq!(range["new_line"], 12);
    assert_eq!(range["line_range"]["start"]["new_line"], 10);
    assert_eq!(range["line_range"]["start"]["type"], "new");
    let code = range["line_range"]["start"]["line_code"].as_str().unwrap();
    assert!(code.ends_with("_0_10") && code.len() == 40 + 5, "{code}");
    assert_eq!(range["line_range"]["end"]["new_line"], 12);
    let file = &threads[3]["notes"][0]["position"];
    assert_eq!(
        (file["position_type"].as_str(), file["new_line"].as_u64()),
        (Some("file"), None)
    );

    let one = gl_get(&emu, &mr_path(&format!("/discussions/{id}")), ALICE).await;
    assert_eq!(&one, first);
    let (status, _, body) = gl(
        &emu,
        Method::GET,
        &mr_path(&format!("/discussions/{}", "0".repeat(40))),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!((status, body), (404, json!({ "message": "404 Not found" })));
}

#[tokio::test]
async fn replies_are_notes_posted_in_the_discussion() {
    let emu = start(gitlab_scenario(2, 1)).await;
    let threads = gl_threads(&emu, ALICE).await;
    let id = threads[0]["id"].as_str().unwrap().to_owned();
    let path = mr_path(&format!("/discussions/{id}/notes"));
    let (status, _, note) = gl(
        &emu,
        Method::POST,
        &path,
        Some(ALICE),
        Some(json!({ "body": "Fixed." })),
    )
    .await;
    assert_eq!(status, 201, "{note}");
    assert_eq!(note["type"], "DiffNote");
    assert_eq!(note["body"], "Fixed.");
    assert_eq!(note["author"]["username"], "alice");
    assert_eq!(note["position"], threads[0]["notes"][0]["position"]);
    let read = gl_get(&emu, &mr_path(&format!("/discussions/{id}")), BOB).await;
    let notes = read["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 2);
    assert_eq!(notes[1], note);
    let by_id = gl_get(&emu, &mr_path(&format!("/notes/{}", note["id"])), BOB).await;
    assert_eq!(by_id, note);

    let individual = gl_discussions(&emu, ALICE)
        .await
        .into_iter()
        .find(|d| d["individual_note"] == true)
        .unwrap();
    let path = mr_path(&format!(
        "/discussions/{}/notes",
        individual["id"].as_str().unwrap()
    ));
    let (status, _, _) = gl(
        &emu,
        Method::POST,
        &path,
        Some(ALICE),
        Some(json!({ "body": "x" })),
    )
    .await;
    assert_eq!(status, 400);
    let path = mr_path(&format!("/discussions/{id}/notes"));
    let (status, _, _) = gl(
        &emu,
        Method::POST,
        &path,
        Some(READER),
        Some(json!({ "body": "x" })),
    )
    .await;
    assert_eq!(status, 403);
    let (status, _, _) = gl(
        &emu,
        Method::POST,
        &path,
        Some(ALICE),
        Some(json!({ "body": "  " })),
    )
    .await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn resolving_a_resolved_discussion_posts_a_duplicate_system_note() {
    let emu = start(gitlab_scenario(2, 1)).await;
    let threads = gl_threads(&emu, ALICE).await;
    let (first, second) = (
        threads[0]["id"].as_str().unwrap().to_owned(),
        threads[1]["id"].as_str().unwrap().to_owned(),
    );
    let resolve = |id: String, value: &'static str, token: &'static str| {
        let emu = &emu;
        async move {
            gl(
                emu,
                Method::PUT,
                &mr_path(&format!("/discussions/{id}?resolved={value}")),
                Some(token),
                None,
            )
            .await
        }
    };
    let system_notes = || async {
        gl_get(&emu, &mr_path("/notes?sort=asc"), ALICE)
            .await
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["system"] == true)
            .map(|n| n["body"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };

    let (status, _, discussion) = resolve(first.clone(), "true", ALICE).await;
    assert_eq!(status, 200, "{discussion}");
    assert_eq!(discussion["id"], first.as_str());
    assert_eq!(discussion["notes"][0]["resolved"], true);
    assert_eq!(discussion["notes"][0]["resolved_by"]["username"], "alice");
    assert!(system_notes().await.is_empty(), "one thread is still open");
    assert_eq!(emu.duplicate_resolve_notes(), 0);

    // Again: GitLab records it again.
    let (status, _, _) = resolve(first.clone(), "true", ALICE).await;
    assert_eq!(status, 200);
    assert_eq!(emu.duplicate_resolve_notes(), 1);
    assert_eq!(system_notes().await.len(), 1);
    assert_eq!(emu.state_json()["duplicate_resolve_notes"], 1);

    let (_, _, _) = resolve(second.clone(), "true", BOB).await;
    assert_eq!(system_notes().await.last().unwrap(), "resolved all threads");
    assert_eq!(
        emu.duplicate_resolve_notes(),
        1,
        "a first resolve is no duplicate"
    );
    // System notes are individual notes of their own, not in the threads.
    let threads = gl_threads(&emu, ALICE).await;
    assert!(threads
        .iter()
        .flat_map(|t| t["notes"].as_array().unwrap())
        .all(|n| n["system"] == false));
    let mr = gl_get(&emu, &mr_path(""), ALICE).await;
    assert_eq!(mr["blocking_discussions_resolved"], true);

    // Unresolving adds nothing.
    let before = system_notes().await.len();
    let (_, _, discussion) = resolve(second.clone(), "false", ALICE).await;
    assert_eq!(discussion["notes"][0]["resolved"], false);
    assert_eq!(discussion["notes"][0]["resolved_by"], Value::Null);
    assert_eq!(system_notes().await.len(), before);

    let (status, _, _) = resolve(second.clone(), "true", READER).await;
    assert_eq!(status, 403);
    let (status, _, body) = gl(
        &emu,
        Method::PUT,
        &mr_path(&format!("/discussions/{second}")),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!(
        (status, body),
        (400, json!({ "error": "resolved is missing" }))
    );
    // `resolved` in a JSON body works too.
    let (status, _, discussion) = gl(
        &emu,
        Method::PUT,
        &mr_path(&format!("/discussions/{second}")),
        Some(ALICE),
        Some(json!({ "resolved": true })),
    )
    .await;
    assert_eq!(
        (status, discussion["notes"][0]["resolved"].as_bool()),
        (200, Some(true))
    );
    let top = gl_discussions(&emu, ALICE)
        .await
        .into_iter()
        .find(|d| d["individual_note"] == true && d["notes"][0]["system"] == false)
        .unwrap();
    let (status, _, _) = resolve(top["id"].as_str().unwrap().to_owned(), "true", ALICE).await;
    assert_eq!(status, 400, "an individual note is not resolvable");

    // A reset forgets the duplicates.
    emu.reset().await.unwrap();
    assert_eq!(emu.duplicate_resolve_notes(), 0);
}

#[tokio::test]
async fn draft_notes_are_their_authors_alone() {
    let mut s = gitlab_scenario(1, 1);
    let mut draft = ReviewSpec::new("bob", ReviewStateSpec::Pending, "");
    draft.name = Some("bob-draft".into());
    s.reviews.push(draft);
    let mut reply = ThreadCommentSpec::new("bob", "a draft reply");
    reply.review = Some("bob-draft".into());
    s.threads[0].comments.push(reply);
    let emu = start(s).await;
    emu.act(Act::Review {
        user: "bob".into(),
        pr: None,
        event: Some("PENDING".into()),
        body: None,
        threads: vec![ActThread::new("src/lib.rs", 10, "a draft thread")],
    })
    .await
    .expect_err("bob already has a pending review");
    let outcome = emu
        .act(Act::Review {
            user: "alice".into(),
            pr: None,
            event: Some("PENDING".into()),
            body: None,
            threads: vec![ActThread::new("src/lib.rs", 10, "alice's draft thread")],
        })
        .await
        .unwrap();
    assert_eq!(outcome.threads[0].discussion_id.len(), 40);

    let bobs = gl_get(&emu, &mr_path("/draft_notes"), BOB).await;
    let bobs = bobs.as_array().unwrap();
    assert_eq!(bobs.len(), 1);
    assert_eq!(bobs[0]["note"], "a draft reply");
    let threads = gl_threads(&emu, BOB).await;
    assert_eq!(bobs[0]["discussion_id"], threads[0]["id"]);
    let bob_id = gl_get(&emu, "/user", BOB).await["id"].clone();
    assert_eq!(bobs[0]["author_id"], bob_id);

    let alices = gl_get(&emu, &mr_path("/draft_notes"), ALICE).await;
    let alices = alices.as_array().unwrap();
    assert_eq!(alices.len(), 1);
    assert_eq!(alices[0]["note"], "alice's draft thread");
    assert_eq!(alices[0]["discussion_id"], Value::Null);
    assert_eq!(alices[0]["position"]["new_line"], 10);
    assert!(alices[0]["line_code"].as_str().unwrap().ends_with("_0_10"));
    assert_eq!(
        gl_get(&emu, &mr_path("/draft_notes"), READER).await,
        json!([])
    );

    // Drafts are in no discussion, for anyone, their authors included.
    for token in [ALICE, BOB, READER] {
        let all = gl_discussions(&emu, token).await;
        let bodies: Vec<&str> = all
            .iter()
            .flat_map(|d| d["notes"].as_array().unwrap())
            .map(|n| n["body"].as_str().unwrap())
            .collect();
        assert!(!bodies.iter().any(|b| b.contains("draft")), "{bodies:?}");
        assert_eq!(all.len(), 2);
    }
}

#[tokio::test]
async fn compare_is_the_real_git_diff() {
    let emu = start(gitlab_scenario(0, 1)).await;
    let base = emu.base_sha(1).unwrap();
    let head = emu.head_sha(1).unwrap();
    let path =
        format!("/projects/{GL_PROJECT}/repository/compare?from={base}&to={head}&straight=true");
    let compare = gl_get(&emu, &path, ALICE).await;
    let diffs = compare["diffs"].as_array().unwrap();
    assert_eq!(diffs.len(), 1);
    assert_eq!(diffs[0]["new_path"], "src/lib.rs");
    assert_eq!(diffs[0]["new_file"], false);
    let diff = diffs[0]["diff"].as_str().unwrap();
    assert!(diff.starts_with("@@ -2,6 +2,7 @@"), "{diff}");
    assert!(diff.contains("\n+line 5\n"), "{diff}");
    assert_eq!(compare["commit"]["id"], head.as_str());
    assert_eq!(compare["commits"].as_array().unwrap().len(), 1);
    assert_eq!(compare["compare_timeout"], false);

    let files = BTreeMap::from([
        ("docs/new.md".to_owned(), Some("new\n".to_owned())),
        ("README.md".to_owned(), None),
    ]);
    let next = emu
        .act_push("alice", "feature/widgets", files, "Docs")
        .await
        .unwrap();
    let path = format!("/projects/{GL_PROJECT}/repository/compare?from={head}&to=feature/widgets");
    let compare = gl_get(&emu, &path, ALICE).await;
    assert_eq!(compare["commit"]["id"], next.as_str());
    assert_eq!(compare["commit"]["title"], "Docs");
    let by_path: BTreeMap<&str, &Value> = compare["diffs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["new_path"].as_str().unwrap(), d))
        .collect();
    assert_eq!(by_path["docs/new.md"]["new_file"], true);
    assert_eq!(by_path["docs/new.md"]["diff"], "@@ -0,0 +1 @@\n+new\n");
    assert_eq!(by_path["README.md"]["deleted_file"], true);

    let bad = format!("/projects/{GL_PROJECT}/repository/compare?from={base}&to=nope");
    let (status, _, _) = gl(&emu, Method::GET, &bad, Some(ALICE), None).await;
    assert_eq!(status, 404);
    let missing = format!("/projects/{GL_PROJECT}/repository/compare?from={base}");
    let (status, _, body) = gl(&emu, Method::GET, &missing, Some(ALICE), None).await;
    assert_eq!((status, body), (400, json!({ "error": "to is missing" })));
}

#[tokio::test]
async fn faults_and_counts_apply_to_gitlab_routes() {
    let emu = start(gitlab_scenario(1, 1)).await;
    const MR: &str = "GET /api/v4/projects/{id}/merge_requests/{iid}";
    const NOTES: &str = "POST /api/v4/projects/{id}/merge_requests/{iid}/notes";
    emu.set_fault(FaultSpec::nth(MR, 1).with_status(500, None))
        .unwrap();
    let (status, _, body) = gl(&emu, Method::GET, &mr_path(""), Some(ALICE), None).await;
    assert_eq!(
        (status, body),
        (500, json!({ "message": "500 Internal Server Error" }))
    );
    let (status, headers, _) = gl(&emu, Method::GET, &mr_path(""), Some(ALICE), None).await;
    assert_eq!(status, 200);
    assert_eq!(headers["ratelimit-remaining"], "1999");
    assert_eq!(emu.request_count(MR), 2);

    emu.set_fault(FaultSpec::nth("GET /api/v4/user", 1).with_rate_limit(429, 3))
        .unwrap();
    let (status, headers, _) = gl(&emu, Method::GET, "/user", Some(ALICE), None).await;
    assert_eq!(status, 429);
    assert_eq!(headers["retry-after"], "3");
    assert_eq!(headers["ratelimit-remaining"], "0");

    emu.set_fault(FaultSpec::nth(NOTES, 1).with_commit_then_fail())
        .unwrap();
    let (status, _, body) = gl(
        &emu,
        Method::POST,
        &mr_path("/notes"),
        Some(ALICE),
        Some(json!({ "body": "landed" })),
    )
    .await;
    assert_eq!(
        (status, body),
        (502, json!({ "message": "502 Bad Gateway" }))
    );
    let notes = gl_get(&emu, &mr_path("/notes"), ALICE).await;
    assert_eq!(
        notes[0]["body"], "landed",
        "the note was posted all the same"
    );
    let faults = emu.faults();
    assert!(
        faults.as_array().unwrap().iter().all(|f| f["fired"] == 1),
        "{faults}"
    );
}

#[tokio::test]
async fn the_control_api_speaks_gitlab_ids() {
    let emu = start(gitlab_scenario(2, 1)).await;
    let (status, state) = control(&emu, Method::GET, "state", None).await;
    assert_eq!(status, 200);
    assert_eq!(state["forge"], "gitlab");
    assert_eq!(state["urls"]["api"], emu.gitlab_api_url().as_str());
    assert_eq!(state["repository"]["owner"], "acme/tools");
    let discussion = state["pull_requests"][0]["threads"][0]["discussion_id"]
        .as_str()
        .unwrap()
        .to_owned();

    let (status, body) = control(
        &emu,
        Method::POST,
        "act",
        Some(json!({ "action": "reply", "as": "bob", "thread_id": discussion, "body": "ping" })),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = control(
        &emu,
        Method::POST,
        "act",
        Some(json!({ "action": "resolve", "as": "bob", "thread_id": discussion })),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let one = gl_get(&emu, &mr_path(&format!("/discussions/{discussion}")), ALICE).await;
    assert_eq!(one["notes"][1]["body"], "ping");
    assert_eq!(one["notes"][1]["resolved"], true);
    let (status, body) = control(
        &emu,
        Method::POST,
        "act",
        Some(json!({ "action": "comment", "as": "bob", "body": "top" })),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let notes = gl_get(&emu, &mr_path("/notes"), ALICE).await;
    assert_eq!(notes[0]["body"], "top");
    assert!(emu.banner().contains("GitLab emulator"), "{}", emu.banner());
    assert!(emu.banner().contains("/api/v4"));
}
