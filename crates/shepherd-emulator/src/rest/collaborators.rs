//! `GET …/collaborators/{username}/permission`: what a user may do in the
//! repository (what Shepherd asks before honouring a `/shepherd approve`).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::Json;
use serde_json::{json, Value};

use super::common::{visible_repository, ApiError, Authed};
use super::json::user_json;
use crate::scenario::Permission;
use crate::shared::Shared;

/// GitHub's answer: `permission` (`admin`, `write`, `read`, `none`: maintain
/// folded into write, triage into read), `role_name`, and the user; 404 for
/// a login that is no user.
pub(crate) async fn get_permission(
    State(shared): State<Arc<Shared>>,
    Authed(viewer): Authed,
    Path((owner, repo, username)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let state = shared.read();
    let record = visible_repository(&state, &viewer, &owner, &repo)?;
    let user = state
        .user(&username)
        .or_else(|| username.strip_suffix("[bot]").and_then(|l| state.user(l)))
        .ok_or(ApiError::NotFound)?;
    let permission = if user.login == record.owner {
        Permission::Admin
    } else {
        user.permission
    };
    let word = permission.as_str();
    Ok(Json(json!({
        "permission": word,
        "role_name": word,
        "user": user_json(user, &shared.base_url),
    })))
}
