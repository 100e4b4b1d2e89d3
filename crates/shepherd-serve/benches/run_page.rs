//! The page of a run with 1,000 items: read from a real state directory
//! (SQLite store, `run.json`, `threads.json`, `triage.json`, and the code
//! around each item from a real git repository) and rendered,
//! as a request for `/runs/ID` does it.
//!
//! `cargo bench -p shepherd-serve --bench run_page`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench fails by panicking

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use shepherd_core::{Decision, ForgeKind, LedgerEntry, Outcome};
use shepherd_engine::{Approval, ApprovalState, LedgerRecord, PrKey, StateDir, Store, Timestamp};

const ITEMS: usize = 1000;
const RUN: &str = "20240501-120000-42-abcd";

fn id(i: usize) -> String {
    format!("PRRT_item{i:04}")
}

/// The repository the run cloned: the 100 files the items are on, 400
/// lines each, in one commit; its git directory and the commit.
fn repository(root: &std::path::Path) -> (std::path::PathBuf, String) {
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(root)
            .envs([("GIT_AUTHOR_NAME", "B"), ("GIT_COMMITTER_NAME", "B")])
            .envs([("EMAIL", "b@example.invalid")])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    git(&["init", "-q"]);
    let text: String = (1..=400)
        .map(|n| format!("    let value_{n} = compute({n})?; // line {n}\n"))
        .collect();
    for i in 0..100 {
        let path = root.join(format!("src/mod{}/file{}.rs", i % 20, i % 50));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, &text).unwrap();
    }
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "head"]);
    (root.join(".git"), git(&["rev-parse", "HEAD"]))
}

fn setup() -> (tempfile::TempDir, StateDir) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let (git_dir, head) = repository(&repo);
    let state = StateDir::at(dir.path());
    let mut store = Store::open_in(&state).unwrap();
    let pr = PrKey::new(ForgeKind::GitHub, "github.com", "acme/widgets", 42);
    let t0 = Timestamp(1_714_564_800_000);
    store.create_run(RUN, &pr, t0).unwrap();
    store.start_round(RUN, 1, "pr-state", t0).unwrap();
    for (n, stage) in [
        "pr-state", "worktree", "threads", "triage", "cluster", "approval",
    ]
    .iter()
    .enumerate()
    {
        let payload = json!({ "stage": stage, "summary": format!("{ITEMS} items") });
        store
            .append_event(
                RUN,
                Some(1),
                "stage",
                &payload,
                Timestamp(t0.0 + 100 * n as i64),
            )
            .unwrap();
    }
    let run_dir = state.create_run_dir(RUN).unwrap();
    let round = run_dir.join("rounds/1");
    std::fs::create_dir_all(&round).unwrap();
    let body = "Please handle the error here instead of ignoring it. ".repeat(10);
    let mut items = Vec::new();
    let mut excerpts = serde_json::Map::new();
    let mut triage = Vec::new();
    for i in 0..ITEMS {
        let path = format!("src/mod{}/file{}.rs", i % 20, i % 50);
        items.push(json!({
            "item_id": id(i), "kind": "review-thread", "class": "new",
            "reason": "opened by @reviewer; no reply from Shepherd yet",
            "path": path, "line": i % 300 + 1,
            "author": { "login": "reviewer", "kind": "user" }, "outdated": false,
            "url": format!("https://github.com/acme/widgets/pull/42#discussion_r{i}"),
            "replied_round": null
        }));
        excerpts.insert(
            id(i),
            json!({ "comments": 1, "first": { "author": "reviewer", "body": body }, "last": null }),
        );
        let decision = if i % 2 == 0 {
            "needs-human"
        } else {
            "code-change"
        };
        triage.push(json!({
            "id": id(i), "decision": decision, "theme": "error-handling",
            "reasoning": "the code at this line drops the error", "reply_hint": "",
            "pr_changed_evidence": false
        }));
        if i % 2 == 0 {
            store
                .put_approval(&Approval {
                    run_id: RUN.into(),
                    round: 1,
                    item_id: id(i),
                    decision: Decision::NeedsHuman,
                    reply_override: None,
                    approver: None,
                    state: ApprovalState::Pending,
                    updated_at: t0,
                })
                .unwrap();
        }
        let mut entry = LedgerEntry::new(id(i), 1);
        entry.decision = Some(Decision::CodeChange);
        entry.outcome = Some(Outcome::Fixed);
        store
            .append_ledger(&LedgerRecord::new(RUN, entry, t0))
            .unwrap();
    }
    let write = |name: &str, v: serde_json::Value| {
        std::fs::write(round.join(name), serde_json::to_vec(&v).unwrap()).unwrap();
    };
    write(
        "threads.json",
        json!({ "items": items, "untrusted": [], "excerpts": excerpts }),
    );
    write("triage.json", json!({ "items": triage }));
    write("pr-state.json", json!({ "pr": { "head_sha": head } }));
    let run_file = json!({
        "version": 1, "run_id": RUN,
        "target": { "forge": "github", "forge_source": "flag",
            "repo": { "host": "github.com", "owner": "acme", "name": "widgets" },
            "repo_source": "flag", "number": 42, "mode": "full", "anchor": null },
        "pr": { "forge": "github", "host": "github.com", "repo": "acme/widgets", "number": 42 },
        "git_url": "https://github.com/acme/widgets.git", "api_url": null,
        "cache_dir": git_dir, "worktree_dir": "/nonexistent",
        "round": 1, "round_limit": 8, "head_ref": "feature", "review_base": null,
        "rerun_shas": [], "fix_history": [], "pause": "approval",
        "agent": { "providers": ["builtin"], "calls": 1, "millis": 10, "tokens": null,
            "cost_usd": null, "roles": [] },
        "rounds": [], "failures": [], "clusters": [], "escalations": [],
        "cluster_rounds": [], "last_gate_state": null, "last_open_items": [],
        "threads_look": null, "last_ci": null, "items": {},
        "pr_url": "https://github.com/acme/widgets/pull/42", "pr_title": "Widgets",
        "worktree_kept": null
    });
    std::fs::write(
        run_dir.join("run.json"),
        serde_json::to_vec(&run_file).unwrap(),
    )
    .unwrap();
    (dir, state)
}

/// The page really holds the 1,000 items: a row of each in the threads
/// table (with its excerpt) and in the approval table, with their replies.
fn check_page(page: &str) {
    let count = |needle: &str| page.matches(needle).count();
    assert_eq!(
        count("<tr class=\"item\" id=\"item-PRRT_item"),
        ITEMS,
        "threads rows"
    );
    assert_eq!(
        count("<tr class=\"item\" data-item=\"PRRT_item"),
        ITEMS,
        "approval rows"
    );
    // (The run is not paused in this store, so the rows are read-only.)
    assert!(count("<pre class=\"reply\">") >= ITEMS, "replies");
    assert!(count("Please handle the error here") >= ITEMS, "excerpts");
    // The code around each item's line, in both tables.
    assert_eq!(count("<div class=\"code\">"), 2 * ITEMS, "code");
    for i in [0, ITEMS / 2, ITEMS - 1] {
        assert!(page.contains(&format!("id=\"item-{}\"", id(i))), "item {i}");
    }
    assert!(page.len() > 1_000_000, "{} bytes", page.len());
}

fn bench(c: &mut Criterion) {
    let (_dir, state) = setup();
    let view = shepherd_serve::view::run(&state, RUN).expect("the run reads");
    assert_eq!(view.items.len(), ITEMS);
    assert_eq!(view.approvals.len(), ITEMS);
    let page = shepherd_serve::pages::run_page(&view, "secret", None);
    check_page(&page);
    eprintln!("run page of {ITEMS} items: {} KB", page.len() / 1024);
    let mut group = c.benchmark_group("run_page");
    group.sample_size(20);
    group.bench_function("read 1000 items", |b| {
        b.iter(|| shepherd_serve::view::run(&state, RUN).unwrap())
    });
    group.bench_function("render 1000 items", |b| {
        b.iter(|| shepherd_serve::pages::run_page(&view, "secret", None))
    });
    group.bench_function("read and render 1000 items", |b| {
        b.iter(|| {
            let view = shepherd_serve::view::run(&state, RUN).unwrap();
            shepherd_serve::pages::run_page(&view, "secret", None)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
