//! `shepherd demo`: the whole loop on the embedded scenario.

use std::path::Path;

use crate::common::{text, Shepherd};

/// The run a demo's stderr names ("Report again: shepherd report RUN"), and
/// the emulator's state it dumped into that run's directory, under the
/// demo's own `demo/` state dir in `state`.
fn run_and_dump(stderr: &str, state: &Path) -> (String, serde_json::Value) {
    let run = stderr
        .lines()
        .find_map(|l| l.strip_prefix("Report again: shepherd report "))
        .and_then(|l| l.split_whitespace().next())
        .expect("the report hint names the run")
        .to_owned();
    let dump = state
        .join("demo")
        .join("runs")
        .join(&run)
        .join("emulator-state.json");
    let dump = serde_json::from_str(&std::fs::read_to_string(dump).unwrap()).unwrap();
    (run, dump)
}

#[test]
fn demo_converges_and_says_where_to_look() {
    let sh = Shepherd::new();
    let (out, stdout, stderr, state) = sh.demo(&[]);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("Status: handed-off"), "{stdout}");
    assert!(stdout.contains("- CI: PASS"), "{stdout}");
    // A line per stage, two rounds (the bot's comment during CI).
    assert!(
        stderr.contains("Round 2") && stderr.contains("1/replies"),
        "{stderr}"
    );
    assert!(stderr.contains("emulator-state.json"), "{stderr}");
    // Demo runs keep to their own `demo/` state dir.
    let (run, dump) = run_and_dump(&stderr, &state);
    assert!(dump["pull_requests"][0]["threads"].is_array());

    let out = sh.run(
        &[
            "report",
            &run,
            "--json",
            "--state-dir",
            state.join("demo").to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["status"], "handed-off");
    assert_eq!(report["rounds"].as_array().map(Vec::len), Some(2));
}

#[test]
fn demo_on_gitlab_converges() {
    let sh = Shepherd::new();
    let (out, stdout, stderr, state) = sh.demo(&["--forge", "gitlab", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("Started the GitLab emulator at http://127.0.0.1:")
            && stderr.contains("/api/v4 with the demo's merge request demo/authkit!42"),
        "{stderr}"
    );
    assert!(
        stderr.contains("--forge gitlab"),
        "the hint follows the forge: {stderr}"
    );
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["status"], "handed-off", "{stdout}");
    assert_eq!(report["rounds"].as_array().map(Vec::len), Some(2));
    assert_eq!(report["resolved"].as_array().map(Vec::len), Some(6));
    // Demo runs keep to their own `demo/` state dir.
    let (_, dump) = run_and_dump(&stderr, &state);
    assert_eq!(dump["forge"], "gitlab");
    assert_eq!(dump["duplicate_resolve_notes"], 0);
}
