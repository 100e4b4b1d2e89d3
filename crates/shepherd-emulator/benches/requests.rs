//! The emulator's own costs at 100, 1,000 and 10,000 review threads (a few
//! threads of 150–260 comments): how long `Emulator::start` takes, and the
//! time per request, over real HTTP on loopback, of
//!
//! - `pr-number`: `pullRequest(number: 1) { number }` (nothing of the PR's
//!   size is asked for);
//! - `threads-first`: the first page of 100 review threads, each with its
//!   first 100 comments (Shepherd's `ReviewThreads` query);
//! - `threads-last`: the last such page, by cursor;
//! - `node-thread`: `node(id:)` of one long thread, its second page of
//!   comments;
//! - `rest-pull`: `GET /repos/{owner}/{repo}/pulls/1`.
//!
//! Run with `cargo bench -p shepherd-emulator --bench requests` (release
//! build). Prints min, median and max per measurement. It measures; it
//! asserts only that each answer is what was asked for.
//!
//! `SHEPHERD_BENCH_SIZES=10000` and `SHEPHERD_BENCH_REQUESTS=5` narrow a run
//! (for a profiler such as `valgrind --tool=callgrind`, which counts
//! instructions repeatably on a loaded machine).

// A benchmark harness: a failed setup is a failed benchmark, so it may panic.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use shepherd_emulator::{
    Emulator, FileSpec, Permission, PullRequestSpec, RepositorySpec, Scenario, ThreadCommentSpec,
    ThreadSpec, UserKind, UserSpec,
};

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

const THREADS_QUERY: &str = r#"
query ReviewThreads($cursor: String) {
  repository(owner: "acme", name: "bench") {
    pullRequest(number: 1) {
      reviewThreads(first: 100, after: $cursor) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id isResolved isOutdated path line startLine originalLine originalStartLine
          diffSide subjectType viewerCanReply viewerCanResolve
          comments(first: 100) {
            totalCount
            pageInfo { hasNextPage endCursor }
            nodes {
              id databaseId body createdAt url diffHunk
              author { __typename login }
              pullRequestReview { id state }
            }
          }
        }
      }
    }
  }
}"#;

const NODE_QUERY: &str = r#"
query ThreadComments($id: ID!, $cursor: String) {
  node(id: $id) {
    ... on PullRequestReviewThread {
      comments(first: 100, after: $cursor) {
        totalCount
        pageInfo { hasNextPage endCursor }
        nodes { id databaseId body author { login } }
      }
    }
  }
}"#;

fn scenario(threads: usize) -> Scenario {
    let mut s = Scenario::new(
        RepositorySpec::new("acme", "bench"),
        PullRequestSpec::new(1, "Bench", "author", "feature", "main"),
    );
    s.users = vec![
        UserSpec::new("author", "tok-author", UserKind::User, Permission::Write),
        UserSpec::new(
            "reviewer",
            "tok-reviewer",
            UserKind::User,
            Permission::Write,
        ),
        UserSpec::new("bot", "tok-bot", UserKind::Bot, Permission::Write),
    ];
    let lines: String = (1..=500).map(|i| format!("line {i}\n")).collect();
    s.base.insert("src/lib.rs".into(), FileSpec::text("\n"));
    s.head.insert("src/lib.rs".into(), FileSpec::text(lines));
    for t in 0..threads {
        let count = LONG.get(t).copied().unwrap_or(1 + t % 3);
        let comments = (0..count)
            .map(|c| {
                let author = ["reviewer", "bot", "author"][c % 3];
                ThreadCommentSpec::new(author, format!("thread {t} comment {c}: please look"))
            })
            .collect();
        s.threads.push(ThreadSpec::new(
            "src/lib.rs",
            (t % 500 + 1) as u32,
            comments,
        ));
    }
    s
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

async fn graphql(client: &reqwest::Client, url: &str, query: &str, variables: Value) -> Value {
    let answer: Value = client
        .post(url)
        .bearer_auth("tok-reviewer")
        .json(&json!({ "query": query, "variables": variables }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(answer.get("errors").is_none(), "{answer}");
    answer
}

async fn timed<F, Fut>(mut call: F) -> Vec<Duration>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    call().await; // warm up
    let count = requests();
    let mut times = Vec::with_capacity(count);
    for _ in 0..count {
        let start = Instant::now();
        call().await;
        times.push(start.elapsed());
    }
    times
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

            let times = timed(|| async {
                let a = graphql(&client, &url, "{ repository(owner: \"acme\", name: \"bench\") { pullRequest(number: 1) { number } } }", json!({})).await;
                assert_eq!(a["data"]["repository"]["pullRequest"]["number"], 1);
            })
            .await;
            summary("pr-number", times);

            let first = graphql(&client, &url, THREADS_QUERY, json!({})).await;
            let page = &first["data"]["repository"]["pullRequest"]["reviewThreads"];
            assert_eq!(page["nodes"].as_array().unwrap().len(), threads.min(100));
            let long_thread = page["nodes"][0]["id"].as_str().unwrap().to_owned();
            let comments_cursor = page["nodes"][0]["comments"]["pageInfo"]["endCursor"].clone();
            let times = timed(|| async {
                let a = graphql(&client, &url, THREADS_QUERY, json!({})).await;
                let nodes = &a["data"]["repository"]["pullRequest"]["reviewThreads"]["nodes"];
                assert_eq!(nodes.as_array().unwrap().len(), threads.min(100));
            })
            .await;
            summary("threads-first", times);

            // The cursor of the page before the last one.
            let mut cursor = Value::Null;
            for _ in 0..threads.div_ceil(100) - 1 {
                let a = graphql(&client, &url, THREADS_QUERY, json!({ "cursor": cursor })).await;
                cursor = a["data"]["repository"]["pullRequest"]["reviewThreads"]["pageInfo"]
                    ["endCursor"]
                    .clone();
            }
            let times = timed(|| async {
                let a = graphql(&client, &url, THREADS_QUERY, json!({ "cursor": cursor })).await;
                let info = &a["data"]["repository"]["pullRequest"]["reviewThreads"]["pageInfo"];
                assert_eq!(info["hasNextPage"], false);
            })
            .await;
            summary("threads-last", times);

            let times = timed(|| async {
                let a = graphql(
                    &client,
                    &url,
                    NODE_QUERY,
                    json!({ "id": long_thread, "cursor": comments_cursor }),
                )
                .await;
                assert_eq!(a["data"]["node"]["comments"]["nodes"].as_array().unwrap().len(), 50);
            })
            .await;
            summary("node-thread", times);

            let rest = format!("{}/repos/acme/bench/pulls/1", emu.api_url());
            let times = timed(|| async {
                let status = client
                    .get(&rest)
                    .bearer_auth("tok-reviewer")
                    .send()
                    .await
                    .unwrap()
                    .status();
                assert!(status.is_success());
            })
            .await;
            summary("rest-pull", times);
            emu.shutdown().await.unwrap();
        }
    });
}
