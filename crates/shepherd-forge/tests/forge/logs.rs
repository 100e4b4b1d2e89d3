//! What a failed check printed (issue 31): an Actions job's log through
//! GitHub's redirect to its download, without the token leaving the API's
//! host; another app's check run output; a GitLab job's trace.

use serde_json::json;
use shepherd_core::ci::{CheckConclusion, CheckStatus};
use shepherd_forge::{CheckRun, Forge};

use crate::support::{client_at, gitlab_client_at, Reply, Responder, Seen, PROJECT, SECRET};

const SHA: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

fn failed(id: u64, name: &str, app: &str) -> CheckRun {
    CheckRun {
        id,
        name: name.into(),
        head_sha: SHA.into(),
        status: CheckStatus::Completed,
        conclusion: Some(CheckConclusion::Failure),
        details_url: None,
        check_suite_id: None,
        app_slug: Some(app.into()),
        required: None,
    }
}

fn text(status: u16, body: &str) -> Reply {
    Reply {
        status,
        headers: vec![("content-type", "text/plain".into())],
        body: body.into(),
    }
}

#[tokio::test]
async fn an_actions_jobs_log_is_read_through_its_redirect_and_the_token_stays_home() {
    // The download is on another host, as GitHub's are (a signed blob URL).
    let blob = Responder::start(vec![text(
        200,
        "##[group]Run ./lint.sh\nTODO found\n##[error]Process completed with exit code 1.\n",
    )])
    .await;
    let location = format!(
        "{}/job-logs/42?sig=abc",
        blob.url().replace("127.0.0.1", "localhost")
    );
    let api = Responder::start(vec![Reply {
        status: 302,
        headers: vec![("location", location)],
        body: String::new(),
    }])
    .await;
    let client = client_at(&api.url());
    let log = client
        .check_log(&failed(42, "lint", "github-actions"))
        .await
        .unwrap();
    assert!(log.contains("TODO found"), "{log}");
    assert_eq!(
        api.lines(),
        ["GET /repos/octo-org/widgets/actions/jobs/42/logs"]
    );
    let fetched: Vec<Seen> = blob.seen();
    assert_eq!(fetched.len(), 1);
    assert_eq!(fetched[0].uri.path(), "/job-logs/42");
    assert!(
        fetched[0].headers.get("authorization").is_none(),
        "the token went to the download host"
    );
    assert!(!format!("{:?}", fetched[0].headers).contains(SECRET));
}

#[tokio::test]
async fn another_apps_check_run_says_what_its_output_says() {
    let api = Responder::start(vec![Reply::json(
        200,
        json!({
            "id": 7,
            "name": "security-scan",
            "output": {
                "title": "2 findings",
                "summary": "src/session.rs: hard-coded secret",
                "text": null,
                "annotations_count": 0
            }
        }),
    )])
    .await;
    let client = client_at(&api.url());
    let log = client
        .check_log(&failed(7, "security-scan", "scanner-app"))
        .await
        .unwrap();
    assert_eq!(log, "2 findings\n\nsrc/session.rs: hard-coded secret");
    assert_eq!(api.lines(), ["GET /repos/octo-org/widgets/check-runs/7"]);
}

#[tokio::test]
async fn a_gitlab_jobs_trace_is_its_log() {
    let api = Responder::start(vec![text(
        200,
        "section_start:1733400000:step_script\r\x1b[0KExecuting\n\x1b[31;1mERROR: Job failed: exit code 1\x1b[0;m\n",
    )])
    .await;
    let client = gitlab_client_at(&api.url());
    let log = client
        .check_log(&failed(9001, "lint", "gitlab-ci"))
        .await
        .unwrap();
    assert!(log.contains("ERROR: Job failed"), "{log}");
    assert_eq!(api.lines(), [format!("GET {PROJECT}/jobs/9001/trace")]);
}
