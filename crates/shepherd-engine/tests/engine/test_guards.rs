//! What stops a run before (or instead of) anything public: a fork, a
//! closed PR, a pending review (GitLab: draft notes), a failing verify
//! command, on both forges; another run's lock (forge-neutral: GitHub only).

use shepherd_emulator::{PullRequestStatus, ThreadCommentSpec, ThreadSpec};
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
    assert_eq!(outcome.status, shepherd_engine::RunStatus::Failed);
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
    setup.emu.act(pending_review("dev")).await.unwrap();
    let outcome = setup.run("").await;
    assert_eq!(outcome.status, RunStatus::Paused, "{:?}", outcome.reason);
    assert_eq!(outcome.status, shepherd_engine::RunStatus::Paused);
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

/// Closes the PR (GitLab: the MR) through the forge's API, as its author.
async fn close_pr(forge: ForgeKind, api_url: String, project_id: u64) {
    let http = reqwest::Client::new();
    let request = match forge {
        ForgeKind::GitHub => http
            .patch(format!("{api_url}/repos/demo/authkit/pulls/{PR}"))
            .json(&serde_json::json!({ "state": "closed" })),
        ForgeKind::GitLab => http
            .put(format!(
                "{api_url}/projects/{project_id}/merge_requests/{PR}"
            ))
            .json(&serde_json::json!({ "state_event": "close" })),
    };
    let response = request.bearer_auth(DEV_TOKEN).send().await.unwrap();
    assert!(response.status().is_success(), "{}", response.status());
}

/// Closes the PR as soon as the CI stage starts waiting (the replies stage
/// of round 1 has finished), from the runtime the run lives on.
struct CloseDuringCi {
    forge: ForgeKind,
    api_url: String,
    project_id: u64,
    closed: std::sync::Arc<std::sync::atomic::AtomicBool>,
    done: std::sync::Arc<tokio::sync::Notify>,
}

impl shepherd_engine::Progress for CloseDuringCi {
    fn event(&self, event: &shepherd_engine::ProgressEvent) {
        use std::sync::atomic::Ordering;
        let replies_done = matches!(
            event,
            shepherd_engine::ProgressEvent::Stage {
                round: 1,
                stage: shepherd_engine::Stage::Replies,
                ..
            }
        );
        if replies_done && !self.closed.swap(true, Ordering::SeqCst) {
            let (forge, url, id, done) = (
                self.forge,
                self.api_url.clone(),
                self.project_id,
                self.done.clone(),
            );
            tokio::runtime::Handle::current().spawn(async move {
                close_pr(forge, url, id).await;
                done.notify_one();
            });
        }
    }
}

/// Issue 11.5b: a PR closed while the last round's CI runs is not
/// "converged": the post-CI re-fetch sees it closed and the run ends (exit
/// 1), with nothing more posted after the close.
async fn a_pr_closed_during_the_last_ci_wait_does_not_converge(forge: ForgeKind) {
    let mut s = demo();
    // No bot: round 1 would converge (CI passes, nothing new).
    s.bots.clear();
    let setup = setup_on(forge, s).await;
    let done = std::sync::Arc::new(tokio::sync::Notify::new());
    let mut opts = setup.options();
    opts.progress = std::sync::Arc::new(CloseDuringCi {
        forge,
        api_url: setup.api_url(),
        project_id: match forge {
            ForgeKind::GitHub => 0,
            ForgeKind::GitLab => setup.emu.gitlab_project_id(),
        },
        closed: std::sync::Arc::default(),
        done: done.clone(),
    });
    let outcome = setup.engine_with(opts).start(setup.spec("")).await.unwrap();
    // The close went through before the run's re-fetch, or the test proves nothing.
    tokio::time::timeout(std::time::Duration::from_secs(5), done.notified())
        .await
        .expect("the PR was closed during the run");
    assert_eq!(setup.pr()["status"], "closed");
    assert_eq!(outcome.status, RunStatus::Failed, "{:?}", outcome.reason);
    assert_eq!(outcome.status, shepherd_engine::RunStatus::Failed);
    let reason = outcome.reason.unwrap();
    assert!(reason.contains("closed during the round"), "{reason}");
    assert_eq!(outcome.report.rounds.len(), 1, "no second round");
    let mergeability = read(&outcome.run_dir.join("rounds/1/mergeability.json"));
    assert!(mergeability.contains("closed"), "{mergeability}");
    setup.assert_clean();
}
both_forges!(a_pr_closed_during_the_last_ci_wait_does_not_converge);
