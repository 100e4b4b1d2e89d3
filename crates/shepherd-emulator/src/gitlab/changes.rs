//! What a merge request changes, read from the repository with git: its
//! `changes` (the merge request with its diff), `diffs`, `commits`, and its
//! diff `versions` (one per push), as GitLab's merge request API gives them.

use axum::extract::Path;
use axum::response::Response;
use axum::Json;
use serde_json::{json, Value};

use super::common::{merge_request, parse_id, read_merge_request, GlError, GlPaging, GlReq};
use super::json::merge_request_json;
use super::repository::{blocking, commit_json, diff_json};
use super::view;
use crate::git::{self, CommitInfo, FileChange};
use crate::shared::Shared;
use crate::state::{DiffVersionRecord, PullRequestRecord};

/// The files and commits of `base..head`, with git.
async fn read_diff(
    shared: &Shared,
    base: &str,
    head: &str,
) -> Result<(Vec<FileChange>, Vec<CommitInfo>), GlError> {
    let git_env = shared.git.clone();
    let git_dir = shared.read().repository.git_dir.clone();
    let (base, head) = (base.to_owned(), head.to_owned());
    blocking(move || {
        let changes = git::compare(&git_env, &git_dir, &base, &head)?;
        let commits = git::log(&git_env, &git_dir, &base, &head)?;
        Ok((changes, commits))
    })
    .await
}

/// The files and commits of the merge request's current version, if the
/// viewer may see it.
async fn read_current_diff(
    shared: &Shared,
    viewer: &crate::auth::Viewer,
    (id, iid): (&str, &str),
) -> Result<(Vec<FileChange>, Vec<CommitInfo>), GlError> {
    let (base, head) = {
        let state = shared.read();
        let pr = merge_request(&state, viewer, id, iid)?;
        (pr.base_sha.clone(), pr.head_sha.clone())
    };
    read_diff(shared, &base, &head).await
}

/// `GET /projects/:id/merge_requests/:iid/changes`: the merge request with
/// `changes` (each changed file) and `overflow: false` (GitLab's "Get
/// single merge request changes", deprecated for `diffs` but served).
pub(crate) async fn get_changes(
    GlReq(shared, viewer): GlReq,
    Path((id, iid)): Path<(String, String)>,
) -> Result<Json<Value>, GlError> {
    let (changes, _) = read_current_diff(&shared, &viewer, (&id, &iid)).await?;
    read_merge_request(&shared, &viewer, (&id, &iid), |cx, pr| {
        let mut value = merge_request_json(cx, pr);
        value["changes"] = changes.iter().map(diff_json).collect();
        value["overflow"] = false.into();
        Ok(Json(value))
    })
}

/// `GET /projects/:id/merge_requests/:iid/diffs`: the changed files,
/// paginated (GitLab's "List merge request diffs").
pub(crate) async fn list_diffs(
    GlReq(shared, viewer): GlReq,
    paging: GlPaging,
    Path((id, iid)): Path<(String, String)>,
) -> Result<Response, GlError> {
    let (changes, _) = read_current_diff(&shared, &viewer, (&id, &iid)).await?;
    let items = changes.iter().map(diff_json).collect();
    Ok(paging.respond(&shared.base_url, items))
}

/// `GET /projects/:id/merge_requests/:iid/commits`: the merge request's
/// commits, newest first as GitLab lists them; paginated.
pub(crate) async fn list_commits(
    GlReq(shared, viewer): GlReq,
    paging: GlPaging,
    Path((id, iid)): Path<(String, String)>,
) -> Result<Response, GlError> {
    let (_, commits) = read_current_diff(&shared, &viewer, (&id, &iid)).await?;
    let web = shared.read().repository.html_url.clone();
    let items = commits.iter().rev().map(|c| commit_json(c, &web)).collect();
    Ok(paging.respond(&shared.base_url, items))
}

/// A diff version, as GitLab's list gives it.
fn version_json(pr: &PullRequestRecord, version: &DiffVersionRecord) -> Value {
    json!({
        "id": version.database_id,
        "head_commit_sha": version.head_sha,
        "base_commit_sha": version.base_sha,
        "start_commit_sha": version.base_sha,
        "created_at": view::time(&version.created_at),
        "merge_request_id": pr.database_id,
        "state": "collected",
        "real_size": version.files.to_string(),
        "patch_id_sha": null,
    })
}

/// `GET /projects/:id/merge_requests/:iid/versions`: every diff version,
/// newest first (GitLab's "Get merge request diff versions").
pub(crate) async fn list_versions(
    GlReq(shared, viewer): GlReq,
    paging: GlPaging,
    Path((id, iid)): Path<(String, String)>,
) -> Result<Response, GlError> {
    read_merge_request(&shared, &viewer, (&id, &iid), |_, pr| {
        let items = pr
            .versions
            .iter()
            .rev()
            .map(|v| version_json(pr, v))
            .collect();
        Ok(paging.respond(&shared.base_url, items))
    })
}

/// `GET /projects/:id/merge_requests/:iid/versions/:version_id`: one
/// version with its `commits` (newest first) and `diffs` (GitLab's "Get a
/// single merge request diff version").
pub(crate) async fn get_version(
    GlReq(shared, viewer): GlReq,
    Path((id, iid, version_id)): Path<(String, String, String)>,
) -> Result<Json<Value>, GlError> {
    let version_id = parse_id(&version_id)?;
    let (mut value, base, head, web) = {
        let state = shared.read();
        let pr = merge_request(&state, &viewer, &id, &iid)?;
        let version = pr
            .versions
            .iter()
            .find(|v| v.database_id == version_id)
            .ok_or_else(GlError::not_found)?;
        (
            version_json(pr, version),
            version.base_sha.clone(),
            version.head_sha.clone(),
            state.repository.html_url.clone(),
        )
    };
    let (changes, commits) = read_diff(&shared, &base, &head).await?;
    value["commits"] = commits.iter().rev().map(|c| commit_json(c, &web)).collect();
    value["diffs"] = changes.iter().map(diff_json).collect();
    Ok(Json(value))
}
