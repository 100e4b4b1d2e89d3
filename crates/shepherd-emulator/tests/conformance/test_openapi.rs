//! Every REST route the emulator serves, called and its body validated
//! against the response schema GitHub's OpenAPI description
//! (`@octokit/openapi`, `generated/api.github.com.json`) gives that route,
//! at the github.com-style root and at the Enterprise-style `/api/v3`. The
//! routes come from the router's own table: a route without a call here
//! fails the test.

use std::collections::BTreeSet;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{json, Map, Value};
use shepherd_emulator::{path_shape, rest_route_table, EmulatedForge, RunningEmulator};

use crate::scenario::{start, ALICE};
use crate::tools;

/// GitHub's OpenAPI description, parsed once.
fn spec() -> &'static Value {
    static SPEC: OnceLock<Value> = OnceLock::new();
    SPEC.get_or_init(|| {
        let path = tools::openapi_dir().join("api.github.com.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        serde_json::from_str(&text).expect("the OpenAPI description is JSON")
    })
}

/// Routes GitHub serves but its description leaves out, validated against
/// the route GitHub documents for the same answer.
const UNDOCUMENTED: &[(&str, &str)] = &[(
    // PyGithub's `Commit.get_statuses()` reads this path; GitHub answers
    // it as `commits/{ref}/statuses`.
    "GET /repos/{owner}/{repo}/statuses/{sha}",
    "GET /repos/{owner}/{repo}/commits/{ref}/statuses",
)];

/// The response schema of `METHOD /template` for `status`, with the
/// components it refers to beside it, OpenAPI 3.0's `nullable` turned into
/// JSON Schema.
/// The OpenAPI description's answer `status` of `route` (its `$ref`
/// resolved).
fn response(route: &str, status: u16) -> Value {
    let route = UNDOCUMENTED
        .iter()
        .find(|(r, _)| *r == route)
        .map_or(route, |(_, documented)| documented);
    let (method, template) = route.split_once(' ').unwrap();
    let spec = spec();
    let paths = spec["paths"].as_object().unwrap();
    let (_, item) = paths
        .iter()
        .find(|(path, item)| {
            path_shape(path) == path_shape(template) && item.get(method.to_lowercase()).is_some()
        })
        .unwrap_or_else(|| panic!("GitHub's OpenAPI description has no {route}"));
    let mut response = item[method.to_lowercase()]["responses"][status.to_string()].clone();
    if let Some(reference) = response["$ref"].as_str() {
        response = resolve(spec, reference).clone();
    }
    assert!(
        !response.is_null(),
        "GitHub's OpenAPI description has no {status} answer for {route}"
    );
    response
}

fn response_schema(route: &str, status: u16) -> Value {
    let spec = spec();
    let response = response(route, status);
    let schema = response["content"]["application/json"]["schema"].clone();
    assert!(!schema.is_null(), "{route} {status}: no JSON schema");
    let mut components = Map::new();
    collect_refs(spec, &schema, &mut components);
    let mut doc = json!({
        "components": { "schemas": components },
        "allOf": [schema],
    });
    nullable_to_json_schema(&mut doc);
    doc
}

/// The description's component `name` as a schema document: for bodies
/// whose response schema is a union loose enough to take a wrong shape
/// (the issue events' `anyOf`).
fn component_schema(name: &str) -> Value {
    let reference = json!({ "$ref": format!("#/components/schemas/{name}") });
    let mut components = Map::new();
    collect_refs(spec(), &reference, &mut components);
    let mut doc = json!({
        "components": { "schemas": components },
        "allOf": [reference],
    });
    nullable_to_json_schema(&mut doc);
    doc
}

fn resolve<'s>(spec: &'s Value, reference: &str) -> &'s Value {
    let pointer = reference.strip_prefix('#').unwrap();
    spec.pointer(pointer)
        .unwrap_or_else(|| panic!("no {reference}"))
}

/// Every `#/components/schemas/…` that `schema` reaches, by name.
fn collect_refs(spec: &Value, schema: &Value, out: &mut Map<String, Value>) {
    match schema {
        Value::Object(map) => {
            if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                let name = reference
                    .strip_prefix("#/components/schemas/")
                    .unwrap_or_else(|| panic!("unexpected $ref {reference}"));
                if !out.contains_key(name) {
                    let target = resolve(spec, reference).clone();
                    out.insert(name.to_owned(), target.clone());
                    collect_refs(spec, &target, out);
                }
            }
            for value in map.values() {
                collect_refs(spec, value, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(spec, v, out)),
        _ => {}
    }
}

/// OpenAPI 3.0's `nullable: true` as JSON Schema: `null` is also valid.
/// A `oneOf` with a `discriminator` becomes `anyOf`: the discriminator, not
/// the alternatives' shapes, picks one (`private-user` also fits
/// `public-user`), and JSON Schema has no discriminators.
fn nullable_to_json_schema(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for child in map.values_mut() {
                nullable_to_json_schema(child);
            }
            if map.remove("discriminator").is_some() {
                if let Some(alternatives) = map.remove("oneOf") {
                    map.insert("anyOf".into(), alternatives);
                }
            }
            if map.remove("nullable") == Some(Value::Bool(true)) {
                let inner = Value::Object(std::mem::take(map));
                map.insert("anyOf".into(), json!([{ "type": "null" }, inner]));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(nullable_to_json_schema),
        _ => {}
    }
}

/// The failures of `body` against `schema`, one line each.
fn violations(schema: &Value, body: &Value) -> Vec<String> {
    let validator = jsonschema::options()
        .build(schema)
        .unwrap_or_else(|e| panic!("the schema compiles: {e}"));
    validator
        .iter_errors(body)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .take(20)
        .collect()
}

/// Calls routes and validates what they answer.
struct Checker<'e> {
    emu: &'e RunningEmulator,
    root: String,
    client: reqwest::Client,
    called: BTreeSet<String>,
    failures: Vec<String>,
}

impl Checker<'_> {
    /// `METHOD path` (the concrete path of `route`, a `METHOD /template` of
    /// the table); asserts `status`, validates the body; returns it.
    async fn call(&mut self, route: &str, path: &str, body: Option<Value>, status: u16) -> Value {
        let (method, _) = route.split_once(' ').unwrap();
        let mut request = self
            .client
            .request(method.parse().unwrap(), format!("{}{path}", self.root))
            .header("accept", "application/vnd.github+json")
            .header("authorization", format!("token {ALICE}"));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let got = response.status().as_u16();
        let text = response.text().await.unwrap();
        assert_eq!(got, status, "{route} ({path}): {text}");
        let value: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{route}: not JSON ({e}): {text}"));
        let schema = response_schema(route, status);
        for violation in violations(&schema, &value) {
            self.failures
                .push(format!("{route} under {}: {violation}", self.root));
        }
        self.called.insert(route.to_owned());
        value
    }

    /// `METHOD path` answered `status` with no body, as the description
    /// says `route` answers it.
    async fn call_empty(&mut self, route: &str, path: &str, status: u16) {
        let (method, _) = route.split_once(' ').unwrap();
        let answer = self
            .client
            .request(method.parse().unwrap(), format!("{}{path}", self.root))
            .header("accept", "application/vnd.github+json")
            .header("authorization", format!("token {ALICE}"))
            .send()
            .await
            .unwrap();
        let got = answer.status().as_u16();
        let text = answer.text().await.unwrap();
        assert_eq!(got, status, "{route} ({path}): {text}");
        assert!(text.is_empty(), "{route}: a body where none is due: {text}");
        let documented = response(route, status);
        assert!(
            documented["content"].is_null(),
            "{route} {status}: GitHub's description has a body: {documented}"
        );
        self.called.insert(route.to_owned());
    }

    /// `GET path` answered with a redirect (`302` and a `Location`), as
    /// the description says `route` answers; returns the text at the
    /// `Location`, fetched with no token (GitHub's download URLs are
    /// signed and need none).
    async fn call_redirect(&mut self, route: &str, path: &str) -> String {
        let no_redirects = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let answer = no_redirects
            .get(format!("{}{path}", self.root))
            .header("accept", "application/vnd.github+json")
            .header("authorization", format!("token {ALICE}"))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status().as_u16(), 302, "{route} ({path})");
        let documented = response(route, 302);
        assert!(
            documented["content"].is_null(),
            "{route} 302: GitHub's description has a body: {documented}"
        );
        let location = answer.headers()["location"].to_str().unwrap().to_owned();
        self.called.insert(route.to_owned());
        let download = no_redirects.get(&location).send().await.unwrap();
        assert_eq!(download.status().as_u16(), 200, "{location}");
        download.text().await.unwrap()
    }

    async fn settle(&self) {
        assert!(
            self.emu.wait_idle(Duration::from_secs(60)).await,
            "CI settles"
        );
    }
}

fn id(value: &Value, pointer: &str) -> String {
    match value.pointer(pointer) {
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(s)) => s.clone(),
        other => panic!("{pointer}: {other:?} in {value}"),
    }
}

async fn validate_every_route(enterprise: bool) {
    let emu = start(EmulatedForge::GitHub).await;
    let root = if enterprise {
        emu.enterprise_api_url()
    } else {
        emu.api_url()
    };
    let mut c = Checker {
        emu: &emu,
        root,
        client: reqwest::Client::builder().no_proxy().build().unwrap(),
        called: BTreeSet::new(),
        failures: Vec::new(),
    };
    const R: &str = "/repos/{owner}/{repo}";
    let r = |tail: &str| format!("{R}{tail}");
    let p = |tail: &str| format!("/repos/acme/widgets{tail}");
    let head = emu.head_sha(1).unwrap();

    let me = c.call("GET /user", "/user", None, 200).await;
    let login = me["login"].as_str().unwrap().to_owned();
    c.call(
        &format!("GET {}", r("/collaborators/{username}/permission")),
        &p(&format!("/collaborators/{login}/permission")),
        None,
        200,
    )
    .await;
    c.call("GET /rate_limit", "/rate_limit", None, 200).await;
    // At the Enterprise root this is `/api/v3/`, as `gh auth status` asks.
    let root = c.call("GET /", "/", None, 200).await;
    assert!(
        root["current_user_url"]
            .as_str()
            .is_some_and(|u| u == format!("{}/user", c.root)),
        "{root}"
    );
    let workflows = c
        .call(
            &format!("GET {}", r("/actions/workflows")),
            &p("/actions/workflows"),
            None,
            200,
        )
        .await;
    assert_eq!(workflows["total_count"], 1, "{workflows}");
    c.call(
        &format!("GET {}", r("/actions/workflows/{workflow_id}")),
        &p("/actions/workflows/1"),
        None,
        200,
    )
    .await;
    c.call(&format!("GET {R}"), &p(""), None, 200).await;
    c.call(&format!("GET {}", r("/pulls")), &p("/pulls"), None, 200)
        .await;
    c.call(
        &format!("GET {}", r("/pulls/{number}")),
        &p("/pulls/1"),
        None,
        200,
    )
    .await;
    let patch = json!({ "title": "Add widgets" });
    c.call(
        &format!("PATCH {}", r("/pulls/{number}")),
        &p("/pulls/1"),
        Some(patch),
        200,
    )
    .await;
    c.call(
        &format!("GET {}", r("/pulls/{number}/commits")),
        &p("/pulls/1/commits"),
        None,
        200,
    )
    .await;
    c.call(
        &format!("GET {}", r("/pulls/{number}/files")),
        &p("/pulls/1/files"),
        None,
        200,
    )
    .await;
    c.call(
        &format!("GET {}", r("/issues/{number}")),
        &p("/issues/1"),
        None,
        200,
    )
    .await;
    c.call(&format!("GET {}", r("/labels")), &p("/labels"), None, 200)
        .await;
    c.call(
        &format!("GET {}", r("/labels/{name}")),
        &p("/labels/enhancement"),
        None,
        200,
    )
    .await;
    c.call(
        &format!("GET {}", r("/commits/{ref}")),
        &p(&format!("/commits/{head}")),
        None,
        200,
    )
    .await;
    c.call(
        &format!("GET {}", r("/branches/{branch}")),
        &p("/branches/main"),
        None,
        200,
    )
    .await;

    // Review comments and reviews.
    let comments = c
        .call(
            &format!("GET {}", r("/pulls/{number}/comments")),
            &p("/pulls/1/comments"),
            None,
            200,
        )
        .await;
    let comment = id(&comments, "/0/id");
    let new = json!({ "body": "new", "path": "src/lib.rs", "line": 5, "side": "RIGHT", "commit_id": head });
    let created = c
        .call(
            &format!("POST {}", r("/pulls/{number}/comments")),
            &p("/pulls/1/comments"),
            Some(new),
            201,
        )
        .await;
    let created = id(&created, "/id");
    c.call(
        &format!("GET {}", r("/pulls/comments/{comment_id}")),
        &p(&format!("/pulls/comments/{comment}")),
        None,
        200,
    )
    .await;
    c.call(
        &format!(
            "POST {}",
            r("/pulls/{number}/comments/{comment_id}/replies")
        ),
        &p(&format!("/pulls/1/comments/{comment}/replies")),
        Some(json!({ "body": "reply" })),
        201,
    )
    .await;
    let reviews_route = r("/pulls/{number}/reviews");
    let reviews = c
        .call(
            &format!("GET {reviews_route}"),
            &p("/pulls/1/reviews"),
            None,
            200,
        )
        .await;
    let review = id(&reviews, "/0/id");
    let comment_review = json!({ "body": "fine", "event": "COMMENT" });
    c.call(
        &format!("POST {reviews_route}"),
        &p("/pulls/1/reviews"),
        Some(comment_review),
        200,
    )
    .await;
    let pending = c
        .call(
            &format!("POST {reviews_route}"),
            &p("/pulls/1/reviews"),
            Some(json!({ "body": "later" })),
            200,
        )
        .await;
    let pending = id(&pending, "/id");
    c.call(
        &format!("GET {}", r("/pulls/{number}/reviews/{review_id}")),
        &p(&format!("/pulls/1/reviews/{review}")),
        None,
        200,
    )
    .await;
    c.call(
        &format!("GET {}", r("/pulls/{number}/reviews/{review_id}/comments")),
        &p(&format!("/pulls/1/reviews/{review}/comments")),
        None,
        200,
    )
    .await;
    c.call(
        &format!("POST {}", r("/pulls/{number}/reviews/{review_id}/events")),
        &p(&format!("/pulls/1/reviews/{pending}/events")),
        Some(json!({ "event": "COMMENT", "body": "now" })),
        200,
    )
    .await;

    // Review requests: asked, listed (the PR shows them too), withdrawn.
    let requested = r("/pulls/{number}/requested_reviewers");
    let asked = c
        .call(
            &format!("POST {requested}"),
            &p("/pulls/1/requested_reviewers"),
            Some(json!({ "reviewers": ["bob"] })),
            201,
        )
        .await;
    assert_eq!(asked["requested_reviewers"][0]["login"], "bob", "{asked}");
    let listed = c
        .call(
            &format!("GET {requested}"),
            &p("/pulls/1/requested_reviewers"),
            None,
            200,
        )
        .await;
    assert_eq!(listed["users"][0]["login"], "bob", "{listed}");
    let withdrawn = c
        .call(
            &format!("DELETE {requested}"),
            &p("/pulls/1/requested_reviewers"),
            Some(json!({ "reviewers": ["bob"] })),
            200,
        )
        .await;
    assert_eq!(withdrawn["requested_reviewers"], json!([]), "{withdrawn}");

    // Conversation comments and labels.
    let issue_comments = c
        .call(
            &format!("GET {}", r("/issues/{number}/comments")),
            &p("/issues/1/comments"),
            None,
            200,
        )
        .await;
    let issue_comment = id(&issue_comments, "/0/id");
    c.call(
        &format!("POST {}", r("/issues/{number}/comments")),
        &p("/issues/1/comments"),
        Some(json!({ "body": "hello" })),
        201,
    )
    .await;
    c.call(
        &format!("GET {}", r("/issues/comments/{comment_id}")),
        &p(&format!("/issues/comments/{issue_comment}")),
        None,
        200,
    )
    .await;
    c.call(
        &format!("GET {}", r("/issues/{number}/labels")),
        &p("/issues/1/labels"),
        None,
        200,
    )
    .await;
    c.call(
        &format!("POST {}", r("/issues/{number}/labels")),
        &p("/issues/1/labels"),
        Some(json!({ "labels": ["bug"] })),
        200,
    )
    .await;
    c.call(
        &format!("DELETE {}", r("/issues/{number}/labels/{name}")),
        &p("/issues/1/labels/bug"),
        None,
        200,
    )
    .await;
    // The `labeled` and `unlabeled` events the two calls above recorded.
    let events = c
        .call(
            &format!("GET {}", r("/issues/{number}/events")),
            &p("/issues/1/events"),
            None,
            200,
        )
        .await;
    let kinds: Vec<&str> = events
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["event"].as_str())
        .collect();
    // Each against its own shape (`labeled-issue-event`, …): the route's
    // `anyOf` of every event kind takes almost anything.
    for event in events.as_array().unwrap() {
        let name = format!("{}-issue-event", event["event"].as_str().unwrap());
        for violation in violations(&component_schema(&name), event) {
            c.failures.push(format!("{name}: {violation}"));
        }
    }
    assert!(kinds.ends_with(&["labeled", "unlabeled"]), "{events}");
    let set = c
        .call(
            &format!("PUT {}", r("/issues/{number}/labels")),
            &p("/issues/1/labels"),
            Some(json!({ "labels": ["enhancement", "triaged"] })),
            200,
        )
        .await;
    assert_eq!(set.as_array().map(Vec::len), Some(2), "{set}");

    // CI.
    let runs = c
        .call(
            &format!("GET {}", r("/commits/{ref}/check-runs")),
            &p(&format!("/commits/{head}/check-runs")),
            None,
            200,
        )
        .await;
    let check_run = id(&runs, "/check_runs/0/id");
    let suite = id(&runs, "/check_runs/0/check_suite/id");
    c.call(
        &format!("GET {}", r("/commits/{ref}/status")),
        &p(&format!("/commits/{head}/status")),
        None,
        200,
    )
    .await;
    let status = json!({ "state": "success", "context": "ci/extra", "description": "ok", "target_url": "http://ci.example/1" });
    c.call(
        &format!("POST {}", r("/statuses/{sha}")),
        &p(&format!("/statuses/{head}")),
        Some(status),
        201,
    )
    .await;
    c.call(
        &format!("GET {}", r("/commits/{ref}/statuses")),
        &p(&format!("/commits/{head}/statuses")),
        None,
        200,
    )
    .await;
    c.call(
        &format!("GET {}", r("/statuses/{sha}")),
        &p(&format!("/statuses/{head}")),
        None,
        200,
    )
    .await;
    c.call(
        &format!("GET {}", r("/check-suites/{check_suite_id}")),
        &p(&format!("/check-suites/{suite}")),
        None,
        200,
    )
    .await;
    c.call(
        &format!("GET {}", r("/check-runs/{check_run_id}")),
        &p(&format!("/check-runs/{check_run}")),
        None,
        200,
    )
    .await;
    c.call(
        &format!(
            "GET {}",
            r("/branches/{branch}/protection/required_status_checks")
        ),
        &p("/branches/main/protection/required_status_checks"),
        None,
        200,
    )
    .await;
    c.call(
        &format!("GET {}", r("/rules/branches/{branch}")),
        &p("/rules/branches/main"),
        None,
        200,
    )
    .await;
    let workflow_runs = c
        .call(
            &format!("GET {}", r("/actions/runs")),
            &p("/actions/runs"),
            None,
            200,
        )
        .await;
    let run = id(&workflow_runs, "/workflow_runs/0/id");
    c.call(
        &format!("GET {}", r("/actions/runs/{run_id}")),
        &p(&format!("/actions/runs/{run}")),
        None,
        200,
    )
    .await;
    let jobs = c
        .call(
            &format!("GET {}", r("/actions/runs/{run_id}/jobs")),
            &p(&format!("/actions/runs/{run}/jobs")),
            None,
            200,
        )
        .await;
    let job = id(&jobs, "/jobs/0/id");
    c.call(
        &format!("GET {}", r("/actions/jobs/{job_id}")),
        &p(&format!("/actions/jobs/{job}")),
        None,
        200,
    )
    .await;
    // `lint` (`exit 1`) failed: its log ends with the runner's error.
    let lint = jobs["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["name"] == "lint")
        .map(|j| id(j, "/id"))
        .unwrap();
    let log = c
        .call_redirect(
            &format!("GET {}", r("/actions/jobs/{job_id}/logs")),
            &p(&format!("/actions/jobs/{lint}/logs")),
        )
        .await;
    assert!(
        log.ends_with(" ##[error]Process completed with exit code 1.\n"),
        "{log}"
    );
    c.call(
        &format!("POST {}", r("/actions/runs/{run_id}/rerun-failed-jobs")),
        &p(&format!("/actions/runs/{run}/rerun-failed-jobs")),
        None,
        201,
    )
    .await;
    c.settle().await;
    c.call(
        &format!("GET {}", r("/actions/runs/{run_id}/attempts/{attempt}")),
        &p(&format!("/actions/runs/{run}/attempts/1")),
        None,
        200,
    )
    .await;
    c.call(
        &format!("POST {}", r("/actions/runs/{run_id}/rerun")),
        &p(&format!("/actions/runs/{run}/rerun")),
        None,
        201,
    )
    .await;
    c.settle().await;

    // Deletes last: what they remove was read above.
    c.call_empty(
        &format!("DELETE {}", r("/pulls/comments/{comment_id}")),
        &p(&format!("/pulls/comments/{created}")),
        204,
    )
    .await;
    c.call_empty(
        &format!("DELETE {}", r("/issues/comments/{comment_id}")),
        &p(&format!("/issues/comments/{issue_comment}")),
        204,
    )
    .await;

    let table: BTreeSet<String> = rest_route_table().into_iter().collect();
    let unvalidated: Vec<&String> = table.difference(&c.called).collect();
    assert!(
        unvalidated.is_empty(),
        "REST routes the OpenAPI test does not call and validate: {unvalidated:?}"
    );
    let unknown: Vec<&String> = c.called.difference(&table).collect();
    assert!(
        unknown.is_empty(),
        "called routes not in the table: {unknown:?}"
    );
    assert!(
        c.failures.is_empty(),
        "{} bodies differ from GitHub's OpenAPI schemas:\n{}",
        c.failures.len(),
        c.failures.join("\n")
    );
}

#[tokio::test]
async fn every_rest_route_validates_against_the_openapi_schema_at_the_root() {
    validate_every_route(false).await;
}

#[tokio::test]
async fn every_rest_route_validates_against_the_openapi_schema_under_api_v3() {
    validate_every_route(true).await;
}

#[test]
fn nullable_becomes_a_null_alternative() {
    let mut schema =
        json!({ "type": "object", "properties": { "a": { "type": "string", "nullable": true } } });
    nullable_to_json_schema(&mut schema);
    assert!(violations(&schema, &json!({ "a": null })).is_empty());
    assert!(!violations(&schema, &json!({ "a": 1 })).is_empty());
}
