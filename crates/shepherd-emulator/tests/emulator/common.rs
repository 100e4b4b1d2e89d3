//! Helpers shared by the integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};
use shepherd_emulator::{
    Emulator, FileSpec, IssueCommentSpec, Permission, PullRequestSpec, RepositorySpec,
    RunningEmulator, Scenario, ThreadCommentSpec, ThreadSpec, UserKind, UserSpec,
};

pub const ALICE: &str = "tok-alice";
pub const BOB: &str = "tok-bob";
pub const BOT: &str = "tok-bot";
pub const READER: &str = "tok-reader";
pub const STRANGER: &str = "tok-stranger";

/// A scenario with `threads` threads on `src/lib.rs`; thread 0 has
/// `first_thread_comments` comments, the others two (bob, then the bot).
pub fn scenario(threads: usize, first_thread_comments: usize) -> Scenario {
    let mut s = Scenario::new(
        RepositorySpec::new("acme", "widgets"),
        PullRequestSpec::new(1, "Add widgets", "alice", "feature/widgets", "main"),
    );
    s.users = vec![
        UserSpec::new("alice", ALICE, UserKind::User, Permission::Write),
        UserSpec::new("bob", BOB, UserKind::User, Permission::Admin),
        UserSpec::new("review-bot", BOT, UserKind::Bot, Permission::Write),
        UserSpec::new("reader", READER, UserKind::User, Permission::Read),
        UserSpec::new("stranger", STRANGER, UserKind::User, Permission::None),
    ];
    let lines: String = (1..=300).map(|i| format!("line {i}\n")).collect();
    s.base.insert(
        "src/lib.rs".into(),
        FileSpec::text(lines.replace("line 5\n", "")),
    );
    s.head.insert("src/lib.rs".into(), FileSpec::text(lines));
    s.base
        .insert("README.md".into(), FileSpec::text("# widgets\n"));
    s.head
        .insert("README.md".into(), FileSpec::text("# widgets\n"));
    for t in 0..threads {
        let count = if t == 0 { first_thread_comments } else { 2 };
        let comments = (0..count)
            .map(|c| {
                let author = if c % 2 == 0 { "bob" } else { "review-bot" };
                ThreadCommentSpec::new(author, format!("thread {t} comment {c}"))
            })
            .collect();
        s.threads.push(ThreadSpec::new(
            "src/lib.rs",
            (t % 300 + 1) as u32,
            comments,
        ));
    }
    s.comments.push(IssueCommentSpec::new("bob", "top-level"));
    s
}

pub async fn start(scenario: Scenario) -> RunningEmulator {
    Emulator::start(scenario, "127.0.0.1:0".parse().unwrap())
        .await
        .expect("emulator starts")
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// POSTs a GraphQL request; returns the status and the JSON body.
pub async fn graphql_at(
    url: &str,
    token: Option<&str>,
    query: &str,
    variables: Value,
) -> (u16, Value) {
    let mut request = client()
        .post(url)
        .json(&json!({ "query": query, "variables": variables }));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

pub async fn graphql(emu: &RunningEmulator, token: &str, query: &str, variables: Value) -> Value {
    let (status, body) = graphql_at(&emu.graphql_url(), Some(token), query, variables).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// GETs a REST path under `root`; returns the status and the JSON body.
pub async fn rest_get(root: &str, path: &str, token: Option<&str>) -> (u16, Value) {
    let mut request = client()
        .get(format!("{root}{path}"))
        .header("accept", "application/vnd.github+json");
    if let Some(token) = token {
        request = request.header("authorization", format!("token {token}"));
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

pub fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/scenarios")
}

/// A sealed git environment for client-side git in tests.
pub struct GitClient {
    pub home: tempfile::TempDir,
}

impl GitClient {
    pub fn new() -> Self {
        GitClient {
            home: tempfile::tempdir().unwrap(),
        }
    }

    pub fn command(&self, cwd: &Path) -> Command {
        let mut cmd = Command::new("git");
        cmd.current_dir(cwd)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", self.home.path().join(".gitconfig"))
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_AUTHOR_NAME", "Test")
            .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
            .env("GIT_COMMITTER_NAME", "Test")
            .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
            .env("LC_ALL", "C")
            .stdin(Stdio::null());
        cmd
    }

    pub fn run(&self, cwd: &Path, args: &[&str]) -> Output {
        self.command(cwd).args(args).output().unwrap()
    }

    /// Runs and asserts success; returns trimmed stdout.
    pub fn ok(&self, cwd: &Path, args: &[&str]) -> String {
        let out = self.run(cwd, args);
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }
}

/// `http://x-access-token:TOKEN@host:port/owner/repo.git`.
pub fn authed_git_url(emu: &RunningEmulator, token: &str) -> String {
    emu.git_url("acme", "widgets").replacen(
        "http://",
        &format!("http://x-access-token:{token}@"),
        1,
    )
}

pub async fn head_ref_oid(emu: &RunningEmulator, token: &str) -> String {
    let body = graphql(
        emu,
        token,
        "query Head { repository(owner: \"acme\", name: \"widgets\") { pullRequest(number: 1) { headRefOid } } }",
        json!({}),
    )
    .await;
    body["data"]["repository"]["pullRequest"]["headRefOid"]
        .as_str()
        .unwrap()
        .to_owned()
}
