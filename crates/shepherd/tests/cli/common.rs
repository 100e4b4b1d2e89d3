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

/// `host:port` of a URL: the host a run whose `--repo` names none is on
/// when `api_url` points at the emulator.
pub fn host_of(api_url: &str) -> &str {
    let rest = api_url.split_once("://").map_or(api_url, |(_, rest)| rest);
    rest.split('/').next().unwrap_or(rest)
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

    /// `shepherd demo ARGS --state-dir HOME/state`: its output, its stdout
    /// and stderr as text, and that state dir.
    pub fn demo(&self, args: &[&str]) -> (Output, String, String, PathBuf) {
        let state = self.home.path().join("state");
        let mut all = vec!["demo"];
        all.extend_from_slice(args);
        let state_arg = state.display().to_string();
        all.extend(["--state-dir", &state_arg]);
        let out = self.run(&all, &[]);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        (out, stdout, stderr, state)
    }
}

impl Shepherd {
    /// The README's install step, done for a test: the README must give it
    /// (`cargo install --locked --path crates/shepherd`, a path whose
    /// package builds the `shepherd` binary), and the binary this test
    /// built is linked into `HOME/bin` in its place (the release build the
    /// step makes takes minutes). Returns a `PATH` with that directory
    /// first.
    pub fn install(&self) -> std::ffi::OsString {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let readme = std::fs::read_to_string(root.join("README.md")).expect("the README");
        let step = readme
            .lines()
            .find(|l| l.starts_with("cargo install "))
            .expect("the README's install step");
        let args: Vec<&str> = step.split_whitespace().collect();
        assert!(args.contains(&"--locked"), "{step}");
        let path = args
            .iter()
            .position(|a| *a == "--path")
            .and_then(|i| args.get(i + 1))
            .expect("cargo install --path DIR");
        let manifest = std::fs::read_to_string(root.join(path).join("Cargo.toml"))
            .expect("the installed package's manifest");
        assert!(
            manifest.contains("[[bin]]\nname = \"shepherd\""),
            "{path} builds the shepherd binary"
        );
        let first_use = readme.find("shepherd demo").expect("the demo command");
        assert!(
            readme.find(step).expect("the step") < first_use,
            "the install step comes before the first example"
        );
        let bin = self.home.path().join("bin");
        std::fs::create_dir_all(&bin).expect("HOME/bin");
        let link = bin.join("shepherd");
        if !link.exists() {
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_shepherd"), &link)
                .expect("link the binary");
        }
        let mut dirs = vec![bin];
        dirs.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        std::env::join_paths(dirs).expect("a PATH")
    }

    /// `sh -c script` in the sealed environment, with `path` as `PATH` and
    /// `mktemp` creating inside the sealed HOME.
    pub fn shell(&self, path: &std::ffi::OsStr, script: &str) -> Command {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(script)
            .env_clear()
            .env("PATH", path)
            .env("HOME", self.home.path())
            .env("TMPDIR", self.home.path())
            .env("NO_COLOR", "1")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .current_dir(self.home.path())
            .stdin(Stdio::null());
        cmd
    }
}

pub fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/scenarios")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Fails (showing both streams) unless `out` exited with `code`; returns
/// its stdout and stderr as text.
#[track_caller]
pub fn exited(out: &Output, code: i32) -> (String, String) {
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(code), "{stdout}\n{stderr}");
    (stdout, stderr)
}

// ---------------------------------------------------------------------------
// `shepherd run` and friends against the demo scenario.

/// The demo PR author's token: Shepherd runs as this account.
pub const DEV_TOKEN: &str = "emu_dev_token";

/// The user config the run tests use: trust the demo's bot, poll CI every second.
/// `loop.succeed_when_handed_off`: a run that ends `handed-off` (the
/// builtin agent leaves items for a person) exits 0.
pub const SUCCEED_WHEN_HANDED_OFF: &str = "[loop]\nsucceed_when_handed_off = true\n";

/// The exit code of a run that ends `handed-off` (items wait for a person).
pub const HANDED_OFF: i32 = 5;

pub const RUN_CONFIG: &str = "[trust]\nusers = [\"review-bot\"]\n[ci]\npoll_interval_secs = 1\ntimeout_secs = 60\nappear_timeout_secs = 20\n";

/// The demo scenario, running, with its start-up CI settled.
pub async fn start_demo() -> RunningEmulator {
    start_settled(Scenario::demo().expect("the demo scenario")).await
}

/// `scenario`, running, with its start-up CI settled.
pub async fn start_settled(scenario: Scenario) -> RunningEmulator {
    let emu = start(scenario).await;
    emu.wait_idle(std::time::Duration::from_secs(30)).await;
    emu
}

/// The usual start of a `shepherd run` test: a settled emulator, its API
/// URL and a sealed `shepherd`.
pub struct Demo {
    pub emu: RunningEmulator,
    pub api: String,
    pub sh: Shepherd,
}

impl Demo {
    /// The demo scenario (`demo/authkit`, PR 42).
    pub async fn start() -> Self {
        Self::with(Scenario::demo().expect("the demo scenario")).await
    }

    /// `scenario` in place of the demo's.
    pub async fn with(scenario: Scenario) -> Self {
        let emu = start_settled(scenario).await;
        let api = emu.api_url();
        Demo {
            emu,
            api,
            sh: Shepherd::new(),
        }
    }
}

impl Shepherd {
    /// Where `shepherd run` tests keep state (inside the sealed HOME).
    pub fn state_dir(&self) -> PathBuf {
        self.home.path().join("state")
    }

    /// `args` plus the flags that point at the emulator and the state dir,
    /// with the demo author's token and the run test config.
    pub fn run_cmd(&self, api_url: &str, args: &[&str]) -> Command {
        let config = self.home.path().join("shepherd-config.toml");
        std::fs::write(&config, RUN_CONFIG).expect("write the user config");
        let mut cmd = self.command();
        cmd.args(args)
            .env("GITHUB_TOKEN", DEV_TOKEN)
            .env("SHEPHERD_CONFIG", &config)
            .env("SHEPHERD_STATE_DIR", self.state_dir())
            .env("SHEPHERD_API_URL", api_url);
        cmd
    }

    /// Run to completion; `(exit code, stdout, stderr)`.
    pub fn run_at(&self, api_url: &str, args: &[&str]) -> (i32, String, String) {
        run_to_end(self.run_cmd(api_url, args))
    }

    /// `shepherd run 42 --repo demo/authkit --approve APPROVE` and `extra`
    /// (the demo's PR), as [`Self::run_cmd`] makes it.
    pub fn run_pr_cmd(&self, api_url: &str, approve: &str, extra: &[&str]) -> Command {
        let mut args = vec!["run", "42", "--repo", "demo/authkit", "--approve", approve];
        args.extend_from_slice(extra);
        self.run_cmd(api_url, &args)
    }

    /// [`Self::run_pr_cmd`] run to completion on a blocking thread;
    /// `(exit code, stdout, stderr)`.
    pub fn run_pr(&self, api_url: &str, approve: &str, extra: &[&str]) -> (i32, String, String) {
        tokio::task::block_in_place(|| run_to_end(self.run_pr_cmd(api_url, approve, extra)))
    }

    /// The id of the newest run in the state dir.
    pub fn latest_run(&self, api_url: &str) -> String {
        let (code, out, err) = self.run_at(api_url, &["status", "--json"]);
        assert_eq!(code, 0, "{err}");
        let runs: serde_json::Value = serde_json::from_str(&out).expect("status JSON");
        runs[0]["run_id"].as_str().expect("a run").to_owned()
    }
}

/// `cmd` (a `shepherd` command) run to completion; `(exit code, stdout,
/// stderr)`.
fn run_to_end(mut cmd: Command) -> (i32, String, String) {
    let out = cmd.output().expect("shepherd runs");
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

/// Every item Shepherd replied to, once per reply (from the emulator's state).
pub fn shepherd_replies(emu: &RunningEmulator, pr: u64) -> Vec<String> {
    let state = emu.state_json();
    let pr = state["pull_requests"]
        .as_array()
        .and_then(|prs| prs.iter().find(|p| p["number"] == pr))
        .cloned()
        .expect("the PR");
    let mut out = Vec::new();
    let bodies = pr["threads"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| t["comments"].as_array().into_iter().flatten())
        .chain(pr["issue_comments"].as_array().into_iter().flatten());
    for c in bodies {
        if let Some(m) = shepherd_core::Marker::find(c["body"].as_str().unwrap_or("")) {
            out.push(m.item);
        }
    }
    out
}

/// Asserts: every item answered exactly once, every resolved thread's last
/// marker authorizes it.
pub fn assert_honest_end_state(emu: &RunningEmulator, pr: u64, answered: usize) {
    let replies = shepherd_replies(emu, pr);
    let unique: std::collections::BTreeSet<&String> = replies.iter().collect();
    assert_eq!(
        unique.len(),
        replies.len(),
        "an item was replied to twice: {replies:?}"
    );
    assert_eq!(replies.len(), answered, "{replies:?}");
    let state = emu.state_json();
    for thread in state["pull_requests"][0]["threads"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if thread["resolved"] == true {
            let last = thread["comments"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| shepherd_core::Marker::find(c["body"].as_str().unwrap_or("")))
                .next_back();
            assert!(
                last.is_some_and(|m| m.resolve_authorized),
                "thread {} resolved without authorization",
                thread["id"]
            );
        }
    }
}
