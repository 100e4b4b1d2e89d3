//! The GitLab CI template's job (`examples/gitlab/shepherd.gitlab-ci.yml`)
//! run as a shell runner runs it, with a merge request pipeline's
//! variables, against the emulator in GitLab mode and the real binary:
//! it converges, leaves its artifacts, posts the report as a note only
//! when asked, and a second stateless job doubles nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use shepherd_emulator::{RunningEmulator, Scenario};
use yaml_rust2::Yaml;

use crate::common::{
    assert_honest_end_state, shepherd_replies, start_settled, RUN_CONFIG, SUCCEED_WHEN_HANDED_OFF,
};
use crate::fake_runner::{gitlab_job, load_yaml, repo_root, scalar, GitLabJobRun};

/// The demo in GitLab mode (`demo/authkit`, MR !42), running, its start-up
/// CI settled.
async fn start_gitlab_demo() -> RunningEmulator {
    start_settled(gitlab_demo()).await
}

/// The demo scenario in GitLab mode.
fn gitlab_demo() -> Scenario {
    Scenario::demo()
        .and_then(Scenario::into_gitlab)
        .expect("the demo in GitLab mode")
}

/// The shepherd binary's directory (the template installs nothing: it is
/// put on PATH).
fn bin_dir() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_shepherd"))
        .parent()
        .expect("the binary is in a directory")
}

/// A user config in a temp dir of its own: the run tests' config, and every
/// item gets a reply (needs-human too), so each job's replies can be
/// counted: what these tests check is that none is doubled.
struct ReplyAllConfig {
    _home: tempfile::TempDir,
    path: PathBuf,
}

impl ReplyAllConfig {
    fn new() -> Self {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("config.toml");
        std::fs::write(
            &path,
            format!("{RUN_CONFIG}[approve]\nreply_needs_human = true\n{SUCCEED_WHEN_HANDED_OFF}"),
        )
        .unwrap();
        ReplyAllConfig { _home: home, path }
    }
}

/// The GitLab template (`examples/gitlab/shepherd.gitlab-ci.yml`).
fn template() -> Yaml {
    load_yaml(&repo_root().join("examples/gitlab/shepherd.gitlab-ci.yml"))
}

/// The template's `shepherd` job, run with `vars` in a fresh project
/// directory (returned, with the files the job left there).
fn run_job(template: &Yaml, vars: &BTreeMap<String, String>) -> (GitLabJobRun, tempfile::TempDir) {
    let project = tempfile::tempdir().unwrap();
    let job =
        tokio::task::block_in_place(|| gitlab_job(template, "shepherd", project.path(), vars));
    (job, project)
}

/// The predefined variables of a merge request pipeline of MR !42 of the
/// demo project and the project's masked variables and choices (approve
/// `auto`, the user config at `config`).
fn mr_pipeline_vars(emu: &RunningEmulator, config: &Path) -> Vec<(&'static str, String)> {
    let api = emu.gitlab_api_url();
    let server = api.trim_end_matches("/api/v4").to_owned();
    vec![
        ("CI_PIPELINE_SOURCE", "merge_request_event".to_owned()),
        ("CI_MERGE_REQUEST_IID", "42".to_owned()),
        ("CI_MERGE_REQUEST_PROJECT_PATH", "demo/authkit".to_owned()),
        (
            "CI_MERGE_REQUEST_SOURCE_PROJECT_PATH",
            "demo/authkit".to_owned(),
        ),
        ("CI_PROJECT_PATH", "demo/authkit".to_owned()),
        ("CI_PROJECT_ID", emu.gitlab_project_id().to_string()),
        ("CI_SERVER_URL", server),
        ("CI_API_V4_URL", api),
        // Masked CI/CD variables of the project.
        ("GITLAB_TOKEN", "emu_dev_token".to_owned()),
        // The project's choices.
        ("SHEPHERD_APPROVE", "auto".to_owned()),
        ("SHEPHERD_CONFIG_FILE", config.display().to_string()),
    ]
}

/// [`mr_pipeline_vars`] for a shell runner: the builtin agent chosen, and
/// shepherd on PATH.
fn pipeline_vars(emu: &RunningEmulator, config: &Path) -> BTreeMap<String, String> {
    let path = std::env::var("PATH").unwrap_or_default();
    let mut vars: BTreeMap<String, String> = mr_pipeline_vars(emu, config)
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    vars.insert("SHEPHERD_AGENT".into(), "builtin".into());
    vars.insert("PATH".into(), format!("{}:{path}", bin_dir().display()));
    vars
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_template_job_converges_and_a_second_job_doubles_nothing() {
    let emu = start_gitlab_demo().await;
    let template = template();
    // The job's rules: merge request pipelines of this project only.
    let rules = &template[".shepherd"]["rules"];
    let first_rule = scalar(&rules[0]["if"]);
    assert!(
        first_rule.contains("merge_request_event")
            && first_rule.contains(
                "$CI_MERGE_REQUEST_SOURCE_PROJECT_PATH == $CI_MERGE_REQUEST_PROJECT_PATH"
            ),
        "{first_rule}"
    );
    assert_eq!(
        scalar(&template[".shepherd"]["resource_group"]),
        "shepherd-mr-${CI_MERGE_REQUEST_IID}${SHEPHERD_MR_IID}"
    );
    let config = ReplyAllConfig::new();

    // Job 1, with the note asked for.
    let mut vars = pipeline_vars(&emu, &config.path);
    vars.insert("SHEPHERD_MR_NOTE".into(), "true".into());
    let (job, project) = run_job(&template, &vars);
    assert_eq!(job.exit, 0, "{}", job.log);
    let outputs = std::fs::read_to_string(project.path().join("shepherd-outputs.txt")).unwrap();
    assert!(outputs.contains("status=handed-off\n"), "{outputs}");
    assert!(outputs.contains("rounds=2\n"), "{outputs}");
    let report = std::fs::read_to_string(project.path().join("shepherd-report.md")).unwrap();
    assert!(report.starts_with("## Shepherd: handed off"), "{report}");
    assert!(
        project.path().join("shepherd-run/report.json").is_file(),
        "the run directory is an artifact"
    );
    for path in template[".shepherd"]["artifacts"]["paths"]
        .as_vec()
        .unwrap()
    {
        assert!(
            project.path().join(scalar(path)).exists(),
            "artifact {path:?} exists"
        );
    }
    // Every item of the demo's merge request answered once, and the
    // report note, whose marker says it is Shepherd's own.
    let replies = shepherd_replies(&emu, 42);
    assert_eq!(replies.len(), 11, "{replies:?}");
    assert_eq!(
        replies.iter().filter(|i| *i == "shepherd-report").count(),
        1
    );
    let answered = replies.len();
    assert_honest_end_state(&emu, 42, answered);
    let notes = |emu: &shepherd_emulator::RunningEmulator| {
        emu.state_json()
            .to_string()
            .matches("## Shepherd: handed off")
            .count()
    };
    assert_eq!(notes(&emu), 1, "the report is posted once, as asked");

    // Job 2: a fresh project directory and state, no note asked for. What
    // job 1 handed to a person still waits (the replies' markers say so).
    let (job, project) = run_job(&template, &pipeline_vars(&emu, &config.path));
    assert_eq!(job.exit, 0, "{}", job.log);
    let outputs = std::fs::read_to_string(project.path().join("shepherd-outputs.txt")).unwrap();
    assert!(outputs.contains("status=handed-off\n"), "{outputs}");
    assert!(
        outputs.contains("rounds=1\n"),
        "nothing left to do: {outputs}"
    );
    // Nothing was posted: not even a reply to the report note.
    assert_honest_end_state(&emu, 42, answered);
    assert_eq!(notes(&emu), 1, "no note unless asked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_merge_request_is_skipped_before_any_request() {
    let emu = start_gitlab_demo().await;
    let config = ReplyAllConfig::new();
    let mut vars = pipeline_vars(&emu, &config.path);
    // The rules skip it; the binary skips it too if a rule is overridden.
    vars.insert(
        "CI_MERGE_REQUEST_SOURCE_PROJECT_PATH".into(),
        "mallory/authkit".into(),
    );
    emu.reset_request_counts();
    let (job, project) = run_job(&template(), &vars);
    assert_eq!(job.exit, 0, "{}", job.log);
    let outputs = std::fs::read_to_string(project.path().join("shepherd-outputs.txt")).unwrap();
    assert!(outputs.contains("status=skipped\n"), "{outputs}");
    assert!(outputs.contains("mallory/authkit"), "{outputs}");
    assert!(
        emu.request_counts().values().all(|n| *n == 0),
        "{:?}",
        emu.request_counts()
    );
}

/// The template's job run by `gitlab-ci-local` (GitLab's pipeline, run
/// locally: its rules, variables, `script`, artifacts) with the shell
/// executor, in a project whose `.gitlab-ci.yml` includes the template,
/// against the emulator in GitLab mode: it converges, and a second
/// pipeline doubles nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_template_runs_under_gitlab_ci_local_and_converges() {
    let (gcl, tools_bin) = crate::ci_tools::gitlab_ci_local();
    let emu = start_gitlab_demo().await;
    let server = emu.gitlab_api_url().trim_end_matches("/api/v4").to_owned();
    let config = ReplyAllConfig::new();
    let home = tempfile::tempdir().unwrap();
    // A project that includes the template, as docs/ci.md says.
    let project = tempfile::tempdir().unwrap();
    let dir = project.path();
    std::fs::create_dir_all(dir.join("ci")).unwrap();
    std::fs::copy(
        repo_root().join("examples/gitlab/shepherd.gitlab-ci.yml"),
        dir.join("ci/shepherd.gitlab-ci.yml"),
    )
    .unwrap();
    std::fs::write(
        dir.join(".gitlab-ci.yml"),
        "include:\n  - local: ci/shepherd.gitlab-ci.yml\nvariables:\n  SHEPHERD_AGENT: builtin\n",
    )
    .unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=ci", "-c", "user.email=ci@example.com"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q", "-b", "feature/login"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "ci"]);
    git(&[
        "remote",
        "add",
        "origin",
        &format!("{server}/demo/authkit.git"),
    ]);

    let pipeline = || {
        let path = format!(
            "{}:{}:{}",
            tools_bin.display(),
            bin_dir().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut cmd = std::process::Command::new(gcl.get_program());
        // A merge request pipeline of MR !42 (predefined variables that a
        // local run cannot know), and the project's masked variables.
        let vars = mr_pipeline_vars(&emu, &config.path);
        cmd.args(["--force-shell-executor", "--no-color"]);
        for (k, v) in &vars {
            cmd.arg("--variable").arg(format!("{k}={v}"));
        }
        let predefined: Vec<&str> = vars
            .iter()
            .map(|(k, _)| *k)
            .filter(|k| k.starts_with("CI_") && !k.starts_with("CI_MERGE_REQUEST"))
            .collect();
        cmd.arg("shepherd")
            .current_dir(dir)
            .env("PATH", path)
            .env("HOME", home.path())
            .env("GCL_IGNORE_PREDEFINED_VARS", predefined.join(","))
            .stdin(std::process::Stdio::null());
        let out = tokio::task::block_in_place(|| cmd.output()).unwrap();
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), log)
    };

    let (ok, log) = pipeline();
    assert!(ok, "{log}");
    assert!(log.contains("PASS  shepherd"), "{log}");
    let artifacts = dir.join(".gitlab-ci-local/artifacts/shepherd");
    let outputs = std::fs::read_to_string(artifacts.join("shepherd-outputs.txt")).unwrap();
    assert!(outputs.contains("status=handed-off\n"), "{outputs}");
    let report = std::fs::read_to_string(artifacts.join("shepherd-report.md")).unwrap();
    assert!(report.starts_with("## Shepherd: handed off"), "{report}");
    assert!(artifacts.join("shepherd-run/report.json").is_file());
    let answered = shepherd_replies(&emu, 42).len();
    assert_eq!(answered, 10, "{:?}", shepherd_replies(&emu, 42));
    assert_honest_end_state(&emu, 42, answered);

    // A second pipeline: a fresh state directory, nothing left to do but
    // what the first handed to a person (the replies' markers say so).
    let (ok, log) = pipeline();
    assert!(ok, "{log}");
    let outputs = std::fs::read_to_string(artifacts.join("shepherd-outputs.txt")).unwrap();
    assert!(outputs.contains("status=handed-off\n"), "{outputs}");
    assert!(outputs.contains("rounds=1\n"), "{outputs}");
    assert_honest_end_state(&emu, 42, answered);
}

/// On GitLab too: a `/shepherd approve` note by a Reporter approves nothing
/// (reported, not answered: a Reporter's notes are not acted on), one by a
/// Maintainer approves the waiting decisions, read by the template's
/// stateless job from the project's members.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approve_note_counts_from_a_developer_and_up_only() {
    let mut scenario = gitlab_demo();
    scenario
        .comments
        .push(shepherd_emulator::IssueCommentSpec::new(
            "reader",
            "/shepherd approve",
        ));
    let emu = start_settled(scenario).await;
    let template = template();
    let config = ReplyAllConfig::new();
    let job = |emu: &RunningEmulator| {
        let mut vars = pipeline_vars(emu, &config.path);
        vars.insert("SHEPHERD_APPROVE".into(), "label".into());
        let (run, project) = run_job(&template, &vars);
        let outputs = std::fs::read_to_string(project.path().join("shepherd-outputs.txt")).unwrap();
        let report = std::fs::read_to_string(project.path().join("shepherd-report.md")).unwrap();
        (run, outputs, report)
    };

    let (run, outputs, report) = job(&emu);
    assert_eq!(run.exit, 0, "{}", run.log);
    assert!(outputs.contains("status=paused\n"), "{outputs}");
    assert!(
        report
            .contains("`/shepherd approve` by @reader was ignored: @reader has `reporter` access"),
        "{report}"
    );
    assert!(shepherd_replies(&emu, 42).is_empty());

    emu.act_comment("reviewer", "/shepherd approve")
        .await
        .unwrap();
    let (run, outputs, _) = job(&emu);
    assert_eq!(run.exit, 0, "{}", run.log);
    assert!(outputs.contains("status=handed-off\n"), "{outputs}");
    // The merge request's 10 items and the Maintainer's command, each
    // answered once; the Reporter's command is not answered.
    assert_honest_end_state(&emu, 42, 11);
}
