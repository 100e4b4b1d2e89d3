//! GitLab CI: one pipeline per CI run with one job per scenario check,
//! `required = false` as `allow_failure: true`, the pipeline's status from
//! the jobs that may not fail, the merge request's head pipeline and
//! pipelines, job retry (a new job, the same SHA), conditional GETs.

use std::collections::BTreeMap;

use reqwest::Method;
use serde_json::Value;
use shepherd_emulator::{CheckSpec, Scenario};

use crate::common::*;

fn check(name: &str, command: &str, required: bool) -> CheckSpec {
    let mut c = CheckSpec::new(name, command);
    c.required = required;
    c
}

fn ci_scenario() -> Scenario {
    let mut s = gitlab_scenario(0, 0);
    let mut flaky = check("flaky", "true", true);
    flaky.flaky = 1;
    s.checks = vec![
        check(
            "tests",
            "test \"$GITLAB_CI\" = true && test -n \"$CI_COMMIT_SHA\"",
            true,
        ),
        check("lint", "exit 3", false),
        flaky,
    ];
    s
}

fn by_name(jobs: &Value) -> BTreeMap<String, Value> {
    jobs.as_array()
        .unwrap()
        .iter()
        .map(|j| (j["name"].as_str().unwrap().to_owned(), j.clone()))
        .collect()
}

#[tokio::test]
async fn pipelines_and_jobs_follow_the_checks_and_retry_makes_a_new_job() {
    let emu = start(ci_scenario()).await;
    idle(&emu).await;
    let head = emu.head_sha(1).unwrap();
    let path = format!("/projects/{GL_PROJECT}/pipelines?sha={head}&order_by=id&sort=desc");
    let pipelines = gl_get(&emu, &path, ALICE).await;
    let pipelines = pipelines.as_array().unwrap();
    assert_eq!(pipelines.len(), 1);
    let pipeline = &pipelines[0];
    assert_eq!(pipeline["sha"], head.as_str());
    assert_eq!(pipeline["ref"], "feature/widgets");
    assert_eq!(pipeline["status"], "failed", "the flaky job may not fail");
    let id = pipeline["id"].as_u64().unwrap();
    assert_eq!(
        gl_get(
            &emu,
            &format!("/projects/{GL_PROJECT}/pipelines/{id}"),
            ALICE
        )
        .await["id"],
        id
    );

    let jobs_path = format!("/projects/{GL_PROJECT}/pipelines/{id}/jobs");
    let jobs = by_name(&gl_get(&emu, &jobs_path, ALICE).await);
    assert_eq!(jobs.len(), 3);
    assert_eq!(
        jobs["tests"]["status"], "success",
        "GitLab's variables are set"
    );
    assert_eq!(jobs["tests"]["allow_failure"], false);
    assert_eq!(jobs["lint"]["status"], "failed");
    assert_eq!(jobs["lint"]["allow_failure"], true);
    assert_eq!(jobs["lint"]["failure_reason"], "script_failure");
    assert_eq!(jobs["flaky"]["status"], "failed");
    assert_eq!(jobs["flaky"]["allow_failure"], false);
    assert_eq!(jobs["flaky"]["pipeline"]["id"], id);
    assert_eq!(jobs["flaky"]["pipeline"]["sha"], head.as_str());
    assert_eq!(jobs["flaky"]["pipeline"]["status"], "failed");
    assert!(jobs["flaky"]["web_url"]
        .as_str()
        .unwrap()
        .contains("/-/jobs/"));

    let mr = gl_get(&emu, &mr_path(""), ALICE).await;
    assert_eq!(mr["head_pipeline"]["id"], id);
    assert_eq!(mr["head_pipeline"]["status"], "failed");

    // Retry the flaky job: a new job of the same pipeline and SHA.
    let old = jobs["flaky"]["id"].as_u64().unwrap();
    let retry = format!("/projects/{GL_PROJECT}/jobs/{old}/retry");
    let (status, _, _) = gl(&emu, Method::POST, &retry, Some(READER), None).await;
    assert_eq!(status, 403);
    let (status, _, job) = gl(&emu, Method::POST, &retry, Some(ALICE), None).await;
    assert_eq!(status, 201, "{job}");
    let new = job["id"].as_u64().unwrap();
    assert_ne!(new, old);
    assert_eq!(job["name"], "flaky");
    assert_eq!(job["pipeline"]["id"], id);
    assert_eq!(job["pipeline"]["sha"], head.as_str());
    idle(&emu).await;
    let jobs = by_name(&gl_get(&emu, &jobs_path, ALICE).await);
    assert_eq!(jobs.len(), 3, "the retried job is left out");
    assert_eq!(jobs["flaky"]["id"], new);
    assert_eq!(jobs["flaky"]["status"], "success");
    let all = gl_get(&emu, &format!("{jobs_path}?include_retried=true"), ALICE).await;
    assert_eq!(all.as_array().unwrap().len(), 4);
    let failed = gl_get(&emu, &format!("{jobs_path}?scope=failed"), ALICE).await;
    assert_eq!(failed.as_array().unwrap().len(), 1, "lint");
    let pipeline = gl_get(
        &emu,
        &format!("/projects/{GL_PROJECT}/pipelines/{id}"),
        ALICE,
    )
    .await;
    assert_eq!(pipeline["status"], "success", "lint may fail");
    let job = gl_get(&emu, &format!("/projects/{GL_PROJECT}/jobs/{new}"), ALICE).await;
    assert_eq!(job["status"], "success");
    // The old attempt is not retryable any more.
    let (status, _, body) = gl(&emu, Method::POST, &retry, Some(ALICE), None).await;
    assert_eq!(status, 403, "{body}");

    // The merge request's pipelines: this one, and one per later push.
    let files = BTreeMap::from([("README.md".to_owned(), Some("# v2\n".to_owned()))]);
    let pushed = emu
        .act_push("alice", "feature/widgets", files, "Edit README")
        .await
        .unwrap();
    let mr_pipelines = gl_get(&emu, &mr_path("/pipelines"), ALICE).await;
    let mr_pipelines = mr_pipelines.as_array().unwrap();
    assert_eq!(mr_pipelines.len(), 2);
    assert_eq!(mr_pipelines[0]["sha"], pushed.as_str());
    assert_eq!(mr_pipelines[1]["id"], id);
    idle(&emu).await;
}

#[tokio::test]
async fn a_job_still_waiting_is_not_retryable_and_polls_are_conditional() {
    let mut s = gitlab_scenario(0, 0);
    let mut slow = check("slow", "true", true);
    slow.delay_ms = 1000;
    s.checks = vec![slow];
    let emu = start(s).await;
    let head = emu.head_sha(1).unwrap();
    let pipelines = gl_get(
        &emu,
        &format!("/projects/{GL_PROJECT}/pipelines?sha={head}"),
        ALICE,
    )
    .await;
    assert_eq!(pipelines[0]["status"], "pending");
    let id = pipelines[0]["id"].as_u64().unwrap();
    let jobs_path = format!("/projects/{GL_PROJECT}/pipelines/{id}/jobs");
    let jobs = gl_get(&emu, &jobs_path, ALICE).await;
    assert_eq!(jobs[0]["status"], "pending");
    let job = jobs[0]["id"].as_u64().unwrap();
    let (status, _, body) = gl(
        &emu,
        Method::POST,
        &format!("/projects/{GL_PROJECT}/jobs/{job}/retry"),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["message"], "403 Forbidden - Job is not retryable");
    idle(&emu).await;

    // ETags: an unchanged list answers 304.
    let url = format!("{}{jobs_path}", emu.gitlab_api_url());
    let first = client().get(&url).bearer_auth(ALICE).send().await.unwrap();
    let etag = first.headers()["etag"].to_str().unwrap().to_owned();
    let again = client()
        .get(&url)
        .bearer_auth(ALICE)
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    let (status, _, _) = gl(
        &emu,
        Method::GET,
        &format!("/projects/{GL_PROJECT}/jobs/999999"),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_pipeline_retry_reruns_its_failed_jobs_and_traces_are_the_output() {
    let emu = start(ci_scenario()).await;
    idle(&emu).await;
    let mr = gl_get(&emu, &mr_path(""), ALICE).await;
    let id = mr["head_pipeline"]["id"].as_u64().unwrap();
    let jobs_path = format!("/projects/{GL_PROJECT}/pipelines/{id}/jobs");
    let jobs = by_name(&gl_get(&emu, &jobs_path, ALICE).await);

    // A job's trace: what its command printed, then the runner's last word.
    let trace = |job: u64| {
        let emu = &emu;
        async move {
            let answer = client()
                .get(format!(
                    "{}/projects/{GL_PROJECT}/jobs/{job}/trace",
                    emu.gitlab_api_url()
                ))
                .header("private-token", ALICE)
                .send()
                .await
                .unwrap();
            assert_eq!(answer.status(), 200);
            let kind = answer.headers()["content-type"]
                .to_str()
                .unwrap()
                .to_owned();
            assert!(kind.starts_with("text/plain"), "{kind}");
            answer.text().await.unwrap()
        }
    };
    let lint = jobs["lint"]["id"].as_u64().unwrap();
    assert_eq!(trace(lint).await, "ERROR: Job failed: exit code 3\n");
    let tests = jobs["tests"]["id"].as_u64().unwrap();
    assert_eq!(trace(tests).await, "Job succeeded\n");
    let (status, _, _) = gl(
        &emu,
        Method::GET,
        &format!("/projects/{GL_PROJECT}/jobs/999999/trace"),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!(status, 404);

    // The retry: the failed jobs (flaky and lint, which may fail) get a
    // new job each; the one that passed does not.
    let retry = format!("/projects/{GL_PROJECT}/pipelines/{id}/retry");
    let (status, _, _) = gl(&emu, Method::POST, &retry, Some(READER), None).await;
    assert_eq!(status, 403);
    let (status, _, pipeline) = gl(&emu, Method::POST, &retry, Some(ALICE), None).await;
    assert_eq!(status, 201, "{pipeline}");
    assert_eq!(pipeline["id"], id);
    idle(&emu).await;
    let all = gl_get(&emu, &format!("{jobs_path}?include_retried=true"), ALICE).await;
    let names: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 5, "{names:?}");
    assert_eq!(names.iter().filter(|n| **n == "tests").count(), 1);
    let latest = by_name(&gl_get(&emu, &jobs_path, ALICE).await);
    assert_eq!(latest["flaky"]["status"], "success", "its second run");
    assert_eq!(latest["lint"]["status"], "failed");
    let pipeline = gl_get(
        &emu,
        &format!("/projects/{GL_PROJECT}/pipelines/{id}"),
        ALICE,
    )
    .await;
    assert_eq!(pipeline["status"], "success");
}
