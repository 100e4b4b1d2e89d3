//! The GitLab routes, under `/api/v4`, and GraphQL at `/api/graphql`. Route templates are also the
//! request-count keys and fault targets (`METHOD /api/v4/…`).

use std::sync::Arc;

use axum::routing::{get, post};
use axum::Router;

use super::{
    approvals, changes, deletes, discussions, graphql, members, merge_requests, pipelines,
    repository, statuses,
};
use crate::shared::Shared;

/// Every GitLab route.
pub(crate) fn routes() -> Router<Arc<Shared>> {
    const PROJECT: &str = "/api/v4/projects/{id}";
    const MR: &str = "/api/v4/projects/{id}/merge_requests/{iid}";
    let at = |path: &str| format!("{PROJECT}{path}");
    let mr = |path: &str| format!("{MR}{path}");
    Router::new()
        .route("/api/graphql", post(graphql::graphql))
        .route("/api/v4/user", get(merge_requests::get_user))
        .route(PROJECT, get(merge_requests::get_project))
        .route(&at("/members/all"), get(members::list_all_members))
        .route(
            &at("/merge_requests"),
            get(merge_requests::list_merge_requests),
        )
        .route(
            MR,
            get(merge_requests::get_merge_request).put(merge_requests::put_merge_request),
        )
        .route(
            &mr("/notes"),
            get(merge_requests::list_notes).post(merge_requests::post_note),
        )
        .route(
            &mr("/notes/{note_id}"),
            get(merge_requests::get_note).delete(deletes::delete_note),
        )
        .route(&mr("/draft_notes"), get(merge_requests::list_draft_notes))
        .route(&mr("/changes"), get(changes::get_changes))
        .route(&mr("/diffs"), get(changes::list_diffs))
        .route(&mr("/commits"), get(changes::list_commits))
        .route(&mr("/versions"), get(changes::list_versions))
        .route(&mr("/versions/{version_id}"), get(changes::get_version))
        .route(&mr("/participants"), get(approvals::list_participants))
        .route(&mr("/reviewers"), get(approvals::list_reviewers))
        .route(&mr("/approvals"), get(approvals::get_approvals))
        .route(&mr("/approve"), post(approvals::approve))
        .route(&mr("/unapprove"), post(approvals::unapprove))
        .route(
            &mr("/resource_label_events"),
            get(merge_requests::list_resource_label_events),
        )
        .route(
            &mr("/discussions"),
            get(discussions::list_discussions).post(discussions::post_discussion),
        )
        .route(
            &mr("/discussions/{discussion_id}"),
            get(discussions::get_discussion).put(discussions::put_discussion),
        )
        .route(
            &mr("/discussions/{discussion_id}/notes"),
            post(discussions::post_discussion_note),
        )
        .route(
            &mr("/discussions/{discussion_id}/notes/{note_id}"),
            get(discussions::get_discussion_note).delete(deletes::delete_discussion_note),
        )
        .route(
            &mr("/pipelines"),
            get(merge_requests::list_merge_request_pipelines),
        )
        .route(&at("/repository/compare"), get(repository::compare))
        .route(
            &at("/repository/commits/{sha}/statuses"),
            get(statuses::list_commit_statuses),
        )
        .route(&at("/pipelines"), get(pipelines::list_pipelines))
        .route(
            &at("/pipelines/{pipeline_id}"),
            get(pipelines::get_pipeline),
        )
        .route(
            &at("/pipelines/{pipeline_id}/retry"),
            post(pipelines::retry_pipeline),
        )
        .route(
            &at("/pipelines/{pipeline_id}/jobs"),
            get(pipelines::list_jobs),
        )
        .route(&at("/jobs/{job_id}"), get(pipelines::get_job))
        .route(&at("/jobs/{job_id}/retry"), post(pipelines::retry_job))
        .route(&at("/jobs/{job_id}/trace"), get(pipelines::get_trace))
}
