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
