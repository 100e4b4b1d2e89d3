//! The composite action (`action.yml`) run step by step by the fake runner
//! against the emulator, with GitHub's published webhook payloads and the
//! real `shepherd` binary: three stateless jobs in a row (fresh runner
//! directories, so a fresh state directory each), approval by label, a
//! reviewer commenting between jobs (the label approves only what came
//! before it); fork PRs skipped before any request (an `issue_comment` on
//! one after a single read); an event file that cannot be read reported in
//! the outputs.

use std::collections::BTreeSet;

use crate::ci_tools::webhook_example;
use crate::common::{
    assert_honest_end_state, shepherd_replies, start_demo, start_settled, Shepherd, DEV_TOKEN,
    RUN_CONFIG, SUCCEED_WHEN_HANDED_OFF,
};
use crate::fake_runner::{ActionRun, FakeRunner};

/// A published `pull_request_review.submitted` payload, pointed at the
/// demo's PR 42 of demo/authkit (`head_repo` is where its head lives).
fn review_event(head_repo: &str) -> serde_json::Value {
    let mut event = webhook_example("pull_request_review", "submitted");
    event["repository"]["full_name"] = "demo/authkit".into();
    event["repository"]["name"] = "authkit".into();
    event["pull_request"]["number"] = 42.into();
    event["pull_request"]["base"]["repo"]["full_name"] = "demo/authkit".into();
    event["pull_request"]["head"]["repo"]["full_name"] = head_repo.into();
    event
}

/// A fresh runner for `event`, with the action's inputs for the emulator.
fn runner(event: &serde_json::Value, api: &str, token: &str) -> FakeRunner {
    let r = FakeRunner::new(event, "pull_request_review");
    let config = r.root.path().join("shepherd-config.toml");
    // Every item gets a reply (needs-human too), so each job's replies
    // can be counted: what these tests check is that none is doubled. The
    // builtin agent leaves items for a person, so a finished job ends
    // `handed-off`; the opt-in keeps it green (exit 0).
    std::fs::write(
        &config,
        format!("{RUN_CONFIG}[approve]\nreply_needs_human = true\n{SUCCEED_WHEN_HANDED_OFF}"),
    )
    .unwrap();
    r.input("github-token", token)
        .input("agent", "builtin")
        .input("approve", "label")
        .input("config", config.to_str().unwrap())
        .input("shepherd-binary", env!("CARGO_BIN_EXE_shepherd"))
        .env("GITHUB_SERVER_URL", api)
        .env("GITHUB_API_URL", api)
        .env("GITHUB_REPOSITORY", "demo/authkit")
}

fn run(r: &FakeRunner) -> ActionRun {
    tokio::task::block_in_place(|| r.run_action())
}

fn assert_no_reply_doubled(emu: &shepherd_emulator::RunningEmulator) -> usize {
    let replies = shepherd_replies(emu, 42);
    let unique: BTreeSet<&String> = replies.iter().collect();
    assert_eq!(
        unique.len(),
        replies.len(),
        "a reply was doubled: {replies:?}"
    );
    replies.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_stateless_jobs_honour_the_label_and_never_double_a_reply() {
    let emu = start_demo().await;
    let api = emu.api_url();
    let event = review_event("demo/authkit");

    // Job 1: approval by label, no label yet: the run pauses, nothing is
    // posted, the job succeeds with a summary saying what waits.
    let first = runner(&event, &api, DEV_TOKEN);
    let job = run(&first);
    assert!(!job.failed, "a pause is not a failed job:\n{}", job.log());
    assert_eq!(job.outputs["status"], "paused", "{}", job.log());
    assert_eq!(job.outputs["rounds"], "1");
    assert!(
        job.summary.contains("## Shepherd: paused"),
        "{}",
        job.summary
    );
    assert!(job.summary.contains("What waits") && job.summary.contains("`shepherd-approved`"));
    assert!(
        !job.summary.contains("default `GITHUB_TOKEN`"),
        "a PAT is not the default token"
    );
    assert!(
        shepherd_replies(&emu, 42).is_empty(),
        "nothing posted before approval"
    );
    let report = std::fs::read_to_string(&job.outputs["report-path"]).unwrap();
    assert!(report.contains("Status: **paused**"), "{report}");
    // The upload step gets the run directory.
    let upload = job.step("Upload the run directory");
    assert!(upload.ran && upload.uses.as_deref() == Some("actions/upload-artifact@v4"));
    assert_eq!(upload.with["path"], job.outputs["run-dir"]);
    assert!(
        !job.step("Install shepherd").ran,
        "shepherd-binary skips the install"
    );

    // A maintainer approves on the forge, by label.
    let labels = reqwest_post(
        &format!("{api}/repos/demo/authkit/issues/42/labels"),
        "emu_reviewer_token",
        r#"{"labels":["shepherd-approved"]}"#,
    );
    assert!(labels.contains("shepherd-approved"), "{labels}");

    // Job 2, on a fresh runner: the approval is read from the forge.
    let job = run(&runner(&event, &api, DEV_TOKEN));
    assert!(!job.failed, "{}", job.log());
    assert_eq!(job.outputs["status"], "handed-off", "{}", job.log());
    assert_eq!(job.outputs["rounds"], "2");
    assert!(
        job.summary.contains("## Shepherd: handed off"),
        "{}",
        job.summary
    );
    assert_honest_end_state(&emu, 42, 10);

    // A reviewer comments between jobs.
    emu.act_comment("review-bot", "Please also document the session lifetime.")
        .await
        .unwrap();
    // Job 3, fresh again: the label approves only what was published
    // before it was added, so the new comment waits; nothing is posted.
    let job = run(&runner(&event, &api, DEV_TOKEN));
    assert_eq!(job.outputs["status"], "paused", "{}", job.log());
    assert!(
        job.summary
            .contains("approves only feedback posted before it was added"),
        "{}",
        job.summary
    );
    assert_eq!(assert_no_reply_doubled(&emu), 10);
    // The maintainer takes the label off and puts it back on, having read
    // the new comment.
    for remove in [true, false] {
        emu.act(shepherd_emulator::Act::Label {
            user: "reviewer".into(),
            pr: Some(42),
            label: "shepherd-approved".into(),
            remove,
        })
        .await
        .unwrap();
    }
    // Job 3 again: the new comment gets one reply, nothing earlier a
    // second one.
    let job = run(&runner(&event, &api, DEV_TOKEN));
    assert_eq!(job.outputs["status"], "handed-off", "{}", job.log());
    assert_eq!(assert_no_reply_doubled(&emu), 11);
    assert!(!job.summary.contains("default `GITHUB_TOKEN`"));

    // Job 4: nothing new (what job 3 handed to a person still waits); the
    // default token is detected and said.
    let mut default = runner(&event, &api, DEV_TOKEN);
    default.github.insert("token".into(), DEV_TOKEN.into());
    let job = run(&default);
    assert_eq!(job.outputs["status"], "handed-off", "{}", job.log());
    assert!(
        job.summary.contains("default `GITHUB_TOKEN`"),
        "{}",
        job.summary
    );
    assert_eq!(assert_no_reply_doubled(&emu), 11);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_pull_request_is_skipped_before_any_request() {
    let emu = start_demo().await;
    let api = emu.api_url();
    emu.reset_request_counts();
    let job = run(&runner(&review_event("mallory/authkit"), &api, DEV_TOKEN));
    assert!(!job.failed, "{}", job.log());
    assert_eq!(job.outputs["status"], "skipped", "{}", job.log());
    assert!(
        job.summary.contains("fork mallory/authkit"),
        "{}",
        job.summary
    );
    assert!(
        emu.request_counts().values().all(|n| *n == 0),
        "no request reached the forge: {:?}",
        emu.request_counts()
    );
    assert!(
        !job.step("Upload the run directory").ran,
        "no run directory"
    );
}

/// Issue 26 point 6: an `issue_comment` (a collaborator's `/shepherd`
/// command, which the example workflow lets through) does not say where the
/// pull request's head lives. On a fork's pull request the job is skipped
/// like any fork event: one read of the pull request, nothing changed on
/// the forge, `status=skipped`, a successful job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_issue_comment_on_a_fork_pull_request_is_skipped_after_one_read() {
    let mut scenario = shepherd_emulator::Scenario::demo().expect("the demo scenario");
    scenario.pull_request.fork = true;
    let emu = start_settled(scenario).await;
    let api = emu.api_url();
    let before = emu.state_json();
    emu.reset_request_counts();
    let mut event = webhook_example("issue_comment", "created");
    event["repository"]["full_name"] = "demo/authkit".into();
    event["repository"]["name"] = "authkit".into();
    event["issue"]["number"] = 42.into();
    event["issue"]["pull_request"] =
        serde_json::json!({"url": format!("{api}/repos/demo/authkit/pulls/42")});
    event["comment"]["body"] = "/shepherd approve".into();
    event["comment"]["author_association"] = "COLLABORATOR".into();
    let mut r = runner(&event, &api, DEV_TOKEN);
    r.github.insert("event_name".into(), "issue_comment".into());
    r.env
        .insert("GITHUB_EVENT_NAME".into(), "issue_comment".into());
    let job = run(&r);
    assert!(!job.failed, "{}", job.log());
    assert_eq!(job.outputs["status"], "skipped", "{}", job.log());
    assert!(job.summary.contains("fork"), "{}", job.summary);
    let requests: u64 = emu.request_counts().values().sum();
    assert_eq!(
        requests,
        1,
        "one read of the pull request: {:?}",
        emu.request_counts()
    );
    let after = emu.state_json();
    assert_eq!(
        after["pull_requests"], before["pull_requests"],
        "nothing changed on the forge"
    );
    assert!(
        !job.step("Upload the run directory").ran,
        "no run directory"
    );
}

/// Issue 26 point 6: an event file that is missing, empty or not JSON is
/// a usage error (exit 2), and the job's later steps can tell:
/// `status=error` and the reason are in `$GITHUB_OUTPUT`, and the summary
/// says so.
#[test]
fn an_unreadable_event_file_is_reported_in_the_outputs() {
    let shepherd = Shepherd::new();
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, "").unwrap();
    let garbled = dir.path().join("garbled.json");
    std::fs::write(&garbled, "{\"repository\": ").unwrap();
    let missing = dir.path().join("missing.json");
    for (name, event) in [
        ("missing", &missing),
        ("empty", &empty),
        ("garbled", &garbled),
    ] {
        let outputs = dir.path().join(format!("{name}.out"));
        let summary = dir.path().join(format!("{name}.md"));
        let out = shepherd.run(
            &["run", "--from-event", event.to_str().unwrap()],
            &[
                ("GITHUB_OUTPUT", outputs.to_str().unwrap()),
                ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{name}: {out:?}");
        let written = std::fs::read_to_string(&outputs)
            .unwrap_or_else(|e| panic!("{name}: no outputs written: {e}"));
        let parsed = crate::fake_runner::parse_outputs(&written);
        assert_eq!(parsed["status"], "error", "{name}: {written}");
        assert!(
            parsed["reason"].contains(event.to_str().unwrap()),
            "{name}: the reason names the file: {written}"
        );
        let summary = std::fs::read_to_string(&summary).unwrap();
        assert!(summary.contains("## Shepherd: error"), "{name}: {summary}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_limit_fails_the_job_with_the_reason() {
    let emu = start_demo().await;
    let api = emu.api_url();
    let event = review_event("demo/authkit");
    let job = run(&runner(&event, &api, DEV_TOKEN)
        .input("approve", "auto")
        .input("max-rounds", "1"));
    assert!(job.failed, "the round limit fails the job:\n{}", job.log());
    assert_ne!(job.outputs["status"], "handed-off");
    assert!(job.summary.contains("**Why:**"), "{}", job.summary);
    assert!(job.step("run").log.contains("::error::"), "{}", job.log());
}

/// A blocking POST with `curl` (a maintainer's REST call).
fn reqwest_post(url: &str, token: &str, body: &str) -> String {
    let out = std::process::Command::new("curl")
        .args(["-fsS", "-X", "POST", "-H"])
        .arg(format!("Authorization: Bearer {token}"))
        .args(["-H", "Content-Type: application/json", "-d", body, url])
        .output()
        .expect("curl runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Two jobs on the same PR at once (two runners, two real `shepherd`
/// processes, two state directories, no shared database): whichever pushes
/// first does that round's work; the other's non-forced push is refused by
/// the forge (as a non-fast-forward, or as a lost ref update when both
/// pushes were in flight together), so it posts nothing of that attempt,
/// re-syncs to the new head, finds the other's markers and goes on with
/// only what is left. Neither job fails; every item is answered once: when
/// both jobs reply to the same item in the same instant (each after
/// checking for the other's marker), the later poster sees the earlier
/// reply when it settles and deletes its own (docs/ci.md); no fix is made
/// twice (a later job finds nothing to do).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_concurrent_stateless_jobs_neither_fail_nor_redo_a_fix() {
    let emu = start_demo().await;
    let api = emu.api_url();
    let event = review_event("demo/authkit");
    let (a, b) = (
        runner(&event, &api, DEV_TOKEN).input("approve", "auto"),
        runner(&event, &api, DEV_TOKEN).input("approve", "auto"),
    );
    let (ja, jb) = tokio::task::block_in_place(|| {
        std::thread::scope(|s| {
            let ha = s.spawn(|| a.run_action());
            let hb = s.spawn(|| b.run_action());
            (ha.join().unwrap(), hb.join().unwrap())
        })
    });
    for job in [&ja, &jb] {
        assert!(!job.failed, "neither job fails:\n{}", job.log());
        assert_eq!(job.outputs["status"], "handed-off", "{}", job.log());
    }
    // The one that lost a push says so, and that it re-synced.
    let lost: Vec<&ActionRun> = [&ja, &jb]
        .into_iter()
        .filter(|j| {
            j.summary
                .contains("was rejected (someone pushed meanwhile); re-syncing")
        })
        .collect();
    for job in &lost {
        assert!(
            job.summary.contains("(not pushed)"),
            "the refused attempt is reported as not pushed:\n{}",
            job.summary
        );
    }
    // Every item answered (a resolved thread only with its authorization).
    assert_eq!(assert_no_reply_doubled(&emu), 10);
    let replies = shepherd_replies(&emu, 42);
    let settled = [&ja, &jb]
        .iter()
        .filter(|j| format!("{}{}", j.log(), j.summary).contains("deleted as doubles"))
        .count();
    if settled > 0 {
        eprintln!("the reply race happened and was settled by {settled} job(s)");
    }
    // A later job finds nothing to do: no fix or reply is left, none redone.
    let c = runner(&event, &api, DEV_TOKEN).input("approve", "auto");
    let job = run(&c);
    // What the racing jobs handed to a person still waits.
    assert_eq!(job.outputs["status"], "handed-off", "{}", job.log());
    assert_eq!(job.outputs["rounds"], "1", "nothing left: {}", job.log());
    assert_eq!(
        shepherd_replies(&emu, 42),
        replies,
        "the later job posted nothing"
    );
}

/// The body of every comment of PR 42 whose marker names `item`'s answer,
/// found through the command's text: the answers to `/shepherd approve`.
fn command_answers(emu: &shepherd_emulator::RunningEmulator) -> Vec<String> {
    let state = emu.state_json();
    let comments = state["pull_requests"][0]["issue_comments"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let commands: BTreeSet<String> = comments
        .iter()
        .filter(|c| {
            c["body"]
                .as_str()
                .is_some_and(|b| b.starts_with("/shepherd approve"))
        })
        .filter_map(|c| {
            c["node_id"]
                .as_str()
                .or(c["id"].as_str())
                .map(str::to_owned)
        })
        .collect();
    comments
        .iter()
        .filter_map(|c| {
            let body = c["body"].as_str()?;
            let marker = shepherd_core::Marker::find(body)?;
            commands.contains(&marker.item).then(|| body.to_owned())
        })
        .collect()
}

/// Approval by a comment command, read from the forge by stateless jobs: an
/// outsider's `/shepherd approve` (read access) approves nothing and is
/// reported in the summary, not answered on the forge (issue 26 point 1:
/// an untrusted author's comment is never acted on); a maintainer's
/// approves the decisions on feedback older than it, not the feedback a
/// reviewer bot posts after it; each maintainer's command is answered
/// once, however many jobs read it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_commands_by_a_collaborator_count_and_an_outsiders_do_not() {
    let mut scenario = shepherd_emulator::Scenario::demo().unwrap();
    // `reader` has read access only: on GitHub anyone who can read may comment.
    scenario
        .comments
        .push(shepherd_emulator::IssueCommentSpec::new(
            "reader",
            "/shepherd approve",
        ));
    let emu = crate::common::start(scenario).await;
    emu.wait_idle(std::time::Duration::from_secs(30)).await;
    let api = emu.api_url();
    let event = review_event("demo/authkit");

    // Job 1: only the outsider's command: nothing is approved or posted,
    // and the summary says why the command did not count.
    let job = run(&runner(&event, &api, DEV_TOKEN));
    assert!(!job.failed, "{}", job.log());
    assert_eq!(job.outputs["status"], "paused", "{}", job.log());
    assert!(
        job.summary
            .contains("`/shepherd approve` by @reader was ignored: @reader has `read` access"),
        "{}",
        job.summary
    );
    assert!(shepherd_replies(&emu, 42).is_empty(), "nothing posted");

    // A maintainer approves by comment.
    emu.act_comment("reviewer", "/shepherd approve")
        .await
        .unwrap();

    // Job 2, fresh: everything older than the command is approved and
    // posted, and both commands are answered.
    let job = run(&runner(&event, &api, DEV_TOKEN));
    assert!(!job.failed, "{}", job.log());
    assert_eq!(job.outputs["status"], "handed-off", "{}", job.log());
    let answers = command_answers(&emu);
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert!(
        answers[0].starts_with("@reviewer Approved: this command approves"),
        "{answers:?}"
    );
    assert!(
        job.summary.contains("opened by @reader, who has"),
        "the outsider's command is reported as untrusted: {}",
        job.summary
    );
    // The demo's 10 items (as with the label) and the maintainer's command.
    assert_eq!(assert_no_reply_doubled(&emu), 11);

    // A reviewer comments after the command: the command does not approve
    // what it could not have seen.
    emu.act_comment("review-bot", "Please also document the session lifetime.")
        .await
        .unwrap();
    let job = run(&runner(&event, &api, DEV_TOKEN));
    assert!(!job.failed, "{}", job.log());
    assert_eq!(job.outputs["status"], "paused", "{}", job.log());
    assert!(
        job.summary.contains(
            "The latest `/shepherd approve` (by @reviewer) approves only feedback posted before it"
        ),
        "{}",
        job.summary
    );
    assert_eq!(assert_no_reply_doubled(&emu), 11);

    // Job 4, fresh: the commands are read again, not answered again.
    let job = run(&runner(&event, &api, DEV_TOKEN));
    assert_eq!(job.outputs["status"], "paused", "{}", job.log());
    assert_eq!(assert_no_reply_doubled(&emu), 11);

    // A second command approves the new item; job 5 converges.
    emu.act_comment("reviewer", "/shepherd approve the docs answer too")
        .await
        .unwrap();
    let job = run(&runner(&event, &api, DEV_TOKEN));
    assert_eq!(job.outputs["status"], "handed-off", "{}", job.log());
    assert_eq!(command_answers(&emu).len(), 2);
    assert_eq!(assert_no_reply_doubled(&emu), 13);
    assert_honest_end_state(&emu, 42, 13);
}
