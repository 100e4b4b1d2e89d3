//! The merge request routes a GitLab user's tools call besides notes and
//! discussions: a title's draft prefix, `changes`, `diffs`, `versions`,
//! `commits`, `participants`, approvals, and new discussions through the
//! API, with a diff position or without.

use std::collections::BTreeMap;

use reqwest::Method;
use serde_json::{json, Value};

use crate::common::*;

#[tokio::test]
async fn a_draft_prefix_in_the_title_makes_a_draft() {
    let mut s = gitlab_scenario(0, 1);
    s.pull_request.title = "[Draft] Add widgets".into();
    let emu = start(s).await;
    let mr = gl_get(&emu, &mr_path(""), ALICE).await;
    assert_eq!(
        (&mr["draft"], &mr["work_in_progress"]),
        (&json!(true), &json!(true))
    );
    assert_eq!(mr["detailed_merge_status"], "draft_status");
    for (title, draft) in [
        ("Add widgets", false),
        ("Draft: Add widgets", true),
        ("(draft) Add widgets", true),
        ("Add widgets (Draft)", false),
    ] {
        let (status, _, mr) = gl(
            &emu,
            Method::PUT,
            &mr_path(""),
            Some(ALICE),
            Some(json!({ "title": title })),
        )
        .await;
        assert_eq!(status, 200, "{mr}");
        assert_eq!(mr["draft"], draft, "{title}");
        assert_eq!(mr["work_in_progress"], draft, "{title}");
    }
}

#[tokio::test]
async fn changes_diffs_commits_and_versions_are_the_real_diff() {
    let emu = start(gitlab_scenario(1, 1)).await;
    let head = emu.head_sha(1).unwrap();
    let base = emu.base_sha(1).unwrap();
    let changes = gl_get(&emu, &mr_path("/changes"), ALICE).await;
    assert_eq!(changes["iid"], 1, "the merge request itself");
    assert_eq!(changes["overflow"], false);
    let files = changes["changes"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{changes}");
    assert_eq!(files[0]["new_path"], "src/lib.rs");
    assert!(
        files[0]["diff"].as_str().unwrap().contains("+line 5\n"),
        "{changes}"
    );
    let diffs = gl_get(&emu, &mr_path("/diffs"), ALICE).await;
    assert_eq!(diffs, changes["changes"]);

    let commits = gl_get(&emu, &mr_path("/commits"), ALICE).await;
    assert_eq!(commits.as_array().unwrap().len(), 1, "{commits}");
    assert_eq!(commits[0]["id"], head.as_str());
    assert_eq!(commits[0]["title"], "Add widgets");

    let versions = gl_get(&emu, &mr_path("/versions"), ALICE).await;
    assert_eq!(versions.as_array().unwrap().len(), 1, "{versions}");
    assert_eq!(versions[0]["head_commit_sha"], head.as_str());
    assert_eq!(versions[0]["base_commit_sha"], base.as_str());
    assert_eq!(versions[0]["state"], "collected");
    let first = versions[0]["id"].as_u64().unwrap();

    // A push is a new version; the old one keeps its diff.
    let files = BTreeMap::from([("README.md".to_owned(), Some("# more\n".to_owned()))]);
    let pushed = emu
        .act_push("alice", "feature/widgets", files, "Edit README")
        .await
        .unwrap();
    let versions = gl_get(&emu, &mr_path("/versions"), ALICE).await;
    let heads: Vec<&str> = versions
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["head_commit_sha"].as_str().unwrap())
        .collect();
    assert_eq!(heads, [pushed.as_str(), head.as_str()], "newest first");
    let old = gl_get(&emu, &mr_path(&format!("/versions/{first}")), ALICE).await;
    assert_eq!(old["head_commit_sha"], head.as_str());
    assert_eq!(old["diffs"].as_array().unwrap().len(), 1, "{old}");
    assert_eq!(old["commits"][0]["id"], head.as_str());
    let latest = versions[0]["id"].as_u64().unwrap();
    let new = gl_get(&emu, &mr_path(&format!("/versions/{latest}")), ALICE).await;
    let paths: Vec<&str> = new["diffs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["new_path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["README.md", "src/lib.rs"]);
    assert_eq!(new["commits"][0]["id"], pushed.as_str(), "newest first");
    let commits = gl_get(&emu, &mr_path("/commits"), ALICE).await;
    assert_eq!(commits.as_array().unwrap().len(), 2);
    let (status, _, _) = gl(
        &emu,
        Method::GET,
        &mr_path("/versions/1"),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!(status, 404);
    let (status, _, _) = gl(
        &emu,
        Method::GET,
        &mr_path("/changes"),
        Some(STRANGER),
        None,
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn participants_are_the_author_and_who_commented() {
    let emu = start(gitlab_scenario(1, 2)).await;
    let participants = gl_get(&emu, &mr_path("/participants"), ALICE).await;
    let names: Vec<&str> = participants
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["username"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["alice", "bob", "review-bot"]);
}

#[tokio::test]
async fn approvals_are_given_shown_and_withdrawn() {
    let emu = start(gitlab_scenario(0, 1)).await;
    let approvals = gl_get(&emu, &mr_path("/approvals"), BOB).await;
    assert_eq!(approvals["approved"], false);
    assert_eq!(approvals["approved_by"], json!([]));
    assert_eq!(approvals["user_can_approve"], true);
    let post = |path: &'static str, token: &'static str, body: Option<Value>| {
        let emu = &emu;
        async move { gl(emu, Method::POST, &mr_path(path), Some(token), body).await }
    };
    let (status, _, approved) = post("/approve", BOB, None).await;
    assert_eq!(status, 201, "{approved}");
    assert_eq!(approved["approved"], true);
    assert_eq!(approved["user_has_approved"], true);
    assert_eq!(approved["approved_by"][0]["user"]["username"], "bob");
    // Twice, or by a reader: GitLab's 401.
    let (status, _, body) = post("/approve", BOB, None).await;
    assert_eq!(
        (status, body),
        (401, json!({ "message": "401 Unauthorized" }))
    );
    let (status, _, _) = post("/approve", READER, None).await;
    assert_eq!(status, 401);
    // A head that moved: 409.
    let (status, _, body) = post("/approve", ALICE, Some(json!({ "sha": "0".repeat(40) }))).await;
    assert_eq!(status, 409, "{body}");
    let head = emu.head_sha(1).unwrap();
    let (status, _, both) = post("/approve", ALICE, Some(json!({ "sha": head }))).await;
    assert_eq!(status, 201, "{both}");
    let names: Vec<&str> = both["approved_by"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["user"]["username"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["bob", "alice"]);
    // The system notes GitLab posts.
    let notes = gl_get(&emu, &mr_path("/notes?sort=asc"), ALICE).await;
    let system: Vec<(&str, &str)> = notes
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["system"] == true)
        .map(|n| {
            (
                n["author"]["username"].as_str().unwrap(),
                n["body"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        system,
        [
            ("bob", "approved this merge request"),
            ("alice", "approved this merge request")
        ]
    );
    let (status, _, left) = post("/unapprove", BOB, None).await;
    assert_eq!(status, 201, "{left}");
    assert_eq!(left["approved_by"][0]["user"]["username"], "alice");
    assert_eq!(left["approved_by"].as_array().unwrap().len(), 1);
    let (status, _, _) = post("/unapprove", BOB, None).await;
    assert_eq!(status, 404, "nothing to withdraw");
    let approvals = gl_get(&emu, &mr_path("/approvals"), BOB).await;
    assert_eq!(approvals["user_has_approved"], false);
}

#[tokio::test]
async fn a_discussion_without_a_position_is_a_resolvable_thread() {
    let emu = start(gitlab_scenario(0, 1)).await;
    let (status, _, discussion) = gl(
        &emu,
        Method::POST,
        &mr_path("/discussions"),
        Some(BOB),
        Some(json!({ "body": "A question about the whole change" })),
    )
    .await;
    assert_eq!(status, 201, "{discussion}");
    assert_eq!(discussion["individual_note"], false);
    let note = &discussion["notes"][0];
    assert_eq!(note["type"], "DiscussionNote");
    assert_eq!(note["resolvable"], true);
    assert_eq!(note["resolved"], false);
    assert!(note.get("position").is_none(), "{note}");
    assert_eq!(note["author"]["username"], "bob");
    let id = discussion["id"].as_str().unwrap();
    assert_eq!(
        gl_get(&emu, &mr_path(&format!("/discussions/{id}")), ALICE).await,
        discussion
    );
    // Answered and resolved like any thread.
    let (status, _, _) = gl(
        &emu,
        Method::POST,
        &mr_path(&format!("/discussions/{id}/notes")),
        Some(ALICE),
        Some(json!({ "body": "an answer" })),
    )
    .await;
    assert_eq!(status, 201);
    let (status, _, resolved) = gl(
        &emu,
        Method::PUT,
        &mr_path(&format!("/discussions/{id}?resolved=true")),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!(status, 200, "{resolved}");
    assert_eq!(resolved["notes"][1]["resolved"], true);
    // A reader may not; a body is needed.
    let (status, _, _) = gl(
        &emu,
        Method::POST,
        &mr_path("/discussions"),
        Some(READER),
        Some(json!({ "body": "no" })),
    )
    .await;
    assert_eq!(status, 403);
    let (status, _, body) = gl(
        &emu,
        Method::POST,
        &mr_path("/discussions"),
        Some(BOB),
        Some(json!({})),
    )
    .await;
    assert_eq!((status, body), (400, json!({ "error": "body is missing" })));
}

#[tokio::test]
async fn a_discussion_with_a_position_is_a_diff_note_on_that_line() {
    let emu = start(gitlab_scenario(0, 1)).await;
    let head = emu.head_sha(1).unwrap();
    let base = emu.base_sha(1).unwrap();
    let position = json!({
        "base_sha": base, "start_sha": base, "head_sha": head,
        "position_type": "text", "new_path": "src/lib.rs", "old_path": "src/lib.rs",
        "new_line": 5,
    });
    let (status, _, discussion) = gl(
        &emu,
        Method::POST,
        &mr_path("/discussions"),
        Some(BOB),
        Some(json!({ "body": "Why line 5?", "position": position })),
    )
    .await;
    assert_eq!(status, 201, "{discussion}");
    let note = &discussion["notes"][0];
    assert_eq!(note["type"], "DiffNote");
    assert_eq!(note["position"]["new_line"], 5);
    assert_eq!(note["position"]["new_path"], "src/lib.rs");
    assert_eq!(note["position"]["head_sha"], head.as_str());
    // As form keys (`position[new_line]=…`, what curl and glab send), a
    // range of lines 4 to 6.
    let form: Vec<(String, String)> = [
        ("body", "these lines"),
        ("position[base_sha]", &base),
        ("position[start_sha]", &base),
        ("position[head_sha]", &head),
        ("position[position_type]", "text"),
        ("position[new_path]", "src/lib.rs"),
        ("position[new_line]", "6"),
        ("position[line_range][start][type]", "new"),
        ("position[line_range][start][new_line]", "4"),
        ("position[line_range][end][type]", "new"),
        ("position[line_range][end][new_line]", "6"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect();
    let answer = client()
        .post(format!(
            "{}{}",
            emu.gitlab_api_url(),
            mr_path("/discussions")
        ))
        .header("private-token", BOB)
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 201);
    let ranged: Value = answer.json().await.unwrap();
    let range = &ranged["notes"][0]["position"]["line_range"];
    assert_eq!(
        (&range["start"]["new_line"], &range["end"]["new_line"]),
        (&json!(4), &json!(6)),
        "{ranged}"
    );
    // Shepherd's GitHub-side view of the same state: two threads.
    let state = emu.state_json();
    let threads = state["pull_requests"][0]["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 2);
    assert_eq!(threads[1]["current_start_line"], 4);

    // A line outside the diff, a stale head, a missing key.
    let mut off = position.clone();
    off["new_line"] = json!(250);
    let mut stale = position.clone();
    stale["head_sha"] = json!(base);
    let mut incomplete = position.clone();
    incomplete.as_object_mut().unwrap().remove("base_sha");
    for (what, position, status) in [
        ("off", off, 400),
        ("stale", stale, 400),
        ("incomplete", incomplete, 400),
    ] {
        let (got, _, body) = gl(
            &emu,
            Method::POST,
            &mr_path("/discussions"),
            Some(BOB),
            Some(json!({ "body": "x", "position": position })),
        )
        .await;
        assert_eq!(got, status, "{what}: {body}");
    }
    let (_, _, body) = gl(
        &emu,
        Method::POST,
        &mr_path("/discussions"),
        Some(BOB),
        Some(json!({ "body": "x", "position": { "head_sha": head } })),
    )
    .await;
    assert_eq!(
        body["error"],
        "position[base_sha] is missing, position[start_sha] is missing, position[position_type] is missing"
    );
    assert_eq!(gl_threads(&emu, ALICE).await.len(), 2, "nothing more made");
}
