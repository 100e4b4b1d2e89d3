//! Starting, running and stopping the emulator; the router; request counts.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use axum::extract::{MatchedPath, Request, State as AxumState};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::Router;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::git::{self, GitEnv, GitError, RepositoryPlan};
use crate::graphql::{self, EmulatorSchema};
use crate::scenario::{Permission, Scenario, ScenarioError, UserKind};
use crate::state::State;
use crate::{control, git_http, rest};

/// Errors from starting or stopping the emulator.
#[derive(Debug, thiserror::Error)]
pub enum EmulatorError {
    /// The scenario is invalid.
    #[error("invalid scenario")]
    Scenario(#[from] ScenarioError),
    /// Building the repository with git failed.
    #[error("cannot build the scenario's git repository")]
    Git(#[from] GitError),
    /// The temporary directory could not be created.
    #[error("cannot create the emulator's temporary directory")]
    TempDir(#[source] std::io::Error),
    /// The address could not be bound.
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The server stopped with an error.
    #[error("the emulator's server failed")]
    Serve(#[source] std::io::Error),
    /// A background task panicked or was cancelled.
    #[error("an emulator task failed: {0}")]
    Task(String),
}

/// What every handler shares: the state behind one lock, request counts,
/// the GraphQL schema and the git setup.
pub(crate) struct Shared {
    state: RwLock<State>,
    counts: Mutex<BTreeMap<String, u64>>,
    pub(crate) schema: EmulatorSchema,
    pub(crate) git: GitEnv,
    /// `GIT_PROJECT_ROOT`: holds `{owner}/{repo}.git`.
    pub(crate) git_root: PathBuf,
    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub(crate) base_url: String,
    /// Serializes pushes and their processing.
    pub(crate) push_lock: tokio::sync::Mutex<()>,
}

impl Shared {
    /// Reads the state. Never hold the guard across an `.await`.
    pub(crate) fn read(&self) -> RwLockReadGuard<'_, State> {
        // A panic while holding the lock cannot leave the state half-written
        // in a way readers care about more than an outage; keep serving.
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes the state. Never hold the guard across an `.await`.
    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts one request under `key`.
    pub(crate) fn count(&self, key: &str) {
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        *counts.entry(key.to_owned()).or_default() += 1;
    }

    fn counts(&self) -> BTreeMap<String, u64> {
        self.counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// The whole HTTP surface: GraphQL, REST (both path styles), the control
/// API, and git (the fallback).
pub(crate) fn router(shared: Arc<Shared>) -> Router {
    let rest =
        rest::routes().route_layer(middleware::from_fn_with_state(shared.clone(), count_rest));
    Router::new()
        .merge(graphql::routes())
        .merge(rest.clone())
        .nest("/api/v3", rest)
        .merge(control::routes())
        .fallback(git_http::fallback)
        .with_state(shared)
}

/// Counts REST requests as `METHOD /route/{template}`, the same key for both
/// path styles.
async fn count_rest(
    AxumState(shared): AxumState<Arc<Shared>>,
    request: Request,
    next: Next,
) -> Response {
    if let Some(path) = request.extensions().get::<MatchedPath>() {
        let template = path.as_str();
        let template = template.strip_prefix("/api/v3").unwrap_or(template);
        shared.count(&format!("{} {template}", request.method()));
    }
    next.run(request).await
}

/// An account of the running emulator.
#[derive(Clone, PartialEq, Eq)]
pub struct EmulatorUser {
    /// Login (GraphQL spelling).
    pub login: String,
    /// The token that authenticates as this user.
    pub token: String,
    /// Person or bot.
    pub kind: UserKind,
    /// Permission on the repository.
    pub permission: Permission,
}

impl std::fmt::Debug for EmulatorUser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmulatorUser")
            .field("login", &self.login)
            .field("token", &"<redacted>")
            .field("kind", &self.kind)
            .field("permission", &self.permission)
            .finish()
    }
}

/// Starts emulators.
#[derive(Debug, Clone, Copy, Default)]
pub struct Emulator;

impl Emulator {
    /// Validates the scenario, builds its git repository in a temporary
    /// directory, and serves the API on `bind` (`127.0.0.1:0` for an
    /// ephemeral port).
    pub async fn start(
        scenario: Scenario,
        bind: SocketAddr,
    ) -> Result<RunningEmulator, EmulatorError> {
        scenario.validate()?;
        let listener = tokio::net::TcpListener::bind(bind)
            .await
            .map_err(|source| EmulatorError::Bind { addr: bind, source })?;
        let mut addr = listener
            .local_addr()
            .map_err(|source| EmulatorError::Bind { addr: bind, source })?;
        if addr.ip().is_unspecified() {
            // Listening on all interfaces: advertise loopback.
            addr.set_ip(IpAddr::V4(Ipv4Addr::LOCALHOST));
        }
        let base_url = format!("http://{addr}");

        let tempdir = tempfile::Builder::new()
            .prefix("shepherd-emulator-")
            .tempdir()
            .map_err(EmulatorError::TempDir)?;
        let home = tempdir.path().join("home");
        std::fs::create_dir_all(&home).map_err(EmulatorError::TempDir)?;
        let git_env = GitEnv::new(home);
        let git_root = tempdir.path().join("repos");
        let git_dir = git_root
            .join(&scenario.repository.owner)
            .join(format!("{}.git", scenario.repository.name));

        let (scenario, created, diff) = {
            let git_env = git_env.clone();
            tokio::task::spawn_blocking(move || -> Result<_, GitError> {
                let plan = RepositoryPlan {
                    git_dir,
                    default_branch: &scenario.repository.default_branch,
                    base_branch: &scenario.pull_request.base,
                    head_branch: &scenario.pull_request.head,
                    pr_number: scenario.pull_request.number,
                    head_author: &scenario.pull_request.author,
                    head_message: &scenario.pull_request.title,
                    base: &scenario.base,
                    head: &scenario.head,
                };
                let created = git::create_repository(&git_env, &plan)?;
                let diff = git::diff(
                    &git_env,
                    &created.git_dir,
                    &created.base_sha,
                    &created.head_sha,
                )?;
                Ok((scenario, created, diff))
            })
            .await
            .map_err(|join| EmulatorError::Task(join.to_string()))??
        };
        let state = State::from_scenario(&scenario, &created, &diff, &base_url);
        let shared = Arc::new(Shared {
            state: RwLock::new(state),
            counts: Mutex::new(BTreeMap::new()),
            schema: graphql::build_schema(),
            git: git_env,
            git_root,
            base_url,
            push_lock: tokio::sync::Mutex::new(()),
        });

        let (shutdown_tx, shutdown_rx) = oneshot::channel::<()>();
        let app = router(shared.clone());
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    // A dropped sender also stops the server.
                    let _ = shutdown_rx.await;
                })
                .await
        });
        tracing::info!(%addr, "emulator listening");
        Ok(RunningEmulator {
            shared,
            addr,
            shutdown: Some(shutdown_tx),
            task: Some(task),
            _tempdir: tempdir,
        })
    }
}

/// A running emulator. Dropping it stops the server and deletes its
/// repository; [`RunningEmulator::shutdown`] waits for the server to stop.
pub struct RunningEmulator {
    shared: Arc<Shared>,
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<()>>>,
    _tempdir: tempfile::TempDir,
}

impl std::fmt::Debug for RunningEmulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningEmulator")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl RunningEmulator {
    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The github.com-style API root, `http://127.0.0.1:PORT` (like
    /// `https://api.github.com`): REST at `/repos/…`, GraphQL at `/graphql`.
    pub fn api_url(&self) -> String {
        self.shared.base_url.clone()
    }

    /// The github.com-style GraphQL endpoint, `http://127.0.0.1:PORT/graphql`.
    pub fn graphql_url(&self) -> String {
        format!("{}/graphql", self.shared.base_url)
    }

    /// The Enterprise-style REST root, `http://127.0.0.1:PORT/api/v3`.
    pub fn enterprise_api_url(&self) -> String {
        format!("{}/api/v3", self.shared.base_url)
    }

    /// The Enterprise-style GraphQL endpoint, `http://127.0.0.1:PORT/api/graphql`.
    pub fn enterprise_graphql_url(&self) -> String {
        format!("{}/api/graphql", self.shared.base_url)
    }

    /// The web root (`http://127.0.0.1:PORT`), as in PR `url`s; the
    /// Enterprise-style host root as well.
    pub fn web_url(&self) -> String {
        self.shared.base_url.clone()
    }

    /// The smart-HTTP git URL of a repository,
    /// `http://127.0.0.1:PORT/{owner}/{repo}.git`.
    pub fn git_url(&self, owner: &str, repo: &str) -> String {
        format!("{}/{owner}/{repo}.git", self.shared.base_url)
    }

    /// The bare repository on disk (for tests that inspect it).
    pub fn repository_path(&self) -> PathBuf {
        self.shared.read().repository.git_dir.clone()
    }

    /// The accounts, with their tokens.
    pub fn users(&self) -> Vec<EmulatorUser> {
        self.shared
            .read()
            .users
            .iter()
            .map(|u| EmulatorUser {
                login: u.login.clone(),
                token: u.token.clone(),
                kind: u.kind,
                permission: u.permission,
            })
            .collect()
    }

    /// How many requests arrived under `key`: `graphql:<OperationName>` for
    /// GraphQL, `<METHOD> <route template>` for REST (for example
    /// `GET /repos/{owner}/{repo}/pulls/{number}`, whichever path style) and
    /// git (`POST /{owner}/{repo}.git/git-receive-pack`).
    pub fn request_count(&self, key: &str) -> u64 {
        self.shared.counts().get(key).copied().unwrap_or(0)
    }

    /// Every request count, by key.
    pub fn request_counts(&self) -> BTreeMap<String, u64> {
        self.shared.counts()
    }

    /// Forgets every request count.
    pub fn reset_request_counts(&self) {
        self.shared
            .counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// The whole state as JSON, as `GET /_emulator/state` answers it.
    pub fn state_json(&self) -> serde_json::Value {
        control::state_json(&self.shared)
    }

    /// The text the CLI prints on start: URLs and tokens.
    pub fn banner(&self) -> String {
        let state = self.shared.read();
        let base = &self.shared.base_url;
        let repo = &state.repository;
        let mut out = format!(
            "Shepherd GitHub emulator serving {}\n\
             \n\
             API (github.com style):  {base}        GraphQL: {base}/graphql\n\
             API (Enterprise style):  {base}/api/v3  GraphQL: {base}/api/graphql\n\
             git:                     {}\n\
             state:                   {base}/_emulator/state\n",
            repo.full_name(),
            repo.git_url,
        );
        for pr in &state.pull_requests {
            out.push_str(&format!(
                "pull request:            #{} {} ({} <- {})\n",
                pr.number, pr.html_url, pr.base_ref, pr.head_ref
            ));
        }
        out.push_str("\nTokens (fake, for this emulator only):\n");
        for user in &state.users {
            out.push_str(&format!(
                "  {:<24} {:<4} {:<6} {}\n",
                user.login,
                user.kind.as_str(),
                user.permission.as_str(),
                user.token
            ));
        }
        out
    }

    /// Stops the server and waits for it.
    pub async fn shutdown(mut self) -> Result<(), EmulatorError> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        match self.task.take() {
            Some(task) => match task.await {
                Ok(result) => result.map_err(EmulatorError::Serve),
                Err(join) => Err(EmulatorError::Task(join.to_string())),
            },
            None => Ok(()),
        }
    }
}

impl Drop for RunningEmulator {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}
