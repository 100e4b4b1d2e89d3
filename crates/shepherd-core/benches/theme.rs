//! The lexical theme classifier on the held-out part of the review-comment
//! corpus (`tests/data/review_comments.jsonl`): prints its accuracy, then
//! measures the time per comment.
//!
//! Run with `cargo bench -p shepherd-core --bench theme`.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use shepherd_core::theme::{classify_theme_at, Theme};

// The bench reads only some of a row's fields.
#[allow(dead_code)]
#[path = "../tests/corpus/mod.rs"]
mod corpus;

use corpus::{corpus, path_of, Row};

/// The held-out part of the corpus.
fn held_out() -> Vec<Row> {
    corpus()
        .into_iter()
        .filter(|r| r.split == "held-out")
        .collect()
}

fn report(rows: &[Row]) {
    let mut right = [0usize; 3];
    let mut total = [0usize; 3];
    for row in rows {
        let Ok(expected) = row.theme.parse::<Theme>() else {
            eprintln!("not a theme: {}", row.theme);
            continue;
        };
        let ok = classify_theme_at(&row.text, None, path_of(row)) == expected;
        let kind = if row.author_kind == "bot" { 1 } else { 2 };
        for i in [0, kind] {
            total[i] += 1;
            right[i] += usize::from(ok);
        }
    }
    for (name, i) in [("overall", 0), ("bot", 1), ("human", 2)] {
        println!(
            "held-out accuracy {name:<8} {:5.1}% ({}/{})",
            100.0 * right[i] as f64 / total[i].max(1) as f64,
            right[i],
            total[i]
        );
    }
}

/// The fastest of 50 rounds over the held-out comments, per comment: what
/// classification costs when the machine is not busy with others.
fn fastest_per_comment(rows: &[Row]) {
    let fastest = (0..50)
        .map(|_| {
            let start = std::time::Instant::now();
            for row in rows {
                black_box(classify_theme_at(black_box(&row.text), None, path_of(row)));
            }
            start.elapsed()
        })
        .min()
        .unwrap_or_default();
    println!(
        "fastest round: {:.1} µs per comment",
        fastest.as_secs_f64() * 1e6 / rows.len().max(1) as f64
    );
}

fn bench(c: &mut Criterion) {
    let rows = held_out();
    report(&rows);
    fastest_per_comment(&rows);
    let mut group = c.benchmark_group("theme");
    group.throughput(Throughput::Elements(rows.len() as u64));
    group.bench_function("classify_held_out", |b| {
        b.iter(|| {
            for row in &rows {
                black_box(classify_theme_at(black_box(&row.text), None, path_of(row)));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
