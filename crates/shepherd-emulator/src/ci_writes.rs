//! The state's CI writes: queuing workflow runs and their jobs, moving
//! jobs along (queued → in_progress → completed), re-runs and commit
//! statuses. Above both `state.rs` and `ci_state.rs`.

use crate::automation::CheckSpec;
use crate::ci_state::{
    CheckRunRecord, CheckSuiteRecord, Conclusion, JobLaunch, JobRecord, RunStatus, StatusRecord,
    StatusState, WorkflowRunRecord,
};
use crate::ids::{self, NodeKind};
use crate::state::{State, WriteError};

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
        let run_number = self.ci_mut().next_run_number;
        self.ci_mut().next_run_number += 1;
        self.ci_mut().check_suites.push(CheckSuiteRecord {
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
        self.ci_mut().workflow_runs.push(WorkflowRunRecord {
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
        if let Some(run) = self.ci_mut().workflow_run_mut(run_id) {
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
        self.ci_mut().check_runs.push(CheckRunRecord {
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
        let Some(run) = self.ci_mut().check_run_mut(job_id) else {
            return 0;
        };
        run.status = RunStatus::InProgress;
        run.started_at = Some(now.clone());
        let key = format!("{}@{}", run.name, run.head_sha);
        let (run_id, suite_id) = (run.workflow_run_id, run.check_suite_id);
        if let Some(workflow) = self.ci_mut().workflow_run_mut(run_id) {
            workflow.status = RunStatus::InProgress;
            workflow.updated_at = now.clone();
            if let Some(job) = workflow.jobs.iter_mut().find(|j| j.database_id == job_id) {
                job.status = RunStatus::InProgress;
                job.started_at = Some(now.clone());
            }
        }
        if let Some(suite) = self.ci_mut().check_suite_mut(suite_id) {
            suite.status = RunStatus::InProgress;
            suite.updated_at = now;
        }
        let count = self.ci_mut().attempts.entry(key).or_default();
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
        let Some(run) = self.ci_mut().check_run_mut(job_id) else {
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
        if let Some(workflow) = self.ci_mut().workflow_run_mut(run_id) {
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
            if let Some(suite) = self.ci_mut().check_suite_mut(suite_id) {
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

    /// `rerun-failed-jobs` (`failed_only`) or `rerun`: a new attempt of run
    /// `run_id` with new jobs for the failed ones, or for all.
    pub(crate) fn ci_rerun(
        &mut self,
        run_id: u64,
        checks: &[CheckSpec],
        failed_only: bool,
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
            .filter(|j| !failed_only || j.conclusion.is_some_and(Conclusion::failed))
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
        if let Some(run) = self.ci_mut().workflow_run_mut(run_id) {
            run.run_attempt = attempt;
            run.status = RunStatus::Queued;
            run.conclusion = None;
            run.updated_at = now.clone();
            run.run_started_at = now.clone();
        }
        if let Some(suite) = self.ci_mut().check_suite_mut(suite_id) {
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
        if let Some(run) = self.ci_mut().workflow_run_mut(run_id) {
            run.status = RunStatus::Queued;
            run.conclusion = None;
            run.updated_at = now.clone();
        }
        if let Some(suite) = self.ci_mut().check_suite_mut(suite_id) {
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
        self.ci_mut().statuses.push(StatusRecord {
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
