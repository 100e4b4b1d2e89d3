//! The CI wait: no checks, a flaky required check, discovery refused.

use shepherd_emulator::{CheckSpec, EndpointAccess, FaultSpec};
use shepherd_engine::RunStatus;

use crate::common::*;

const ONE_ROUND_FAIL: &str = "[loop]\nmax_rounds = 1\non_exhaust = \"fail\"\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_checks_is_unknown_and_never_converges() {
    let mut s = demo();
    s.checks.clear();
    let setup = setup(s).await;
    let outcome = setup
        .run(&format!("{ONE_ROUND_FAIL}[ci]\nappear_timeout_secs = 1\n"))
        .await;
    assert_eq!(outcome.status, RunStatus::Exhausted, "{:?}", outcome.reason);
    assert_eq!(outcome.exit_code(), 4);
    let ci = outcome.report.ci.as_ref().unwrap();
    assert_eq!(ci.status.as_str(), "UNKNOWN", "{ci:?}");
    assert!(ci.reasons.iter().any(|r| r.contains("no checks")), "{ci:?}");
    assert!(!outcome.report.converged);
    let merge = read_json(&outcome.run_dir.join("rounds/1/mergeability.json"));
    assert_eq!(merge["status"], "not-converged");
    assert_eq!(merge["ci"], "UNKNOWN");
    assert!(merge["open_threads"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["path"].is_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flaky_required_check_is_rerun_once_and_passes() {
    let mut s = demo();
    s.checks[0].flaky = 1;
    let setup = setup(s).await;
    let outcome = setup.run("").await;
    assert_eq!(outcome.status, RunStatus::Converged, "{:?}", outcome.reason);
    for round in ["1", "2"] {
        let ci = read_json(&outcome.run_dir.join("rounds").join(round).join("ci.json"));
        assert_eq!(
            ci["reran"].as_array().map(Vec::len),
            Some(1),
            "round {round}: {ci}"
        );
        assert_eq!(ci["verdict"]["status"], "PASS", "{ci}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_required_check_discovery_falls_back_to_strict() {
    let mut s = demo();
    s.ci.protection = EndpointAccess::Forbidden;
    s.ci.rulesets = Some(EndpointAccess::Forbidden);
    // Not required: only strict counting makes it matter.
    s.checks.push(CheckSpec::new("lint", "exit 1"));
    s.faults
        .push(FaultSpec::every("graphql:StatusCheckRollup").with_status(500, None));
    let setup = setup(s).await;
    let outcome = setup.run(ONE_ROUND_FAIL).await;
    assert_eq!(outcome.status, RunStatus::Exhausted, "{:?}", outcome.reason);
    let ci = read_json(&outcome.run_dir.join("rounds/1/ci.json"));
    assert_eq!(ci["required"], "unknown", "{ci}");
    let discovery = ci["discovery"].to_string();
    assert!(discovery.contains("403"), "{discovery}");
    assert_eq!(ci["verdict"]["status"], "FAIL", "{ci}");
    assert_eq!(ci["verdict"]["failed"], serde_json::json!(["lint"]), "{ci}");
    assert!(ci["verdict"]["reasons"][0]
        .as_str()
        .unwrap()
        .contains("every check counts"));
}
