//! State rebuilt from markers, approvals and resume, targeted mode: on
//! both forges.

use shepherd_engine::{approve_run, ApprovalChange, RunStatus};

use crate::common::*;

async fn a_fresh_state_dir_rebuilds_the_ledger_from_markers(forge: ForgeKind) {
    let setup = setup_on(forge, demo()).await;
    let first = setup
        .run("[loop]\nmax_rounds = 1\non_exhaust = \"fail\"\n")
        .await;
    assert_eq!(first.status, RunStatus::Exhausted, "{:?}", first.reason);
    let replied_before = marker_replies(&setup.pr()).len();
    assert_eq!(replied_before, 9);

    // Another machine: an empty state directory.
    let fresh = tempfile::tempdir().unwrap();
    let engine = setup.engine_at(fresh.path());
    let second = engine.start(setup.spec("")).await.unwrap();
    // The loop is done, but the four items the first run handed to a
    // person (the builtin agent judges only suggestions) still wait for
    // one: the second machine knows it from the replies' markers alone
    // (issue 26 point 7), so it does not say "converged".
    assert_handed_off(&second);
    let waiting = second.report.waiting_for_a_person();
    assert_eq!(waiting.len(), 4, "{waiting:?}");
    assert_eq!(second.report.handed_to_a_person, waiting);
    let reason = second.reason.as_deref().unwrap_or_default();
    assert!(reason.contains("4 item(s) wait for a person"), "{reason}");
    let threads = read_json(&second.run_dir.join("rounds/1/threads.json"));
    assert_eq!(
        threads["new"].as_array().unwrap().len(),
        1,
        "only the bot's new thread: {threads}"
    );
    // The four answered, unresolved items (resolved threads are not fetched).
    assert_eq!(threads["ledger_from_markers"], 4, "{threads}");
    setup.assert_clean();
    assert_eq!(marker_replies(&setup.pr()).len(), 10);
}
both_forges!(a_fresh_state_dir_rebuilds_the_ledger_from_markers);

async fn without_a_tty_approval_pauses_then_approve_and_resume_continue(forge: ForgeKind) {
    let setup = setup_on(forge, demo()).await;
    let head = setup.emu.head_sha(PR).unwrap();
    let outcome = setup.run("[approve]\nmode = \"prompt\"\n").await;
    assert_eq!(outcome.status, RunStatus::Paused, "{:?}", outcome.reason);
    assert_eq!(outcome.status, shepherd_engine::RunStatus::Paused);
    assert!(outcome
        .reason
        .as_deref()
        .unwrap()
        .contains("shepherd approve"));
    // Nothing public before approval.
    assert!(marker_replies(&setup.pr()).is_empty());
    assert_eq!(setup.pr()["head_sha"], head.as_str());

    let question = setup.pr()["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| {
            t["comments"][0]["body"]
                .as_str()
                .unwrap()
                .contains("expire")
        })
        .map(|t| setup.thread_id(t))
        .unwrap();
    let approved = approve_run(
        &setup.state_dir(),
        &outcome.run_id,
        &[ApprovalChange {
            item_id: question.clone(),
            decision: Some(shepherd_core::Decision::Question),
            reply: Some("Not yet: expiry comes with the next PR.".into()),
        }],
        "tester",
    )
    .unwrap();
    assert_eq!(approved, 4);

    let resumed = setup.engine().resume(&outcome.run_id).await.unwrap();
    assert_handed_off(&resumed);
    setup.assert_clean();
    let pr = setup.pr();
    let thread = pr["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| setup.thread_id(t) == question)
        .unwrap();
    let last = thread["comments"].as_array().unwrap().last().unwrap()["body"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(last.contains("expiry comes with the next PR"), "{last}");
    assert_eq!(thread["resolved"], false, "a question is never resolved");
}
both_forges!(without_a_tty_approval_pauses_then_approve_and_resume_continue);

/// GitHub: a `#discussion_rN` URL; GitLab: a `#note_N` URL.
async fn targeted_mode_handles_one_thread_in_one_round(forge: ForgeKind) {
    let setup = setup_on(forge, demo()).await;
    let pr = setup.pr();
    let thread = pr["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["path"] == "src/auth/login.sh")
        .unwrap()
        .clone();
    let root = thread["comments"][0]["database_id"].as_u64().unwrap();
    let mut spec = setup.spec("");
    spec.target.mode = setup.targeted(root);
    let outcome = setup.engine().start(spec).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Converged, "{:?}", outcome.reason);
    assert_eq!(outcome.report.rounds.len(), 1);
    let pr = setup.pr();
    let replies = marker_replies(&pr);
    assert_eq!(replies.len(), 1, "{replies:?}");
    assert_eq!(replies[0].0, setup.thread_id(&thread));
    setup.assert_clean();
    // No clustering in targeted mode: the gate stays closed, and a closed
    // gate leaves no clusters.json.
    let clusters = outcome.run_dir.join("rounds/1/clusters.json");
    assert!(!clusters.exists(), "no clustering in targeted mode");
}
both_forges!(targeted_mode_handles_one_thread_in_one_round);
