//! GitHub's REST API, the subset Shepherd uses: `GET /user`,
//! `GET /repos/{owner}/{repo}` and `GET /repos/{owner}/{repo}/pulls/{number}`.
//! Served at `/…` and, for Enterprise-style clients, at `/api/v3/…`.

use std::sync::Arc;

use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

use crate::auth::{self, AuthFailure, Viewer};
use crate::scenario::{Permission, PullRequestStatus, UserKind};
use crate::server::Shared;
use crate::state::{PullRequestRecord, RepositoryRecord, State as EmulatorState, UserRecord};

/// An error answered in GitHub's REST shape:
/// `{"message": …, "documentation_url": …, "status": "404"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ApiError {
    /// 401 without credentials.
    RequiresAuthentication,
    /// 401 with credentials that match no user.
    BadCredentials,
    /// 404, also for resources the user may not see.
    NotFound,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, message) = match self {
            ApiError::RequiresAuthentication => {
                (StatusCode::UNAUTHORIZED, "Requires authentication")
            }
            ApiError::BadCredentials => (StatusCode::UNAUTHORIZED, "Bad credentials"),
            ApiError::NotFound => (StatusCode::NOT_FOUND, "Not Found"),
        };
        let body = json!({
            "message": message,
            "documentation_url": "https://docs.github.com/rest",
            "status": status.as_u16().to_string(),
        });
        (status, Json(body)).into_response()
    }
}

/// The authenticated user of a REST request.
pub(crate) struct Authed(pub(crate) Viewer);

impl FromRequestParts<Arc<Shared>> for Authed {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        shared: &Arc<Shared>,
    ) -> Result<Self, Self::Rejection> {
        match auth::authenticate(&shared.read(), &parts.headers) {
            Ok(viewer) => Ok(Authed(viewer)),
            Err(AuthFailure::Missing) => Err(ApiError::RequiresAuthentication),
            Err(AuthFailure::Bad) => Err(ApiError::BadCredentials),
        }
    }
}

/// The REST routes, relative to the API root.
pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/user", get(get_user))
        .route("/repos/{owner}/{repo}", get(get_repository))
        .route(
            "/repos/{owner}/{repo}/pulls/{number}",
            get(get_pull_request),
        )
}

/// A 404 unless `owner/repo` is the repository and the viewer may see it.
fn visible_repository<'s>(
    state: &'s EmulatorState,
    viewer: &Viewer,
    owner: &str,
    repo: &str,
) -> Result<&'s RepositoryRecord, ApiError> {
    if state.is_repository(owner, repo) && viewer.permission > Permission::None {
        Ok(&state.repository)
    } else {
        Err(ApiError::NotFound)
    }
}

async fn get_user(State(shared): State<Arc<Shared>>, Authed(viewer): Authed) -> Response {
    let state = shared.read();
    match state.user(&viewer.login) {
        Some(user) => Json(user_json(user, &shared.base_url)).into_response(),
        None => ApiError::NotFound.into_response(),
    }
}

async fn get_repository(
    State(shared): State<Arc<Shared>>,
    Authed(viewer): Authed,
    Path((owner, repo)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let state = shared.read();
    let record = visible_repository(&state, &viewer, &owner, &repo)?;
    Ok(Json(repository_json(record, &viewer, &shared.base_url)))
}

async fn get_pull_request(
    State(shared): State<Arc<Shared>>,
    Authed(viewer): Authed,
    Path((owner, repo, number)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let state = shared.read();
    let record = visible_repository(&state, &viewer, &owner, &repo)?;
    let number: u64 = number.parse().map_err(|_| ApiError::NotFound)?;
    let pr = state.pull_request(number).ok_or(ApiError::NotFound)?;
    Ok(Json(pull_request_json(
        &state,
        record,
        pr,
        &shared.base_url,
    )))
}

/// REST logins of bots carry GitHub's `[bot]` suffix.
fn rest_login(user: &UserRecord) -> String {
    match user.kind {
        UserKind::Bot if !user.login.ends_with("[bot]") => format!("{}[bot]", user.login),
        _ => user.login.clone(),
    }
}

fn user_json(user: &UserRecord, api_url: &str) -> Value {
    let login = rest_login(user);
    let kind = match user.kind {
        UserKind::User => "User",
        UserKind::Bot => "Bot",
    };
    json!({
        "login": login,
        "id": user.database_id,
        "node_id": user.id,
        "type": kind,
        "site_admin": false,
        "url": format!("{api_url}/users/{login}"),
        "html_url": format!("{api_url}/{login}"),
    })
}

fn author_json(state: &EmulatorState, login: &str, api_url: &str) -> Value {
    state
        .user(login)
        .map_or(Value::Null, |user| user_json(user, api_url))
}

fn repository_json(repo: &RepositoryRecord, viewer: &Viewer, api_url: &str) -> Value {
    let owner = json!({ "login": repo.owner, "type": "Organization" });
    json!({
        "id": repo.database_id,
        "node_id": repo.id,
        "name": repo.name,
        "full_name": repo.full_name(),
        "private": true,
        "fork": false,
        "owner": owner,
        "html_url": repo.html_url,
        "url": format!("{api_url}/repos/{}", repo.full_name()),
        "clone_url": repo.git_url,
        "default_branch": repo.default_branch,
        "permissions": {
            "admin": viewer.permission >= Permission::Admin,
            "maintain": viewer.permission >= Permission::Admin,
            "push": viewer.permission >= Permission::Write,
            "triage": viewer.permission >= Permission::Write,
            "pull": viewer.permission >= Permission::Read,
        },
    })
}

fn pull_request_json(
    state: &EmulatorState,
    repo: &RepositoryRecord,
    pr: &PullRequestRecord,
    api_url: &str,
) -> Value {
    let full_name = repo.full_name();
    let base_repo = json!({
        "id": repo.database_id,
        "node_id": repo.id,
        "name": repo.name,
        "full_name": full_name,
        "private": true,
        "fork": false,
        "html_url": repo.html_url,
        "clone_url": repo.git_url,
        "default_branch": repo.default_branch,
        "owner": { "login": repo.owner },
    });
    // A fork PR's head lives in the author's copy of the repository. The
    // emulator keeps the head branch in the one bare repository (GitHub
    // also exposes it there as refs/pull/N/head).
    let (head_owner, head_repo) = if pr.fork {
        let head_full = format!("{}/{}", pr.author, repo.name);
        let head_repo = json!({
            "name": repo.name,
            "full_name": head_full,
            "private": true,
            "fork": true,
            "owner": { "login": pr.author },
            "clone_url": repo.git_url,
        });
        (pr.author.clone(), head_repo)
    } else {
        (repo.owner.clone(), base_repo.clone())
    };
    let merged = pr.status == PullRequestStatus::Merged;
    let state_word = match pr.status {
        PullRequestStatus::Open => "open",
        PullRequestStatus::Closed | PullRequestStatus::Merged => "closed",
    };
    let closed_at = (pr.status != PullRequestStatus::Open).then(|| pr.updated_at.clone());
    let review_comments: usize = pr.threads.iter().map(|t| t.comments.len()).sum();
    json!({
        "url": format!("{api_url}/repos/{full_name}/pulls/{}", pr.number),
        "id": pr.database_id,
        "node_id": pr.id,
        "html_url": pr.html_url,
        "number": pr.number,
        "state": state_word,
        "locked": false,
        "title": pr.title,
        "body": pr.body,
        "user": author_json(state, &pr.author, api_url),
        "created_at": pr.created_at,
        "updated_at": pr.updated_at,
        "closed_at": closed_at,
        "merged_at": if merged { closed_at.clone() } else { None },
        "draft": pr.draft,
        "merged": merged,
        "head": {
            "label": format!("{head_owner}:{}", pr.head_ref),
            "ref": pr.head_ref,
            "sha": pr.head_sha,
            "repo": head_repo,
        },
        "base": {
            "label": format!("{}:{}", repo.owner, pr.base_ref),
            "ref": pr.base_ref,
            "sha": pr.base_sha,
            "repo": base_repo,
        },
        "author_association": author_association(state, repo, &pr.author),
        "comments": pr.issue_comments.len(),
        "review_comments": review_comments,
        "commits": 1,
    })
}

/// How the PR's author relates to the repository, as GitHub words it.
fn author_association(state: &EmulatorState, repo: &RepositoryRecord, login: &str) -> &'static str {
    match state.user(login) {
        _ if login == repo.owner => "OWNER",
        Some(user) if user.permission >= Permission::Write => "COLLABORATOR",
        _ => "CONTRIBUTOR",
    }
}
