//! python-gitlab's command-line client, `gitlab` (8.6.0, from the same
//! pinned virtual environment as the library), unchanged, against the
//! emulator: the commands a GitLab user scripts a review with, each one's
//! JSON output (`-o json`) checked against the emulator's state.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;
use shepherd_emulator::{EmulatedForge, RunningEmulator};

use crate::scenario::{names, start, ALICE};
use crate::tools;

/// The emulator and the `gitlab` command, with a home of its own (no
/// user configuration file is read).
struct Cli {
    emu: RunningEmulator,
    gitlab: PathBuf,
    home: tempfile::TempDir,
    project: String,
}

impl Cli {
    async fn start() -> Cli {
        let gitlab = tools::python().with_file_name("gitlab");
        assert!(gitlab.exists(), "no {}", gitlab.display());
        let emu = start(EmulatedForge::GitLab).await;
        let project = emu.gitlab_project_id().to_string();
        Cli {
            emu,
            gitlab,
            home: tempfile::tempdir().unwrap(),
            project,
        }
    }

    /// `gitlab -o json ARGS` as alice (the server and token from the
    /// environment, as `GITLAB_URL` and `GITLAB_PRIVATE_TOKEN`).
    async fn run(&self, args: &[&str]) -> Output {
        let mut command = Command::new(&self.gitlab);
        command
            .args(["-o", "json"])
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("GITLAB_URL", self.emu.web_url())
            .env("GITLAB_PRIVATE_TOKEN", ALICE)
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("PYTHONDONTWRITEBYTECODE", "1");
        tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap()
    }

    /// `gitlab -o json ARGS`, which must succeed; its stdout.
    async fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args).await;
        assert!(
            out.status.success(),
            "gitlab {args:?} failed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `gitlab -o json ARGS` printing JSON; the JSON.
    async fn json(&self, args: &[&str]) -> Value {
        let out = self.ok(args).await;
        serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("gitlab {args:?}: not JSON ({e}): {out}"))
    }

    /// `gitlab -o json OBJECT ACTION --project-id ID --iid 1 ARGS` for the
    /// merge request.
    async fn mr(&self, action: &str, args: &[&str]) -> Value {
        let mut all = vec![
            "project-merge-request",
            action,
            "--project-id",
            &self.project,
            "--iid",
            "1",
        ];
        all.extend_from_slice(args);
        self.json(&all).await
    }

    /// `gitlab -o json OBJECT ACTION --project-id ID --mr-iid 1 ARGS`, for
    /// the merge request's sub-objects.
    async fn of_mr(&self, object: &str, action: &str, args: &[&str]) -> Value {
        let mut all = vec![
            object,
            action,
            "--project-id",
            &self.project,
            "--mr-iid",
            "1",
        ];
        all.extend_from_slice(args);
        self.json(&all).await
    }
}

#[tokio::test]
async fn gitlab_cli_reads_a_merge_requests_diff_commits_and_participants() {
    let cli = Cli::start().await;
    let head = cli.emu.head_sha(1).unwrap();
    let mr = cli.mr("get", &[]).await;
    assert_eq!(
        (mr["iid"].as_u64(), mr["sha"].as_str()),
        (Some(1), Some(head.as_str()))
    );

    let changes = cli.mr("changes", &[]).await;
    assert_eq!(
        names(&changes["changes"], "/new_path"),
        ["README.md", "src/lib.rs"]
    );
    let versions = cli.of_mr("project-merge-request-diff", "list", &[]).await;
    assert_eq!(names(&versions, "/head_commit_sha"), [head.as_str()]);
    let version_id = versions[0]["id"].to_string();
    let version = cli
        .of_mr("project-merge-request-diff", "get", &["--id", &version_id])
        .await;
    assert_eq!(
        names(&version["diffs"], "/new_path"),
        ["README.md", "src/lib.rs"]
    );
    let commits = cli.mr("commits", &[]).await;
    assert_eq!(names(&commits, "/id"), [head.as_str()]);
    let participants = cli.mr("participants", &[]).await;
    assert_eq!(
        names(&participants, "/username"),
        ["alice", "bob", "review-bot"]
    );
}

#[tokio::test]
async fn gitlab_cli_approves_opens_threads_and_marks_a_draft() {
    let cli = Cli::start().await;
    let approvals = cli
        .of_mr("project-merge-request-approval", "get", &[])
        .await;
    assert_eq!(approvals["approved"], false, "{approvals}");
    let head = cli.emu.head_sha(1).unwrap();
    let approved = cli.mr("approve", &["--sha", &head]).await;
    assert_eq!(names(&approved["approved_by"], "/user/username"), ["alice"]);
    // python-gitlab prints nothing for an unapproval.
    cli.ok(&[
        "project-merge-request",
        "unapprove",
        "--project-id",
        &cli.project,
        "--iid",
        "1",
    ])
    .await;
    let approvals = cli
        .of_mr("project-merge-request-approval", "get", &[])
        .await;
    assert_eq!(approvals["approved_by"], Value::Array(Vec::new()));

    let discussion = cli
        .of_mr(
            "project-merge-request-discussion",
            "create",
            &["--body", "from the gitlab CLI"],
        )
        .await;
    assert_eq!(discussion["individual_note"], false, "{discussion}");
    assert_eq!(discussion["notes"][0]["type"], "DiscussionNote");
    let state = cli.emu.state_json();
    let threads = state["pull_requests"][0]["threads"].as_array().unwrap();
    let last = threads.last().unwrap();
    assert_eq!(last["comments"][0]["body"], "from the gitlab CLI");

    cli.mr("update", &["--title", "Draft: Add widgets"]).await;
    let mr = cli.mr("get", &[]).await;
    assert_eq!(
        (&mr["draft"], &mr["work_in_progress"]),
        (&Value::Bool(true), &Value::Bool(true))
    );
    cli.mr("update", &["--title", "Add widgets"]).await;
    assert_eq!(cli.mr("get", &[]).await["draft"], false);
}

#[tokio::test]
async fn gitlab_cli_reads_a_trace_and_retries_a_pipeline() {
    let cli = Cli::start().await;
    let mr = cli.mr("get", &[]).await;
    let pipeline = mr["head_pipeline"]["id"].to_string();
    let jobs = cli
        .json(&[
            "project-pipeline-job",
            "list",
            "--project-id",
            &cli.project,
            "--pipeline-id",
            &pipeline,
        ])
        .await;
    let lint = jobs
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["name"] == "lint")
        .map(|j| j["id"].to_string())
        .unwrap();
    let trace = cli
        .ok(&[
            "project-job",
            "trace",
            "--project-id",
            &cli.project,
            "--id",
            &lint,
        ])
        .await;
    assert!(trace.contains("ERROR: Job failed: exit code 1"), "{trace}");

    let retried = cli
        .json(&[
            "project-pipeline",
            "retry",
            "--project-id",
            &cli.project,
            "--id",
            &pipeline,
        ])
        .await;
    assert_eq!(retried["id"].to_string(), pipeline, "{retried}");
    assert!(
        cli.emu.wait_idle(std::time::Duration::from_secs(60)).await,
        "CI settles"
    );
    let all = cli.emu.state_json()["ci"]["workflow_runs"][0]["jobs"].clone();
    assert_eq!(
        names(&all, "/name")
            .iter()
            .filter(|n| **n == "lint")
            .count(),
        2,
        "{all}"
    );
}
