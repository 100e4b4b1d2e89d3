//! Helpers shared by the end-to-end tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use shepherd_core::RepoRef;
use shepherd_emulator::{
    Emulator, FileSpec, IssueCommentSpec, Permission, PullRequestSpec, RepositorySpec,
    RunningEmulator, Scenario, ThreadCommentSpec, ThreadSpec, UserKind, UserSpec,
};
use shepherd_forge::{ClientConfig, GitHubClient, GitHubEndpoints, RetryPolicy, Token};

pub const AUTHOR: &str = "tok-author";
pub const REVIEWER: &str = "tok-reviewer";
pub const BOT: &str = "tok-bot";

/// A scenario with `threads` threads on `src/lib.rs`; the first has
/// `first_thread_comments` comments, the others one each.
pub fn scenario(threads: usize, first_thread_comments: usize) -> Scenario {
    let mut s = Scenario::new(
        RepositorySpec::new("acme", "widgets"),
        PullRequestSpec::new(7, "Add widgets", "author", "feature/widgets", "main"),
    );
    s.users = vec![
        UserSpec::new("author", AUTHOR, UserKind::User, Permission::Write),
        UserSpec::new("reviewer", REVIEWER, UserKind::User, Permission::Admin),
        UserSpec::new("review-bot", BOT, UserKind::Bot, Permission::Write),
    ];
    let lines: String = (1..=400).map(|i| format!("fn f{i}() {{}}\n")).collect();
    s.base
        .insert("src/lib.rs".into(), FileSpec::text("// empty\n"));
    s.head.insert("src/lib.rs".into(), FileSpec::text(lines));
    for t in 0..threads {
        let count = if t == 0 { first_thread_comments } else { 1 };
        let comments = (0..count)
            .map(|c| {
                let author = if c % 2 == 0 { "reviewer" } else { "review-bot" };
                ThreadCommentSpec::new(author, format!("thread {t}, comment {c}"))
            })
            .collect();
        s.threads.push(ThreadSpec::new(
            "src/lib.rs",
            (t % 400 + 1) as u32,
            comments,
        ));
    }
    s.comments.push(IssueCommentSpec::new(
        "reviewer",
        "Please add a changelog entry.",
    ));
    s
}

pub async fn start(scenario: Scenario) -> RunningEmulator {
    Emulator::start(scenario, "127.0.0.1:0".parse().expect("address"))
        .await
        .expect("emulator starts")
}

pub fn repo() -> RepoRef {
    RepoRef {
        host: "github.com".into(),
        owner: "acme".into(),
        name: "widgets".into(),
    }
}

/// A client of the emulator at `api_url`, with fast retries.
pub fn client(api_url: &str, token: &str) -> GitHubClient {
    let endpoints = GitHubEndpoints::from_api_url(api_url).expect("endpoints");
    let config = ClientConfig {
        retry: RetryPolicy::none(),
        ..ClientConfig::default()
    };
    GitHubClient::with_config(repo(), endpoints, Token::new(token), config).expect("client")
}

/// The `shepherd` binary in a sealed environment: no inherited tokens, a temp
/// HOME and working directory outside any git repository.
pub struct Shepherd {
    pub home: tempfile::TempDir,
}

impl Shepherd {
    pub fn new() -> Self {
        Shepherd {
            home: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn cwd(&self) -> &Path {
        self.home.path()
    }

    pub fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_shepherd"));
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("NO_COLOR", "1")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .current_dir(self.home.path())
            .stdin(Stdio::null());
        cmd
    }

    pub fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = self.command();
        cmd.args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().expect("shepherd runs")
    }
}

pub fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/scenarios")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
