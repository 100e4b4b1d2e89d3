//! Pull requests: the list, one pull request (as JSON, or its diff or patch
//! as text), its commits and files, edits, its review comments (with
//! replies) and reviews.

use axum::body::Bytes;
use axum::extract::Path;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::Value;

use super::common::{
    commentable_pull_request, parse_body, parse_id, require_write, required_body,
    visible_pull_request, visible_repository, ApiError, List, Paging, Pr, Repo, Req, Scoped,
};
use super::json::{commit_json, file_json, pull_request_json, review_comment_json, review_json};
use super::lookup::commit_details;
use super::repos::blocking;
use crate::git;
use crate::scenario::{PullRequestStatus, ReviewStateSpec, Side};
use crate::state::{NewThread, PullRequestEdit, PullRequestRecord, State as EmulatorState};

pub(crate) async fn list_pull_requests(
    Scoped(shared, _, api, paging, Repo): List<Repo>,
) -> Response {
    let state = shared.read();
    let record = &state.repository;
    let wanted = paging.params.get("state").map_or("open", String::as_str);
    let items: Vec<Value> = state
        .pull_requests
        .iter()
        .filter(|pr| match wanted {
            "all" => true,
            "closed" => pr.status != PullRequestStatus::Open,
            _ => pr.status == PullRequestStatus::Open,
        })
        .map(|pr| pull_request_json(&state, record, pr, &api))
        .collect();
    paging.array(&shared.base_url, items)
}

#[derive(Deserialize)]
struct PullRequestPatch {
    title: Option<String>,
    body: Option<String>,
    state: Option<String>,
}

/// `GET …/pulls/{number}` with `Accept: application/vnd.github.diff` (or
/// `.patch`): the PR's diff as text; otherwise the PR object.
pub(crate) async fn get_pull_request(
    Req(shared, viewer, api): Req,
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
    Scoped(shared, _, api, paging, Pr(number)): List<Pr>,
) -> Result<Response, ApiError> {
    let commits = (shared.read().pull_request(number))
        .ok_or(ApiError::NotFound)?
        .commits
        .clone();
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
    Scoped(shared, _, api, paging, Pr(number)): List<Pr>,
) -> Result<Response, ApiError> {
    let state = shared.read();
    let pr = state.pull_request(number).ok_or(ApiError::NotFound)?;
    let full_name = state.repository.full_name();
    let items = pr
        .diff
        .iter()
        .map(|(path, hunks)| file_json(path, hunks, &pr.head_sha, &api, &full_name))
        .collect();
    Ok(paging.array(&shared.base_url, items))
}

/// `PATCH …/pulls/{number}`: title, body, `state` open or closed.
pub(crate) async fn patch_pull_request(
    Req(shared, viewer, api): Req,
    Path((owner, repo, number)): Path<(String, String, String)>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let patch: PullRequestPatch = parse_body(&body)?;
    let state_change = match patch.state.as_deref() {
        None => None,
        Some("open") => Some(PullRequestStatus::Open),
        Some("closed") => Some(PullRequestStatus::Closed),
        Some(other) => {
            return Err(ApiError::Validation(format!(
                "state: `{other}` is not open or closed"
            )))
        }
    };
    let mut state = shared.write();
    let pr = visible_pull_request(&state, &viewer, &owner, &repo, &number)?;
    let number = pr.number;
    if pr.author != viewer.login {
        require_write(&viewer)?;
    }
    let edit = PullRequestEdit {
        title: patch.title,
        body: patch.body,
        state: state_change,
    };
    state.apply_pull_request_edit(number, &edit)?;
    let pr = state.pull_request(number).ok_or(ApiError::NotFound)?;
    Ok(Json(pull_request_json(&state, &state.repository, pr, &api)))
}

/// The JSON of review comment `comment_id` of `pr`.
fn comment_json(
    state: &EmulatorState,
    pr: &PullRequestRecord,
    comment_id: u64,
    api_url: &str,
) -> Result<Value, ApiError> {
    let (t, c) = pr.find_comment(comment_id).ok_or(ApiError::NotFound)?;
    let thread = &pr.threads[t];
    Ok(review_comment_json(
        state,
        pr,
        thread,
        &thread.comments[c],
        api_url,
    ))
}

/// `GET …/pulls/{number}/comments`: the review comments the viewer sees,
/// oldest first.
pub(crate) async fn list_review_comments(
    Scoped(shared, viewer, api, paging, Pr(number)): List<Pr>,
) -> Result<Response, ApiError> {
    let state = shared.read();
    let pr = state.pull_request(number).ok_or(ApiError::NotFound)?;
    let mut comments: Vec<_> = pr
        .threads
        .iter()
        .flat_map(|thread| thread.comments.iter().map(move |c| (thread, c)))
        .filter(|(_, c)| pr.review_visible_to(c.review_id, &viewer.login))
        .collect();
    comments.sort_by_key(|(_, c)| c.database_id);
    Ok(paging.array_of(&shared.base_url, comments, |(thread, c)| {
        review_comment_json(&state, pr, thread, c, &api)
    }))
}

/// `GET …/pulls/comments/{comment_id}`.
pub(crate) async fn get_review_comment(
    Req(shared, viewer, api): Req,
    Path((owner, repo, comment_id)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let state = shared.read();
    visible_repository(&state, &viewer, &owner, &repo)?;
    let comment_id = parse_id(&comment_id)?;
    for pr in &state.pull_requests {
        if let Some((t, c)) = pr.find_comment(comment_id) {
            let comment = &pr.threads[t].comments[c];
            if !pr.review_visible_to(comment.review_id, &viewer.login) {
                return Err(ApiError::NotFound);
            }
            return comment_json(&state, pr, comment_id, &api).map(Json);
        }
    }
    Err(ApiError::NotFound)
}

#[derive(Deserialize)]
struct ReplyBody {
    body: Option<String>,
}

/// `POST …/pulls/{number}/comments/{comment_id}/replies`: 201 with the new
/// comment. A user with a pending review gets the reply in that review,
/// where nobody else sees it, as on GitHub.
pub(crate) async fn post_reply(
    Req(shared, viewer, api): Req,
    Path((owner, repo, number, comment_id)): Path<(String, String, String, String)>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let reply: ReplyBody = parse_body(&body)?;
    let text = required_body(reply.body)?;
    let mut state = shared.write();
    let number = commentable_pull_request(&state, &viewer, (&owner, &repo, &number))?;
    let comment_id = parse_id(&comment_id)?;
    let created = state.apply_reply_to_comment(number, &viewer.login, comment_id, &text)?;
    let pr = state.pull_request(number).ok_or(ApiError::NotFound)?;
    let value = comment_json(&state, pr, created.comment_id, &api)?;
    Ok((StatusCode::CREATED, Json(value)).into_response())
}

#[derive(Deserialize)]
struct NewCommentBody {
    body: Option<String>,
    path: Option<String>,
    line: Option<u32>,
    start_line: Option<u32>,
    side: Option<String>,
    subject_type: Option<String>,
    in_reply_to: Option<u64>,
    #[allow(dead_code)] // Accepted as GitHub does; the head is used.
    commit_id: Option<String>,
}

fn parse_side(side: Option<&str>) -> Result<Side, ApiError> {
    match side {
        None | Some("RIGHT") => Ok(Side::Right),
        Some("LEFT") => Ok(Side::Left),
        Some(other) => Err(ApiError::Validation(format!(
            "side: `{other}` is not LEFT or RIGHT"
        ))),
    }
}

/// The thread a new REST comment opens: its line must be in the PR's diff.
fn new_thread(
    pr: &PullRequestRecord,
    path: Option<String>,
    line: Option<u32>,
    start_line: Option<u32>,
    side: Option<&str>,
    file_level: bool,
    body: String,
) -> Result<NewThread, ApiError> {
    let path = path.ok_or_else(|| ApiError::Validation("path is missing".into()))?;
    let side = parse_side(side)?;
    if file_level {
        if !pr.diff.contains_key(&path) {
            return Err(ApiError::Validation(
                "path must be a file changed by the pull request".into(),
            ));
        }
        return Ok(NewThread {
            path,
            line: None,
            start_line: None,
            side,
            body,
            diff_hunk: String::new(),
        });
    }
    let line = line.ok_or_else(|| ApiError::Validation("line is missing".into()))?;
    if start_line.is_some_and(|s| s >= line) {
        return Err(ApiError::Validation("start_line must precede line".into()));
    }
    let diff_hunk = pr.hunk_for(&path, line, side).ok_or_else(|| {
        ApiError::Validation("pull_request_review_thread.line must be part of the diff".into())
    })?;
    if let Some(start) = start_line {
        if pr.hunk_for(&path, start, side).is_none() {
            return Err(ApiError::Validation(
                "pull_request_review_thread.start_line must be part of the diff".into(),
            ));
        }
    }
    Ok(NewThread {
        path,
        line: Some(line),
        start_line,
        side,
        body,
        diff_hunk,
    })
}

/// `POST …/pulls/{number}/comments`: a new thread, or a reply with
/// `in_reply_to`.
pub(crate) async fn post_review_comment(
    Req(shared, viewer, api): Req,
    Path((owner, repo, number)): Path<(String, String, String)>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let new: NewCommentBody = parse_body(&body)?;
    let text = required_body(new.body)?;
    let mut state = shared.write();
    let number = commentable_pull_request(&state, &viewer, (&owner, &repo, &number))?;
    let comment_id = match new.in_reply_to {
        Some(parent) => {
            state
                .apply_reply_to_comment(number, &viewer.login, parent, &text)?
                .comment_id
        }
        None => {
            let file_level = new.subject_type.as_deref() == Some("file");
            let pr = state.pull_request(number).ok_or(ApiError::NotFound)?;
            let thread = new_thread(
                pr,
                new.path,
                new.line,
                new.start_line,
                new.side.as_deref(),
                file_level,
                text,
            )?;
            let created = state.apply_new_thread(number, &viewer.login, thread, true)?;
            created.threads[0].1
        }
    };
    let pr = state.pull_request(number).ok_or(ApiError::NotFound)?;
    let value = comment_json(&state, pr, comment_id, &api)?;
    Ok((StatusCode::CREATED, Json(value)).into_response())
}

/// `GET …/pulls/{number}/reviews`.
pub(crate) async fn list_reviews(
    Scoped(shared, viewer, api, paging, Pr(number)): List<Pr>,
) -> Result<Response, ApiError> {
    let state = shared.read();
    let pr = state.pull_request(number).ok_or(ApiError::NotFound)?;
    // A pending review is its author's alone; only the page is rendered.
    let visible: Vec<_> = pr
        .reviews
        .iter()
        .filter(|r| r.visible_to(&viewer.login))
        .collect();
    Ok(paging.array_of(&shared.base_url, visible, |r| {
        review_json(&state, pr, r, &api)
    }))
}

/// `GET …/pulls/{number}/reviews/{review_id}`; another user's pending
/// review is a 404.
pub(crate) async fn get_review(
    Req(shared, viewer, api): Req,
    Path((owner, repo, number, review_id)): Path<(String, String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let state = shared.read();
    let pr = visible_pull_request(&state, &viewer, &owner, &repo, &number)?;
    let review_id = parse_id(&review_id)?;
    let review = pr
        .review(review_id)
        .filter(|r| pr.review_visible_to(r.database_id, &viewer.login))
        .ok_or(ApiError::NotFound)?;
    Ok(Json(review_json(&state, pr, review, &api)))
}

/// `GET …/pulls/{number}/reviews/{review_id}/comments`.
pub(crate) async fn list_review_comments_of_review(
    Req(shared, viewer, api): Req,
    paging: Paging,
    Path((owner, repo, number, review_id)): Path<(String, String, String, String)>,
) -> Result<Response, ApiError> {
    let state = shared.read();
    let pr = visible_pull_request(&state, &viewer, &owner, &repo, &number)?;
    let review_id = parse_id(&review_id)?;
    if pr
        .review(review_id)
        .filter(|r| pr.review_visible_to(r.database_id, &viewer.login))
        .is_none()
    {
        return Err(ApiError::NotFound);
    }
    let comments: Vec<_> = pr
        .threads
        .iter()
        .flat_map(|thread| thread.comments.iter().map(move |c| (thread, c)))
        .filter(|(_, c)| c.review_id == review_id)
        .collect();
    Ok(paging.array_of(&shared.base_url, comments, |(thread, c)| {
        review_comment_json(&state, pr, thread, c, &api)
    }))
}

#[derive(Deserialize)]
struct ReviewCommentInput {
    path: Option<String>,
    line: Option<u32>,
    start_line: Option<u32>,
    side: Option<String>,
    body: Option<String>,
}

#[derive(Deserialize)]
struct NewReviewBody {
    body: Option<String>,
    event: Option<String>,
    #[serde(default)]
    comments: Vec<ReviewCommentInput>,
    #[allow(dead_code)] // Accepted as GitHub does; the head is used.
    commit_id: Option<String>,
}

/// GitHub's review events; `None` (no event) makes a pending review.
pub(crate) fn parse_event(event: Option<&str>) -> Result<ReviewStateSpec, String> {
    match event {
        None | Some("PENDING") => Ok(ReviewStateSpec::Pending),
        Some("COMMENT") => Ok(ReviewStateSpec::Commented),
        Some("APPROVE") => Ok(ReviewStateSpec::Approved),
        Some("REQUEST_CHANGES") => Ok(ReviewStateSpec::ChangesRequested),
        Some(other) => Err(format!(
            "event: `{other}` is not APPROVE, REQUEST_CHANGES or COMMENT"
        )),
    }
}

/// `POST …/pulls/{number}/reviews`: a review, pending when `event` is omitted.
pub(crate) async fn post_review(
    Req(shared, viewer, api): Req,
    Path((owner, repo, number)): Path<(String, String, String)>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let new: NewReviewBody = parse_body(&body)?;
    let event = parse_event(new.event.as_deref()).map_err(ApiError::Validation)?;
    let mut state = shared.write();
    let number = commentable_pull_request(&state, &viewer, (&owner, &repo, &number))?;
    let pr = state.pull_request(number).ok_or(ApiError::NotFound)?;
    let threads = new
        .comments
        .into_iter()
        .map(|c| {
            let body = c
                .body
                .ok_or_else(|| ApiError::Validation("comments: body is missing".into()))?;
            new_thread(
                pr,
                c.path,
                c.line,
                c.start_line,
                c.side.as_deref(),
                false,
                body,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let created = state.apply_review(
        number,
        &viewer.login,
        event,
        new.body.as_deref().unwrap_or_default(),
        threads,
    )?;
    let pr = state.pull_request(number).ok_or(ApiError::NotFound)?;
    let review = pr.review(created.review_id).ok_or(ApiError::NotFound)?;
    Ok(Json(review_json(&state, pr, review, &api)))
}

#[derive(Deserialize)]
struct SubmitBody {
    body: Option<String>,
    event: Option<String>,
}

/// `POST …/pulls/{number}/reviews/{review_id}/events`: submits a pending review.
pub(crate) async fn submit_review(
    Req(shared, viewer, api): Req,
    Path((owner, repo, number, review_id)): Path<(String, String, String, String)>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let submit: SubmitBody = parse_body(&body)?;
    let event = match submit.event.as_deref() {
        None => return Err(ApiError::Validation("event is missing".into())),
        Some(event) => parse_event(Some(event)).map_err(ApiError::Validation)?,
    };
    let mut state = shared.write();
    let number = commentable_pull_request(&state, &viewer, (&owner, &repo, &number))?;
    let review_id = parse_id(&review_id)?;
    state.apply_submit_review(
        number,
        &viewer.login,
        review_id,
        event,
        submit.body.as_deref(),
    )?;
    let pr = state.pull_request(number).ok_or(ApiError::NotFound)?;
    let review = pr.review(review_id).ok_or(ApiError::NotFound)?;
    Ok(Json(review_json(&state, pr, review, &api)))
}
