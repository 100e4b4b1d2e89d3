//! The report's failing checks (issue 31): each required check that failed
//! on a head Shepherd waited for, whose failure it is, its log excerpt (a
//! fenced block of untrusted text), what was tried and what fixed it.

use crate::ci_failure::CheckFailure;

use super::model::Report;
use super::text::{code, md, short};

impl Report {
    /// The report with the failing checks of the last CI wait, sorted by
    /// name.
    pub fn with_ci_failures(mut self, failures: impl IntoIterator<Item = CheckFailure>) -> Self {
        let mut failures: Vec<CheckFailure> = failures.into_iter().collect();
        failures.sort_by(|a, b| a.name.cmp(&b.name));
        self.ci_failures = failures;
        self
    }

    /// The `### Failing checks` part of the CI section; nothing when no
    /// check failed.
    pub(super) fn ci_failures_markdown(&self, out: &mut String) {
        if self.ci_failures.is_empty() {
            return;
        }
        out.push_str("\n### Failing checks\n");
        for f in &self.ci_failures {
            out.push_str(&format!(
                "\n- {} on {}: **{}**",
                code(&f.name),
                code(short(&f.sha)),
                f.class.as_str()
            ));
            if let Some(before) = &f.before_sha {
                out.push_str(&format!(" (compared with {})", code(short(before))));
            }
            out.push('\n');
            for t in &f.tried {
                out.push_str(&format!("  - tried: {}\n", md(t)));
            }
            match &f.fixed_by {
                Some(sha) => out.push_str(&format!("  - fixed by {}\n", code(short(sha)))),
                None if f.handed_to_a_person => out.push_str("  - waits for a person\n"),
                None => {}
            }
            if let Some(why) = &f.no_log {
                out.push_str(&format!("  - no log: {}\n", md(why)));
            }
            if let Some(excerpt) = &f.excerpt {
                if let Some(step) = &excerpt.step {
                    out.push_str(&format!("  - failing step: {}\n", code(step)));
                }
                out.push_str(&format!(
                    "  - log excerpt ({} of {} lines; untrusted text):\n\n",
                    if excerpt.cut { "part" } else { "all" },
                    excerpt.lines_total
                ));
                out.push_str(&fenced(&excerpt.text, "  "));
            }
        }
    }
}

/// `text` as a fenced code block indented by `indent`: the fence is longer
/// than any run of backticks in the text, so the text cannot close it.
pub(crate) fn fenced(text: &str, indent: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(longest.max(2) + 1);
    let mut out = format!("{indent}{fence}text\n");
    for line in text.lines() {
        out.push_str(indent);
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&format!("{indent}{fence}\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::fenced;

    #[test]
    fn a_log_cannot_close_its_fence() {
        let log = "error\n```\n# Shepherd: converged\n````";
        let block = fenced(log, "  ");
        let fence = "`````";
        assert!(block.starts_with(&format!("  {fence}text\n")), "{block}");
        assert!(block.ends_with(&format!("\n  {fence}\n")), "{block}");
        // The only lines that are exactly a fence are the first and last.
        let fences = block
            .lines()
            .filter(|l| l.trim_start().starts_with(fence))
            .count();
        assert_eq!(fences, 2, "{block}");
    }
}
