//! `GET …/collaborators/{username}/permission`: what a user may do in the
//! repository (what Shepherd asks before honouring a `/shepherd approve`).

use axum::extract::Path;
use axum::http::StatusCode;
use axum::Json;
use serde_json::{json, Value};

use super::common::{visible_repository, ApiError, Req};
use super::json::user_json;
use crate::scenario::{Permission, Visibility};

/// GitHub's answer (to a caller with push access): `permission` (`admin`, `write`, `read`, `none`: maintain
/// folded into write, triage into read), `role_name`, and the user; 404 for
/// a login that is no user.
pub(crate) async fn get_permission(
    Req(shared, viewer, api): Req,
    Path((owner, repo, username)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let state = shared.read();
    let record = visible_repository(&state, &viewer, &owner, &repo)?;
    // GitHub answers only callers with push access (a stranger on a public
    // repository, a read-only token: 403, as seen in yegor256/rultor#1407).
    if viewer.permission < Permission::Write {
        return Err(ApiError::Message(
            StatusCode::FORBIDDEN,
            "Must have push access to view collaborator permission.".into(),
        ));
    }
    let user = state
        .user(&username)
        .or_else(|| username.strip_suffix("[bot]").and_then(|l| state.user(l)))
        .ok_or(ApiError::NotFound)?;
    let permission = if user.login == record.owner {
        Permission::Admin
    } else if user.permission == Permission::None && record.visibility == Visibility::Public {
        // On a public repository GitHub answers `read` for any account,
        // collaborator or not (seen in
        // aws-ia/cloudformation-github-resource-providers#14: "the
        // permission was always 'read' assigned to every user").
        Permission::Read
    } else {
        user.permission
    };
    let word = permission.as_str();
    // The user as a collaborator: with its role and what it may do.
    let mut user = user_json(user, &api);
    let at_least = |p: Permission| permission >= p;
    user["role_name"] = json!(word);
    user["permissions"] = json!({
        "pull": at_least(Permission::Read),
        "triage": at_least(Permission::Read),
        "push": at_least(Permission::Write),
        "maintain": at_least(Permission::Admin),
        "admin": at_least(Permission::Admin),
    });
    Ok(Json(json!({
        "permission": word,
        "role_name": word,
        "user": user,
    })))
}
