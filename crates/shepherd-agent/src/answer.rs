//! What an agent answers: typed answers and their JSON Schemas. The checks a
//! schema cannot express (the answer's ids against the task's) are in
//! [`crate::check`].
//!
//! Every answer type denies unknown fields and requires every field (an
//! optional one is `null` when absent), so the generated schema is strict
//! enough for CLIs that enforce structured output. Core types that do not
//! implement `JsonSchema` ([`Decision`], [`Theme`]) get their schema from
//! their one list in core (`Decision::ALL`, `Theme::ALL`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use shepherd_core::ledger::{Decision, Outcome};
use shepherd_core::theme::Theme;

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

/// A finding `id` of `severity` and `confidence` on `src/a.rs:3`, with a
/// reproduction: the tests' fixture.
#[cfg(test)]
pub(crate) fn finding(id: &str, severity: Severity, confidence: u8) -> ReviewFinding {
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

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeSet;

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
            .map(|d| d.as_str().to_owned())
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
    fn fix_status_maps_to_outcomes() {
        assert_eq!(FixStatus::Fixed.outcome(), Outcome::Fixed);
        assert_eq!(
            FixStatus::FixedDifferently.outcome(),
            Outcome::FixedDifferently
        );
        assert_eq!(FixStatus::Blocked.outcome(), Outcome::NeedsHuman);
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
}
