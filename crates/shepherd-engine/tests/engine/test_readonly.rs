//! Read-only means read-only, whatever the provider (issue 10.5, SPEC
//! section 7): a scripted agent in a read-only role (triage, fix-validation,
//! review) that commits or edits, as a prompt injection would make it, fails
//! its call closed: the worktree is restored, the round stops, nothing is
//! pushed or posted. A fixer that commits itself does not get its commit
//! pushed: Shepherd commits the files itself. Forge-neutral (the worktree is
//! local): GitHub only.

use serde_json::{json, Value};
use shepherd_engine::{RunOutcome, RunStatus};

use crate::common::*;
use crate::test_agents::{default_script, fix_script, thread, Lab, A_TXT};

/// A step of the scripted agent: `sh -c SCRIPT` in its working directory.
fn sh(script: &str) -> Value {
    json!({"run": {"program": "sh", "args": ["-c", script]}})
}

/// What a prompt-injected agent does: change a tracked file and commit it.
const COMMIT: &str = "printf 'injected\\n' >> src/a.txt && \
    git -c user.name=agent -c user.email=agent@example.invalid commit -qam 'agent commit'";

/// Change a tracked file and add one, no commit.
const EDIT: &str = "printf 'injected\\n' >> src/a.txt && printf 'x\\n' > dropped.txt";

/// The lab of these tests (one thread, on `src/a.txt`) and the PR's head
/// before the run.
async fn lab() -> (Lab, String) {
    let lab = Lab::with_threads(vec![thread("src/a.txt", 2, "Say ALPHA TWO here.")]).await;
    let base = lab.setup.emu.head_sha(PR).unwrap();
    (lab, base)
}

/// The default script (triage says code-change) with `role`'s one call
/// running `script` first, as a prompt injection would make it, then
/// answering `answer`.
fn injected(role: &str, script: &str, answer: Value) -> Value {
    default_script(
        "code-change",
        json!({role: {"attempts": [[sh(script), answer]]}}),
    )
}

/// `script` with a fixer that makes `src/a.txt` say ALPHA TWO.
fn with_alpha_two_fix(mut script: Value) -> Value {
    let fixed = A_TXT.replace("alpha two", "ALPHA TWO");
    script["fix"] = fix_script(
        0,
        json!([{"path": "src/a.txt", "content": fixed}]),
        "Now says ALPHA TWO.",
    )["fix"]
        .clone();
    script
}

/// The run failed closed on `role`: nothing reached the forge, the reason
/// and a progress note say what the agent changed, the worktree is back.
fn assert_failed_closed(lab: &Lab, outcome: &RunOutcome, base: &str, role: &str) {
    assert_eq!(outcome.status, RunStatus::Failed, "{:?}", outcome.reason);
    assert_eq!(outcome.status, shepherd_engine::RunStatus::Failed);
    let reason = outcome.reason.clone().unwrap_or_default();
    assert!(
        reason.contains(&format!("the {role} agent changed the worktree"))
            && reason.contains("read-only")
            && reason.contains("restored"),
        "{reason}"
    );
    assert_eq!(
        lab.setup.emu.head_sha(PR).unwrap(),
        base,
        "nothing was pushed"
    );
    assert!(
        marker_replies(&lab.setup.pr()).is_empty(),
        "nothing was posted"
    );
    assert!(!lab.head_file("src/a.txt").contains("injected"));
    let notes = lab.setup.notes();
    assert!(
        notes
            .iter()
            .any(|n| n.contains(&format!("the {role} agent changed the worktree"))),
        "{notes:?}"
    );
    // The run's worktree is kept on failure, restored to the round's start.
    let kept = outcome.worktree_kept.clone().expect("the worktree is kept");
    let a = std::fs::read_to_string(kept.join("src/a.txt")).unwrap();
    assert!(!a.contains("injected"), "{a}");
    assert!(!kept.join("dropped.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_triage_agent_that_commits_fails_closed_and_nothing_is_pushed() {
    let (lab, base) = lab().await;
    lab.script(
        "default",
        injected(
            "triage",
            COMMIT,
            json!({"triage": {"default": {"decision": "code-change", "reply_hint": "On it."}}}),
        ),
    );
    let outcome = lab.run("[review]\nenabled = false\n").await;
    assert_failed_closed(&lab, &outcome, &base, "triage");
    let reason = outcome.reason.unwrap();
    assert!(reason.contains("HEAD moved"), "{reason}");
    // Only the triage ran: no fixer was started on the injected state.
    assert!(
        lab.calls().iter().all(|c| c.role == "triage"),
        "{:?}",
        lab.calls()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_triage_agent_that_edits_without_committing_fails_closed() {
    let (lab, base) = lab().await;
    lab.script(
        "default",
        injected(
            "triage",
            EDIT,
            json!({"triage": {"default": {"decision": "needs-human", "reply_hint": "A person decides."}}}),
        ),
    );
    let outcome = lab.run("[review]\nenabled = false\n").await;
    assert_failed_closed(&lab, &outcome, &base, "triage");
    let reason = outcome.reason.unwrap();
    assert!(
        reason.contains("files changed: dropped.txt, src/a.txt"),
        "{reason}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviewer_that_commits_fails_closed_before_the_push() {
    let (lab, base) = lab().await;
    let script = injected(
        "review",
        COMMIT,
        json!({"review": {"summary": "nothing to report"}}),
    );
    lab.script("default", with_alpha_two_fix(script));
    let outcome = lab.run("").await;
    assert_failed_closed(&lab, &outcome, &base, "review");
    assert!(
        !lab.head_file("src/a.txt").contains("ALPHA TWO"),
        "not even Shepherd's own fix is pushed after a violation"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fix_validator_that_writes_fails_closed_before_the_push() {
    let (lab, base) = lab().await;
    let script = injected(
        "fix-validation",
        "printf 'x\\n' > dropped.txt",
        json!({"fix_validation": {}}),
    );
    lab.script("default", with_alpha_two_fix(script));
    let outcome = lab.run("[review]\nenabled = false\n").await;
    assert_eq!(outcome.status, RunStatus::Failed, "{:?}", outcome.reason);
    let reason = outcome.reason.clone().unwrap();
    assert!(
        reason.contains("the fix-validation agent changed the worktree")
            && reason.contains("dropped.txt"),
        "{reason}"
    );
    assert_eq!(lab.setup.emu.head_sha(PR).unwrap(), base, "nothing pushed");
    assert!(marker_replies(&lab.setup.pr()).is_empty(), "nothing posted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fixer_that_commits_itself_does_not_get_its_commit_pushed() {
    let (lab, base) = lab().await;
    let fixed = A_TXT.replace("alpha two", "ALPHA TWO");
    let mut script = default_script("code-change", json!({}));
    script["fix"] = json!({"attempts": [[
        {"fix": {"edits": [{"path": "src/a.txt", "content": fixed}],
                 "default": {"status": "fixed", "summary": "Now says ALPHA TWO.", "reply": "Now says ALPHA TWO."}}},
        sh("git -c user.name=agent -c user.email=agent@example.invalid commit -qam 'agent commit'"),
    ]]});
    lab.script("default", script);
    let outcome = lab.run("[review]\nenabled = false\n").await;
    assert_converged(&outcome);
    // The fix is on the forge, as Shepherd's own commit; the agent's is not.
    assert!(lab.head_file("src/a.txt").contains("ALPHA TWO"));
    let subjects = lab.pushed_subjects(&base);
    assert_eq!(
        subjects,
        ["shepherd: address review feedback on src/a.txt"],
        "{subjects:?}"
    );
    let sha = lab.setup.emu.head_sha(PR).unwrap();
    let author = crate::test_agents::git_out(
        &lab.setup.emu.repository_path(),
        &["log", "-1", "--format=%an <%ae>", &sha],
    );
    assert!(!author.contains("agent@example.invalid"), "{author}");
    let t = lab.thread_on("src/a.txt");
    assert_eq!(t["resolved"], true, "{t}");
}

/// A writer in the run's worktree (the repair of a fix that broke the
/// verify command) that commits itself: its commit is taken back, the
/// files it changed are committed by Shepherd, and only Shepherd's commits
/// reach the forge.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repair_agent_that_commits_itself_is_taken_back_and_committed_by_shepherd() {
    let (lab, base) = lab().await;
    lab.triage_all("code-change");
    lab.fixer(
        "src/a.txt",
        0,
        json!([{"path": "src/a.txt", "content": A_TXT.replace("alpha two", "alpha two BROKEN")}]),
        "Fixed alpha.",
    );
    lab.script(
        "repair",
        json!({"fix": {"attempts": [[
            {"fix": {"edits": [{"path": "src/a.txt", "content": A_TXT.replace("alpha two", "alpha 2")}],
                     "default": {"status": "fixed", "summary": "repaired", "reply": "Repaired."}}},
            sh("git -c user.name=agent -c user.email=agent@example.invalid commit -qam 'agent commit'"),
        ]]}}),
    );
    let outcome = lab.run("[review]\nenabled = false\n").await;
    assert_eq!(outcome.status, RunStatus::Converged, "{:?}", outcome.reason);
    assert_eq!(
        lab.head_file("src/a.txt"),
        A_TXT.replace("alpha two", "alpha 2")
    );
    let subjects = lab.pushed_subjects(&base);
    assert!(
        !subjects.iter().any(|s| s == "agent commit") && subjects.len() == 2,
        "the fix and Shepherd's repair commit only: {subjects:?}"
    );
    let notes = lab.setup.notes();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("the repair agent committed or changed refs itself")),
        "{notes:?}"
    );
}
