//! CI records: workflow runs with their jobs, check suites, check runs and
//! legacy commit statuses, and the writes that move them along
//! (queued → in_progress → completed).
//!
//! GitHub Actions gives every job a check run with the same id; the emulator
//! does the same. Re-running failed jobs makes a new attempt of the workflow
//! run with new jobs (and check runs) for the failed ones only.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::automation::{CheckSpec, EndpointAccess};
use crate::ids::{self, NodeKind};
use crate::scenario::Scenario;
use crate::state::{State, WriteError};

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
    next_run_number: u64,
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
    fn workflow_run_mut(&mut self, id: u64) -> Option<&mut WorkflowRunRecord> {
        self.workflow_runs.iter_mut().find(|r| r.database_id == id)
    }

    /// The check suite `id`.
    pub(crate) fn check_suite(&self, id: u64) -> Option<&CheckSuiteRecord> {
        self.check_suites.iter().find(|s| s.database_id == id)
    }

    /// The check suite `id`, to change.
    fn check_suite_mut(&mut self, id: u64) -> Option<&mut CheckSuiteRecord> {
        self.check_suites.iter_mut().find(|s| s.database_id == id)
    }

    /// The check run `id`.
    pub(crate) fn check_run(&self, id: u64) -> Option<&CheckRunRecord> {
        self.check_runs.iter().find(|r| r.database_id == id)
    }

    /// The check run `id`, to change.
    fn check_run_mut(&mut self, id: u64) -> Option<&mut CheckRunRecord> {
        self.check_runs.iter_mut().find(|r| r.database_id == id)
    }

    /// The commit status `id`.
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

impl State {
    /// Queues a workflow run of `checks` for `sha`: a check suite, one job
    /// and check run per check, and pending statuses where asked.
    pub(crate) fn ci_queue_run(
        &mut self,
        sha: &str,
        branch: &str,
        event: &str,
        actor: &str,
        workflow: &str,
        checks: &[CheckSpec],
    ) -> Vec<JobLaunch> {
        if checks.is_empty() {
            return Vec::new();
        }
        let run_id = self.next_id();
        let suite_id = self.next_id();
        let now = self.tick();
        let run_number = self.ci.next_run_number;
        self.ci.next_run_number += 1;
        self.ci.check_suites.push(CheckSuiteRecord {
            database_id: suite_id,
            id: ids::node_id(NodeKind::CheckSuite, suite_id),
            head_sha: sha.to_owned(),
            head_branch: branch.to_owned(),
            status: RunStatus::Queued,
            conclusion: None,
            created_at: now.clone(),
            updated_at: now.clone(),
            workflow_run_id: run_id,
        });
        self.ci.workflow_runs.push(WorkflowRunRecord {
            database_id: run_id,
            id: ids::node_id(NodeKind::WorkflowRun, run_id),
            name: workflow.to_owned(),
            run_number,
            head_sha: sha.to_owned(),
            head_branch: branch.to_owned(),
            event: event.to_owned(),
            actor: actor.to_owned(),
            status: RunStatus::Queued,
            conclusion: None,
            run_attempt: 1,
            created_at: now.clone(),
            updated_at: now.clone(),
            run_started_at: now,
            check_suite_id: suite_id,
            jobs: Vec::new(),
        });
        checks
            .iter()
            .map(|spec| self.ci_queue_job(run_id, spec, 1))
            .collect()
    }

    /// Adds a queued job (and its check run) to run `run_id`.
    fn ci_queue_job(&mut self, run_id: u64, spec: &CheckSpec, attempt: u32) -> JobLaunch {
        let job_id = self.next_id();
        let (sha, suite_id) = self
            .ci
            .workflow_run(run_id)
            .map(|r| (r.head_sha.clone(), r.check_suite_id))
            .unwrap_or_default();
        if let Some(run) = self.ci.workflow_run_mut(run_id) {
            run.jobs.push(JobRecord {
                database_id: job_id,
                name: spec.name.clone(),
                run_attempt: attempt,
                status: RunStatus::Queued,
                conclusion: None,
                started_at: None,
                completed_at: None,
            });
        }
        self.ci.check_runs.push(CheckRunRecord {
            database_id: job_id,
            id: ids::node_id(NodeKind::CheckRun, job_id),
            name: spec.name.clone(),
            head_sha: sha.clone(),
            status: RunStatus::Queued,
            conclusion: None,
            started_at: None,
            completed_at: None,
            check_suite_id: suite_id,
            workflow_run_id: run_id,
            run_attempt: attempt,
            output_title: None,
            output_summary: None,
            output_text: None,
        });
        if spec.status_context {
            self.ci_add_status(
                &sha,
                &spec.name,
                StatusState::Pending,
                Some("Queued".to_owned()),
                None,
                "github-actions",
            );
        }
        JobLaunch {
            job_id,
            run_id,
            sha,
            spec: spec.clone(),
        }
    }

    /// Job `job_id` starts; returns how many times its check has now run
    /// for its commit (1 on the first run), for flakiness.
    pub(crate) fn ci_job_started(&mut self, job_id: u64) -> u32 {
        let now = self.tick();
        let Some(run) = self.ci.check_run_mut(job_id) else {
            return 0;
        };
        run.status = RunStatus::InProgress;
        run.started_at = Some(now.clone());
        let key = format!("{}@{}", run.name, run.head_sha);
        let (run_id, suite_id) = (run.workflow_run_id, run.check_suite_id);
        if let Some(workflow) = self.ci.workflow_run_mut(run_id) {
            workflow.status = RunStatus::InProgress;
            workflow.updated_at = now.clone();
            if let Some(job) = workflow.jobs.iter_mut().find(|j| j.database_id == job_id) {
                job.status = RunStatus::InProgress;
                job.started_at = Some(now.clone());
            }
        }
        if let Some(suite) = self.ci.check_suite_mut(suite_id) {
            suite.status = RunStatus::InProgress;
            suite.updated_at = now;
        }
        let count = self.ci.attempts.entry(key).or_default();
        *count += 1;
        *count
    }

    /// Job `job_id` ended with `conclusion`; its run and suite complete
    /// when their last job does.
    pub(crate) fn ci_job_finished(
        &mut self,
        job_id: u64,
        conclusion: Conclusion,
        summary: String,
        text: String,
        status_context: bool,
    ) {
        let now = self.tick();
        let Some(run) = self.ci.check_run_mut(job_id) else {
            return;
        };
        run.status = RunStatus::Completed;
        run.conclusion = Some(conclusion);
        run.completed_at = Some(now.clone());
        run.output_title = Some(format!("{} {}", run.name, conclusion.as_str()));
        run.output_summary = Some(summary.clone());
        run.output_text = Some(text);
        let (name, sha, run_id, suite_id) = (
            run.name.clone(),
            run.head_sha.clone(),
            run.workflow_run_id,
            run.check_suite_id,
        );
        let mut finished = None;
        if let Some(workflow) = self.ci.workflow_run_mut(run_id) {
            if let Some(job) = workflow.jobs.iter_mut().find(|j| j.database_id == job_id) {
                job.status = RunStatus::Completed;
                job.conclusion = Some(conclusion);
                job.completed_at = Some(now.clone());
            }
            workflow.updated_at = now.clone();
            let latest = workflow.latest_jobs();
            if latest.iter().all(|j| j.status == RunStatus::Completed) {
                let failed = latest
                    .iter()
                    .any(|j| j.conclusion.is_some_and(Conclusion::failed));
                let overall = if failed {
                    Conclusion::Failure
                } else {
                    Conclusion::Success
                };
                workflow.status = RunStatus::Completed;
                workflow.conclusion = Some(overall);
                finished = Some(overall);
            }
        }
        if let Some(overall) = finished {
            if let Some(suite) = self.ci.check_suite_mut(suite_id) {
                suite.status = RunStatus::Completed;
                suite.conclusion = Some(overall);
                suite.updated_at = now;
            }
        }
        if status_context {
            let state = if conclusion.failed() {
                StatusState::Failure
            } else {
                StatusState::Success
            };
            self.ci_add_status(&sha, &name, state, Some(summary), None, "github-actions");
        }
    }

    /// `rerun-failed-jobs`: a new attempt of run `run_id` with new jobs for
    /// the failed ones.
    pub(crate) fn ci_rerun_failed(
        &mut self,
        run_id: u64,
        checks: &[CheckSpec],
    ) -> Result<Vec<JobLaunch>, WriteError> {
        let Some(run) = self.ci.workflow_run(run_id) else {
            return Err(WriteError::NotFound("Not Found".into()));
        };
        if run.status != RunStatus::Completed {
            return Err(WriteError::Forbidden(
                "This workflow is already running".into(),
            ));
        }
        let failed: Vec<String> = run
            .latest_jobs()
            .iter()
            .filter(|j| j.conclusion.is_some_and(Conclusion::failed))
            .map(|j| j.name.clone())
            .collect();
        if failed.is_empty() {
            return Err(WriteError::Forbidden(
                "This workflow run has no failed jobs to re-run".into(),
            ));
        }
        let attempt = run.run_attempt + 1;
        let suite_id = run.check_suite_id;
        let now = self.tick();
        if let Some(run) = self.ci.workflow_run_mut(run_id) {
            run.run_attempt = attempt;
            run.status = RunStatus::Queued;
            run.conclusion = None;
            run.updated_at = now.clone();
            run.run_started_at = now.clone();
        }
        if let Some(suite) = self.ci.check_suite_mut(suite_id) {
            suite.status = RunStatus::Queued;
            suite.conclusion = None;
            suite.updated_at = now;
        }
        let launches = failed
            .iter()
            .map(|name| {
                let spec = checks
                    .iter()
                    .find(|c| c.name == *name)
                    .cloned()
                    // A job whose check left the scenario re-runs as a failure.
                    .unwrap_or_else(|| CheckSpec::new(name.clone(), "exit 1"));
                self.ci_queue_job(run_id, &spec, attempt)
            })
            .collect();
        Ok(launches)
    }

    /// GitLab's job retry: a new attempt of job `job_id` alone (the same
    /// check, commit and run), when the job is the latest of its name and
    /// has finished. Its run goes back to queued until the new job ends.
    pub(crate) fn ci_retry_job(
        &mut self,
        job_id: u64,
        checks: &[CheckSpec],
    ) -> Result<JobLaunch, WriteError> {
        let Some(run) = self
            .ci
            .workflow_runs
            .iter()
            .find(|r| r.jobs.iter().any(|j| j.database_id == job_id))
        else {
            return Err(WriteError::NotFound("Not Found".into()));
        };
        let job = run
            .jobs
            .iter()
            .find(|j| j.database_id == job_id)
            .cloned()
            .ok_or_else(|| WriteError::NotFound("Not Found".into()))?;
        let latest = run.latest_jobs().iter().any(|j| j.database_id == job_id);
        if job.status != RunStatus::Completed || !latest {
            return Err(WriteError::Forbidden("Job is not retryable".into()));
        }
        let (run_id, suite_id) = (run.database_id, run.check_suite_id);
        let now = self.tick();
        if let Some(run) = self.ci.workflow_run_mut(run_id) {
            run.status = RunStatus::Queued;
            run.conclusion = None;
            run.updated_at = now.clone();
        }
        if let Some(suite) = self.ci.check_suite_mut(suite_id) {
            suite.status = RunStatus::Queued;
            suite.conclusion = None;
            suite.updated_at = now;
        }
        let spec = checks
            .iter()
            .find(|c| c.name == job.name)
            .cloned()
            // A job whose check left the scenario re-runs as a failure.
            .unwrap_or_else(|| CheckSpec::new(job.name.clone(), "exit 1"));
        Ok(self.ci_queue_job(run_id, &spec, job.run_attempt + 1))
    }

    /// Adds a commit status.
    pub(crate) fn ci_add_status(
        &mut self,
        sha: &str,
        context: &str,
        state: StatusState,
        description: Option<String>,
        target_url: Option<String>,
        creator: &str,
    ) -> u64 {
        let database_id = self.next_id();
        let created_at = self.tick();
        self.ci.statuses.push(StatusRecord {
            database_id,
            id: ids::node_id(NodeKind::StatusContext, database_id),
            sha: sha.to_owned(),
            context: context.to_owned(),
            state,
            description,
            target_url,
            created_at,
            creator: creator.to_owned(),
        });
        database_id
    }
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
