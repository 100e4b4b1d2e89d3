//! `DELETE …/pulls/comments/{id}` and `DELETE …/issues/comments/{id}`:
//! 204 once deleted; 404 for a comment that is not there (or gone).

use axum::extract::Path;
use axum::http::StatusCode;

use super::common::{parse_id, require_write, visible_repository, ApiError, Req};
use crate::comment_deletes::DeleteTarget;
use crate::scenario::Permission;

/// `DELETE …/pulls/comments/{comment_id}`: a review comment.
pub(crate) async fn delete_review_comment(
    req: Req,
    path: Path<(String, String, String)>,
) -> Result<StatusCode, ApiError> {
    delete(req, path, DeleteTarget::ReviewComment)
}

/// `DELETE …/issues/comments/{comment_id}`: a conversation comment.
pub(crate) async fn delete_issue_comment(
    req: Req,
    path: Path<(String, String, String)>,
) -> Result<StatusCode, ApiError> {
    delete(req, path, DeleteTarget::IssueComment)
}

fn delete(
    Req(shared, viewer, _): Req,
    Path((owner, repo, comment_id)): Path<(String, String, String)>,
    target: DeleteTarget<'_>,
) -> Result<StatusCode, ApiError> {
    let id = parse_id(&comment_id)?;
    let mut state = shared.write();
    visible_repository(&state, &viewer, &owner, &repo)?;
    require_write(&viewer)?;
    let moderator = viewer.permission >= Permission::Write;
    state.apply_delete_comment(target, id, &viewer.login, moderator)?;
    Ok(StatusCode::NO_CONTENT)
}
