//! A merge request's approvals (`GET …/approvals`, `POST …/approve`,
//! `POST …/unapprove`) and its participants. An approval is the approver's
//! APPROVED review in the shared state (see
//! [`crate::state::State::apply_approval`]); there are no approval rules,
//! so none is ever required.

use std::collections::BTreeSet;

use axum::body::Bytes;
use axum::extract::Path;
use axum::response::Response;
use axum::Json;
use serde_json::{json, Value};

use super::common::{
    merge_request, read_merge_request, require_write, respond_created, GlError, GlReq, Params,
};
use super::json::{mr_state, Cx};
use super::view::{self, Note};
use crate::auth::Viewer;
use crate::scenario::{Permission, ReviewStateSpec};
use crate::shared::Shared;
use crate::state::PullRequestRecord;

/// The approval state of a merge request as `viewer` sees it (GitLab's
/// "Get approval state" of the merge request approvals API, with the
/// fields the Free tier answers and no rules: nothing is required).
fn approvals_json(cx: &Cx<'_>, pr: &PullRequestRecord, viewer: &Viewer) -> Value {
    let approvals = pr.approvals();
    let approved_by: Vec<Value> = approvals
        .iter()
        .map(|r| {
            json!({
                "user": cx.user(&r.author),
                "approved_at": r.submitted_at.as_deref().map(view::time),
            })
        })
        .collect();
    let mine = pr.approval_of(&viewer.login).is_some();
    json!({
        "id": pr.database_id,
        "iid": pr.number,
        "project_id": cx.state.repository.database_id,
        "title": pr.title,
        "description": pr.body,
        "state": mr_state(pr.status),
        "created_at": view::time(&pr.created_at),
        "updated_at": view::time(&pr.updated_at),
        "merge_status": "can_be_merged",
        "approved": !approvals.is_empty(),
        "approvals_required": 0,
        "approvals_left": 0,
        "require_password_to_approve": false,
        "approved_by": approved_by,
        "suggested_approvers": [],
        "approvers": [],
        "approver_groups": [],
        "user_has_approved": mine,
        "user_can_approve": !mine && viewer.permission >= Permission::Write,
        "approval_rules_left": [],
        "has_approval_rules": false,
        "merge_request_approvers_available": false,
        "multiple_approval_rules_available": false,
        "invalid_approvers_rules": [],
    })
}

/// `GET /projects/:id/merge_requests/:iid/approvals`.
pub(crate) async fn get_approvals(
    GlReq(shared, viewer): GlReq,
    Path((id, iid)): Path<(String, String)>,
) -> Result<Json<Value>, GlError> {
    read_merge_request(&shared, &viewer, (&id, &iid), |cx, pr| {
        Ok(Json(approvals_json(cx, pr, &viewer)))
    })
}

/// `POST /projects/:id/merge_requests/:iid/approve` (`sha`: the head the
/// approver saw, 409 when the head has moved): 201 with the approval
/// state. A user who may not approve, or has approved already, gets GitLab's
/// `401 Unauthorized`.
pub(crate) async fn approve(
    GlReq(shared, viewer): GlReq,
    Path((id, iid)): Path<(String, String)>,
    params: Params,
) -> Result<Response, GlError> {
    change_approval(&shared, &viewer, (&id, &iid), params.text("sha"), true)
}

/// `POST /projects/:id/merge_requests/:iid/unapprove`: withdraws the
/// viewer's approval (404 when there is none); 201 with the approval
/// state.
pub(crate) async fn unapprove(
    GlReq(shared, viewer): GlReq,
    Path((id, iid)): Path<(String, String)>,
    _body: Bytes,
) -> Result<Response, GlError> {
    change_approval(&shared, &viewer, (&id, &iid), None, false)
}

fn change_approval(
    shared: &Shared,
    viewer: &Viewer,
    (id, iid): (&str, &str),
    sha: Option<String>,
    approve: bool,
) -> Result<Response, GlError> {
    let mut state = shared.write();
    let pr = merge_request(&state, viewer, id, iid)?;
    let number = pr.number;
    if approve {
        if viewer.permission < Permission::Write || pr.approval_of(&viewer.login).is_some() {
            return Err(GlError::unauthorized());
        }
        if let Some(sha) = sha.filter(|sha| *sha != pr.head_sha) {
            return Err(GlError::conflict(&format!(
                "SHA does not match HEAD of source branch: {sha}"
            )));
        }
    } else {
        require_write(viewer)?;
    }
    state.apply_approval(number, &viewer.login, approve)?;
    let pr = state.pull_request(number).ok_or_else(GlError::not_found)?;
    let cx = Cx::new(&state, &shared.base_url);
    let value = approvals_json(&cx, pr, viewer);
    Ok(respond_created(value))
}

/// `GET /projects/:id/merge_requests/:iid/participants`: the author and
/// everyone who wrote a note others see, in the order they joined (system
/// notes do not count); each a user as GitLab embeds them.
pub(crate) async fn list_participants(
    GlReq(shared, viewer): GlReq,
    Path((id, iid)): Path<(String, String)>,
) -> Result<Json<Value>, GlError> {
    read_merge_request(&shared, &viewer, (&id, &iid), |cx, pr| {
        let notes = view::notes(pr);
        let authors = notes.iter().filter_map(|note| match note {
            Note::Thread { comment, .. } => Some(comment.author.as_str()),
            Note::Comment(comment) => Some(comment.author.as_str()),
            Note::ReviewBody(review) => Some(review.author.as_str()),
            Note::System(_) => None,
        });
        let mut seen = BTreeSet::new();
        let users: Vec<Value> = std::iter::once(pr.author.as_str())
            .chain(authors)
            .filter(|login| seen.insert(*login))
            .map(|login| cx.user(login))
            .collect();
        Ok(Json(Value::Array(users)))
    })
}

/// `GET /projects/:id/merge_requests/:iid/reviewers`: each reviewer as
/// GitLab's API lists them, `{user, state, created_at}`
/// (<https://docs.gitlab.com/api/merge_requests/#get-single-merge-request-reviewers>),
/// the [listed reviewers](PullRequestRecord::listed_reviewers) each with
/// their [`reviewer_state`].
pub(crate) async fn list_reviewers(
    GlReq(shared, viewer): GlReq,
    Path((id, iid)): Path<(String, String)>,
) -> Result<Json<Value>, GlError> {
    read_merge_request(&shared, &viewer, (&id, &iid), |cx, pr| {
        let reviewers: Vec<Value> = pr
            .listed_reviewers()
            .into_iter()
            .map(|login| {
                json!({
                    "user": cx.user(login),
                    "state": reviewer_state(pr, login),
                    "created_at": view::time(&pr.created_at),
                })
            })
            .collect();
        Ok(Json(Value::Array(reviewers)))
    })
}

/// A reviewer's GitLab state (GitLab's reviewer states, merge request
/// !134766): `unreviewed` while asked and not answered (asked anew after
/// their latest review included, as GitLab's rereview resets the state),
/// else that of their latest submitted review (`requested_changes`,
/// `approved`, `reviewed`). GitLab's states carry no commit.
fn reviewer_state(pr: &PullRequestRecord, login: &str) -> &'static str {
    if pr.requested_reviewers.iter().any(|r| r == login) {
        return "unreviewed";
    }
    let latest = pr.reviews.iter().rfind(|r| {
        r.author == login && r.submitted_at.is_some() && r.state != ReviewStateSpec::Dismissed
    });
    match latest.map(|r| r.state) {
        Some(ReviewStateSpec::ChangesRequested) => "requested_changes",
        Some(ReviewStateSpec::Approved) => "approved",
        Some(ReviewStateSpec::Commented) => "reviewed",
        _ => "unreviewed",
    }
}
