//! The control API: acting as users, reset, wait-idle, request counts.

use std::collections::BTreeMap;

use reqwest::Method;
use serde_json::{json, Value};
use shepherd_emulator::{Act, ActError, ActThread, CheckSpec};

use crate::common::*;

#[tokio::test]
async fn act_posts_reviews_comments_replies_and_resolves() {
    let emu = start(scenario(1, 1)).await;
    let (status, review) = control(
        &emu,
        Method::POST,
        "act",
        Some(json!({
            "action": "review", "as": "bob", "event": "REQUEST_CHANGES", "body": "Please fix",
            "threads": [
                { "path": "src/lib.rs", "line": 5, "body": "in the diff" },
                { "path": "src/lib.rs", "start_line": 40, "line": 42, "body": "outside the diff" },
                { "path": "README.md", "body": "file level" }
            ]
        })),
    )
    .await;
    assert_eq!(status, 201, "{review}");
    assert_eq!(review["threads"].as_array().unwrap().len(), 3);
    let new_thread = review["threads"][0]["id"].as_str().unwrap().to_owned();
    let all = threads(&emu, ALICE).await;
    assert_eq!(all.len(), 4);
    assert_eq!(all[1]["line"], 5);
    assert_eq!(all[2]["startLine"], 40);
    assert_eq!(
        all[1]["comments"]["nodes"][0]["pullRequestReview"]["state"],
        "CHANGES_REQUESTED"
    );
    let hunks: Vec<String> = emu.state_json()["pull_requests"][0]["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["comments"][0]["diff_hunk"].as_str().unwrap().to_owned())
        .collect();
    assert!(hunks[1].ends_with("+line 5"), "{}", hunks[1]);
    assert_eq!(hunks[2], "@@ -42,1 +42,1 @@\n line 42");

    // Comment, reply (by thread id and by comment id), resolve.
    let id = emu.act_comment("bob", "top-level from act").await.unwrap();
    assert!(id > 0);
    emu.act_reply("alice", &new_thread, "on it").await.unwrap();
    let root = root_comment_id(&emu, 0);
    let (status, outcome) = control(
        &emu,
        Method::POST,
        "act",
        Some(json!({ "action": "reply", "as": "review-bot", "comment_id": root, "body": "bot reply" })),
    )
    .await;
    assert_eq!(status, 201, "{outcome}");
    emu.act(Act::Resolve {
        user: "bob".into(),
        thread_id: new_thread.clone(),
        resolved: None,
    })
    .await
    .unwrap();
    let all = threads(&emu, ALICE).await;
    assert_eq!(all[0]["comments"]["totalCount"], 2);
    assert_eq!(all[1]["comments"]["totalCount"], 2);
    assert_eq!(all[1]["isResolved"], true);
    assert_eq!(
        emu.state_json()["pull_requests"][0]["issue_comments"][1]["body"],
        "top-level from act"
    );

    // Refusals.
    let err = emu.act_comment("nobody", "x").await.unwrap_err();
    assert_eq!(err, ActError::UnknownUser("nobody".into()));
    let err = emu.act_comment("reader", "x").await.unwrap_err();
    assert!(
        matches!(err, ActError::Refused { status: 403, .. }),
        "{err}"
    );
    let (status, _) = control(
        &emu,
        Method::POST,
        "act",
        Some(json!({ "action": "dance", "as": "bob" })),
    )
    .await;
    assert_eq!(status, 400);
    let (status, body) = control(
        &emu,
        Method::POST,
        "act",
        Some(json!({ "action": "comment", "as": "bob", "body": "x", "colour": "red" })),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        body["message"].as_str().unwrap().contains("colour"),
        "{body}"
    );
}

#[tokio::test]
async fn a_pending_review_stays_private_until_submitted() {
    let emu = start(scenario(0, 0)).await;
    emu.act(Act::Review {
        user: "alice".into(),
        pr: None,
        event: Some("PENDING".into()),
        body: None,
        threads: vec![ActThread::new("src/lib.rs", 5, "draft")],
    })
    .await
    .unwrap();
    assert_eq!(threads(&emu, ALICE).await.len(), 1);
    assert_eq!(threads(&emu, BOB).await.len(), 0);
    // One pending review per user, as on GitHub.
    let err = emu
        .act(Act::Review {
            user: "alice".into(),
            pr: None,
            event: Some("PENDING".into()),
            body: None,
            threads: vec![],
        })
        .await
        .unwrap_err();
    assert!(
        matches!(err, ActError::Refused { status: 422, .. }),
        "{err}"
    );
    emu.act(Act::SubmitReview {
        user: "alice".into(),
        pr: None,
        event: "COMMENT".into(),
        body: Some("done".into()),
    })
    .await
    .unwrap();
    assert_eq!(threads(&emu, BOB).await.len(), 1);
}

#[tokio::test]
async fn act_push_commits_with_plumbing_and_has_every_push_effect() {
    let mut s = scenario(1, 1);
    s.threads[0].line = Some(3);
    s.checks.push(CheckSpec::new(
        "tests",
        "test -f NEW.md && test ! -f README.md",
    ));
    s.ci.run_on_start = false;
    let emu = start(s).await;
    let before = emu.head_sha(1).unwrap();
    let files = BTreeMap::from([
        ("NEW.md".to_owned(), Some("new\n".to_owned())),
        ("README.md".to_owned(), None),
        (
            "src/lib.rs".to_owned(),
            Some(
                std::iter::once("first".to_owned())
                    .chain((1..=300).map(|i| format!("line {i}")))
                    .collect::<Vec<_>>()
                    .join("\n")
                    + "\n",
            ),
        ),
    ]);
    let sha = emu
        .act_push("alice", "feature/widgets", files, "Add NEW.md")
        .await
        .unwrap();
    assert_eq!(sha.len(), 40);
    assert_eq!(emu.head_sha(1).unwrap(), sha);
    // The thread followed its line.
    assert_eq!(threads(&emu, ALICE).await[0]["line"], 4);
    // The commit is real: its parent, tree and author are right.
    assert_eq!(
        emulator_git(&emu, &["rev-parse", &format!("{sha}^")]),
        before
    );
    assert_eq!(
        emulator_git(&emu, &["log", "-1", "--format=%an %s", &sha]),
        "alice Add NEW.md"
    );
    assert_eq!(emulator_git(&emu, &["rev-parse", "refs/pull/1/head"]), sha);
    idle(&emu).await;
    assert_eq!(
        check_runs(&emu, &sha).await,
        [("tests".to_owned(), "completed".to_owned(), json!("success"))]
    );
    // A missing branch is a 404.
    let (status, body) = control(
        &emu,
        Method::POST,
        "act",
        Some(json!({ "action": "push", "as": "alice", "branch": "nope", "files": { "a": "b" } })),
    )
    .await;
    assert_eq!(status, 404, "{body}");
}

#[tokio::test]
async fn reset_restores_the_scenario_and_the_repository() {
    let mut s = scenario(2, 1);
    s.checks.push(CheckSpec::new("tests", "true"));
    let emu = start(s).await;
    idle(&emu).await;
    let initial = emu.state_json();
    let initial_head = emu.head_sha(1).unwrap();

    emu.act_comment("bob", "extra").await.unwrap();
    emu.act_reply("alice", &thread_node_id(&emu, 0), "reply")
        .await
        .unwrap();
    let files = BTreeMap::from([("X".to_owned(), Some("x\n".to_owned()))]);
    emu.act_push("alice", "feature/widgets", files, "x")
        .await
        .unwrap();
    emu.set_fault(shepherd_emulator::FaultSpec::every("GET /user"))
        .unwrap();
    idle(&emu).await;
    assert_ne!(emu.head_sha(1).unwrap(), initial_head);

    let (status, body) = control(&emu, Method::POST, "reset", None).await;
    assert_eq!(status, 200, "{body}");
    idle(&emu).await;
    let after = emu.state_json();
    assert_eq!(emu.head_sha(1).unwrap(), initial_head);
    assert_eq!(after["pull_requests"], initial["pull_requests"]);
    assert_eq!(after["faults"], json!([]));
    // CI ran again at start.
    assert_eq!(
        after["ci"]["check_runs"].as_array().unwrap().len(),
        initial["ci"]["check_runs"].as_array().unwrap().len()
    );
    assert_eq!(
        emulator_git(&emu, &["rev-parse", "refs/heads/feature/widgets"]),
        initial_head
    );
    assert_eq!(
        emulator_git(&emu, &["rev-parse", "refs/pull/1/head"]),
        initial_head
    );
    // A clone sees the initial head too.
    let cloned = cloned_head(authed_git_url(&emu, ALICE), "feature/widgets").await;
    assert_eq!(cloned, initial_head);
    assert_eq!(rest_get(&emu.api_url(), "/user", Some(ALICE)).await.0, 200);
    // The Rust method does the same.
    emu.act_comment("bob", "again").await.unwrap();
    emu.reset().await.unwrap();
    assert_eq!(emu.state_json()["pull_requests"], initial["pull_requests"]);
}

#[tokio::test]
async fn wait_idle_waits_for_ci_and_bots() {
    let mut s = scenario(0, 0);
    let mut slow = CheckSpec::new("slow", "sleep 0.3");
    slow.delay_ms = 200;
    s.checks.push(slow);
    let emu = start(s).await;
    let (status, body) = control(&emu, Method::GET, "wait-idle?timeout_ms=10", None).await;
    assert_eq!(status, 408);
    assert_eq!(body["idle"], false);
    assert!(body["pending"].as_u64().unwrap() >= 1);
    let (status, body) = control(&emu, Method::GET, "wait-idle?timeout_ms=10000", None).await;
    assert_eq!(status, 200);
    assert_eq!(body["idle"], true);
    assert_eq!(emu.state_json()["pending_tasks"], 0);
    assert!(emu.wait_idle(std::time::Duration::from_millis(1)).await);
}

#[tokio::test]
async fn request_counts_are_served_and_reset() {
    let emu = start(scenario(1, 1)).await;
    rest_get(&emu.api_url(), "/user", Some(ALICE)).await;
    graphql(&emu, ALICE, "query Viewer { viewer { login } }", json!({})).await;
    let (status, counts) = control(&emu, Method::GET, "requests", None).await;
    assert_eq!(status, 200);
    // The control API itself is not counted.
    assert_eq!(counts, json!({ "GET /user": 1, "graphql:Viewer": 1 }));
    let (status, _) = control(&emu, Method::POST, "requests/reset", None).await;
    assert_eq!(status, 204);
    let (_, counts) = control(&emu, Method::GET, "requests", None).await;
    assert_eq!(counts, json!({}));
    let state: Value = control(&emu, Method::GET, "state", None).await.1;
    assert!(state["ci"].is_object());
    assert!(state["faults"].is_array());
}
