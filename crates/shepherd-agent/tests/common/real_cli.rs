//! What the real-CLI tests (`test_real_clis.rs`, `test_real_clis_more.rs`)
//! share: a CLI's sandbox, HOME and scripted model server, the tokens of
//! Shepherd's environment, and the check that no forge token got out.

use serde_json::{json, Value};
use shepherd_agent::CliProvider;
use shepherd_model_server::{Exchange, ModelServer, RecordedRequest, Script};

use super::Sandbox;

/// The forge token in Shepherd's environment: it must reach no CLI.
pub const FORGE_TOKEN: &str = "ghp_forge_token_that_must_not_leak";
/// The CLI's own model key: it must reach the model server.
pub const MODEL_KEY: &str = "sk-test-model-key-1234";

/// A real agent CLI against the scripted model server `exchanges`: a
/// sandbox whose worktree has `src/a.rs`, and a HOME of its own.
pub struct RealCli {
    pub provider: CliProvider,
    pub server: ModelServer,
    pub home: tempfile::TempDir,
    pub sb: Sandbox,
}

impl RealCli {
    pub fn new(provider: CliProvider, exchanges: Vec<Exchange>) -> Self {
        let sb = Sandbox::new();
        std::fs::write(sb.worktree().join("src/a.rs"), "fn a() {}\n").unwrap();
        RealCli {
            provider,
            server: ModelServer::start(Script::new(exchanges)).unwrap(),
            home: tempfile::tempdir().unwrap(),
            sb,
        }
    }

    /// The CLI called the model server and sent it no forge token, nor did
    /// a transcript keep one; every request, for further checks.
    pub fn assert_no_forge_token(&self) -> Vec<RecordedRequest> {
        let requests = self.server.requests();
        assert!(
            !requests.is_empty(),
            "the CLI never called the model server"
        );
        for r in &requests {
            assert!(
                !r.contains(FORGE_TOKEN),
                "forge token sent: {} {}",
                r.method,
                r.path
            );
        }
        for entry in std::fs::read_dir(self.sb.transcripts()).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(!text.contains(FORGE_TOKEN), "{}", path.display());
            }
        }
        requests
    }
}

/// A triage answer handing items T1 and T2 to a person, with `reasoning`.
pub fn needs_human_answer(reasoning: &str) -> Value {
    let item = |id: &str| {
        json!({"id": id, "decision": "needs-human", "theme": null,
               "reasoning": reasoning,
               "reply_hint": "A maintainer will look.", "pr_changed_evidence": false})
    };
    json!({"items": [item("T1"), item("T2")]})
}
