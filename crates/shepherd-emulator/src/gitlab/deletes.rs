//! `DELETE /projects/:id/merge_requests/:iid/notes/:note_id` and
//! `DELETE …/discussions/:discussion_id/notes/:note_id`: 204 once deleted;
//! 404 for a note that is not there (or gone). Only a comment or a reply
//! is deleted: review bodies and system notes are not emulated (404).

use axum::extract::Path;
use axum::http::StatusCode;

use super::common::{merge_request, parse_id, require_write, GlError, GlReq};
use crate::comment_deletes::DeleteTarget;
use crate::scenario::Permission;
use crate::shared::Shared;

/// `DELETE …/merge_requests/:iid/notes/:note_id`.
pub(crate) async fn delete_note(
    GlReq(shared, viewer): GlReq,
    Path((id, iid, note_id)): Path<(String, String, String)>,
) -> Result<StatusCode, GlError> {
    delete(&shared, &viewer, &id, &iid, None, &note_id)
}

/// `DELETE …/merge_requests/:iid/discussions/:discussion_id/notes/:note_id`.
pub(crate) async fn delete_discussion_note(
    GlReq(shared, viewer): GlReq,
    Path((id, iid, discussion_id, note_id)): Path<(String, String, String, String)>,
) -> Result<StatusCode, GlError> {
    delete(&shared, &viewer, &id, &iid, Some(&discussion_id), &note_id)
}

fn delete(
    shared: &Shared,
    viewer: &crate::auth::Viewer,
    id: &str,
    iid: &str,
    discussion: Option<&str>,
    note_id: &str,
) -> Result<StatusCode, GlError> {
    let note_id = parse_id(note_id)?;
    let mut state = shared.write();
    let number = merge_request(&state, viewer, id, iid)?.number;
    require_write(viewer)?;
    // A Maintainer (the emulator's admin permission) may delete anyone's note.
    let moderator = viewer.permission >= Permission::Admin;
    let target = DeleteTarget::Note { number, discussion };
    state
        .apply_delete_comment(target, note_id, &viewer.login, moderator)
        .map_err(|e| match e {
            crate::state::WriteError::NotFound(_) => GlError::not_found_named("Note"),
            e => e.into(),
        })?;
    Ok(StatusCode::NO_CONTENT)
}
