//! Transport behaviour against a scripted local responder: retries, rate
//! limits, error mapping, headers, and that the token never leaks.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use shepherd_core::model::RepoRef;
use shepherd_forge::{Forge, ForgeError, GitHubClient, GitHubEndpoints, RetryPolicy, Token};

use crate::support::{all_text, client_at, fast_config, gap, Reply, Responder, SECRET};

fn pr_state_ok() -> Reply {
    let fixture: Value =
        serde_json::from_str(include_str!("../fixtures/pull_request_state.json")).unwrap();
    Reply::json(200, fixture)
}

fn status(code: u16, message: &str) -> Reply {
    Reply::json(
        code,
        json!({ "message": message, "documentation_url": "https://docs.github.com/rest" }),
    )
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[tokio::test]
async fn retries_a_502_then_succeeds() {
    let server = Responder::start(vec![
        status(502, "Bad Gateway"),
        status(502, "Bad Gateway"),
        pr_state_ok(),
    ])
    .await;
    // The client is used as the engine will: behind `Arc<dyn Forge>`.
    let client: Arc<dyn Forge> = Arc::new(client_at(&server.url()));
    let pr = client.pull_request(42).await.unwrap();
    assert_eq!(pr.number, 42);
    assert!(pr.viewer_has_pending_review);
    assert_eq!(client.viewer().await.unwrap(), "shepherd-bot");
    assert_eq!(
        server.count(),
        3,
        "two failures, one success, viewer cached"
    );

    let seen = server.seen();
    let request = &seen[2];
    assert_eq!(request.method, "POST");
    assert_eq!(request.uri.path(), "/graphql");
    let headers = &request.headers;
    assert_eq!(
        headers["authorization"],
        format!("Bearer {SECRET}").as_str()
    );
    assert_eq!(headers["accept"], "application/vnd.github+json");
    assert_eq!(headers["x-github-api-version"], "2022-11-28");
    assert!(headers["user-agent"]
        .to_str()
        .unwrap()
        .starts_with("shepherd/"));
    let body: Value = serde_json::from_slice(&request.body).unwrap();
    assert_eq!(body["operationName"], "PullRequestState");
    assert!(body["query"]
        .as_str()
        .unwrap()
        .contains("query PullRequestState("));
    assert_eq!(
        body["variables"],
        json!({ "owner": "octo-org", "name": "widgets", "number": 42 })
    );
}

#[tokio::test]
async fn gives_up_after_the_last_attempt() {
    let server = Responder::start(vec![status(503, "unavailable"); 6]).await;
    let err = client_at(&server.url()).pull_request(42).await.unwrap_err();
    assert_eq!(server.count(), 4, "max_attempts counts the first try");
    match &err {
        ForgeError::Http {
            request,
            status,
            message,
        } => {
            assert_eq!(request, "GraphQL PullRequestState");
            assert_eq!(*status, 503);
            assert_eq!(message, "unavailable");
        }
        other => panic!("expected Http, got {other:?}"),
    }
}

#[tokio::test]
async fn retry_after_is_honoured() {
    let server = Responder::start(vec![
        status(429, "You have exceeded a secondary rate limit").header("retry-after", "1"),
        pr_state_ok(),
    ])
    .await;
    client_at(&server.url()).pull_request(42).await.unwrap();
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    let waited = gap(&seen, 0);
    assert!(
        waited >= Duration::from_millis(950),
        "waited only {waited:?}"
    );
}

#[tokio::test]
async fn a_rate_limit_reset_beyond_the_maximum_wait_fails_at_once() {
    let reset = now() + 3600;
    let server = Responder::start(vec![
        status(403, "API rate limit exceeded for user ID 1.")
            .header("x-ratelimit-remaining", "0")
            .header("x-ratelimit-reset", reset.to_string()),
        pr_state_ok(),
    ])
    .await;
    let err = client_at(&server.url()).pull_request(42).await.unwrap_err();
    assert_eq!(server.count(), 1, "no retry when the wait is too long");
    let ForgeError::RateLimited {
        request, reset_at, ..
    } = &err
    else {
        panic!("expected RateLimited, got {err:?}");
    };
    assert_eq!(request, "GraphQL PullRequestState");
    assert_eq!(*reset_at, Some(reset));
    let text = err.to_string();
    assert!(text.contains("resets in"), "{text}");
    assert!(text.contains(&reset.to_string()), "{text}");
}

#[tokio::test]
async fn a_plain_403_is_forbidden_and_not_retried() {
    let server =
        Responder::start(vec![status(403, "Resource not accessible by integration")]).await;
    let err = client_at(&server.url()).pull_request(42).await.unwrap_err();
    assert_eq!(server.count(), 1);
    assert!(matches!(err, ForgeError::Forbidden { .. }), "{err:?}");
    assert!(err
        .to_string()
        .contains("Resource not accessible by integration"));
}

#[tokio::test]
async fn unauthorized_names_the_request_and_what_to_check_not_the_token() {
    let server = Responder::start(vec![status(401, "Bad credentials")]).await;
    let err = client_at(&server.url()).pull_request(42).await.unwrap_err();
    assert_eq!(server.count(), 1, "a 401 is not retried");
    assert!(matches!(err, ForgeError::Unauthorized { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("rejected (401)"), "{text}");
    assert!(text.contains("GraphQL PullRequestState"), "{text}");
    assert!(text.contains("GITHUB_TOKEN"), "{text}");
    assert!(!all_text(&err).contains(SECRET));
}

#[tokio::test]
async fn graphql_errors_in_a_200_are_errors() {
    let server = Responder::start(vec![Reply::json(
        200,
        json!({
            "data": { "viewer": { "login": "shepherd-bot" }, "repository": { "pullRequest": null } },
            "errors": [{
                "type": "NOT_FOUND",
                "path": ["repository", "pullRequest"],
                "message": "Could not resolve to a PullRequest with the number of 42."
            }]
        }),
    )])
    .await;
    let err = client_at(&server.url()).pull_request(42).await.unwrap_err();
    assert_eq!(server.count(), 1, "GraphQL errors are not retried");
    match &err {
        ForgeError::GraphQl {
            operation,
            messages,
        } => {
            assert_eq!(operation, "PullRequestState");
            assert_eq!(
                messages,
                &["Could not resolve to a PullRequest with the number of 42."]
            );
        }
        other => panic!("expected GraphQl, got {other:?}"),
    }
}

/// Issue 11.6: GitHub's untyped "Something went wrong" on a query is
/// transient: the read is retried, with backoff, and succeeds.
#[tokio::test]
async fn an_untyped_graphql_error_on_a_read_is_retried() {
    let server = Responder::start(vec![
        Reply::json(
            200,
            json!({ "data": null, "errors": [{ "message": "Something went wrong while executing your query. This may be the result of a timeout, or it could be a GitHub bug." }] }),
        ),
        pr_state_ok(),
    ])
    .await;
    let pr = client_at(&server.url()).pull_request(42).await.unwrap();
    assert_eq!(pr.number, 42);
    assert_eq!(server.count(), 2, "one failure, one retry");
}

/// A mutation answered with a GraphQL error may have been carried out: it
/// is never resent blindly.
#[tokio::test]
async fn an_untyped_graphql_error_on_a_mutation_is_not_retried() {
    let server = Responder::start(vec![
        Reply::json(
            200,
            json!({ "data": null, "errors": [{ "message": "Something went wrong while executing your query." }] }),
        ),
        Reply::json(
            200,
            json!({ "data": { "resolveReviewThread": { "thread": { "id": "T", "isResolved": true } } } }),
        ),
    ])
    .await;
    let err = client_at(&server.url())
        .resolve_thread("PRRT_x")
        .await
        .unwrap_err();
    assert!(matches!(err, ForgeError::GraphQl { .. }), "{err:?}");
    assert_eq!(server.count(), 1, "a mutation is sent once");
}

#[tokio::test]
async fn a_graphql_rate_limit_is_retried_after_its_wait() {
    let server = Responder::start(vec![
        Reply::json(
            200,
            json!({ "errors": [{ "type": "RATE_LIMITED", "message": "API rate limit exceeded" }] }),
        )
        .header("retry-after", "0"),
        pr_state_ok(),
    ])
    .await;
    client_at(&server.url()).pull_request(42).await.unwrap();
    assert_eq!(server.count(), 2);
}

#[tokio::test]
async fn no_error_ever_shows_the_token() {
    // The forge echoing the token back must not carry it into our messages.
    let echo = format!("token {SECRET} is bad");
    let server = Responder::start(vec![
        status(401, &echo),
        status(403, &echo),
        status(404, &echo),
        status(422, &echo),
        Reply::json(200, json!({ "errors": [{ "message": echo }] })),
        Reply::json(200, json!({ "data": { "unexpected": true } })),
    ])
    .await;
    let mut config = fast_config();
    config.retry = RetryPolicy::none();
    let repo = RepoRef {
        host: "h".into(),
        owner: "o".into(),
        name: "r".into(),
    };
    let endpoints = GitHubEndpoints::from_api_url(&server.url()).unwrap();
    let client = GitHubClient::with_config(repo, endpoints, Token::new(SECRET), config).unwrap();

    let mut errors = Vec::new();
    for _ in 0..4 {
        errors.push(
            client
                .rest_get::<Value>("/repos/o/r/pulls/1", &[("per_page", "1")])
                .await
                .unwrap_err(),
        );
    }
    errors.push(client.pull_request(1).await.unwrap_err());
    errors.push(client.pull_request(1).await.unwrap_err());

    // A network failure: a port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let dead = client_at(&format!("http://127.0.0.1:{port}"));
    errors.push(dead.review_threads(1).await.unwrap_err());

    let kinds: Vec<&str> = errors
        .iter()
        .map(|e| match e {
            ForgeError::Unauthorized { .. } => "401",
            ForgeError::Forbidden { .. } => "403",
            ForgeError::NotFound { .. } => "404",
            ForgeError::Http { .. } => "http",
            ForgeError::GraphQl { .. } => "graphql",
            ForgeError::Decode { .. } => "decode",
            ForgeError::Network { .. } => "network",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        ["401", "403", "404", "http", "graphql", "decode", "network"]
    );
    for err in &errors {
        let text = all_text(err);
        assert!(!text.contains(SECRET), "token leaked: {text}");
        assert!(!text.contains("per_page"), "query string leaked: {text}");
    }
    assert!(
        errors[2].to_string().contains("GET /repos/o/r/pulls/1"),
        "{}",
        errors[2]
    );
    assert!(errors[2].to_string().contains("no access"), "{}", errors[2]);
    assert!(errors[3].to_string().contains("***"), "{}", errors[3]);
    assert!(
        errors[6].to_string().contains("GraphQL ReviewThreads"),
        "{}",
        errors[6]
    );
    assert!(!format!("{client:?}").contains(SECRET));
}

#[tokio::test]
async fn rest_get_all_follows_next_links_on_the_same_origin_only() {
    let two_pages = Responder::start_with(|base| {
        vec![
            Reply::json(200, json!([{ "id": 1 }, { "id": 2 }]))
                .header("link", format!("<{base}/repos/o/r/pulls?page=2&per_page=100>; rel=\"next\", <{base}/repos/o/r/pulls?page=2&per_page=100>; rel=\"last\"")),
            Reply::json(200, json!([{ "id": 3 }])),
        ]
    })
    .await;
    let client = client_at(&two_pages.url());
    let items: Vec<Value> = client
        .rest_get_all("/repos/o/r/pulls", &[("state", "open")])
        .await
        .unwrap();
    assert_eq!(items.len(), 3);
    let seen = two_pages.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].method, "GET");
    assert_eq!(seen[0].uri.path(), "/repos/o/r/pulls");
    assert_eq!(seen[0].uri.query(), Some("state=open&per_page=100"));
    assert_eq!(seen[1].uri.query(), Some("page=2&per_page=100"));
    assert_eq!(seen[0].headers["x-github-api-version"], "2022-11-28");

    let elsewhere = Responder::start(vec![Reply::json(200, json!([{ "id": 1 }]))
        .header("link", "<http://evil.example:1/steal?page=2>; rel=\"next\"")])
    .await;
    let err = client_at(&elsewhere.url())
        .rest_get_all::<Value>("/repos/o/r/pulls", &[])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("another origin"), "{err}");
    assert_eq!(elsewhere.count(), 1);
}
