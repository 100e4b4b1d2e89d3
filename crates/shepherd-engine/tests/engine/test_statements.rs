//! Every statement of a run's report is true of the forge's state as last
//! seen (issue 11): the review threads' summary of runs that stopped early,
//! on both forges, checked against the emulator's final state.

use shepherd_emulator::{Act, ActThread};
use shepherd_engine::{reject_run, run_report, RunStatus};

use crate::common::*;

/// The PR's unresolved threads in the emulator's final state.
fn unresolved(setup: &Setup) -> usize {
    setup
        .threads()
        .iter()
        .filter(|t| t["resolved"] != true)
        .count()
}

/// Asserts the report (JSON twin and `report.md`) says the threads are not
/// clear, with `open` threads not handled yet.
fn assert_not_clear(outcome: &shepherd_engine::RunOutcome, open: usize) {
    let threads = &outcome.report.review_threads;
    assert!(open > 0, "the scenario has open threads");
    assert!(!threads.clear, "{threads:?}");
    assert!(threads.known, "{threads:?}");
    assert!(
        threads.not_handled.len() >= open,
        "{open} threads open: {threads:?}"
    );
    let expected = format!("no, {} threads not handled yet", threads.not_handled.len());
    assert!(
        threads.summary.starts_with(&expected),
        "{}",
        threads.summary
    );
    let md = read(&outcome.run_dir.join("report.md"));
    assert!(
        md.contains(&format!("Review threads clear: {expected}")),
        "{md}"
    );
    assert!(!md.contains("Review threads clear: yes"), "{md}");
}

async fn a_run_paused_for_approval_says_the_threads_are_not_clear(forge: ForgeKind) {
    let setup = setup_on(forge, demo()).await;
    let outcome = setup.run("[approve]\nmode = \"prompt\"\n").await;
    assert_eq!(outcome.status, RunStatus::Paused, "{:?}", outcome.reason);
    assert!(marker_replies(&setup.pr()).is_empty(), "nothing posted");
    assert_not_clear(&outcome, unresolved(&setup));

    // Rejected: still nothing posted, and the rebuilt report says the same.
    reject_run(&setup.state_dir(), &outcome.run_id, "tester").unwrap();
    let report = run_report(&setup.state_dir(), &outcome.run_id).unwrap();
    assert_eq!(report.status, "failed");
    assert!(marker_replies(&setup.pr()).is_empty(), "nothing posted");
    let open = unresolved(&setup);
    assert!(
        report
            .review_threads
            .summary
            .starts_with(&format!("no, {open} threads not handled yet")),
        "{}",
        report.review_threads.summary
    );
}
both_forges!(a_run_paused_for_approval_says_the_threads_are_not_clear);

async fn a_run_stopped_by_a_pending_review_says_the_threads_are_not_clear(forge: ForgeKind) {
    let setup = setup_on(forge, demo()).await;
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
    assert!(marker_replies(&setup.pr()).is_empty(), "nothing posted");
    // The draft's own thread is not part of the count (a GitLab draft note
    // is no discussion yet; GitHub shows its author the pending comment):
    // the published threads are.
    let published = setup
        .threads()
        .iter()
        .filter(|t| t["resolved"] != true && t["comments"][0]["body"] != "draft note")
        .count();
    assert_not_clear(&outcome, published);
}
both_forges!(a_run_stopped_by_a_pending_review_says_the_threads_are_not_clear);

async fn a_run_that_fails_before_replying_says_the_threads_are_not_clear(forge: ForgeKind) {
    let setup = setup_on(forge, demo()).await;
    // A failing verify command: the push (and every reply) is refused.
    let outcome = setup.run("[verify]\ncommand = \"false\"\n").await;
    assert_eq!(outcome.status, RunStatus::Failed, "{:?}", outcome.reason);
    assert!(marker_replies(&setup.pr()).is_empty(), "nothing posted");
    assert_not_clear(&outcome, unresolved(&setup));
}
both_forges!(a_run_that_fails_before_replying_says_the_threads_are_not_clear);
