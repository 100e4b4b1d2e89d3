//! GitLab CI against a local responder: the head pipeline (merge request
//! pipelines, merged results, none yet), jobs as checks with their required
//! flags, the required set, the verdict fed with them, and retries.

use std::collections::BTreeSet;

use serde_json::{json, Value};
use shepherd_core::ci::{
    verdict, CheckConclusion, CheckSource, CheckStatus, CiStatus, RequiredSet,
};
use shepherd_forge::{Forge, RequiredSource, SourceOutcome};

use crate::support::{fixture, gitlab_client_at, Reply, Responder, Seen, PROJECT};

const HEAD: &str = "8f1c0e7a9d2b4c6e8f0a1b3c5d7e9f1a2b4c6d8e";
const MERGE_COMMIT: &str = "aa11bb22cc33dd44ee55ff6600112233445566aa";

/// A GitLab with merge request `mr`, pipelines of `HEAD` from `pipelines`,
/// and the fixture's jobs in every pipeline (their retry answers 201).
fn gitlab(mr: Value, pipelines: Value) -> impl Fn(&Seen) -> Reply + Send + Sync {
    move |seen: &Seen| {
        let path = seen.uri.path();
        let query = seen.uri.query().unwrap_or("");
        match (seen.method.as_str(), path) {
            ("GET", p) if p == format!("{PROJECT}/merge_requests/17") => {
                Reply::json(200, mr.clone())
            }
            ("GET", p) if p == format!("{PROJECT}/pipelines") && query.contains(HEAD) => {
                Reply::json(200, pipelines.clone()).header("etag", "W/\"pipelines\"")
            }
            ("GET", p)
                if p.starts_with(&format!("{PROJECT}/pipelines/")) && p.ends_with("/jobs") =>
            {
                Reply::json(200, fixture("gitlab/jobs.json"))
            }
            ("POST", p) if p.starts_with(&format!("{PROJECT}/jobs/")) && p.ends_with("/retry") => {
                let mut job = fixture("gitlab/jobs.json")[1].clone();
                job["id"] = json!(9000);
                job["status"] = json!("pending");
                Reply::json(201, job)
            }
            _ => Reply::json(404, json!({ "message": "404 Not found" })),
        }
    }
}

#[tokio::test]
async fn the_head_pipelines_jobs_are_the_checks_required_when_they_may_not_fail() {
    let server = Responder::start_fn(gitlab(
        fixture("gitlab/merge_request.json"),
        fixture("gitlab/pipelines.json"),
    ))
    .await;
    let client = gitlab_client_at(&server.url());
    let rollup = client.status_check_rollup(17).await.unwrap();
    assert_eq!(rollup.head_sha, HEAD);
    assert_eq!(rollup.state.as_deref(), Some("FAILURE"));
    let checks: Vec<(&str, CheckStatus, Option<CheckConclusion>, Option<bool>)> = rollup
        .checks
        .iter()
        .map(|c| (c.name.as_str(), c.status, c.conclusion, c.required))
        .collect();
    assert_eq!(
        checks,
        [
            (
                "build",
                CheckStatus::Completed,
                Some(CheckConclusion::Success),
                Some(true)
            ),
            (
                "test",
                CheckStatus::Completed,
                Some(CheckConclusion::Failure),
                Some(true)
            ),
            (
                "lint",
                CheckStatus::Completed,
                Some(CheckConclusion::Failure),
                Some(false)
            ),
            (
                "e2e",
                CheckStatus::Completed,
                Some(CheckConclusion::Cancelled),
                Some(true)
            ),
            ("deploy-review", CheckStatus::Waiting, None, Some(false)),
        ]
    );
    assert!(rollup
        .checks
        .iter()
        .all(|c| c.source == CheckSource::CheckRun));
    // The merge request's head pipeline is of the head: no pipeline search.
    assert_eq!(
        server.lines(),
        [
            format!("GET {PROJECT}/merge_requests/17"),
            format!("GET {PROJECT}/pipelines/1201/jobs?per_page=100"),
        ]
    );

    let required = client.required_checks(17, "main").await.unwrap();
    let want: BTreeSet<String> = ["build", "e2e", "test"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    assert_eq!(required.required, RequiredSet::Known(want));
    assert_eq!(required.sources[0].source, RequiredSource::PipelineJobs);
    assert_eq!(
        required.summary(),
        ["pipeline: 3 required (build, e2e, test)"]
    );

    // Failing jobs that may fail do not fail the verdict; those that may not do.
    let v = verdict(&rollup.checks, &required.required, &[], false);
    assert_eq!(v.status, CiStatus::Fail);
    assert_eq!(v.failed, ["e2e", "test"]);
    let mut passing = rollup.checks.clone();
    for check in passing.iter_mut().filter(|c| c.required == Some(true)) {
        check.conclusion = Some(CheckConclusion::Success);
    }
    let v = verdict(&passing, &required.required, &[], false);
    assert_eq!(v.status, CiStatus::Pass, "{:?}", v.reasons);
}

#[tokio::test]
async fn a_merged_results_pipeline_is_the_heads() {
    let mut mr = fixture("gitlab/merge_request.json");
    mr["head_pipeline"]["sha"] = json!(MERGE_COMMIT);
    mr["head_pipeline"]["ref"] = json!("refs/merge-requests/17/merge");
    mr["head_pipeline"]["id"] = json!(1300);
    let server = Responder::start_fn(gitlab(mr, json!([]))).await;
    let client = gitlab_client_at(&server.url()).with_merge_request(17);
    let rollup = client.status_check_rollup(17).await.unwrap();
    assert_eq!(rollup.checks.len(), 5);
    assert!(server
        .lines()
        .contains(&format!("GET {PROJECT}/pipelines/1300/jobs?per_page=100")));
    // Bound to the merge request, the commit-named reads find it too.
    let runs = client.check_runs(HEAD).await.unwrap();
    assert_eq!(runs.len(), 5);
    assert_eq!(runs[1].required, Some(true));
    assert_eq!(runs[2].to_state().required, Some(false));
    let pipelines = client.workflow_runs(HEAD).await.unwrap();
    assert_eq!(pipelines.iter().map(|p| p.id).collect::<Vec<_>>(), [1300]);
}

#[tokio::test]
async fn a_stale_head_pipeline_is_not_the_heads_and_none_yet_counts_jobs_that_may_not_fail() {
    let mut mr = fixture("gitlab/merge_request.json");
    mr["head_pipeline"]["sha"] = json!("0000000000000000000000000000000000000001");
    let server = Responder::start_fn(gitlab(mr, json!([]))).await;
    let client = gitlab_client_at(&server.url());
    let rollup = client.status_check_rollup(17).await.unwrap();
    assert_eq!((rollup.state, rollup.checks.len()), (None, 0));
    assert!(server.lines().contains(&format!(
        "GET {PROJECT}/pipelines?sha={HEAD}&order_by=id&sort=desc&per_page=100"
    )));
    let required = client.required_checks(17, "main").await.unwrap();
    assert_eq!(required.required, RequiredSet::Known(BTreeSet::new()));
    assert!(matches!(
        required.sources[0].outcome,
        SourceOutcome::Answered { .. }
    ));
}

#[tokio::test]
async fn checks_and_pipelines_of_a_commit() {
    let mut mr = fixture("gitlab/merge_request.json");
    mr["head_pipeline"] = Value::Null;
    let server = Responder::start_fn(gitlab(mr, fixture("gitlab/pipelines.json"))).await;
    let client = gitlab_client_at(&server.url());
    let runs = client.check_runs(HEAD).await.unwrap();
    let test = &runs[1];
    assert_eq!((test.id, test.name.as_str()), (8002, "test"));
    assert_eq!(test.head_sha, HEAD);
    assert_eq!(test.check_suite_id, Some(1201), "the latest pipeline");
    assert_eq!(test.app_slug.as_deref(), Some("gitlab-ci"));
    assert_eq!(
        test.details_url.as_deref(),
        Some("https://gitlab.example.com/group/sub/project/-/jobs/8002")
    );
    let pipelines = client.workflow_runs(HEAD).await.unwrap();
    let summary: Vec<(u64, Option<CheckConclusion>, &str)> = pipelines
        .iter()
        .map(|p| (p.id, p.conclusion, p.event.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            (1201, Some(CheckConclusion::Failure), "push"),
            (
                1195,
                Some(CheckConclusion::Cancelled),
                "merge_request_event"
            ),
        ]
    );
    // The second poll of the pipelines is conditional.
    let seen = server.seen();
    let polls: Vec<&Seen> = seen
        .iter()
        .filter(|s| s.uri.path().ends_with("/pipelines"))
        .collect();
    assert_eq!(polls.len(), 2);
    assert_eq!(polls[1].headers["if-none-match"], "W/\"pipelines\"");

    let combined = client.combined_status(HEAD).await.unwrap();
    assert!(combined.statuses.is_empty());
    assert_eq!(
        server.count(),
        seen.len(),
        "no request for the combined status"
    );
}

#[tokio::test]
async fn failed_jobs_are_retried_once_each() {
    let server = Responder::start_fn(gitlab(
        fixture("gitlab/merge_request.json"),
        fixture("gitlab/pipelines.json"),
    ))
    .await;
    let client = gitlab_client_at(&server.url());
    let retried = client.rerun_failed_checks(17, HEAD).await.unwrap();
    assert_eq!(retried, [8002, 8003, 8004], "failed and canceled jobs");
    let retries: Vec<String> = server
        .lines()
        .into_iter()
        .filter(|l| l.starts_with("POST"))
        .collect();
    assert_eq!(
        retries,
        [
            format!("POST {PROJECT}/jobs/8002/retry"),
            format!("POST {PROJECT}/jobs/8003/retry"),
            format!("POST {PROJECT}/jobs/8004/retry"),
        ]
    );

    // By pipeline, as the GitHub-shaped call names it.
    let before = server.count();
    client.rerun_failed_jobs(1195).await.unwrap();
    let lines = server.lines();
    assert_eq!(
        lines[before],
        format!("GET {PROJECT}/pipelines/1195/jobs?per_page=100")
    );
    assert_eq!(lines.len() - before, 4);
}

#[tokio::test]
async fn a_refused_retry_does_not_stop_the_others() {
    let inner = gitlab(
        fixture("gitlab/merge_request.json"),
        fixture("gitlab/pipelines.json"),
    );
    let server = Responder::start_fn(move |seen: &Seen| {
        if seen.uri.path().ends_with("/jobs/8002/retry") {
            return Reply::json(
                403,
                json!({ "message": "403 Forbidden - Job is not retryable" }),
            );
        }
        inner(seen)
    })
    .await;
    let err = gitlab_client_at(&server.url())
        .rerun_failed_checks(17, HEAD)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not retryable"), "{err}");
    let posts = server
        .lines()
        .iter()
        .filter(|l| l.starts_with("POST"))
        .count();
    assert_eq!(posts, 3, "each retry sent once, the refused one included");
}
