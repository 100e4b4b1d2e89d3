//! "Commit then fail" at each public step: no duplicate reply, no thread
//! lost, no unauthorized resolve (and on GitLab no resolve of a resolved
//! discussion); a crash-like pause and `resume` without a second reply.
//! On both forges.

use shepherd_emulator::FaultSpec;
use shepherd_engine::RunStatus;

use crate::common::*;

fn assert_clean_convergence(setup: &Setup, outcome: &shepherd_engine::RunOutcome) {
    assert_handed_off(outcome);
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

const RECEIVE_PACK: &str = "POST /{owner}/{repo}.git/git-receive-pack";

/// Issue 11.6: a push answered once with a 502 (nothing landed) is sent
/// again after a backoff, and the run converges in one go.
async fn a_push_answered_502_once_is_retried(forge: ForgeKind) {
    let mut s = demo();
    s.faults
        .push(FaultSpec::nth(RECEIVE_PACK, 1).with_status(502, None));
    let setup = setup_on(forge, s).await;
    let outcome = setup.run("").await;
    assert_clean_convergence(&setup, &outcome);
    let push = read_json(&outcome.run_dir.join("rounds/1/push.json"));
    assert_eq!(push["pushed"], true, "{push}");
    assert_eq!(push["outcome"], "pushed", "{push}");
    let retries = push["retries"].as_array().expect("one retry noted");
    assert_eq!(retries.len(), 1, "{push}");
    assert!(
        retries[0].as_str().unwrap().contains("502"),
        "the note names the status: {push}"
    );
    // Round 1: the failed push and its retry; round 2: one push.
    assert_eq!(setup.emu.request_count(RECEIVE_PACK), 3, "{push}");
}
both_forges!(a_push_answered_502_once_is_retried);

/// Issue 11.6: a push refused once by a rate limit (429, `Retry-After: 1`)
/// waits what the remote asked and is sent again.
async fn a_rate_limited_push_waits_its_retry_after(forge: ForgeKind) {
    let mut s = demo();
    s.faults
        .push(FaultSpec::nth(RECEIVE_PACK, 1).with_rate_limit(429, 1));
    let setup = setup_on(forge, s).await;
    let outcome = setup.run("").await;
    assert_clean_convergence(&setup, &outcome);
    let push = read_json(&outcome.run_dir.join("rounds/1/push.json"));
    assert_eq!(push["outcome"], "pushed", "{push}");
    let retries = push["retries"].as_array().expect("one retry noted");
    assert_eq!(retries.len(), 1, "{push}");
    let note = retries[0].as_str().unwrap();
    assert!(
        note.contains("429") && note.contains("retrying in 1000 ms"),
        "{note}"
    );
    assert_eq!(setup.emu.request_count(RECEIVE_PACK), 3, "{push}");
}
both_forges!(a_rate_limited_push_waits_its_retry_after);

/// A push that keeps failing on the way is not retried for ever: after 4
/// attempts the run fails, and nothing was pushed or posted.
async fn a_push_that_keeps_failing_fails_after_four_attempts(forge: ForgeKind) {
    let mut s = demo();
    s.faults
        .push(FaultSpec::every(RECEIVE_PACK).with_status(503, None));
    let setup = setup_on(forge, s).await;
    let head = setup.emu.head_sha(PR).unwrap();
    let outcome = setup.run("").await;
    assert_eq!(outcome.status, RunStatus::Failed, "{:?}", outcome.reason);
    assert!(
        outcome.reason.as_deref().unwrap().contains("cannot push"),
        "{:?}",
        outcome.reason
    );
    assert_eq!(setup.emu.request_count(RECEIVE_PACK), 4);
    assert_eq!(setup.emu.head_sha(PR).unwrap(), head, "nothing landed");
    assert!(marker_replies(&setup.pr()).is_empty(), "nothing posted");
}
both_forges!(a_push_that_keeps_failing_fails_after_four_attempts);

/// The client as the CLI builds it (retries on), with waits in milliseconds.
fn retrying_engine(setup: &Setup) -> shepherd_engine::Engine {
    let config = shepherd_forge::ClientConfig {
        retry: shepherd_forge::RetryPolicy {
            max_attempts: 4,
            initial_backoff: std::time::Duration::from_millis(20),
            max_backoff: std::time::Duration::from_millis(200),
            max_rate_limit_wait: std::time::Duration::from_secs(5),
        },
        ..shepherd_forge::ClientConfig::default()
    };
    shepherd_engine::Engine::new(
        setup.forge_with(DEV_TOKEN, config),
        setup.state_dir(),
        setup.git(),
        setup.options(),
    )
}

/// Issue 11.6: one transient error on the run's first read (GitHub: the
/// untyped GraphQL error GitHub answers a query it could not finish, on the
/// PR read and on the threads read; GitLab: a 502, then a 429 with
/// `Retry-After: 1`, on the merge request read) is retried, and the run
/// converges without a resume.
async fn a_transient_error_on_the_first_read_is_retried(forge: ForgeKind) {
    let mut s = demo();
    let reads: Vec<FaultSpec> = match forge {
        ForgeKind::GitHub => vec![
            FaultSpec::nth("graphql:PullRequestState", 1)
                .with_graphql_error("Something went wrong while executing your query."),
            FaultSpec::nth("graphql:ReviewThreads", 1)
                .with_graphql_error("Something went wrong while executing your query."),
        ],
        ForgeKind::GitLab => {
            let mr = "GET /api/v4/projects/{id}/merge_requests/{iid}";
            vec![
                FaultSpec::nth(mr, 1).with_status(502, None),
                FaultSpec::nth(mr, 2).with_rate_limit(429, 1),
            ]
        }
    };
    let targets: Vec<String> = reads.iter().map(|f| f.target.clone()).collect();
    s.faults.extend(reads);
    let setup = setup_on(forge, s).await;
    let outcome = retrying_engine(&setup).start(setup.spec("")).await.unwrap();
    assert_clean_convergence(&setup, &outcome);
    let faults = setup.emu.faults();
    for fault in faults.as_array().unwrap() {
        assert_eq!(fault["fired"], 1, "every fault fired once: {faults}");
    }
    for target in &targets {
        assert!(setup.emu.request_count(target) >= 2, "{target} was retried");
    }
}
both_forges!(a_transient_error_on_the_first_read_is_retried);
