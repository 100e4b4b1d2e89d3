//! PyGithub 2.10.0 and python-gitlab 8.6.0, unchanged, against the emulator:
//! reads, pagination, writes, CI and error shapes on both forges, GitHub at
//! the github.com-style root and at the Enterprise-style `/api/v3`. The
//! scripts are `clients/*.py`; each check prints `ok: …`.

use std::path::Path;
use std::process::Command;

use shepherd_emulator::EmulatedForge;

use crate::scenario::{start, ALICE, READER};
use crate::tools;

/// Runs `clients/{script}` with the venv's Python and `env`; panics with
/// its output unless it passes.
async fn run_script(script: &str, env: &[(&str, String)]) -> String {
    let python = tools::python();
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/conformance/clients")
        .join(script);
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(&path)
            .envs(env)
            // The emulator is on loopback: no proxy may take the requests.
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("no_proxy", "127.0.0.1,localhost")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .expect("run python")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{script} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    stdout
}

async fn pygithub(enterprise: bool) {
    let emu = start(EmulatedForge::GitHub).await;
    let api = if enterprise {
        emu.enterprise_api_url()
    } else {
        emu.api_url()
    };
    let out = run_script(
        "github_client.py",
        &[
            ("SHEPHERD_API", api),
            ("SHEPHERD_TOKEN", ALICE.into()),
            ("SHEPHERD_READER", READER.into()),
            ("SHEPHERD_OWNER", "acme".into()),
            ("SHEPHERD_REPO", "widgets".into()),
        ],
    )
    .await;
    assert!(out.contains("all PyGithub checks passed"), "{out}");
    assert!(out.matches("ok: ").count() > 60, "{out}");
}

#[tokio::test]
async fn pygithub_works_at_the_root_base() {
    pygithub(false).await;
}

#[tokio::test]
async fn pygithub_works_at_the_enterprise_base() {
    pygithub(true).await;
}

#[tokio::test]
async fn python_gitlab_works() {
    let emu = start(EmulatedForge::GitLab).await;
    let out = run_script(
        "gitlab_client.py",
        &[
            ("SHEPHERD_URL", emu.web_url()),
            ("SHEPHERD_TOKEN", ALICE.into()),
            ("SHEPHERD_READER", READER.into()),
            ("SHEPHERD_PROJECT", "acme/tools/widgets".into()),
        ],
    )
    .await;
    assert!(out.contains("all python-gitlab checks passed"), "{out}");
}
