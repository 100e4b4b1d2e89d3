//! The REST routes, relative to the API root. Route templates are also the
//! request-count keys and fault targets (`METHOD /template`).

use std::sync::Arc;

use axum::routing::{delete, get, post};
use axum::Router;

use super::{checks, collaborators, deletes, issues, pulls};
use crate::shared::Shared;

/// Every REST route.
pub(crate) fn routes() -> Router<Arc<Shared>> {
    const REPO: &str = "/repos/{owner}/{repo}";
    let at = |path: &str| format!("{REPO}{path}");
    Router::new()
        .route("/user", get(pulls::get_user))
        .route(REPO, get(pulls::get_repository))
        .route(
            &at("/collaborators/{username}/permission"),
            get(collaborators::get_permission),
        )
        .route(&at("/pulls"), get(pulls::list_pull_requests))
        .route(
            &at("/pulls/{number}"),
            get(pulls::get_pull_request).patch(pulls::patch_pull_request),
        )
        .route(
            &at("/pulls/{number}/comments"),
            get(pulls::list_review_comments).post(pulls::post_review_comment),
        )
        .route(
            &at("/pulls/comments/{comment_id}"),
            get(pulls::get_review_comment).delete(deletes::delete_review_comment),
        )
        .route(
            &at("/pulls/{number}/comments/{comment_id}/replies"),
            post(pulls::post_reply),
        )
        .route(
            &at("/pulls/{number}/reviews"),
            get(pulls::list_reviews).post(pulls::post_review),
        )
        .route(
            &at("/pulls/{number}/reviews/{review_id}"),
            get(pulls::get_review),
        )
        .route(
            &at("/pulls/{number}/reviews/{review_id}/comments"),
            get(pulls::list_review_comments_of_review),
        )
        .route(
            &at("/pulls/{number}/reviews/{review_id}/events"),
            post(pulls::submit_review),
        )
        .route(
            &at("/issues/{number}/comments"),
            get(issues::list_issue_comments).post(issues::post_issue_comment),
        )
        .route(
            &at("/issues/comments/{comment_id}"),
            get(issues::get_issue_comment).delete(deletes::delete_issue_comment),
        )
        .route(
            &at("/issues/{number}/labels"),
            get(issues::list_labels).post(issues::add_labels),
        )
        .route(
            &at("/issues/{number}/labels/{name}"),
            delete(issues::remove_label),
        )
        .route(
            &at("/commits/{ref}/check-runs"),
            get(checks::list_check_runs),
        )
        .route(&at("/commits/{ref}/status"), get(checks::combined_status))
        .route(&at("/commits/{ref}/statuses"), get(checks::list_statuses))
        .route(&at("/statuses/{sha}"), post(checks::create_status))
        .route(
            &at("/check-runs/{check_run_id}"),
            get(checks::get_check_run),
        )
        .route(
            &at("/branches/{branch}/protection/required_status_checks"),
            get(checks::required_status_checks),
        )
        .route(&at("/rules/branches/{branch}"), get(checks::branch_rules))
        .route(&at("/actions/runs"), get(checks::list_workflow_runs))
        .route(&at("/actions/runs/{run_id}"), get(checks::get_workflow_run))
        .route(&at("/actions/runs/{run_id}/jobs"), get(checks::list_jobs))
        .route(
            &at("/actions/runs/{run_id}/rerun-failed-jobs"),
            post(checks::rerun_failed_jobs),
        )
}
