//! A pull request's review requests
//! (`…/pulls/{number}/requested_reviewers`): who is asked to review, asking
//! (which makes a Copilot-like bot review the head again, as re-requesting
//! Copilot does) and withdrawing. Teams are not modelled: `teams` is empty.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::Path;
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::common::{parse_body, require_write, visible_pull_request, ApiError, Req};
use super::json::{author_json, pull_request_json};
use crate::shared::Shared;
use crate::state::WriteError;

/// `GET …/pulls/{number}/requested_reviewers`: `{"users", "teams"}`.
pub(crate) async fn list_requested_reviewers(
    Req(shared, viewer, api): Req,
    Path((owner, repo, number)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let state = shared.read();
    let pr = visible_pull_request(&state, &viewer, &owner, &repo, &number)?;
    let users: Vec<Value> = pr
        .requested_reviewers
        .iter()
        .map(|login| author_json(&state, login, &api))
        .collect();
    Ok(Json(json!({"users": users, "teams": []})))
}

#[derive(Deserialize)]
struct ReviewersBody {
    #[serde(default)]
    reviewers: Vec<String>,
    #[serde(default)]
    team_reviewers: Vec<String>,
}

/// `POST …/pulls/{number}/requested_reviewers` (`reviewers`): 201 with the
/// pull request; each one asked reviews again if it is a bot that does.
/// `DELETE` with the same body withdraws the requests: 200 with the pull
/// request.
pub(crate) async fn change_requested_reviewers(
    method: Method,
    req: Req,
    path: Path<(String, String, String)>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let add = method == Method::POST;
    let (shared, number, logins, value) = change(req, path, &body, add)?;
    if !add {
        return Ok(Json(value).into_response());
    }
    crate::bots::on_review_request(&shared, number, &logins);
    Ok((StatusCode::CREATED, Json(value)).into_response())
}

/// Asks (`add`) or stops asking the body's `reviewers`; a bot may be named
/// with or without REST's `[bot]` suffix. Answers the shared state, the
/// pull request's number, the logins and the pull request's JSON.
fn change(
    Req(shared, viewer, api): Req,
    Path((owner, repo, number)): Path<(String, String, String)>,
    body: &Bytes,
    add: bool,
) -> Result<(Arc<Shared>, u64, Vec<String>, Value), ApiError> {
    let wanted: ReviewersBody = parse_body(body)?;
    if !wanted.team_reviewers.is_empty() {
        return Err(ApiError::Validation(
            "team_reviewers: the emulator has no teams".into(),
        ));
    }
    let logins: Vec<String> = wanted
        .reviewers
        .iter()
        .map(|login| login.strip_suffix("[bot]").unwrap_or(login).to_owned())
        .collect();
    let value = {
        let mut state = shared.write();
        let pr = visible_pull_request(&state, &viewer, &owner, &repo, &number)?;
        let number = pr.number;
        require_write(&viewer)?;
        // GitHub answers these refusals with their own message, not
        // "Validation Failed".
        state
            .apply_review_request(number, &logins, add)
            .map_err(|err| match err {
                WriteError::Unprocessable(message) => {
                    ApiError::Message(StatusCode::UNPROCESSABLE_ENTITY, message)
                }
                other => other.into(),
            })?;
        let pr = state.pull_request(number).ok_or(ApiError::NotFound)?;
        (
            number,
            pull_request_json(&state, &state.repository, pr, &api),
        )
    };
    Ok((shared, value.0, logins, value.1))
}
