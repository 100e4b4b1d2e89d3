//! The classifier: a comment's scores, and the theme that wins them.

use super::markdown::Parsed;
use super::model::{Theme, MIN_SCORE, TIE_BREAK};
use super::weights::BODY;

/// How much a comment on a documentation file leans to documentation.
pub const DOC_FILE_WEIGHT: u32 = 1;

/// Whether a path is a documentation file: Markdown, reStructuredText,
/// AsciiDoc or plain text, or anything under a `doc/` or `docs/` directory.
pub fn is_doc_file(path: &str) -> bool {
    let path = path.to_ascii_lowercase();
    let name = path.rsplit('/').next().unwrap_or(&path);
    let in_docs = path.split('/').any(|seg| seg == "doc" || seg == "docs");
    let ext = name.rsplit_once('.').map_or("", |(_, ext)| ext);
    in_docs
        || matches!(
            ext,
            "md" | "markdown" | "mdx" | "rst" | "adoc" | "asciidoc" | "txt"
        )
}

/// Classifies a review comment into a [`Theme`] by keywords and code signals.
///
/// `comment` is the comment body as the forge gives it (Markdown, possibly
/// with a review bot's `<details>` sections); `suggestion` is suggested code,
/// when the caller extracted it. See the module docs for the scoring rules.
/// Deterministic and case-insensitive; never panics.
pub fn classify_theme(comment: &str, suggestion: Option<&str>) -> Theme {
    classify_theme_at(comment, suggestion, None)
}

/// [`classify_theme`] for a comment on the file at `path` (a thread's file;
/// `None` for top-level comments). A comment on a documentation file
/// (`README.md`, `docs/…`, `*.rst`) leans to [`Theme::Documentation`] by
/// [`DOC_FILE_WEIGHT`], as much as one more documentation word would.
pub fn classify_theme_at(comment: &str, suggestion: Option<&str>, path: Option<&str>) -> Theme {
    let parsed = Parsed::new(comment, suggestion);
    if parsed.is_approval_only() {
        return Theme::Other;
    }
    let mut scores = parsed.scores();
    if path.is_some_and(is_doc_file) {
        scores[Theme::Documentation.index()] += DOC_FILE_WEIGHT * BODY;
    }
    let mut best = Theme::Other;
    let mut best_score = 0;
    for theme in TIE_BREAK {
        let score = scores[theme.index()];
        if score > best_score {
            best = theme;
            best_score = score;
        }
    }
    if best_score < MIN_SCORE * BODY {
        Theme::Other
    } else {
        best
    }
}
