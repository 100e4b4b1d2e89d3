//! A tiny scripted HTTP responder on 127.0.0.1:0, for transport behaviour the
//! emulator cannot script (yet): each request gets the next scripted answer,
//! or the answer of a handler that looks at the request (for concurrent
//! requests, whose order is not fixed).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Router;
use shepherd_core::model::RepoRef;
use shepherd_forge::{
    ClientConfig, ForgeError, GitHubClient, GitHubEndpoints, GitLabClient, GitLabEndpoints,
    RetryPolicy, Token,
};

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

impl Seen {
    /// The body as JSON (`null` when empty).
    pub fn json(&self) -> serde_json::Value {
        if self.body.is_empty() {
            return serde_json::Value::Null;
        }
        serde_json::from_slice(&self.body).unwrap()
    }

    /// The GraphQL operation name, for a GraphQL request.
    pub fn operation(&self) -> Option<String> {
        if self.uri.path() != "/graphql" {
            return None;
        }
        self.json()["operationName"].as_str().map(str::to_owned)
    }

    /// `METHOD /path?query`.
    pub fn line(&self) -> String {
        format!("{} {}", self.method, self.uri)
    }
}

type Handler = Box<dyn Fn(&Seen) -> Reply + Send + Sync>;

#[derive(Default)]
struct State {
    script: VecDeque<Reply>,
    handler: Option<Handler>,
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
        Responder::launch(|base| State {
            script: script(base).into(),
            ..State::default()
        })
        .await
    }

    /// Answers each request with `handler(request)`.
    pub async fn start_fn(handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Responder {
        Responder::launch(|_| State {
            handler: Some(Box::new(handler)),
            ..State::default()
        })
        .await
    }

    async fn launch(state: impl FnOnce(&str) -> State) -> Responder {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(state(&format!("http://{addr}"))));
        let handler_state = Arc::clone(&state);
        let app = Router::new().fallback(
            move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                let state = Arc::clone(&handler_state);
                async move {
                    let reply = {
                        let mut state = state.lock().unwrap();
                        let seen = Seen {
                            method,
                            uri,
                            headers,
                            body,
                            at: Instant::now(),
                        };
                        let reply = match &state.handler {
                            Some(handler) => Some(handler(&seen)),
                            None => state.script.pop_front(),
                        };
                        state.seen.push(seen);
                        reply
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

    /// `METHOD /path?query` of every request, in order.
    pub fn lines(&self) -> Vec<String> {
        self.seen().iter().map(Seen::line).collect()
    }
}

pub const SECRET: &str = "ghp_S3cr3tT0kenValue0123456789abcdefXYZ";

/// Retries in milliseconds, so that a test of five retries stays fast.
pub fn fast_config() -> ClientConfig {
    ClientConfig {
        timeout: Duration::from_secs(10),
        retry: RetryPolicy {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(5),
            max_rate_limit_wait: Duration::from_secs(5),
        },
        ..ClientConfig::default()
    }
}

/// A client of `octo-org/widgets` at `url`, with [`fast_config`].
pub fn client_at(url: &str) -> GitHubClient {
    let repo = RepoRef {
        host: "127.0.0.1".into(),
        owner: "octo-org".into(),
        name: "widgets".into(),
    };
    let endpoints = GitHubEndpoints::from_api_url(url).unwrap();
    GitHubClient::with_config(repo, endpoints, Token::new(SECRET), fast_config()).unwrap()
}

/// The REST path of the GitLab project `group/sub/project`, as sent.
pub const PROJECT: &str = "/api/v4/projects/group%2Fsub%2Fproject";

/// A GitLab client of `group/sub/project` at `url` + `/api/v4`, with [`fast_config`].
pub fn gitlab_client_at(url: &str) -> GitLabClient {
    let repo = RepoRef {
        host: "127.0.0.1".into(),
        owner: "group/sub".into(),
        name: "project".into(),
    };
    let endpoints = GitLabEndpoints::from_api_url(&format!("{url}/api/v4")).unwrap();
    GitLabClient::with_config(repo, endpoints, Token::new(SECRET), fast_config()).unwrap()
}

/// A fixture of `tests/fixtures`, as JSON.
pub fn fixture(name: &str) -> serde_json::Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
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

/// Display, Debug and the whole source chain of an error, as one text.
pub fn all_text(err: &ForgeError) -> String {
    let mut text = format!("{err}\n{err:?}");
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        text.push_str(&format!("\n{s}\n{s:?}"));
        source = s.source();
    }
    text
}
