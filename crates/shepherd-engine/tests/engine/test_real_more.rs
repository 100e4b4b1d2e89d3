//! Gemini CLI, opencode and Copilot CLI, the real executables at their
//! pinned versions, for every role of a run of the demo against a scripted
//! model server (`real_demo.rs`), and their failure modes.

use std::time::Instant;

use shepherd_agent::CliProvider;
use shepherd_model_server::ModelServer;

use crate::common::*;
use crate::real_demo::*;

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
    let setup = setup(demo()).await;
    let server = ModelServer::start(demo_script(&demo())).unwrap();
    let cli = gemini(&server);
    let started = Instant::now();
    let outcome = run_demo(&setup, &cli).await;
    eprintln!(
        "gemini: {} requests in {:?}",
        server.requests().len(),
        started.elapsed()
    );
    assert_demo(&setup, &server, &outcome, GEMINI_KEY);
    assert!(server
        .requests()
        .iter()
        .all(|r| r.path.starts_with("/v1beta/models/gemini-2.5-pro:")));
}
