//! The round limit, and resuming a run paused there: on both forges.

use shepherd_engine::{PauseKind, RunStatus};

use crate::common::*;

/// A bot that comments on every added TODO line with a suggestion that
/// keeps a TODO: the PR draws new feedback every round.
fn endless() -> shepherd_emulator::Scenario {
    let mut s = demo();
    s.bots[0].body = "Still a TODO here.\n\n```suggestion\n{text} (again)\n```".into();
    s
}

async fn a_pr_that_keeps_drawing_comments_ends_at_max_rounds_with_exit_4(forge: ForgeKind) {
    let setup = setup_on(forge, endless()).await;
    let outcome = setup
        .run("[loop]\nmax_rounds = 2\non_exhaust = \"fail\"\n")
        .await;
    assert_eq!(outcome.status, RunStatus::Exhausted, "{:?}", outcome.reason);
    assert_eq!(outcome.status, shepherd_engine::RunStatus::Exhausted);
    assert_eq!(outcome.report.rounds.len(), 2);
    assert!(outcome.reason.unwrap().contains("round limit (2)"));
    assert!(!outcome.report.converged);
    setup.assert_clean();
}
both_forges!(a_pr_that_keeps_drawing_comments_ends_at_max_rounds_with_exit_4);

async fn on_exhaust_approval_pauses_and_resume_allows_more_rounds(forge: ForgeKind) {
    let setup = setup_on(forge, endless()).await;
    let outcome = setup
        .run("[loop]\nmax_rounds = 1\non_exhaust = \"approval\"\n")
        .await;
    assert_eq!(outcome.status, RunStatus::Paused, "{:?}", outcome.reason);
    assert_eq!(outcome.status, shepherd_engine::RunStatus::Paused);
    let file = shepherd_engine::load_run_file(&setup.state_dir(), &outcome.run_id).unwrap();
    assert_eq!(file.pause, Some(PauseKind::Exhausted));

    let resumed = setup.engine().resume(&outcome.run_id).await.unwrap();
    assert_eq!(resumed.status, RunStatus::Paused, "{:?}", resumed.reason);
    assert_eq!(
        resumed.report.rounds.len(),
        2,
        "one more round after the resume"
    );
    setup.assert_clean();
}
both_forges!(on_exhaust_approval_pauses_and_resume_allows_more_rounds);
