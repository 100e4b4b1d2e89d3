//! Pipelines (one per CI run: a push to the merge request's head, or a run
//! the control API starts) and their jobs (one per scenario check), and the
//! retry of a job.

use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::Value;

use super::common::{
    parse_bool, parse_id, project, read_project, require_write, GlError, GlPaging, GlReq,
};
use super::json::{job_json, pipeline_json, Cx};
use super::view;
use crate::job_log;

/// `GET /projects/:id/pipelines`: `sha`, `ref`, `status`, `order_by` (`id`,
/// the default, or `updated_at`), `sort` (`desc`, the default, or `asc`).
pub(crate) async fn list_pipelines(
    GlReq(shared, viewer): GlReq,
    paging: GlPaging,
    Path(id): Path<String>,
) -> Result<Response, GlError> {
    read_project(&shared, &viewer, &id, |cx| {
        let mut runs: Vec<_> = cx
            .state
            .ci
            .workflow_runs
            .iter()
            .filter(|r| paging.param("sha").is_none_or(|sha| sha == r.head_sha))
            .filter(|r| {
                paging
                    .param("ref")
                    .is_none_or(|wanted| wanted == r.head_branch || wanted == r.head_sha)
            })
            .filter(|r| {
                paging
                    .param("status")
                    .is_none_or(|s| s == view::pipeline_status(cx.state, r))
            })
            .collect();
        match paging.param("order_by") {
            None | Some("id") => runs.sort_by_key(|r| r.database_id),
            Some("updated_at") => runs.sort_by(|a, b| {
                (&a.updated_at, a.database_id).cmp(&(&b.updated_at, b.database_id))
            }),
            Some(_) => return Err(GlError::parameter("order_by does not have a valid value")),
        }
        match paging.param("sort") {
            None | Some("desc") => runs.reverse(),
            Some("asc") => {}
            Some(_) => return Err(GlError::parameter("sort does not have a valid value")),
        }
        let items = runs.into_iter().map(|r| pipeline_json(cx, r)).collect();
        Ok(paging.respond(&shared.base_url, items))
    })
}

/// `GET /projects/:id/pipelines/:pipeline_id`.
pub(crate) async fn get_pipeline(
    GlReq(shared, viewer): GlReq,
    Path((id, pipeline_id)): Path<(String, String)>,
) -> Result<Json<Value>, GlError> {
    let pipeline_id = parse_id(&pipeline_id)?;
    read_project(&shared, &viewer, &id, |cx| {
        let run = cx
            .state
            .ci
            .workflow_run(pipeline_id)
            .ok_or_else(GlError::not_found)?;
        Ok(Json(pipeline_json(cx, run)))
    })
}

/// `POST /projects/:id/pipelines/:pipeline_id/retry`: retries the
/// pipeline's failed jobs, each as a job retry does (GitLab's "Retry jobs
/// in a pipeline": a pipeline with none failed is left as it is); 201
/// with the pipeline.
pub(crate) async fn retry_pipeline(
    GlReq(shared, viewer): GlReq,
    Path((id, pipeline_id)): Path<(String, String)>,
    // Read (and ignored) so that hyper keeps the connection alive.
    _body: axum::body::Bytes,
) -> Result<Response, GlError> {
    let pipeline_id = parse_id(&pipeline_id)?;
    {
        let state = shared.read();
        project(&state, &viewer, &id)?;
        state
            .ci
            .workflow_run(pipeline_id)
            .ok_or_else(GlError::not_found)?;
    }
    require_write(&viewer)?;
    crate::ci::retry_failed_jobs(&shared, pipeline_id)?;
    let state = shared.read();
    let run = state
        .ci
        .workflow_run(pipeline_id)
        .ok_or_else(GlError::not_found)?;
    let cx = Cx::new(&state, &shared.base_url);
    Ok((StatusCode::CREATED, Json(pipeline_json(&cx, run))).into_response())
}

/// `GET /projects/:id/pipelines/:pipeline_id/jobs`: the latest attempt of
/// each job (`include_retried=true`: every attempt); `scope` (or
/// `scope[]`) filters by status.
pub(crate) async fn list_jobs(
    GlReq(shared, viewer): GlReq,
    paging: GlPaging,
    Path((id, pipeline_id)): Path<(String, String)>,
) -> Result<Response, GlError> {
    let pipeline_id = parse_id(&pipeline_id)?;
    read_project(&shared, &viewer, &id, |cx| {
        let run = cx
            .state
            .ci
            .workflow_run(pipeline_id)
            .ok_or_else(GlError::not_found)?;
        let include_retried = match paging.param("include_retried") {
            None => false,
            Some(text) => {
                parse_bool(text).ok_or_else(|| GlError::parameter("include_retried is invalid"))?
            }
        };
        let jobs: Vec<_> = if include_retried {
            run.jobs.iter().collect()
        } else {
            run.latest_jobs()
        };
        let scope = paging.param("scope").or_else(|| paging.param("scope[]"));
        let items = jobs
            .into_iter()
            .filter(|j| scope.is_none_or(|s| s == view::job_status(j)))
            .map(|j| job_json(cx, run, j))
            .collect();
        Ok(paging.respond(&shared.base_url, items))
    })
}

/// `GET /projects/:id/jobs/:job_id`.
pub(crate) async fn get_job(
    GlReq(shared, viewer): GlReq,
    Path((id, job_id)): Path<(String, String)>,
) -> Result<Json<Value>, GlError> {
    let job_id = parse_id(&job_id)?;
    read_project(&shared, &viewer, &id, |cx| {
        let (run, job) = cx.state.ci.job(job_id).ok_or_else(GlError::not_found)?;
        Ok(Json(job_json(cx, run, job)))
    })
}

/// `GET /projects/:id/jobs/:job_id/trace`: the job's log as plain text
/// (GitLab's "Get a log file"; see `job_log.rs`).
pub(crate) async fn get_trace(
    GlReq(shared, viewer): GlReq,
    Path((id, job_id)): Path<(String, String)>,
) -> Result<Response, GlError> {
    let job_id = parse_id(&job_id)?;
    read_project(&shared, &viewer, &id, |cx| {
        let run = cx
            .state
            .ci
            .check_run(job_id)
            .ok_or_else(GlError::not_found)?;
        let trace = job_log::gitlab_trace(run);
        Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], trace).into_response())
    })
}

/// `POST /projects/:id/jobs/:job_id/retry`: a new attempt of a finished
/// job (the same commit); 201 with the new job. A job still running, or
/// one retried already, is not retryable (403).
pub(crate) async fn retry_job(
    GlReq(shared, viewer): GlReq,
    Path((id, job_id)): Path<(String, String)>,
    // Read (and ignored) so that hyper keeps the connection alive: an
    // unread body makes it close the connection after the answer.
    _body: axum::body::Bytes,
) -> Result<Response, GlError> {
    let job_id = parse_id(&job_id)?;
    {
        let state = shared.read();
        project(&state, &viewer, &id)?;
        state.ci.job(job_id).ok_or_else(GlError::not_found)?;
    }
    require_write(&viewer)?;
    let new_id = crate::ci::retry_job(&shared, job_id)?;
    let state = shared.read();
    let (run, job) = state.ci.job(new_id).ok_or_else(GlError::not_found)?;
    let cx = Cx::new(&state, &shared.base_url);
    Ok((StatusCode::CREATED, Json(job_json(&cx, run, job))).into_response())
}
