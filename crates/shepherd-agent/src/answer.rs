//! What an agent answers: typed answers, their JSON Schemas, and the checks
//! a schema cannot express (the answer's ids against the task's).
//!
//! Every answer type denies unknown fields and requires every field (an
//! optional one is `null` when absent), so the generated schema is strict
//! enough for CLIs that enforce structured output. Core types that do not
//! implement `JsonSchema` ([`Decision`], [`Theme`]) are described by private
//! mirror enums, tested to match them exactly.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use shepherd_core::ledger::{Decision, Outcome};
use shepherd_core::theme::Theme;

use crate::task::{FixTask, TriageTask};

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

/// What to do about an item. (Schema of the core `Decision`: the same names.)
#[derive(JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[allow(dead_code)] // only its schema is used
enum DecisionSchema {
    CodeChange,
    MetadataChange,
    Question,
    Wontfix,
    AlreadyAddressed,
    Invalid,
    NeedsHuman,
}

/// The item's theme category. (Schema of the core `Theme`: the same names.)
#[derive(JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[allow(dead_code)] // only its schema is used
enum ThemeSchema {
    ErrorHandling,
    Validation,
    TypeSafety,
    Naming,
    Performance,
    Testing,
    Security,
    Documentation,
    Style,
    Architecture,
    Concurrency,
    ResourceManagement,
    Logging,
    Other,
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
        let all = [
            Decision::CodeChange,
            Decision::MetadataChange,
            Decision::Question,
            Decision::Wontfix,
            Decision::AlreadyAddressed,
            Decision::Invalid,
            Decision::NeedsHuman,
        ];
        let core: Vec<String> = all
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
}
