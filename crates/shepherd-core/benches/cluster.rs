//! Clustering a large round: 10,000 items over a realistic directory tree,
//! through the structural gate and the deterministic grouping; and the lexical
//! theme classifier on realistic review comments.
//!
//! Run with `cargo bench -p shepherd-core --bench cluster`.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use shepherd_core::cluster::{evaluate_gate, group, ClusterGateInput, ClusterItem};
use shepherd_core::theme::{classify_theme, Theme};

const ITEMS: usize = 10_000;

fn items() -> Vec<ClusterItem> {
    let dirs = [
        "src/auth",
        "src/auth/oauth",
        "src/db",
        "src/db/migrations",
        "src/api/v1",
        "src/api/v2",
        "web/components",
        "web/pages",
        "tests",
        "",
    ];
    (0..ITEMS)
        .map(|i| {
            let dir = dirs[i % dirs.len()];
            let file = format!("f{}.rs", (i / dirs.len()) % 40);
            let path = if dir.is_empty() {
                file
            } else {
                format!("{dir}/{file}")
            };
            let theme = Theme::ALL[(i * 7) % Theme::ALL.len()];
            let path = (i % 50 != 0).then_some(path);
            ClusterItem::new(format!("PRRT_{i:05}"), path.as_deref(), theme)
        })
        .collect()
}

const COMMENTS: &[&str] = &[
    "This `unwrap()` will panic when the file is missing; propagate the error with `?` instead.",
    "Nit: `tmp` is not a descriptive name, maybe `pending_requests`?",
    "The user id from the query string is used in the SQL without escaping: SQL injection.",
    "This lock is held across the await point, which can deadlock under load.",
    "Please add a test for the empty input case.",
    "The docstring still describes the old return type.",
    "This allocates a new Vec on every iteration of the hot loop.",
    "Missing validation: a negative page size is accepted here.",
];

fn bench(c: &mut Criterion) {
    let items = items();
    let mut group_bench = c.benchmark_group("cluster");
    group_bench.throughput(Throughput::Elements(ITEMS as u64));
    group_bench.bench_function("gate_and_group_10k_items", |b| {
        b.iter(|| {
            let gate = evaluate_gate(&ClusterGateInput {
                new_items: items.len(),
                ..ClusterGateInput::default()
            });
            assert!(gate.open);
            black_box(group(black_box(&items)))
        })
    });
    group_bench.finish();

    let mut themes = c.benchmark_group("theme");
    themes.throughput(Throughput::Elements(COMMENTS.len() as u64));
    themes.bench_function("classify_8_comments", |b| {
        b.iter(|| {
            for comment in COMMENTS {
                black_box(classify_theme(black_box(comment), None));
            }
        })
    });
    themes.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
