//! CI records: workflow runs with their jobs, check suites, check runs and
//! legacy commit statuses (the writes that move them along, queued →
//! in_progress → completed, are `ci_writes.rs`).
//!
//! GitHub Actions gives every job a check run with the same id; the emulator
//! does the same. Re-running failed jobs makes a new attempt of the workflow
//! run with new jobs (and check runs) for the failed ones only.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::automation::{CheckSpec, EndpointAccess};
use crate::scenario::Scenario;

/// `queued`, `in_progress` or `completed` (check runs, jobs, workflow runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RunStatus {
    Queued,
    InProgress,
    Completed,
}

impl RunStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::InProgress => "in_progress",
            RunStatus::Completed => "completed",
        }
    }
}

/// How a completed check run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Conclusion {
    Success,
    Failure,
    TimedOut,
}

impl Conclusion {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Conclusion::Success => "success",
            Conclusion::Failure => "failure",
            Conclusion::TimedOut => "timed_out",
        }
    }

    pub(crate) fn failed(self) -> bool {
        self != Conclusion::Success
    }
}

/// A legacy commit status state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum StatusState {
    Pending,
    Success,
    Failure,
    Error,
}

impl StatusState {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            StatusState::Pending => "pending",
            StatusState::Success => "success",
            StatusState::Failure => "failure",
            StatusState::Error => "error",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<StatusState> {
        match text {
            "pending" => Some(StatusState::Pending),
            "success" => Some(StatusState::Success),
            "failure" => Some(StatusState::Failure),
            "error" => Some(StatusState::Error),
            _ => None,
        }
    }
}

/// A check run's summary for a command that exited with `code`.
pub(crate) fn exit_summary(code: i32) -> String {
    format!("exit status {code}")
}

/// The exit code an [`exit_summary`] names.
pub(crate) fn exit_code(summary: &str) -> Option<i32> {
    summary.strip_prefix("exit status ")?.parse().ok()
}

/// A job of a workflow run (one attempt). Its id is its check run's id.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct JobRecord {
    pub(crate) database_id: u64,
    pub(crate) name: String,
    pub(crate) run_attempt: u32,
    pub(crate) status: RunStatus,
    pub(crate) conclusion: Option<Conclusion>,
    pub(crate) started_at: Option<String>,
    pub(crate) completed_at: Option<String>,
}

/// A workflow run: the jobs of every attempt.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct WorkflowRunRecord {
    pub(crate) database_id: u64,
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) run_number: u64,
    pub(crate) head_sha: String,
    pub(crate) head_branch: String,
    pub(crate) event: String,
    pub(crate) actor: String,
    pub(crate) status: RunStatus,
    pub(crate) conclusion: Option<Conclusion>,
    pub(crate) run_attempt: u32,
    pub(crate) created_at: String,
    pub(crate) updated_at: String,
    pub(crate) run_started_at: String,
    pub(crate) check_suite_id: u64,
    pub(crate) jobs: Vec<JobRecord>,
}

impl WorkflowRunRecord {
    /// The latest job of each name, in first-seen order.
    pub(crate) fn latest_jobs(&self) -> Vec<&JobRecord> {
        let mut latest: Vec<&JobRecord> = Vec::new();
        for job in &self.jobs {
            match latest.iter_mut().find(|j| j.name == job.name) {
                Some(slot) => *slot = job,
                None => latest.push(job),
            }
        }
        latest
    }
}

/// A check suite (one per workflow run).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CheckSuiteRecord {
    pub(crate) database_id: u64,
    pub(crate) id: String,
    pub(crate) head_sha: String,
    pub(crate) head_branch: String,
    pub(crate) status: RunStatus,
    pub(crate) conclusion: Option<Conclusion>,
    pub(crate) created_at: String,
    pub(crate) updated_at: String,
    pub(crate) workflow_run_id: u64,
}

/// A check run.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CheckRunRecord {
    pub(crate) database_id: u64,
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) head_sha: String,
    pub(crate) status: RunStatus,
    pub(crate) conclusion: Option<Conclusion>,
    pub(crate) started_at: Option<String>,
    pub(crate) completed_at: Option<String>,
    pub(crate) check_suite_id: u64,
    pub(crate) workflow_run_id: u64,
    pub(crate) run_attempt: u32,
    pub(crate) output_title: Option<String>,
    pub(crate) output_summary: Option<String>,
    pub(crate) output_text: Option<String>,
}

/// A legacy commit status.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct StatusRecord {
    pub(crate) database_id: u64,
    pub(crate) id: String,
    pub(crate) sha: String,
    pub(crate) context: String,
    pub(crate) state: StatusState,
    pub(crate) description: Option<String>,
    pub(crate) target_url: Option<String>,
    pub(crate) created_at: String,
    pub(crate) creator: String,
}

/// Everything CI.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CiState {
    pub(crate) protection: EndpointAccess,
    pub(crate) rulesets: EndpointAccess,
    /// Required contexts on protected branches.
    pub(crate) required: BTreeSet<String>,
    /// Branches with protection and rulesets: the PRs' base and the default.
    pub(crate) protected_branches: BTreeSet<String>,
    pub(crate) workflow_runs: Vec<WorkflowRunRecord>,
    pub(crate) check_suites: Vec<CheckSuiteRecord>,
    pub(crate) check_runs: Vec<CheckRunRecord>,
    pub(crate) statuses: Vec<StatusRecord>,
    /// Runs so far per `name@sha`, for flaky checks.
    pub(crate) attempts: BTreeMap<String, u32>,
    pub(crate) next_run_number: u64,
}

impl CiState {
    pub(crate) fn from_scenario(scenario: &Scenario) -> CiState {
        let mut required: BTreeSet<String> = scenario
            .checks
            .iter()
            .filter(|c| c.required)
            .map(|c| c.name.clone())
            .collect();
        required.extend(scenario.ci.required_contexts.iter().cloned());
        let protected_branches = [
            scenario.pull_request.base.clone(),
            scenario.repository.default_branch.clone(),
        ]
        .into_iter()
        .collect();
        CiState {
            protection: scenario.ci.protection,
            rulesets: scenario.ci.rulesets.unwrap_or(scenario.ci.protection),
            required,
            protected_branches,
            workflow_runs: Vec::new(),
            check_suites: Vec::new(),
            check_runs: Vec::new(),
            statuses: Vec::new(),
            attempts: BTreeMap::new(),
            next_run_number: 1,
        }
    }

    /// The required contexts of `branch` (none when it is not protected).
    pub(crate) fn required_for(&self, branch: &str) -> Vec<String> {
        if self.protected_branches.contains(branch) {
            self.required.iter().cloned().collect()
        } else {
            Vec::new()
        }
    }

    /// The workflow run `id`.
    pub(crate) fn workflow_run(&self, id: u64) -> Option<&WorkflowRunRecord> {
        self.workflow_runs.iter().find(|r| r.database_id == id)
    }

    /// The workflow run `id`, to change.
    pub(crate) fn workflow_run_mut(&mut self, id: u64) -> Option<&mut WorkflowRunRecord> {
        self.workflow_runs.iter_mut().find(|r| r.database_id == id)
    }

    /// The check suite `id`.
    pub(crate) fn check_suite(&self, id: u64) -> Option<&CheckSuiteRecord> {
        self.check_suites.iter().find(|s| s.database_id == id)
    }

    /// The check suite `id`, to change.
    pub(crate) fn check_suite_mut(&mut self, id: u64) -> Option<&mut CheckSuiteRecord> {
        self.check_suites.iter_mut().find(|s| s.database_id == id)
    }

    /// The check run `id`.
    pub(crate) fn check_run(&self, id: u64) -> Option<&CheckRunRecord> {
        self.check_runs.iter().find(|r| r.database_id == id)
    }

    /// The check run `id`, to change.
    pub(crate) fn check_run_mut(&mut self, id: u64) -> Option<&mut CheckRunRecord> {
        self.check_runs.iter_mut().find(|r| r.database_id == id)
    }

    /// The commit status `id`.
    /// Job `job_id` with the run holding it.
    pub(crate) fn job(&self, job_id: u64) -> Option<(&WorkflowRunRecord, &JobRecord)> {
        self.workflow_runs.iter().find_map(|run| {
            let job = run.jobs.iter().find(|j| j.database_id == job_id)?;
            Some((run, job))
        })
    }

    pub(crate) fn status(&self, id: u64) -> Option<&StatusRecord> {
        self.statuses.iter().find(|s| s.database_id == id)
    }

    /// The latest check run of each name for `sha`, oldest first.
    pub(crate) fn latest_check_runs(&self, sha: &str) -> Vec<&CheckRunRecord> {
        let mut latest: BTreeMap<&str, &CheckRunRecord> = BTreeMap::new();
        for run in self.check_runs.iter().filter(|r| r.head_sha == sha) {
            latest.insert(&run.name, run);
        }
        let mut runs: Vec<&CheckRunRecord> = latest.into_values().collect();
        runs.sort_by_key(|r| r.database_id);
        runs
    }

    /// The latest status of each context for `sha`, oldest first.
    pub(crate) fn latest_statuses(&self, sha: &str) -> Vec<&StatusRecord> {
        let mut latest: BTreeMap<&str, &StatusRecord> = BTreeMap::new();
        for status in self.statuses.iter().filter(|s| s.sha == sha) {
            latest.insert(&status.context, status);
        }
        let mut statuses: Vec<&StatusRecord> = latest.into_values().collect();
        statuses.sort_by_key(|s| s.database_id);
        statuses
    }

    /// The combined state of the statuses of `sha`, as GitHub computes it:
    /// failure if any failed or errored, else pending if any is pending or
    /// there is none, else success.
    pub(crate) fn combined_state(&self, sha: &str) -> StatusState {
        let statuses = self.latest_statuses(sha);
        if statuses
            .iter()
            .any(|s| matches!(s.state, StatusState::Failure | StatusState::Error))
        {
            StatusState::Failure
        } else if statuses.is_empty() || statuses.iter().any(|s| s.state == StatusState::Pending) {
            StatusState::Pending
        } else {
            StatusState::Success
        }
    }

    /// The rollup of check runs and statuses of `sha`; `None` when there is
    /// neither (GitHub's `statusCheckRollup: null`).
    pub(crate) fn rollup_state(&self, sha: &str) -> Option<StatusState> {
        let runs = self.latest_check_runs(sha);
        let statuses = self.latest_statuses(sha);
        if runs.is_empty() && statuses.is_empty() {
            return None;
        }
        let failed = runs
            .iter()
            .any(|r| r.conclusion.is_some_and(Conclusion::failed))
            || statuses
                .iter()
                .any(|s| matches!(s.state, StatusState::Failure | StatusState::Error));
        let pending = runs.iter().any(|r| r.status != RunStatus::Completed)
            || statuses.iter().any(|s| s.state == StatusState::Pending);
        Some(if failed {
            StatusState::Failure
        } else if pending {
            StatusState::Pending
        } else {
            StatusState::Success
        })
    }
}

/// A job to start: which check, for which commit, with which ids.
#[derive(Debug, Clone)]
pub(crate) struct JobLaunch {
    pub(crate) job_id: u64,
    pub(crate) run_id: u64,
    pub(crate) sha: String,
    pub(crate) spec: CheckSpec,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state_with_runs() -> CiState {
        let scenario = Scenario::new(
            crate::scenario::RepositorySpec::new("o", "r"),
            crate::scenario::PullRequestSpec::new(1, "t", "a", "feature", "main"),
        );
        CiState::from_scenario(&scenario)
    }

    #[test]
    fn combined_state_follows_githubs_rules() {
        let mut ci = state_with_runs();
        assert_eq!(ci.combined_state("s"), StatusState::Pending);
        assert_eq!(ci.rollup_state("s"), None);
        let status = |id, context: &str, state| StatusRecord {
            database_id: id,
            id: String::new(),
            sha: "s".into(),
            context: context.into(),
            state,
            description: None,
            target_url: None,
            created_at: String::new(),
            creator: String::new(),
        };
        ci.statuses.push(status(1, "a", StatusState::Failure));
        ci.statuses.push(status(2, "b", StatusState::Success));
        assert_eq!(ci.combined_state("s"), StatusState::Failure);
        // The latest status of a context wins.
        ci.statuses.push(status(3, "a", StatusState::Success));
        assert_eq!(ci.combined_state("s"), StatusState::Success);
        assert_eq!(ci.rollup_state("s"), Some(StatusState::Success));
        ci.statuses.push(status(4, "c", StatusState::Pending));
        assert_eq!(ci.rollup_state("s"), Some(StatusState::Pending));
    }
}
