//! A job log cut to what matters, bounded and inert.
//!
//! The shapes read are those of the two CI systems' raw logs:
//! - GitHub Actions (`GET /repos/{o}/{r}/actions/jobs/{id}/logs`): every
//!   line starts with an RFC 3339 timestamp; a step opens with
//!   `##[group]Run …` and closes with `##[endgroup]`; a failure says
//!   `##[error]Process completed with exit code 1.`
//! - GitLab (`GET /projects/:id/jobs/:id/trace`): ANSI colours, `\r` for
//!   progress, sections `section_start:<unix>:<name>\r\x1b[0K<title>` and
//!   `section_end:<unix>:<name>`; a failure ends with `ERROR: Job failed: …`.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::escape;

/// How much of a log an excerpt keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExcerptLimits {
    /// Lines at the most (separators included).
    pub max_lines: usize,
    /// Characters at the most.
    pub max_chars: usize,
    /// Characters of one line at the most.
    pub max_line_chars: usize,
    /// Lines of context before an error line.
    pub before: usize,
    /// Lines of context after an error line.
    pub after: usize,
    /// The log's last lines, always kept.
    pub tail: usize,
}

impl Default for ExcerptLimits {
    fn default() -> Self {
        ExcerptLimits {
            max_lines: 80,
            max_chars: 6000,
            max_line_chars: 300,
            before: 2,
            after: 3,
            tail: 15,
        }
    }
}

/// A log's excerpt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Excerpt {
    /// The step that failed, when the log names its steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// The lines kept, `…` where lines were left out.
    pub text: String,
    /// The log's lines in all.
    pub lines_total: usize,
    /// Whether anything was left out.
    pub cut: bool,
}

/// The line-leading timestamp of GitHub Actions logs.
static STAMP: LazyLock<Regex> = LazyLock::new(|| {
    // Fixed patterns: they compile (the unit tests run them).
    #[allow(clippy::expect_used)]
    Regex::new(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?").expect("a valid pattern")
});

/// GitLab's section markers.
static SECTION: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(r"section_(start|end):\d+:([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?")
        .expect("a valid pattern")
});

/// A line that reports an error.
static ERROR: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(
        r"(?i)##\[error\]|\berror\b|\berror\[|\bfailed\b|\bfailure\b|\bpanicked\b|\bfatal\b|\bexception\b|\btraceback\b|^E\s|assert",
    )
    .expect("a valid pattern")
});

/// Runner and infrastructure errors, as GitHub's and GitLab's runners word
/// them.
const INFRA: &[&str] = &[
    "the runner has received a shutdown signal",
    "the operation was canceled",
    "lost communication with the server",
    "no space left on device",
    "error: job failed (system failure)",
    "runner system failure",
    "there was an error when trying to pull the image",
    "job's log exceeded limit",
];

/// Whether the log shows a runner or infrastructure error rather than a
/// failure of the code.
pub fn looks_like_infra(raw: &str) -> bool {
    let lower = raw.to_lowercase();
    INFRA.iter().any(|p| lower.contains(p))
}

/// One cleaned line and the step it belongs to.
struct Line {
    text: String,
    step: Option<usize>,
}

/// The excerpt of `raw`, within `limits`.
pub fn excerpt(raw: &str, limits: ExcerptLimits) -> Excerpt {
    let mut steps: Vec<String> = Vec::new();
    let mut current: Option<usize> = None;
    let mut lines: Vec<Line> = Vec::new();
    for physical in raw.split('\n') {
        // A carriage return redraws the line: what is after the last one
        // is what the terminal showed. GitLab puts a section's title after
        // `\r` too. (ANSI stripping drops `\r`, so this comes first.)
        let mut text = physical.trim_end_matches('\r');
        let mut opened: Option<String> = None;
        if let Some(m) = SECTION.captures(text) {
            if &m[1] == "start" {
                opened = Some(m[2].to_owned());
            } else {
                current = None;
            }
        }
        if let Some((_, shown)) = text.rsplit_once('\r') {
            text = shown;
        }
        let text = strip_ansi_escapes::strip_str(text);
        let text = STAMP.replace(&text, "");
        let text = SECTION.replace_all(&text, "");
        let text = text.trim_end();
        if let Some(name) = opened {
            steps.push(if text.is_empty() {
                name
            } else {
                text.to_owned()
            });
            current = Some(steps.len() - 1);
        }
        // GitHub's `##[endgroup]` ends the step's header, not the step:
        // its output follows until the next group.
        if let Some(name) = text.strip_prefix("##[group]") {
            steps.push(name.trim().to_owned());
            current = Some(steps.len() - 1);
        }
        if text.is_empty() {
            continue;
        }
        lines.push(Line {
            text: inert(text, limits.max_line_chars),
            step: current,
        });
    }
    let lines_total = lines.len();
    let errors: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| ERROR.is_match(&l.text))
        .map(|(i, _)| i)
        .collect();
    // The failing step: the one GitHub's `##[error]` closes, else the one
    // with the last error line, else the last one.
    let failing = lines
        .iter()
        .find(|l| l.text.starts_with("##[error]"))
        .or_else(|| errors.last().map(|&i| &lines[i]))
        .and_then(|l| l.step)
        .or_else(|| steps.len().checked_sub(1));
    let mut keep = vec![false; lines.len()];
    let tail_start = lines.len().saturating_sub(limits.tail);
    keep[tail_start..].iter_mut().for_each(|k| *k = true);
    let mut budget = limits.max_lines.saturating_sub(lines.len() - tail_start);
    // Error lines in the failing step first, then the others.
    let in_step = |i: &usize| failing.is_none() || lines[*i].step == failing;
    let ordered = errors
        .iter()
        .filter(|i| in_step(i))
        .chain(errors.iter().filter(|i| !in_step(i)));
    for &i in ordered {
        let from = i.saturating_sub(limits.before);
        let to = (i + limits.after + 1).min(lines.len());
        let new = keep[from..to].iter().filter(|k| !**k).count() + 1;
        if new > budget {
            break;
        }
        budget -= new;
        keep[from..to].iter_mut().for_each(|k| *k = true);
    }
    let mut out: Vec<&str> = Vec::new();
    let mut skipped = false;
    for (line, kept) in lines.iter().zip(&keep) {
        if *kept {
            if skipped {
                out.push("…");
            }
            skipped = false;
            out.push(&line.text);
        } else {
            skipped = true;
        }
    }
    let mut text = String::new();
    let mut cut = out.len() < lines.len() || out.contains(&"…");
    // The character bound keeps the end (where the failure is said).
    for line in out.iter().rev() {
        if text.len() + line.len() + 1 > limits.max_chars {
            cut = true;
            text.insert_str(0, "…\n");
            break;
        }
        text.insert_str(0, &format!("{line}\n"));
    }
    Excerpt {
        step: failing
            .and_then(|i| steps.get(i))
            .map(|s| inert(s, limits.max_line_chars)),
        text: text.trim_end().to_owned(),
        lines_total,
        cut,
    }
}

/// `line` made inert: unsafe characters as visible escapes, HTML comment
/// openers broken (a log must never carry a marker into a comment), at most
/// `max` characters.
fn inert(line: &str, max: usize) -> String {
    let visible = escape::visible(line)
        .replace("<!--", "<!- -")
        .replace("-->", "- ->");
    if visible.chars().count() <= max {
        return visible;
    }
    let mut cut: String = visible.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}
