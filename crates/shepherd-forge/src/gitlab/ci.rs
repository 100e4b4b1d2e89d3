//! CI of the GitLab client: pipelines and their jobs as checks, the jobs
//! that may not fail as the required checks, and the retry of failed jobs.
//!
//! Which pipeline is the head's: the merge request's `head_pipeline` when it
//! is of the head commit, or of the merge request's merge ref (merged results
//! and merge trains run on a merge commit, and GitLab picks such a pipeline
//! only for the current head); else the latest pipeline (highest id) of
//! `GET /projects/:id/pipelines?sha=HEAD`. The calls that name a commit only
//! (`check_runs`, `workflow_runs`) use the merge request the client is bound
//! to (`GitLabClient::with_merge_request`) for the first rule, and the
//! second alone when unbound. Jobs are the pipeline's latest attempts
//! (`GET …/pipelines/:id/jobs`, which leaves out retried ones), each required
//! exactly when it may not fail. GitLab has no legacy statuses beside
//! pipelines: the combined status is always empty. The polled reads are
//! conditional (ETag).

use std::collections::BTreeSet;

use reqwest::Method;

use super::client::GitLabClient;
use super::wire::{rollup_state, JobWire, MergeRequestWire, PipelineWire};
use crate::ci::{
    CheckRun, CombinedStatus, RequiredChecks, RequiredSource, SourceOutcome, SourceReport,
    StatusRollup, WorkflowRun,
};
use crate::error::{ForgeError, Result};
use crate::transport::Conditional;

/// Every pipeline of commit `sha`, newest first, and the bound merge
/// request's merge-ref pipeline when it is the one of `sha`.
pub(crate) async fn pipelines(client: &GitLabClient, sha: &str) -> Result<Vec<WorkflowRun>> {
    let mut all = pipelines_of(client, sha).await?;
    if let Some(iid) = client.bound_merge_request() {
        let mr = client.fetch_mr(iid).await?;
        if let Some(head) = head_pipeline(client, &mr, sha).await? {
            if !all.iter().any(|p| p.id == head.id) {
                all.insert(0, head);
            }
        }
    }
    Ok(all.into_iter().map(WorkflowRun::from).collect())
}

/// The pipeline of commit `sha`: the bound merge request's head pipeline
/// rules first, else the latest pipeline of `sha`.
async fn pipeline_for(client: &GitLabClient, sha: &str) -> Result<Option<PipelineWire>> {
    match client.bound_merge_request() {
        Some(iid) => {
            let mr = client.fetch_mr(iid).await?;
            head_pipeline(client, &mr, sha).await
        }
        None => latest_pipeline(client, sha).await,
    }
}

async fn pipelines_of(client: &GitLabClient, sha: &str) -> Result<Vec<PipelineWire>> {
    let url = client.project_url(&["pipelines"])?;
    let query = [("sha", sha), ("order_by", "id"), ("sort", "desc")];
    let pages: Vec<Vec<PipelineWire>> = client
        .transport
        .get_pages(&url, &query, Conditional::Yes)
        .await?;
    let mut all: Vec<PipelineWire> = pages.into_iter().flatten().collect();
    all.sort_by_key(|p| std::cmp::Reverse(p.id));
    Ok(all)
}

/// The latest pipeline of commit `sha`, if any.
async fn latest_pipeline(client: &GitLabClient, sha: &str) -> Result<Option<PipelineWire>> {
    Ok(pipelines_of(client, sha).await?.into_iter().next())
}

/// The pipeline of `head_sha` for merge request `mr` (see the module docs).
async fn head_pipeline(
    client: &GitLabClient,
    mr: &MergeRequestWire,
    head_sha: &str,
) -> Result<Option<PipelineWire>> {
    if let Some(pipeline) = &mr.head_pipeline {
        let current = mr.sha.as_deref() == Some(head_sha);
        if pipeline.sha == head_sha || (current && pipeline.is_merge_ref_of(mr.iid)) {
            return Ok(Some(pipeline.clone()));
        }
    }
    latest_pipeline(client, head_sha).await
}

/// The latest attempt of every job of pipeline `id`.
async fn jobs(client: &GitLabClient, id: u64) -> Result<Vec<JobWire>> {
    let id = id.to_string();
    let url = client.project_url(&["pipelines", &id, "jobs"])?;
    let pages: Vec<Vec<JobWire>> = client
        .transport
        .get_pages(&url, &[], Conditional::Yes)
        .await?;
    Ok(pages.into_iter().flatten().collect())
}

/// A job's log: `GET /projects/:id/jobs/:job_id/trace` (GitLab's Jobs
/// API), plain text with the runner's ANSI colours and section markers.
pub(crate) async fn job_trace(client: &GitLabClient, job: u64) -> Result<String> {
    let job = job.to_string();
    let url = client.project_url(&["jobs", &job, "trace"])?;
    let answer = client.transport.get_answer(&url, &[]).await?;
    Ok(String::from_utf8_lossy(&answer.body).into_owned())
}

/// The jobs of the pipeline of `sha`, as check runs (each with its
/// required flag).
pub(crate) async fn check_runs(client: &GitLabClient, sha: &str) -> Result<Vec<CheckRun>> {
    let Some(pipeline) = pipeline_for(client, sha).await? else {
        return Ok(Vec::new());
    };
    Ok(jobs(client, pipeline.id)
        .await?
        .into_iter()
        .map(|job| job.into_check_run(sha))
        .collect())
}

/// GitLab has no legacy statuses beside its pipelines (whose jobs
/// [`check_runs`] gives): no status, `pending` as GitHub says of a commit
/// without any. Nothing is requested.
pub(crate) fn combined_status(sha: &str) -> CombinedStatus {
    CombinedStatus {
        sha: sha.to_owned(),
        state: "pending".to_owned(),
        statuses: Vec::new(),
    }
}

/// The jobs of the head pipeline of `iid`, each required exactly when it
/// may not fail; no pipeline yet gives no check and no state.
pub(crate) async fn status_check_rollup(client: &GitLabClient, iid: u64) -> Result<StatusRollup> {
    let mr = client.fetch_mr(iid).await?;
    let head = mr
        .head_sha()
        .map_err(|message| ForgeError::Decode {
            request: format!("merge request !{iid}"),
            message,
        })?
        .to_owned();
    let Some(pipeline) = head_pipeline(client, &mr, &head).await? else {
        return Ok(StatusRollup {
            head_sha: head,
            state: None,
            checks: Vec::new(),
        });
    };
    let checks = jobs(client, pipeline.id)
        .await?
        .iter()
        .map(JobWire::to_state)
        .collect();
    Ok(StatusRollup {
        head_sha: head,
        state: Some(rollup_state(&pipeline.status)),
        checks,
    })
}

/// The jobs of the head pipeline that may not fail. With no pipeline yet
/// the set is known and empty: every GitLab check carries its own required
/// flag, so the verdict still counts exactly the jobs that may not fail once
/// they appear (an unknown set would count every job, those allowed to fail
/// included, for the whole wait). A failed read leaves the set unknown.
pub(crate) async fn required_checks(client: &GitLabClient, iid: u64) -> RequiredChecks {
    let outcome = match required_names(client, iid).await {
        Ok(Some(contexts)) => SourceOutcome::Answered { contexts },
        Ok(None) => {
            tracing::info!(mr = iid, "no pipeline for the head commit yet");
            SourceOutcome::Answered {
                contexts: BTreeSet::new(),
            }
        }
        Err(err) => {
            tracing::warn!("required-check discovery: {err}; not fatal");
            SourceOutcome::Unavailable {
                status: err.status(),
                reason: err.to_string(),
            }
        }
    };
    let checks = RequiredChecks::from_sources(vec![SourceReport {
        source: RequiredSource::PipelineJobs,
        outcome,
    }]);
    tracing::info!(sources = ?checks.summary(), "required checks discovered");
    checks
}

async fn required_names(client: &GitLabClient, iid: u64) -> Result<Option<BTreeSet<String>>> {
    let rollup = status_check_rollup(client, iid).await?;
    if rollup.state.is_none() {
        return Ok(None);
    }
    Ok(Some(
        rollup
            .checks
            .into_iter()
            .filter(|c| c.required == Some(true))
            .map(|c| c.name)
            .collect(),
    ))
}

/// Retries every failed or canceled job of pipeline `id`, each once
/// (`POST …/jobs/:job_id/retry`); returns the ids of the jobs retried. A
/// refused retry does not stop the others; the first error is returned
/// after them.
pub(crate) async fn retry_failed_jobs(client: &GitLabClient, id: u64) -> Result<Vec<u64>> {
    let mut retried = Vec::new();
    let mut first_error = None;
    for job in jobs(client, id).await?.into_iter().filter(JobWire::failed) {
        let job_id = job.id.to_string();
        let url = client.project_url(&["jobs", &job_id, "retry"])?;
        match client.transport.send(Method::POST, &url, None).await {
            Ok(_) => {
                tracing::info!(pipeline = id, job = job.id, name = %job.name, "failed job retried");
                retried.push(job.id);
            }
            Err(err) => {
                tracing::warn!(pipeline = id, job = job.id, "{err}");
                first_error.get_or_insert(err);
            }
        }
    }
    match first_error {
        Some(err) => Err(err),
        None => Ok(retried),
    }
}

/// Retries the failed jobs of the head pipeline of `head_sha`.
pub(crate) async fn rerun_failed_checks(
    client: &GitLabClient,
    iid: u64,
    head_sha: &str,
) -> Result<Vec<u64>> {
    let mr = client.fetch_mr(iid).await?;
    match head_pipeline(client, &mr, head_sha).await? {
        Some(pipeline) => retry_failed_jobs(client, pipeline.id).await,
        None => Ok(Vec::new()),
    }
}
