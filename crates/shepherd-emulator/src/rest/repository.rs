//! The repository's git data as GitHub's REST shows it: commits, a PR's
//! commits, files and diff, branches with their protection; and the PR as
//! an issue, the repository's labels and `/rate_limit`.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::common::{visible_pull_request, visible_repository, Api, ApiError, Authed, Paging};
use super::json::{commit_json, file_json, issue_json, label_json, pull_request_json};
use super::lookup::{commit_details, resolve_ref};
use crate::git::{self, CommitDetail, Hunk};
use crate::shared::Shared;

/// Runs blocking git work off the async runtime; a failure is a 404 (the
/// commit is not there).
async fn blocking<T, F>(work: F) -> Result<T, ApiError>
where
    F: FnOnce() -> Option<T> + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .ok()
        .flatten()
        .ok_or(ApiError::NotFound)
}

/// A commit and the diff from its first parent.
async fn commit_with_diff(
    shared: &Arc<Shared>,
    sha: String,
) -> Result<(CommitDetail, BTreeMap<String, Vec<Hunk>>), ApiError> {
    let (git_env, git_dir) = (shared.git.clone(), shared.read().repository.git_dir.clone());
    blocking(move || {
        let detail = git::commit_detail(&git_env, &git_dir, &sha)?;
        // A root commit's diff is from the empty tree.
        let parent = detail
            .parents
            .first()
            .cloned()
            .unwrap_or_else(|| "4b825dc642cb6eb9a060e54bf8d69288fbee4904".to_owned());
        let diff = git::diff(&git_env, &git_dir, &parent, &detail.sha).ok()?;
        Some((detail, diff))
    })
    .await
}

/// `GET …/commits/{ref}`: the commit with its files and stats.
pub(crate) async fn get_commit(
    State(shared): State<Arc<Shared>>,
    Authed(viewer): Authed,
    Api(api): Api,
    Path((owner, repo, reference)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    visible_repository(&shared.read(), &viewer, &owner, &repo)?;
    let sha = resolve_ref(&shared, &reference).await?;
    let (detail, diff) = commit_with_diff(&shared, sha).await?;
    let state = shared.read();
    Ok(Json(commit_json(&state, &detail, Some(&diff), &api)))
}

/// `GET …/pulls/{number}` with `Accept: application/vnd.github.diff` (or
/// `.patch`): the PR's diff as text; otherwise the PR object.
pub(crate) async fn get_pull_request(
    State(shared): State<Arc<Shared>>,
    Authed(viewer): Authed,
    Api(api): Api,
    headers: HeaderMap,
    Path((owner, repo, number)): Path<(String, String, String)>,
) -> Result<Response, ApiError> {
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let wants_diff = accept.contains("application/vnd.github.diff")
        || accept.contains("application/vnd.github.v3.diff")
        || accept.contains("application/vnd.github.patch")
        || accept.contains("application/vnd.github.v3.patch");
    if !wants_diff {
        let state = shared.read();
        let pr = visible_pull_request(&state, &viewer, &owner, &repo, &number)?;
        return Ok(Json(pull_request_json(&state, &state.repository, pr, &api)).into_response());
    }
    let (base, head, git_dir) = {
        let state = shared.read();
        let pr = visible_pull_request(&state, &viewer, &owner, &repo, &number)?;
        (
            pr.base_sha.clone(),
            pr.head_sha.clone(),
            state.repository.git_dir.clone(),
        )
    };
    let git_env = shared.git.clone();
    let text = blocking(move || git::diff_text(&git_env, &git_dir, &base, &head).ok()).await?;
    let mut response = (StatusCode::OK, text).into_response();
    let kind = if accept.contains("patch") {
        "application/vnd.github.patch; charset=utf-8"
    } else {
        "application/vnd.github.diff; charset=utf-8"
    };
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    Ok(response)
}

/// `GET …/pulls/{number}/commits`, oldest first.
pub(crate) async fn list_pull_request_commits(
    State(shared): State<Arc<Shared>>,
    Authed(viewer): Authed,
    Api(api): Api,
    paging: Paging,
    Path((owner, repo, number)): Path<(String, String, String)>,
) -> Result<Response, ApiError> {
    let commits = {
        let state = shared.read();
        visible_pull_request(&state, &viewer, &owner, &repo, &number)?
            .commits
            .clone()
    };
    let details = commit_details(&shared, commits.clone()).await;
    let state = shared.read();
    let items = commits
        .iter()
        .filter_map(|sha| details.get(sha))
        .map(|d| commit_json(&state, d, None, &api))
        .collect();
    Ok(paging.array(&shared.base_url, items))
}

/// `GET …/pulls/{number}/files`: the PR's diff, file by file.
pub(crate) async fn list_pull_request_files(
    State(shared): State<Arc<Shared>>,
    Authed(viewer): Authed,
    Api(api): Api,
    paging: Paging,
    Path((owner, repo, number)): Path<(String, String, String)>,
) -> Result<Response, ApiError> {
    let state = shared.read();
    let pr = visible_pull_request(&state, &viewer, &owner, &repo, &number)?;
    let full_name = state.repository.full_name();
    let items = pr
        .diff
        .iter()
        .map(|(path, hunks)| file_json(path, hunks, &pr.head_sha, &api, &full_name))
        .collect();
    Ok(paging.array(&shared.base_url, items))
}

/// `GET …/branches/{branch}`: the branch, its head commit and its
/// protection (the required checks).
pub(crate) async fn get_branch(
    State(shared): State<Arc<Shared>>,
    Authed(viewer): Authed,
    Api(api): Api,
    Path((owner, repo, branch)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let full_name = visible_repository(&shared.read(), &viewer, &owner, &repo)?.full_name();
    let reference = format!("refs/heads/{branch}");
    let (git_env, git_dir) = (shared.git.clone(), shared.read().repository.git_dir.clone());
    let sha = blocking(move || git::resolve_commit(&git_env, &git_dir, &reference))
        .await
        .map_err(|_| ApiError::Message(StatusCode::NOT_FOUND, "Branch not found".into()))?;
    let (detail, _) = commit_with_diff(&shared, sha).await?;
    let state = shared.read();
    let required = state.ci.required_for(&branch);
    let url = format!("{api}/repos/{full_name}/branches/{branch}");
    let protected = state.ci.protected_branches.contains(&branch);
    let checks: Vec<Value> = required
        .iter()
        .map(|c| {
            let app = shared.scenario.checks.iter().any(|s| s.name == *c);
            json!({ "context": c, "app_id": if app { json!(15368) } else { Value::Null } })
        })
        .collect();
    Ok(Json(json!({
        "name": branch,
        "commit": commit_json(&state, &detail, None, &api),
        "_links": {
            "self": url,
            "html": format!("{}/tree/{branch}", state.repository.html_url),
        },
        "protected": protected,
        "protection": {
            "enabled": protected,
            "required_status_checks": {
                "enforcement_level": if required.is_empty() { "off" } else { "non_admins" },
                "contexts": required,
                "checks": checks,
            },
        },
        "protection_url": format!("{url}/protection"),
    })))
}

/// `GET …/issues/{number}`: the pull request as an issue.
pub(crate) async fn get_issue(
    State(shared): State<Arc<Shared>>,
    Authed(viewer): Authed,
    Api(api): Api,
    Path((owner, repo, number)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let state = shared.read();
    let pr = visible_pull_request(&state, &viewer, &owner, &repo, &number)?;
    Ok(Json(issue_json(&state, pr, &api)))
}

/// `GET …/labels`: the repository's labels.
pub(crate) async fn list_repository_labels(
    State(shared): State<Arc<Shared>>,
    Authed(viewer): Authed,
    Api(api): Api,
    paging: Paging,
    Path((owner, repo)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let state = shared.read();
    let record = visible_repository(&state, &viewer, &owner, &repo)?;
    let items = state
        .labels
        .iter()
        .map(|l| label_json(l, record, &api))
        .collect();
    Ok(paging.array(&shared.base_url, items))
}

/// `GET …/labels/{name}`.
pub(crate) async fn get_repository_label(
    State(shared): State<Arc<Shared>>,
    Authed(viewer): Authed,
    Api(api): Api,
    Path((owner, repo, name)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let state = shared.read();
    let record = visible_repository(&state, &viewer, &owner, &repo)?;
    let label = state.label(&name).ok_or(ApiError::NotFound)?;
    Ok(Json(label_json(label, record, &api)))
}

/// `GET /rate_limit`: the emulator does not limit; `core` reports what the
/// rate-limit headers of every answer say (4999 of 5000 left), the others
/// GitHub's authenticated limits, none used.
pub(crate) async fn rate_limit(State(shared): State<Arc<Shared>>) -> Json<Value> {
    // The same window as the headers: it resets an hour after start.
    let reset = shared.started_at_unix + 3600;
    let bucket = |limit: u64, used: u64| json!({ "limit": limit, "used": used, "remaining": limit - used, "reset": reset });
    Json(json!({
        "resources": {
            "core": bucket(5000, 1),
            "search": bucket(30, 0),
            "graphql": bucket(5000, 0),
            "integration_manifest": bucket(5000, 0),
            "code_search": bucket(10, 0),
        },
        "rate": bucket(5000, 1),
    }))
}
