//! Fetch-and-classify benchmark: the GitHub client against the emulator on
//! loopback, 1,000 unresolved threads (one with 150 comments), classified in core.
//!
//! Run with `cargo bench -p shepherd --bench fetch`. Prints the request count
//! per operation and the time per iteration (min, median, max), so a change in
//! either shows up. It measures; it asserts only that the answer is complete.

// A benchmark harness: a failed setup is a failed benchmark, so it may panic.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::time::{Duration, Instant};

use shepherd_core::classify::classify;
use shepherd_core::{Ledger, RepoRef};
use shepherd_emulator::{Emulator, Scenario};
use shepherd_forge::{Forge, GitHubClient, GitHubEndpoints, Token};

const THREADS: usize = 1_000;
const LONG_THREAD_COMMENTS: usize = 150;
const ITERATIONS: usize = 10;

fn main() {
    // `cargo test --benches` passes `--bench`-less flags; only run when benchmarking.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let emu = Emulator::start(Scenario::bench(THREADS, &[(0, LONG_THREAD_COMMENTS)]), "127.0.0.1:0".parse().expect("addr"))
            .await
            .expect("emulator");
        let repo = RepoRef {
            host: "github.com".into(),
            owner: "acme".into(),
            name: "bench".into(),
        };
        let endpoints = GitHubEndpoints::from_api_url(&emu.api_url()).expect("endpoints");
        let forge = GitHubClient::new(repo, endpoints, Token::new("tok-author")).expect("client");
        let ledger = Ledger::new();

        let mut times: Vec<Duration> = Vec::with_capacity(ITERATIONS);
        let mut classify_times: Vec<Duration> = Vec::with_capacity(ITERATIONS);
        for i in 0..=ITERATIONS {
            emu.reset_request_counts();
            let start = Instant::now();
            let snapshot = forge.snapshot(1).await.expect("snapshot");
            let fetched = start.elapsed();
            let start = Instant::now();
            let items = classify(&snapshot, &ledger);
            let classified = start.elapsed();
            assert_eq!(items.len(), THREADS, "every thread is an item");
            assert_eq!(snapshot.threads[0].comments.len(), LONG_THREAD_COMMENTS);
            if i == 0 {
                // Warm-up; report its request counts (identical every iteration).
                let counts = emu.request_counts();
                let total: u64 = counts.values().sum();
                println!("fetch {THREADS} threads (one with {LONG_THREAD_COMMENTS} comments): {total} requests");
                for (key, count) in &counts {
                    println!("  {key:<40} {count}");
                }
                continue;
            }
            times.push(fetched + classified);
            classify_times.push(classified);
        }
        report("fetch + classify", &mut times);
        report("  of which classify", &mut classify_times);
    });
}

fn report(label: &str, times: &mut [Duration]) {
    times.sort();
    let median = times[times.len() / 2];
    println!(
        "{label:<22} min {:>9.2?}  median {:>9.2?}  max {:>9.2?}  ({} iterations)",
        times[0],
        median,
        times[times.len() - 1],
        times.len()
    );
}
