//! A run paused for approval (the demo scenario on the emulator, the
//! builtin agent, `approve.mode = "prompt"`), and the dashboard over its
//! state directory, resuming in this process with the same engine.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use shepherd_core::config::ConfigLayer;
use shepherd_core::{ForgeKind, RepoRef};
use shepherd_emulator::{Act, ActThread, Emulator, RunningEmulator, Scenario};
use shepherd_engine::{
    Engine, EngineError, EngineOptions, Git, HttpCredentials, RunOutcome, RunSpec, RunStatus,
    StateDir,
};
use shepherd_forge::{
    ClientConfig, Forge, GitHubClient, GitHubEndpoints, GitLabClient, GitLabEndpoints, RetryPolicy,
    Token,
};
use shepherd_serve::{Resumer, ServeConfig, Server};
use tokio::task::JoinHandle;

pub const DEV_TOKEN: &str = "emu_dev_token";
pub use crate::demo::{repo_on, PR};

/// The body of the comment that must show as text.
pub const MARKUP: &str =
    "<script>window.__pwned = 1</script> <img src=x onerror=\"window.__pwned = 2\"> please check";

const CONFIG: &str = r#"
[trust]
users = ["review-bot"]
[approve]
mode = "prompt"
[ci]
timeout_secs = 30
appear_timeout_secs = 10
"#;

/// Builds engines for the emulator (what `shepherd resume` builds from
/// `run.json` and the environment).
#[derive(Clone)]
pub struct EngineFactory {
    kind: ForgeKind,
    api_url: String,
    state: StateDir,
    home: std::path::PathBuf,
}

impl EngineFactory {
    pub fn forge(&self) -> Arc<dyn Forge> {
        let config = ClientConfig {
            retry: RetryPolicy::none(),
            ..ClientConfig::default()
        };
        let repo = repo_on(self.kind);
        let token = Token::new(DEV_TOKEN);
        match self.kind {
            ForgeKind::GitHub => {
                let endpoints = GitHubEndpoints::from_api_url(&self.api_url).unwrap();
                Arc::new(GitHubClient::with_config(repo, endpoints, token, config).unwrap())
            }
            ForgeKind::GitLab => {
                let endpoints = GitLabEndpoints::from_api_url(&self.api_url).unwrap();
                Arc::new(
                    GitLabClient::with_config(repo, endpoints, token, config)
                        .unwrap()
                        .with_merge_request(PR),
                )
            }
        }
    }

    pub fn engine(&self) -> Engine {
        let git = Git::new()
            .with_env("HOME", &self.home)
            .with_env("XDG_CONFIG_HOME", self.home.join(".config"))
            .with_credentials(HttpCredentials::for_forge(self.kind, DEV_TOKEN));
        let opts = EngineOptions {
            ci_poll: Some(Duration::from_millis(150)),
            identity: Some(("Shepherd Test".into(), "shepherd@example.invalid".into())),
            ..EngineOptions::default()
        };
        Engine::new(self.forge(), self.state.clone(), git, opts)
    }
}

/// Resumes in this process, keeping each resume's outcome for the test.
pub struct InProcess {
    factory: EngineFactory,
    handle: tokio::runtime::Handle,
    pub started: Mutex<Vec<JoinHandle<Result<RunOutcome, EngineError>>>>,
}

impl Resumer for InProcess {
    fn resume(&self, run_id: &str) -> Result<(), String> {
        let engine = self.factory.engine();
        let id = run_id.to_owned();
        let task = self.handle.spawn(async move { engine.resume(&id).await });
        self.started.lock().unwrap().push(task);
        Ok(())
    }
}

impl InProcess {
    /// How many resumes were started.
    pub fn count(&self) -> usize {
        self.started.lock().unwrap().len()
    }

    /// The outcome of the (only) resume.
    pub async fn outcome(&self) -> RunOutcome {
        let task = {
            let mut started = self.started.lock().unwrap();
            assert_eq!(started.len(), 1, "one resume started");
            started.remove(0)
        };
        tokio::time::timeout(Duration::from_secs(120), task)
            .await
            .expect("the resume ends")
            .expect("the resume task")
            .expect("the resume")
    }
}

pub fn repo() -> RepoRef {
    repo_on(ForgeKind::GitHub)
}

pub struct Paused {
    pub emu: RunningEmulator,
    pub state: tempfile::TempDir,
    pub home: tempfile::TempDir,
    pub run_id: String,
    pub server: Server,
    pub resumer: Arc<InProcess>,
    pub client: reqwest::Client,
}

fn demo() -> Scenario {
    let mut s = Scenario::demo().expect("the demo scenario loads");
    for bot in &mut s.bots {
        bot.delay_ms = 300;
    }
    for check in &mut s.checks {
        check.delay_ms = 600;
    }
    s
}

/// The demo PR with one more thread, whose comment is [`MARKUP`], run
/// until it pauses for approval; the dashboard serving its state.
pub async fn paused() -> Paused {
    paused_on(ForgeKind::GitHub).await
}

/// [`paused`] with the demo served as `forge` (on GitLab with GitLab's
/// suggestion syntax, `Scenario::into_gitlab`).
pub async fn paused_on(forge: ForgeKind) -> Paused {
    let scenario = match forge {
        ForgeKind::GitHub => demo(),
        ForgeKind::GitLab => demo().into_gitlab().expect("the demo on GitLab"),
    };
    let emu = Emulator::start(scenario, "127.0.0.1:0".parse().unwrap())
        .await
        .expect("emulator starts");
    emu.wait_idle(Duration::from_secs(20)).await;
    emu.act(Act::Review {
        user: "reviewer".into(),
        pr: Some(PR),
        event: Some("COMMENT".into()),
        body: None,
        threads: vec![ActThread::new("src/auth/login.sh", 2, MARKUP)],
    })
    .await
    .unwrap();
    let state = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let api_url = match forge {
        ForgeKind::GitHub => emu.api_url(),
        ForgeKind::GitLab => emu.gitlab_api_url(),
    };
    let factory = EngineFactory {
        kind: forge,
        api_url: api_url.clone(),
        state: StateDir::at(state.path()),
        home: home.path().to_owned(),
    };
    let spec = RunSpec {
        target: crate::demo::target_on(forge),
        git_url: emu.git_url("demo", "authkit"),
        api_url: Some(api_url),
        layers: vec![ConfigLayer::user("test config", CONFIG)],
        repo_config: shepherd_engine::RepoConfigSource::BaseBranch,
    };
    let outcome = factory.engine().start(spec).await.expect("the run starts");
    assert_eq!(outcome.status, RunStatus::Paused, "{:?}", outcome.reason);
    let resumer = Arc::new(InProcess {
        factory: factory.clone(),
        handle: tokio::runtime::Handle::current(),
        started: Mutex::default(),
    });
    let server = Server::start(ServeConfig {
        state: StateDir::at(state.path()),
        listen: "127.0.0.1:0".parse().unwrap(),
        resumer: resumer.clone(),
        approver: "tester".into(),
    })
    .await
    .expect("the dashboard starts");
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    Paused {
        emu,
        state,
        home,
        run_id: outcome.run_id,
        server,
        resumer,
        client,
    }
}

impl Paused {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server.base_url())
    }

    /// The session cookie the printed URL sets.
    pub fn cookie(&self) -> String {
        format!("{}={}", self.server.cookie_name(), self.server.secret())
    }

    /// GET `path` with the session cookie.
    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client
            .get(self.url(path))
            .header("cookie", self.cookie())
            .send()
            .await
            .unwrap()
    }

    /// GET `path` with the session cookie: the status and body.
    pub async fn page(&self, path: &str) -> (u16, String) {
        let r = self.get(path).await;
        (r.status().as_u16(), r.text().await.unwrap())
    }

    /// POST a form to `path` with the session cookie and the form's secret.
    pub async fn post(&self, path: &str, fields: &[(&str, &str)]) -> reqwest::Response {
        let mut form: Vec<(&str, &str)> = vec![("csrf", self.server.secret())];
        form.extend_from_slice(fields);
        self.client
            .post(self.url(path))
            .header("cookie", self.cookie())
            .header("origin", self.server.base_url())
            .form(&form)
            .send()
            .await
            .unwrap()
    }

    pub fn state_dir(&self) -> StateDir {
        StateDir::at(self.state.path())
    }

    pub fn pr(&self) -> Value {
        crate::demo::pr_state(&self.emu)
    }

    /// The PR's threads in the emulator's state.
    pub fn threads(&self) -> Vec<Value> {
        crate::demo::threads_state(&self.emu)
    }

    /// The id (node id) of the thread whose first comment contains `text`.
    pub fn thread_with(&self, text: &str) -> String {
        self.threads()
            .iter()
            .find(|t| {
                t["comments"][0]["body"]
                    .as_str()
                    .is_some_and(|b| b.contains(text))
            })
            .and_then(|t| t["id"].as_str().map(str::to_owned))
            .unwrap_or_else(|| panic!("no thread says {text:?}"))
    }

    /// The bodies of the comments of thread `id`.
    pub fn comments_of(&self, id: &str) -> Vec<String> {
        self.threads()
            .iter()
            .find(|t| t["id"] == id)
            .and_then(|t| t["comments"].as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|c| c["body"].as_str().map(str::to_owned))
            .collect()
    }

    pub fn resolved(&self, id: &str) -> bool {
        self.threads()
            .iter()
            .find(|t| t["id"] == id)
            .is_some_and(|t| t["resolved"] == true)
    }

    /// Every comment body on the PR: its threads' and its top-level ones.
    pub fn bodies(&self) -> Vec<String> {
        let pr = self.pr();
        let threads = pr["threads"].as_array().cloned().unwrap_or_default();
        let comments = threads
            .iter()
            .flat_map(|t| t["comments"].as_array().cloned().unwrap_or_default());
        let top = pr["issue_comments"].as_array().cloned().unwrap_or_default();
        comments
            .chain(top)
            .filter_map(|c| c["body"].as_str().map(str::to_owned))
            .collect()
    }

    /// Every comment body on the PR with Shepherd's marker.
    pub fn marker_replies(&self) -> usize {
        self.bodies()
            .iter()
            .filter(|b| b.contains("shepherd:reply"))
            .count()
    }

    /// The approvals of the paused round, as stored.
    pub fn approvals(&self) -> Vec<shepherd_engine::Approval> {
        let store = shepherd_engine::Store::open_in(&self.state_dir()).unwrap();
        let file = shepherd_engine::load_run_file(&self.state_dir(), &self.run_id).unwrap();
        store.approvals(&self.run_id, file.round).unwrap()
    }

    /// The item ids of the paused round's reply-only items (pending).
    pub fn pending(&self) -> Vec<String> {
        self.approvals()
            .into_iter()
            .filter(|a| a.state == shepherd_engine::ApprovalState::Pending)
            .map(|a| a.item_id)
            .collect()
    }
}
