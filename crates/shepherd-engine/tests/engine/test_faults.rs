//! "Commit then fail" at each public step: no duplicate reply, no thread
//! lost, no unauthorized resolve.

use shepherd_emulator::FaultSpec;
use shepherd_engine::RunStatus;

use crate::common::*;

const REPLY: &str = "POST /repos/{owner}/{repo}/pulls/{number}/comments/{comment_id}/replies";
const COMMENT: &str = "POST /repos/{owner}/{repo}/issues/{number}/comments";
const RESOLVE: &str = "graphql:ResolveReviewThread";

fn assert_clean_convergence(setup: &Setup, outcome: &shepherd_engine::RunOutcome) {
    assert_eq!(
        outcome.status,
        RunStatus::Converged,
        "{:?}\n{}",
        outcome.reason,
        outcome.report.to_markdown()
    );
    let pr = setup.pr();
    assert_no_duplicate_replies(&pr);
    assert_resolves_authorized(&pr);
    assert_eq!(marker_replies(&pr).len(), 10, "every item answered once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_reply_that_commits_then_fails_is_adopted_not_doubled() {
    let mut s = demo();
    s.faults
        .push(FaultSpec::nth(REPLY, 2).with_commit_then_fail());
    let setup = setup(s).await;
    let outcome = setup.run("").await;
    assert_clean_convergence(&setup, &outcome);
    let replies = read(&outcome.run_dir.join("rounds/1/replies.json"));
    assert!(replies.contains("\"adopted_existing\": true"), "{replies}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_reply_that_commits_then_fails_is_adopted_not_doubled() {
    let mut s = demo();
    s.faults
        .push(FaultSpec::nth(COMMENT, 1).with_commit_then_fail());
    let setup = setup(s).await;
    let outcome = setup.run("").await;
    assert_clean_convergence(&setup, &outcome);
    let replies = read(&outcome.run_dir.join("rounds/1/replies.json"));
    assert!(replies.contains("\"adopted_existing\": true"), "{replies}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resolve_that_commits_then_fails_is_not_repeated() {
    let mut s = demo();
    s.faults
        .push(FaultSpec::nth(RESOLVE, 1).with_commit_then_fail());
    let setup = setup(s).await;
    let outcome = setup.run("").await;
    assert_clean_convergence(&setup, &outcome);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_resolves_pause_the_run_and_resume_retries_them_without_a_second_reply() {
    let mut s = demo();
    s.faults
        .push(FaultSpec::every(RESOLVE).with_status(500, None));
    let setup = setup(s).await;
    let paused = setup.run("").await;
    assert_eq!(paused.status, RunStatus::Paused, "{:?}", paused.reason);
    assert!(paused.reason.as_deref().unwrap().contains("resolve"));
    assert!(paused.report.ci.is_none(), "the pause comes before CI");
    assert_eq!(
        paused.report.failures.len(),
        5,
        "{:?}",
        paused.report.failures
    );
    let pr = setup.pr();
    assert_eq!(marker_replies(&pr).len(), 9);
    assert!(pr["threads"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["resolved"] == false));

    setup.emu.clear_faults();
    let resumed = setup.engine().resume(&paused.run_id).await.unwrap();
    assert_clean_convergence(&setup, &resumed);
    let replies = read(&resumed.run_dir.join("rounds/1/replies.json"));
    assert_eq!(replies.matches("resolve-retry").count(), 5, "{replies}");
}
