//! Scenario directories: the shipped example loads and starts; commits are
//! deterministic; the banner lists what a user needs.

use shepherd_emulator::{Scenario, ScenarioError, UserKind};

use crate::common::*;

#[tokio::test]
async fn basic_example_loads_and_starts() {
    let scenario = Scenario::load(examples_dir().join("basic")).unwrap();
    assert_eq!(scenario.threads.len(), 4);
    assert_eq!(scenario.comments.len(), 2);
    assert_eq!(scenario.reviews.len(), 1);
    assert!(scenario.threads.iter().any(|t| t.outdated));
    assert!(scenario.threads.iter().any(|t| t.resolved));
    assert!(scenario.threads.iter().any(|t| t.comments.len() >= 3));
    assert!(scenario.head.contains_key("greeter/cli.py"));
    assert!(!scenario.base.contains_key("greeter/cli.py"));

    let emu = start(scenario).await;
    let users = emu.users();
    assert!(users
        .iter()
        .any(|u| u.login == "lint-bot" && u.kind == UserKind::Bot));
    let banner = emu.banner();
    assert!(banner.contains(&emu.api_url()));
    assert!(banner.contains(&format!("{}/api/v3", emu.api_url())));
    assert!(banner.contains(&format!("{}/api/graphql", emu.api_url())));
    assert!(banner.contains(&emu.git_url("acme", "greeter")));
    for user in &users {
        assert!(banner.contains(&user.token), "{} missing", user.login);
    }
    assert!(!format!("{users:?}").contains("emu_alice_token"));
    // Its one check runs at start and passes.
    idle(&emu).await;
    let head = emu.head_sha(1).unwrap();
    let (status, runs) = rest_get(
        &emu.api_url(),
        &format!("/repos/acme/greeter/commits/{head}/check-runs"),
        Some("emu_alice_token"),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(runs["check_runs"][0]["name"], "style");
    assert_eq!(runs["check_runs"][0]["conclusion"], "success", "{runs}");
    emu.shutdown().await.unwrap();
}

#[tokio::test]
async fn commits_are_deterministic() {
    let first = start(scenario(1, 1)).await;
    let second = start(scenario(1, 1)).await;
    let a = first.state_json()["pull_requests"][0]["head_sha"].clone();
    let b = second.state_json()["pull_requests"][0]["head_sha"].clone();
    assert_eq!(a, b);
    assert_ne!(
        first.state_json()["pull_requests"][0]["base_sha"],
        a,
        "head is a new commit"
    );
}

#[tokio::test]
async fn invalid_scenario_is_refused_at_start() {
    let mut s = scenario(1, 1);
    s.threads[0].comments[0].author = "nobody".into();
    let err = shepherd_emulator::Emulator::start(s, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap_err();
    let source = std::error::Error::source(&err).unwrap().to_string();
    assert!(source.contains("nobody"), "{source}");
}

#[test]
fn unknown_key_in_a_scenario_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(examples_dir().join("basic/scenario.toml")).unwrap();
    let text = text.replacen(
        "[pull_request]\n",
        "[pull_request]\nreviewers = [\"bob\"]\n",
        1,
    );
    std::fs::write(dir.path().join("scenario.toml"), text).unwrap();
    std::fs::create_dir(dir.path().join("base")).unwrap();
    std::fs::create_dir(dir.path().join("head")).unwrap();
    let err = Scenario::load(dir.path()).unwrap_err();
    assert!(matches!(err, ScenarioError::Parse { .. }), "{err}");
    assert!(err.to_string().contains("reviewers"), "{err}");
}
