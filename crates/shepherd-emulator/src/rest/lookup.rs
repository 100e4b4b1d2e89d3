//! Look-ups in the repository's git data that several REST handlers share:
//! a ref or SHA to a commit, and commits' details.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::http::StatusCode;

use super::common::{visible_repository, ApiError};
use crate::auth::Viewer;
use crate::git::{self, CommitDetail};
use crate::shared::Shared;

/// The commit `reference` names in repository `owner/repo`, which the
/// viewer must see (404 otherwise): the path `(owner, repo, reference)` of
/// the `commits/{ref}/…` routes.
pub(crate) async fn visible_commit(
    shared: &Arc<Shared>,
    viewer: &Viewer,
    (owner, repo, reference): &(String, String, String),
) -> Result<String, ApiError> {
    visible_repository(&shared.read(), viewer, owner, repo)?;
    resolve_ref(shared, reference).await
}

/// The commit `reference` names (a SHA, a branch or a tag); 422 as on
/// GitHub when there is none.
pub(crate) async fn resolve_ref(shared: &Arc<Shared>, reference: &str) -> Result<String, ApiError> {
    let full_sha = reference.len() == 40 && reference.bytes().all(|b| b.is_ascii_hexdigit());
    if full_sha {
        let sha = reference.to_ascii_lowercase();
        let known = {
            let state = shared.read();
            state
                .pull_requests
                .iter()
                .any(|pr| pr.commits.contains(&sha))
                || state.ci.check_runs.iter().any(|r| r.head_sha == sha)
                || state.ci.statuses.iter().any(|s| s.sha == sha)
        };
        if known {
            return Ok(sha);
        }
    }
    let (git_env, git_dir) = (shared.git.clone(), shared.read().repository.git_dir.clone());
    let reference_owned = reference.to_owned();
    let resolved = tokio::task::spawn_blocking(move || {
        git::resolve_commit(&git_env, &git_dir, &reference_owned)
    })
    .await
    .ok()
    .flatten();
    resolved.ok_or_else(|| {
        ApiError::Message(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("No commit found for SHA: {reference}"),
        )
    })
}

/// The details of `shas` (each a full SHA of the repository).
pub(crate) async fn commit_details(
    shared: &Arc<Shared>,
    shas: Vec<String>,
) -> BTreeMap<String, CommitDetail> {
    let (git_env, git_dir) = (shared.git.clone(), shared.read().repository.git_dir.clone());
    tokio::task::spawn_blocking(move || {
        shas.into_iter()
            .filter_map(|sha| git::commit_detail(&git_env, &git_dir, &sha).map(|d| (sha, d)))
            .collect()
    })
    .await
    .unwrap_or_default()
}
