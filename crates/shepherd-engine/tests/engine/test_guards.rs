//! What stops a run before (or instead of) anything public: a fork, a
//! closed PR, a pending review (GitLab: draft notes), a failing verify
//! command, on both forges; another run's lock (forge-neutral: GitHub only).

use shepherd_emulator::{Act, ActThread, PullRequestStatus, ThreadCommentSpec, ThreadSpec};
use shepherd_engine::{EngineError, PrKey, RunStatus, Store, StoreError, Timestamp};

use crate::common::*;

/// Nothing Shepherd could have posted or changed: no marker anywhere, no
/// resolved thread, the head where the scenario put it.
fn assert_untouched(setup: &Setup, head: &str) {
    let pr = setup.pr();
    assert!(marker_replies(&pr).is_empty(), "something was posted");
    assert!(
        pr["threads"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["resolved"] == false),
        "a thread was resolved"
    );
    assert_eq!(pr["head_sha"], head, "the head moved");
    assert_eq!(setup.emu.duplicate_resolve_notes(), 0);
}

async fn a_fork_is_refused_before_any_mutation(forge: ForgeKind) {
    let mut s = demo();
    s.pull_request.fork = true;
    let setup = setup_on(forge, s).await;
    let head = setup.emu.head_sha(PR).unwrap();
    let outcome = setup.run("").await;
    assert_eq!(outcome.status, RunStatus::Failed);
    assert_eq!(outcome.exit_code(), 1);
    let reason = outcome.reason.unwrap();
    assert!(reason.contains("fork"), "{reason}");
    assert_untouched(&setup, &head);
    assert!(
        !outcome.run_dir.join("worktree").exists(),
        "not even a worktree is created for a fork"
    );
}
both_forges!(a_fork_is_refused_before_any_mutation);

async fn a_closed_pr_ends_the_run(forge: ForgeKind) {
    let mut s = demo();
    s.pull_request.state = PullRequestStatus::Closed;
    let setup = setup_on(forge, s).await;
    let head = setup.emu.head_sha(PR).unwrap();
    let outcome = setup.run("").await;
    assert_eq!(outcome.status, RunStatus::Failed);
    assert!(
        outcome.reason.as_deref().unwrap().contains("closed"),
        "{:?}",
        outcome.reason
    );
    assert_eq!(outcome.report.rounds.len(), 1);
    assert_untouched(&setup, &head);
}
both_forges!(a_closed_pr_ends_the_run);

/// GitLab: the viewer's draft notes.
async fn a_pending_review_of_the_viewer_stops_the_run(forge: ForgeKind) {
    let setup = setup_on(forge, demo()).await;
    let head = setup.emu.head_sha(PR).unwrap();
    setup
        .emu
        .act(Act::Review {
            user: "dev".into(),
            pr: Some(PR),
            event: Some("PENDING".into()),
            body: None,
            threads: vec![ActThread::new("src/auth/login.sh", 2, "draft note")],
        })
        .await
        .unwrap();
    let outcome = setup.run("").await;
    assert_eq!(outcome.status, RunStatus::Paused, "{:?}", outcome.reason);
    assert_eq!(outcome.exit_code(), 3);
    let reason = outcome.reason.unwrap();
    assert!(
        reason.contains("pending") && reason.contains("review"),
        "{reason}"
    );
    assert_untouched(&setup, &head);
}
both_forges!(a_pending_review_of_the_viewer_stops_the_run);

/// Forge-neutral (the lock is the store's): GitHub only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_run_on_a_locked_pr_is_refused() {
    let setup = setup(demo()).await;
    let mut store = Store::open_in(&setup.state_dir()).unwrap();
    let pr = PrKey::from_repo(shepherd_core::ForgeKind::GitHub, &repo(), PR);
    // A live holder: this very process, another run.
    store
        .acquire_lock(
            &pr,
            "other-run",
            std::process::id(),
            &shepherd_engine::store::local_hostname(),
            Timestamp::now(),
        )
        .unwrap();
    let err = setup.engine().start(setup.spec("")).await.unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, EngineError::Store(StoreError::Locked { .. })),
        "{err:?}"
    );
    assert!(
        text.contains("other-run") && text.contains(&std::process::id().to_string()),
        "{text}"
    );
    assert!(marker_replies(&setup.pr()).is_empty());

    // A dead holder's lock is taken over, and said so.
    store.break_lock(&pr).unwrap();
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    store
        .acquire_lock(
            &pr,
            "dead-run",
            dead,
            &shepherd_engine::store::local_hostname(),
            Timestamp::now(),
        )
        .unwrap();
    let outcome = setup
        .run("[loop]\nmax_rounds = 1\non_exhaust = \"fail\"")
        .await;
    assert_ne!(outcome.status, RunStatus::Failed, "{:?}", outcome.reason);
    let events = setup.events.lock().unwrap();
    assert!(
        events.iter().any(|e| matches!(e, shepherd_engine::ProgressEvent::Note { message } if message.contains("dead-run"))),
        "{events:?}"
    );
    assert!(
        store.lock(&pr).unwrap().is_none(),
        "the lock is released at the end"
    );
}

async fn a_failing_verify_command_refuses_the_push(forge: ForgeKind) {
    let mut s = demo();
    // A suggestion that breaks `trim` (tests/run.sh checks it).
    s.threads.push(ThreadSpec::new(
        "src/util/strings.sh",
        10,
        vec![ThreadCommentSpec::new(
            "reviewer",
            "Simpler:\n\n```suggestion\n    printf '%s\\n' \"$1\"\n```",
        )],
    ));
    let setup = setup_on(forge, s).await;
    let head = setup.emu.head_sha(PR).unwrap();
    let outcome = setup.run("").await;
    assert_eq!(outcome.status, RunStatus::Failed, "{:?}", outcome.reason);
    let reason = outcome.reason.unwrap();
    assert!(
        reason.contains("verify") && reason.contains("refused"),
        "{reason}"
    );
    assert_untouched(&setup, &head);
    let validate = read_json(&outcome.run_dir.join("rounds/1/validate.json"));
    assert_eq!(validate["passed"], false, "{validate}");
    assert!(read(&outcome.run_dir.join("rounds/1/verify.log")).contains("FAIL"));
    let kept = outcome
        .worktree_kept
        .expect("the worktree is kept on failure");
    assert!(kept.is_dir());
    assert!(outcome.report.to_markdown().contains("Worktree kept at"));
}
both_forges!(a_failing_verify_command_refuses_the_push);
