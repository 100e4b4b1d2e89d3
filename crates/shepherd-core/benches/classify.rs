//! Classifying a large PR: 10,000 synthetic review threads, a third of them
//! new, a third with our reply as the last word (with ledger entries), a third
//! with a reviewer's comment after our reply; plus 300 top-level comments.
//!
//! Run with `cargo bench -p shepherd-core --bench classify`.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use shepherd_core::classify::{classify, rebuild_ledger_from_markers};
use shepherd_core::testing::thread;
use shepherd_core::{
    Author, AuthorKind, Comment, Ledger, LedgerEntry, Marker, PrSnapshot, ReviewState,
    TopLevelComment, TopLevelKind,
};

const THREADS: usize = 10_000;
const TOP_LEVEL: usize = 300;
const VIEWER: &str = "shepherd-bot";

fn author(login: &str) -> Option<Author> {
    Some(Author {
        login: login.to_owned(),
        kind: AuthorKind::User,
    })
}

fn comment(id: String, login: &str, body: String) -> Comment {
    shepherd_core::testing::comment(id.as_str(), login, body)
        .database_id(None)
        .url(format!("https://github.com/o/r/pull/1#discussion_r{id}"))
        .created_at("2025-01-01T00:00:00Z")
        .hunk("@@ -1,3 +1,4 @@\n fn main() {\n+    let x = 1;\n }")
        .review(ReviewState::Commented)
        .build()
}

fn review_text(i: usize) -> String {
    format!(
        "This allocation in the hot loop looks unnecessary (item {i}). \
         Could you hoist it out, or reuse the buffer? See the profile attached to the issue."
    )
}

fn snapshot_and_ledger() -> (PrSnapshot, Ledger) {
    let mut threads = Vec::with_capacity(THREADS);
    let mut ledger = Ledger::new();
    for i in 0..THREADS {
        let id = format!("PRRT_kwDOBench{i:06}");
        let mut comments = vec![comment(format!("{id}-1"), "reviewer", review_text(i))];
        let ours = |n: u32, resolve: bool| {
            comment(
                format!("{id}-r{n}"),
                VIEWER,
                Marker::new(id.clone(), n, resolve)
                    .append_to("Fixed in 0a1b2c3: hoisted the buffer."),
            )
        };
        match i % 3 {
            0 => {}
            1 => {
                comments.push(ours(1, i % 2 == 0));
                ledger.append(LedgerEntry {
                    replied: true,
                    resolve_authorized: i % 2 == 0,
                    reply_id: Some(format!("{id}-r1")),
                    ..LedgerEntry::new(id.clone(), 1)
                });
            }
            _ => {
                comments.push(ours(1, false));
                comments.push(comment(
                    format!("{id}-3"),
                    "reviewer",
                    "Still allocates.".to_owned(),
                ));
            }
        }
        threads.push(
            thread(id)
                .path(format!("src/module_{}/file_{}.rs", i % 50, i % 13))
                .at((i % 400) as u32 + 1)
                .outdated(i % 7 == 0)
                .comments(comments)
                .build(),
        );
    }
    let mut top = Vec::with_capacity(TOP_LEVEL * 2);
    for i in 0..TOP_LEVEL {
        let id = format!("IC_kwDOBench{i:04}");
        top.push(TopLevelComment {
            id: id.clone(),
            database_id: Some(i as u64),
            kind: if i % 2 == 0 {
                TopLevelKind::IssueComment
            } else {
                TopLevelKind::ReviewBody
            },
            author: author("reviewer"),
            body: review_text(i),
            url: format!("https://github.com/o/r/pull/1#issuecomment-{i}"),
            created_at: "2025-01-01T00:00:00Z".to_owned(),
            review_state: None,
        });
        if i % 2 == 0 {
            top.push(TopLevelComment {
                id: format!("IC_reply{i:04}"),
                body: Marker::new(id, 1, false).append_to("Added to the changelog."),
                author: author(VIEWER),
                ..top[top.len() - 1].clone()
            });
        }
    }
    let snapshot = shepherd_core::testing::snapshot(VIEWER, threads, top);
    (snapshot, ledger)
}

fn bench(c: &mut Criterion) {
    let (snapshot, ledger) = snapshot_and_ledger();
    let mut group = c.benchmark_group("classify");
    group.throughput(Throughput::Elements(THREADS as u64));
    group.bench_function("10k_threads", |b| {
        b.iter(|| classify(black_box(&snapshot), black_box(&ledger)))
    });
    group.bench_function("rebuild_ledger_10k_threads", |b| {
        b.iter(|| rebuild_ledger_from_markers(black_box(&snapshot), VIEWER))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
