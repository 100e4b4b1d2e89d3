//! The CI wait: no checks, a flaky required check, a failing check that
//! may fail (on both forges); discovery refused (GitHub only: GitLab has no
//! discovery to refuse, each job says whether it may fail).

use shepherd_emulator::{CheckSpec, EndpointAccess, FaultSpec};
use shepherd_engine::RunStatus;

use crate::common::*;

const ONE_ROUND_FAIL: &str = "[loop]\nmax_rounds = 1\non_exhaust = \"fail\"\n";

async fn no_checks_is_unknown_and_never_converges(forge: ForgeKind) {
    let mut s = demo();
    s.checks.clear();
    let setup = setup_on(forge, s).await;
    let outcome = setup
        .run(&format!("{ONE_ROUND_FAIL}[ci]\nappear_timeout_secs = 1\n"))
        .await;
    assert_eq!(outcome.status, RunStatus::Exhausted, "{:?}", outcome.reason);
    assert_eq!(outcome.status, shepherd_engine::RunStatus::Exhausted);
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
    setup.assert_clean();
}
both_forges!(no_checks_is_unknown_and_never_converges);

/// GitHub re-runs the failed jobs of the workflow run; GitLab retries the
/// failed job. Once per head SHA: each round's new head gets its own.
async fn a_flaky_required_check_is_rerun_once_and_passes(forge: ForgeKind) {
    let mut s = demo();
    s.checks[0].flaky = 1;
    let setup = setup_on(forge, s).await;
    let outcome = setup.run("").await;
    assert_handed_off(&outcome);
    let mut shas = Vec::new();
    for round in ["1", "2"] {
        let ci = read_json(&outcome.run_dir.join("rounds").join(round).join("ci.json"));
        assert_eq!(
            ci["reran"].as_array().map(Vec::len),
            Some(1),
            "round {round}: {ci}"
        );
        assert_eq!(ci["verdict"]["status"], "PASS", "{ci}");
        shas.push(ci["sha"].as_str().unwrap().to_owned());
    }
    assert_ne!(shas[0], shas[1], "each round pushed");
    let retries = match forge {
        ForgeKind::GitHub => "POST /repos/{owner}/{repo}/actions/runs/{run_id}/rerun-failed-jobs",
        ForgeKind::GitLab => "POST /api/v4/projects/{id}/jobs/{job_id}/retry",
    };
    assert_eq!(setup.emu.request_count(retries), 2, "one re-run per head");
    setup.assert_clean();
}
both_forges!(a_flaky_required_check_is_rerun_once_and_passes);

/// A check that is not required (GitHub: not in branch protection; GitLab:
/// `allow_failure: true`) fails every time: CI still passes and the run
/// converges, the failure recorded.
async fn a_failing_check_that_may_fail_does_not_fail_ci(forge: ForgeKind) {
    let mut s = demo();
    s.checks.push(CheckSpec::new("lint", "exit 1"));
    let setup = setup_on(forge, s).await;
    let outcome = setup.run("").await;
    assert_handed_off(&outcome);
    let ci = read_json(&outcome.run_dir.join("rounds/2/ci.json"));
    assert_eq!(ci["verdict"]["status"], "PASS", "{ci}");
    assert_eq!(ci["reran"].as_array().map(Vec::len), Some(0), "{ci}");
    let lint = ci["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "lint")
        .unwrap_or_else(|| panic!("lint is among the checks: {ci}"));
    assert_eq!(lint["conclusion"], "failure", "{lint}");
    assert_ne!(lint["required"], true, "{lint}");
    setup.assert_clean();
}
both_forges!(a_failing_check_that_may_fail_does_not_fail_ci);

/// GitLab only: a failed job is retried at once, while another job of its
/// pipeline still runs (GitHub re-runs a workflow run's failed jobs only
/// once the run has completed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitlab_retries_a_failed_job_while_its_pipeline_still_runs() {
    let mut s = demo();
    s.checks[0].flaky = 1;
    let mut slow = CheckSpec::new("slow", "sleep 2");
    slow.required = true;
    s.checks.push(slow);
    let setup = setup_on(ForgeKind::GitLab, s).await;
    let outcome = setup.run("").await;
    assert_handed_off(&outcome);
    // `tests` fails about 600 ms after the push, `slow` runs 2 s more: the
    // FAIL verdict (final as soon as a required job failed) came while the
    // pipeline ran, and a re-run that waited for the pipeline to finish
    // would have re-run nothing (the round would have failed).
    let ci = read_json(&outcome.run_dir.join("rounds/1/ci.json"));
    assert_eq!(ci["reran"].as_array().map(Vec::len), Some(1), "{ci}");
    assert_eq!(ci["verdict"]["status"], "PASS", "{ci}");
    assert_eq!(
        setup
            .emu
            .request_count("POST /api/v4/projects/{id}/jobs/{job_id}/retry"),
        2,
        "one retry per head"
    );
    setup.assert_clean();
}

/// GitHub only: branch protection and rulesets refuse (403) and the rollup
/// fails, so every check counts. GitLab has no such discovery (each job
/// says whether it may fail: see the test above).
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
