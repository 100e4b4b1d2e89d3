//! An agent's answer, checked in one place: the call's own error, else the
//! answer checked against its task (`shepherd_agent::check_*_answer`), else
//! the answer. A refused answer is never used, and a writer's changes to
//! the worktree go with it ([`Workspace::keep_checked`]).

use std::fmt::Display;

use super::workspace::Workspace;
use crate::error::Result;

/// Why an agent's answer is not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The call failed (the CLI, the model, a timeout): its error.
    Failed(String),
    /// An answer came, and its check found it wrong: every problem, joined.
    Invalid(String),
}

impl Refused {
    /// One sentence naming the agent by its `role` ("fixer", "repair
    /// agent"): "the fixer failed: …" or "the fixer's answer was invalid: …".
    pub(crate) fn said_of(&self, role: &str) -> String {
        match self {
            Refused::Failed(why) => format!("the {role} failed: {why}"),
            Refused::Invalid(why) => format!("the {role}'s answer was invalid: {why}"),
        }
    }
}

/// `got` when the call succeeded and `check` found nothing wrong with it.
pub(crate) fn checked<A, E: Display, V: Display>(
    got: std::result::Result<A, E>,
    check: impl FnOnce(&A) -> std::result::Result<(), Vec<V>>,
) -> std::result::Result<A, Refused> {
    let answer = got.map_err(|e| Refused::Failed(e.to_string()))?;
    match check(&answer) {
        Ok(()) => Ok(answer),
        Err(problems) => Err(Refused::Invalid(
            problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
        )),
    }
}

impl Workspace {
    /// [`checked`], with what a refused writer changed in the worktree
    /// discarded.
    pub(crate) async fn keep_checked<A, E: Display, V: Display>(
        &self,
        got: std::result::Result<A, E>,
        check: impl FnOnce(&A) -> std::result::Result<(), Vec<V>>,
    ) -> Result<std::result::Result<A, Refused>> {
        let answer = checked(got, check);
        if answer.is_err() {
            self.git(|wt| wt.discard_changes()).await?;
        }
        Ok(answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn even(n: &u32) -> std::result::Result<(), Vec<String>> {
        if n % 2 == 0 {
            Ok(())
        } else {
            Err(vec![
                format!("{n} is odd"),
                "odd numbers are refused".into(),
            ])
        }
    }

    #[test]
    fn an_answer_is_kept_only_when_the_call_succeeded_and_it_checks() {
        assert_eq!(checked(Ok::<_, String>(4), even), Ok(4));
        let invalid = checked(Ok::<_, String>(3), even).unwrap_err();
        assert_eq!(
            invalid,
            Refused::Invalid("3 is odd; odd numbers are refused".into())
        );
        assert_eq!(
            invalid.said_of("fixer"),
            "the fixer's answer was invalid: 3 is odd; odd numbers are refused"
        );
        let failed = checked(Err::<u32, _>("timed out after 600 s"), even).unwrap_err();
        assert_eq!(failed, Refused::Failed("timed out after 600 s".into()));
        assert_eq!(
            failed.said_of("repair agent"),
            "the repair agent failed: timed out after 600 s"
        );
    }

    #[test]
    fn a_failed_call_is_not_checked() {
        let never = |_: &u32| -> std::result::Result<(), Vec<String>> {
            panic!("a failed call has no answer to check")
        };
        assert!(matches!(
            checked(Err::<u32, _>("boom"), never),
            Err(Refused::Failed(_))
        ));
    }
}
