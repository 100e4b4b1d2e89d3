//! Round mechanics: protected paths, a push that races someone else's, a
//! stalled round: on both forges.

use std::collections::BTreeMap;
use std::time::Duration;

use shepherd_emulator::{FileSpec, ThreadCommentSpec, ThreadSpec};
use shepherd_engine::{ProgressEvent, RunStatus};

use crate::common::*;

async fn a_fix_to_a_protected_path_is_refused_and_handed_to_a_person(forge: ForgeKind) {
    let mut s = demo();
    s.head.insert(
        ".github/workflows/ci.yml".into(),
        FileSpec::text("name: CI\non: push\njobs: {}\n"),
    );
    s.threads.push(ThreadSpec::new(
        ".github/workflows/ci.yml",
        2,
        vec![ThreadCommentSpec::new(
            "reviewer",
            "Run on pull requests too.\n\n```suggestion\non: [push, pull_request]\n```",
        )],
    ));
    let setup = setup_on(forge, s).await;
    let outcome = setup.run("").await;
    assert_handed_off(&outcome);
    let pr = setup.pr();
    let thread = pr["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["path"] == ".github/workflows/ci.yml")
        .unwrap();
    assert_eq!(thread["resolved"], false, "{thread}");
    let reply = thread["comments"].as_array().unwrap().last().unwrap()["body"]
        .as_str()
        .unwrap();
    assert!(reply.contains("protected path"), "{reply}");
    let results = read(&outcome.run_dir.join("rounds/1/results.json"));
    assert!(results.contains("needs-human"), "{results}");
    setup.assert_clean();
}
both_forges!(a_fix_to_a_protected_path_is_refused_and_handed_to_a_person);

async fn a_rejected_push_resyncs_and_reruns_the_round_without_overwriting(forge: ForgeKind) {
    let setup = setup_on(forge, demo()).await;
    let engine = setup.engine();
    let spec = setup.spec("[verify]\ncommand = \"sh verify.sh && sleep 2\"\n");
    let run = tokio::spawn(async move { engine.start(spec).await });
    // While round 1 verifies its fixes, someone else pushes to the branch.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let verifying = setup.events.lock().unwrap().iter().any(|e| {
            matches!(e, ProgressEvent::Waiting { round: 1, what } if what.starts_with("verify"))
        });
        if verifying {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "round 1 never verified"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let theirs = setup
        .emu
        .act_push(
            "dev",
            "feature/login",
            BTreeMap::from([("NOTES.md".to_owned(), Some("pushed meanwhile\n".to_owned()))]),
            "notes",
        )
        .await
        .unwrap();
    let outcome = run.await.unwrap().unwrap();
    assert_handed_off(&outcome);
    let first = &outcome.report.rounds[0];
    assert!(first.pushed.is_none());
    assert!(
        first.note.as_deref().unwrap_or("").contains("rejected"),
        "{first:?}"
    );
    let pr = setup.pr();
    let commits: Vec<&str> = pr["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(
        commits.contains(&theirs.as_str()),
        "their commit was kept: {commits:?}"
    );
    setup.assert_clean();
    assert_eq!(marker_replies(&pr).len(), 10);
}
both_forges!(a_rejected_push_resyncs_and_reruns_the_round_without_overwriting);

async fn a_round_that_changes_nothing_is_reported_as_stalled(forge: ForgeKind) {
    let mut s = demo();
    s.checks.clear();
    let setup = setup_on(forge, s).await;
    let outcome = setup
        .run("[loop]\nmax_rounds = 6\non_exhaust = \"fail\"\n[ci]\nappear_timeout_secs = 1\n")
        .await;
    assert_eq!(outcome.status, RunStatus::Exhausted, "{:?}", outcome.reason);
    let reason = outcome.reason.unwrap();
    assert!(reason.contains("stalled"), "{reason}");
    // Said once, without nested parentheses (issue 13 point 7).
    assert_eq!(reason.matches("stalled").count(), 1, "{reason}");
    assert!(!reason.contains("(not converged"), "{reason}");
    // No check at all: the UNKNOWN verdict says so first.
    let ci = outcome.report.ci.as_ref().unwrap();
    assert_eq!(
        ci.reasons.first().map(String::as_str),
        Some("no checks reported at the deadline"),
        "{ci:?}"
    );
    let rounds = &outcome.report.rounds;
    assert_eq!(rounds.len(), 3, "round 3 saw what round 2 saw: {rounds:?}");
    assert!(rounds[2].stalled && !rounds[1].stalled);
    assert_eq!(outcome.report.stalled_rounds, vec![3]);
    assert!(outcome.report.to_markdown().contains("stalled"));
}
both_forges!(a_round_that_changes_nothing_is_reported_as_stalled);
