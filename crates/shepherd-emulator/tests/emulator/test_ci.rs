//! CI: real processes on a checkout, check runs through their states,
//! workflow runs and jobs, re-runs, statuses, required checks (protection,
//! rulesets, `isRequired`), conditional GETs.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{json, Value};
use shepherd_emulator::{CheckSpec, EndpointAccess, RunningEmulator, Scenario};

use crate::common::*;

/// Shepherd's `StatusCheckRollup` document.
const ROLLUP: &str = r#"query StatusCheckRollup($owner: String!, $name: String!, $number: Int!, $cursor: String) {
  repository(owner: $owner, name: $name) { pullRequest(number: $number) {
    commits(last: 1) { nodes { commit { oid statusCheckRollup { state
      contexts(first: 100, after: $cursor) { pageInfo { hasNextPage endCursor }
        nodes { __typename
          ... on CheckRun { name status conclusion isRequired(pullRequestNumber: $number) databaseId detailsUrl checkSuite { databaseId app { slug } } }
          ... on StatusContext { context state isRequired(pullRequestNumber: $number) targetUrl } } } } } } } } } }"#;

/// `GET /repos/acme/widgets{tail}` as alice: the status and the JSON body.
async fn alice_get(emu: &RunningEmulator, tail: &str) -> (u16, Value) {
    rest_get(
        &emu.api_url(),
        &format!("/repos/acme/widgets{tail}"),
        Some(ALICE),
    )
    .await
}

/// `POST …/actions/runs/{run_id}/rerun-failed-jobs` as `token`.
async fn rerun_failed(
    emu: &RunningEmulator,
    run_id: u64,
    token: &str,
) -> (u16, reqwest::header::HeaderMap, Value) {
    rest(
        Method::POST,
        &format!(
            "{}/repos/acme/widgets/actions/runs/{run_id}/rerun-failed-jobs",
            emu.api_url()
        ),
        Some(token),
        None,
    )
    .await
}

/// Shepherd's `StatusCheckRollup` query of PR 1, as alice: the body.
async fn rollup_query(emu: &RunningEmulator) -> Value {
    graphql(
        emu,
        ALICE,
        ROLLUP,
        json!({ "owner": "acme", "name": "widgets", "number": 1 }),
    )
    .await
}

/// The CI scenario with `checks`, running, its start-up CI idle; and the
/// PR's head.
async fn start_ci(checks: Vec<CheckSpec>) -> (RunningEmulator, String) {
    let emu = start(ci_scenario(checks)).await;
    idle(&emu).await;
    let head = emu.head_sha(1).unwrap();
    (emu, head)
}

fn ci_scenario(checks: Vec<CheckSpec>) -> Scenario {
    let mut s = scenario(0, 0);
    s.checks = checks;
    s
}

fn check(name: &str, command: &str, required: bool) -> CheckSpec {
    let mut c = CheckSpec::new(name, command);
    c.required = required;
    c
}

async fn push_readme(emu: &shepherd_emulator::RunningEmulator, text: &str) -> String {
    let files = BTreeMap::from([("README.md".to_owned(), Some(text.to_owned()))]);
    emu.act_push("alice", "feature/widgets", files, "Edit README")
        .await
        .unwrap()
}

#[tokio::test]
async fn checks_run_real_commands_on_the_pushed_commit() {
    let (emu, head) = start_ci(vec![
        // Sees the pushed tree, with a clean environment.
        check(
            "tests",
            "grep -q 'widgets v2' README.md && test -z \"$GITHUB_TOKEN\"",
            true,
        ),
        check("lint", "echo linting; exit 3", false),
    ])
    .await;
    assert_eq!(
        check_runs(&emu, &head).await,
        [
            ("tests".to_owned(), "completed".to_owned(), json!("failure")),
            ("lint".to_owned(), "completed".to_owned(), json!("failure")),
        ]
    );
    let pushed = push_readme(&emu, "# widgets v2\n").await;
    idle(&emu).await;
    let (_, runs) = alice_get(&emu, &format!("/commits/{pushed}/check-runs")).await;
    assert_eq!(runs["total_count"], 2);
    let tests = &runs["check_runs"][0];
    assert_eq!(tests["name"], "tests");
    assert_eq!(tests["conclusion"], "success");
    assert_eq!(tests["head_sha"], pushed.as_str());
    assert_eq!(tests["app"]["slug"], "github-actions");
    assert!(tests["started_at"].is_string() && tests["completed_at"].is_string());
    let lint = &runs["check_runs"][1];
    assert_eq!(lint["output"]["summary"], "exit status 3");
    assert_eq!(lint["output"]["text"], "linting\n");
    // A branch name works as the ref too.
    let (status, by_branch) = alice_get(
        &emu,
        "/commits/feature%2Fwidgets/check-runs?check_name=lint",
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(by_branch["total_count"], 1);
    assert_eq!(by_branch["check_runs"][0]["head_sha"], pushed.as_str());
    let (status, _) = alice_get(&emu, "/commits/no-such-branch/check-runs").await;
    assert_eq!(status, 422);
}

#[tokio::test]
async fn a_jobs_log_is_a_redirect_to_what_its_command_printed() {
    let (emu, head) = start_ci(vec![
        check("tests", "echo all good", true),
        check(
            "lint",
            "echo 'src/lib.rs:3: bad'; echo oops >&2; exit 3",
            false,
        ),
    ])
    .await;
    let (_, runs) = alice_get(&emu, &format!("/commits/{head}/check-runs")).await;
    let lint = runs["check_runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "lint")
        .unwrap()
        .clone();
    // The check run's output says it too.
    assert_eq!(lint["output"]["title"], "lint failure", "{lint}");
    assert_eq!(lint["output"]["summary"], "exit status 3");
    assert_eq!(lint["output"]["text"], "src/lib.rs:3: bad\noops\n");
    let id = lint["id"].as_u64().unwrap();
    let no_redirects = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    for root in [emu.api_url(), emu.enterprise_api_url()] {
        let url = format!("{root}/repos/acme/widgets/actions/jobs/{id}/logs");
        let answer = no_redirects
            .get(&url)
            .header("authorization", format!("token {ALICE}"))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 302, "{url}");
        let location = answer.headers()["location"].to_str().unwrap().to_owned();
        assert!(location.starts_with(&emu.api_url()), "{location}");
        // The download URL needs no token, as GitHub's signed one.
        let download = no_redirects.get(&location).send().await.unwrap();
        assert_eq!(download.status(), 200);
        assert!(download.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain"));
        let log = download.text().await.unwrap();
        let lines: Vec<&str> = log.lines().collect();
        assert_eq!(lines.len(), 3, "{log}");
        let (stamp, text) = lines[0].split_once(' ').unwrap();
        assert!(
            stamp.ends_with(".0000000Z") && stamp.len() == 28,
            "an Actions time stamp: {stamp}"
        );
        assert_eq!(text, "src/lib.rs:3: bad");
        assert!(lines[1].ends_with(" oops"), "{log}");
        assert!(
            lines[2].ends_with(" ##[error]Process completed with exit code 3."),
            "{log}"
        );
    }
    // A client that follows the redirect gets the log.
    let (status, _) = alice_get(&emu, "/actions/jobs/999999/logs").await;
    assert_eq!(status, 404);
    let followed = client()
        .get(format!(
            "{}/repos/acme/widgets/actions/jobs/{id}/logs",
            emu.api_url()
        ))
        .header("authorization", format!("token {ALICE}"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(followed.contains(" src/lib.rs:3: bad\n"), "{followed}");
    let (status, _) = rest_get(
        &emu.api_url(),
        &format!("/repos/acme/widgets/actions/jobs/{id}/logs"),
        Some(STRANGER),
    )
    .await;
    assert_eq!(status, 404, "a private repository's logs");
}

#[tokio::test]
async fn a_check_goes_queued_then_in_progress_then_completed() {
    let mut slow = check("slow", "sleep 1", true);
    slow.delay_ms = 400;
    let mut s = ci_scenario(vec![slow]);
    s.ci.run_on_start = false;
    let emu = start(s).await;
    let head = emu.head_sha(1).unwrap();
    assert!(check_runs(&emu, &head).await.is_empty());
    let pushed = push_readme(&emu, "v2\n").await;
    assert_eq!(check_runs(&emu, &pushed).await[0].1, "queued");
    let body = rollup_query(&emu).await;
    let rollup = &body["data"]["repository"]["pullRequest"]["commits"]["nodes"][0]["commit"]
        ["statusCheckRollup"];
    assert_eq!(rollup["state"], "PENDING", "{body}");
    assert_eq!(rollup["contexts"]["nodes"][0]["status"], "QUEUED");

    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let runs = check_runs(&emu, &pushed).await;
        if runs[0].1 == "in_progress" {
            break;
        }
        assert!(Instant::now() < deadline, "never in progress: {runs:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (_, runs) = alice_get(&emu, &format!("/actions/runs?head_sha={pushed}")).await;
    assert_eq!(runs["total_count"], 1);
    assert_eq!(runs["workflow_runs"][0]["status"], "in_progress");
    assert_eq!(runs["workflow_runs"][0]["conclusion"], Value::Null);
    idle(&emu).await;
    assert_eq!(
        check_runs(&emu, &pushed).await[0],
        ("slow".to_owned(), "completed".to_owned(), json!("success"))
    );
    let (_, runs) = alice_get(&emu, &format!("/actions/runs?head_sha={pushed}")).await;
    let run = &runs["workflow_runs"][0];
    assert_eq!(run["status"], "completed");
    assert_eq!(run["conclusion"], "success");
    assert_eq!(run["event"], "pull_request");
    assert_eq!(run["head_branch"], "feature/widgets");
    assert_eq!(run["run_attempt"], 1);
}

#[tokio::test]
async fn flaky_checks_fail_first_and_rerun_failed_jobs_retries_only_them() {
    let mut flaky = check("flaky", "true", true);
    flaky.flaky = 1;
    let (emu, head) = start_ci(vec![flaky, check("steady", "true", false)]).await;
    let (_, runs) = alice_get(&emu, &format!("/actions/runs?head_sha={head}")).await;
    let run = &runs["workflow_runs"][0];
    assert_eq!(run["conclusion"], "failure");
    let run_id = run["id"].as_u64().unwrap();
    let (_, jobs) = alice_get(&emu, &format!("/actions/runs/{run_id}/jobs")).await;
    assert_eq!(jobs["total_count"], 2);
    let steady_job = jobs["jobs"][1]["id"].clone();

    // Read-only tokens may not re-run.
    let (status, _, _) = rerun_failed(&emu, run_id, READER).await;
    assert_eq!(status, 403);
    let (status, _, body) = rerun_failed(&emu, run_id, ALICE).await;
    assert_eq!(status, 201, "{body}");
    idle(&emu).await;
    let (_, run) = alice_get(&emu, &format!("/actions/runs/{run_id}")).await;
    assert_eq!(run["run_attempt"], 2);
    assert_eq!(run["conclusion"], "success");
    let (_, jobs) = alice_get(&emu, &format!("/actions/runs/{run_id}/jobs")).await;
    assert_eq!(jobs["total_count"], 2);
    let flaky_job = &jobs["jobs"][0];
    assert_eq!(flaky_job["name"], "flaky");
    assert_eq!(flaky_job["run_attempt"], 2);
    assert_eq!(flaky_job["conclusion"], "success");
    // The successful job was not re-run.
    assert_eq!(jobs["jobs"][1]["id"], steady_job);
    let (_, all) = alice_get(&emu, &format!("/actions/runs/{run_id}/jobs?filter=all")).await;
    assert_eq!(all["total_count"], 3);
    // Latest check runs: one per name; all of them: three.
    let mut latest = check_runs(&emu, &head).await;
    latest.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        latest,
        [
            ("flaky".to_owned(), "completed".to_owned(), json!("success")),
            (
                "steady".to_owned(),
                "completed".to_owned(),
                json!("success")
            ),
        ]
    );
    let (_, all) = alice_get(&emu, &format!("/commits/{head}/check-runs?filter=all")).await;
    assert_eq!(all["total_count"], 3);
    // Nothing failed any more: a second re-run is refused.
    let (status, _, _) = rerun_failed(&emu, run_id, ALICE).await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn a_check_that_runs_too_long_times_out() {
    let mut slow = check("slow", "sleep 30", true);
    slow.timeout_secs = 1;
    let started = Instant::now();
    let (emu, head) = start_ci(vec![slow]).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(
        check_runs(&emu, &head).await,
        [(
            "slow".to_owned(),
            "completed".to_owned(),
            json!("timed_out")
        )]
    );
    let (_, runs) = alice_get(
        &emu,
        &format!("/actions/runs?head_sha={head}&status=failure"),
    )
    .await;
    assert_eq!(runs["total_count"], 1);
}

#[tokio::test]
async fn checks_can_publish_legacy_statuses() {
    let mut with_status = check("legacy", "exit 0", true);
    with_status.status_context = true;
    let (emu, head) = start_ci(vec![with_status]).await;
    let (status, combined) = alice_get(&emu, &format!("/commits/{head}/status")).await;
    assert_eq!(status, 200);
    assert_eq!(combined["state"], "success");
    assert_eq!(combined["sha"], head.as_str());
    assert_eq!(combined["total_count"], 1);
    assert_eq!(combined["statuses"][0]["context"], "legacy");
    let (_, statuses) = alice_get(&emu, &format!("/commits/{head}/statuses")).await;
    let states: Vec<&str> = statuses
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["success", "pending"]);

    // An external CI reports a failure: the combined state follows.
    let (status, created) = rest_post(
        &emu,
        &format!("/repos/acme/widgets/statuses/{head}"),
        BOB,
        json!({ "state": "failure", "context": "external", "target_url": "https://ci.invalid/1" }),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let (_, combined) = alice_get(&emu, &format!("/commits/{head}/status")).await;
    assert_eq!(combined["state"], "failure");
    let body = rollup_query(&emu).await;
    let rollup = &body["data"]["repository"]["pullRequest"]["commits"]["nodes"][0]["commit"]
        ["statusCheckRollup"];
    assert_eq!(rollup["state"], "FAILURE", "{body}");
    let contexts = rollup["contexts"]["nodes"].as_array().unwrap();
    let kinds: Vec<&str> = contexts
        .iter()
        .map(|c| c["__typename"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["CheckRun", "StatusContext", "StatusContext"]);
    assert_eq!(contexts[1]["context"], "legacy");
    assert_eq!(contexts[1]["isRequired"], true);
    assert_eq!(contexts[2]["context"], "external");
    assert_eq!(contexts[2]["isRequired"], false);
    assert_eq!(contexts[2]["targetUrl"], "https://ci.invalid/1");
}

#[tokio::test]
async fn required_checks_come_from_protection_rulesets_and_is_required() {
    let mut s = ci_scenario(vec![
        check("tests", "true", true),
        check("lint", "true", false),
    ]);
    s.ci.required_contexts = vec!["deploy".into()];
    let emu = start(s).await;
    idle(&emu).await;
    let (status, protection) =
        alice_get(&emu, "/branches/main/protection/required_status_checks").await;
    assert_eq!(status, 200, "{protection}");
    assert_eq!(protection["contexts"], json!(["deploy", "tests"]));
    assert_eq!(
        protection["checks"],
        json!([{ "context": "deploy", "app_id": null }, { "context": "tests", "app_id": 15368 }])
    );
    let (status, rules) = alice_get(&emu, "/rules/branches/main").await;
    assert_eq!(status, 200);
    assert_eq!(rules[0]["type"], "required_status_checks");
    assert_eq!(
        rules[0]["parameters"]["required_status_checks"],
        json!([{ "context": "deploy" }, { "context": "tests", "integration_id": 15368 }])
    );
    // Other branches are not protected.
    let (status, body) = alice_get(
        &emu,
        "/branches/feature%2Fwidgets/protection/required_status_checks",
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(body["message"], "Branch not protected");
    let (_, rules) = alice_get(&emu, "/rules/branches/feature%2Fwidgets").await;
    assert_eq!(rules, json!([]));

    let body = rollup_query(&emu).await;
    let commit = &body["data"]["repository"]["pullRequest"]["commits"]["nodes"][0]["commit"];
    assert_eq!(commit["oid"], emu.head_sha(1).unwrap().as_str());
    let rollup = &commit["statusCheckRollup"];
    assert_eq!(rollup["state"], "SUCCESS");
    let nodes = rollup["contexts"]["nodes"].as_array().unwrap();
    let required: Vec<(&str, bool)> = nodes
        .iter()
        .map(|n| {
            (
                n["name"].as_str().unwrap(),
                n["isRequired"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(required, [("tests", true), ("lint", false)]);
    assert_eq!(nodes[0]["status"], "COMPLETED");
    assert_eq!(nodes[0]["conclusion"], "SUCCESS");
    assert_eq!(nodes[0]["checkSuite"]["app"]["slug"], "github-actions");
    assert!(nodes[0]["databaseId"].is_number());
}

#[tokio::test]
async fn required_check_endpoints_can_refuse_and_be_changed_at_run_time() {
    let mut s = ci_scenario(vec![check("tests", "true", true)]);
    s.ci.protection = EndpointAccess::Forbidden;
    let emu = start(s).await;
    let protection = "/repos/acme/widgets/branches/main/protection/required_status_checks";
    let rules = "/repos/acme/widgets/rules/branches/main";
    let (status, body) = rest_get(&emu.api_url(), protection, Some(ALICE)).await;
    assert_eq!(status, 403);
    assert_eq!(body["message"], "Must have admin rights to Repository.");
    let (status, _) = rest_get(&emu.api_url(), rules, Some(ALICE)).await;
    assert_eq!(status, 403, "rulesets follow protection unless set");

    let (status, _) = control(
        &emu,
        Method::POST,
        "ci",
        Some(json!({ "protection": "not_found", "rulesets": "ok" })),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        rest_get(&emu.api_url(), protection, Some(ALICE)).await.0,
        404
    );
    assert_eq!(rest_get(&emu.api_url(), rules, Some(ALICE)).await.0, 200);

    emu.set_required_checks_access(EndpointAccess::Ok, None);
    assert_eq!(
        rest_get(&emu.api_url(), protection, Some(ALICE)).await.0,
        200
    );
    // GraphQL's isRequired answers whatever the REST endpoints do.
    emu.set_required_checks_access(EndpointAccess::Forbidden, None);
    idle(&emu).await;
    let body = rollup_query(&emu).await;
    let node = &body["data"]["repository"]["pullRequest"]["commits"]["nodes"][0]["commit"]
        ["statusCheckRollup"]["contexts"]["nodes"][0];
    assert_eq!(node["isRequired"], true, "{body}");
}

#[tokio::test]
async fn ci_gets_answer_304_to_a_matching_if_none_match() {
    let mut s = ci_scenario(vec![check("tests", "true", true)]);
    s.ci.run_on_start = false;
    let emu = start(s).await;
    let head = emu.head_sha(1).unwrap();
    let url = format!(
        "{}/repos/acme/widgets/commits/{head}/check-runs",
        emu.api_url()
    );
    let get = |etag: Option<String>| {
        let url = url.clone();
        async move {
            let mut request = client().get(&url).bearer_auth(ALICE);
            if let Some(etag) = etag {
                request = request.header("if-none-match", etag);
            }
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            let etag = response
                .headers()
                .get("etag")
                .map(|v| v.to_str().unwrap().to_owned());
            let limit = response.headers().get("x-ratelimit-limit").cloned();
            let body = response.text().await.unwrap();
            (status, etag, body, limit)
        }
    };
    let (status, etag, body, limit) = get(None).await;
    assert_eq!(status, 200);
    assert!(limit.is_some());
    let etag = etag.unwrap();
    assert!(etag.starts_with("W/\""), "{etag}");
    assert!(body.contains("\"total_count\":0"));
    let (status, again, body, _) = get(Some(etag.clone())).await;
    assert_eq!(status, 304);
    assert_eq!(again.as_deref(), Some(etag.as_str()));
    assert!(body.is_empty());

    // CI changes the answer: a new ETag.
    emu.run_ci(&head, "feature/widgets").unwrap();
    idle(&emu).await;
    let (status, newer, body, _) = get(Some(etag.clone())).await;
    assert_eq!(status, 200);
    assert_ne!(newer.unwrap(), etag);
    assert!(body.contains("\"total_count\":1"));
    // Conditional requests are still counted.
    assert_eq!(
        emu.request_count("GET /repos/{owner}/{repo}/commits/{ref}/check-runs"),
        3
    );
}

#[tokio::test]
async fn without_run_on_start_a_fresh_scenario_has_no_ci() {
    let mut s = ci_scenario(vec![check("tests", "true", true)]);
    s.ci.run_on_start = false;
    let emu = start(s).await;
    idle(&emu).await;
    let head = emu.head_sha(1).unwrap();
    assert!(check_runs(&emu, &head).await.is_empty());
    let body = rollup_query(&emu).await;
    assert_eq!(
        body["data"]["repository"]["pullRequest"]["commits"]["nodes"][0]["commit"]
            ["statusCheckRollup"],
        Value::Null
    );
    let (_, runs) = alice_get(&emu, "/actions/runs").await;
    assert_eq!(runs["total_count"], 0);
}
