//! Helpers shared by the engine tests.

#![allow(dead_code)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use shepherd_core::config::ConfigLayer;
use shepherd_core::target::{ForgeSource, Mode, RepoSource, Target};
use shepherd_core::{ForgeKind, Marker, RepoRef};
use shepherd_emulator::{Emulator, RunningEmulator, Scenario};
use shepherd_engine::{
    Engine, EngineOptions, Git, HttpCredentials, Progress, ProgressEvent, RunOutcome, RunSpec,
    StateDir,
};
use shepherd_forge::{ClientConfig, Forge, GitHubClient, GitHubEndpoints, RetryPolicy, Token};

/// The demo's PR author (Shepherd runs as this account).
pub const DEV_TOKEN: &str = "emu_dev_token";
pub const PR: u64 = 42;

/// A running emulator and a private state directory and HOME.
pub struct Setup {
    pub emu: RunningEmulator,
    pub state: tempfile::TempDir,
    pub home: tempfile::TempDir,
    pub events: Arc<Mutex<Vec<ProgressEvent>>>,
}

/// The demo scenario, tuned for tests: the bot comments 300 ms after a push
/// and the CI check takes about 600 ms more, so the bot's comment lands
/// during the CI wait.
pub fn demo() -> Scenario {
    let mut s = Scenario::demo().expect("the demo scenario loads");
    for bot in &mut s.bots {
        bot.delay_ms = 300;
    }
    for check in &mut s.checks {
        check.delay_ms = 600;
    }
    s
}

pub async fn setup(scenario: Scenario) -> Setup {
    let emu = Emulator::start(scenario, "127.0.0.1:0".parse().expect("address"))
        .await
        .expect("emulator starts");
    // CI of the scenario's head runs at start: let it settle.
    emu.wait_idle(Duration::from_secs(20)).await;
    Setup {
        emu,
        state: tempfile::tempdir().expect("temp dir"),
        home: tempfile::tempdir().expect("temp dir"),
        events: Arc::default(),
    }
}

struct Recorder(Arc<Mutex<Vec<ProgressEvent>>>);

impl Progress for Recorder {
    fn event(&self, event: &ProgressEvent) {
        self.0.lock().expect("lock").push(event.clone());
    }
}

pub fn repo() -> RepoRef {
    RepoRef {
        host: "github.com".into(),
        owner: "demo".into(),
        name: "authkit".into(),
    }
}

pub fn target() -> Target {
    Target {
        forge: ForgeKind::GitHub,
        forge_source: ForgeSource::Flag,
        repo: repo(),
        repo_source: RepoSource::Flag,
        number: PR,
        mode: Mode::Full,
        anchor: None,
    }
}

/// The test configuration: trust the scenario's bot, fast CI, auto approval.
pub const TEST_CONFIG: &str = r#"
[trust]
users = ["review-bot"]
[approve]
mode = "auto"
[ci]
timeout_secs = 30
appear_timeout_secs = 10
"#;

impl Setup {
    pub fn forge(&self) -> Arc<dyn Forge> {
        self.forge_as(DEV_TOKEN)
    }

    pub fn forge_as(&self, token: &str) -> Arc<dyn Forge> {
        let endpoints = GitHubEndpoints::from_api_url(&self.emu.api_url()).expect("endpoints");
        let config = ClientConfig {
            retry: RetryPolicy::none(),
            ..ClientConfig::default()
        };
        Arc::new(
            GitHubClient::with_config(repo(), endpoints, Token::new(token), config)
                .expect("client"),
        )
    }

    pub fn git(&self) -> Git {
        let home = self.home.path();
        Git::new()
            .with_env("HOME", home)
            .with_env("XDG_CONFIG_HOME", home.join(".config"))
            .with_credentials(HttpCredentials::github(DEV_TOKEN))
    }

    pub fn state_dir(&self) -> StateDir {
        StateDir::at(self.state.path())
    }

    pub fn options(&self) -> EngineOptions {
        EngineOptions {
            progress: Arc::new(Recorder(self.events.clone())),
            ci_poll: Some(Duration::from_millis(150)),
            identity: Some(("Shepherd Test".into(), "shepherd@example.invalid".into())),
            ..EngineOptions::default()
        }
    }

    pub fn engine(&self) -> Engine {
        self.engine_with(self.options())
    }

    pub fn engine_with(&self, opts: EngineOptions) -> Engine {
        Engine::new(self.forge(), self.state_dir(), self.git(), opts)
    }

    pub fn spec(&self, extra: &str) -> RunSpec {
        RunSpec {
            target: target(),
            git_url: self.emu.git_url("demo", "authkit"),
            api_url: Some(self.emu.api_url()),
            layers: vec![
                ConfigLayer::user("test config", TEST_CONFIG),
                ConfigLayer::user("test override", extra),
            ],
        }
    }

    pub async fn run(&self, extra: &str) -> RunOutcome {
        self.engine()
            .start(self.spec(extra))
            .await
            .expect("the run starts")
    }

    pub fn state(&self) -> Value {
        self.emu.state_json()
    }

    pub fn pr(&self) -> Value {
        let state = self.state();
        state["pull_requests"]
            .as_array()
            .and_then(|prs| prs.iter().find(|p| p["number"] == PR))
            .cloned()
            .expect("the PR is in the state")
    }
}

/// Every reply carrying Shepherd's marker, per item id (threads and the
/// conversation), from the emulator's state.
pub fn marker_replies(pr: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for thread in pr["threads"].as_array().into_iter().flatten() {
        for c in thread["comments"].as_array().into_iter().flatten() {
            if let Some(m) = Marker::find(c["body"].as_str().unwrap_or("")) {
                out.push((m.item, thread["id"].as_str().unwrap_or("").to_owned()));
            }
        }
    }
    for c in pr["issue_comments"].as_array().into_iter().flatten() {
        if let Some(m) = Marker::find(c["body"].as_str().unwrap_or("")) {
            out.push((m.item, "conversation".to_owned()));
        }
    }
    out
}

/// Asserts no item got two replies from Shepherd.
pub fn assert_no_duplicate_replies(pr: &Value) {
    let replies = marker_replies(pr);
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for (item, _) in &replies {
        *seen.entry(item.clone()).or_default() += 1;
    }
    let doubled: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        doubled.is_empty(),
        "items replied to more than once: {doubled:?}"
    );
}

/// Asserts every resolved thread was resolved with Shepherd's authorization:
/// its last Shepherd reply says `resolve=yes`.
pub fn assert_resolves_authorized(pr: &Value) {
    for thread in pr["threads"].as_array().into_iter().flatten() {
        if thread["resolved"] != true {
            continue;
        }
        let last_marker = thread["comments"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| Marker::find(c["body"].as_str().unwrap_or("")))
            .next_back();
        let authorized = last_marker.is_some_and(|m| m.resolve_authorized);
        assert!(
            authorized,
            "thread {} resolved without authorization",
            thread["id"]
        );
    }
}

pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&read(path)).unwrap_or_else(|e| panic!("parse {}: {e}", path.display()))
}
