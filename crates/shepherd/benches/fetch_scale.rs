//! Fetching at scale: `shepherd threads 1 --json` (the release binary, run as
//! a child) against the emulator on loopback, at 100, 1,000 and 10,000
//! unresolved threads, three of them long (150, 200 and 260 comments, the
//! last in the last page of threads).
//!
//! Run with `cargo bench -p shepherd --bench fetch_scale` (it builds the
//! release binary first: `cargo build --release -p shepherd`). Set
//! `SHEPHERD_BIN` to measure another binary (an older build, for a before
//! and after), `FETCH_SCALE_SIZES=100,1000` to choose the sizes and
//! `FETCH_SCALE_RUNS` for the runs per size (default 3).
//!
//! Per size it reports:
//! - wall time of the child, median of the runs (and min, max);
//! - its peak RSS: each run goes through this binary re-executed as a
//!   wrapper, which waits for `shepherd` and reads `getrusage(RUSAGE_CHILDREN)`,
//!   so the figure is that one process's high-water mark (VmHWM);
//! - the requests the emulator counted;
//! - the sequential round trips, against the limit ceil(N/100) + 1: one more
//!   run goes through a loopback front that answers every request at the end
//!   of a fixed step (150 ms) in which it arrived, so requests asked together
//!   share a step and the step of the last answer is the critical path.
//!
//! It measures; it asserts only that the answer is complete (every thread
//! an item).

// A benchmark harness: a failed setup is a failed benchmark, so it may panic.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Router;
use shepherd_emulator::{Emulator, Scenario};

/// The long threads: (place among the threads, comments).
fn long_threads(threads: usize) -> [(usize, usize); 3] {
    [(0, 150), (threads / 2, 200), (threads - 1, 260)]
}

/// The step of the round-trip front.
const STEP: Duration = Duration::from_millis(150);
/// What marks the wrapper's report on its stderr.
const RSS_MARK: &str = "FETCH_SCALE_MAXRSS_KIB=";
/// Set in the wrapper's environment.
const WRAPPER_ENV: &str = "FETCH_SCALE_WRAP";

/// The wrapper: runs its arguments as a command, then reports the child's
/// peak RSS on stderr and exits with its status.
fn wrap() -> ! {
    let mut args = std::env::args_os().skip(1);
    let program = args.next().expect("a program to run");
    let status = Command::new(program)
        .args(args)
        .status()
        .expect("the child runs");
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .expect("getrusage");
    // Linux reports ru_maxrss in KiB.
    eprintln!("{RSS_MARK}{}", usage.max_rss());
    std::process::exit(status.code().unwrap_or(1));
}

fn shepherd_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os("SHEPHERD_BIN") {
        return PathBuf::from(bin);
    }
    // target/release/deps/fetch_scale-… → target/release/shepherd
    let exe = std::env::current_exe().expect("current exe");
    let bin = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target dir")
        .join("shepherd");
    assert!(
        bin.exists(),
        "{} is missing: build it first (cargo build --release -p shepherd) or set SHEPHERD_BIN",
        bin.display()
    );
    bin
}

/// One measured run: wall time, peak RSS (KiB), items in the answer.
struct Run {
    wall: Duration,
    rss_kib: u64,
    items: usize,
}

fn run_threads(bin: &PathBuf, api_url: &str, home: &std::path::Path) -> Run {
    let start = Instant::now();
    let out = Command::new(std::env::current_exe().expect("current exe"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("NO_COLOR", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GITHUB_TOKEN", "tok-author")
        .env(WRAPPER_ENV, "1")
        .current_dir(home)
        .arg(bin)
        .args([
            "threads",
            "1",
            "--repo",
            "acme/bench",
            "--api-url",
            api_url,
            "--json",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("shepherd threads runs");
    let wall = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "shepherd threads failed: {stderr}");
    let rss_kib = stderr
        .lines()
        .find_map(|l| l.strip_prefix(RSS_MARK))
        .and_then(|v| v.trim().parse().ok())
        .expect("the wrapper reports the peak RSS");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let items = json["items"].as_array().map_or(0, Vec::len);
    Run {
        wall,
        rss_kib,
        items,
    }
}

/// A loopback front to `upstream` answering at the end of the step of
/// [`STEP`] in which each request arrived; the steps it answered at.
async fn step_front(upstream: String) -> (String, Arc<Mutex<Vec<u32>>>) {
    let steps: Arc<Mutex<Vec<u32>>> = Arc::default();
    let start: Arc<OnceLock<Instant>> = Arc::default();
    let http = reqwest::Client::new();
    let recorded = Arc::clone(&steps);
    let app = Router::new().fallback(
        move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
            let (steps, start, http, upstream) = (
                Arc::clone(&recorded),
                Arc::clone(&start),
                http.clone(),
                upstream.clone(),
            );
            async move {
                let arrived = Instant::now();
                let start = *start.get_or_init(|| arrived);
                let step = (arrived.duration_since(start).as_nanos() / STEP.as_nanos()) as u32 + 1;
                let path = uri.path_and_query().map_or("/", |p| p.as_str());
                let mut request = http.request(method, format!("{upstream}{path}"));
                for (name, value) in &headers {
                    if name != "host" && name != "content-length" {
                        request = request.header(name, value);
                    }
                }
                let answer = request.body(body).send().await.expect("upstream answers");
                let status = StatusCode::from_u16(answer.status().as_u16()).unwrap();
                let answer_headers = answer.headers().clone();
                let answer_body = answer.bytes().await.expect("upstream body");
                tokio::time::sleep_until((start + STEP * step).into()).await;
                steps.lock().unwrap().push(step);
                let mut response: Response = (status, answer_body).into_response();
                for (name, value) in &answer_headers {
                    if name != "content-length" && name != "transfer-encoding" {
                        response.headers_mut().insert(name, value.clone());
                    }
                }
                response
            }
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), steps)
}

fn main() {
    if std::env::var_os(WRAPPER_ENV).is_some() {
        wrap();
    }
    // `cargo test --benches` lists; only run when benchmarking.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let sizes: Vec<usize> = std::env::var("FETCH_SCALE_SIZES")
        .unwrap_or_else(|_| "100,1000,10000".into())
        .split(',')
        .map(|s| s.trim().parse().expect("a size"))
        .collect();
    let runs: usize = std::env::var("FETCH_SCALE_RUNS")
        .ok()
        .map_or(3, |s| s.parse().expect("a run count"));
    let bin = shepherd_bin();
    println!("binary: {}", bin.display());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let home = tempfile::tempdir().expect("temp home");
    println!(
        "{:>7} {:>8} {:>28} {:>13} {:>9} {:>17}",
        "threads",
        "comments",
        "wall median (min..max)",
        "peak RSS",
        "requests",
        "round trips/limit"
    );
    for threads in sizes {
        let scenario = Scenario::bench(threads, &long_threads(threads));
        let comments: usize = scenario.threads.iter().map(|t| t.comments.len()).sum();
        let emu = runtime.block_on(async {
            Emulator::start(scenario, "127.0.0.1:0".parse().expect("addr"))
                .await
                .expect("emulator")
        });
        let api = emu.api_url();
        // Warm-up (and the request count: the same every run).
        emu.reset_request_counts();
        let warm = run_threads(&bin, &api, home.path());
        assert_eq!(warm.items, threads, "every thread is an item");
        let counts = emu.request_counts();
        let requests: u64 = counts.values().sum();
        if std::env::var_os("FETCH_SCALE_COUNTS").is_some() {
            for (key, count) in &counts {
                println!("  {key:<40} {count}");
            }
        }
        let mut walls = Vec::new();
        let mut rss = warm.rss_kib;
        for _ in 0..runs {
            let run = run_threads(&bin, &api, home.path());
            assert_eq!(run.items, threads);
            walls.push(run.wall);
            rss = rss.max(run.rss_kib);
        }
        walls.sort();
        let (front, steps) = runtime.block_on(step_front(api.clone()));
        let stepped = run_threads(&bin, &front, home.path());
        assert_eq!(stepped.items, threads);
        let round_trips = steps.lock().unwrap().iter().copied().max().unwrap_or(0);
        let limit = threads.div_ceil(100) + 1;
        println!(
            "{threads:>7} {comments:>8} {:>10.0?} ({:>6.0?}..{:>6.0?}) {:>9.1} MiB {requests:>9} {:>9}/{limit}",
            walls[walls.len() / 2],
            walls[0],
            walls[walls.len() - 1],
            rss as f64 / 1024.0,
            round_trips,
        );
        drop(emu);
    }
}
