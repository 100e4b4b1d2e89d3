//! The repository as GitHub's REST shows it: the repository itself, its
//! commits, branches with their protection, and its labels.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::Response;
use axum::Json;
use serde_json::{json, Value};

use super::common::{visible_repository, ApiError, List, Repo, Req, Scoped};
use super::json::{commit_json, label_json, repository_json};
use super::lookup::visible_commit;
use crate::git::{self, CommitDetail, Hunk};
use crate::shared::Shared;

/// Runs blocking git work off the async runtime; a failure is a 404 (the
/// commit is not there).
pub(super) async fn blocking<T, F>(work: F) -> Result<T, ApiError>
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

/// `GET /repos/{owner}/{repo}`: the repository as the viewer sees it.
pub(crate) async fn get_repository(
    Req(shared, viewer, api): Req,
    Path((owner, repo)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let state = shared.read();
    visible_repository(&state, &viewer, &owner, &repo)?;
    Ok(Json(repository_json(&state, &viewer, &api)))
}

/// `GET …/commits/{ref}`: the commit with its files and stats.
pub(crate) async fn get_commit(
    Req(shared, viewer, api): Req,
    Path(path): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let sha = visible_commit(&shared, &viewer, &path).await?;
    let (detail, diff) = commit_with_diff(&shared, sha).await?;
    let state = shared.read();
    Ok(Json(commit_json(&state, &detail, Some(&diff), &api)))
}

/// `GET …/branches/{branch}`: the branch, its head commit and its
/// protection (the required checks).
pub(crate) async fn get_branch(
    Req(shared, viewer, api): Req,
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

/// `GET …/labels`: the repository's labels.
pub(crate) async fn list_repository_labels(
    Scoped(shared, _, api, paging, Repo): List<Repo>,
) -> Response {
    let state = shared.read();
    let items = state
        .labels
        .iter()
        .map(|l| label_json(l, &state.repository, &api))
        .collect();
    paging.array(&shared.base_url, items)
}

/// `GET …/labels/{name}`.
pub(crate) async fn get_repository_label(
    Req(shared, viewer, api): Req,
    Path((owner, repo, name)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let state = shared.read();
    let record = visible_repository(&state, &viewer, &owner, &repo)?;
    let label = state.label(&name).ok_or(ApiError::NotFound)?;
    Ok(Json(label_json(label, record, &api)))
}
