//! `/user`, the project, merge requests (read and edit), their notes, the
//! viewer's draft notes and the merge request's pipelines.

use axum::extract::Path;
use axum::response::Response;
use axum::Json;
use serde_json::Value;

use super::common::{
    commentable, merge_request, parse_id, read_merge_request, read_project, require_write,
    respond_created, GlError, GlPaging, GlReq, Params,
};
use super::json::{
    draft_note_json, label_event_json, merge_request_json, note_json, pipeline_json, project_json,
    user_json, Cx,
};
use super::view::{self, Note};
use crate::scenario::PullRequestStatus;
use crate::state::{PullRequestEdit, State as EmulatorState};

/// `GET /user`.
pub(crate) async fn get_user(GlReq(shared, viewer): GlReq) -> Result<Json<Value>, GlError> {
    let state = shared.read();
    let user = state
        .user(&viewer.login)
        .ok_or_else(GlError::unauthorized)?;
    Ok(Json(user_json(user, &shared.base_url)))
}

/// `GET /projects/:id`.
pub(crate) async fn get_project(
    GlReq(shared, viewer): GlReq,
    Path(id): Path<String>,
) -> Result<Json<Value>, GlError> {
    read_project(&shared, &viewer, &id, |cx| {
        Ok(Json(project_json(cx, viewer.permission)))
    })
}

/// `GET /projects/:id/merge_requests`: `state` (`opened`, `closed`,
/// `merged`, `all`), `source_branch`, `target_branch`.
pub(crate) async fn list_merge_requests(
    GlReq(shared, viewer): GlReq,
    paging: GlPaging,
    Path(id): Path<String>,
) -> Result<Response, GlError> {
    read_project(&shared, &viewer, &id, |cx| {
        let wanted = paging.param("state").unwrap_or("all");
        let mut items: Vec<&_> = cx
            .state
            .pull_requests
            .iter()
            .filter(|pr| match wanted {
                "opened" => pr.status == PullRequestStatus::Open,
                "closed" => pr.status == PullRequestStatus::Closed,
                "merged" => pr.status == PullRequestStatus::Merged,
                _ => true,
            })
            .filter(|pr| {
                paging
                    .param("source_branch")
                    .is_none_or(|b| b == pr.head_ref)
            })
            .filter(|pr| {
                paging
                    .param("target_branch")
                    .is_none_or(|b| b == pr.base_ref)
            })
            .collect();
        items.sort_by_key(|pr| std::cmp::Reverse(pr.database_id));
        let items = items
            .into_iter()
            .map(|pr| merge_request_json(cx, pr))
            .collect();
        Ok(paging.respond(&shared.base_url, items))
    })
}

/// `GET /projects/:id/merge_requests/:iid`.
pub(crate) async fn get_merge_request(
    GlReq(shared, viewer): GlReq,
    Path((id, iid)): Path<(String, String)>,
) -> Result<Json<Value>, GlError> {
    read_merge_request(&shared, &viewer, (&id, &iid), |cx, pr| {
        Ok(Json(merge_request_json(cx, pr)))
    })
}

/// `PUT /projects/:id/merge_requests/:iid`: `title`, `description`,
/// `labels` (all of them), `add_labels`, `remove_labels` (comma-separated),
/// `state_event` (`close`, `reopen`) and `reviewer_ids` (all of them, user
/// ids; a bot newly among them reviews the head); the author or a writer.
pub(crate) async fn put_merge_request(
    GlReq(shared, viewer): GlReq,
    Path((id, iid)): Path<(String, String)>,
    params: Params,
) -> Result<Json<Value>, GlError> {
    let title = params.text("title");
    let description = params.text("description");
    let labels = params.list("labels");
    let add = params.list("add_labels");
    let remove = params.list("remove_labels");
    let reviewer_ids = params.list("reviewer_ids");
    let state_change = match params.text("state_event").as_deref() {
        None => None,
        Some("close") => Some(PullRequestStatus::Closed),
        Some("reopen") => Some(PullRequestStatus::Open),
        Some(_) => {
            return Err(GlError::parameter(
                "state_event does not have a valid value",
            ))
        }
    };
    if title.is_none()
        && description.is_none()
        && labels.is_none()
        && add.is_none()
        && remove.is_none()
        && state_change.is_none()
        && reviewer_ids.is_none()
    {
        return Err(GlError::parameter(
            "title, description, labels, add_labels, remove_labels, state_event, reviewer_ids \
             are missing, at least one parameter must be provided",
        ));
    }
    let mut state = shared.write();
    let pr = merge_request(&state, &viewer, &id, &iid)?;
    let number = pr.number;
    if pr.author != viewer.login {
        require_write(&viewer)?;
    }
    if title.is_some() || description.is_some() || state_change.is_some() {
        let edit = PullRequestEdit {
            title,
            body: description,
            state: state_change,
        };
        state.apply_pull_request_edit(number, &edit)?;
    }
    if let Some(labels) = labels {
        state.apply_set_labels(number, &viewer.login, &labels)?;
    }
    if let Some(add) = add {
        state.apply_add_labels(number, &viewer.login, &add)?;
    }
    for label in remove.unwrap_or_default() {
        // GitLab ignores a label the merge request does not have.
        match state.apply_remove_label(number, &viewer.login, &label) {
            Ok(()) | Err(crate::state::WriteError::NotFound(_)) => {}
            Err(err) => return Err(err.into()),
        }
    }
    let asked = match reviewer_ids {
        Some(ids) => set_reviewers(&mut state, number, &ids)?,
        None => Vec::new(),
    };
    let pr = state.pull_request(number).ok_or_else(GlError::not_found)?;
    let cx = Cx::new(&state, &shared.base_url);
    let value = merge_request_json(&cx, pr);
    drop(state);
    crate::bots::on_review_request(&shared, number, &asked);
    Ok(Json(value))
}

/// Makes the users of `ids` the merge request's reviewers (GitLab's
/// `reviewer_ids` replaces the list; `0` or nothing clears it; see
/// [`EmulatorState::apply_set_reviewers`]). Answers the logins newly asked.
fn set_reviewers(
    state: &mut EmulatorState,
    number: u64,
    ids: &[String],
) -> Result<Vec<String>, GlError> {
    let mut wanted = Vec::new();
    for id in ids.iter().filter(|id| id.as_str() != "0") {
        let user = id
            .parse::<u64>()
            .ok()
            .and_then(|id| state.users.iter().find(|u| u.database_id == id))
            .ok_or_else(|| GlError::parameter("reviewer_ids is invalid"))?;
        wanted.push(user.login.clone());
    }
    Ok(state.apply_set_reviewers(number, &wanted)?)
}

/// `GET /projects/:id/merge_requests/:iid/resource_label_events`, oldest
/// first: who added or removed which label, and when.
pub(crate) async fn list_resource_label_events(
    GlReq(shared, viewer): GlReq,
    paging: GlPaging,
    Path((id, iid)): Path<(String, String)>,
) -> Result<Response, GlError> {
    read_merge_request(&shared, &viewer, (&id, &iid), |cx, pr| {
        let items = pr
            .label_events
            .iter()
            .map(|e| label_event_json(cx, pr, e))
            .collect();
        Ok(paging.respond(&shared.base_url, items))
    })
}

/// `GET /projects/:id/merge_requests/:iid/notes`: `sort` (`asc`, `desc`,
/// the default) and `order_by` (`created_at`, `updated_at`: the same here).
pub(crate) async fn list_notes(
    GlReq(shared, viewer): GlReq,
    paging: GlPaging,
    Path((id, iid)): Path<(String, String)>,
) -> Result<Response, GlError> {
    read_merge_request(&shared, &viewer, (&id, &iid), |cx, pr| {
        let mut notes = view::notes(pr);
        match paging.param("sort") {
            None | Some("desc") => notes.reverse(),
            Some("asc") => {}
            Some(_) => return Err(GlError::parameter("sort does not have a valid value")),
        }
        if !matches!(
            paging.param("order_by"),
            None | Some("created_at") | Some("updated_at")
        ) {
            return Err(GlError::parameter("order_by does not have a valid value"));
        }
        let items = notes.iter().map(|n| note_json(cx, pr, n)).collect();
        Ok(paging.respond(&shared.base_url, items))
    })
}

/// `POST /projects/:id/merge_requests/:iid/notes` with `body`: a note on
/// the merge request (201).
pub(crate) async fn post_note(
    GlReq(shared, viewer): GlReq,
    Path((id, iid)): Path<(String, String)>,
    params: Params,
) -> Result<Response, GlError> {
    let text = params.required_text("body")?;
    let mut state = shared.write();
    let number = commentable(&state, &viewer, (&id, &iid))?;
    let note_id = state.apply_issue_comment(number, &viewer.login, &text)?;
    let pr = state.pull_request(number).ok_or_else(GlError::not_found)?;
    let comment = pr
        .issue_comments
        .iter()
        .find(|c| c.database_id == note_id)
        .ok_or_else(GlError::not_found)?;
    let cx = Cx::new(&state, &shared.base_url);
    let value = note_json(&cx, pr, &Note::Comment(comment));
    drop(state);
    crate::bots::on_comment(&shared, number, &viewer.login, &text);
    Ok(respond_created(value))
}

/// `GET /projects/:id/merge_requests/:iid/notes/:note_id`.
pub(crate) async fn get_note(
    GlReq(shared, viewer): GlReq,
    Path((id, iid, note_id)): Path<(String, String, String)>,
) -> Result<Json<Value>, GlError> {
    let note_id = parse_id(&note_id)?;
    read_merge_request(&shared, &viewer, (&id, &iid), |cx, pr| {
        let notes = view::notes(pr);
        let note = notes
            .iter()
            .find(|n| n.id() == note_id)
            .ok_or_else(|| GlError::not_found_named("Note"))?;
        Ok(Json(note_json(cx, pr, note)))
    })
}

/// `GET /projects/:id/merge_requests/:iid/draft_notes`: the viewer's own
/// (the comments of their pending review), never anyone else's.
pub(crate) async fn list_draft_notes(
    GlReq(shared, viewer): GlReq,
    paging: GlPaging,
    Path((id, iid)): Path<(String, String)>,
) -> Result<Response, GlError> {
    read_merge_request(&shared, &viewer, (&id, &iid), |_, pr| {
        let items = view::drafts(pr, &viewer.login)
            .iter()
            .map(|d| draft_note_json(pr, viewer.database_id, d))
            .collect();
        Ok(paging.respond(&shared.base_url, items))
    })
}

/// `GET /projects/:id/merge_requests/:iid/pipelines`: the pipelines of the
/// merge request's commits, newest first.
pub(crate) async fn list_merge_request_pipelines(
    GlReq(shared, viewer): GlReq,
    paging: GlPaging,
    Path((id, iid)): Path<(String, String)>,
) -> Result<Response, GlError> {
    read_merge_request(&shared, &viewer, (&id, &iid), |cx, pr| {
        let mut runs: Vec<_> = cx
            .state
            .ci
            .workflow_runs
            .iter()
            .filter(|r| r.head_sha == pr.head_sha || pr.commits.contains(&r.head_sha))
            .collect();
        runs.sort_by_key(|r| std::cmp::Reverse(r.database_id));
        let items = runs.into_iter().map(|r| pipeline_json(cx, r)).collect();
        Ok(paging.respond(&shared.base_url, items))
    })
}
