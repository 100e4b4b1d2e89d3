//! A scripted model server for tests: the real agent CLIs (Claude Code,
//! codex, Gemini CLI, opencode, Copilot CLI) are pointed at it on loopback
//! and hold their conversations with it instead of a model.
//!
//! - [`Script`]: what the model does, per conversation ([`Exchange`],
//!   matched on the request's user text) and per step (the number of tool
//!   results the request carries): tool calls, a final answer, or an HTTP
//!   failure ([`Failure`]: 401, 429 with `Retry-After`, 500, a hang, a
//!   malformed body).
//! - The recorder: every request's method, path, headers and body
//!   ([`RecordedRequest`]), so a test can assert what the CLI sent (its key,
//!   and that no forge token was among it).
//! - One module per API: [`anthropic`] (Messages, streaming and not),
//!   [`openai_responses`] (Responses, streaming, as codex uses it),
//!   [`openai_chat`] (Chat Completions) and [`gemini`] (generateContent).
//! - [`clis`]: the pinned CLIs, installed once into a cache outside the
//!   clone ([`clis::installed_cli`]).
//!
//! The server runs on its own thread and runtime, so sync and async tests
//! use it alike; dropping the [`ModelServer`] stops it (hanging requests
//! included).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

pub mod anthropic;
pub mod clis;
pub mod gemini;
pub mod openai_chat;
pub mod openai_responses;
mod script;
mod sse;

pub use script::{
    Conversation, Exchange, Failure, Match, Plan, Script, Step, TokenUsage, ToolCall,
};

use script::Reply;

/// Which API a request was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Api {
    /// Anthropic Messages (`/v1/messages`).
    Anthropic,
    /// OpenAI Responses (`/v1/responses`).
    OpenaiResponses,
    /// OpenAI Chat Completions (`/v1/chat/completions`).
    OpenaiChat,
    /// Gemini (`:generateContent`, `:streamGenerateContent`).
    Gemini,
}

/// One request the server got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    /// `POST`, `GET`, ...
    pub method: String,
    /// The path and query (`/v1/messages?beta=true`).
    pub path: String,
    /// Every header, names lower-case, in order.
    pub headers: Vec<(String, String)>,
    /// The body, as text.
    pub body: String,
    /// Which API it was for; `None` for paths the server does not know
    /// (answered 404).
    pub api: Option<Api>,
    /// The label of the exchange that answered it.
    pub exchange: Option<String>,
    /// Its step (the number of tool results it carried).
    pub step: usize,
    /// What it got: `tool:Read`, `text`, `structured`, `fail:429`, `hang`,
    /// `malformed`, `done`, `unmatched`, `not-found`, `count-tokens`.
    pub reply: String,
}

impl RecordedRequest {
    /// The value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Whether `needle` occurs in the path, any header value or the body.
    pub fn contains(&self, needle: &str) -> bool {
        self.path.contains(needle)
            || self.body.contains(needle)
            || self.headers.iter().any(|(_, v)| v.contains(needle))
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// Binding the loopback port or building the runtime failed.
    #[error("starting the model server")]
    Start(#[from] std::io::Error),
}

struct Shared {
    script: Script,
    requests: Mutex<Vec<RecordedRequest>>,
}

/// A running scripted model server on `127.0.0.1` (see the crate docs).
pub struct ModelServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for ModelServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl ModelServer {
    /// Starts a server answering with `script` on a free loopback port.
    pub fn start(script: Script) -> Result<Self, ServerError> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            script,
            requests: Mutex::new(Vec::new()),
        });
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let state = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("shepherd-model-server".to_owned())
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(listener) {
                        Ok(l) => l,
                        Err(e) => {
                            tracing::error!(error = %e, "model server: cannot listen");
                            return;
                        }
                    };
                    let app = axum::Router::new().fallback(handle).with_state(state);
                    tokio::select! {
                        served = axum::serve(listener, app) => {
                            if let Err(e) = served {
                                tracing::error!(error = %e, "model server stopped");
                            }
                        }
                        _ = stopped => {}
                    }
                });
                // Hanging requests are dropped with the runtime.
                runtime.shutdown_background();
            })?;
        Ok(ModelServer {
            addr,
            shared,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Its address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request so far, in the order they came.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared
            .requests
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default()
    }

    /// The requests that `needle` occurs in (path, headers or body).
    pub fn requests_containing(&self, needle: &str) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.contains(needle))
            .collect()
    }

    /// The requests answered by exchange `label`.
    pub fn requests_of(&self, label: &str) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.exchange.as_deref() == Some(label))
            .collect()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn api_of(method: &Method, path: &str) -> Option<Api> {
    if method != Method::POST {
        return None;
    }
    if path.ends_with("/messages") || path.ends_with("/messages/count_tokens") {
        Some(Api::Anthropic)
    } else if path.ends_with("/responses") {
        Some(Api::OpenaiResponses)
    } else if path.ends_with("/chat/completions") {
        Some(Api::OpenaiChat)
    } else if path.ends_with(":generateContent") || path.ends_with(":streamGenerateContent") {
        Some(Api::Gemini)
    } else {
        None
    }
}

/// What kind of reply a request got, for the record.
fn reply_kind(reply: &Reply) -> String {
    match reply {
        Reply::Done { .. } => "done".to_owned(),
        Reply::Step { step, .. } => match step {
            Step::Tool(ToolCall::Read { .. }) => "tool:read".to_owned(),
            Step::Tool(ToolCall::Edit { .. }) => "tool:edit".to_owned(),
            Step::Tool(ToolCall::Write { .. }) => "tool:write".to_owned(),
            Step::Tool(ToolCall::Shell { .. }) => "tool:shell".to_owned(),
            Step::Tool(ToolCall::Raw { name, .. }) => format!("tool:{name}"),
            Step::Text(_) => "text".to_owned(),
            Step::Structured(_) | Step::Dynamic(_) => "structured".to_owned(),
            Step::Fail(Failure::Status { status, .. }) => format!("fail:{status}"),
            Step::Fail(Failure::Hang) => "hang".to_owned(),
            Step::Fail(Failure::Malformed) => "malformed".to_owned(),
        },
    }
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri
        .path_and_query()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| uri.path().to_owned());
    let mut record = RecordedRequest {
        method: method.to_string(),
        path: path.clone(),
        headers: headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body: String::from_utf8_lossy(&body).into_owned(),
        api: api_of(&method, uri.path()),
        exchange: None,
        step: 0,
        reply: "not-found".to_owned(),
    };
    let Some(api) = record.api else {
        tracing::debug!(%method, %path, "model server: unknown path");
        push(&shared, record);
        return (StatusCode::NOT_FOUND, "not a model API path").into_response();
    };
    let json: serde_json::Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            record.reply = "bad-request".to_owned();
            push(&shared, record);
            return (StatusCode::BAD_REQUEST, format!("body is not JSON: {e}")).into_response();
        }
    };
    if uri.path().ends_with("/count_tokens") {
        record.reply = "count-tokens".to_owned();
        push(&shared, record);
        return axum::Json(serde_json::json!({"input_tokens": 100})).into_response();
    }
    let conv = match api {
        Api::Anthropic => anthropic::conversation(&json),
        Api::OpenaiResponses => openai_responses::conversation(&json),
        Api::OpenaiChat => openai_chat::conversation(&json),
        Api::Gemini => gemini::conversation(&json, uri.path()),
    };
    record.step = conv.tool_results;
    let Some((label, reply, delay)) = shared.script.reply(&conv) else {
        record.reply = "unmatched".to_owned();
        push(&shared, record);
        tracing::warn!(%path, "model server: no exchange matches the request");
        return error_response(
            api,
            &Failure::Status {
                status: 400,
                retry_after: None,
                message: "shepherd-model-server: no scripted exchange matches this request"
                    .to_owned(),
            },
        );
    };
    record.exchange = Some(label);
    record.reply = reply_kind(&reply);
    push(&shared, record);
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    if let Reply::Step {
        step: Step::Fail(failure),
        ..
    } = &reply
    {
        return match failure {
            Failure::Hang => std::future::pending().await,
            Failure::Malformed => malformed(conv.stream),
            status @ Failure::Status { .. } => error_response(api, status),
        };
    }
    match api {
        Api::Anthropic => anthropic::respond(&reply, &conv),
        Api::OpenaiResponses => openai_responses::respond(&reply, &conv),
        Api::OpenaiChat => openai_chat::respond(&reply, &conv),
        Api::Gemini => gemini::respond(&reply, &conv),
    }
}

fn push(shared: &Shared, record: RecordedRequest) {
    if let Ok(mut requests) = shared.requests.lock() {
        requests.push(record);
    }
}

fn malformed(stream: bool) -> Response {
    if stream {
        sse::raw("data: {\"type\": \"message_start\", \"message\": {oops\n\n".to_owned())
    } else {
        (
            StatusCode::OK,
            [("content-type", "application/json")],
            "{\"id\": \"broken\", \"content\": [",
        )
            .into_response()
    }
}

/// The API's error answer for a [`Failure::Status`].
fn error_response(api: Api, failure: &Failure) -> Response {
    let Failure::Status {
        status,
        retry_after,
        message,
    } = failure
    else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let code = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = match api {
        Api::Anthropic => anthropic::error_body(code, message),
        Api::OpenaiResponses | Api::OpenaiChat => openai_responses::error_body(code, message),
        Api::Gemini => gemini::error_body(code, message),
    };
    let mut response = (code, axum::Json(body)).into_response();
    if let Some(seconds) = retry_after {
        if let Ok(value) = seconds.to_string().parse() {
            response.headers_mut().insert("retry-after", value);
        }
    }
    response
}

/// The last `max` characters of `s`, trimmed.
pub(crate) fn tail(s: &str, max: usize) -> String {
    let count = s.chars().count();
    let kept: String = s.chars().skip(count.saturating_sub(max)).collect();
    kept.trim().to_owned()
}
