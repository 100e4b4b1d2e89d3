//! CI over REST: check runs, commit statuses, required checks (branch
//! protection and rulesets), workflow runs and their jobs, re-runs.

use axum::body::Bytes;
use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::common::{
    parse_body, parse_id, require_write, visible_repository, with_link, ApiError, List, Paging,
    Repo, Req, Scoped,
};
use super::downloads::job_log_download_url;
use super::json::{
    check_run_json, check_suite_json, job_json, short_repository_json, status_json,
    workflow_run_json,
};
use super::lookup::{commit_details, resolve_ref, visible_commit};
use crate::automation::EndpointAccess;
use crate::ci_state::StatusState;
use crate::job_log;
use crate::shared::Shared;

/// `GET …/commits/{ref}/check-runs` (`check_name`, `status`,
/// `filter=latest|all`).
pub(crate) async fn list_check_runs(
    Req(shared, viewer, api): Req,
    paging: Paging,
    Path(path): Path<(String, String, String)>,
) -> Result<Response, ApiError> {
    let sha = visible_commit(&shared, &viewer, &path).await?;
    let state = shared.read();
    let all = paging.params.get("filter").map(String::as_str) == Some("all");
    let runs: Vec<_> = if all {
        state
            .ci
            .check_runs
            .iter()
            .filter(|r| r.head_sha == sha)
            .collect()
    } else {
        state.ci.latest_check_runs(&sha)
    };
    let name = paging.params.get("check_name");
    let status = paging.params.get("status");
    let items: Vec<Value> = runs
        .into_iter()
        .filter(|r| name.is_none_or(|n| *n == r.name))
        .filter(|r| status.is_none_or(|s| s == r.status.as_str()))
        .map(|r| check_run_json(&state, r, &api))
        .collect();
    Ok(paging.counted(&shared.base_url, "check_runs", items))
}

/// `GET …/check-runs/{check_run_id}`.
pub(crate) async fn get_check_run(
    Req(shared, viewer, api): Req,
    Path((owner, repo, id)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let state = shared.read();
    visible_repository(&state, &viewer, &owner, &repo)?;
    let id = parse_id(&id)?;
    let run = state.ci.check_run(id).ok_or(ApiError::NotFound)?;
    Ok(Json(check_run_json(&state, run, &api)))
}

/// `GET …/commits/{ref}/status`: the combined status.
pub(crate) async fn combined_status(
    Req(shared, viewer, api): Req,
    paging: Paging,
    Path(path): Path<(String, String, String)>,
) -> Result<Response, ApiError> {
    let sha = visible_commit(&shared, &viewer, &path).await?;
    let state = shared.read();
    let statuses: Vec<Value> = state
        .ci
        .latest_statuses(&sha)
        .into_iter()
        .map(|s| status_json(&state, s, &api))
        .collect();
    let total = statuses.len();
    let (page, link) = paging.slice(&shared.base_url, statuses);
    let full_name = state.repository.full_name();
    let base = &api;
    Ok(with_link(
        StatusCode::OK,
        json!({
            "state": state.ci.combined_state(&sha).as_str(),
            "statuses": page,
            "sha": sha,
            "total_count": total,
            "repository": short_repository_json(&state, base),
            "commit_url": format!("{base}/repos/{full_name}/commits/{sha}"),
            "url": format!("{base}/repos/{full_name}/commits/{sha}/status"),
        }),
        link,
    ))
}

/// `GET …/commits/{ref}/statuses`: every status, newest first.
pub(crate) async fn list_statuses(
    Req(shared, viewer, api): Req,
    paging: Paging,
    Path(path): Path<(String, String, String)>,
) -> Result<Response, ApiError> {
    let sha = visible_commit(&shared, &viewer, &path).await?;
    let state = shared.read();
    let items: Vec<Value> = state
        .ci
        .statuses
        .iter()
        .rev()
        .filter(|s| s.sha == sha)
        .map(|s| status_json(&state, s, &api))
        .collect();
    Ok(paging.array(&shared.base_url, items))
}

#[derive(Deserialize)]
struct NewStatus {
    state: Option<String>,
    target_url: Option<String>,
    description: Option<String>,
    context: Option<String>,
}

/// `POST …/statuses/{sha}`: an external CI reports a status.
pub(crate) async fn create_status(
    Req(shared, viewer, api): Req,
    Path((owner, repo, sha)): Path<(String, String, String)>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let new: NewStatus = parse_body(&body)?;
    visible_repository(&shared.read(), &viewer, &owner, &repo)?;
    require_write(&viewer)?;
    let state_word = new
        .state
        .ok_or_else(|| ApiError::Validation("state is missing".into()))?;
    let status_state = StatusState::parse(&state_word).ok_or_else(|| {
        ApiError::Validation(format!(
            "state: `{state_word}` is not error, failure, pending or success"
        ))
    })?;
    let sha = resolve_ref(&shared, &sha).await?;
    let mut state = shared.write();
    let id = state.ci_add_status(
        &sha,
        new.context.as_deref().unwrap_or("default"),
        status_state,
        new.description,
        new.target_url,
        &viewer.login,
    );
    let status = state.ci.status(id).ok_or(ApiError::NotFound)?;
    let value = status_json(&state, status, &api);
    Ok((StatusCode::CREATED, Json(value)).into_response())
}

/// The answer of a required-checks endpoint set to refuse.
fn refused(access: EndpointAccess) -> Option<ApiError> {
    match access {
        EndpointAccess::Ok => None,
        EndpointAccess::Forbidden => Some(ApiError::Message(
            StatusCode::FORBIDDEN,
            "Must have admin rights to Repository.".into(),
        )),
        EndpointAccess::NotFound => Some(ApiError::NotFound),
    }
}

/// The app id GitHub reports for a required check: the Actions app for the
/// emulator's own checks, none for other contexts.
fn app_id(shared: &Shared, context: &str) -> Value {
    if shared.scenario.checks.iter().any(|c| c.name == context) {
        json!(15368)
    } else {
        Value::Null
    }
}

/// `GET …/branches/{branch}/protection/required_status_checks`.
pub(crate) async fn required_status_checks(
    Req(shared, viewer, api): Req,
    Path((owner, repo, branch)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let state = shared.read();
    let record = visible_repository(&state, &viewer, &owner, &repo)?;
    if let Some(err) = refused(state.ci.protection) {
        return Err(err);
    }
    let required = state.ci.required_for(&branch);
    if required.is_empty() {
        return Err(ApiError::Message(
            StatusCode::NOT_FOUND,
            "Branch not protected".into(),
        ));
    }
    let url = format!(
        "{}/repos/{}/branches/{branch}/protection/required_status_checks",
        api,
        record.full_name()
    );
    let checks: Vec<Value> = required
        .iter()
        .map(|c| json!({ "context": c, "app_id": app_id(&shared, c) }))
        .collect();
    Ok(Json(json!({
        "url": url,
        "strict": false,
        "contexts": required,
        "checks": checks,
        "contexts_url": format!("{url}/contexts"),
    })))
}

/// `GET …/rules/branches/{branch}`: one `required_status_checks` rule when
/// the branch has required checks.
pub(crate) async fn branch_rules(
    Req(shared, viewer, _): Req,
    paging: Paging,
    Path((owner, repo, branch)): Path<(String, String, String)>,
) -> Result<Response, ApiError> {
    let state = shared.read();
    let record = visible_repository(&state, &viewer, &owner, &repo)?;
    if let Some(err) = refused(state.ci.rulesets) {
        return Err(err);
    }
    let required = state.ci.required_for(&branch);
    let mut rules = Vec::new();
    if !required.is_empty() {
        let checks: Vec<Value> = required
            .iter()
            .map(|c| match app_id(&shared, c) {
                Value::Null => json!({ "context": c }),
                id => json!({ "context": c, "integration_id": id }),
            })
            .collect();
        rules.push(json!({
            "type": "required_status_checks",
            "ruleset_source_type": "Repository",
            "ruleset_source": record.full_name(),
            "ruleset_id": 1,
            "parameters": {
                "strict_required_status_checks_policy": false,
                "do_not_enforce_on_create": false,
                "required_status_checks": checks,
            },
        }));
    }
    let (page, link) = paging.slice(&shared.base_url, rules);
    Ok(with_link(StatusCode::OK, Value::Array(page), link))
}

/// `GET …/actions/runs` (`head_sha`, `branch`, `event`, `status`), newest first.
pub(crate) async fn list_workflow_runs(
    Scoped(shared, _, api, paging, Repo): List<Repo>,
) -> Response {
    let shas: Vec<String> = (shared.read().ci.workflow_runs.iter())
        .map(|r| r.head_sha.clone())
        .collect();
    let commits = commit_details(&shared, dedup(shas)).await;
    let state = shared.read();
    let param = |name: &str| paging.params.get(name).cloned();
    let (head_sha, branch, event, status) = (
        param("head_sha"),
        param("branch"),
        param("event"),
        param("status"),
    );
    let items: Vec<Value> = state
        .ci
        .workflow_runs
        .iter()
        .rev()
        .filter(|r| head_sha.as_ref().is_none_or(|s| *s == r.head_sha))
        .filter(|r| branch.as_ref().is_none_or(|b| *b == r.head_branch))
        .filter(|r| event.as_ref().is_none_or(|e| *e == r.event))
        .filter(|r| {
            status.as_ref().is_none_or(|s| {
                s == r.status.as_str() || r.conclusion.is_some_and(|c| c.as_str() == s)
            })
        })
        .map(|r| workflow_run_json(&state, r, commits.get(&r.head_sha), &api))
        .collect();
    paging.counted(&shared.base_url, "workflow_runs", items)
}

fn dedup(mut shas: Vec<String>) -> Vec<String> {
    shas.sort();
    shas.dedup();
    shas
}

/// The head SHA of workflow run `run_id`, if the viewer sees the repository
/// and the run exists.
fn run_head(
    shared: &Shared,
    viewer: &crate::auth::Viewer,
    owner: &str,
    repo: &str,
    run_id: &str,
) -> Result<(u64, String), ApiError> {
    let state = shared.read();
    visible_repository(&state, viewer, owner, repo)?;
    let run_id = parse_id(run_id)?;
    let run = state.ci.workflow_run(run_id).ok_or(ApiError::NotFound)?;
    Ok((run_id, run.head_sha.clone()))
}

pub(crate) async fn get_workflow_run(
    Req(shared, viewer, api): Req,
    Path((owner, repo, run_id)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let (run_id, sha) = run_head(&shared, &viewer, &owner, &repo, &run_id)?;
    let commits = commit_details(&shared, vec![sha]).await;
    let state = shared.read();
    let run = state.ci.workflow_run(run_id).ok_or(ApiError::NotFound)?;
    Ok(Json(workflow_run_json(
        &state,
        run,
        commits.get(&run.head_sha),
        &api,
    )))
}

/// `GET …/actions/runs/{run_id}/attempts/{attempt}`: the run as of that
/// attempt. The emulator keeps one record per run: an earlier attempt is
/// answered with the run's current fields and that `run_attempt`.
pub(crate) async fn get_workflow_run_attempt(
    Req(shared, viewer, api): Req,
    Path((owner, repo, run_id, attempt)): Path<(String, String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let (run_id, sha) = run_head(&shared, &viewer, &owner, &repo, &run_id)?;
    let attempt: u32 = attempt.parse().map_err(|_| ApiError::NotFound)?;
    let commits = commit_details(&shared, vec![sha]).await;
    let state = shared.read();
    let run = state.ci.workflow_run(run_id).ok_or(ApiError::NotFound)?;
    if attempt == 0 || attempt > run.run_attempt {
        return Err(ApiError::NotFound);
    }
    let mut value = workflow_run_json(&state, run, commits.get(&run.head_sha), &api);
    if attempt < run.run_attempt {
        let url = format!(
            "{api}/repos/{}/actions/runs/{run_id}",
            state.repository.full_name()
        );
        value["run_attempt"] = json!(attempt);
        value["previous_attempt_url"] =
            json!((attempt > 1).then(|| format!("{url}/attempts/{}", attempt - 1)));
        // Only the latest attempt's jobs are known per attempt below.
        value["status"] = json!("completed");
    }
    Ok(Json(value))
}

/// `GET …/check-suites/{check_suite_id}`.
pub(crate) async fn get_check_suite(
    Req(shared, viewer, api): Req,
    Path((owner, repo, id)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let sha = {
        let state = shared.read();
        visible_repository(&state, &viewer, &owner, &repo)?;
        let id = parse_id(&id)?;
        state
            .ci
            .check_suite(id)
            .ok_or(ApiError::NotFound)?
            .head_sha
            .clone()
    };
    let commits = commit_details(&shared, vec![sha]).await;
    let state = shared.read();
    let suite = state
        .ci
        .check_suite(parse_id(&id)?)
        .ok_or(ApiError::NotFound)?;
    Ok(Json(check_suite_json(
        &state,
        suite,
        commits.get(&suite.head_sha),
        &api,
    )))
}

/// `GET …/actions/jobs/{job_id}`.
pub(crate) async fn get_job(
    Req(shared, viewer, api): Req,
    Path((owner, repo, id)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let state = shared.read();
    visible_repository(&state, &viewer, &owner, &repo)?;
    let id = parse_id(&id)?;
    let (run, job) = state.ci.job(id).ok_or(ApiError::NotFound)?;
    Ok(Json(job_json(&state, run, job, &api)))
}

/// `GET …/actions/jobs/{job_id}/logs`: GitHub answers `302 Found` with
/// the log's download URL in `Location` ("Download job logs for a workflow
/// run"); the emulator's is [`job_log_download_url`]. A job that has not
/// completed has no log yet: 404.
pub(crate) async fn get_job_logs(
    Req(shared, viewer, _): Req,
    Path((owner, repo, id)): Path<(String, String, String)>,
) -> Result<Response, ApiError> {
    let state = shared.read();
    visible_repository(&state, &viewer, &owner, &repo)?;
    let id = parse_id(&id)?;
    state
        .ci
        .check_run(id)
        .and_then(job_log::github_log)
        .ok_or(ApiError::NotFound)?;
    let location = job_log_download_url(&shared.base_url, id);
    Ok((StatusCode::FOUND, [(header::LOCATION, location)]).into_response())
}

/// `POST …/actions/runs/{run_id}/rerun`: a new attempt of every job.
pub(crate) async fn rerun_workflow_run(
    Req(shared, viewer, _): Req,
    Path((owner, repo, run_id)): Path<(String, String, String)>,
    // Read (and ignored) so that hyper keeps the connection alive: an
    // unread body makes it close the connection after the answer.
    _body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    visible_repository(&shared.read(), &viewer, &owner, &repo)?;
    require_write(&viewer)?;
    let run_id = parse_id(&run_id)?;
    crate::ci::rerun(&shared, run_id, false)?;
    Ok((StatusCode::CREATED, Json(json!({}))).into_response())
}

pub(crate) async fn list_jobs(
    Req(shared, viewer, api): Req,
    paging: Paging,
    Path((owner, repo, run_id)): Path<(String, String, String)>,
) -> Result<Response, ApiError> {
    let state = shared.read();
    visible_repository(&state, &viewer, &owner, &repo)?;
    let run_id = parse_id(&run_id)?;
    let run = state.ci.workflow_run(run_id).ok_or(ApiError::NotFound)?;
    let all = paging.params.get("filter").map(String::as_str) == Some("all");
    let jobs: Vec<_> = if all {
        run.jobs.iter().collect()
    } else {
        run.latest_jobs()
    };
    let items: Vec<Value> = jobs
        .into_iter()
        .map(|j| job_json(&state, run, j, &api))
        .collect();
    Ok(paging.counted(&shared.base_url, "jobs", items))
}

/// `POST …/actions/runs/{run_id}/rerun-failed-jobs`: 201 `{}`.
pub(crate) async fn rerun_failed_jobs(
    Req(shared, viewer, _): Req,
    Path((owner, repo, run_id)): Path<(String, String, String)>,
    // Read (and ignored) so that hyper keeps the connection alive: an
    // unread body makes it close the connection after the answer.
    _body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    visible_repository(&shared.read(), &viewer, &owner, &repo)?;
    require_write(&viewer)?;
    let run_id = parse_id(&run_id)?;
    crate::ci::rerun(&shared, run_id, true)?;
    Ok((StatusCode::CREATED, Json(json!({}))).into_response())
}
