//! CI reads against a scripted local GitHub: paths, pagination, conditional
//! requests (ETag), required-check discovery and its fallbacks, and the pure
//! verdict fed with what the client read.

use serde_json::json;
use shepherd_core::ci::{verdict, CheckConclusion, CheckStatus, CiStatus, RequiredSet};
use shepherd_forge::{Forge, RequiredSource, SourceOutcome};

use crate::support::{client_at, fixture, Reply, Responder, Seen};

const SHA: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

fn not_modified() -> Reply {
    Reply {
        status: 304,
        headers: Vec::new(),
        body: String::new(),
    }
}

fn status(code: u16, message: &str) -> Reply {
    Reply::json(
        code,
        json!({ "message": message, "documentation_url": "https://docs.github.com/rest" }),
    )
}

fn if_none_match(seen: &Seen) -> Option<&str> {
    seen.headers
        .get("if-none-match")
        .map(|v| v.to_str().unwrap())
}

#[tokio::test]
async fn check_runs_are_paginated_and_polled_with_etags() {
    let all = fixture("rest_check_runs.json");
    let runs = all["check_runs"].as_array().unwrap().clone();
    let server = Responder::start_with(|base| {
        let next = format!(
            "<{base}/repos/octo-org/widgets/commits/{SHA}/check-runs?per_page=100&page=2>; rel=\"next\", <{base}/repos/octo-org/widgets/commits/{SHA}/check-runs?per_page=100&page=2>; rel=\"last\""
        );
        vec![
            Reply::json(200, json!({ "total_count": 3, "check_runs": runs[..2] }))
                .header("etag", "W/\"p1\"")
                .header("link", next),
            Reply::json(200, json!({ "total_count": 3, "check_runs": runs[2..] }))
                .header("etag", "W/\"p2\""),
            not_modified(),
            not_modified(),
            Reply::json(200, json!({ "total_count": 1, "check_runs": runs[..1] }))
                .header("etag", "W/\"p1b\""),
        ]
    })
    .await;
    let client = client_at(&server.url());

    let first = client.check_runs(SHA).await.unwrap();
    let names: Vec<&str> = first.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["build", "test (ubuntu-latest)", "lint"]);
    assert_eq!(first[0].id, 23_000_000_001);
    assert_eq!(first[0].head_sha, SHA);
    assert_eq!(first[0].status, CheckStatus::Completed);
    assert_eq!(first[0].conclusion, Some(CheckConclusion::Success));
    assert_eq!(first[0].check_suite_id, Some(21_000_000_001));
    assert_eq!(first[0].app_slug.as_deref(), Some("github-actions"));
    assert_eq!(first[1].conclusion, Some(CheckConclusion::Failure));
    assert_eq!(first[2].status, CheckStatus::InProgress);
    assert_eq!(first[2].conclusion, None);

    // Nothing changed: two 304s, the same answer.
    let second = client.check_runs(SHA).await.unwrap();
    assert_eq!(second, first);
    // Page 1 changed and has no successor now.
    let third = client.check_runs(SHA).await.unwrap();
    assert_eq!(third.len(), 1);

    let seen = server.seen();
    assert_eq!(seen.len(), 5);
    assert_eq!(
        seen[0].line(),
        format!("GET /repos/octo-org/widgets/commits/{SHA}/check-runs?per_page=100")
    );
    assert_eq!(
        seen[1].line(),
        format!("GET /repos/octo-org/widgets/commits/{SHA}/check-runs?per_page=100&page=2")
    );
    let tags: Vec<Option<&str>> = seen.iter().map(if_none_match).collect();
    assert_eq!(
        tags,
        [
            None,
            None,
            Some("W/\"p1\""),
            Some("W/\"p2\""),
            Some("W/\"p1\"")
        ]
    );
}

#[tokio::test]
async fn a_plain_get_sends_no_etag() {
    let server = Responder::start(vec![
        Reply::json(200, json!({ "id": 1 })).header("etag", "\"x\""),
        Reply::json(200, json!({ "id": 1 })).header("etag", "\"x\""),
    ])
    .await;
    let client = client_at(&server.url());
    for _ in 0..2 {
        client
            .rest_get::<serde_json::Value>("/repos/octo-org/widgets", &[])
            .await
            .unwrap();
    }
    assert!(server.seen().iter().all(|s| if_none_match(s).is_none()));
}

#[tokio::test]
async fn combined_status_and_workflow_runs() {
    let server = Responder::start(vec![
        Reply::json(200, fixture("rest_combined_status.json")),
        Reply::json(200, fixture("rest_workflow_runs.json")),
    ])
    .await;
    let client = client_at(&server.url());
    let combined = client.combined_status(SHA).await.unwrap();
    assert_eq!(combined.sha, SHA);
    assert_eq!(combined.state, "pending");
    let contexts: Vec<(&str, &str)> = combined
        .statuses
        .iter()
        .map(|s| (s.context.as_str(), s.state.as_str()))
        .collect();
    assert_eq!(
        contexts,
        [("ci/legacy", "success"), ("security/scan", "pending")]
    );
    let runs = client.workflow_runs(SHA).await.unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].id, 30_433_642);
    assert_eq!(runs[0].name.as_deref(), Some("CI"));
    assert_eq!(runs[0].conclusion, Some(CheckConclusion::Failure));
    assert_eq!(runs[0].run_attempt, 1);
    assert_eq!(runs[0].event, "pull_request");
    assert_eq!(
        server.lines(),
        [
            format!("GET /repos/octo-org/widgets/commits/{SHA}/status?per_page=100"),
            format!("GET /repos/octo-org/widgets/actions/runs?head_sha={SHA}&per_page=100"),
        ]
    );

    // Fed to the verdict: the pending legacy status keeps CI pending.
    let states: Vec<_> = combined.statuses.iter().map(|s| s.to_state()).collect();
    let got = verdict(&states, &RequiredSet::Unknown, &[], false);
    assert_eq!(got.status, CiStatus::Pending);
    assert_eq!(got.pending, ["security/scan"]);
}

#[tokio::test]
async fn the_rollup_is_paged_and_carries_is_required() {
    let page1 = fixture("status_check_rollup.json");
    let mut first = page1.clone();
    let contexts = &mut first["data"]["repository"]["pullRequest"]["commits"]["nodes"][0]["commit"]
        ["statusCheckRollup"]["contexts"];
    contexts["pageInfo"] = json!({ "hasNextPage": true, "endCursor": "MQ" });
    contexts["nodes"].as_array_mut().unwrap().truncate(1);
    let mut second = page1;
    let contexts = &mut second["data"]["repository"]["pullRequest"]["commits"]["nodes"][0]
        ["commit"]["statusCheckRollup"]["contexts"];
    contexts["nodes"].as_array_mut().unwrap().remove(0);
    let server = Responder::start(vec![Reply::json(200, first), Reply::json(200, second)]).await;
    let rollup = client_at(&server.url())
        .status_check_rollup(42)
        .await
        .unwrap();
    assert_eq!(rollup.head_sha, SHA);
    assert_eq!(rollup.state.as_deref(), Some("PENDING"));
    let checks: Vec<(&str, Option<bool>)> = rollup
        .checks
        .iter()
        .map(|c| (c.name.as_str(), c.required))
        .collect();
    assert_eq!(
        checks,
        [
            ("build", Some(true)),
            ("lint", Some(false)),
            ("ci/legacy", Some(true))
        ]
    );
    assert_eq!(rollup.checks[2].conclusion, Some(CheckConclusion::Success));
    let seen = server.seen();
    assert_eq!(seen[0].operation().as_deref(), Some("StatusCheckRollup"));
    assert_eq!(
        seen[1].json()["variables"],
        json!({ "owner": "octo-org", "name": "widgets", "number": 42, "cursor": "MQ" })
    );

    // The lint check still runs but is not required: the verdict passes.
    let got = verdict(
        &rollup.checks,
        &RequiredSet::Known(Default::default()),
        &[],
        false,
    );
    assert_eq!(got.status, CiStatus::Pass, "{got:?}");
}

#[tokio::test]
async fn a_head_without_checks_has_an_empty_rollup() {
    let mut answer = fixture("status_check_rollup.json");
    answer["data"]["repository"]["pullRequest"]["commits"]["nodes"][0]["commit"]
        ["statusCheckRollup"] = serde_json::Value::Null;
    let server = Responder::start(vec![Reply::json(200, answer)]).await;
    let rollup = client_at(&server.url())
        .status_check_rollup(42)
        .await
        .unwrap();
    assert!(rollup.checks.is_empty());
    assert_eq!(rollup.state, None);
    let got = verdict(&rollup.checks, &RequiredSet::Unknown, &[], true);
    assert_eq!(
        got.status,
        CiStatus::Unknown,
        "no checks at all is never a pass"
    );
}

/// A GitHub whose three discovery sources answer as given.
async fn discovery(protection: Reply, rules: Reply, rollup: Reply) -> Responder {
    Responder::start_fn(move |seen| {
        let path = seen.uri.path();
        if path.ends_with("/protection/required_status_checks") {
            protection.clone()
        } else if path.contains("/rules/branches/") {
            rules.clone()
        } else if path == "/graphql" {
            rollup.clone()
        } else {
            Reply::json(500, json!({ "message": format!("unexpected {path}") }))
        }
    })
    .await
}

#[tokio::test]
async fn discovery_survives_a_protection_403_with_rulesets_and_the_rollup() {
    let server = discovery(
        status(403, "Must have admin rights to Repository."),
        Reply::json(200, fixture("rest_branch_rules.json")),
        Reply::json(200, fixture("status_check_rollup.json")),
    )
    .await;
    let client = client_at(&server.url());
    let found = client.required_checks(42, "release/1.x").await.unwrap();
    let RequiredSet::Known(names) = &found.required else {
        panic!("expected a known set: {found:?}");
    };
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    assert_eq!(names, ["build", "ci/legacy", "test (ubuntu-latest)"]);
    assert!(!found.complete());
    assert_eq!(
        found.summary(),
        [
            "protection: unavailable (403)",
            "rulesets: 2 required (build, test (ubuntu-latest))",
            "rollup: 2 required (build, ci/legacy)"
        ]
    );

    let mut lines = server.lines();
    lines.sort();
    assert_eq!(
        lines,
        [
            "GET /repos/octo-org/widgets/branches/release%2F1.x/protection/required_status_checks",
            "GET /repos/octo-org/widgets/rules/branches/release%2F1.x?per_page=100",
            "POST /graphql",
        ],
        "one request each: a 403 is not retried"
    );

    // A required check that never appeared keeps CI pending, then UNKNOWN.
    let rollup = client.status_check_rollup(42).await.unwrap();
    let waiting = verdict(&rollup.checks, &found.required, &[], false);
    assert_eq!(waiting.status, CiStatus::Pending);
    assert_eq!(waiting.missing, ["test (ubuntu-latest)"]);
    let late = verdict(&rollup.checks, &found.required, &[], true);
    assert_eq!(late.status, CiStatus::Unknown);
}

#[tokio::test]
async fn discovery_with_every_source_failing_is_unknown() {
    let server = discovery(
        status(404, "Not Found"),
        status(500, "Internal Server Error"),
        Reply::json(
            200,
            json!({ "errors": [{ "type": "FORBIDDEN", "message": "Resource not accessible by integration" }] }),
        ),
    )
    .await;
    let found = client_at(&server.url())
        .required_checks(42, "main")
        .await
        .unwrap();
    assert_eq!(found.required, RequiredSet::Unknown);
    let statuses: Vec<(RequiredSource, Option<u16>)> = found
        .sources
        .iter()
        .map(|r| match &r.outcome {
            SourceOutcome::Unavailable { status, .. } => (r.source, *status),
            SourceOutcome::Answered { .. } => panic!("{r} answered"),
        })
        .collect();
    assert_eq!(
        statuses,
        [
            (RequiredSource::BranchProtection, Some(404)),
            (RequiredSource::Rulesets, Some(500)),
            (RequiredSource::StatusRollup, None),
        ]
    );
    assert!(
        found.summary()[2].contains("Resource not accessible"),
        "{:?}",
        found.summary()
    );
    let rules = server
        .lines()
        .iter()
        .filter(|l| l.contains("/rules/"))
        .count();
    assert_eq!(rules, 4, "a 500 is a read: retried up to max_attempts");

    // Strict: a failing check that nothing marked required fails CI.
    let states = vec![shepherd_core::ci::CheckState {
        name: "anything".into(),
        source: shepherd_core::ci::CheckSource::CheckRun,
        status: CheckStatus::Completed,
        conclusion: Some(CheckConclusion::Failure),
        required: None,
    }];
    assert_eq!(
        verdict(&states, &found.required, &[], false).status,
        CiStatus::Fail
    );
}

#[tokio::test]
async fn an_unprotected_branch_is_an_answer_not_a_failure() {
    let mut no_rollup = fixture("status_check_rollup.json");
    no_rollup["data"]["repository"]["pullRequest"]["commits"]["nodes"][0]["commit"]
        ["statusCheckRollup"] = serde_json::Value::Null;
    let server = discovery(
        status(404, "Branch not protected"),
        Reply::json(200, json!([])),
        Reply::json(200, no_rollup),
    )
    .await;
    let found = client_at(&server.url())
        .required_checks(42, "main")
        .await
        .unwrap();
    assert_eq!(found.required, RequiredSet::Known(Default::default()));
    assert!(found.complete());
    assert_eq!(
        found.summary(),
        [
            "protection: none required",
            "rulesets: none required",
            "rollup: none required"
        ]
    );
}

#[tokio::test]
async fn protection_contexts_and_checks_are_merged() {
    let server = discovery(
        Reply::json(200, fixture("rest_required_status_checks.json")),
        Reply::json(200, json!([])),
        status(502, "Bad Gateway"),
    )
    .await;
    let found = client_at(&server.url())
        .required_checks(42, "main")
        .await
        .unwrap();
    assert_eq!(
        found.required,
        RequiredSet::Known(["build".to_owned(), "ci/legacy".to_owned()].into())
    );
    assert_eq!(found.summary()[2], "rollup: unavailable (502)");
}
