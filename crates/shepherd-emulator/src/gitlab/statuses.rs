//! A commit's statuses (`GET /projects/:id/repository/commits/:sha/statuses`):
//! the legacy statuses the emulator's CI and bots publish (a review bot's
//! `CodeRabbit` status, a check's `status_context`), as GitLab lists the
//! external statuses of a commit.

use axum::extract::Path;
use axum::response::Response;
use serde_json::{json, Value};

use super::common::{parse_bool, read_project, GlError, GlPaging, GlReq};
use super::json::Cx;
use super::view;
use crate::ci_state::{StatusRecord, StatusState};

/// `GET /projects/:id/repository/commits/:sha/statuses`: the latest status
/// of each name (`all=true`: every one), oldest first; `name` filters.
pub(crate) async fn list_commit_statuses(
    GlReq(shared, viewer): GlReq,
    paging: GlPaging,
    Path((id, sha)): Path<(String, String)>,
) -> Result<Response, GlError> {
    let all = match paging.param("all") {
        Some(text) => parse_bool(text).ok_or_else(|| GlError::parameter("all is invalid"))?,
        None => false,
    };
    read_project(&shared, &viewer, &id, |cx| {
        let statuses: Vec<&StatusRecord> = if all {
            cx.state
                .ci
                .statuses
                .iter()
                .filter(|s| s.sha == sha)
                .collect()
        } else {
            cx.state.ci.latest_statuses(&sha)
        };
        let items = statuses
            .into_iter()
            .filter(|s| paging.param("name").is_none_or(|name| name == s.context))
            .map(|s| status_json(cx, s))
            .collect();
        Ok(paging.respond(&shared.base_url, items))
    })
}

/// One status as GitLab's commit status API shows it: `pending`, `success`
/// or `failed` (GitHub's `error` and `failure` both fail).
fn status_json(cx: &Cx<'_>, status: &StatusRecord) -> Value {
    let word = match status.state {
        StatusState::Pending => "pending",
        StatusState::Success => "success",
        StatusState::Failure | StatusState::Error => "failed",
    };
    let done = status.state != StatusState::Pending;
    let at = view::time(&status.created_at);
    json!({
        "id": status.database_id,
        "sha": status.sha,
        "ref": null,
        "status": word,
        "name": status.context,
        "target_url": status.target_url,
        "description": status.description,
        "created_at": at,
        "started_at": at,
        "finished_at": done.then(|| at.clone()),
        "allow_failure": false,
        "coverage": null,
        "pipeline_id": null,
        "author": cx.user(&status.creator),
    })
}
