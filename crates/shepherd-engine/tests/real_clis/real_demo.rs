//! The demo through a real agent CLI: the harness of the end-to-end
//! provider tests. The CLI (installed at its pinned version by
//! `shepherd_model_server::clis`) runs every role of a `shepherd run` on
//! the emulator's demo scenario, pointed at a scripted model server on
//! loopback (the script is `test_real_clis::demo_model`).
//!
//! The CLI's environment is synthetic (`EnvPolicy::parent`): the CLI's key
//! and base URL, and forge tokens that must reach neither the CLI nor the
//! model server.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use shepherd_agent::exec::EnvPolicy;
use shepherd_agent::{Agent, CliAgent, CliConfig, CliProvider, Prompts};
use shepherd_engine::run::CheckAgents;
use shepherd_engine::{Agents, RunOutcome};
use shepherd_model_server::ModelServer;

use crate::common::*;

/// Forge tokens in the agent's parent environment: none may reach the CLI.
pub const FORGE_TOKENS: [(&str, &str); 3] = [
    ("GITHUB_TOKEN", "ghp_e2eForgeTokenMustNotLeak0001"),
    ("GH_TOKEN", "ghp_e2eForgeTokenMustNotLeak0002"),
    ("GITLAB_TOKEN", "glpat-e2eForgeTokenMustNotLeak3"),
];

/// Tokens every scripted answer reports.
pub const INPUT_TOKENS: u64 = 1009;
pub const OUTPUT_TOKENS: u64 = 37;

/// What triage tries first: a commit in the worktree it may only read.
pub const SNEAKY_COMMIT: &str = "git commit --allow-empty -m 'e2e: a read-only role committed'";

/// How the scripted fixer changes a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileEdits {
    /// Writes the whole file (Gemini CLI's `write_file`, opencode's `write`).
    Write,
    /// Replaces its whole text (Copilot CLI's `create` refuses a file that
    /// exists: its `edit`).
    Edit,
}

/// A real CLI and its environment for one test.
pub struct RealCli {
    pub provider: CliProvider,
    pub exe: PathBuf,
    pub model: Option<String>,
    /// Its parent environment (besides PATH, HOME and the forge tokens).
    pub env: Vec<(String, String)>,
    /// `agent.env`-style credential names (opencode's key).
    pub credentials: Vec<String>,
    pub extra_args: Vec<String>,
    pub home: tempfile::TempDir,
}

impl RealCli {
    /// The pinned `name` CLI, with a fresh HOME.
    pub fn new(provider: CliProvider) -> RealCli {
        RealCli {
            provider,
            exe: shepherd_model_server::clis::installed_cli(provider.name()),
            model: None,
            env: Vec::new(),
            credentials: Vec::new(),
            extra_args: Vec::new(),
            home: tempfile::tempdir().expect("temp dir"),
        }
    }

    /// The parent environment the agent's is built from: PATH (node, git),
    /// HOME, TMPDIR, the CLI's own variables and the forge tokens.
    pub fn parent_env(&self) -> Vec<(OsString, OsString)> {
        let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
        let tmp = self.home.path().join("tmp");
        std::fs::create_dir_all(&tmp).expect("tmp");
        let mut env: Vec<(OsString, OsString)> = vec![
            ("PATH".into(), path),
            ("HOME".into(), self.home.path().into()),
            ("TMPDIR".into(), tmp.into()),
            ("LANG".into(), "C.UTF-8".into()),
        ];
        env.extend(FORGE_TOKENS.iter().map(|(k, v)| ((*k).into(), (*v).into())));
        env.push(("SHEPHERD_E2E_UNLISTED".into(), "must-not-pass".into()));
        env.extend(self.env.iter().map(|(k, v)| (k.into(), v.into())));
        env
    }

    pub fn config(&self, total: Duration) -> CliConfig {
        let mut config = CliConfig::new(self.provider);
        config.program = self.exe.clone();
        config.model = self.model.clone();
        config.extra_args = self.extra_args.clone();
        config.env = EnvPolicy {
            credentials: self.credentials.clone(),
            parent: Some(self.parent_env()),
            ..EnvPolicy::default()
        };
        config.total_timeout = total;
        config.idle_timeout = total;
        config.kill_grace = Duration::from_secs(2);
        config
    }

    pub fn agent(&self, total: Duration) -> Arc<dyn Agent> {
        Arc::new(CliAgent::new(self.config(total), Prompts::builtin()).expect("a valid config"))
    }
}

/// Runs the demo with `cli` for every role.
pub async fn run_demo(setup: &Setup, cli: &RealCli) -> RunOutcome {
    let agent = cli.agent(Duration::from_secs(180));
    let mut opts = setup.options();
    opts.agents = Some(Agents {
        triage: agent.clone(),
        fix: agent.clone(),
        cluster_fix: agent.clone(),
    });
    opts.check_agents = Some(CheckAgents {
        fix_validation: agent.clone(),
        review: agent.clone(),
        apply_review: agent,
    });
    setup
        .engine_with(opts)
        .start(setup.spec(""))
        .await
        .expect("the run starts")
}

/// Every file under `dir`, as text (lossy).
pub fn files_text(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(bytes) = std::fs::read(&p) {
                out.push((p, String::from_utf8_lossy(&bytes).into_owned()));
            }
        }
    }
    out
}

/// What every provider's demo run must show: converged in one round with
/// `resolved` threads resolved; no forge token in any
/// request, transcript or file of the run; the CLI's key and base URL used;
/// the read-only role's commit not pushed; tokens read from the CLI's output.
pub fn assert_demo(
    setup: &Setup,
    server: &ModelServer,
    outcome: &RunOutcome,
    key: &str,
    own_vars: &[&str],
    resolved: usize,
) {
    let requests = server.requests();
    let summary: Vec<String> = requests
        .iter()
        .map(|r| {
            format!(
                "{} {} {:?} step {} {}",
                r.method, r.path, r.exchange, r.step, r.reply
            )
        })
        .collect();
    let results =
        std::fs::read_to_string(outcome.run_dir.join("rounds/1/results.json")).unwrap_or_default();
    let context = format!(
        "{:?}\n{}\nrequests:\n{}\nround 1 results: {results}",
        outcome.reason,
        outcome.report.to_markdown(),
        summary.join("\n")
    );
    // The loop is done; the scripted triage makes the review summary and the
    // two threads without a suggestion `needs-human`: they wait for a person.
    assert_eq!(
        outcome.status,
        shepherd_engine::RunStatus::HandedOff,
        "{context}"
    );
    assert_eq!(outcome.report.waiting_for_a_person().len(), 3, "{context}");
    assert_eq!(outcome.report.rounds.len(), 1, "{context}");
    setup.assert_clean();
    let pr = setup.pr();
    let resolved_now = pr["threads"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["resolved"] == true)
        .count();
    assert_eq!(resolved_now, resolved, "{context}");

    // Every role ran through the CLI, and every request was scripted.
    for label in ["triage", "cluster-fix", "fix-validation", "review"] {
        assert!(
            !server.requests_of(label).is_empty(),
            "no {label} request:\n{}",
            summary.join("\n")
        );
    }
    let stray: Vec<&String> = summary
        .iter()
        .filter(|s| s.contains("unmatched") || s.contains("not-found"))
        .collect();
    assert!(stray.is_empty(), "unscripted requests: {stray:?}");

    // The CLI's own key reached the server; no forge token (nor Shepherd's
    // forge token for the emulator) did, nor an unlisted variable.
    assert!(
        requests.iter().all(|r| r.contains(key)),
        "a request without the CLI's key"
    );
    for needle in FORGE_TOKENS
        .iter()
        .map(|(_, v)| *v)
        .chain([DEV_TOKEN, "must-not-pass"])
    {
        assert!(
            server.requests_containing(needle).is_empty(),
            "{needle} reached the model server"
        );
        for (path, text) in files_text(&outcome.run_dir) {
            assert!(!text.contains(needle), "{needle} in {}", path.display());
        }
    }
    // The transcripts name the CLI's variables, never a forge one.
    let transcripts: Vec<(PathBuf, String)> = files_text(&outcome.run_dir)
        .into_iter()
        .filter(|(p, _)| p.to_string_lossy().contains(".attempt-"))
        .collect();
    assert!(!transcripts.is_empty(), "no transcripts");
    for (path, text) in &transcripts {
        for (name, _) in FORGE_TOKENS {
            assert!(
                !text.contains(&format!("\"{name}\"")),
                "{name} in {}",
                path.display()
            );
        }
        assert!(!text.contains(key), "the key's value in {}", path.display());
        for var in own_vars {
            assert!(
                text.contains(&format!("\"{var}\"")),
                "{var} not passed: {}",
                path.display()
            );
        }
    }

    // The read-only role's commit attempt reached neither the PR nor the
    // run: the pushed history has Shepherd's commits only.
    let triage = server.requests_of("triage");
    assert!(
        triage.iter().any(|r| r.step == 1),
        "triage's model never saw the result of its commit attempt"
    );
    let head = setup.emu.head_sha(PR).unwrap();
    let log = std::process::Command::new("git")
        .args(["log", "--format=%s", &head])
        .current_dir(setup.emu.repository_path())
        .output()
        .expect("git log");
    let subjects = String::from_utf8_lossy(&log.stdout);
    assert!(
        !subjects.contains("a read-only role committed"),
        "the read-only role's commit was pushed:\n{subjects}"
    );

    // Tokens per role, read from the CLI's own output: whole multiples of
    // the scripted counts.
    let run: Value = read_json(&outcome.run_dir.join("run.json"));
    let roles = run["agent"]["roles"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for role in ["triage", "fix-validation", "review"] {
        let r = roles
            .iter()
            .find(|r| r["role"] == role)
            .unwrap_or_else(|| panic!("no usage of {role}: {}", run["agent"]));
        let input = r["input_tokens"].as_u64().unwrap_or(0);
        let output = r["output_tokens"].as_u64().unwrap_or(0);
        assert!(
            input > 0 && input % INPUT_TOKENS == 0,
            "{role}: input tokens {input} not read from the CLI: {r}"
        );
        assert!(
            output > 0 && output % OUTPUT_TOKENS == 0,
            "{role}: output tokens {output}: {r}"
        );
    }
}
