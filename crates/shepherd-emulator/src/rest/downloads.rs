//! Where GitHub's redirects for downloads lead: a job's log. On GitHub
//! `GET …/actions/jobs/{job_id}/logs` answers `302` to a short-lived
//! signed URL on another host that needs no token; here the URL is on
//! the emulator, under [`DOWNLOADS`], and needs no token either.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::job_log;
use crate::shared::Shared;

/// The root of the download URLs.
const DOWNLOADS: &str = "/_downloads";

/// The download URL of job `job_id`'s log.
pub(crate) fn job_log_download_url(base_url: &str, job_id: u64) -> String {
    format!("{base_url}{DOWNLOADS}/actions/jobs/{job_id}/logs")
}

/// The download routes (counted, and open to faults, as
/// `GET /_downloads/…`).
pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new().route(
        &format!("{DOWNLOADS}/actions/jobs/{{job_id}}/logs"),
        get(job_log_text),
    )
}

/// The log as plain text; 404 for a job with no log.
async fn job_log_text(State(shared): State<Arc<Shared>>, Path(job_id): Path<String>) -> Response {
    let state = shared.read();
    let log = job_id
        .parse()
        .ok()
        .and_then(|id| state.ci.check_run(id))
        .and_then(job_log::github_log);
    match log {
        Some(text) => ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response(),
        None => (StatusCode::NOT_FOUND, "Not Found").into_response(),
    }
}
