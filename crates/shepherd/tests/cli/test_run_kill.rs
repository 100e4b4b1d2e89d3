//! A `shepherd run` killed at a public step, then `shepherd resume`: no
//! duplicate reply, no thread lost, no unauthorized resolve. The emulator
//! holds the step's request (a delay fault) while the process is killed.
//! Also: a second run while the first holds the lock is refused.

use std::time::{Duration, Instant};

use shepherd_emulator::{FaultSpec, RunningEmulator};

use crate::common::{assert_honest_end_state, shepherd_replies, start_demo, text, Shepherd};

const REPLY: &str = "POST /repos/{owner}/{repo}/pulls/{number}/comments/{comment_id}/replies";
const RESOLVE: &str = "graphql:ResolveReviewThread";

async fn wait_for(emu: &RunningEmulator, key: &str, count: u64) {
    let start = Instant::now();
    while emu.request_count(key) < count {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{key} never reached {count}: {:?}",
            emu.request_counts()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Start a run, wait until it is held at the `nth` call of `key`, kill it,
/// clear the fault, resume, and check the end state.
async fn kill_and_resume(key: &str, nth: u64, also_refuse_a_second_run: bool) {
    let emu = start_demo().await;
    let api = emu.api_url();
    let fault = emu
        .set_fault(FaultSpec::nth(key, nth).with_delay(120_000))
        .unwrap();
    let sh = Shepherd::new();
    let mut child = sh
        .run_cmd(
            &api,
            &["run", "42", "--repo", "demo/authkit", "--approve", "auto"],
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&emu, key, nth).await;

    if also_refuse_a_second_run {
        let (code, out, err) = tokio::task::block_in_place(|| {
            sh.run_at(&api, &["run", "42", "--repo", "demo/authkit"])
        });
        assert_eq!(code, 1, "{out}\n{err}");
        assert!(
            err.contains("holds this pull request") && err.contains(&child.id().to_string()),
            "{err}"
        );
    }

    child.kill().unwrap();
    child.wait().unwrap();
    emu.clear_fault(fault);
    // Let the bot react to the push (and CI finish) before resuming, so the
    // end state does not depend on timing.
    emu.wait_idle(Duration::from_secs(30)).await;
    let run = sh.latest_run(&api);
    let (_, out, _) = sh.run_at(&api, &["status", &run, "--json"]);
    let status: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(status["run"]["status"], "interrupted", "{status}");

    let out = tokio::task::block_in_place(|| sh.run_cmd(&api, &["resume", &run]).output().unwrap());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stderr.contains("took over the stale lock"), "{stderr}");
    if std::env::var_os("SHOW").is_some() {
        eprintln!("{stderr}\n{stdout}");
    }
    assert_honest_end_state(&emu, 42, 10);
    // Fixes are pushed once: 2 commits in round 1 (the src/auth cluster and
    // the naming fix), 1 in round 2.
    let commits = emu.state_json()["pull_requests"][0]["commits"]
        .as_array()
        .map(Vec::len)
        .unwrap();
    assert_eq!(commits, 1 + 3, "the PR's commit plus Shepherd's three");
    assert!(shepherd_replies(&emu, 42).len() == 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_during_a_reply_then_resumed() {
    kill_and_resume(REPLY, 3, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_during_a_resolve_then_resumed() {
    kill_and_resume(RESOLVE, 2, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_right_after_the_push_then_resumed() {
    // The first reply follows the push: holding it stops the run with the
    // fixes on the forge and nothing replied.
    kill_and_resume(REPLY, 1, false).await;
}
