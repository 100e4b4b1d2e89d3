//! A reviewer bot's notice that it did not review: rate limits, used-up
//! quotas, paused or skipped reviews.
//!
//! The texts are the ones the bots post (seen in public repositories' PRs
//! and issues in 2025-2026):
//! - CodeRabbit: `## Rate limit exceeded` … `Please wait **24 minutes and 26
//!   seconds** before requesting another review.`; `## Review limit reached`
//!   … `**Next review available in:** **9 minutes**` (or `Next included
//!   review available in 27 minutes.`); `Review rate limited`; `⚠️ Action
//!   not completed`; `Reviews paused`; `Review skipped` (also as the
//!   description of a `success` commit status, when the review did not run).
//! - Copilot code review: a comment that the review quota is used up
//!   ("… has reached their quota limit …").
//!
//! A notice only counts when the reviewer's own account wrote it (the
//! caller checks the author); the text is otherwise untrusted, so only the
//! reason and a wait are taken from it, never instructions.

use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// Why a reviewer did not review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeclineReason {
    /// A rate limit or review limit: it reviews again after a wait, when
    /// triggered again.
    RateLimited,
    /// The account's review quota is used up.
    QuotaUsed,
    /// Reviews are paused or turned off for this PR or repository.
    Paused,
    /// The review was skipped (draft, filters, too large, not configured).
    Skipped,
    /// It said it had already reviewed this commit.
    AlreadyReviewed,
}

impl DeclineReason {
    /// How a report line says it: "rate limited".
    pub fn as_words(self) -> &'static str {
        match self {
            DeclineReason::RateLimited => "rate limited",
            DeclineReason::QuotaUsed => "review quota used up",
            DeclineReason::Paused => "reviews paused",
            DeclineReason::Skipped => "review skipped",
            DeclineReason::AlreadyReviewed => "said it already reviewed it",
        }
    }
}

/// A notice that a review did not run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notice {
    /// Why.
    pub reason: DeclineReason,
    /// The notice's own line that says so, as quoted in a report (trimmed of
    /// Markdown, at most [`QUOTE_MAX`] characters).
    pub quote: String,
    /// How long it says to wait before the next review, when it says.
    #[serde(with = "secs_opt", default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<Duration>,
}

/// The longest quote a notice keeps.
pub const QUOTE_MAX: usize = 160;

/// The phrases, lowercase, in the order they are tried: the first that a
/// line holds names the reason.
const PHRASES: &[(&str, DeclineReason)] = &[
    ("rate limit exceeded", DeclineReason::RateLimited),
    ("review rate limited", DeclineReason::RateLimited),
    ("review limit reached", DeclineReason::RateLimited),
    ("rate limited", DeclineReason::RateLimited),
    ("action not completed", DeclineReason::RateLimited),
    ("quota limit", DeclineReason::QuotaUsed),
    ("quota exceeded", DeclineReason::QuotaUsed),
    ("review quota", DeclineReason::QuotaUsed),
    ("reviews paused", DeclineReason::Paused),
    ("review paused", DeclineReason::Paused),
    ("auto reviews are disabled", DeclineReason::Paused),
    ("review skipped", DeclineReason::Skipped),
    ("already reviewed", DeclineReason::AlreadyReviewed),
];

/// `24 minutes and 26 seconds`, `9 minutes`, `1 hour`: the wait a notice
/// names after "wait" or "available in".
static WAIT: LazyLock<Regex> = LazyLock::new(|| {
    // A fixed pattern: it compiles (the unit tests run it).
    #[allow(clippy::expect_used)]
    Regex::new(
        r"(?i)(?:wait|available in)[:*\s]*((?:\d+\s*(?:hours?|hrs?|minutes?|mins?|seconds?|secs?)[\s,*]*(?:and\s+)?)+)",
    )
    .expect("a valid pattern")
});

static PART: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(r"(?i)(\d+)\s*(hours?|hrs?|minutes?|mins?|seconds?|secs?)").expect("a valid pattern")
});

/// The notice in `text` (a comment's body, or a status's description), if
/// it is one.
pub fn find_notice(text: &str) -> Option<Notice> {
    let (reason, line) = text.lines().find_map(|line| {
        let lower = line.to_lowercase();
        PHRASES
            .iter()
            .find(|(phrase, _)| lower.contains(phrase))
            .map(|(_, reason)| (*reason, line))
    })?;
    Some(Notice {
        reason,
        quote: quote(line),
        wait: find_wait(text),
    })
}

/// The wait `text` names, if any.
fn find_wait(text: &str) -> Option<Duration> {
    let found = WAIT.captures(text)?;
    let parts = found.get(1)?.as_str();
    let mut secs: u64 = 0;
    for part in PART.captures_iter(parts) {
        let n: u64 = part[1].parse().ok()?;
        let unit = part[2].to_ascii_lowercase();
        let scale = if unit.starts_with('h') {
            3600
        } else if unit.starts_with('m') {
            60
        } else {
            1
        };
        secs = secs.saturating_add(n.saturating_mul(scale));
    }
    (secs > 0).then(|| Duration::from_secs(secs))
}

/// `line` without Markdown decoration (`>`, `#`, `*`, `[!WARNING]`), one
/// space between words, cut to [`QUOTE_MAX`] characters.
fn quote(line: &str) -> String {
    let words: Vec<&str> = line
        .split_whitespace()
        .map(|w| w.trim_matches(|c| matches!(c, '>' | '#' | '*' | '_' | '`')))
        .filter(|w| !w.is_empty() && !w.eq_ignore_ascii_case("[!warning]"))
        .collect();
    let text = words.join(" ");
    if text.chars().count() <= QUOTE_MAX {
        return text;
    }
    let mut cut: String = text.chars().take(QUOTE_MAX - 1).collect();
    cut.push('…');
    cut
}

/// `Option<Duration>` as whole seconds.
mod secs_opt {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub(super) fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&d.as_secs()),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration::from_secs))
    }
}
