//! Helpers shared by the integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};
use shepherd_emulator::{
    EmulatedForge, Emulator, IssueCommentSpec, Permission, RunningEmulator, Scenario,
    ThreadCommentSpec, ThreadSpec, UserKind, UserSpec,
};

pub use crate::widgets::{ALICE, BOB, BOT, READER};
pub const STRANGER: &str = "tok-stranger";

/// A scenario with `threads` threads on `src/lib.rs`; thread 0 has
/// `first_thread_comments` comments, the others two (bob, then the bot).
/// The widgets repository (`tests/support/widgets.rs`) and a stranger.
pub fn scenario(threads: usize, first_thread_comments: usize) -> Scenario {
    let mut s = crate::widgets::widgets("acme", "# widgets\n");
    s.users.push(UserSpec::new(
        "stranger",
        STRANGER,
        UserKind::User,
        Permission::None,
    ));
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

/// A clone made by the real git, in a temp dir that lives as long as it
/// does. Blocking: use it off the async runtime (`spawn_blocking`).
pub struct Checkout {
    pub git: GitClient,
    /// The clone's work tree.
    pub repo: PathBuf,
    _work: tempfile::TempDir,
}

impl Checkout {
    /// `git clone --quiet [--branch BRANCH] URL`, asserted to succeed.
    pub fn of(url: &str, branch: Option<&str>) -> Self {
        let git = GitClient::new();
        let work = tempfile::tempdir().unwrap();
        let mut args = vec!["clone", "--quiet"];
        if let Some(branch) = branch {
            args.extend(["--branch", branch]);
        }
        args.extend([url, "repo"]);
        git.ok(work.path(), &args);
        let repo = work.path().join("repo");
        Checkout {
            git,
            repo,
            _work: work,
        }
    }

    /// `git ARGS` in the clone, asserted to succeed; trimmed stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        self.git.ok(&self.repo, args)
    }

    /// `git ARGS` in the clone, whatever its exit.
    pub fn run(&self, args: &[&str]) -> Output {
        self.git.run(&self.repo, args)
    }

    /// The clone's `HEAD` commit.
    pub fn head(&self) -> String {
        self.ok(&["rev-parse", "HEAD"])
    }
}

/// The head of a fresh clone of `branch` from `url` (run off the runtime).
pub async fn cloned_head(url: String, branch: &str) -> String {
    let branch = branch.to_owned();
    tokio::task::spawn_blocking(move || Checkout::of(&url, Some(&branch)).head())
        .await
        .unwrap()
}

/// Asserts a git command succeeded; its stderr is the message.
#[track_caller]
pub fn assert_git_ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `git --git-dir REPO ARGS` on the emulator's bare repository, asserted
/// to succeed; trimmed stdout.
pub fn emulator_git(emu: &RunningEmulator, args: &[&str]) -> String {
    let repo = emu.repository_path();
    let git_dir = repo.to_str().unwrap().to_owned();
    let mut all = vec!["--git-dir", git_dir.as_str()];
    all.extend_from_slice(args);
    GitClient::new().ok(&repo, &all)
}

/// The file at `commit` in the emulator's repository.
pub fn file_at(emu: &RunningEmulator, commit: &str, path: &str) -> String {
    let git = GitClient::new();
    let repo = emu.repository_path();
    let out = git.run(
        &repo,
        &[
            "--git-dir",
            repo.to_str().unwrap(),
            "show",
            &format!("{commit}:{path}"),
        ],
    );
    assert!(out.status.success(), "{path} at {commit}");
    String::from_utf8(out.stdout).unwrap()
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

/// Sends a REST request with an optional JSON body; returns the status, the
/// headers and the JSON body (`null` when empty or not JSON).
pub async fn rest(
    method: reqwest::Method,
    url: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut request = client()
        .request(method, url)
        .header("accept", "application/vnd.github+json");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    let value = serde_json::from_str(&text).unwrap_or(Value::Null);
    (status, headers, value)
}

/// `POST {api}{path}` with a JSON body.
pub async fn rest_post(
    emu: &RunningEmulator,
    path: &str,
    token: &str,
    body: Value,
) -> (u16, Value) {
    let (status, _, value) = rest(
        reqwest::Method::POST,
        &format!("{}{path}", emu.api_url()),
        Some(token),
        Some(body),
    )
    .await;
    (status, value)
}

/// The control API: `METHOD /_emulator/{path}` with an optional body.
pub async fn control(
    emu: &RunningEmulator,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let (status, _, value) = rest(
        method,
        &format!("{}/_emulator/{path}", emu.api_url()),
        None,
        body,
    )
    .await;
    (status, value)
}

/// Waits (at most 20 s) until CI and bots are idle.
pub async fn idle(emu: &RunningEmulator) {
    assert!(
        emu.wait_idle(std::time::Duration::from_secs(20)).await,
        "the emulator did not become idle"
    );
}

/// dev's push of `files` (a path to its contents, `None` to delete it) on
/// the demo's `feature/login` with `message`, and everything it set off
/// (CI, bots) done: the new head.
pub async fn demo_push(
    emu: &RunningEmulator,
    files: std::collections::BTreeMap<String, Option<String>>,
    message: &str,
) -> String {
    let sha = emu
        .act_push("dev", "feature/login", files, message)
        .await
        .unwrap();
    idle(emu).await;
    sha
}

/// The PR's review threads as `viewer` sees them (first 100, comments 100).
pub async fn threads(emu: &RunningEmulator, token: &str) -> Vec<Value> {
    let body = graphql(
        emu,
        token,
        r#"query Threads { repository(owner: "acme", name: "widgets") { pullRequest(number: 1) {
            reviewThreads(first: 100) { nodes { id isResolved isOutdated path line startLine originalLine
              comments(first: 100) { totalCount nodes { id databaseId body author { __typename login }
                pullRequestReview { state } } } } } } } }"#,
        json!({}),
    )
    .await;
    assert!(body.get("errors").is_none(), "{body}");
    body["data"]["repository"]["pullRequest"]["reviewThreads"]["nodes"]
        .as_array()
        .unwrap()
        .clone()
}

/// The database id of the first comment of thread `index` (as alice sees it).
pub fn root_comment_id(emu: &RunningEmulator, index: usize) -> u64 {
    emu.state_json()["pull_requests"][0]["threads"][index]["comments"][0]["database_id"]
        .as_u64()
        .unwrap()
}

/// The node id of thread `index`.
pub fn thread_node_id(emu: &RunningEmulator, index: usize) -> String {
    emu.state_json()["pull_requests"][0]["threads"][index]["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Clones the PR head with the real git, lets `edit` change the work tree,
/// commits everything and pushes to the head branch as `token`. Returns the
/// pushed commit. Runs off the async runtime (git blocks).
pub async fn git_push(
    emu: &RunningEmulator,
    token: &str,
    branch: &str,
    edit: impl FnOnce(&Path) + Send + 'static,
) -> String {
    git_push_to(authed_git_url(emu, token), branch, edit).await
}

/// [`git_push`] to any (authenticated) git URL.
pub async fn git_push_to(
    url: String,
    branch: &str,
    edit: impl FnOnce(&Path) + Send + 'static,
) -> String {
    let branch = branch.to_owned();
    tokio::task::spawn_blocking(move || {
        let clone = Checkout::of(&url, Some(&branch));
        edit(&clone.repo);
        clone.ok(&["add", "--all"]);
        clone.ok(&["commit", "--quiet", "--allow-empty", "-m", "change"]);
        let sha = clone.head();
        clone.ok(&["push", "--quiet", "origin", &format!("HEAD:{branch}")]);
        sha
    })
    .await
    .unwrap()
}

/// Replaces the file's lines with `lines` (1-based line numbers in the
/// result are what the caller expects).
pub fn write_lines(path: &Path, lines: &[String]) {
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(path, text).unwrap();
}

/// The file's lines.
pub fn read_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The latest check runs of `sha`, as `(name, status, conclusion)`.
pub async fn check_runs(emu: &RunningEmulator, sha: &str) -> Vec<(String, String, Value)> {
    let (status, runs) = rest_get(
        &emu.api_url(),
        &format!("/repos/acme/widgets/commits/{sha}/check-runs"),
        Some(ALICE),
    )
    .await;
    assert_eq!(status, 200, "{runs}");
    runs["check_runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_owned(),
                r["status"].as_str().unwrap().to_owned(),
                r["conclusion"].clone(),
            )
        })
        .collect()
}

/// The GitLab scenario's project, URL-encoded as one path segment.
pub const GL_PROJECT: &str = "acme%2Ftools%2Fwidgets";

/// [`scenario`] served as GitLab, in the nested group `acme/tools`.
pub fn gitlab_scenario(threads: usize, first_thread_comments: usize) -> Scenario {
    let mut s = scenario(threads, first_thread_comments);
    s.forge = EmulatedForge::GitLab;
    s.repository.owner = "acme/tools".into();
    s
}

/// `METHOD {gitlab api}{path}` with `Authorization: Bearer TOKEN`; the
/// status, headers and JSON body (`null` when not JSON).
pub async fn gl(
    emu: &RunningEmulator,
    method: reqwest::Method,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (u16, reqwest::header::HeaderMap, Value) {
    rest(
        method,
        &format!("{}{path}", emu.gitlab_api_url()),
        token,
        body,
    )
    .await
}

/// `GET {gitlab api}{path}`, asserting 200; the body.
pub async fn gl_get(emu: &RunningEmulator, path: &str, token: &str) -> Value {
    let (status, _, body) = gl(emu, reqwest::Method::GET, path, Some(token), None).await;
    assert_eq!(status, 200, "GET {path}: {body}");
    body
}

/// The path of merge request 1 of the GitLab scenario, plus `tail`.
pub fn mr_path(tail: &str) -> String {
    format!("/projects/{GL_PROJECT}/merge_requests/1{tail}")
}

/// Every discussion of merge request 1, as `token` sees them.
pub async fn gl_discussions(emu: &RunningEmulator, token: &str) -> Vec<Value> {
    let body = gl_get(emu, &mr_path("/discussions?per_page=100"), token).await;
    body.as_array().unwrap().clone()
}

/// The resolvable discussions (threads) of merge request 1.
pub async fn gl_threads(emu: &RunningEmulator, token: &str) -> Vec<Value> {
    gl_discussions(emu, token)
        .await
        .into_iter()
        .filter(|d| d["individual_note"] == false)
        .collect()
}

/// `http://oauth2:TOKEN@host/acme/tools/widgets.git`.
pub fn gitlab_git_url(emu: &RunningEmulator, user: &str, token: &str) -> String {
    emu.git_url("acme/tools", "widgets")
        .replacen("http://", &format!("http://{user}:{token}@"), 1)
}
