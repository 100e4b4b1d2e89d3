//! CI repair through a real agent CLI (issue 31): the demo with a required
//! `lint` check that fails on `TODO` markers. The scripted model applies
//! the demo's suggestions (one adds a `TODO` to `src/auth/token.sh`), its
//! pre-push review finds nothing, so the push turns `lint` red; the fix
//! role's CLI then gets the `ci-fix` task, reads the file the log names,
//! takes the marker out with its own file tool, and Shepherd verifies,
//! pushes and waits for CI again: green, with the fixing commit named.

use serde_json::{json, Value};
use shepherd_emulator::CheckSpec;
use shepherd_engine::RunStatus;
use shepherd_model_server::{Exchange, Match, ModelServer, Script, Step, ToolCall};

use crate::common::*;
use crate::real_demo::{run_demo, FileEdits, INPUT_TOKENS, OUTPUT_TOKENS};
use crate::test_real_clis::{claude, demo_model, prompt_items};

/// The first `path:line:` the log of a CI fix prompt names.
fn file_named_in_log(prompt: &str) -> Option<String> {
    let log = &prompt[prompt.find("<untrusted-log")?..prompt.find("</untrusted-log>")?];
    log.lines().find_map(|line| {
        let (path, rest) = line.split_once(':')?;
        let digits = rest.split(':').next()?;
        (path.starts_with("src/")
            && !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| path.to_owned())
    })
}

/// The demo's model with a review that finds nothing, and a CI fixer.
fn model() -> Vec<Exchange> {
    let mut model: Vec<Exchange> = demo_model(FileEdits::Write)
        .into_iter()
        .filter(|e| e.label != "review")
        .collect();
    model.push(
        Exchange::planned(
            "review",
            Match::Contains("You are the pre-push review agent".into()),
            |conv| {
                (conv.tool_results == 0).then(|| {
                    Step::Structured(json!({"findings": [], "summary": "Nothing to report."}))
                })
            },
        )
        .usage(INPUT_TOKENS, OUTPUT_TOKENS),
    );
    model.push(
        Exchange::planned(
            "ci-fix",
            Match::Contains("a required CI check".into()),
            |conv| {
                let path = file_named_in_log(&conv.user_text)?;
                match conv.tool_results {
                    0 => Some(Step::Tool(ToolCall::Read { path })),
                    1 => {
                        let file = std::fs::read_to_string(conv.resolve(&path)).ok()?;
                        let kept: String = file
                            .split_inclusive('\n')
                            .filter(|l| !l.contains("TODO"))
                            .collect();
                        Some(Step::Tool(ToolCall::Write {
                            path,
                            content: kept,
                        }))
                    }
                    2 => {
                        let items: Vec<Value> = prompt_items(&conv.user_text)
                            .iter()
                            .map(|i| {
                                json!({"id": i.id, "status": "fixed",
                                       "summary": "Took out the TODO marker lint refuses.",
                                       "reply": "Took out the TODO marker lint refuses.",
                                       "files": [path]})
                            })
                            .collect();
                        Some(Step::Structured(
                            json!({"outcomes": items, "cluster_assessment": null}),
                        ))
                    }
                    _ => None,
                }
            },
        )
        .usage(INPUT_TOKENS, OUTPUT_TOKENS),
    );
    model
}

async fn a_red_check_is_fixed_through_claude(forge: ForgeKind) {
    let server = ModelServer::start(Script::new(model())).expect("model server starts");
    let cli = claude(&server);
    let mut scenario = demo();
    let mut lint = CheckSpec::new("lint", "! grep -rn TODO src");
    lint.required = true;
    lint.delay_ms = 600;
    scenario.checks.push(lint);
    let setup = setup_on(forge, scenario).await;
    let outcome = run_demo(&setup, &cli).await;
    let context = format!("{:?}\n{}", outcome.reason, outcome.report.to_markdown());
    // The loop is done (the demo's needs-human items wait for a person),
    // with CI green on the repair's head.
    assert_eq!(outcome.status, RunStatus::HandedOff, "{context}");
    let ci_fix = server.requests_of("ci-fix");
    assert!(
        ci_fix.iter().any(|r| r.step > 0),
        "the CLI made no tool call for the CI fix: {context}"
    );
    let failures = &outcome.report.ci_failures;
    assert_eq!(failures.len(), 1, "{context}");
    assert_eq!(failures[0].name, "lint");
    assert_eq!(failures[0].class.as_str(), "regression");
    let fixed_by = failures[0].fixed_by.clone().expect("a fixing commit");
    let head = setup.emu.head_sha(PR).unwrap();
    assert_eq!(head, fixed_by, "{context}");
    let shown = std::process::Command::new("git")
        .arg("-C")
        .arg(setup.emu.repository_path())
        .args(["show", &format!("{head}:src/auth/token.sh")])
        .output()
        .expect("git runs");
    let token = String::from_utf8_lossy(&shown.stdout);
    assert!(!token.contains("TODO"), "{token}");
    let again = read_json(&outcome.run_dir.join("rounds/1/ci-repair-1.json"));
    assert_eq!(again["verdict"]["status"], "PASS", "{again}");
    assert!(
        outcome.report.to_markdown().contains(&fixed_by[..7]),
        "{context}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_red_check_is_fixed_through_claude_on_github() {
    a_red_check_is_fixed_through_claude(ForgeKind::GitHub).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_red_check_is_fixed_through_claude_on_gitlab() {
    a_red_check_is_fixed_through_claude(ForgeKind::GitLab).await;
}
