//! Every statement of a run's report is true of the forge's state as last
//! seen (issue 11): the review threads' summary of runs that stopped early,
//! on both forges, checked against the emulator's final state.

use std::sync::Arc;

use shepherd_core::Decision;
use shepherd_engine::{
    approve_run, reject_run, run_report, ApprovalChange, ApprovalRequest, ApprovalVerdict,
    Approver, EngineOptions, RunStatus,
};

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
    setup.emu.act(pending_review("dev")).await.unwrap();
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

/// The demo thread about token expiry (the builtin triages it needs-human)
/// and its id.
fn expiry_thread(setup: &Setup) -> (String, serde_json::Value) {
    let t = setup
        .threads()
        .into_iter()
        .find(|t| {
            t["comments"][0]["body"]
                .as_str()
                .unwrap()
                .contains("expire")
        })
        .expect("the expiry thread");
    (setup.thread_id(&t), t)
}

fn thread_by_id(setup: &Setup, id: &str) -> serde_json::Value {
    setup
        .threads()
        .into_iter()
        .find(|t| setup.thread_id(t) == id)
        .expect("the thread")
}

fn marker_bodies(thread: &serde_json::Value) -> Vec<String> {
    thread["comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["body"].as_str().unwrap().to_owned())
        .filter(|b| shepherd_core::Marker::find(b).is_some())
        .collect()
}

async fn a_changed_decision_without_a_reply_is_refused_and_the_approvers_reply_is_posted(
    forge: ForgeKind,
) {
    let setup = setup_on(forge, demo()).await;
    let outcome = setup.run("[approve]\nmode = \"prompt\"\n").await;
    assert_eq!(outcome.status, RunStatus::Paused, "{:?}", outcome.reason);
    let (id, _) = expiry_thread(&setup);

    // `shepherd approve RUN --thread ID --decision invalid` alone: refused,
    // nothing approved, nothing posted.
    let err = approve_run(
        &setup.state_dir(),
        &outcome.run_id,
        &[ApprovalChange {
            item_id: id.clone(),
            decision: Some(Decision::Invalid),
            reply: None,
        }],
        "tester",
    )
    .unwrap_err();
    assert!(
        matches!(err, shepherd_engine::EngineError::ReplyNeeded { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("--reply"), "{err}");
    let store = shepherd_engine::Store::open_in(&setup.state_dir()).unwrap();
    assert!(store
        .approvals(&outcome.run_id, 1)
        .unwrap()
        .iter()
        .all(|a| a.state == shepherd_engine::ApprovalState::Pending));
    drop(store);

    // With the approver's reply: that reply is posted and, for invalid, the
    // thread is resolved.
    approve_run(
        &setup.state_dir(),
        &outcome.run_id,
        &[ApprovalChange {
            item_id: id.clone(),
            decision: Some(Decision::Invalid),
            reply: Some("Tokens do expire: see TOKEN_TTL in token.sh.".into()),
        }],
        "tester",
    )
    .unwrap();
    let resumed = setup.engine().resume(&outcome.run_id).await.unwrap();
    assert_handed_off(&resumed);
    setup.assert_clean();
    let thread = thread_by_id(&setup, &id);
    let replies = marker_bodies(&thread);
    assert_eq!(replies.len(), 1, "{thread}");
    assert!(replies[0].contains("TOKEN_TTL"), "{}", replies[0]);
    assert!(!replies[0].contains("maintainer"), "{}", replies[0]);
    assert_eq!(thread["resolved"], true, "{thread}");
}
both_forges!(a_changed_decision_without_a_reply_is_refused_and_the_approvers_reply_is_posted);

/// An approver (the terminal prompt, the dashboard) that changes the
/// expiry thread's decision to `invalid` and gives no reply.
struct ChangesWithoutReply(String);

impl Approver for ChangesWithoutReply {
    fn review(&self, _: &ApprovalRequest) -> ApprovalVerdict {
        ApprovalVerdict::Approve(vec![ApprovalChange {
            item_id: self.0.clone(),
            decision: Some(Decision::Invalid),
            reply: None,
        }])
    }
}

async fn a_decision_changed_at_the_prompt_without_a_reply_posts_nothing(forge: ForgeKind) {
    let setup = setup_on(forge, demo()).await;
    let head = setup.emu.head_sha(PR).unwrap();
    let (id, _) = expiry_thread(&setup);
    let opts = EngineOptions {
        approver: Some(Arc::new(ChangesWithoutReply(id.clone()))),
        ..setup.options()
    };
    let outcome = setup
        .engine_with(opts)
        .start(setup.spec("[approve]\nmode = \"prompt\"\n"))
        .await
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Paused, "{:?}", outcome.reason);
    let reason = outcome.reason.clone().unwrap();
    assert!(
        reason.contains(&id) && reason.contains("--reply"),
        "{reason}"
    );
    // Nothing public: no reply (least of all the stale needs-human text),
    // no resolve, no push.
    assert!(marker_replies(&setup.pr()).is_empty());
    assert_eq!(thread_by_id(&setup, &id)["resolved"], false);
    assert_eq!(setup.pr()["head_sha"], head.as_str());
    let md = read(&outcome.run_dir.join("report.md"));
    assert!(md.contains("needs a reply that fits it"), "{md}");
}
both_forges!(a_decision_changed_at_the_prompt_without_a_reply_posts_nothing);

/// A path with an ESC sequence (clear screen), a BEL and a right-to-left
/// override: the kinds of characters that rewrite a terminal or hide what
/// a name says.
pub const EVIL_PATH: &str = "src/\u{1b}[2J\u{7}evil\u{202e}txt.sh";

async fn control_characters_in_paths_never_reach_the_report_raw(forge: ForgeKind) {
    use crate::test_agents::{project, thread};
    let mut s = project(vec![thread(EVIL_PATH, 1, "Is this file needed?")], vec![]);
    s.head.insert(
        EVIL_PATH.into(),
        shepherd_emulator::FileSpec::text("echo hi\n"),
    );
    let setup = setup_on(forge, s).await;
    assert!(
        setup.threads().iter().any(|t| t["path"] == EVIL_PATH),
        "the forge has the thread on the raw path"
    );
    let outcome = setup.run("[approve]\nmode = \"prompt\"\n").await;
    let md = read(&outcome.run_dir.join("report.md"));
    let raw: Vec<char> = md
        .chars()
        .filter(|c| *c != '\n' && shepherd_core::escape::is_unsafe(*c))
        .collect();
    assert!(raw.is_empty(), "raw control characters {raw:?} in\n{md}");
    assert!(
        md.contains("src/\\x1b[2J\\x07evil\\u{202e}txt.sh"),
        "the path is shown with visible escapes:\n{md}"
    );
}
both_forges!(control_characters_in_paths_never_reach_the_report_raw);

/// A file of the PR's head on the emulator.
fn head_file(setup: &Setup, path: &str) -> String {
    let sha = setup.emu.head_sha(PR).unwrap();
    crate::test_agents::git_out(
        &setup.emu.repository_path(),
        &["show", &format!("{sha}:{path}")],
    )
}

fn file_at(setup: &Setup, sha: &str, path: &str) -> String {
    crate::test_agents::git_out(
        &setup.emu.repository_path(),
        &["show", &format!("{sha}:{path}")],
    )
}

/// The demo's auth cluster (suggestion blocks on several `src/auth/` files)
/// with `src/auth/login.sh` protected: only that file's item is blocked.
async fn a_protected_file_blocks_only_its_own_item_of_a_cluster(forge: ForgeKind) {
    const LOGIN: &str = "src/auth/login.sh";
    let setup = setup_on(forge, demo()).await;
    let head_before = setup.emu.head_sha(PR).unwrap();
    let login_before = head_file(&setup, LOGIN);
    let suggested: Vec<(String, String)> = setup
        .threads()
        .iter()
        .filter(|t| is_auth_suggestion(t))
        .map(|t| (setup.thread_id(t), t["path"].as_str().unwrap().to_owned()))
        .collect();
    assert!(
        suggested.iter().any(|(_, p)| p == LOGIN) && suggested.iter().any(|(_, p)| p != LOGIN),
        "the scenario has fixes on login.sh and on other auth files: {suggested:?}"
    );
    let outcome = setup
        .run(&format!("[paths]\nprotected = [\"{LOGIN}\"]\n"))
        .await;
    assert_ne!(outcome.status, RunStatus::Failed, "{:?}", outcome.reason);
    setup.assert_clean();

    // Pushed: the unprotected fixes; login.sh as it was.
    assert_ne!(setup.emu.head_sha(PR).unwrap(), head_before, "fixes pushed");
    assert_eq!(head_file(&setup, LOGIN), login_before, "login.sh untouched");
    for (id, path) in &suggested {
        let thread = thread_by_id(&setup, id);
        let replies = marker_bodies(&thread);
        assert_eq!(replies.len(), 1, "{thread}");
        if path == LOGIN {
            assert!(
                replies[0].contains("refusing to commit protected path src/auth/login.sh"),
                "{}",
                replies[0]
            );
            assert_eq!(thread["resolved"], false, "{thread}");
        } else {
            assert!(replies[0].contains("Fixed in "), "{path}: {}", replies[0]);
            assert_eq!(thread["resolved"], true, "{thread}");
            assert_ne!(
                head_file(&setup, path),
                file_at(&setup, &head_before, path),
                "{path} fixed"
            );
        }
    }
    // No public reply names a path its thread is not about.
    for thread in setup.threads() {
        let own = thread["path"].as_str().unwrap_or("");
        for body in marker_bodies(&thread) {
            if own != LOGIN {
                assert!(
                    !body.contains(LOGIN) && !body.contains("protected"),
                    "a reply on {own} names the protected file: {body}"
                );
            }
        }
    }
}
both_forges!(a_protected_file_blocks_only_its_own_item_of_a_cluster);

/// The title and body edit lands, the labels call fails: the edit is
/// undone and the reply says so; the pull request is as it was.
async fn a_partial_metadata_edit_is_undone_and_the_reply_says_so(forge: ForgeKind) {
    use crate::test_agents::{default_script, project, Lab, BODY};
    use serde_json::json;
    use shepherd_emulator::{FaultSpec, IssueCommentSpec};

    let mut s = project(
        vec![],
        vec![IssueCommentSpec::new(
            "reviewer",
            "Please add a Testing section to the description, and label it as tested.",
        )],
    );
    // The labels call fails once (GitLab: labels go through the second PUT
    // of the merge request, after the description's).
    s.faults.push(
        match forge {
            ForgeKind::GitHub => {
                FaultSpec::nth("POST /repos/{owner}/{repo}/issues/{number}/labels", 1)
            }
            ForgeKind::GitLab => {
                FaultSpec::nth("PUT /api/v4/projects/{id}/merge_requests/{iid}", 2)
            }
        }
        .with_status(500, None),
    );
    let lab = Lab::new_on(forge, s).await;
    let title = lab.setup.pr()["title"].as_str().unwrap().to_owned();
    lab.script(
        "default",
        default_script(
            "metadata-change",
            json!({"fix": {"attempts": [[{"fix": {
                "edits": [
                    {"path": ".shepherd-pr/title.txt", "content": "A better title\n"},
                    {"path": ".shepherd-pr/body.md", "append": "\n## Testing\n\nRun `sh verify.sh`.\n"},
                    {"path": ".shepherd-pr/labels.txt", "append": "tested\n"}
                ],
                "default": {"status": "fixed", "summary": "added Testing", "reply": "Added a Testing section."}
            }}]]}}),
        ),
    );
    let outcome = lab
        .run("[review]\nenabled = false\n[loop]\nmax_rounds = 1\non_exhaust = \"fail\"\n")
        .await;
    assert_ne!(outcome.status, RunStatus::Failed, "{:?}", outcome.reason);

    // The forge: exactly as before.
    let pr = lab.setup.pr();
    assert_eq!(pr["title"], title.as_str(), "the title is restored");
    assert_eq!(
        pr["body"].as_str().unwrap().trim_end(),
        BODY.trim_end(),
        "the description is restored"
    );
    assert!(
        !pr["labels"].to_string().contains("tested"),
        "{}",
        pr["labels"]
    );
    // The reply: not fixed, and says the partial edit was undone.
    let replies: Vec<String> = pr["issue_comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["body"].as_str().unwrap().to_owned())
        .filter(|b| shepherd_core::Marker::find(b).is_some())
        .collect();
    assert_eq!(replies.len(), 1, "{replies:?}");
    let reply = &replies[0];
    assert!(reply.contains("could not fix"), "{reply}");
    assert!(
        reply.contains("was undone, so the pull request is as it was"),
        "{reply}"
    );
    assert!(
        !reply.contains("Shepherd edited the pull request"),
        "{reply}"
    );
}
both_forges!(a_partial_metadata_edit_is_undone_and_the_reply_says_so);

/// The `Shepherd-Item` trailers of the commits `from..to` on the emulator.
fn item_trailers(setup: &Setup, from: &str, to: &str) -> Vec<(String, String)> {
    let log = crate::test_agents::git_out(
        &setup.emu.repository_path(),
        &[
            "log",
            "--format=%H %(trailers:key=Shepherd-Item,valueonly,separator=%x20)",
            &format!("{from}..{to}"),
        ],
    );
    log.lines()
        .flat_map(|l| {
            let mut parts = l.split_whitespace();
            let sha = parts.next().unwrap_or("").to_owned();
            parts
                .map(|id| (sha.clone(), id.to_owned()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A run pushes its fixes but every thread reply fails; a re-run from an
/// empty state directory (another CI runner) replies to those fixes,
/// citing the pushed commits, and does not fix them again.
async fn a_stateless_rerun_replies_to_a_pushed_fix_instead_of_redoing_it(forge: ForgeKind) {
    use shepherd_emulator::FaultSpec;
    let mut s = demo();
    s.faults
        .push(FaultSpec::every(Mutation::Reply.target(forge)).with_status(500, None));
    let setup = setup_on(forge, s).await;
    let start = setup.emu.head_sha(PR).unwrap();
    let first = setup.run("[loop]\nmax_rounds = 1\n").await;
    assert_eq!(first.status, RunStatus::Paused, "{:?}", first.reason);
    let pushed = setup.emu.head_sha(PR).unwrap();
    assert_ne!(pushed, start, "the first run pushed its fixes");
    let fixed = item_trailers(&setup, &start, &pushed);
    assert!(!fixed.is_empty(), "the pushed commits name their items");
    for (_, id) in &fixed {
        let thread = thread_by_id(&setup, id);
        assert!(
            marker_bodies(&thread).is_empty(),
            "no reply got through: {thread}"
        );
    }
    setup.emu.clear_faults();

    // Another machine: an empty state directory.
    let fresh = tempfile::tempdir().unwrap();
    let engine = setup.engine_at(fresh.path());
    let second = engine.start(setup.spec("")).await.unwrap();
    assert_ne!(second.status, RunStatus::Failed, "{:?}", second.reason);
    setup.assert_clean();
    let end = setup.emu.head_sha(PR).unwrap();
    let redone: Vec<_> = item_trailers(&setup, &pushed, &end)
        .into_iter()
        .filter(|(_, id)| fixed.iter().any(|(_, f)| f == id))
        .collect();
    assert!(redone.is_empty(), "fixes made again: {redone:?}");
    for (sha, id) in &fixed {
        let thread = thread_by_id(&setup, id);
        let replies = marker_bodies(&thread);
        assert_eq!(replies.len(), 1, "{thread}");
        assert!(
            replies[0].contains(&format!("Fixed in {sha}")),
            "the reply cites the pushed commit {sha}: {}",
            replies[0]
        );
        assert_eq!(thread["resolved"], true, "{thread}");
    }
}
both_forges!(a_stateless_rerun_replies_to_a_pushed_fix_instead_of_redoing_it);

/// Two runners (separate state directories, the same account) race on
/// one PR; the slower one's push is rejected. Its report states only what
/// it did and saw: no commit it did not push, no reply it did not post.
async fn the_loser_of_a_race_reports_only_what_it_did(forge: ForgeKind) {
    let setup = setup_on(forge, demo()).await;
    let state_b = tempfile::tempdir().unwrap();
    // B commits as another identity (its commits differ from A's), and its
    // verify command waits until A's run is over: A pushes (and replies)
    // while B is still verifying, so B's push is rejected.
    let engine_b = shepherd_engine::Engine::new(
        setup.forge(),
        shepherd_engine::StateDir::at(state_b.path()),
        setup.git(),
        EngineOptions {
            identity: Some(("Runner B".into(), "runner-b@example.invalid".into())),
            ..setup.options()
        },
    );
    let flag = state_b.path().join("a-finished");
    let spec_b = setup.spec(&format!(
        "[verify]\ncommand = \"while [ ! -f '{}' ]; do sleep 0.1; done; sh verify.sh\"\n",
        flag.display()
    ));
    let run_a = async {
        let a = setup.run("").await;
        std::fs::write(&flag, "").unwrap();
        a
    };
    let (a, b) = tokio::join!(run_a, engine_b.start(spec_b));
    let b = b.unwrap();
    assert_ne!(a.status, RunStatus::Failed, "{:?}", a.reason);
    let rejected = b
        .report
        .rounds
        .first()
        .and_then(|r| r.note.as_deref())
        .is_some_and(|n| n.contains("rejected"));
    assert!(
        rejected,
        "B's first push was rejected: {:?}",
        b.report.rounds
    );
    setup.assert_clean();

    // Every commit B's report names is on the forge's branch, and B
    // replied with it.
    let head = setup.emu.head_sha(PR).unwrap();
    let on_branch =
        crate::test_agents::git_out(&setup.emu.repository_path(), &["log", "--format=%H", &head]);
    let b_pushed: Vec<&str> = b
        .report
        .rounds
        .iter()
        .filter_map(|r| r.pushed.as_deref())
        .collect();
    for group in &b.report.outcomes {
        for item in &group.items {
            if let Some(commit) = &item.commit {
                assert!(
                    on_branch.lines().any(|l| l == commit),
                    "B's report names {commit} for {}, which is not on the branch",
                    item.item_id
                );
                assert!(!b_pushed.is_empty(), "B pushed nothing, yet cites {commit}");
            }
            if item.replied {
                let thread = thread_by_id(&setup, &item.item_id);
                let bodies = marker_bodies(&thread);
                assert!(
                    item.commit
                        .as_ref()
                        .is_none_or(|c| bodies.iter().any(|b| b.contains(c.as_str()))),
                    "B says it replied on {} citing {:?}: {bodies:?}",
                    item.item_id,
                    item.commit
                );
            }
        }
    }
    // In particular, nothing of B's rejected attempt is reported as fixed.
    let a_fixed: Vec<String> = a
        .report
        .outcomes
        .iter()
        .flat_map(|g| g.items.iter())
        .filter(|i| i.commit.is_some())
        .map(|i| i.item_id.clone())
        .collect();
    assert!(!a_fixed.is_empty(), "A fixed something");
    for group in &b.report.outcomes {
        for item in group.items.iter().filter(|i| a_fixed.contains(&i.item_id)) {
            assert!(
                item.commit.is_none() && !item.replied,
                "B claims A's work on {}: {item:?}",
                item.item_id
            );
        }
    }
}
both_forges!(the_loser_of_a_race_reports_only_what_it_did);
