//! What an agent answers: typed answers, their JSON Schemas, and the checks
//! a schema cannot express (the answer's ids against the task's).
//!
//! Every answer type denies unknown fields and requires every field (an
//! optional one is `null` when absent), so the generated schema is strict
//! enough for CLIs that enforce structured output. Core types that do not
//! implement `JsonSchema` ([`Decision`], [`Theme`]) get their schema from
//! their one list in core (`Decision::ALL`, `Theme::ALL`).

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use shepherd_core::ledger::{Decision, Outcome};
use shepherd_core::theme::Theme;

use crate::task::{ApplyReviewTask, FixTask, FixValidationTask, TriageTask};

/// The answer to a triage task: one decision per item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TriageAnswer {
    /// One decision per item of the task, each id exactly once.
    pub items: Vec<TriageDecision>,
}

/// Triage's conclusion about one item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TriageDecision {
    /// The item's id, as given in the task.
    #[schemars(length(min = 1))]
    pub id: String,
    /// What to do about the item.
    #[schemars(with = "DecisionSchema")]
    pub decision: Decision,
    /// The item's theme category; `null` lets Shepherd classify it.
    #[schemars(with = "Nullable<ThemeSchema>")]
    pub theme: Option<Theme>,
    /// Why: what the agent read, and what it concluded (cites the code).
    #[schemars(regex(pattern = r"\S"))]
    pub reasoning: String,
    /// What the reply to the reviewer should say.
    pub reply_hint: String,
    /// Whether the PR itself changed the evidence the reviewer cites.
    pub pr_changed_evidence: bool,
}

/// What a fixer says it did with one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FixStatus {
    /// Fixed as asked.
    Fixed,
    /// Fixed, but differently than asked (the reply says how and why).
    FixedDifferently,
    /// Not fixed: a person must decide (the reply says what is needed).
    Blocked,
}

impl FixStatus {
    /// The outcome a reply and the report state (a blocked fix is `needs-human`).
    pub fn outcome(self) -> Outcome {
        match self {
            FixStatus::Fixed => Outcome::Fixed,
            FixStatus::FixedDifferently => Outcome::FixedDifferently,
            FixStatus::Blocked => Outcome::NeedsHuman,
        }
    }
}

/// The outcome of one item of a fix task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThreadOutcome {
    /// The item's id, as given in the task.
    #[schemars(length(min = 1))]
    pub id: String,
    /// Fixed, fixed differently, or blocked.
    pub status: FixStatus,
    /// What was changed (or why nothing was), for the report.
    #[schemars(regex(pattern = r"\S"))]
    pub summary: String,
    /// The reply to the reviewer (Shepherd adds the commit).
    #[schemars(regex(pattern = r"\S"))]
    pub reply: String,
    /// Repository-relative paths of the files changed for this item.
    pub files: Vec<String>,
}

/// Whether a cluster's items share a cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ClusterVerdict {
    /// One cause at the root: fixed once, holistically.
    Systemic,
    /// Unrelated items that happen to look alike: fixed individually.
    Coincidental,
}

/// A cluster-fix agent's judgement of its cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClusterAssessment {
    /// Systemic or coincidental.
    pub verdict: ClusterVerdict,
    /// Why.
    #[schemars(regex(pattern = r"\S"))]
    pub why: String,
}

/// The answer to a fix or cluster-fix task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FixAnswer {
    /// One outcome per item of the task, each id exactly once.
    pub outcomes: Vec<ThreadOutcome>,
    /// For a cluster task, the judgement of the cluster; `null` otherwise.
    #[schemars(with = "Nullable<ClusterAssessment>")]
    pub cluster_assessment: Option<ClusterAssessment>,
}

/// Whether a fix addresses an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FixVerdict {
    /// The change does what the comment asks (or fixes what it points at).
    Addressed,
    /// The change does not address the comment, or breaks something it touches.
    NotAddressed,
    /// It cannot be told from the change and the code (a person should look).
    Unclear,
}

/// The verdict on one item of a fix-validation task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ItemValidation {
    /// The item's id, as given in the task.
    #[schemars(length(min = 1))]
    pub id: String,
    /// Addressed, not addressed, or unclear.
    pub verdict: FixVerdict,
    /// Why: what in the diff and the code leads to the verdict (at least one).
    #[schemars(length(min = 1), inner(regex(pattern = r"\S")))]
    pub reasons: Vec<String>,
}

/// The answer to a fix-validation task: one verdict per item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FixValidationAnswer {
    /// One verdict per item of the task, each id exactly once.
    pub items: Vec<ItemValidation>,
}

/// How bad a review finding is, from least to most.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "UPPERCASE")]
pub enum Severity {
    /// Style or a nit: worth a note, not a change before pushing.
    Low,
    /// A real but contained problem (an edge case, a missing check).
    Medium,
    /// A bug that breaks a feature, loses data in a corner, or a security weakness.
    High,
    /// Breaks the build or the main path, corrupts data, or opens a security hole.
    Critical,
}

impl Severity {
    /// The name used in answers and reports (`CRITICAL`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "LOW",
            Severity::Medium => "MEDIUM",
            Severity::High => "HIGH",
            Severity::Critical => "CRITICAL",
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Findings at least this confident, and CRITICAL or HIGH, are refuted
/// first by running their reproduction (SPEC section 3, step 9).
pub const REFUTE_MIN_CONFIDENCE: u8 = 80;

/// One problem a pre-push reviewer found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewFinding {
    /// The reviewer's id for the finding (`F1`, `F2`, ...), unique in the answer.
    #[schemars(length(min = 1))]
    pub id: String,
    /// How bad it is.
    pub severity: Severity,
    /// How sure the reviewer is that it is real, 0 to 100.
    #[schemars(range(max = 100))]
    pub confidence: u8,
    /// One line naming the problem.
    #[schemars(regex(pattern = r"\S"))]
    pub title: String,
    /// The repository-relative file it is in; `null` when it is not in one file.
    #[schemars(with = "Nullable<String>")]
    pub path: Option<String>,
    /// The line in `path` (after the commits); `null` for the whole file.
    #[schemars(with = "Nullable<u32>")]
    pub line: Option<u32>,
    /// What is wrong and why, citing the code.
    #[schemars(regex(pattern = r"\S"))]
    pub explanation: String,
    /// A shell command, run in the worktree, that fails (exits non-zero)
    /// while the problem exists and passes once it is fixed (a failing test,
    /// a check). Required for CRITICAL and HIGH findings of confidence >= 80.
    #[schemars(with = "Nullable<String>")]
    pub reproduction: Option<String>,
}

impl ReviewFinding {
    /// Whether the finding must be refuted first by running its
    /// reproduction: CRITICAL or HIGH, with confidence of at least
    /// [`REFUTE_MIN_CONFIDENCE`]. The others are reported, not acted on.
    pub fn must_refute_first(&self) -> bool {
        matches!(self.severity, Severity::Critical | Severity::High)
            && self.confidence >= REFUTE_MIN_CONFIDENCE
    }
}

/// The findings of `answer` that must be refuted first
/// ([`ReviewFinding::must_refute_first`]), most severe and most confident
/// first (ties keep the answer's order).
pub fn findings_to_refute(answer: &ReviewAnswer) -> Vec<&ReviewFinding> {
    let mut found: Vec<&ReviewFinding> = answer
        .findings
        .iter()
        .filter(|f| f.must_refute_first())
        .collect();
    found.sort_by_key(|f| std::cmp::Reverse((f.severity, f.confidence)));
    found
}

/// The answer to a review task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewAnswer {
    /// What the reviewer found; empty when nothing.
    pub findings: Vec<ReviewFinding>,
    /// A short overall assessment (or why there are no findings).
    #[schemars(regex(pattern = r"\S"))]
    pub summary: String,
}

/// What an apply-review fixer did with one finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindingOutcome {
    /// The finding's id, as given in the task.
    #[schemars(length(min = 1))]
    pub id: String,
    /// Fixed, fixed differently, or blocked.
    pub status: FixStatus,
    /// What was changed (or why nothing was), for `pre-push-review.md`.
    #[schemars(regex(pattern = r"\S"))]
    pub summary: String,
    /// Repository-relative paths of the files changed for this finding.
    pub files: Vec<String>,
}

/// The answer to an apply-review task: one outcome per finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyReviewAnswer {
    /// One outcome per finding of the task, each id exactly once.
    pub outcomes: Vec<FindingOutcome>,
}

// ---------------------------------------------------------------------------
// Schema helpers

/// Schema of a field that must be present but may be `null`. (schemars makes
/// an `Option` field optional, and `#[schemars(required)]` forbids `null`.)
struct Nullable<T>(std::marker::PhantomData<T>);

impl<T: JsonSchema> JsonSchema for Nullable<T> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("Nullable_{}", T::schema_name()).into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "anyOf": [generator.subschema_for::<T>(), {"type": "null"}]
        })
    }
}

/// The schema of a core enum of names, generated from its one list
/// (`Decision::ALL`, `Theme::ALL`): a new core variant is in the agents'
/// schema without an edit here.
fn names_schema(description: &str, names: impl Iterator<Item = &'static str>) -> schemars::Schema {
    let names: Vec<&str> = names.collect();
    schemars::json_schema!({
        "description": description,
        "enum": names,
        "type": "string"
    })
}

/// Schema of the core [`Decision`], from [`Decision::ALL`].
struct DecisionSchema;

impl JsonSchema for DecisionSchema {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "DecisionSchema".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        names_schema(
            "What to do about an item. (Schema of the core `Decision`: the same names.)",
            Decision::ALL.into_iter().map(Decision::as_str),
        )
    }
}

/// Schema of the core [`Theme`], from [`Theme::ALL`].
struct ThemeSchema;

impl JsonSchema for ThemeSchema {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ThemeSchema".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        names_schema(
            "The item's theme category. (Schema of the core `Theme`: the same names.)",
            Theme::ALL.into_iter().map(Theme::as_str),
        )
    }
}

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
    use serde_json::json;

    fn schema_enum(schema: &serde_json::Value, def: &str) -> Vec<String> {
        let values = schema["$defs"][def]["enum"]
            .as_array()
            .unwrap_or_else(|| panic!("{def} has no enum: {schema:#}"));
        values
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn decision_mirror_matches_core() {
        let schema = schemars::schema_for!(TriageAnswer).to_value();
        let core: Vec<String> = Decision::ALL
            .iter()
            .map(|d| {
                serde_json::to_value(d)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(schema_enum(&schema, "DecisionSchema"), core);
    }

    #[test]
    fn theme_mirror_matches_core() {
        let schema = schemars::schema_for!(TriageAnswer).to_value();
        let core: Vec<String> = Theme::ALL.iter().map(|t| t.as_str().to_owned()).collect();
        assert_eq!(schema_enum(&schema, "ThemeSchema"), core);
    }

    #[test]
    fn every_field_is_required_and_unknown_fields_are_denied() {
        fn walk(v: &serde_json::Value, seen: &mut usize) {
            if let Some(obj) = v.as_object() {
                if let Some(props) = obj.get("properties").and_then(|p| p.as_object()) {
                    *seen += 1;
                    let required: BTreeSet<&str> = obj["required"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|r| r.as_str().unwrap())
                        .collect();
                    let names: BTreeSet<&str> = props.keys().map(String::as_str).collect();
                    assert_eq!(required, names, "{v:#}");
                    assert_eq!(obj["additionalProperties"], json!(false), "{v:#}");
                }
                obj.values().for_each(|c| walk(c, seen));
            } else if let Some(a) = v.as_array() {
                a.iter().for_each(|c| walk(c, seen));
            }
        }
        let mut seen = 0;
        walk(&schemars::schema_for!(TriageAnswer).to_value(), &mut seen);
        walk(&schemars::schema_for!(FixAnswer).to_value(), &mut seen);
        assert_eq!(
            seen, 5,
            "TriageAnswer, TriageDecision, FixAnswer, ThreadOutcome, ClusterAssessment"
        );
        walk(
            &schemars::schema_for!(FixValidationAnswer).to_value(),
            &mut seen,
        );
        walk(&schemars::schema_for!(ReviewAnswer).to_value(), &mut seen);
        walk(
            &schemars::schema_for!(ApplyReviewAnswer).to_value(),
            &mut seen,
        );
        assert_eq!(seen, 11, "and the two of each new answer");
    }

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
    fn fix_status_maps_to_outcomes() {
        assert_eq!(FixStatus::Fixed.outcome(), Outcome::Fixed);
        assert_eq!(
            FixStatus::FixedDifferently.outcome(),
            Outcome::FixedDifferently
        );
        assert_eq!(FixStatus::Blocked.outcome(), Outcome::NeedsHuman);
    }

    fn finding(id: &str, severity: Severity, confidence: u8) -> ReviewFinding {
        ReviewFinding {
            id: id.into(),
            severity,
            confidence,
            title: "t".into(),
            path: Some("src/a.rs".into()),
            line: Some(3),
            explanation: "e".into(),
            reproduction: Some("cargo test a".into()),
        }
    }

    #[test]
    fn severities_are_uppercase_and_ordered() {
        assert_eq!(
            serde_json::to_value(Severity::Critical).unwrap(),
            json!("CRITICAL")
        );
        assert_eq!(Severity::Critical.to_string(), "CRITICAL");
        assert!(Severity::Low < Severity::Medium);
        assert!(Severity::High < Severity::Critical);
    }

    #[test]
    fn only_confident_critical_and_high_findings_are_refuted_first() {
        let answer = ReviewAnswer {
            findings: vec![
                finding("F1", Severity::High, 80),
                finding("F2", Severity::Critical, 79),
                finding("F3", Severity::Medium, 100),
                finding("F4", Severity::Critical, 90),
                finding("F5", Severity::Low, 95),
                finding("F6", Severity::High, 95),
            ],
            summary: "s".into(),
        };
        let ids: Vec<&str> = findings_to_refute(&answer)
            .iter()
            .map(|f| f.id.as_str())
            .collect();
        assert_eq!(ids, ["F4", "F6", "F1"]);
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

    #[test]
    fn confidence_is_at_most_100_in_the_schema() {
        let raw = |c: u32| {
            format!(
                r#"{{"findings":[{{"id":"F1","severity":"LOW","confidence":{c},"title":"t","path":null,"line":null,"explanation":"e","reproduction":null}}],"summary":"s"}}"#
            )
        };
        assert!(crate::validate::parse_answer::<ReviewAnswer>(&raw(100)).is_ok());
        let errors = crate::validate::parse_answer::<ReviewAnswer>(&raw(101)).unwrap_err();
        assert!(
            errors[0].starts_with("/findings/0/confidence"),
            "{errors:?}"
        );
    }
}
