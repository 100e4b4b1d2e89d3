//! Gemini CLI, opencode and Copilot CLI, the real executables at their
//! pinned versions, for every role of a run of the demo against a scripted
//! model server (`test_real_clis::demo_model`), and their failure modes.

use shepherd_agent::CliProvider;
use shepherd_model_server::ModelServer;

use crate::real_demo::*;
use crate::test_real_clis::{the_demo_converges_with, DemoCli};

const GEMINI_KEY: &str = "e2e-gemini-key-0451";

/// Gemini CLI pointed at the server with an API key. 0.61 takes
/// `GOOGLE_GEMINI_BASE_URL` for a gateway and refuses that auth type in
/// headless mode unless the user's settings select the API-key auth.
fn gemini(server: &ModelServer) -> RealCli {
    let mut cli = RealCli::new(CliProvider::Gemini);
    let dir = cli.home.path().join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("settings.json"),
        r#"{"security": {"auth": {"selectedType": "gemini-api-key"}}}"#,
    )
    .unwrap();
    cli.model = Some("gemini-2.5-pro".into());
    cli.env = vec![
        ("GEMINI_API_KEY".into(), GEMINI_KEY.into()),
        ("GOOGLE_GEMINI_BASE_URL".into(), server.url()),
    ];
    cli
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_runs_every_role_of_the_demo() {
    let (_, server, _) = the_demo_converges_with(DemoCli {
        cli: gemini,
        key: GEMINI_KEY,
        own_vars: &["GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"],
        edits: FileEdits::Write,
    })
    .await;
    assert!(server
        .requests()
        .iter()
        .all(|r| r.path.starts_with("/v1beta/models/gemini-2.5-pro:")));
}

const OPENCODE_KEY: &str = "e2e-opencode-key-0452";

/// opencode with an OpenAI-compatible provider of the user's global
/// configuration pointed at the server; its key named in `agent.env`.
fn opencode(server: &ModelServer) -> RealCli {
    let mut cli = RealCli::new(CliProvider::Opencode);
    let dir = cli.home.path().join(".config/opencode");
    std::fs::create_dir_all(&dir).unwrap();
    let config = serde_json::json!({
        "$schema": "https://opencode.ai/config.json",
        "provider": {"scripted": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Scripted",
            "options": {"baseURL": format!("{}/v1", server.url()), "apiKey": "{env:SCRIPTED_API_KEY}"},
            "models": {"e2e-model": {"name": "e2e-model"}}
        }}
    });
    std::fs::write(dir.join("opencode.json"), config.to_string()).unwrap();
    cli.model = Some("scripted/e2e-model".into());
    cli.env = vec![("SCRIPTED_API_KEY".into(), OPENCODE_KEY.into())];
    cli.credentials = vec!["SCRIPTED_API_KEY".into()];
    cli
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_runs_every_role_of_the_demo() {
    let (_, server, _) = the_demo_converges_with(DemoCli {
        cli: opencode,
        key: OPENCODE_KEY,
        own_vars: &["SCRIPTED_API_KEY"],
        edits: FileEdits::Write,
    })
    .await;
    // Read-only roles were offered no tool that changes anything.
    for label in ["triage", "fix-validation", "review"] {
        for r in server.requests_of(label) {
            let body: serde_json::Value = serde_json::from_str(&r.body).unwrap();
            let tools: Vec<&str> = body["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t["function"]["name"].as_str())
                .collect();
            for tool in ["bash", "edit", "write", "patch", "webfetch", "task"] {
                assert!(
                    !tools.contains(&tool),
                    "{label} was offered {tool}: {tools:?}"
                );
            }
        }
    }
}

const COPILOT_KEY: &str = "e2e-copilot-key-0453";

/// Copilot CLI with a model provider of its own (BYOK), offline.
fn copilot(server: &ModelServer) -> RealCli {
    let mut cli = RealCli::new(CliProvider::Copilot);
    cli.model = Some("gpt-4.1".into());
    cli.env = vec![
        (
            "COPILOT_PROVIDER_BASE_URL".into(),
            format!("{}/v1", server.url()),
        ),
        ("COPILOT_PROVIDER_API_KEY".into(), COPILOT_KEY.into()),
        ("COPILOT_OFFLINE".into(), "true".into()),
    ];
    cli
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_runs_every_role_of_the_demo() {
    the_demo_converges_with(DemoCli {
        cli: copilot,
        key: COPILOT_KEY,
        own_vars: &["COPILOT_PROVIDER_API_KEY", "COPILOT_PROVIDER_BASE_URL"],
        edits: FileEdits::Edit,
    })
    .await;
}
