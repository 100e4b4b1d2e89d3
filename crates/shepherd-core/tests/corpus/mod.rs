//! The review-comment corpus (`tests/data/review_comments.jsonl`), as the
//! theme test (`tests/theme_corpus.rs`) and the theme bench read it.

use serde::Deserialize;

/// One comment of the corpus, with its label.
#[derive(Debug, Deserialize)]
pub struct Row {
    pub split: String,
    pub source: String,
    pub author_kind: String,
    pub placement: String,
    pub language: String,
    pub theme: String,
    pub text: String,
}

/// The file an inline comment is on, as far as the corpus records it: the
/// `language` of an inline comment on a documentation file is its file type.
pub fn path_of(row: &Row) -> Option<&'static str> {
    match (row.placement.as_str(), row.language.as_str()) {
        ("inline", "Markdown") => Some("file.md"),
        ("inline", "AsciiDoc") => Some("file.adoc"),
        ("inline", "reStructuredText") => Some("file.rst"),
        _ => None,
    }
}

/// Every row; a line that is not one panics, naming the line.
pub fn corpus() -> Vec<Row> {
    let data = include_str!("../data/review_comments.jsonl");
    data.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("line {}: {e}", i + 1)))
        .collect()
}
