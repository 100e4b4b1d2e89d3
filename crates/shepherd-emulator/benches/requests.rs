//! The emulator's own costs at 100, 1,000 and 10,000 review threads (a few
//! threads of 150–260 comments): how long `Emulator::start` takes, and the
//! time per request, over real HTTP on loopback, of
//!
//! - `pr-number`: `pullRequest(number: 1) { number }` (nothing of the PR's
//!   size is asked for);
//! - `threads-first`, `threads-middle`, `threads-last`: the first, the
//!   middle and the last page of 100 review threads, each with its first
//!   100 comments: Shepherd's own `ReviewThreads` document
//!   (`shepherd_forge::github::queries::REVIEW_THREADS`), by cursor;
//! - `node-thread`: `node(id:)` of one long thread, its second page of
//!   comments (Shepherd's `ThreadComments` document);
//! - `rest-pull`: `GET /repos/{owner}/{repo}/pulls/1`.
//!
//! Run with `cargo bench -p shepherd-emulator --bench requests` (release
//! build). Prints min, median and max per measurement. A measurement is
//! the request sent and the whole answer received as bytes (the client's
//! JSON parsing is not timed); each answer is then checked to be what was
//! asked for.
//!
//! `SHEPHERD_BENCH_SIZES=10000` and `SHEPHERD_BENCH_REQUESTS=5` narrow a run
//! (for a profiler such as `valgrind --tool=callgrind`, which counts
//! instructions repeatably on a loaded machine).

// A benchmark harness: a failed setup is a failed benchmark, so it may panic.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use shepherd_emulator::{Emulator, Scenario};
use shepherd_forge::github::queries::{REVIEW_THREADS, THREAD_COMMENTS};

const SIZES: [usize; 3] = [100, 1_000, 10_000];
const STARTS: usize = 3;
const REQUESTS: usize = 30;

/// The sizes to run: `SHEPHERD_BENCH_SIZES` (comma-separated), else all.
fn sizes() -> Vec<usize> {
    match std::env::var("SHEPHERD_BENCH_SIZES") {
        Ok(list) => list
            .split(',')
            .map(|n| n.trim().parse().expect("SHEPHERD_BENCH_SIZES: numbers"))
            .collect(),
        Err(_) => SIZES.to_vec(),
    }
}

/// Timed requests per measurement: `SHEPHERD_BENCH_REQUESTS`, else 30.
fn requests() -> usize {
    std::env::var("SHEPHERD_BENCH_REQUESTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(REQUESTS)
}
/// Comments of the few long threads.
const LONG: [usize; 3] = [150, 200, 260];

/// The scale scenario with its three long threads first.
fn scenario(threads: usize) -> Scenario {
    let long: Vec<(usize, usize)> = LONG.iter().copied().enumerate().collect();
    Scenario::bench(threads, &long)
}

fn summary(name: &str, mut times: Vec<Duration>) {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "  {name:<14} min {:>8.3} ms  median {:>8.3} ms  max {:>8.3} ms",
        ms(times[0]),
        ms(times[times.len() / 2]),
        ms(times[times.len() - 1]),
    );
}

/// Sends one GraphQL request and receives the whole answer as bytes.
async fn post(client: &reqwest::Client, url: &str, query: &str, variables: &Value) -> Vec<u8> {
    let answer = client
        .post(url)
        .bearer_auth("tok-reviewer")
        .json(&json!({ "query": query, "variables": variables }))
        .send()
        .await
        .unwrap();
    assert!(answer.status().is_success(), "{}", answer.status());
    answer.bytes().await.unwrap().to_vec()
}

/// An answer as JSON, which must have no errors.
fn parse(bytes: &[u8]) -> Value {
    let answer: Value = serde_json::from_slice(bytes).unwrap();
    assert!(answer.get("errors").is_none(), "{answer}");
    answer
}

async fn graphql(client: &reqwest::Client, url: &str, query: &str, variables: Value) -> Value {
    parse(&post(client, url, query, &variables).await)
}

/// Times `send` (a warm-up first), then checks every answer with `check`.
async fn timed<F, Fut, T>(mut send: F, check: impl Fn(T)) -> Vec<Duration>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = T>,
{
    check(send().await); // warm up
    let count = requests();
    let mut times = Vec::with_capacity(count);
    let mut answers = Vec::with_capacity(count);
    for _ in 0..count {
        let start = Instant::now();
        answers.push(send().await);
        times.push(start.elapsed());
    }
    answers.into_iter().for_each(check);
    times
}

/// The variables of Shepherd's `ReviewThreads` for the page after `cursor`.
fn threads_variables(cursor: &Value) -> Value {
    json!({ "owner": "acme", "name": "bench", "number": 1, "cursor": cursor })
}

fn thread_page(answer: &Value) -> &Value {
    &answer["data"]["repository"]["pullRequest"]["reviewThreads"]
}

fn main() {
    // `cargo test --benches` runs bench binaries too; only run when benchmarking.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = reqwest::Client::new();
        for threads in sizes() {
            println!("{threads} threads (long threads of {LONG:?} comments):");
            let mut starts = Vec::new();
            let mut emulator = None;
            for _ in 0..STARTS.min(requests()) {
                let s = scenario(threads);
                let start = Instant::now();
                let emu = Emulator::start(s, "127.0.0.1:0".parse().unwrap())
                    .await
                    .unwrap();
                starts.push(start.elapsed());
                if let Some(old) = emulator.replace(emu) {
                    old.shutdown().await.unwrap();
                }
            }
            summary("start", starts);
            let emu = emulator.unwrap();
            let url = emu.graphql_url();

            let pr_number = json!({});
            let times = timed(
                || post(&client, &url, "{ repository(owner: \"acme\", name: \"bench\") { pullRequest(number: 1) { number } } }", &pr_number),
                |a| assert_eq!(parse(&a)["data"]["repository"]["pullRequest"]["number"], 1),
            )
            .await;
            summary("pr-number", times);

            // Every page's cursor, as Shepherd walks them.
            let pages = threads.div_ceil(100);
            let mut cursors = vec![Value::Null];
            let mut first = Value::Null;
            for page in 0..pages {
                let a = graphql(&client, &url, REVIEW_THREADS, threads_variables(&cursors[page])).await;
                if page == 0 {
                    first = a.clone();
                }
                cursors.push(thread_page(&a)["pageInfo"]["endCursor"].clone());
            }
            let long_thread = thread_page(&first)["nodes"][0]["id"].as_str().unwrap().to_owned();
            let comments_cursor =
                thread_page(&first)["nodes"][0]["comments"]["pageInfo"]["endCursor"].clone();
            for (name, page) in [
                ("threads-first", 0),
                ("threads-middle", pages / 2),
                ("threads-last", pages - 1),
            ] {
                let variables = threads_variables(&cursors[page]);
                let expected = (threads - page * 100).min(100);
                let times = timed(
                    || post(&client, &url, REVIEW_THREADS, &variables),
                    |a| {
                        let a = parse(&a);
                        let nodes = thread_page(&a)["nodes"].as_array().unwrap().len();
                        assert_eq!(nodes, expected);
                        let more = thread_page(&a)["pageInfo"]["hasNextPage"].as_bool();
                        assert_eq!(more, Some(page + 1 < pages));
                    },
                )
                .await;
                summary(name, times);
            }

            let variables = json!({ "id": long_thread, "cursor": comments_cursor });
            let times = timed(
                || post(&client, &url, THREAD_COMMENTS, &variables),
                |a| {
                    let nodes = &parse(&a)["data"]["node"]["comments"]["nodes"];
                    assert_eq!(nodes.as_array().unwrap().len(), 50);
                },
            )
            .await;
            summary("node-thread", times);

            let rest = format!("{}/repos/acme/bench/pulls/1", emu.api_url());
            let times = timed(
                || async {
                    client
                        .get(&rest)
                        .bearer_auth("tok-reviewer")
                        .send()
                        .await
                        .unwrap()
                        .status()
                },
                |status| assert!(status.is_success()),
            )
            .await;
            summary("rest-pull", times);
            emu.shutdown().await.unwrap();
        }
    });
}
