//! What a forge says about CI: check runs, legacy statuses, the status
//! rollup, workflow runs, and which checks are required.
//!
//! GitLab's CI fits the same types: a pipeline is a [`WorkflowRun`], each of
//! its jobs a [`CheckRun`] (and a [`CheckState`] of the rollup, `required`
//! when the job may not fail), and the jobs that may not fail are the
//! required checks ([`RequiredSource::PipelineJobs`]).
//!
//! The verdict itself is pure and lives in `shepherd_core::ci`; these types
//! carry the forge's answers there ([`CheckRun::to_state`],
//! [`CommitStatus::to_state`], [`StatusRollup::checks`],
//! [`RequiredChecks::required`]).

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};
use shepherd_core::ci::{CheckConclusion, CheckSource, CheckState, CheckStatus, RequiredSet};

/// One check run of a commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRun {
    /// The check run's REST id.
    pub id: u64,
    /// Its name (what required checks name).
    pub name: String,
    /// The commit it ran on.
    pub head_sha: String,
    /// Where it is (an unknown status reads as `pending`: never a pass).
    pub status: CheckStatus,
    /// How it ended, when completed and known.
    pub conclusion: Option<CheckConclusion>,
    /// Where to read its output.
    pub details_url: Option<String>,
    /// The check suite it belongs to.
    pub check_suite_id: Option<u64>,
    /// The app that created it (`github-actions`; `gitlab-ci` for a job).
    pub app_slug: Option<String>,
    /// Whether the forge says the check is required, when it says so with
    /// the check itself: a GitLab job is required exactly when it may not
    /// fail (`allow_failure: false`). `None` on GitHub (see the rollup).
    #[serde(default)]
    pub required: Option<bool>,
}

impl CheckRun {
    /// The check as the verdict reads it.
    pub fn to_state(&self) -> CheckState {
        CheckState {
            name: self.name.clone(),
            source: CheckSource::CheckRun,
            status: self.status,
            conclusion: self.conclusion,
            required: self.required,
        }
    }
}

/// One legacy commit status (the latest of its context).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitStatus {
    /// The status's REST id.
    pub id: u64,
    /// Its context (what required checks name).
    pub context: String,
    /// `success`, `failure`, `error` or `pending`, as the forge spelt it.
    pub state: String,
    /// Its description.
    pub description: Option<String>,
    /// Where it links to.
    pub target_url: Option<String>,
}

impl CommitStatus {
    /// The status as the verdict reads it (its required flag unknown).
    pub fn to_state(&self) -> CheckState {
        CheckState::from_status_context(self.context.clone(), &self.state, None)
    }
}

/// The combined legacy status of a commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CombinedStatus {
    /// The commit.
    pub sha: String,
    /// The combined state (`success`, `failure`, `pending`); `pending` also
    /// when there is no status at all.
    pub state: String,
    /// The latest status of each context.
    pub statuses: Vec<CommitStatus>,
}

/// The status rollup of a pull request's head commit: every check run and
/// status, each with whether it is required for the pull request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusRollup {
    /// The commit the rollup is of (compare it with the pushed head).
    pub head_sha: String,
    /// The rollup's state (`SUCCESS`, `FAILURE`, `PENDING`, …); `None` when
    /// the commit has no check at all.
    pub state: Option<String>,
    /// Every check, with `required` set.
    pub checks: Vec<CheckState>,
}

/// One workflow run (GitHub Actions).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkflowRun {
    /// The run's id (what `rerun_failed_jobs` takes).
    pub id: u64,
    /// The workflow's name.
    pub name: Option<String>,
    /// The commit it ran on.
    pub head_sha: String,
    /// Where it is (an unknown status reads as `pending`).
    pub status: CheckStatus,
    /// How it ended, when completed and known.
    pub conclusion: Option<CheckConclusion>,
    /// Which attempt this is (1 for the first run).
    pub run_attempt: u32,
    /// The event that triggered it (`push`, `pull_request`).
    pub event: String,
    /// Web URL.
    pub url: String,
}

/// Where required checks are discovered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequiredSource {
    /// Classic branch protection (`…/branches/{b}/protection/required_status_checks`).
    BranchProtection,
    /// Repository and organisation rulesets (`…/rules/branches/{b}`).
    Rulesets,
    /// `isRequired` on the head commit's status rollup.
    StatusRollup,
    /// The jobs of the head pipeline that may not fail (GitLab,
    /// `allow_failure: false`).
    PipelineJobs,
}

impl RequiredSource {
    /// `protection`, `rulesets`, `rollup`, `pipeline`.
    pub fn as_str(self) -> &'static str {
        match self {
            RequiredSource::BranchProtection => "protection",
            RequiredSource::Rulesets => "rulesets",
            RequiredSource::StatusRollup => "rollup",
            RequiredSource::PipelineJobs => "pipeline",
        }
    }
}

/// What one discovery source answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceOutcome {
    /// The source answered with these required names (possibly none).
    Answered {
        /// The required check names it gave.
        contexts: BTreeSet<String>,
    },
    /// The source could not be read (a token without admin rights gets a
    /// 403 or 404 from branch protection): not fatal, recorded.
    Unavailable {
        /// The HTTP status, when there was one.
        status: Option<u16>,
        /// The error, as text (never a token).
        reason: String,
    },
}

/// One discovery source and its outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceReport {
    /// Which source.
    pub source: RequiredSource,
    /// What it answered.
    pub outcome: SourceOutcome,
}

impl fmt::Display for SourceReport {
    /// `protection: 2 required (build, lint)`, `protection: unavailable (403)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = self.source.as_str();
        match &self.outcome {
            SourceOutcome::Answered { contexts } if contexts.is_empty() => {
                write!(f, "{source}: none required")
            }
            SourceOutcome::Answered { contexts } => {
                let names: Vec<&str> = contexts.iter().map(String::as_str).collect();
                write!(
                    f,
                    "{source}: {} required ({})",
                    contexts.len(),
                    names.join(", ")
                )
            }
            SourceOutcome::Unavailable {
                status: Some(status),
                ..
            } => write!(f, "{source}: unavailable ({status})"),
            SourceOutcome::Unavailable { reason, .. } => {
                write!(f, "{source}: unavailable ({reason})")
            }
        }
    }
}

/// The outcome of required-check discovery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequiredChecks {
    /// The union of what the sources that answered gave; `Unknown` when no
    /// source answered (the caller then counts every check: strict).
    pub required: RequiredSet,
    /// Every source, in the order protection, rulesets, rollup (GitHub), or
    /// the head pipeline alone (GitLab).
    pub sources: Vec<SourceReport>,
}

impl RequiredChecks {
    /// Builds the result from the sources' reports.
    pub fn from_sources(sources: Vec<SourceReport>) -> RequiredChecks {
        let mut answered = false;
        let mut names = BTreeSet::new();
        for report in &sources {
            if let SourceOutcome::Answered { contexts } = &report.outcome {
                answered = true;
                names.extend(contexts.iter().cloned());
            }
        }
        let required = if answered {
            RequiredSet::Known(names)
        } else {
            RequiredSet::Unknown
        };
        RequiredChecks { required, sources }
    }

    /// Whether every source answered (a partial answer may miss required
    /// checks that have not appeared yet).
    pub fn complete(&self) -> bool {
        self.sources
            .iter()
            .all(|r| matches!(r.outcome, SourceOutcome::Answered { .. }))
    }

    /// One line per source, for logs and reports.
    pub fn summary(&self) -> Vec<String> {
        self.sources.iter().map(ToString::to_string).collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    fn answered(source: RequiredSource, names: &[&str]) -> SourceReport {
        SourceReport {
            source,
            outcome: SourceOutcome::Answered {
                contexts: names.iter().map(|n| (*n).to_owned()).collect(),
            },
        }
    }

    fn unavailable(source: RequiredSource, status: Option<u16>) -> SourceReport {
        SourceReport {
            source,
            outcome: SourceOutcome::Unavailable {
                status,
                reason: "network error".into(),
            },
        }
    }

    #[test]
    fn the_union_of_the_sources_that_answered() {
        let got = RequiredChecks::from_sources(vec![
            unavailable(RequiredSource::BranchProtection, Some(403)),
            answered(RequiredSource::Rulesets, &["build", "lint"]),
            answered(RequiredSource::StatusRollup, &["build", "legacy/ci"]),
        ]);
        let RequiredSet::Known(names) = &got.required else {
            panic!("expected a known set");
        };
        assert_eq!(
            names.iter().map(String::as_str).collect::<Vec<_>>(),
            ["build", "legacy/ci", "lint"]
        );
        assert!(!got.complete());
        assert_eq!(
            got.summary(),
            [
                "protection: unavailable (403)",
                "rulesets: 2 required (build, lint)",
                "rollup: 2 required (build, legacy/ci)"
            ]
        );
    }

    #[test]
    fn no_source_answered_is_unknown() {
        let got = RequiredChecks::from_sources(vec![
            unavailable(RequiredSource::BranchProtection, Some(404)),
            unavailable(RequiredSource::Rulesets, Some(500)),
            unavailable(RequiredSource::StatusRollup, None),
        ]);
        assert_eq!(got.required, RequiredSet::Unknown);
        assert_eq!(got.summary()[2], "rollup: unavailable (network error)");
        let none = RequiredChecks::from_sources(vec![answered(RequiredSource::Rulesets, &[])]);
        assert_eq!(none.required, RequiredSet::Known(BTreeSet::new()));
        assert!(none.complete());
        assert_eq!(none.summary(), ["rulesets: none required"]);
    }

    #[test]
    fn states_for_the_verdict() {
        let status = CommitStatus {
            id: 1,
            context: "ci/legacy".into(),
            state: "error".into(),
            description: None,
            target_url: None,
        };
        let state = status.to_state();
        assert_eq!(state.source, CheckSource::StatusContext);
        assert_eq!(state.conclusion, Some(CheckConclusion::Error));
        let run = CheckRun {
            id: 2,
            name: "build".into(),
            head_sha: "a".repeat(40),
            status: CheckStatus::Completed,
            conclusion: Some(CheckConclusion::Success),
            details_url: None,
            check_suite_id: Some(3),
            app_slug: Some("github-actions".into()),
            required: None,
        };
        let state = run.to_state();
        assert_eq!(state.name, "build");
        assert_eq!(state.source, CheckSource::CheckRun);
        assert_eq!(state.required, None);
    }
}
