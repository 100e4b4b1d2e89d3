//! "Commit then fail" at each public step: no duplicate reply, no thread
//! lost, no unauthorized resolve (and on GitLab no resolve of a resolved
//! discussion); a crash-like pause and `resume` without a second reply.
//! On both forges.

use shepherd_emulator::FaultSpec;
use shepherd_engine::RunStatus;

use crate::common::*;

fn assert_clean_convergence(setup: &Setup, outcome: &shepherd_engine::RunOutcome) {
    assert_eq!(
        outcome.status,
        RunStatus::Converged,
        "{:?}\n{}",
        outcome.reason,
        outcome.report.to_markdown()
    );
    setup.assert_clean();
    assert_eq!(
        marker_replies(&setup.pr()).len(),
        10,
        "every item answered once"
    );
}

/// The demo with `fault` on `call` of `forge`, from the start.
async fn with_fault(forge: ForgeKind, call: Mutation, fault: impl Fn(&str) -> FaultSpec) -> Setup {
    let mut s = demo();
    s.faults.push(fault(call.target(forge)));
    setup_on(forge, s).await
}

async fn a_thread_reply_that_commits_then_fails_is_adopted_not_doubled(forge: ForgeKind) {
    let setup = with_fault(forge, Mutation::Reply, |t| {
        FaultSpec::nth(t, 2).with_commit_then_fail()
    })
    .await;
    let outcome = setup.run("").await;
    assert_clean_convergence(&setup, &outcome);
    let replies = read(&outcome.run_dir.join("rounds/1/replies.json"));
    assert!(replies.contains("\"adopted_existing\": true"), "{replies}");
}
both_forges!(a_thread_reply_that_commits_then_fails_is_adopted_not_doubled);

async fn a_conversation_reply_that_commits_then_fails_is_adopted_not_doubled(forge: ForgeKind) {
    let setup = with_fault(forge, Mutation::Comment, |t| {
        FaultSpec::nth(t, 1).with_commit_then_fail()
    })
    .await;
    let outcome = setup.run("").await;
    assert_clean_convergence(&setup, &outcome);
    let replies = read(&outcome.run_dir.join("rounds/1/replies.json"));
    assert!(replies.contains("\"adopted_existing\": true"), "{replies}");
}
both_forges!(a_conversation_reply_that_commits_then_fails_is_adopted_not_doubled);

async fn a_resolve_that_commits_then_fails_is_not_repeated(forge: ForgeKind) {
    let setup = with_fault(forge, Mutation::Resolve, |t| {
        FaultSpec::nth(t, 1).with_commit_then_fail()
    })
    .await;
    let outcome = setup.run("").await;
    assert_clean_convergence(&setup, &outcome);
    assert_eq!(
        setup
            .emu
            .request_count(setup.fault_target(Mutation::Resolve)),
        6,
        "one call per resolve"
    );
}
both_forges!(a_resolve_that_commits_then_fails_is_not_repeated);

async fn failed_resolves_pause_the_run_and_resume_retries_them_without_a_second_reply(
    forge: ForgeKind,
) {
    let setup = with_fault(forge, Mutation::Resolve, |t| {
        FaultSpec::every(t).with_status(500, None)
    })
    .await;
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
both_forges!(failed_resolves_pause_the_run_and_resume_retries_them_without_a_second_reply);

/// The push of round 1 lands but the answer is lost (a 502 after the
/// receive-pack): Shepherd checks the remote head, sees its commits there,
/// and goes on without pushing twice or overwriting anything.
async fn a_push_that_commits_then_fails_is_recognized_not_repeated(forge: ForgeKind) {
    let mut s = demo();
    s.faults.push(
        FaultSpec::nth("POST /{owner}/{repo}.git/git-receive-pack", 1).with_commit_then_fail(),
    );
    let setup = setup_on(forge, s).await;
    let outcome = setup.run("").await;
    assert_clean_convergence(&setup, &outcome);
    let push = read(&outcome.run_dir.join("rounds/1/push.json"));
    assert!(
        push.contains("the push reported an error but the remote has it"),
        "{push}"
    );
    // One receive-pack per round that pushed: the lost answer was not retried.
    assert_eq!(
        setup
            .emu
            .request_count("POST /{owner}/{repo}.git/git-receive-pack"),
        2,
        "{push}"
    );
}
both_forges!(a_push_that_commits_then_fails_is_recognized_not_repeated);
