//! `action.yml`, the example workflow and the GitLab template checked by
//! the published tools: SchemaStore's schemas (through `check-jsonschema`),
//! `actionlint` on the workflow, and `shellcheck` on every script the
//! action, the workflow and the template run.

use std::path::Path;
use std::process::Command;

use crate::ci_tools::{actionlint, python_tools};
use crate::fake_runner::{load_yaml, repo_root, scalar};

fn check(bin: &Path, args: &[&str]) {
    let out = Command::new(bin)
        .args(args)
        .current_dir(repo_root())
        .output()
        .unwrap_or_else(|e| panic!("{} runs: {e}", bin.display()));
    assert!(
        out.status.success(),
        "{} {args:?}:\n{}{}",
        bin.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_action_workflow_and_template_match_their_published_schemas() {
    let bin = python_tools();
    let schema = bin.join("check-jsonschema");
    check(
        &schema,
        &["--builtin-schema", "vendor.github-actions", "action.yml"],
    );
    check(
        &schema,
        &[
            "--builtin-schema",
            "vendor.github-workflows",
            "examples/github/shepherd.yml",
        ],
    );
    check(
        &schema,
        &[
            "--builtin-schema",
            "vendor.gitlab-ci",
            "examples/gitlab/shepherd.gitlab-ci.yml",
        ],
    );
}

#[test]
fn the_workflow_is_actionlint_clean_and_every_script_shellcheck_clean() {
    let out = actionlint()
        .arg("examples/github/shepherd.yml")
        .current_dir(repo_root())
        .output()
        .expect("actionlint runs");
    assert!(
        out.status.success(),
        "actionlint:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // It finds what it should (the check can fail).
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yml");
    std::fs::write(
        &bad,
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.nope }}\n",
    )
    .unwrap();
    let out = actionlint().arg(&bad).output().expect("actionlint runs");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // The scripts of the action's steps, the workflow's steps and the
    // template's sections, as bash.
    let bin = python_tools();
    let mut scripts = Vec::new();
    let workflow = load_yaml(&repo_root().join("examples/github/shepherd.yml"));
    for step in workflow["jobs"]["shepherd"]["steps"].as_vec().unwrap() {
        if let Some(run) = step["run"].as_str() {
            scripts.push((
                format!("workflow-step-{}.sh", scripts.len()),
                run.to_owned(),
            ));
        }
    }
    let action = load_yaml(&repo_root().join("action.yml"));
    for (i, step) in action["runs"]["steps"].as_vec().unwrap().iter().enumerate() {
        if let Some(run) = step["run"].as_str() {
            scripts.push((format!("action-step-{i}.sh"), run.to_owned()));
        }
    }
    let template = load_yaml(&repo_root().join("examples/gitlab/shepherd.gitlab-ci.yml"));
    for section in ["before_script", "script", "after_script"] {
        if let Some(lines) = template[".shepherd"][section].as_vec() {
            let text: Vec<String> = lines.iter().map(scalar).collect();
            scripts.push((format!("gitlab-{section}.sh"), text.join("\n")));
        }
    }
    assert!(scripts.len() >= 3, "{scripts:?}");
    for (name, text) in &scripts {
        let path = dir.path().join(name);
        std::fs::write(&path, format!("#!/usr/bin/env bash\n{text}\n")).unwrap();
        check(
            &bin.join("shellcheck"),
            &["--shell=bash", path.to_str().unwrap()],
        );
    }
}

/// Text with its line breaks and runs of spaces folded to one space.
fn folded(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Issue 28.12-13: the action's reference, its permissions and the agent's
/// default say one thing in `action.yml`, the example workflow and
/// docs/ci.md, and the default configuration's `approve.mode` comment names
/// every mode.
#[test]
fn the_action_example_and_docs_tell_one_truth() {
    let root = repo_root();
    let docs = std::fs::read_to_string(root.join("docs/ci.md")).unwrap();
    let workflow = load_yaml(&root.join("examples/github/shepherd.yml"));
    let action = load_yaml(&root.join("action.yml"));

    // The reference: the example's step and the docs' snippet name the
    // same one, a commit pin (no release is tagged).
    let uses: Vec<String> = workflow["jobs"]["shepherd"]["steps"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|s| scalar(&s["uses"]))
        .filter(|u| u.contains("/shepherd@"))
        .collect();
    assert_eq!(uses, ["OWNER/shepherd@COMMIT_SHA"]);
    for line in docs
        .lines()
        .filter(|l| l.contains("uses: ") && l.contains("/shepherd@"))
    {
        assert!(line.contains(&format!("uses: {}", uses[0])), "{line}");
    }
    assert!(!docs.contains("shepherd@v1"), "no release named v1 exists");

    // The permissions: what the example grants is what the action's input
    // and the docs ask of a token.
    let granted: Vec<(String, String)> = workflow["permissions"]
        .as_hash()
        .unwrap()
        .iter()
        .map(|(k, v)| (scalar(k), scalar(v)))
        .collect();
    let level = |scope: &str| {
        granted
            .iter()
            .find(|(k, _)| k == scope)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(level("contents").as_deref(), Some("write"));
    assert_eq!(level("pull-requests").as_deref(), Some("write"));
    assert_eq!(level("actions").as_deref(), Some("write"));
    assert_eq!(level("checks").as_deref(), Some("read"));
    assert_eq!(level("statuses").as_deref(), Some("read"));
    let asked = folded(&scalar(&action["inputs"]["github-token"]["description"]));
    let docs_folded = folded(&docs);
    for said in [
        "contents, pull requests and actions: write",
        "checks and statuses: read",
    ] {
        assert!(asked.contains(said), "action.yml: {asked}");
        assert!(docs_folded.contains(said), "docs/ci.md: {said}");
    }

    // The agent's default: the configuration's.
    let config = shepherd_core::config::Config::layered(&[]).unwrap();
    let agent = folded(&scalar(&action["inputs"]["agent"]["description"]));
    assert!(
        agent.contains(&format!(
            "the configuration decides (default {})",
            config.agent.provider.as_str()
        )),
        "{agent}"
    );

    // Every approval mode is named in the default configuration's comment.
    let defaults = shepherd_core::config::Config::default_toml();
    let comment: String = defaults
        .split("[approve]")
        .nth(1)
        .and_then(|rest| rest.split("\nmode = ").next())
        .unwrap()
        .to_owned();
    for mode in ["prompt", "auto", "label"] {
        assert!(comment.contains(&format!("\"{mode}\"")), "{comment}");
    }
}
