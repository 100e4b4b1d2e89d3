//! A merge request's discussions: the list, one discussion, a reply (a new
//! note in the discussion) and resolving.

use axum::extract::Path;
use axum::response::Response;
use axum::Json;
use serde_json::Value;

use super::common::{
    commentable, merge_request, parse_id, read_merge_request, require_comment, require_write,
    respond_created, GlError, GlPaging, GlReq, Params,
};
use super::json::{discussion_json, note_json, Cx};
use super::position;
use super::view::{self, Discussion, Note};
use crate::scenario::Permission;

/// `GET /projects/:id/merge_requests/:iid/discussions`, paginated.
pub(crate) async fn list_discussions(
    GlReq(shared, viewer): GlReq,
    paging: GlPaging,
    Path((id, iid)): Path<(String, String)>,
) -> Result<Response, GlError> {
    read_merge_request(&shared, &viewer, (&id, &iid), |cx, pr| {
        let items = view::discussions(pr)
            .iter()
            .map(|d| discussion_json(cx, pr, d))
            .collect();
        Ok(paging.respond(&shared.base_url, items))
    })
}

/// `POST /projects/:id/merge_requests/:iid/discussions` with `body` and,
/// for a diff note, `position` (a JSON object or `position[…]` keys): a new
/// thread, posted at once; 201 with the discussion. Without a position it
/// is a resolvable discussion of the merge request (`DiscussionNote`).
pub(crate) async fn post_discussion(
    GlReq(shared, viewer): GlReq,
    Path((id, iid)): Path<(String, String)>,
    params: Params,
) -> Result<Response, GlError> {
    let text = params.required_text("body")?;
    let mut state = shared.write();
    let number = commentable(&state, &viewer, (&id, &iid))?;
    let pr = state.pull_request(number).ok_or_else(GlError::not_found)?;
    let thread = position::new_thread(pr, text, params.object("position").as_ref())?;
    let created = state.apply_discussion(number, &viewer.login, thread)?;
    let pr = state.pull_request(number).ok_or_else(GlError::not_found)?;
    let thread = created
        .threads
        .first()
        .and_then(|(thread_id, _)| pr.threads.iter().find(|t| t.database_id == *thread_id))
        .ok_or_else(GlError::not_found)?;
    let cx = Cx::new(&state, &shared.base_url);
    let value = discussion_json(&cx, pr, &Discussion::Thread(thread));
    Ok(respond_created(value))
}

/// `GET /projects/:id/merge_requests/:iid/discussions/:discussion_id`.
pub(crate) async fn get_discussion(
    GlReq(shared, viewer): GlReq,
    Path((id, iid, discussion_id)): Path<(String, String, String)>,
) -> Result<Json<Value>, GlError> {
    read_merge_request(&shared, &viewer, (&id, &iid), |cx, pr| {
        let discussion = view::discussion(pr, &discussion_id).ok_or_else(GlError::not_found)?;
        Ok(Json(discussion_json(cx, pr, &discussion)))
    })
}

/// `GET …/discussions/:discussion_id/notes/:note_id`: one note of the
/// discussion.
pub(crate) async fn get_discussion_note(
    GlReq(shared, viewer): GlReq,
    Path((id, iid, discussion_id, note_id)): Path<(String, String, String, String)>,
) -> Result<Json<Value>, GlError> {
    let note_id = parse_id(&note_id)?;
    read_merge_request(&shared, &viewer, (&id, &iid), |cx, pr| {
        let discussion = view::discussion(pr, &discussion_id).ok_or_else(GlError::not_found)?;
        let notes = discussion.notes(pr);
        let note = notes
            .iter()
            .find(|n| n.id() == note_id)
            .ok_or_else(|| GlError::not_found_named("Note"))?;
        Ok(Json(note_json(cx, pr, note)))
    })
}

/// `POST …/discussions/:discussion_id/notes` with `body`: a reply in a
/// thread, posted at once (201 with the note).
pub(crate) async fn post_discussion_note(
    GlReq(shared, viewer): GlReq,
    Path((id, iid, discussion_id)): Path<(String, String, String)>,
    params: Params,
) -> Result<Response, GlError> {
    let text = params.required_text("body")?;
    let mut state = shared.write();
    let pr = merge_request(&state, &viewer, &id, &iid)?;
    let number = pr.number;
    let thread_id = match view::discussion(pr, &discussion_id) {
        Some(Discussion::Thread(thread)) => thread.database_id,
        Some(_) => {
            return Err(GlError::bad_request(
                "replies go to threads; an individual note is answered with a new note",
            ))
        }
        None => return Err(GlError::not_found()),
    };
    require_comment(&viewer)?;
    let created = state.apply_direct_reply(thread_id, &viewer.login, &text)?;
    let pr = state.pull_request(number).ok_or_else(GlError::not_found)?;
    let (thread, comment) = pr
        .threads
        .iter()
        .find(|t| t.database_id == thread_id)
        .and_then(|t| {
            let c = t
                .comments
                .iter()
                .find(|c| c.database_id == created.comment_id)?;
            Some((t, c))
        })
        .ok_or_else(GlError::not_found)?;
    let cx = Cx::new(&state, &shared.base_url);
    let value = note_json(
        &cx,
        pr,
        &Note::Thread {
            thread,
            comment,
            created_at: pr.note_time(comment),
        },
    );
    Ok(respond_created(value))
}

/// `PUT …/discussions/:discussion_id?resolved=true|false`: resolves or
/// unresolves a thread and answers the discussion. Resolving a resolved
/// thread posts a duplicate system note, as GitLab does.
pub(crate) async fn put_discussion(
    GlReq(shared, viewer): GlReq,
    Path((id, iid, discussion_id)): Path<(String, String, String)>,
    params: Params,
) -> Result<Json<Value>, GlError> {
    let resolved = params
        .flag("resolved")?
        .ok_or_else(|| GlError::parameter("resolved is missing"))?;
    let mut state = shared.write();
    let pr = merge_request(&state, &viewer, &id, &iid)?;
    let number = pr.number;
    let thread_id = match view::discussion(pr, &discussion_id) {
        Some(Discussion::Thread(thread)) => thread.database_id,
        Some(_) => return Err(GlError::bad_request("the discussion is not resolvable")),
        None => return Err(GlError::not_found()),
    };
    require_write(&viewer)?;
    let may_write = viewer.permission >= Permission::Write;
    state.apply_discussion_resolve(thread_id, &viewer.login, may_write, resolved)?;
    let pr = state.pull_request(number).ok_or_else(GlError::not_found)?;
    let discussion = view::discussion(pr, &discussion_id).ok_or_else(GlError::not_found)?;
    let cx = Cx::new(&state, &shared.base_url);
    Ok(Json(discussion_json(&cx, pr, &discussion)))
}
