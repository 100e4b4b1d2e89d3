//! Shepherd's own `GitLabClient` against the emulator: a snapshot of a merge
//! request with 250 discussions (three pages), replies read back, marker
//! look-ups, a resolve sent once (never a duplicate system note), edits,
//! lines traced through the comparison after a push, and CI (pipelines,
//! jobs as checks, required jobs, retry of failed jobs).

use std::collections::{BTreeMap, BTreeSet};

use shepherd_core::ci::RequiredSet;
use shepherd_core::marker::Marker;
use shepherd_core::model::{AuthorKind, ForgeKind, RepoRef};
use shepherd_emulator::{Act, ActThread, CheckSpec, RunningEmulator};
use shepherd_forge::{Forge, GitLabClient, GitLabEndpoints, ItemRef, ThreadRef, Token};

use crate::common::*;

const DISCUSSIONS: &str = "GET /api/v4/projects/{id}/merge_requests/{iid}/discussions";
const RESOLVE: &str = "PUT /api/v4/projects/{id}/merge_requests/{iid}/discussions/{discussion_id}";

fn client_for(emu: &RunningEmulator, token: &str) -> GitLabClient {
    let repo = RepoRef {
        host: format!("127.0.0.1:{}", emu.addr().port()),
        owner: "acme/tools".into(),
        name: "widgets".into(),
    };
    let endpoints = GitLabEndpoints::from_api_url(&emu.gitlab_api_url()).unwrap();
    GitLabClient::new(repo, endpoints, Token::new(token)).unwrap()
}

fn marker(item: &str) -> Marker {
    Marker::new(item, 1, true)
}

#[tokio::test]
async fn the_client_reads_250_discussions_replies_and_resolves_once() {
    let emu = start(gitlab_scenario(250, 2)).await;
    let client = client_for(&emu, ALICE);
    emu.reset_request_counts();
    let snapshot = client.snapshot(1).await.unwrap();
    assert_eq!(snapshot.forge, ForgeKind::GitLab);
    assert_eq!(snapshot.viewer, "alice");
    assert_eq!(snapshot.threads.len(), 250);
    assert_eq!(snapshot.comments.len(), 1);
    assert_eq!(snapshot.comments[0].body, "top-level");
    assert_eq!(emu.request_count(DISCUSSIONS), 3, "100 per page");
    let pr = &snapshot.pr;
    assert_eq!(pr.head_sha, emu.head_sha(1).unwrap());
    assert_eq!(
        (pr.head_ref.as_str(), pr.base_ref.as_str()),
        ("feature/widgets", "main")
    );
    assert!(!pr.is_cross_repository);
    assert!(!pr.viewer_has_pending_review);
    let first = &snapshot.threads[0];
    assert_eq!(
        (first.path.as_str(), first.line, first.is_outdated),
        ("src/lib.rs", Some(1), false)
    );
    assert_eq!(first.comments.len(), 2);
    assert_eq!(
        first.comments[0].author.as_ref().unwrap().kind,
        AuthorKind::User
    );
    assert_eq!(
        first.comments[1].author.as_ref().unwrap().kind,
        AuthorKind::Bot
    );
    let ids: BTreeSet<&str> = snapshot.threads.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids.len(), 250);

    // A reply, read back with its marker.
    let thread = ThreadRef::of(first).unwrap();
    let body = marker(&first.id).append_to("Fixed in the next push.");
    let posted = client.reply_to_thread(1, &thread, &body).await.unwrap();
    assert_eq!(posted.marker, Some(marker(&first.id)));
    assert_eq!(posted.author.as_ref().unwrap().login, "alice");
    let found = client
        .find_marker_reply(1, &ItemRef::Thread(first.id.clone()), "alice")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.id, posted.id);

    // Resolved once: a second resolve reads the discussion and sends nothing.
    emu.reset_request_counts();
    client.resolve_thread(&first.id).await.unwrap();
    client.resolve_thread(&first.id).await.unwrap();
    assert_eq!(emu.request_count(RESOLVE), 1);
    assert_eq!(emu.duplicate_resolve_notes(), 0);
    assert_eq!(client.review_threads(1).await.unwrap().len(), 249);

    // A top-level reply, found by its marker.
    let item = snapshot.comments[0].id.clone();
    let body = marker(&item).append_to("Added.");
    let posted = client.post_issue_comment(1, &body).await.unwrap();
    let found = client
        .find_marker_reply(1, &ItemRef::TopLevel(item), "alice")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.id, posted.id);

    // Edits.
    client
        .update_pull_request(1, Some("Widgets, reviewed"), Some("Done."))
        .await
        .unwrap();
    client
        .add_labels(1, &["shepherd".to_owned()])
        .await
        .unwrap();
    client.remove_label(1, "absent").await.unwrap();
    let state = emu.state_json();
    let mr = &state["pull_requests"][0];
    assert_eq!(
        (mr["title"].as_str(), mr["body"].as_str()),
        (Some("Widgets, reviewed"), Some("Done."))
    );
    assert_eq!(mr["labels"], serde_json::json!(["shepherd"]));

    // The viewer's draft notes make a pending review; another's do not.
    emu.act(Act::Review {
        user: "bob".into(),
        pr: None,
        event: Some("PENDING".into()),
        body: None,
        threads: vec![ActThread::new("src/lib.rs", 7, "bob's draft")],
    })
    .await
    .unwrap();
    assert!(
        !client
            .pull_request(1)
            .await
            .unwrap()
            .viewer_has_pending_review
    );
    emu.act(Act::Review {
        user: "alice".into(),
        pr: None,
        event: Some("PENDING".into()),
        body: None,
        threads: vec![ActThread::new("src/lib.rs", 8, "alice's draft")],
    })
    .await
    .unwrap();
    assert!(
        client
            .pull_request(1)
            .await
            .unwrap()
            .viewer_has_pending_review
    );
}

#[tokio::test]
async fn the_client_traces_lines_through_the_comparison_after_a_push() {
    let emu = start(gitlab_scenario(3, 1)).await;
    let client = client_for(&emu, ALICE);
    let head = emu.head_sha(1).unwrap();
    let text = file_at(&emu, &head, "src/lib.rs");
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[2] = "LINE 3".into();
    lines.insert(0, "// new first line".into());
    let files = BTreeMap::from([("src/lib.rs".to_owned(), Some(lines.join("\n") + "\n"))]);
    emu.act_push("alice", "feature/widgets", files, "Edit")
        .await
        .unwrap();
    let threads = client.review_threads(1).await.unwrap();
    let by_body = |body: &str| {
        threads
            .iter()
            .find(|t| t.comments[0].body == body)
            .unwrap()
            .clone()
    };
    let moved = by_body("thread 1 comment 0");
    assert_eq!(
        (moved.is_outdated, moved.line, moved.original_line),
        (false, Some(3), Some(3))
    );
    let changed = by_body("thread 2 comment 0");
    assert!(changed.is_outdated);
    assert_eq!((changed.line, changed.original_line), (None, Some(3)));
    let pr = client.pull_request(1).await.unwrap();
    assert_eq!(pr.head_sha, emu.head_sha(1).unwrap());
}

#[tokio::test]
async fn the_client_reads_pipelines_and_retries_failed_jobs() {
    let mut s = gitlab_scenario(0, 0);
    let mut tests = CheckSpec::new("tests", "true");
    tests.required = true;
    let mut flaky = CheckSpec::new("flaky", "true");
    flaky.required = true;
    flaky.flaky = 1;
    s.checks = vec![tests, CheckSpec::new("lint", "exit 1"), flaky];
    let emu = start(s).await;
    idle(&emu).await;
    let head = emu.head_sha(1).unwrap();
    let client = client_for(&emu, ALICE).with_merge_request(1);

    let runs = client.check_runs(&head).await.unwrap();
    let required: BTreeMap<&str, Option<bool>> =
        runs.iter().map(|r| (r.name.as_str(), r.required)).collect();
    assert_eq!(
        required,
        BTreeMap::from([
            ("flaky", Some(true)),
            ("lint", Some(false)),
            ("tests", Some(true))
        ])
    );
    assert!(runs.iter().all(|r| r.head_sha == head));
    let rollup = client.status_check_rollup(1).await.unwrap();
    assert_eq!(rollup.state.as_deref(), Some("FAILURE"));
    assert_eq!(rollup.checks.len(), 3);
    let required = client.required_checks(1, "main").await.unwrap();
    assert_eq!(
        required.required,
        RequiredSet::Known(BTreeSet::from(["flaky".to_owned(), "tests".to_owned()]))
    );
    let pipelines = client.workflow_runs(&head).await.unwrap();
    assert_eq!(pipelines.len(), 1);
    assert_eq!(pipelines[0].head_sha, head);

    let retried = client.rerun_failed_checks(1, &head).await.unwrap();
    assert_eq!(retried.len(), 2, "flaky and lint: {retried:?}");
    idle(&emu).await;
    let rollup = client.status_check_rollup(1).await.unwrap();
    assert_eq!(rollup.state.as_deref(), Some("SUCCESS"), "lint may fail");
    let retried = client.rerun_failed_checks(1, &head).await.unwrap();
    assert_eq!(retried.len(), 1, "lint failed again");
    idle(&emu).await;
}
