//! A tiny scripted HTTP responder on 127.0.0.1:0, for transport behaviour the
//! emulator cannot script (yet): each request gets the next scripted answer.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Router;

/// One scripted answer.
#[derive(Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
}

impl Reply {
    pub fn json(status: u16, body: serde_json::Value) -> Self {
        Reply {
            status,
            headers: vec![("content-type", "application/json".into())],
            body: body.to_string(),
        }
    }

    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }
}

/// What the responder saw of one request.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: Method,
    pub uri: Uri,
    pub headers: HeaderMap,
    pub body: Bytes,
    pub at: Instant,
}

#[derive(Default)]
struct State {
    script: VecDeque<Reply>,
    seen: Vec<Seen>,
}

/// A running responder; dropped with the test's runtime.
pub struct Responder {
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
}

impl Responder {
    /// Serves `script` in order; past its end, answers 500 "script exhausted".
    pub async fn start(script: Vec<Reply>) -> Responder {
        Responder::start_with(|_| script).await
    }

    /// Like [`Responder::start`], with a script that may name the responder's
    /// own base URL (`http://127.0.0.1:PORT`), known only once bound.
    pub async fn start_with(script: impl FnOnce(&str) -> Vec<Reply>) -> Responder {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State {
            script: script(&format!("http://{addr}")).into(),
            seen: Vec::new(),
        }));
        let handler_state = Arc::clone(&state);
        let app = Router::new().fallback(
            move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                let state = Arc::clone(&handler_state);
                async move {
                    let reply = {
                        let mut state = state.lock().unwrap();
                        state.seen.push(Seen {
                            method,
                            uri,
                            headers,
                            body,
                            at: Instant::now(),
                        });
                        state.script.pop_front()
                    };
                    match reply {
                        Some(reply) => to_response(reply),
                        None => {
                            (StatusCode::INTERNAL_SERVER_ERROR, "script exhausted").into_response()
                        }
                    }
                }
            },
        );
        tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Responder { addr, state }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.state.lock().unwrap().seen.clone()
    }

    pub fn count(&self) -> usize {
        self.state.lock().unwrap().seen.len()
    }
}

fn to_response(reply: Reply) -> Response {
    let mut response = (StatusCode::from_u16(reply.status).unwrap(), reply.body).into_response();
    for (name, value) in reply.headers {
        response.headers_mut().insert(name, value.parse().unwrap());
    }
    response
}

/// Waits between two instants, for assertions on backoff.
pub fn gap(seen: &[Seen], i: usize) -> Duration {
    seen[i + 1].at.duration_since(seen[i].at)
}
