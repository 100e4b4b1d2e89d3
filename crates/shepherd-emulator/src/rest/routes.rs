//! The REST routes, relative to the API root. Route templates are also the
//! request-count keys and fault targets (`METHOD /template`). The router is
//! built from a table that also lists each route's methods, so tests can
//! go through every route ([`route_table`]).

use std::sync::Arc;

use axum::routing::{delete, get, post, MethodRouter};
use axum::Router;

use super::{checks, collaborators, deletes, issues, meta, pulls, repos, review_requests, user};
use crate::shared::Shared;

/// The router and, beside it, every `METHOD /template` it serves.
struct Table {
    router: Router<Arc<Shared>>,
    routes: Vec<String>,
}

impl Table {
    /// Serves `handler` at `path` for `methods` (the methods `handler`
    /// answers: listed here so that the table names every route).
    fn route(mut self, methods: &[&str], path: &str, handler: MethodRouter<Arc<Shared>>) -> Table {
        self.router = self.router.route(path, handler);
        self.routes
            .extend(methods.iter().map(|method| format!("{method} {path}")));
        self
    }
}

fn table() -> Table {
    const REPO: &str = "/repos/{owner}/{repo}";
    let at = |path: &str| format!("{REPO}{path}");
    Table {
        router: Router::new(),
        routes: Vec::new(),
    }
    .route(&["GET"], "/", get(meta::root))
    .route(&["GET"], "/user", get(user::get_user))
    .route(&["GET"], "/rate_limit", get(user::rate_limit))
    .route(&["GET"], REPO, get(repos::get_repository))
    .route(
        &["GET"],
        &at("/collaborators/{username}/permission"),
        get(collaborators::get_permission),
    )
    .route(&["GET"], &at("/pulls"), get(pulls::list_pull_requests))
    .route(
        &["GET", "PATCH"],
        &at("/pulls/{number}"),
        get(pulls::get_pull_request).patch(pulls::patch_pull_request),
    )
    .route(
        &["GET", "POST", "DELETE"],
        &at("/pulls/{number}/requested_reviewers"),
        get(review_requests::list_requested_reviewers)
            .post(review_requests::change_requested_reviewers)
            .delete(review_requests::change_requested_reviewers),
    )
    .route(
        &["GET"],
        &at("/pulls/{number}/commits"),
        get(pulls::list_pull_request_commits),
    )
    .route(
        &["GET"],
        &at("/pulls/{number}/files"),
        get(pulls::list_pull_request_files),
    )
    .route(&["GET"], &at("/issues/{number}"), get(issues::get_issue))
    .route(&["GET"], &at("/labels"), get(repos::list_repository_labels))
    .route(
        &["GET"],
        &at("/labels/{name}"),
        get(repos::get_repository_label),
    )
    .route(&["GET"], &at("/commits/{ref}"), get(repos::get_commit))
    .route(&["GET"], &at("/branches/{branch}"), get(repos::get_branch))
    .route(
        &["GET", "POST"],
        &at("/pulls/{number}/comments"),
        get(pulls::list_review_comments).post(pulls::post_review_comment),
    )
    .route(
        &["GET", "DELETE"],
        &at("/pulls/comments/{comment_id}"),
        get(pulls::get_review_comment).delete(deletes::delete_review_comment),
    )
    .route(
        &["POST"],
        &at("/pulls/{number}/comments/{comment_id}/replies"),
        post(pulls::post_reply),
    )
    .route(
        &["GET", "POST"],
        &at("/pulls/{number}/reviews"),
        get(pulls::list_reviews).post(pulls::post_review),
    )
    .route(
        &["GET"],
        &at("/pulls/{number}/reviews/{review_id}"),
        get(pulls::get_review),
    )
    .route(
        &["GET"],
        &at("/pulls/{number}/reviews/{review_id}/comments"),
        get(pulls::list_review_comments_of_review),
    )
    .route(
        &["POST"],
        &at("/pulls/{number}/reviews/{review_id}/events"),
        post(pulls::submit_review),
    )
    .route(
        &["GET", "POST"],
        &at("/issues/{number}/comments"),
        get(issues::list_issue_comments).post(issues::post_issue_comment),
    )
    .route(
        &["GET", "DELETE"],
        &at("/issues/comments/{comment_id}"),
        get(issues::get_issue_comment).delete(deletes::delete_issue_comment),
    )
    .route(
        &["GET", "POST", "PUT"],
        &at("/issues/{number}/labels"),
        get(issues::list_labels)
            .post(issues::change_labels::<false>)
            .put(issues::change_labels::<true>),
    )
    .route(
        &["DELETE"],
        &at("/issues/{number}/labels/{name}"),
        delete(issues::remove_label),
    )
    .route(
        &["GET"],
        &at("/issues/{number}/events"),
        get(issues::list_issue_events),
    )
    .route(
        &["GET"],
        &at("/commits/{ref}/check-runs"),
        get(checks::list_check_runs),
    )
    .route(
        &["GET"],
        &at("/commits/{ref}/status"),
        get(checks::combined_status),
    )
    .route(
        &["GET"],
        &at("/commits/{ref}/statuses"),
        get(checks::list_statuses),
    )
    .route(
        &["GET", "POST"],
        &at("/statuses/{sha}"),
        get(checks::list_statuses).post(checks::create_status),
    )
    .route(
        &["GET"],
        &at("/check-suites/{check_suite_id}"),
        get(checks::get_check_suite),
    )
    .route(
        &["GET"],
        &at("/check-runs/{check_run_id}"),
        get(checks::get_check_run),
    )
    .route(
        &["GET"],
        &at("/branches/{branch}/protection/required_status_checks"),
        get(checks::required_status_checks),
    )
    .route(
        &["GET"],
        &at("/rules/branches/{branch}"),
        get(checks::branch_rules),
    )
    .route(
        &["GET"],
        &at("/actions/workflows"),
        get(meta::list_workflows),
    )
    .route(
        &["GET"],
        &at("/actions/workflows/{workflow_id}"),
        get(meta::get_workflow),
    )
    .route(
        &["GET"],
        &at("/actions/runs"),
        get(checks::list_workflow_runs),
    )
    .route(
        &["GET"],
        &at("/actions/runs/{run_id}"),
        get(checks::get_workflow_run),
    )
    .route(
        &["GET"],
        &at("/actions/runs/{run_id}/attempts/{attempt}"),
        get(checks::get_workflow_run_attempt),
    )
    .route(
        &["GET"],
        &at("/actions/runs/{run_id}/jobs"),
        get(checks::list_jobs),
    )
    .route(
        &["GET"],
        &at("/actions/jobs/{job_id}"),
        get(checks::get_job),
    )
    .route(
        &["GET"],
        &at("/actions/jobs/{job_id}/logs"),
        get(checks::get_job_logs),
    )
    .route(
        &["POST"],
        &at("/actions/runs/{run_id}/rerun"),
        post(checks::rerun_workflow_run),
    )
    .route(
        &["POST"],
        &at("/actions/runs/{run_id}/rerun-failed-jobs"),
        post(checks::rerun_failed_jobs),
    )
}

/// Every REST route.
pub(crate) fn routes() -> Router<Arc<Shared>> {
    table().router
}

/// Every REST route as `METHOD /template` (relative to the API root: also
/// served under `/api/v3`).
pub fn route_table() -> Vec<String> {
    table().routes
}
