//! Shared fixtures: tasks, scripts for the fake agent, process checks.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;
use shepherd_agent::{
    CliConfig, CliProvider, CommandAgent, CommandConfig, PrContext, Prompts, TaskItem, TriageTask,
};
use shepherd_core::model::{
    Author, AuthorKind, Comment, ForgeKind, ReviewThread, TopLevelComment, TopLevelKind,
};

mod real_cli;
pub use real_cli::*;

pub const FAKE_AGENT: &str = env!("CARGO_BIN_EXE_fake-agent");

pub fn pr() -> PrContext {
    PrContext {
        forge: ForgeKind::GitHub,
        number: 42,
        title: "Add login throttling".into(),
        url: "https://github.com/acme/web/pull/42".into(),
        head_sha: "0123456789abcdef0123456789abcdef01234567".into(),
        base_ref: "main".into(),
    }
}

pub use shepherd_core::testing::comment;

/// Fails unless less than `limit` passed since `started`.
#[track_caller]
pub fn assert_within(started: Instant, limit: Duration) {
    let took = started.elapsed();
    assert!(took < limit, "took {took:?}, more than {limit:?}");
}

/// Fails unless `err` is a timeout of `kind`.
#[track_caller]
pub fn assert_timeout(err: &shepherd_agent::AgentError, kind: shepherd_agent::exec::TimeoutKind) {
    assert!(
        matches!(err, shepherd_agent::AgentError::Timeout { kind: k, .. } if *k == kind),
        "{err:?}"
    );
}

pub fn thread(
    id: &str,
    path: &str,
    start: Option<u32>,
    line: u32,
    comments: Vec<Comment>,
) -> ReviewThread {
    shepherd_core::testing::thread(id)
        .path(path)
        .range(start, line)
        .comments(comments)
        .build()
}

pub fn top_level(id: &str, kind: TopLevelKind, body: &str) -> TopLevelComment {
    TopLevelComment {
        id: id.into(),
        database_id: Some(9),
        kind,
        author: Some(Author {
            login: "carol".into(),
            kind: AuthorKind::User,
        }),
        body: body.into(),
        url: String::new(),
        created_at: "2024-05-01T11:00:00Z".into(),
        review_state: None,
    }
}

/// Two plain threads, for tests that only need ids.
pub fn simple_items() -> Vec<TaskItem> {
    vec![
        TaskItem::from_thread(
            &thread(
                "T1",
                "src/a.rs",
                None,
                1,
                vec![comment("C1", "alice", "rename this").build()],
            ),
            "shepherd",
        ),
        TaskItem::from_thread(
            &thread(
                "T2",
                "src/b.rs",
                None,
                2,
                vec![comment("C2", "bot", "check the error")
                    .kind(AuthorKind::Bot)
                    .build()],
            ),
            "shepherd",
        ),
    ]
}

pub fn triage_task(worktree: &Path) -> TriageTask {
    TriageTask {
        pr: pr(),
        worktree: worktree.to_owned(),
        items: simple_items(),
    }
}

/// A temporary directory holding a worktree and a scratch area.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("wt/src")).unwrap();
        std::fs::create_dir_all(dir.path().join("scratch")).unwrap();
        std::fs::create_dir_all(dir.path().join("transcripts")).unwrap();
        Sandbox { dir }
    }

    pub fn worktree(&self) -> PathBuf {
        self.dir.path().join("wt")
    }

    pub fn scratch(&self, name: &str) -> PathBuf {
        self.dir.path().join("scratch").join(name)
    }

    pub fn transcripts(&self) -> PathBuf {
        self.dir.path().join("transcripts")
    }

    /// A command agent running the fake agent with `script`.
    pub fn agent(&self, script: Value, tweak: impl FnOnce(&mut CommandConfig)) -> CommandAgent {
        let path = self.scratch("script.json");
        std::fs::write(&path, serde_json::to_vec_pretty(&script).unwrap()).unwrap();
        let mut config = CommandConfig::new(FAKE_AGENT);
        config.args = vec!["--script".into(), path.display().to_string()];
        config.total_timeout = Duration::from_secs(20);
        config.idle_timeout = Duration::from_secs(20);
        config.kill_grace = Duration::from_millis(500);
        tweak(&mut config);
        CommandAgent::new(config, Prompts::builtin())
    }
}

/// Whether `pid` is a live process (a zombie counts as dead).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesized command name.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z') && !rest.starts_with('X')),
        Err(_) => false,
    }
}

/// Waits up to two seconds for `pid` to die; whether it did.
pub fn dies(pid: u32) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(2) {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Reads a pid file, waiting up to five seconds for it to appear.
pub fn read_pid(path: &Path) -> u32 {
    let start = Instant::now();
    loop {
        if let Ok(s) = std::fs::read_to_string(path) {
            if let Ok(pid) = s.trim().parse() {
                return pid;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "no pid in {}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_slice(
        &std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

/// The installed (pinned) `provider` CLI, run with `parent` as Shepherd's
/// environment and the timeouts of the real-CLI tests: two minutes in all,
/// a minute idle or without progress.
pub fn real_cli_config(provider: CliProvider, parent: Vec<(OsString, OsString)>) -> CliConfig {
    let mut config = CliConfig::new(provider);
    config.program = shepherd_model_server::clis::installed_cli(provider.name());
    config.env.parent = Some(parent);
    config.total_timeout = Duration::from_secs(120);
    config.idle_timeout = Duration::from_secs(60);
    config.no_progress_timeout = Duration::from_secs(60);
    config.kill_grace = Duration::from_millis(500);
    config
}
