//! Where a run's configuration comes from, and that it stays: a resumed run
//! uses exactly the layers it was started with, whatever stage it stopped
//! in; a `shepherd.toml` on the PR's head may only tighten the safety
//! settings of the user's side (here: the base branch's file). On both forges.

use std::path::Path;
use std::process::Command;

use shepherd_core::config::{ApproveMode, Config, ConfigLayer};
use shepherd_emulator::{FaultSpec, FileSpec};
use shepherd_engine::RunStatus;

use crate::common::*;

/// The user's side of these tests: person-opened threads are left to the person.
const USER_SIDE: &str = "[resolve]\nhuman_threads = false\n";

/// The configuration in effect that a run directory shows.
fn effective(run_dir: &Path) -> Config {
    let text = read(&run_dir.join("config.toml"));
    Config::layered(&[ConfigLayer::user("config.toml", text)]).expect("config.toml parses")
}

/// The text of `path` at the PR's head on the emulator.
fn file_at_head(setup: &Setup, path: &str) -> String {
    let head = setup.emu.head_sha(PR).expect("the PR has a head");
    let out = Command::new("git")
        .arg("-C")
        .arg(setup.emu.repository_path())
        .args(["show", &format!("{head}:{path}")])
        .output()
        .expect("git runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Threads opened by `reviewer` (a person) that are resolved on the forge.
fn resolved_person_threads(setup: &Setup) -> Vec<String> {
    setup
        .threads()
        .into_iter()
        .filter(|t| {
            let opener = t["comments"][0]["author"]
                .as_str()
                .or_else(|| t["comments"][0]["author"]["login"].as_str())
                .unwrap_or_default()
                .to_owned();
            t["resolved"].as_bool() == Some(true) && opener == "reviewer"
        })
        .map(|t| setup.thread_id(&t))
        .collect()
}

/// The read that the first stage (PR state) makes, per forge.
fn pr_read(forge: ForgeKind) -> &'static str {
    match forge {
        ForgeKind::GitHub => "graphql:PullRequestState",
        ForgeKind::GitLab => "GET /api/v4/projects/{id}/merge_requests/{iid}",
    }
}

/// The thread read of the threads stage, per forge.
fn threads_read(forge: ForgeKind) -> &'static str {
    match forge {
        ForgeKind::GitHub => "graphql:ReviewThreads",
        ForgeKind::GitLab => "GET /api/v4/projects/{id}/merge_requests/{iid}/discussions",
    }
}

/// A run stopped by `target` failing on every call, then resumed once the
/// forge answers again: the resumed run has the configuration the run was
/// started with (not the defaults), and the forge shows it.
async fn resume_after_a_failure_at(forge: ForgeKind, target: &str) {
    let setup = setup_on(forge, demo()).await;
    let fault = setup
        .emu
        .set_fault(FaultSpec::every(target).with_status(500, None))
        .expect("fault set");
    let first = setup.run(USER_SIDE).await;
    assert_ne!(
        first.status,
        RunStatus::Converged,
        "{target}: the fault stops the run"
    );
    assert!(
        first.run_dir.join("config-layers.json").is_file(),
        "{target}: the layers are recorded before the first stage"
    );
    setup.emu.clear_fault(fault);
    // The resuming process has none of the run's layers: not the user's
    // file, not the environment, not the flags.
    let resumed = setup
        .engine()
        .resume(&first.run_id)
        .await
        .expect("the run resumes");
    assert_handed_off(&resumed);
    let config = effective(&resumed.run_dir);
    assert!(!config.resolve.human_threads, "{target}: {config:?}");
    assert_eq!(config.approve.mode, ApproveMode::Auto, "{target}");
    assert!(
        config.trust.users.contains(&"review-bot".to_owned()),
        "{target}"
    );
    assert_eq!(config.ci.timeout_secs, 30, "{target}");
    assert_eq!(
        resolved_person_threads(&setup),
        Vec::<String>::new(),
        "{target}: person-opened threads stay open for the person"
    );
    assert!(
        setup
            .threads()
            .iter()
            .any(|t| t["resolved"].as_bool() == Some(true)),
        "{target}: the bot's fixed thread is resolved (the filter above sees resolutions)"
    );
    assert_no_duplicate_replies(&setup.pr());
    assert_resolves_authorized(&setup.pr());
}

/// Round 1's stages that talk to the forge, each failing on every call in
/// turn: the PR read (pr-state), the thread read (threads), the push (git
/// receive-pack, after its retries) and the replies (which pause the run).
async fn a_run_stopped_in_any_stage_of_round_1_resumes_with_its_own_configuration(
    forge: ForgeKind,
) {
    for target in [
        pr_read(forge),
        threads_read(forge),
        "POST /{owner}/{repo}.git/git-receive-pack",
        Mutation::Reply.target(forge),
    ] {
        resume_after_a_failure_at(forge, target).await;
    }
}
both_forges!(a_run_stopped_in_any_stage_of_round_1_resumes_with_its_own_configuration);

/// The base branch says what is safe; the PR head's file tries to loosen
/// every safety setting and to run a command of its own as the agent.
async fn a_pr_head_config_cannot_loosen_the_base_branchs_safety_settings(forge: ForgeKind) {
    let pwned = tempfile::tempdir().expect("temp dir");
    let marker = pwned.path().join("pwned");
    let mut s = demo();
    s.base.insert(
        "shepherd.toml".into(),
        FileSpec::text(
            "[resolve]\nhuman_threads = false\n[paths]\nprotected = [\".github/workflows/**\", \
             \"src/auth/**\"]\n",
        ),
    );
    s.head.insert(
        "shepherd.toml".into(),
        FileSpec::text(format!(
            "[resolve]\nhuman_threads = true\n[paths]\nprotected = []\n[approve]\n\
             resolve_wontfix = true\n[agent]\nprovider = \"command\"\ncommand = \"touch {}\"\n\
             [verify]\ncommand = \"true\"\n",
            marker.display()
        )),
    );
    let setup = setup_on(forge, s).await;
    let before = file_at_head(&setup, "src/auth/login.sh");
    let outcome = setup.run("").await;
    assert!(!marker.exists(), "the head's agent command never ran");
    assert_eq!(
        file_at_head(&setup, "src/auth/login.sh"),
        before,
        "protected by the base branch: nothing under src/auth/ is pushed\n{}",
        outcome.report.to_markdown()
    );
    assert_eq!(
        resolved_person_threads(&setup),
        Vec::<String>::new(),
        "person-opened threads stay open"
    );
    let config = effective(&outcome.run_dir);
    assert!(config.paths.is_protected("src/auth/login.sh"));
    assert!(config.paths.is_protected(".github/workflows/ci.yml"));
    assert!(!config.resolve.human_threads);
    assert!(!config.approve.resolve_wontfix);
    assert!(config.verify.command.is_none(), "{:?}", config.verify);
    let sources = read_json(&outcome.run_dir.join("rounds/1/config.json"));
    let ignored = sources["ignored"].to_string();
    for key in [
        "human_threads",
        "src/auth/**",
        "resolve_wontfix",
        "agent.command",
        "verify.command",
    ] {
        assert!(ignored.contains(key), "{key} not reported in {ignored}");
    }
    let files = sources["files"].to_string();
    assert!(files.contains("base branch main"), "{files}");
    assert!(files.contains("on the pull request's head"), "{files}");
    assert_no_duplicate_replies(&setup.pr());
}
both_forges!(a_pr_head_config_cannot_loosen_the_base_branchs_safety_settings);

/// The head's file may tighten: a protected path it adds is refused.
async fn a_pr_head_config_can_tighten(forge: ForgeKind) {
    let mut s = demo();
    s.head.insert(
        "shepherd.toml".into(),
        FileSpec::text("[paths]\nprotected = [\".github/workflows/**\", \"src/util/**\"]\n"),
    );
    let setup = setup_on(forge, s).await;
    let before = file_at_head(&setup, "src/util/strings.sh");
    let outcome = setup.run("").await;
    assert_eq!(
        file_at_head(&setup, "src/util/strings.sh"),
        before,
        "{}",
        outcome.report.to_markdown()
    );
    assert!(effective(&outcome.run_dir)
        .paths
        .is_protected("src/util/strings.sh"));
}
both_forges!(a_pr_head_config_can_tighten);

/// A paused run holds its PR: a second run is refused, naming the paused
/// one; once it is abandoned, a new run starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_run_refuses_a_second_run_until_abandoned() {
    let setup = setup(demo()).await;
    let paused = setup.run("[approve]\nmode = \"prompt\"\n").await;
    assert_eq!(paused.status, RunStatus::Paused, "{:?}", paused.reason);
    let err = setup
        .engine()
        .start(setup.spec(""))
        .await
        .expect_err("a second run is refused");
    let text = err.to_string();
    assert!(
        text.contains(&paused.run_id) && text.contains("paused"),
        "{text}"
    );
    shepherd_engine::reject_run(&setup.state_dir(), &paused.run_id, "tester")
        .expect("the paused run is abandoned");
    let outcome = setup.run("").await;
    assert_handed_off(&outcome);
}
