//! A failing check, read and judged (issue 31: CI repair).
//!
//! [`excerpt`] cuts a job's log to what a person or a fix agent needs (the
//! failing step, its error lines with their context, the last lines),
//! bounded, and inert: ANSI sequences removed, control characters made
//! visible, HTML comments broken so that a log can never carry a Shepherd
//! marker into a comment. The caller still fences it as untrusted text.
//!
//! [`classify`] says whose failure it is: Shepherd's own regression, one
//! that was there before its push, a flaky job, or the CI infrastructure.

mod excerpt;
mod repair;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::ci::{CheckConclusion, CheckOutcome, CheckState};
pub use excerpt::{excerpt, looks_like_infra, Excerpt, ExcerptLimits};
pub use repair::{gate_repair, RepairFacts, RepairVerify};

/// Whose failure a failing check is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureClass {
    /// It passed (or did not fail) on the head before Shepherd's push:
    /// Shepherd's to fix.
    Regression,
    /// It failed on the head before Shepherd's push too: reported, fixed
    /// only when the user opts in.
    PreExisting,
    /// Its one re-run passed.
    Flaky,
    /// Cancelled, timed out, or the runner failed: not the code's fault.
    Infra,
}

impl FailureClass {
    /// `regression`, `pre-existing`, `flaky`, `infra`.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::Regression => "regression",
            FailureClass::PreExisting => "pre-existing",
            FailureClass::Flaky => "flaky",
            FailureClass::Infra => "infra",
        }
    }

    /// Whether Shepherd tries to fix it: regressions, and pre-existing
    /// failures when the user opted in.
    pub fn is_repaired(self, repair_pre_existing: bool) -> bool {
        match self {
            FailureClass::Regression => true,
            FailureClass::PreExisting => repair_pre_existing,
            FailureClass::Flaky | FailureClass::Infra => false,
        }
    }
}

/// Whether another fix of a failing check may be tried: it is one
/// Shepherd repairs ([`FailureClass::is_repaired`]), a fix agent
/// that writes code is configured, and fewer than `limit` attempts were
/// made in this run.
pub fn may_attempt(
    class: FailureClass,
    repair_pre_existing: bool,
    agent_writes_code: bool,
    attempts: u32,
    limit: u32,
) -> bool {
    class.is_repaired(repair_pre_existing) && agent_writes_code && attempts < limit
}

impl CheckFailure {
    /// One line for a person: `lint on 1a2b3c4: regression, waits for a
    /// person`. The check's name is the CI's text: control characters are
    /// made visible.
    pub fn describe(&self) -> String {
        let short: String = self.sha.chars().take(7).collect();
        let mut line = format!(
            "{} on {short}: {}",
            crate::escape::visible(&self.name),
            self.class.as_str()
        );
        match &self.fixed_by {
            Some(sha) => line.push_str(&format!(
                ", fixed by {}",
                sha.chars().take(7).collect::<String>()
            )),
            None if self.handed_to_a_person => line.push_str(", waits for a person"),
            None => {}
        }
        line
    }
}

/// What is known of one failing check.
#[derive(Debug, Clone, Copy)]
pub struct FailureFacts<'a> {
    /// The check on the pushed head (after its one re-run, if it had one).
    pub now: &'a CheckState,
    /// The same check on the head before Shepherd's push; `None` when it did
    /// not run there.
    pub before: Option<CheckOutcome>,
    /// Whether it failed on the pushed head, was re-run, and the re-run
    /// passed.
    pub rerun_passed: bool,
    /// Whether its log shows a runner or infrastructure error
    /// ([`looks_like_infra`]).
    pub infra_log: bool,
}

/// Whose failure it is. A re-run that passed is flaky; a cancelled or
/// timed-out job, a start-up failure or a runner error is infra; a check
/// that failed before the push too is pre-existing; anything else (it
/// passed before, was pending, or did not run) is Shepherd's regression.
pub fn classify(facts: &FailureFacts<'_>) -> FailureClass {
    if facts.rerun_passed {
        return FailureClass::Flaky;
    }
    let infra_conclusion = matches!(
        facts.now.conclusion,
        Some(
            CheckConclusion::Cancelled
                | CheckConclusion::TimedOut
                | CheckConclusion::StartupFailure
        )
    );
    if infra_conclusion || facts.infra_log {
        return FailureClass::Infra;
    }
    if facts.before == Some(CheckOutcome::Fail) {
        return FailureClass::PreExisting;
    }
    FailureClass::Regression
}

/// A required check that failed on a head Shepherd waited for, as the run
/// reports it: in the report (Markdown and JSON), `ci.json`'s companion
/// `repair.json` and `mergeability.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckFailure {
    /// The check's name.
    pub name: String,
    /// The head it failed on.
    pub sha: String,
    /// Whose failure it is.
    pub class: FailureClass,
    /// The head before Shepherd's push it was compared with; `None` when
    /// Shepherd pushed nothing in this run (the failure is the PR's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_sha: Option<String>,
    /// Its log, cut to what matters (inert, untrusted text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<Excerpt>,
    /// Why there is no excerpt, when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_log: Option<String>,
    /// What was tried, in order (the re-run, fix attempts).
    #[serde(default)]
    pub tried: Vec<String>,
    /// How many fixes of this check the run has tried
    /// (`ci.repair_attempts` bounds it).
    #[serde(default)]
    pub attempts: u32,
    /// The commit that fixed it, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_by: Option<String>,
    /// Whether it waits for a person.
    #[serde(default)]
    pub handed_to_a_person: bool,
}
