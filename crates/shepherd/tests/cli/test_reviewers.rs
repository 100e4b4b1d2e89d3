//! Issue 27's acceptance, with the real binary: `shepherd run` with
//! `[reviewers] wait_for = ["review-bot"]` on the demo whose bot comments
//! 8 s after a push (its CI takes about half a second) handles the bot's
//! late thread before the run ends, and says what it waited for.

use std::time::Duration;

use shepherd_emulator::Scenario;

use crate::common::{Demo, RUN_CONFIG};

/// The demo whose review bot comments 8 s after a push, and a config file
/// that waits for it up to 20 s, with `extra` before its `[reviewers]`.
async fn demo_with_a_slow_bot(extra: &str) -> (Demo, std::path::PathBuf) {
    let scenario = Scenario::demo()
        .expect("the demo scenario")
        .with_bot_delay(Duration::from_secs(8));
    let demo = Demo::with(scenario).await;
    let config = demo.sh.home.path().join("reviewers-config.toml");
    std::fs::write(
        &config,
        format!(
            "{RUN_CONFIG}{extra}[reviewers]\nwait_for = [\"review-bot\"]\nsettle_timeout_secs = 20\n"
        ),
    )
    .expect("write the config");
    (demo, config)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_waits_for_a_bot_that_comments_8_s_after_the_push() {
    // The rules bot posts nothing on a clean pass: after the round that
    // removes its TODO, it is not seen within the timeout, and said so.
    let (Demo { emu, api, sh }, config) = demo_with_a_slow_bot("").await;
    let out = tokio::task::block_in_place(|| {
        sh.run_pr_cmd(&api, "auto", &["--json"])
            .env("SHEPHERD_CONFIG", &config)
            .output()
            .expect("shepherd runs")
    });
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: serde_json::Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("--json: {e}\n{stdout}\n{stderr}"));
    // The bot's thread on the TODO Shepherd's first push added was
    // answered: it came 8 s after the push, long after CI passed.
    let state = emu.state_json();
    let pr = &state["pull_requests"][0];
    let bot_threads: Vec<&serde_json::Value> = pr["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .filter(|t| t["comments"][0]["author"] == "review-bot")
        .collect();
    assert!(!bot_threads.is_empty(), "the bot commented: {stderr}");
    for thread in bot_threads {
        let last = thread["comments"].as_array().unwrap().last().unwrap();
        assert!(
            shepherd_core::Marker::find(last["body"].as_str().unwrap()).is_some(),
            "the bot's late thread has Shepherd's reply: {thread}\n{stderr}"
        );
    }
    let reviewers = report["reviewers"].as_array().expect("reviewers in --json");
    assert_eq!(reviewers[0]["login"], "review-bot", "{report}");
    // What is true of the last head is said, whatever it is.
    let summary = report["review_threads"]["summary"].as_str().unwrap();
    if reviewers[0]["state"] != "reviewed" {
        assert!(summary.contains("review-bot did not review"), "{summary}");
    }
    assert!(stderr.contains("reviews of"), "the wait is shown: {stderr}");
}

/// While a run waits for a bot that comments 8 s after a push, `shepherd
/// status RUN` says whom it waits for, on which head, since when; once the
/// run ended, it says no wait.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_shows_the_reviewer_wait_of_a_run_in_progress() {
    let (Demo { emu, api, sh }, config) = demo_with_a_slow_bot("[loop]\nmax_rounds = 1\n").await;
    let mut run = sh
        .run_pr_cmd(&api, "auto", &[])
        .env("SHEPHERD_CONFIG", &config)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("shepherd runs");
    let started = std::time::Instant::now();
    let mut seen = None;
    while started.elapsed() < Duration::from_secs(90) && seen.is_none() {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (code, out, _) = tokio::task::block_in_place(|| sh.run_at(&api, &["status", "--json"]));
        let runs: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
        let Some(id) = runs[0]["run_id"].as_str().filter(|_| code == 0) else {
            continue;
        };
        let (_, out, _) = tokio::task::block_in_place(|| sh.run_at(&api, &["status", id]));
        if let Some(line) = out.lines().find(|l| l.contains("waiting for reviewers:")) {
            seen = Some((id.to_owned(), line.to_owned()));
        }
        if run.try_wait().expect("the run's state").is_some() {
            break;
        }
    }
    let (id, line) = seen.expect("`shepherd status` showed the reviewer wait");
    let head = emu.head_sha(42).expect("the PR's head");
    assert!(
        line.starts_with(&format!(
            "  waiting for reviewers: review-bot on {} since ",
            &head[..7]
        )),
        "{line}"
    );
    assert!(line.ends_with("(round 1)"), "{line}");
    let status = tokio::task::block_in_place(|| run.wait()).expect("the run ends");
    assert!(status.code().is_some(), "the run exited");
    let (_, out, _) = tokio::task::block_in_place(|| sh.run_at(&api, &["status", &id]));
    assert!(!out.contains("waiting for reviewers"), "{out}");
}
