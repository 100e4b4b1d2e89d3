//! Validating agent answers: JSON Schema first, then the typed checks, with
//! one retry that shows the agent its errors, then failing closed.
//!
//! Every subprocess provider goes through [`ask_validated`]; nothing an agent
//! prints reaches the engine without passing it.

use std::future::Future;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::agent::AgentError;
use crate::task::Role;

/// How many times an agent is asked before the answer is refused.
pub const MAX_ATTEMPTS: u32 = 2;

/// Longest error message kept; validation errors may quote agent output.
const MAX_ERROR_CHARS: usize = 400;

/// At most this many errors are shown to the agent and kept.
const MAX_ERRORS: usize = 20;

/// The JSON Schema of answer type `A` (draft 2020-12).
pub fn answer_schema<A: JsonSchema>() -> serde_json::Value {
    schemars::schema_for!(A).to_value()
}

/// One call to the agent, as [`ask_validated`] makes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// 1 for the first call, 2 for the retry.
    pub number: u32,
    /// Why the previous answer was refused; empty on the first call.
    pub previous_errors: Vec<String>,
}

/// Parses and validates `raw` (the agent's whole answer, a JSON document)
/// against `A`'s schema, then deserializes it. Returns the errors otherwise:
/// each names the JSON path (`/items/0/decision`) and what is wrong.
pub fn parse_answer<A: DeserializeOwned + JsonSchema>(raw: &str) -> Result<A, Vec<String>> {
    let value: serde_json::Value = serde_json::from_str(raw.trim())
        .map_err(|e| vec![bounded(format!("answer is not a JSON document: {e}"))])?;
    let schema = answer_schema::<A>();
    let validator = jsonschema::validator_for(&schema).map_err(|e| {
        // Our own schema failed to compile: a bug, but still not a pass.
        vec![bounded(format!(
            "internal: answer schema does not compile: {e}"
        ))]
    })?;
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .take(MAX_ERRORS)
        .map(|e| {
            let path = e.instance_path().to_string();
            let path = if path.is_empty() {
                "/".to_owned()
            } else {
                path
            };
            bounded(format!("{path}: {e}"))
        })
        .collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    serde_json::from_value(value).map_err(|e| vec![bounded(format!("answer does not fit: {e}"))])
}

fn bounded(mut s: String) -> String {
    if s.chars().count() > MAX_ERROR_CHARS {
        s = s.chars().take(MAX_ERROR_CHARS).collect();
        s.push('…');
    }
    s
}

/// Asks for an answer, validates it, and on failure asks once more showing
/// the errors; a second failure fails closed with [`AgentError::InvalidAnswer`].
///
/// `ask` makes one call and returns the agent's raw answer (a JSON document).
/// Errors from `ask` itself (spawn failure, timeout, non-zero exit) are
/// returned at once, without a retry. `check` runs the checks a schema cannot
/// express (ids against the task) on a schema-valid answer.
pub async fn ask_validated<A, F, Fut, C, E>(
    role: Role,
    mut ask: F,
    check: C,
) -> Result<A, AgentError>
where
    A: DeserializeOwned + JsonSchema,
    F: FnMut(Attempt) -> Fut,
    Fut: Future<Output = Result<String, AgentError>>,
    C: Fn(&A) -> Result<(), Vec<E>>,
    E: std::fmt::Display,
{
    let mut previous_errors = Vec::new();
    for number in 1..=MAX_ATTEMPTS {
        let raw = ask(Attempt {
            number,
            previous_errors: previous_errors.clone(),
        })
        .await?;
        let errors = match parse_answer::<A>(&raw) {
            Ok(answer) => match check(&answer) {
                Ok(()) => return Ok(answer),
                Err(errors) => errors
                    .iter()
                    .take(MAX_ERRORS)
                    .map(|e| bounded(e.to_string()))
                    .collect(),
            },
            Err(errors) => errors,
        };
        tracing::warn!(%role, attempt = number, errors = ?errors, "agent answer refused");
        previous_errors = errors;
    }
    Err(AgentError::InvalidAnswer {
        role,
        attempts: MAX_ATTEMPTS,
        errors: previous_errors,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use crate::answer::{ReviewAnswer, TriageAnswer};
    use crate::check::check_ids;
    use std::cell::RefCell;

    const GOOD: &str = r#"{"items":[{"id":"T1","decision":"code-change","theme":"naming","reasoning":"the name lies","reply_hint":"renamed","pr_changed_evidence":false}]}"#;

    fn check(a: &TriageAnswer) -> Result<(), Vec<crate::check::IdSetMismatch>> {
        check_ids(["T1"], a.items.iter().map(|i| i.id.as_str())).map_err(|e| vec![e])
    }

    #[test]
    fn schema_errors_name_the_path() {
        let bad = GOOD
            .replace("code-change", "fix-it")
            .replace(r#""theme":"naming","#, "");
        let errors = parse_answer::<TriageAnswer>(&bad).unwrap_err();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            errors.iter().any(|e| e.starts_with("/items/0/decision: ")),
            "{errors:?}"
        );
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("/items/0: ") && e.contains("theme")),
            "{errors:?}"
        );
    }

    #[test]
    fn unknown_fields_and_blank_reasoning_are_refused() {
        let extra = GOOD.replace(
            r#""pr_changed_evidence":false"#,
            r#""pr_changed_evidence":false,"confidence":3"#,
        );
        assert!(parse_answer::<TriageAnswer>(&extra).unwrap_err()[0].contains("confidence"));
        let blank = GOOD.replace("the name lies", " \n ");
        assert!(parse_answer::<TriageAnswer>(&blank).is_err());
        let root = parse_answer::<TriageAnswer>("[]").unwrap_err();
        assert!(root[0].starts_with("/: "), "{root:?}");
        let garbage = parse_answer::<TriageAnswer>("Sure! Here is the JSON").unwrap_err();
        assert!(
            garbage[0].starts_with("answer is not a JSON document"),
            "{garbage:?}"
        );
    }

    #[test]
    fn cluster_assessment_must_be_present_but_may_be_null() {
        use crate::answer::FixAnswer;
        let outcome = r#"{"id":"T1","status":"fixed-differently","summary":"s","reply":"r","files":["a.rs"]}"#;
        let null = format!(r#"{{"outcomes":[{outcome}],"cluster_assessment":null}}"#);
        assert_eq!(
            parse_answer::<FixAnswer>(&null).unwrap().cluster_assessment,
            None
        );
        let missing = format!(r#"{{"outcomes":[{outcome}]}}"#);
        let errors = parse_answer::<FixAnswer>(&missing).unwrap_err();
        assert!(errors[0].contains("cluster_assessment"), "{errors:?}");
        let given = format!(
            r#"{{"outcomes":[{outcome}],"cluster_assessment":{{"verdict":"systemic","why":"one cause"}}}}"#
        );
        assert!(parse_answer::<FixAnswer>(&given)
            .unwrap()
            .cluster_assessment
            .is_some());
        let bad_status = null.replace("fixed-differently", "done");
        assert!(parse_answer::<FixAnswer>(&bad_status).unwrap_err()[0]
            .starts_with("/outcomes/0/status"));
    }

    #[test]
    fn null_theme_is_accepted() {
        let null = GOOD.replace(r#""naming""#, "null");
        assert_eq!(
            parse_answer::<TriageAnswer>(&null).unwrap().items[0].theme,
            None
        );
    }

    fn block_on<F: Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn retry_shows_the_errors_then_succeeds() {
        let calls = RefCell::new(Vec::new());
        let answer = block_on(ask_validated(
            Role::Triage,
            |attempt| {
                calls.borrow_mut().push(attempt.clone());
                let raw = if attempt.number == 1 {
                    GOOD.replace("T1", "T2")
                } else {
                    GOOD.to_owned()
                };
                async move { Ok(raw) }
            },
            check,
        ))
        .unwrap();
        assert_eq!(answer.items[0].id, "T1");
        let calls = calls.into_inner();
        assert_eq!(calls.len(), 2);
        assert!(calls[0].previous_errors.is_empty());
        assert_eq!(
            calls[1].previous_errors,
            vec![
                r#"answer ids do not match the task's items: missing ["T1"]; extra ["T2"]"#
                    .to_owned()
            ]
        );
    }

    #[test]
    fn second_failure_fails_closed_with_the_errors() {
        let mut n = 0;
        let err = block_on(ask_validated::<TriageAnswer, _, _, _, _>(
            Role::Triage,
            |_| {
                n += 1;
                async { Ok("nope".to_owned()) }
            },
            check,
        ))
        .unwrap_err();
        assert_eq!(n, 2);
        match err {
            AgentError::InvalidAnswer {
                role,
                attempts,
                errors,
            } => {
                assert_eq!((role, attempts), (Role::Triage, 2));
                assert!(errors[0].starts_with("answer is not a JSON document"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn call_errors_are_not_retried() {
        let mut n = 0;
        let err = block_on(ask_validated::<TriageAnswer, _, _, _, _>(
            Role::Fix,
            |_| {
                n += 1;
                async {
                    Err(AgentError::Unsupported {
                        provider: "x".into(),
                        role: Role::Fix,
                    })
                }
            },
            check,
        ))
        .unwrap_err();
        assert_eq!(n, 1);
        assert!(matches!(err, AgentError::Unsupported { .. }));
    }

    #[test]
    fn long_errors_are_bounded() {
        let s = bounded("x".repeat(10_000));
        assert_eq!(s.chars().count(), MAX_ERROR_CHARS + 1);
    }

    #[test]
    fn confidence_is_at_most_100_in_the_schema() {
        let raw = |c: u32| {
            format!(
                r#"{{"findings":[{{"id":"F1","severity":"LOW","confidence":{c},"title":"t","path":null,"line":null,"explanation":"e","reproduction":null}}],"summary":"s"}}"#
            )
        };
        assert!(parse_answer::<ReviewAnswer>(&raw(100)).is_ok());
        let errors = parse_answer::<ReviewAnswer>(&raw(101)).unwrap_err();
        assert!(
            errors[0].starts_with("/findings/0/confidence"),
            "{errors:?}"
        );
    }
}
