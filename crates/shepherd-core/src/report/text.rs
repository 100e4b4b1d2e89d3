//! The words and escapes the report is written with.

use crate::ledger::{Decision, Outcome};

pub(super) const OUTCOME_ORDER: [Outcome; 6] = Outcome::ALL;

pub(super) fn outcome_word(outcome: Option<Outcome>) -> &'static str {
    outcome.map_or("undecided", Outcome::as_str)
}

pub(super) fn decision_word(decision: Decision) -> &'static str {
    decision.as_str()
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

pub(super) fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// Markdown-safe text: untrusted strings (paths, ids, titles) cannot open
/// HTML, links or emphasis, nor carry terminal or bidi controls.
pub(super) fn md(text: &str) -> String {
    crate::escape::markdown(text)
}

pub(super) fn where_(path: &Option<String>, line: Option<u32>) -> String {
    match (path, line) {
        (Some(p), Some(l)) => crate::escape::code_span(&format!("{p}:{l}")),
        (Some(p), None) => crate::escape::code_span(p),
        (None, _) => "(conversation)".to_owned(),
    }
}

pub(super) fn code(text: &str) -> String {
    crate::escape::code_span(text)
}

pub(super) fn count(n: usize, word: &str) -> String {
    format!("{n} {word}{}", plural(n))
}
