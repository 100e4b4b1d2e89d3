//! Sequential round trips of a snapshot: a loopback GitHub that answers in
//! steps of a fixed latency. A request is answered at the end of the step in
//! which it arrived (the first step starts with the first request), so the
//! requests asked together share a step, and a request asked after another
//! was answered lands in a later one, whatever the cost of building and
//! decoding an answer (under a step). The step of the last answer is the
//! number of sequential round trips; against a real forge each costs 0.3–1 s,
//! so they are the wall time. The test counts them, it does not time them.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderValue, Method, Uri};
use axum::response::IntoResponse;
use axum::Router;
use serde_json::{json, Value};
use shepherd_core::model::RepoRef;
use shepherd_forge::{Forge, GitHubClient, GitHubEndpoints, Token};

use crate::github_fixtures::review_comment;
use crate::support::fast_config;

/// One step: long against the cost of building an answer (the fake) and
/// decoding it (the client), both unoptimized in a test build.
const STEP: Duration = Duration::from_millis(300);

/// One request as the server saw it.
#[derive(Debug, Clone)]
struct Span {
    operation: String,
    arrived: Instant,
    answered: Instant,
    /// The step it was answered at (the first is 1).
    step: u32,
}

/// The pull request the fake serves: per thread, its number of comments.
struct Model {
    threads: Vec<usize>,
    issue_comments: usize,
    /// How many submitted reviews (REST, 100 to a page); every third has a body.
    reviews: usize,
}

fn page(cursor: &Value, len: usize, size: usize) -> (std::ops::Range<usize>, Value) {
    let start = cursor
        .as_str()
        .map(|c| c.trim_start_matches('c').parse::<usize>().unwrap())
        .unwrap_or(0);
    let end = (start + size).min(len);
    let info = json!({ "hasNextPage": end < len, "endCursor": format!("c{end}") });
    (start..end, info)
}

fn comments(thread: usize, range: std::ops::Range<usize>, total: usize, info: Value) -> Value {
    let nodes: Vec<Value> = range.map(|i| review_comment(thread, i)).collect();
    json!({ "totalCount": total, "pageInfo": info, "nodes": nodes })
}

impl Model {
    fn answer(&self, operation: &str, vars: &Value) -> Value {
        let pr = |inner: Value| json!({ "repository": { "pullRequest": inner } });
        let data = match operation {
            "PullRequestState" => json!({
                "viewer": { "login": "me" },
                "repository": { "pullRequest": {
                    "id": "PR_1", "number": 1, "title": "t", "url": "u", "state": "OPEN",
                    "isDraft": false, "headRefName": "h", "headRefOid": "0".repeat(40),
                    "baseRefName": "main", "isCrossRepository": false,
                    "author": { "__typename": "User", "login": "me" },
                    "reviews": { "totalCount": 0, "nodes": [] },
                } },
            }),
            "ReviewThreads" => {
                let (range, info) = page(&vars["cursor"], self.threads.len(), 100);
                let nodes: Vec<Value> = range
                    .map(|t| {
                        let total = self.threads[t];
                        let (first, first_info) = page(&Value::Null, total, 100);
                        json!({
                            "id": format!("PRRT_{t}"), "isResolved": false, "isOutdated": false,
                            "path": "src/lib.rs", "line": 1, "startLine": null,
                            "originalLine": 1, "originalStartLine": null,
                            "diffSide": "RIGHT", "subjectType": "LINE",
                            "viewerCanReply": true, "viewerCanResolve": true,
                            "comments": comments(t, first, total, first_info),
                        })
                    })
                    .collect();
                pr(json!({ "reviewThreads": { "pageInfo": info, "nodes": nodes } }))
            }
            "ThreadComments" | "ThreadCommentsTail" => {
                let t: usize = vars["id"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches("PRRT_")
                    .parse()
                    .unwrap();
                let total = self.threads[t];
                let (range, info) = if operation == "ThreadCommentsTail" {
                    let info = json!({ "hasNextPage": false, "endCursor": format!("c{total}") });
                    (total.saturating_sub(100)..total, info)
                } else {
                    page(&vars["cursor"], total, 100)
                };
                json!({ "node": { "comments": comments(t, range, total, info) } })
            }
            "PullRequestComments" => {
                let (range, info) = page(&vars["cursor"], self.issue_comments, 100);
                let nodes: Vec<Value> = range
                    .map(|i| {
                        json!({
                            "id": format!("IC_{i}"), "databaseId": i, "body": "hi", "url": "u",
                            "createdAt": "2024-05-02T10:00:00Z",
                            "author": { "__typename": "User", "login": "u" },
                        })
                    })
                    .collect();
                pr(json!({ "comments": { "pageInfo": info, "nodes": nodes } }))
            }
            other => panic!("unexpected operation {other}"),
        };
        json!({ "data": data })
    }
}

impl Model {
    /// `GET /repos/o/r/pulls/1/reviews?page=K`: the page, and GitHub's `Link`.
    fn reviews_page(&self, base: &str, query: &str) -> (Value, Option<String>) {
        let page: usize = query
            .split('&')
            .find_map(|p| p.strip_prefix("page="))
            .map_or(1, |p| p.parse().unwrap());
        let last = self.reviews.div_ceil(100).max(1);
        let start = (page - 1) * 100;
        let nodes: Vec<Value> = (start..(start + 100).min(self.reviews))
            .map(|i| {
                json!({
                    "id": i, "node_id": format!("PRR_{i}"),
                    "user": { "login": "rev", "type": "User" },
                    "body": if i % 3 == 0 { format!("review {i}") } else { String::new() },
                    "state": "COMMENTED",
                    "html_url": format!("https://github.com/o/r/pull/1#pullrequestreview-{i}"),
                    "submitted_at": "2024-05-02T10:00:00Z",
                })
            })
            .collect();
        let url = |n: usize| format!("<{base}/repos/o/r/pulls/1/reviews?per_page=100&page={n}>");
        let link = (page < last).then(|| {
            format!(
                "{}; rel=\"next\", {}; rel=\"last\"",
                url(page + 1),
                url(last)
            )
        });
        (Value::Array(nodes), link)
    }
}

/// A loopback GitHub serving `model` in steps of [`STEP`]; its spans.
async fn serve(model: Model) -> (String, Arc<Mutex<Vec<Span>>>) {
    let spans: Arc<Mutex<Vec<Span>>> = Arc::default();
    let model = Arc::new(model);
    let start: Arc<OnceLock<Instant>> = Arc::default();
    let recorded = Arc::clone(&spans);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let base = format!("http://{addr}");
    let app = Router::new().fallback(move |method: Method, uri: Uri, body: Bytes| {
        let (model, spans, start, base) = (
            Arc::clone(&model),
            Arc::clone(&recorded),
            Arc::clone(&start),
            base.clone(),
        );
        async move {
            let arrived = Instant::now();
            let start = *start.get_or_init(|| arrived);
            let step = (arrived.duration_since(start).as_nanos() / STEP.as_nanos()) as u32 + 1;
            let (operation, answer, link) = if method == Method::GET {
                assert_eq!(uri.path(), "/repos/o/r/pulls/1/reviews", "unexpected GET");
                let (page, link) = model.reviews_page(&base, uri.query().unwrap_or_default());
                ("GET reviews".to_owned(), page.to_string(), link)
            } else {
                let request: Value = serde_json::from_slice(&body).unwrap();
                let operation = request["operationName"].as_str().unwrap().to_owned();
                let answer = model.answer(&operation, &request["variables"]).to_string();
                (operation, answer, None)
            };
            tokio::time::sleep_until((start + STEP * step).into()).await;
            spans.lock().unwrap().push(Span {
                operation,
                arrived,
                answered: Instant::now(),
                step,
            });
            let mut response = ([("content-type", "application/json")], answer).into_response();
            if let Some(link) = link {
                response
                    .headers_mut()
                    .insert("link", HeaderValue::from_str(&link).unwrap());
            }
            response
        }
    });
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), spans)
}

/// The sequential round trips: the step of the last answer.
fn steps(spans: &[Span]) -> u32 {
    spans.iter().map(|s| s.step).max().unwrap_or(0)
}

/// Fails unless a snapshot of `threads` threads took exactly ceil(N/100) + 1
/// sequential round trips, with at most the client's 4 requests in flight.
#[track_caller]
fn assert_critical_path(spans: &[Span], threads: usize, ops: &[String]) {
    assert_eq!(
        steps(spans) as usize,
        threads.div_ceil(100) + 1,
        "sequential round trips = ceil(N/100) + 1: {ops:?}"
    );
    assert!(most_in_flight(spans) <= 4, "{}", most_in_flight(spans));
}

/// The most requests in flight at one time.
fn most_in_flight(spans: &[Span]) -> usize {
    spans
        .iter()
        .map(|s| {
            spans
                .iter()
                .filter(|o| o.arrived <= s.arrived && s.arrived < o.answered)
                .count()
        })
        .max()
        .unwrap_or(0)
}

fn client(url: &str) -> GitHubClient {
    let repo = RepoRef {
        host: "127.0.0.1".into(),
        owner: "o".into(),
        name: "r".into(),
    };
    let endpoints = GitHubEndpoints::from_api_url(url).unwrap();
    GitHubClient::with_config(repo, endpoints, Token::new("t"), fast_config()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_github_snapshot_takes_its_thread_pages_and_one_step_more() {
    // 250 threads: 3 pages. Thread 5 (first page) has 260 comments, thread
    // 240 (last page) 150; 150 conversation comments take 2 pages.
    let mut threads = vec![1; 250];
    threads[5] = 260;
    threads[240] = 150;
    let (url, spans) = serve(Model {
        threads,
        issue_comments: 150,
        reviews: 1,
    })
    .await;
    let snapshot = client(&url).snapshot(1).await.unwrap();

    assert_eq!(snapshot.threads.len(), 250);
    let ids: Vec<&str> = snapshot.threads[5]
        .comments
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    let want: Vec<String> = (0..260).map(|i| format!("PRRC_5_{i}")).collect();
    assert_eq!(
        ids, want,
        "every comment of the long thread, once, in order"
    );
    assert_eq!(snapshot.threads[240].comments.len(), 150);
    assert_eq!(
        snapshot.comments.len(),
        151,
        "150 conversation comments, 1 review body"
    );

    let spans = spans.lock().unwrap().clone();
    let t0 = spans.iter().map(|s| s.arrived).min().unwrap();
    let ops: Vec<String> = spans
        .iter()
        .map(|s| {
            let ms = |t: Instant| t.duration_since(t0).as_millis();
            let (a, b) = (ms(s.arrived), ms(s.answered));
            format!("{} {a}..{b} step {}", s.operation, s.step)
        })
        .collect();
    // PR state, 3 thread pages, thread 5's next and last pages, thread 240's
    // next page, 2 pages of conversation comments, 1 of reviews.
    assert_eq!(spans.len(), 10, "{ops:?}");
    assert_critical_path(&spans, 250, &ops);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_reviews_stay_off_the_critical_path_of_a_snapshot() {
    // As on GitHub, every standalone review comment is its own review: 1,000
    // threads with 3 comments each come with 3,000 reviews (30 pages, three
    // times the thread pages). Read one after the other they would take 30
    // steps; 3 at a time beside the thread pages, 11.
    let threads = vec![1; 1000];
    let (url, spans) = serve(Model {
        threads,
        issue_comments: 0,
        reviews: 3000,
    })
    .await;
    let snapshot = client(&url).snapshot(1).await.unwrap();
    assert_eq!(snapshot.threads.len(), 1000);
    let ids: Vec<&str> = snapshot.comments.iter().map(|c| c.id.as_str()).collect();
    let want: Vec<String> = (0..3000)
        .filter(|i| i % 3 == 0)
        .map(|i| format!("PRR_{i}"))
        .collect();
    assert_eq!(ids, want, "every review body once, in the forge's order");

    let spans = spans.lock().unwrap().clone();
    let ops: Vec<String> = spans
        .iter()
        .map(|s| format!("{} step {}", s.operation, s.step))
        .collect();
    let reviews = spans
        .iter()
        .filter(|s| s.operation == "GET reviews")
        .count();
    assert_eq!(reviews, 30, "{ops:?}");
    assert_critical_path(&spans, 1000, &ops);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_thread_pages_keep_their_slot_when_every_other_read_is_busy() {
    // 500 threads (5 pages), a long thread on each of the first four pages,
    // 300 conversation comments (3 pages) and 600 reviews (6 pages): more
    // reads beside the thread pages than the shared slots take at once. The
    // thread pages have the lead's slot, so none of them waits for a slot
    // and the snapshot still takes its thread pages and one step more.
    let mut threads = vec![1; 500];
    for t in [10, 110, 210, 310] {
        threads[t] = 150;
    }
    let (url, spans) = serve(Model {
        threads,
        issue_comments: 300,
        reviews: 600,
    })
    .await;
    let snapshot = client(&url).snapshot(1).await.unwrap();
    assert_eq!(snapshot.threads.len(), 500);
    assert_eq!(snapshot.threads[310].comments.len(), 150);
    assert_eq!(snapshot.comments.len(), 300 + 200);

    let spans = spans.lock().unwrap().clone();
    let ops: Vec<String> = spans
        .iter()
        .map(|s| format!("{} step {}", s.operation, s.step))
        .collect();
    let thread_steps: Vec<u32> = spans
        .iter()
        .filter(|s| s.operation == "ReviewThreads")
        .map(|s| s.step)
        .collect();
    assert_eq!(
        thread_steps,
        vec![1, 2, 3, 4, 5],
        "one thread page per step: {ops:?}"
    );
    let limit = 500usize.div_ceil(100) + 1;
    assert!(
        steps(&spans) as usize <= limit,
        "sequential round trips = ceil(N/100) + 1 at most: {ops:?}"
    );
    assert!(most_in_flight(&spans) <= 4, "{}", most_in_flight(&spans));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_of_up_to_300_comments_costs_one_step_after_its_page() {
    let (url, spans) = serve(Model {
        threads: vec![290],
        issue_comments: 0,
        reviews: 0,
    })
    .await;
    let threads = client(&url).review_threads(1).await.unwrap();
    assert_eq!(threads[0].comments.len(), 290);
    assert_eq!(threads[0].comments[289].id, "PRRC_0_289");
    let spans = spans.lock().unwrap().clone();
    assert_eq!(
        spans.len(),
        3,
        "the thread page, then the next and the last"
    );
    assert_eq!(steps(&spans), 2);
}

#[test]
fn in_flight_counts_overlapping_requests() {
    let t = Instant::now();
    let ms = |n: u64| t + Duration::from_millis(n);
    let span = |a: u64, b: u64| Span {
        operation: String::new(),
        arrived: ms(a),
        answered: ms(b),
        step: 1,
    };
    assert_eq!(most_in_flight(&[span(0, 10), span(10, 20)]), 1);
    assert_eq!(most_in_flight(&[span(0, 10), span(5, 15), span(12, 20)]), 2);
}
