//! The checks of an answer that a schema cannot express: its ids against
//! its task's, paths inside the repository, findings that need a
//! reproduction. Below the agents (which run them) and above the answers and
//! tasks (which they compare).

use std::collections::{BTreeMap, BTreeSet};

use crate::answer::{
    ApplyReviewAnswer, FixAnswer, FixValidationAnswer, ReviewAnswer, Severity, TriageAnswer,
    REFUTE_MIN_CONFIDENCE,
};
use crate::task::{ApplyReviewTask, FixTask, FixValidationTask, TriageTask};

// ---------------------------------------------------------------------------
// Id checks

/// Longest id quoted in an error; agent output is shown, not trusted.
const MAX_QUOTED_ID: usize = 80;

/// The ids of an answer do not match the ids of its task.
#[derive(Debug, Clone, Default, PartialEq, Eq, thiserror::Error)]
#[error("answer ids do not match the task's items: {}", self.describe())]
pub struct IdSetMismatch {
    /// Task ids the answer does not mention, sorted.
    pub missing: Vec<String>,
    /// Answer ids that are not in the task, sorted.
    pub extra: Vec<String>,
    /// Ids the answer mentions more than once, sorted.
    pub duplicate: Vec<String>,
}

impl IdSetMismatch {
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        for (label, ids) in [
            ("missing", &self.missing),
            ("extra", &self.extra),
            ("duplicate", &self.duplicate),
        ] {
            if !ids.is_empty() {
                let quoted: Vec<String> = ids.iter().map(|id| quote_id(id)).collect();
                parts.push(format!("{label} [{}]", quoted.join(", ")));
            }
        }
        parts.join("; ")
    }

    /// Whether nothing is wrong.
    pub fn is_empty(&self) -> bool {
        self.missing.is_empty() && self.extra.is_empty() && self.duplicate.is_empty()
    }
}

fn quote_id(id: &str) -> String {
    let mut shown: String = id.chars().take(MAX_QUOTED_ID).collect();
    if shown.len() < id.len() {
        shown.push('…');
    }
    format!("{shown:?}")
}

/// Compares the ids an answer gives with the ids a task asked about: the
/// answer must name each task id exactly once and nothing else.
///
/// Duplicates in `expected` are ignored (the task's own ids are the engine's
/// responsibility); an id both duplicated and extra is reported as both.
pub fn check_ids<'a>(
    expected: impl IntoIterator<Item = &'a str>,
    answered: impl IntoIterator<Item = &'a str>,
) -> Result<(), IdSetMismatch> {
    let expected: BTreeSet<&str> = expected.into_iter().collect();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for id in answered {
        *counts.entry(id).or_default() += 1;
    }
    let mismatch = IdSetMismatch {
        missing: expected
            .iter()
            .filter(|id| !counts.contains_key(*id))
            .map(|id| (*id).to_owned())
            .collect(),
        extra: counts
            .keys()
            .filter(|id| !expected.contains(*id))
            .map(|id| (*id).to_owned())
            .collect(),
        duplicate: counts
            .iter()
            .filter(|(_, n)| **n > 1)
            .map(|(id, _)| (*id).to_owned())
            .collect(),
    };
    if mismatch.is_empty() {
        Ok(())
    } else {
        Err(mismatch)
    }
}

/// Checks a triage answer against its task: exactly one decision per item.
pub fn check_triage_answer(task: &TriageTask, answer: &TriageAnswer) -> Result<(), IdSetMismatch> {
    check_ids(
        task.items.iter().map(|i| i.id.as_str()),
        answer.items.iter().map(|d| d.id.as_str()),
    )
}

/// Why a fix answer does not fit its task.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FixAnswerError {
    /// The outcomes do not cover the task's items exactly.
    #[error(transparent)]
    Ids(#[from] IdSetMismatch),
    /// A cluster task's answer has no `cluster_assessment`.
    #[error("cluster_assessment is required for a cluster task")]
    MissingAssessment,
    /// An isolated item's answer has a `cluster_assessment`.
    #[error("cluster_assessment must be null for a task without a cluster")]
    UnexpectedAssessment,
    /// A reply or summary is only whitespace.
    #[error("outcome {id}: {field} is empty")]
    Empty {
        /// The outcome's id (quoted, truncated).
        id: String,
        /// `reply` or `summary`.
        field: &'static str,
    },
}

/// Checks a fix answer against its task: one outcome per item, and a cluster
/// assessment exactly when the task is a cluster task.
///
/// Returns every problem found, so one retry can fix them all.
pub fn check_fix_answer(task: &FixTask, answer: &FixAnswer) -> Result<(), Vec<FixAnswerError>> {
    let mut errors = Vec::new();
    if let Err(e) = check_ids(
        task.items.iter().map(|i| i.id.as_str()),
        answer.outcomes.iter().map(|o| o.id.as_str()),
    ) {
        errors.push(FixAnswerError::Ids(e));
    }
    match (&task.cluster, &answer.cluster_assessment) {
        (Some(_), None) => errors.push(FixAnswerError::MissingAssessment),
        (None, Some(_)) => errors.push(FixAnswerError::UnexpectedAssessment),
        _ => {}
    }
    for outcome in &answer.outcomes {
        for (field, text) in [("reply", &outcome.reply), ("summary", &outcome.summary)] {
            if text.trim().is_empty() {
                errors.push(FixAnswerError::Empty {
                    id: quote_id(&outcome.id),
                    field,
                });
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Why an answer of the fix-validation, review or apply-review roles does
/// not fit its task.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// The answer's ids do not cover the task's items or findings exactly.
    #[error(transparent)]
    Ids(#[from] IdSetMismatch),
    /// A text field is only whitespace.
    #[error("{id}: {field} is empty")]
    Empty {
        /// The entry's id (quoted, truncated).
        id: String,
        /// The field.
        field: &'static str,
    },
    /// Two findings share an id.
    #[error("finding id {id} is used more than once")]
    DuplicateFinding {
        /// The id (quoted, truncated).
        id: String,
    },
    /// A finding's path is absolute or leaves the repository.
    #[error("finding {id}: path {path} is not a relative path inside the repository")]
    BadPath {
        /// The finding's id (quoted, truncated).
        id: String,
        /// The path (quoted, truncated).
        path: String,
    },
    /// A finding names a line but no file.
    #[error("finding {id}: line is given without a path")]
    LineWithoutPath {
        /// The finding's id (quoted, truncated).
        id: String,
    },
    /// A finding that must be refuted first has no reproduction.
    #[error(
        "finding {id}: a {severity} finding with confidence >= {REFUTE_MIN_CONFIDENCE} needs a reproduction command"
    )]
    NoReproduction {
        /// The finding's id (quoted, truncated).
        id: String,
        /// Its severity.
        severity: Severity,
    },
}

fn errors_or_ok(errors: Vec<AnswerError>) -> Result<(), Vec<AnswerError>> {
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Checks a fix-validation answer against its task: exactly one verdict per
/// item, each with at least one non-blank reason.
pub fn check_fix_validation_answer(
    task: &FixValidationTask,
    answer: &FixValidationAnswer,
) -> Result<(), Vec<AnswerError>> {
    let mut errors = Vec::new();
    if let Err(e) = check_ids(
        task.items.iter().map(|i| i.id.as_str()),
        answer.items.iter().map(|v| v.id.as_str()),
    ) {
        errors.push(AnswerError::Ids(e));
    }
    for v in &answer.items {
        if v.reasons.iter().all(|r| r.trim().is_empty()) {
            errors.push(AnswerError::Empty {
                id: quote_id(&v.id),
                field: "reasons",
            });
        }
    }
    errors_or_ok(errors)
}

/// Whether `path` is a plain relative path inside a repository.
fn is_repo_path(path: &str) -> bool {
    use std::path::Component;
    !path.is_empty()
        && std::path::Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// Checks a review answer: unique finding ids, paths inside the repository,
/// no line without a path, and a reproduction for every finding that must
/// be refuted first.
pub fn check_review_answer(answer: &ReviewAnswer) -> Result<(), Vec<AnswerError>> {
    let mut errors = Vec::new();
    let mut seen = BTreeSet::new();
    for f in &answer.findings {
        let id = quote_id(&f.id);
        if !seen.insert(f.id.as_str()) {
            errors.push(AnswerError::DuplicateFinding { id: id.clone() });
        }
        match &f.path {
            Some(path) if !is_repo_path(path) => errors.push(AnswerError::BadPath {
                id: id.clone(),
                path: quote_id(path),
            }),
            None if f.line.is_some() => {
                errors.push(AnswerError::LineWithoutPath { id: id.clone() })
            }
            _ => {}
        }
        let reproduction = f.reproduction.as_deref().unwrap_or("");
        if f.must_refute_first() && reproduction.trim().is_empty() {
            errors.push(AnswerError::NoReproduction {
                id: id.clone(),
                severity: f.severity,
            });
        }
    }
    if answer.summary.trim().is_empty() {
        errors.push(AnswerError::Empty {
            id: "answer".to_owned(),
            field: "summary",
        });
    }
    errors_or_ok(errors)
}

/// Checks an apply-review answer against its task: exactly one outcome per
/// finding, each with a non-blank summary.
pub fn check_apply_review_answer(
    task: &ApplyReviewTask,
    answer: &ApplyReviewAnswer,
) -> Result<(), Vec<AnswerError>> {
    let mut errors = Vec::new();
    if let Err(e) = check_ids(
        task.findings.iter().map(|f| f.finding.id.as_str()),
        answer.outcomes.iter().map(|o| o.id.as_str()),
    ) {
        errors.push(AnswerError::Ids(e));
    }
    for o in &answer.outcomes {
        if o.summary.trim().is_empty() {
            errors.push(AnswerError::Empty {
                id: quote_id(&o.id),
                field: "summary",
            });
        }
    }
    errors_or_ok(errors)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use crate::answer::{finding, Severity};

    #[test]
    fn id_check_lists_missing_extra_and_duplicate() {
        assert_eq!(check_ids(["a", "b"], ["b", "a"]), Ok(()));
        assert_eq!(check_ids([], []), Ok(()));
        let err = check_ids(["a", "b", "c"], ["c", "x", "c", "b", "x"]).unwrap_err();
        assert_eq!(
            err,
            IdSetMismatch {
                missing: vec!["a".into()],
                extra: vec!["x".into()],
                duplicate: vec!["c".into(), "x".into()],
            }
        );
        assert_eq!(
            err.to_string(),
            r#"answer ids do not match the task's items: missing ["a"]; extra ["x"]; duplicate ["c", "x"]"#
        );
    }

    #[test]
    fn id_check_quotes_and_truncates_hostile_ids() {
        let long = "\n".repeat(200);
        let err = check_ids([], [long.as_str()]).unwrap_err();
        let msg = err.to_string();
        assert!(!msg.contains('\n'), "{msg}");
        assert!(msg.len() < 300, "{msg}");
    }

    proptest::proptest! {
        #[test]
        fn id_check_finds_exactly_the_differences(
            expected in proptest::collection::btree_set("[a-e]", 0..5),
            answered in proptest::collection::vec("[a-g]", 0..8),
        ) {
            let result = check_ids(expected.iter().map(String::as_str), answered.iter().map(String::as_str));
            let given: BTreeSet<&String> = answered.iter().collect();
            let missing: Vec<String> = expected.iter().filter(|e| !given.contains(e)).cloned().collect();
            let extra: Vec<String> = given.iter().filter(|a| !expected.contains(**a)).map(|a| (*a).clone()).collect();
            let duplicate: Vec<String> = given
                .iter()
                .filter(|a| answered.iter().filter(|x| x == *a).count() > 1)
                .map(|a| (*a).clone())
                .collect();
            let want = IdSetMismatch { missing, extra, duplicate };
            if want.is_empty() {
                proptest::prop_assert_eq!(result, Ok(()));
            } else {
                proptest::prop_assert_eq!(result, Err(want));
            }
        }
    }

    #[test]
    fn review_answers_are_checked() {
        let mut no_repro = finding("F1", Severity::High, 85);
        no_repro.reproduction = Some("  ".into());
        let mut low_no_repro = finding("F2", Severity::Low, 99);
        low_no_repro.reproduction = None;
        let mut escaping = finding("F3", Severity::Medium, 50);
        escaping.path = Some("../etc/passwd".into());
        let mut lineless = finding("F4", Severity::Medium, 50);
        lineless.path = None;
        let dup = finding("F1", Severity::Low, 10);
        let answer = ReviewAnswer {
            findings: vec![no_repro, low_no_repro, escaping, lineless, dup],
            summary: " ".into(),
        };
        let errors = check_review_answer(&answer).unwrap_err();
        let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                r#"finding "F1": a HIGH finding with confidence >= 80 needs a reproduction command"#,
                r#"finding "F3": path "../etc/passwd" is not a relative path inside the repository"#,
                r#"finding "F4": line is given without a path"#,
                r#"finding id "F1" is used more than once"#,
                "answer: summary is empty",
            ]
        );
        let fine = ReviewAnswer {
            findings: vec![finding("F1", Severity::Critical, 100)],
            summary: "one bug".into(),
        };
        assert_eq!(check_review_answer(&fine), Ok(()));
    }
}
