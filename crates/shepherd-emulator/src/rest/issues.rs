//! The pull request as an issue: the issue itself, conversation comments,
//! events and labels.

use axum::body::Bytes;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::Value;

use super::common::{
    commentable_pull_request, parse_body, parse_id, require_write, required_body,
    visible_pull_request, visible_repository, ApiError, List, Pr, Read, Req, Scoped,
};
use super::json::{issue_comment_json, issue_json, label_event_json, labels_json};

/// `GET …/issues/{number}`: the pull request as an issue.
pub(crate) async fn get_issue(
    Scoped(shared, _, api, (), Pr(number)): Read<Pr>,
) -> Result<Json<Value>, ApiError> {
    let state = shared.read();
    let pr = state.pull_request(number).ok_or(ApiError::NotFound)?;
    Ok(Json(issue_json(&state, pr, &api)))
}

/// `GET …/issues/{number}/comments`, oldest first, `since` honoured.
pub(crate) async fn list_issue_comments(
    Scoped(shared, _, api, paging, Pr(number)): List<Pr>,
) -> Result<Response, ApiError> {
    let state = shared.read();
    let pr = state.pull_request(number).ok_or(ApiError::NotFound)?;
    let since = paging.params.get("since").cloned();
    let comments: Vec<_> = pr
        .issue_comments
        .iter()
        // ISO 8601 in UTC compares as text.
        .filter(|c| since.as_ref().is_none_or(|s| c.created_at >= *s))
        .collect();
    Ok(paging.array_of(&shared.base_url, comments, |c| {
        issue_comment_json(&state, pr, c, &api)
    }))
}

#[derive(Deserialize)]
struct CommentBody {
    body: Option<String>,
}

/// `POST …/issues/{number}/comments`: 201 with the comment.
pub(crate) async fn post_issue_comment(
    Req(shared, viewer, api): Req,
    Path((owner, repo, number)): Path<(String, String, String)>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let new: CommentBody = parse_body(&body)?;
    let text = required_body(new.body)?;
    let mut state = shared.write();
    let number = commentable_pull_request(&state, &viewer, (&owner, &repo, &number))?;
    let id = state.apply_issue_comment(number, &viewer.login, &text)?;
    let pr = state.pull_request(number).ok_or(ApiError::NotFound)?;
    let comment = pr
        .issue_comments
        .iter()
        .find(|c| c.database_id == id)
        .ok_or(ApiError::NotFound)?;
    let value = issue_comment_json(&state, pr, comment, &api);
    drop(state);
    crate::bots::on_comment(&shared, number, &viewer.login, &text);
    Ok((StatusCode::CREATED, Json(value)).into_response())
}

/// `GET …/issues/comments/{comment_id}`.
pub(crate) async fn get_issue_comment(
    Req(shared, viewer, api): Req,
    Path((owner, repo, comment_id)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let state = shared.read();
    visible_repository(&state, &viewer, &owner, &repo)?;
    let id = parse_id(&comment_id)?;
    state
        .pull_requests
        .iter()
        .find_map(|pr| {
            let comment = pr.issue_comments.iter().find(|c| c.database_id == id)?;
            Some(issue_comment_json(&state, pr, comment, &api))
        })
        .map(Json)
        .ok_or(ApiError::NotFound)
}

/// `GET …/issues/{number}/events`, oldest first: the pull request's
/// `labeled` and `unlabeled` events, with their actor (the only issue
/// events the emulator records).
pub(crate) async fn list_issue_events(
    Scoped(shared, _, api, paging, Pr(number)): List<Pr>,
) -> Result<Response, ApiError> {
    let state = shared.read();
    let pr = state.pull_request(number).ok_or(ApiError::NotFound)?;
    let events: Vec<_> = pr.label_events.iter().collect();
    Ok(paging.array_of(&shared.base_url, events, |e| {
        label_event_json(&state, e, &api)
    }))
}

/// `GET …/issues/{number}/labels`.
pub(crate) async fn list_labels(
    Scoped(shared, _, api, (), Pr(number)): Read<Pr>,
) -> Result<Json<Value>, ApiError> {
    let state = shared.read();
    let pr = state.pull_request(number).ok_or(ApiError::NotFound)?;
    Ok(Json(labels_json(&state, pr, &api)))
}

/// A label as a request names it: its name, or an object with a `name`.
#[derive(Deserialize)]
#[serde(untagged)]
enum LabelName {
    Name(String),
    Object { name: String },
}

/// The body of `POST` and `PUT …/issues/{number}/labels`, in each form
/// GitHub's description takes: `{"labels": [...]}`, a bare array, either
/// of names or of `{"name"}` objects, or one name.
#[derive(Deserialize)]
#[serde(untagged)]
enum LabelsBody {
    List(Vec<LabelName>),
    Wrapped { labels: Option<Vec<LabelName>> },
    One(String),
}

/// The label names of a labels request; 422 when it names none at all.
fn label_names(body: &Bytes) -> Result<Vec<String>, ApiError> {
    let names = match parse_body::<LabelsBody>(body)? {
        LabelsBody::List(names)
        | LabelsBody::Wrapped {
            labels: Some(names),
        } => names,
        LabelsBody::Wrapped { labels: None } => {
            return Err(ApiError::Validation("labels is missing".into()))
        }
        LabelsBody::One(name) => vec![LabelName::Name(name)],
    };
    Ok(names
        .into_iter()
        .map(|n| match n {
            LabelName::Name(name) | LabelName::Object { name } => name,
        })
        .collect())
}

/// `POST …/issues/{number}/labels` (`REPLACE` false): adds the labels;
/// `PUT` (`REPLACE` true): the issue's labels become the ones given
/// (GitHub's "Set labels for an issue"; `[]` removes every label), each one
/// removed or added with its event. Either answers every label of the issue.
pub(crate) async fn change_labels<const REPLACE: bool>(
    Req(shared, viewer, api): Req,
    Path((owner, repo, number)): Path<(String, String, String)>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let names = label_names(&body)?;
    let mut state = shared.write();
    let pr = visible_pull_request(&state, &viewer, &owner, &repo, &number)?;
    let number = pr.number;
    require_write(&viewer)?;
    if REPLACE {
        state.apply_set_labels(number, &viewer.login, &names)?;
    } else {
        state.apply_add_labels(number, &viewer.login, &names)?;
    }
    let pr = state.pull_request(number).ok_or(ApiError::NotFound)?;
    Ok(Json(labels_json(&state, pr, &api)))
}

/// `DELETE …/issues/{number}/labels/{name}`: answers the labels left; 404
/// `Label does not exist` when it is not on the issue.
pub(crate) async fn remove_label(
    Req(shared, viewer, api): Req,
    Path((owner, repo, number, name)): Path<(String, String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let mut state = shared.write();
    let pr = visible_pull_request(&state, &viewer, &owner, &repo, &number)?;
    let number = pr.number;
    require_write(&viewer)?;
    state.apply_remove_label(number, &viewer.login, &name)?;
    let pr = state.pull_request(number).ok_or(ApiError::NotFound)?;
    Ok(Json(labels_json(&state, pr, &api)))
}
