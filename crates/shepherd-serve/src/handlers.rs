//! Routes: pages, live updates, and the approval actions.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Form, FromRequest, FromRequestParts, Path, Query, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;
use futures::Stream;
use serde::Deserialize;
use shepherd_core::Decision;
use shepherd_engine::{ApprovalChange, RunStatus};

use crate::error::ServeError;
use crate::state::AppState;
use crate::{auth, pages, view};

pub(crate) fn router(app: Arc<AppState>) -> Router {
    Router::new()
        .route("/", get(runs_page))
        .route("/events", get(list_events))
        .route("/runs/{id}", get(run_page))
        .route("/runs/{id}/live", get(run_live))
        .route("/runs/{id}/events", get(run_events))
        .route("/runs/{id}/files/{*path}", get(file_page))
        .route("/runs/{id}/approve", post(approve))
        .route("/runs/{id}/reject", post(reject))
        .route("/runs/{id}/resume", post(resume))
        .route("/assets/app.js", get(js))
        .route("/assets/app.css", get(css))
        .fallback(|| async { ServeError::NotFound.into_response() })
        .layer(middleware::from_fn_with_state(app.clone(), auth::guard))
        .layer(middleware::from_fn(auth::headers))
        .with_state(app)
}

impl IntoResponse for ServeError {
    fn into_response(self) -> Response {
        let status = match &self {
            ServeError::NotFound => StatusCode::NOT_FOUND,
            ServeError::Engine(_) => StatusCode::CONFLICT,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        (status, Html(pages::error_page(status, &self.to_string()))).into_response()
    }
}

async fn blocking<T, F>(f: F) -> Result<T, ServeError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ServeError> + Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ServeError::Task(e.to_string()))?
}

#[derive(Debug, Default, Deserialize)]
struct ListQuery {
    repo: Option<String>,
    status: Option<String>,
}

async fn runs_page(
    State(app): State<Arc<AppState>>,
    Query(q): Query<ListQuery>,
) -> Result<Html<String>, ServeError> {
    let state = app.state.clone();
    let (repo, status) = (q.repo.clone(), q.status.clone());
    let rows = blocking(move || view::runs(&state, repo.as_deref(), status.as_deref())).await?;
    Ok(Html(pages::runs_page(
        &rows,
        q.repo.as_deref(),
        q.status.as_deref(),
        app.state.root(),
    )))
}

fn valid_run_id(id: &str) -> Result<(), ServeError> {
    shepherd_engine::store::validate_run_id(id).map_err(|_| ServeError::NotFound)
}

async fn load_run(app: &AppState, id: &str) -> Result<view::RunView, ServeError> {
    valid_run_id(id)?;
    let state = app.state.clone();
    let id = id.to_owned();
    blocking(move || view::run(&state, &id)).await
}

async fn run_page(
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Html<String>, ServeError> {
    let run = load_run(&app, &id).await?;
    Ok(Html(pages::run_page(&run, app.secret.as_str(), None)))
}

async fn run_live(
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Html<String>, ServeError> {
    let run = load_run(&app, &id).await?;
    Ok(Html(
        pages::run_live(&run, app.secret.as_str()).into_string(),
    ))
}

async fn file_page(
    State(app): State<Arc<AppState>>,
    Path((id, path)): Path<(String, String)>,
) -> Result<Html<String>, ServeError> {
    valid_run_id(&id)?;
    let state = app.state.clone();
    let (run, rel) = (id.clone(), path.clone());
    let text = blocking(move || view::artifact(&state, &run, &rel)).await?;
    Ok(Html(pages::file_page(&id, &path, &text)))
}

/// A stream of `change` events, one whenever the page's fingerprint
/// changes (checked twice a second), so a page can fetch its live part.
fn changes(
    app: Arc<AppState>,
    run: Option<String>,
) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    futures::stream::unfold((app, run, String::new()), |(app, run, last)| async move {
        loop {
            let state = app.state.clone();
            let id = run.clone();
            let now = blocking(move || view::version(&state, id.as_deref()))
                .await
                .unwrap_or_default();
            if now != last {
                let event = SseEvent::default().event("change").data(now.clone());
                return Some((Ok(event), (app, run, now)));
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    })
}

async fn list_events(State(app): State<Arc<AppState>>) -> impl IntoResponse {
    Sse::new(changes(app, None)).keep_alive(KeepAlive::default())
}

async fn run_events(
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<impl IntoResponse, ServeError> {
    valid_run_id(&id)?;
    Ok(Sse::new(changes(app, Some(id))).keep_alive(KeepAlive::default()))
}

async fn js() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        include_str!("assets/app.js"),
    )
}

async fn css() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        include_str!("assets/app.css"),
    )
}

type Fields = Vec<(String, String)>;

fn field<'a>(fields: &'a Fields, name: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn csrf_ok(app: &AppState, fields: &Fields) -> bool {
    field(fields, "csrf").is_some_and(|v| app.secret.matches(v))
}

/// A form the dashboard posts about run `id` (approve, reject, resume),
/// its CSRF secret checked: a form without this start's secret is
/// answered 403 before any handler runs.
struct RunForm {
    app: Arc<AppState>,
    id: String,
    fields: Fields,
}

impl FromRequest<Arc<AppState>> for RunForm {
    type Rejection = Response;

    async fn from_request(req: Request, app: &Arc<AppState>) -> Result<Self, Response> {
        let (mut parts, body) = req.into_parts();
        let Path(id) = Path::<String>::from_request_parts(&mut parts, app)
            .await
            .map_err(IntoResponse::into_response)?;
        let Form(fields) = Form::<Fields>::from_request(Request::from_parts(parts, body), app)
            .await
            .map_err(IntoResponse::into_response)?;
        if !csrf_ok(app, &fields) {
            return Err(auth::forbidden(
                "the form does not carry this start's secret",
            ));
        }
        Ok(RunForm {
            app: app.clone(),
            id,
            fields,
        })
    }
}

fn parse_decision(word: &str) -> Option<Decision> {
    serde_json::from_value(serde_json::Value::String(word.trim().to_owned())).ok()
}

/// The approver's changes, from the approval form: per row `i`, `item-i`,
/// `decision-i` and `reply-i`, with the values the page showed in
/// `orig-decision-i` and `orig-reply-i`; a row changes what differs.
fn changes_from(fields: &Fields) -> Result<Vec<ApprovalChange>, String> {
    let mut changes = Vec::new();
    for (k, item) in fields {
        let Some(i) = k.strip_prefix("item-") else {
            continue;
        };
        let get = |name: &str| field(fields, &format!("{name}-{i}")).unwrap_or("");
        let decision = match get("decision") {
            "" => None,
            w => Some(parse_decision(w).ok_or_else(|| format!("`{w}` is not a decision"))?),
        };
        let orig = parse_decision(get("orig-decision"));
        let decision = decision.filter(|d| Some(*d) != orig);
        let reply = get("reply").replace("\r\n", "\n");
        let orig_reply = get("orig-reply").replace("\r\n", "\n");
        let reply = (reply.trim() != orig_reply.trim() && !reply.trim().is_empty())
            .then(|| reply.trim().to_owned());
        if decision.is_some() || reply.is_some() {
            changes.push(ApprovalChange {
                item_id: item.clone(),
                decision,
                reply,
            });
        }
    }
    Ok(changes)
}

/// The run page again, with `message` at its top (a refused action).
async fn with_message(app: &AppState, id: &str, status: StatusCode, message: String) -> Response {
    match load_run(app, id).await {
        Ok(run) => (
            status,
            Html(pages::run_page(&run, app.secret.as_str(), Some(&message))),
        )
            .into_response(),
        Err(e) => e.into_response(),
    }
}

async fn paused(app: &AppState, id: &str) -> Result<(), Response> {
    let run = load_run(app, id)
        .await
        .map_err(IntoResponse::into_response)?;
    if run.status == RunStatus::Paused {
        Ok(())
    } else {
        let message = format!("run {id} is {}, not paused: nothing to do", run.status);
        Err(with_message(app, id, StatusCode::CONFLICT, message).await)
    }
}

/// Starts resuming run `id` (the [`crate::Resumer`] may wait a moment to
/// see the resume get going, so off the async workers).
async fn start_resume(app: &AppState, id: &str) -> Result<(), String> {
    let resumer = app.resumer.clone();
    let run = id.to_owned();
    tokio::task::spawn_blocking(move || resumer.resume(&run))
        .await
        .map_err(|e| e.to_string())?
}

async fn approve(RunForm { app, id, fields }: RunForm) -> Response {
    if let Err(r) = paused(&app, &id).await {
        return r;
    }
    let changes = match changes_from(&fields) {
        Ok(c) => c,
        Err(e) => return with_message(&app, &id, StatusCode::BAD_REQUEST, e).await,
    };
    let state = app.state.clone();
    let (run, approver) = (id.clone(), app.approver.clone());
    let approved = blocking(move || {
        Ok(shepherd_engine::approve_run(
            &state, &run, &changes, &approver,
        )?)
    })
    .await;
    match approved {
        Ok(n) => tracing::info!(run = %id, approved = n, "approved from the dashboard"),
        Err(e) => return with_message(&app, &id, StatusCode::CONFLICT, e.to_string()).await,
    }
    if field(&fields, "action") == Some("approve-resume") {
        if let Err(e) = start_resume(&app, &id).await {
            let message = format!("approved, but the resume did not start: {e}");
            return with_message(&app, &id, StatusCode::INTERNAL_SERVER_ERROR, message).await;
        }
    }
    Redirect::to(&format!("/runs/{id}")).into_response()
}

async fn reject(RunForm { app, id, .. }: RunForm) -> Response {
    if let Err(r) = paused(&app, &id).await {
        return r;
    }
    let state = app.state.clone();
    let (run, approver) = (id.clone(), app.approver.clone());
    match blocking(move || Ok(shepherd_engine::reject_run(&state, &run, &approver)?)).await {
        Ok(_) => Redirect::to(&format!("/runs/{id}")).into_response(),
        Err(e) => with_message(&app, &id, StatusCode::CONFLICT, e.to_string()).await,
    }
}

async fn resume(RunForm { app, id, .. }: RunForm) -> Response {
    let run = match load_run(&app, &id).await {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    if !run.resumable() {
        let message = format!("run {id} is {}: it cannot be resumed", run.status);
        return with_message(&app, &id, StatusCode::CONFLICT, message).await;
    }
    match start_resume(&app, &id).await {
        Ok(()) => Redirect::to(&format!("/runs/{id}")).into_response(),
        Err(e) => {
            let message = format!("the resume did not start: {e}");
            with_message(&app, &id, StatusCode::INTERNAL_SERVER_ERROR, message).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(pairs: &[(&str, &str)]) -> Fields {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn only_what_differs_is_a_change() {
        let fields = f(&[
            ("item-0", "A"),
            ("decision-0", "needs-human"),
            ("orig-decision-0", "needs-human"),
            ("reply-0", "same\r\n"),
            ("orig-reply-0", "same"),
            ("item-1", "B"),
            ("decision-1", "invalid"),
            ("orig-decision-1", "question"),
            ("reply-1", "It does not apply."),
            ("orig-reply-1", "drafted"),
            ("item-2", "C"),
            ("decision-2", "question"),
            ("orig-decision-2", "question"),
            ("reply-2", "edited"),
            ("orig-reply-2", "drafted"),
        ]);
        let changes = changes_from(&fields).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            changes,
            vec![
                ApprovalChange {
                    item_id: "B".into(),
                    decision: Some(Decision::Invalid),
                    reply: Some("It does not apply.".into()),
                },
                ApprovalChange {
                    item_id: "C".into(),
                    decision: None,
                    reply: Some("edited".into()),
                },
            ]
        );
    }

    #[test]
    fn an_unknown_decision_is_refused() {
        let fields = f(&[("item-0", "A"), ("decision-0", "merge-it")]);
        assert!(changes_from(&fields).is_err());
    }
}
