//! The control API under `/_emulator/`: state dump, reset, acting as a
//! user, faults, CI settings, waiting for idle, request counts.
//!
//! It needs no token from loopback; from any other address (when the
//! emulator listens on all interfaces) it needs the token of an `admin` user.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{ConnectInfo, Path, Query, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::auth;
use crate::automation::{EndpointAccess, FaultSpec};
use crate::ids::{self, NodeKind};
use crate::scenario::{EmulatedForge, Permission, Side};
use crate::shared::Shared;
use crate::state::{NewThread, WriteError};

/// A new thread of an acted review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActThread {
    /// File path.
    pub path: String,
    /// The (last) line; omit for a file-level thread.
    #[serde(default)]
    pub line: Option<u32>,
    /// First line of a multi-line thread.
    #[serde(default)]
    pub start_line: Option<u32>,
    /// `RIGHT` (default) or `LEFT`.
    #[serde(default)]
    pub side: Side,
    /// The comment.
    pub body: String,
}

impl ActThread {
    /// A one-line thread on the head side.
    pub fn new(path: impl Into<String>, line: u32, body: impl Into<String>) -> Self {
        ActThread {
            path: path.into(),
            line: Some(line),
            start_line: None,
            side: Side::Right,
            body: body.into(),
        }
    }
}

/// Something a user does (`POST /_emulator/act`, [`crate::RunningEmulator::act`]).
/// In JSON, `action` names the variant and `as` the user; `pr` defaults to
/// the scenario's pull request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum Act {
    /// A review with new threads. `event`: `COMMENT` (default), `APPROVE`,
    /// `REQUEST_CHANGES` or `PENDING` (a draft only its author sees). Lines
    /// outside the diff are accepted (GitHub refuses them).
    Review {
        /// The reviewer's login.
        #[serde(rename = "as")]
        user: String,
        /// The pull request number.
        #[serde(default)]
        pr: Option<u64>,
        /// The review event.
        #[serde(default)]
        event: Option<String>,
        /// The review body.
        #[serde(default)]
        body: Option<String>,
        /// New threads.
        #[serde(default)]
        threads: Vec<ActThread>,
    },
    /// A top-level (issue) comment.
    Comment {
        /// The author's login.
        #[serde(rename = "as")]
        user: String,
        /// The pull request number.
        #[serde(default)]
        pr: Option<u64>,
        /// The comment.
        body: String,
    },
    /// A reply in a thread, named by its node id or by one of its
    /// comments' database id. Lands in the user's pending review if any.
    Reply {
        /// The author's login.
        #[serde(rename = "as")]
        user: String,
        /// The thread's node id (`PRRT_…`) or GitLab discussion id.
        #[serde(default)]
        thread_id: Option<String>,
        /// A comment's database id, instead of `thread_id`.
        #[serde(default)]
        comment_id: Option<u64>,
        /// The reply.
        body: String,
    },
    /// Resolves (or, with `resolved: false`, unresolves) a thread.
    Resolve {
        /// Who resolves.
        #[serde(rename = "as")]
        user: String,
        /// The thread's node id (`PRRT_…`) or GitLab discussion id.
        thread_id: String,
        /// `true` (default) to resolve.
        #[serde(default)]
        resolved: Option<bool>,
    },
    /// Submits the user's pending review.
    SubmitReview {
        /// The review's author.
        #[serde(rename = "as")]
        user: String,
        /// The pull request number.
        #[serde(default)]
        pr: Option<u64>,
        /// `COMMENT`, `APPROVE` or `REQUEST_CHANGES`.
        event: String,
        /// A body to set.
        #[serde(default)]
        body: Option<String>,
    },
    /// Adds a label to the pull request (with `remove: true`, removes it)
    /// as the user: the forge records who did it and when (GitHub's
    /// `labeled` issue event, GitLab's resource label event).
    Label {
        /// Who labels.
        #[serde(rename = "as")]
        user: String,
        /// The pull request number.
        #[serde(default)]
        pr: Option<u64>,
        /// The label's name (created in the repository if new).
        label: String,
        /// Remove it instead.
        #[serde(default)]
        remove: bool,
    },
    /// A commit changing files on a branch, pushed with every push effect.
    Push {
        /// The pusher (and commit author).
        #[serde(rename = "as")]
        user: String,
        /// The branch; default: the pull request's head.
        #[serde(default)]
        branch: Option<String>,
        /// Path to new contents; `null` deletes the file.
        files: BTreeMap<String, Option<String>>,
        /// The commit message.
        #[serde(default)]
        message: Option<String>,
    },
}

/// A thread an act created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActThreadRef {
    /// Node id (`PRRT_…`).
    pub id: String,
    /// GitLab's discussion id (40 hex digits).
    #[serde(default)]
    pub discussion_id: String,
    /// Database id.
    pub database_id: u64,
    /// Database id of its first comment.
    pub comment_id: u64,
}

/// What an act created.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActOutcome {
    /// The review (review acts, and replies: the review they joined).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review_id: Option<u64>,
    /// Threads created.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub threads: Vec<ActThreadRef>,
    /// The comment created (comments and replies).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment_id: Option<u64>,
    /// The commit pushed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha: Option<String>,
}

/// Why an act failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActError {
    /// No user has this login.
    #[error("unknown user `{0}`")]
    UnknownUser(String),
    /// What GitHub would refuse: a missing object (404), a permission (403)
    /// or an invalid request (422).
    #[error("refused ({status}): {message}")]
    Refused {
        /// The HTTP status the API would answer.
        status: u16,
        /// Why.
        message: String,
    },
    /// The push could not be made.
    #[error("push failed: {0}")]
    Push(String),
}

impl From<WriteError> for ActError {
    fn from(err: WriteError) -> Self {
        let (status, message) = match err {
            WriteError::NotFound(m) => (404, if m.is_empty() { "Not Found".into() } else { m }),
            WriteError::Forbidden(m) => (403, m),
            WriteError::Unprocessable(m) => (422, m),
        };
        ActError::Refused { status, message }
    }
}

fn refused(status: u16, message: impl Into<String>) -> ActError {
    ActError::Refused {
        status,
        message: message.into(),
    }
}

/// Performs an act.
pub(crate) async fn act(shared: &Arc<Shared>, act: Act) -> Result<ActOutcome, ActError> {
    let user = match &act {
        Act::Review { user, .. }
        | Act::Comment { user, .. }
        | Act::Reply { user, .. }
        | Act::Resolve { user, .. }
        | Act::SubmitReview { user, .. }
        | Act::Label { user, .. }
        | Act::Push { user, .. } => user.clone(),
    };
    let (permission, public) = {
        let state = shared.read();
        let permission = state
            .user(&user)
            .map(|u| u.permission)
            .ok_or_else(|| ActError::UnknownUser(user.clone()))?;
        (
            permission,
            state.repository.visibility == crate::scenario::Visibility::Public,
        )
    };
    let may_write = permission >= Permission::Write;
    // The same rule as the API's (`Viewer::may_comment`): on a public
    // repository an account without a role may comment, not push or resolve.
    let commenting = matches!(
        act,
        Act::Review { .. } | Act::Comment { .. } | Act::Reply { .. } | Act::SubmitReview { .. }
    );
    let outsider_comment = commenting && public && permission == Permission::None;
    if !may_write && !outsider_comment {
        return Err(refused(
            403,
            "Resource not accessible by personal access token",
        ));
    }
    let default_pr = shared.scenario.pull_request.number;
    match act {
        Act::Review {
            pr,
            event,
            body,
            threads,
            ..
        } => {
            let number = pr.unwrap_or(default_pr);
            let state_spec = crate::rest::parse_event(Some(event.as_deref().unwrap_or("COMMENT")))
                .map_err(|m| refused(422, m))?;
            let threads = act_threads(shared, number, threads).await?;
            let created = shared.write().apply_review(
                number,
                &user,
                state_spec,
                body.as_deref().unwrap_or_default(),
                threads,
            )?;
            Ok(ActOutcome {
                review_id: Some(created.review_id),
                threads: created
                    .threads
                    .into_iter()
                    .map(|(thread, comment)| ActThreadRef {
                        id: ids::node_id(NodeKind::ReviewThread, thread),
                        discussion_id: ids::discussion_id(thread),
                        database_id: thread,
                        comment_id: comment,
                    })
                    .collect(),
                ..ActOutcome::default()
            })
        }
        Act::Comment { pr, body, .. } => {
            let number = pr.unwrap_or(default_pr);
            let id = shared.write().apply_issue_comment(number, &user, &body)?;
            crate::bots::on_comment(shared, number, &user, &body);
            Ok(ActOutcome {
                comment_id: Some(id),
                ..ActOutcome::default()
            })
        }
        Act::Reply {
            thread_id,
            comment_id,
            body,
            ..
        } => {
            let mut state = shared.write();
            let created = match (thread_id, comment_id) {
                (Some(thread), _) => {
                    let id = parse_thread_id(&state, &thread)?;
                    if state.forge == EmulatedForge::GitLab {
                        // GitLab posts a reply at once, never as a draft.
                        state.apply_direct_reply(id, &user, &body)?
                    } else {
                        state.apply_thread_reply(id, &user, &body, None)?
                    }
                }
                (None, Some(comment)) if state.forge == EmulatedForge::GitLab => {
                    let thread = state
                        .pull_requests
                        .iter()
                        .find_map(|pr| pr.find_comment(comment).map(|(t, _)| &pr.threads[t]))
                        .map(|t| t.database_id)
                        .ok_or_else(|| refused(404, "Not Found"))?;
                    state.apply_direct_reply(thread, &user, &body)?
                }
                (None, Some(comment)) => {
                    let number = state
                        .pull_requests
                        .iter()
                        .find(|pr| pr.find_comment(comment).is_some())
                        .map(|pr| pr.number)
                        .ok_or_else(|| refused(404, "Not Found"))?;
                    state.apply_reply_to_comment(number, &user, comment, &body)?
                }
                (None, None) => return Err(refused(422, "reply needs thread_id or comment_id")),
            };
            Ok(ActOutcome {
                review_id: Some(created.review_id),
                comment_id: Some(created.comment_id),
                ..ActOutcome::default()
            })
        }
        Act::Resolve {
            thread_id,
            resolved,
            ..
        } => {
            let mut state = shared.write();
            let id = parse_thread_id(&state, &thread_id)?;
            let resolve = resolved.unwrap_or(true);
            if state.forge == EmulatedForge::GitLab {
                state.apply_discussion_resolve(id, &user, may_write, resolve)?;
            } else {
                state.apply_resolve(id, &user, may_write, resolve)?;
            }
            Ok(ActOutcome::default())
        }
        Act::SubmitReview {
            pr, event, body, ..
        } => {
            let number = pr.unwrap_or(default_pr);
            let event = crate::rest::parse_event(Some(&event)).map_err(|m| refused(422, m))?;
            let mut state = shared.write();
            let review_id = state
                .pull_request(number)
                .and_then(|p| p.pending_review_of(&user))
                .ok_or_else(|| refused(422, format!("`{user}` has no pending review")))?;
            state.apply_submit_review(number, &user, review_id, event, body.as_deref())?;
            Ok(ActOutcome {
                review_id: Some(review_id),
                ..ActOutcome::default()
            })
        }
        Act::Label {
            pr, label, remove, ..
        } => {
            let number = pr.unwrap_or(default_pr);
            let mut state = shared.write();
            if remove {
                state.apply_remove_label(number, &user, &label)?;
            } else {
                state.apply_add_labels(number, &user, &[label])?;
            }
            Ok(ActOutcome::default())
        }
        Act::Push {
            branch,
            files,
            message,
            ..
        } => {
            let branch = branch.unwrap_or_else(|| shared.scenario.pull_request.head.clone());
            if files.is_empty() {
                return Err(refused(422, "a push needs at least one file"));
            }
            for path in files.keys() {
                crate::scenario::check_path(path)
                    .map_err(|reason| refused(422, format!("path `{path}` {reason}")))?;
            }
            let changes = files
                .into_iter()
                .map(|(path, contents)| (path, contents.map(String::into_bytes)))
                .collect();
            let commit = crate::push::FileCommit {
                author: user.clone(),
                branch,
                changes,
                message: message.unwrap_or_else(|| "Update files".to_owned()),
            };
            let sha = crate::push::push_files(shared, commit)
                .await
                .map_err(|err| match err {
                    crate::push::ActPushError::NoBranch(b) => {
                        refused(404, format!("no branch `{b}`"))
                    }
                    other => ActError::Push(other.to_string()),
                })?;
            Ok(ActOutcome {
                sha: Some(sha),
                ..ActOutcome::default()
            })
        }
    }
}

/// A thread named by its node id (`PRRT_…`) or its GitLab discussion id.
fn parse_thread_id(state: &crate::state::State, id: &str) -> Result<u64, ActError> {
    if let Some((NodeKind::ReviewThread, database_id)) = ids::parse_node_id(id) {
        return Ok(database_id);
    }
    state
        .pull_requests
        .iter()
        .flat_map(|pr| &pr.threads)
        .find(|t| t.discussion_id == id)
        .map(|t| t.database_id)
        .ok_or_else(|| refused(404, format!("no thread `{id}`")))
}

/// New threads with their `diffHunk`: from the PR's diff, else a one-line
/// hunk of the file at the head (act is lenient where GitHub is not).
async fn act_threads(
    shared: &Arc<Shared>,
    number: u64,
    threads: Vec<ActThread>,
) -> Result<Vec<NewThread>, ActError> {
    let (head, git_dir, hunks): (String, _, Vec<Option<String>>) = {
        let state = shared.read();
        let pr = state
            .pull_request(number)
            .ok_or_else(|| refused(404, "Not Found"))?;
        let hunks = threads
            .iter()
            .map(|t| t.line.and_then(|line| pr.hunk_for(&t.path, line, t.side)))
            .collect();
        (pr.head_sha.clone(), state.repository.git_dir.clone(), hunks)
    };
    let mut out = Vec::new();
    for (thread, hunk) in threads.into_iter().zip(hunks) {
        if thread.start_line.is_some() && thread.line.is_none() {
            return Err(refused(422, "start_line needs line"));
        }
        if let (Some(start), Some(line)) = (thread.start_line, thread.line) {
            if start >= line {
                return Err(refused(422, "start_line must precede line"));
            }
        }
        let diff_hunk = match (hunk, thread.line) {
            (Some(hunk), _) => hunk,
            (None, None) => String::new(),
            (None, Some(line)) => {
                let (git_env, git_dir, head, path) = (
                    shared.git.clone(),
                    git_dir.clone(),
                    head.clone(),
                    thread.path.clone(),
                );
                let text = tokio::task::spawn_blocking(move || {
                    crate::git::show_file(&git_env, &git_dir, &head, &path)
                })
                .await
                .ok()
                .flatten()
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                .unwrap_or_default();
                crate::hunk::one_line_hunk(&text, line)
            }
        };
        out.push(NewThread {
            path: thread.path,
            line: thread.line,
            start_line: thread.start_line,
            side: thread.side,
            body: thread.body,
            diff_hunk,
        });
    }
    Ok(out)
}

/// The control routes, guarded: loopback, or an admin token.
pub(crate) fn routes(shared: Arc<Shared>) -> Router<Arc<Shared>> {
    Router::new()
        .route("/_emulator/state", get(get_state))
        .route("/_emulator/reset", post(post_reset))
        .route("/_emulator/act", post(post_act))
        .route(
            "/_emulator/faults",
            get(get_faults).post(post_fault).delete(delete_faults),
        )
        .route("/_emulator/faults/{id}", delete(delete_fault))
        .route("/_emulator/ci", post(post_ci))
        .route("/_emulator/ci/run", post(post_ci_run))
        .route("/_emulator/wait-idle", get(wait_idle))
        .route("/_emulator/requests", get(get_requests))
        .route("/_emulator/requests/reset", post(post_requests_reset))
        .route_layer(middleware::from_fn_with_state(shared, guard))
}

/// Loopback callers need no token; others need an admin's.
async fn guard(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let remote = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let loopback = remote.is_none_or(|ip| ip.is_loopback());
    if !loopback {
        let admin = auth::authenticate(&shared.read(), request.headers())
            .is_ok_and(|viewer| viewer.permission == Permission::Admin);
        if !admin {
            return control_error(
                StatusCode::FORBIDDEN,
                "the control API needs loopback or an admin token",
            );
        }
    }
    next.run(request).await
}

fn control_error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({ "message": message }))).into_response()
}

async fn get_state(State(shared): State<Arc<Shared>>) -> Json<Value> {
    Json(state_json(&shared))
}

/// The whole state, with the URLs a client needs, the faults and the
/// number of pending background tasks.
pub(crate) fn state_json(shared: &Shared) -> Value {
    let state = shared.read();
    let mut value = serde_json::to_value(&*state).unwrap_or_else(|err| {
        // The state holds only strings, numbers and enums: this cannot fail.
        json!({ "error": err.to_string() })
    });
    drop(state);
    if let Some(object) = value.as_object_mut() {
        let urls = match shared.scenario.forge {
            EmulatedForge::GitHub => json!({
                "api": shared.base_url,
                "graphql": format!("{}/graphql", shared.base_url),
                "enterprise_api": format!("{}/api/v3", shared.base_url),
                "enterprise_graphql": format!("{}/api/graphql", shared.base_url),
            }),
            EmulatedForge::GitLab => json!({
                "api": format!("{}/api/v4", shared.base_url),
                "web": shared.base_url,
            }),
        };
        object.insert("urls".to_owned(), urls);
        object.insert("faults".to_owned(), shared.faults_json());
        object.insert(
            "duplicate_resolve_notes".to_owned(),
            json!(shared.read().duplicate_resolve_notes()),
        );
        object.insert("pending_tasks".to_owned(), json!(shared.tasks.pending()));
    }
    value
}

async fn post_reset(State(shared): State<Arc<Shared>>) -> Response {
    match shared.reset().await {
        Ok(()) => Json(json!({ "reset": true })).into_response(),
        Err(err) => control_error(StatusCode::INTERNAL_SERVER_ERROR, &err.to_string()),
    }
}

async fn post_act(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let act: Act = match serde_json::from_slice(&body) {
        Ok(act) => act,
        Err(err) => return control_error(StatusCode::BAD_REQUEST, &err.to_string()),
    };
    match self::act(&shared, act).await {
        Ok(outcome) => (StatusCode::CREATED, Json(outcome)).into_response(),
        Err(err) => {
            let status = match &err {
                ActError::UnknownUser(_) => StatusCode::NOT_FOUND,
                ActError::Refused { status, .. } => {
                    StatusCode::from_u16(*status).unwrap_or(StatusCode::BAD_REQUEST)
                }
                ActError::Push(_) => StatusCode::INTERNAL_SERVER_ERROR,
            };
            control_error(status, &err.to_string())
        }
    }
}

async fn get_faults(State(shared): State<Arc<Shared>>) -> Json<Value> {
    Json(shared.faults_json())
}

async fn post_fault(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let spec: FaultSpec = match serde_json::from_slice(&body) {
        Ok(spec) => spec,
        Err(err) => return control_error(StatusCode::BAD_REQUEST, &err.to_string()),
    };
    match shared.add_fault(spec) {
        Ok(id) => (StatusCode::CREATED, Json(json!({ "id": id }))).into_response(),
        Err(message) => control_error(StatusCode::UNPROCESSABLE_ENTITY, &message),
    }
}

async fn delete_faults(State(shared): State<Arc<Shared>>) -> StatusCode {
    shared.clear_faults();
    StatusCode::NO_CONTENT
}

async fn delete_fault(State(shared): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    match id.parse::<u64>() {
        Ok(id) if shared.remove_fault(id) => StatusCode::NO_CONTENT.into_response(),
        _ => control_error(StatusCode::NOT_FOUND, "no such fault"),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CiSettings {
    #[serde(default)]
    protection: Option<EndpointAccess>,
    #[serde(default)]
    rulesets: Option<EndpointAccess>,
}

/// `POST /_emulator/ci`: how the required-checks endpoints answer.
async fn post_ci(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let settings: CiSettings = match serde_json::from_slice(&body) {
        Ok(settings) => settings,
        Err(err) => return control_error(StatusCode::BAD_REQUEST, &err.to_string()),
    };
    let mut state = shared.write();
    if let Some(protection) = settings.protection {
        state.ci_mut().protection = protection;
    }
    if let Some(rulesets) = settings.rulesets {
        state.ci_mut().rulesets = rulesets;
    }
    Json(json!({ "protection": state.ci.protection, "rulesets": state.ci.rulesets }))
        .into_response()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CiRun {
    #[serde(rename = "ref")]
    reference: String,
}

/// `POST /_emulator/ci/run` with `{"ref": SHA or branch}`: runs every check
/// on that commit.
async fn post_ci_run(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let run: CiRun = match serde_json::from_slice(&body) {
        Ok(run) => run,
        Err(err) => return control_error(StatusCode::BAD_REQUEST, &err.to_string()),
    };
    let (git_env, git_dir) = (shared.git.clone(), shared.read().repository.git_dir.clone());
    let reference = run.reference.clone();
    let sha = tokio::task::spawn_blocking(move || {
        crate::git::resolve_commit(&git_env, &git_dir, &reference)
    })
    .await
    .ok()
    .flatten();
    let Some(sha) = sha else {
        return control_error(StatusCode::NOT_FOUND, "no such commit");
    };
    let branch = if run.reference.len() == 40 {
        String::new()
    } else {
        run.reference.clone()
    };
    let run_id = crate::ci::start_run(&shared, &sha, &branch, "push", "emulator");
    (
        StatusCode::CREATED,
        Json(json!({ "sha": sha, "run_id": run_id })),
    )
        .into_response()
}

/// `GET /_emulator/wait-idle?timeout_ms=N` (default 30 s): 200 when no CI
/// job or bot delay is pending, 408 when the time ran out.
async fn wait_idle(
    State(shared): State<Arc<Shared>>,
    Query(params): Query<BTreeMap<String, String>>,
) -> Response {
    let timeout = params
        .get("timeout_ms")
        .and_then(|t| t.parse().ok())
        .map_or(Duration::from_secs(30), Duration::from_millis);
    if shared.tasks.wait_idle(timeout).await {
        Json(json!({ "idle": true })).into_response()
    } else {
        (
            StatusCode::REQUEST_TIMEOUT,
            Json(json!({ "idle": false, "pending": shared.tasks.pending() })),
        )
            .into_response()
    }
}

async fn get_requests(State(shared): State<Arc<Shared>>) -> Json<Value> {
    Json(json!(shared.counts()))
}

async fn post_requests_reset(State(shared): State<Arc<Shared>>) -> StatusCode {
    shared.reset_counts();
    StatusCode::NO_CONTENT
}
