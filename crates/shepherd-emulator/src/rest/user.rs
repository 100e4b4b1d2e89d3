//! `/user`: the authenticated user as GitHub shows them to themselves,
//! and `/rate_limit`.

use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::common::{ApiError, Req};
use super::json::user_json;
use crate::shared::Shared;

/// `GET /user`: the viewer (`private-user`).
pub(crate) async fn get_user(Req(shared, viewer, api): Req) -> Response {
    let state = shared.read();
    match state.user(&viewer.login) {
        Some(user) => {
            // The authenticated user's own view (`private-user`).
            let mut value = user_json(user, &api);
            let created = state
                .pull_requests
                .first()
                .map_or("2024-01-01T00:00:00Z".to_owned(), |pr| {
                    pr.created_at.clone()
                });
            let extra = json!({
                "user_view_type": "private",
                "name": null, "company": null, "blog": "", "location": null,
                "email": null, "hireable": null, "bio": null,
                "public_repos": 0, "public_gists": 0, "followers": 0, "following": 0,
                "created_at": created, "updated_at": created,
                "private_gists": 0, "total_private_repos": 1, "owned_private_repos": 0,
                "disk_usage": 0, "collaborators": 0, "two_factor_authentication": true,
            });
            if let (Some(value), Value::Object(extra)) = (value.as_object_mut(), extra) {
                value.extend(extra);
            }
            Json(value).into_response()
        }
        None => ApiError::NotFound.into_response(),
    }
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
