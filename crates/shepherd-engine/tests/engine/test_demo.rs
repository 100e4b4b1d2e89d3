//! The demo scenario converges with the builtin agent, on both forges.

use shepherd_engine::ProgressEvent;

use crate::common::*;

/// Two rounds: the suggestions (GitHub's or GitLab's syntax) applied,
/// pushed, replied to and resolved; the bot's comment during CI handled in
/// round 2; the question and the invalid comment answered and left open.
async fn the_demo_is_handed_off_with_the_builtin_agent(forge: ForgeKind) {
    let setup = setup_on(forge, demo()).await;
    // The default: needs-human items held for the user (issue 13 point 2).
    let outcome = setup.run("[approve]\nreply_needs_human = false\n").await;
    let pr = setup.pr();
    // The loop is done, but the builtin agent judges only suggestion blocks:
    // the review summary, the top-level CHANGELOG request and the two
    // threads without a suggestion wait for a person (issue 26 point 7).
    assert_handed_off(&outcome);
    let waiting = outcome.report.waiting_for_a_person();
    assert_eq!(waiting.len(), 4, "{waiting:?}");
    let paths: Vec<Option<&str>> = waiting.iter().map(|t| t.path.as_deref()).collect();
    assert!(paths.contains(&Some("src/auth/session.sh")), "{paths:?}");
    assert!(paths.contains(&Some("src/util/strings.sh")), "{paths:?}");
    assert_eq!(paths.iter().filter(|p| p.is_none()).count(), 2, "{paths:?}");

    // Round 1 fixed and pushed; the bot commented on the added TODO during
    // the CI wait, so round 2 handled it before converging.
    assert_eq!(
        outcome.report.rounds.len(),
        2,
        "{}",
        outcome.report.to_markdown()
    );
    assert!(outcome.report.rounds[0].pushed.is_some());
    assert!(outcome.report.rounds[1].pushed.is_some());
    let commits: Vec<String> = pr["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect();

    setup.assert_clean();
    let threads = pr["threads"].as_array().unwrap();
    let mut fixed = 0;
    let mut open = 0;
    for thread in threads {
        let comments = thread["comments"].as_array().unwrap();
        let root = comments[0]["body"].as_str().unwrap();
        let last = comments.last().unwrap()["body"].as_str().unwrap();
        if root.contains("```suggestion") {
            assert!(
                shepherd_core::Marker::find(last).is_some(),
                "thread {} has no reply from Shepherd: {last}",
                thread["id"]
            );
            // Fixed, pushed, replied citing the commit, resolved.
            assert_eq!(thread["resolved"], true, "{thread}");
            let cited = commits.iter().any(|sha| last.contains(sha.as_str()));
            assert!(cited, "the reply cites no pushed commit: {last}");
            fixed += 1;
        } else {
            // Needs-human with the builtin agent: reported to the user,
            // nothing posted, left open (issue 13 point 2).
            assert!(
                shepherd_core::Marker::find(last).is_none(),
                "no boilerplate reply: {thread}"
            );
            assert_eq!(thread["resolved"], false, "{thread}");
            open += 1;
        }
    }
    assert_eq!(fixed, 6, "5 suggestion threads plus the bot's TODO thread");
    assert_eq!(open, 2, "the question and the invalid comment");
    let conversation: Vec<&str> = pr["issue_comments"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["body"].as_str())
        .filter(|b| shepherd_core::Marker::find(b).is_some())
        .collect();
    assert!(
        conversation.is_empty(),
        "the top-level comment and the review body need a person; nothing posted: \
         {conversation:?}"
    );
    assert_eq!(
        outcome.report.attention.len(),
        4,
        "the 4 needs-human items are reported: {:?}",
        outcome.report.attention
    );

    // The files are fixed on the PR's head: the TODO is gone again.
    let report = &outcome.report;
    assert_eq!(report.ci.as_ref().map(|c| c.status.as_str()), Some("PASS"));
    assert!(!report.converged, "handed off is not converged");
    assert_eq!(report.status, "handed-off");
    assert!(report
        .to_markdown()
        .contains("- Status: **handed-off** (the loop is done, but 4 item(s) wait for a person"));
    assert_eq!(report.resolved.len(), 6);
    assert!(
        report
            .review_threads
            .summary
            .starts_with("no, 2 threads needing your decision"),
        "{}",
        report.review_threads.summary
    );
    assert!(report
        .to_markdown()
        .contains("Convergence is not mergeability"));

    // The run can be inspected from its directory alone.
    for round in ["1", "2"] {
        for file in [
            "pr-state.json",
            "worktree.json",
            "threads.json",
            "triage.json",
            "clusters.json",
            "approval.json",
            "results.json",
            "validate.json",
            "gate.json",
            "push.json",
            "replies.json",
            "ci.json",
            "mergeability.json",
            "report.md",
            "report.json",
        ] {
            let path = outcome.run_dir.join("rounds").join(round).join(file);
            assert!(path.is_file(), "missing {}", path.display());
        }
    }
    // Clustering: the four error-handling threads of src/auth (named by the
    // forge's thread ids) are one cluster, fixed at once.
    let clusters = read_json(&outcome.run_dir.join("rounds/1/clusters.json"));
    assert_eq!(clusters["gate"]["open"], true, "{clusters}");
    assert_eq!(
        clusters["clusters"].as_array().map(Vec::len),
        Some(1),
        "{clusters}"
    );
    assert_eq!(clusters["clusters"][0]["area"], "src/auth", "{clusters}");
    let mut auth: Vec<String> = threads
        .iter()
        .filter(|t| {
            t["path"].as_str().unwrap().starts_with("src/auth/")
                && t["comments"][0]["body"]
                    .as_str()
                    .unwrap()
                    .contains("```suggestion")
                && !t["comments"][0]["author"]
                    .as_str()
                    .is_some_and(|a| a.starts_with("review-bot"))
        })
        .map(|t| setup.thread_id(t))
        .collect();
    auth.sort();
    let mut clustered: Vec<String> = clusters["clusters"][0]["item_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_str().unwrap().to_owned())
        .collect();
    clustered.sort();
    assert_eq!(clustered, auth, "{clusters}");
    assert_eq!(auth.len(), 4);
    let gate = read_json(&outcome.run_dir.join("rounds/1/gate.json"));
    assert_eq!(gate["verdict"]["passed"], true, "{gate}");
    assert!(outcome.run_dir.join("report.md").is_file());
    assert!(outcome.worktree_kept.is_none());
    assert!(
        !outcome.run_dir.join("worktree").exists(),
        "the worktree is removed"
    );

    if std::env::var_os("SHOW").is_some() {
        println!("{}", report.to_markdown());
        for e in setup.events.lock().unwrap().iter() {
            println!("{e:?}");
        }
        println!("{}", read(&outcome.run_dir.join("rounds/1/replies.json")));
        println!(
            "{}",
            serde_json::to_string_pretty(&pr["threads"][0]).unwrap()
        );
    }
    let events = setup.events.lock().unwrap();
    assert!(events
        .iter()
        .any(|e| matches!(e, ProgressEvent::Stage { stage, .. } if stage.as_str() == "ci")));
    // "Approved" is not "answered": the approval stage says which approved
    // items are held for the user (issue 28 point 2).
    let approval: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            ProgressEvent::Stage { stage, summary, .. } if stage.as_str() == "approval" => {
                Some(summary.as_str())
            }
            _ => None,
        })
        .collect();
    assert!(
        approval
            .iter()
            .any(|s| s
                .contains("4 of them needs-human, reported to you and not answered on the forge")),
        "{approval:?}"
    );
}
both_forges!(the_demo_is_handed_off_with_the_builtin_agent);
