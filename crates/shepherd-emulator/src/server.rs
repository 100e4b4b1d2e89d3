//! Starting, running and stopping the emulator, and its router: the top of
//! the crate (the shared state is `shared.rs`, reset and start-up effects
//! `lifecycle.rs`).

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::middleware;
use axum::routing::get;
use axum::Router;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::automation::{EndpointAccess, FaultSpec};
use crate::control::{self, Act, ActError, ActOutcome};
use crate::faults::FaultRegistry;
use crate::git::{self, GitEnv, GitError, RepositoryPlan};
use crate::scenario::{EmulatedForge, Permission, Scenario, ScenarioError, UserKind};
use crate::shared::{InitialRepository, Setup, Shared};
use crate::state::State;
use crate::{git_http, gitlab, graphql, lifecycle, rest};

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
    /// A fault was refused (its message says why).
    #[error("invalid fault: {0}")]
    Fault(String),
}

/// The whole HTTP surface: the scenario's forge API (GitHub's GraphQL and
/// REST in both path styles, or GitLab's REST v4), the control API, and git
/// (the fallback).
pub(crate) fn router(shared: Arc<Shared>) -> Router {
    let api = match shared.scenario.forge {
        EmulatedForge::GitHub => {
            let layered = |router: Router<Arc<Shared>>| {
                router
                    .route_layer(middleware::from_fn_with_state(
                        shared.clone(),
                        rest::conditional_get,
                    ))
                    .route_layer(middleware::from_fn_with_state(
                        shared.clone(),
                        rest::count_and_fault,
                    ))
            };
            let rest = layered(rest::routes());
            // The nested `/` answers `/api/v3` only; Enterprise clients (`gh
            // auth status`) ask for the root as `/api/v3/`. Counted as `GET /`.
            let enterprise_root = layered(Router::new().route("/api/v3/", get(rest::root)));
            // Where GitHub's download redirects lead (a job's log): no API
            // headers, but counted and open to faults.
            let downloads = rest::download_routes().route_layer(middleware::from_fn_with_state(
                shared.clone(),
                rest::count_and_fault,
            ));
            Router::new()
                .merge(graphql::routes())
                .merge(rest.clone())
                .nest("/api/v3", rest)
                .merge(enterprise_root)
                .merge(downloads)
        }
        EmulatedForge::GitLab => gitlab::routes()
            .route_layer(middleware::from_fn_with_state(
                shared.clone(),
                gitlab::conditional_get,
            ))
            .route_layer(middleware::from_fn_with_state(
                shared.clone(),
                gitlab::count_and_fault,
            )),
    };
    api.merge(control::routes(shared.clone()))
        .fallback(git_http::fallback)
        .with_state(shared)
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
        Self::serve(scenario, bind, None).await
    }

    /// As [`Emulator::start`], for an emulator reached through a front (a
    /// TLS terminator, a proxy) at `public_url` (`https://HOST:PORT`, no
    /// trailing slash): every URL it gives out (API links, `Link` headers,
    /// `url` fields, clone URLs, [`RunningEmulator::api_url`]) is under
    /// `public_url` instead of `http://` and the bound address.
    pub async fn start_behind(
        scenario: Scenario,
        bind: SocketAddr,
        public_url: &str,
    ) -> Result<RunningEmulator, EmulatorError> {
        Self::serve(
            scenario,
            bind,
            Some(public_url.trim_end_matches('/').to_owned()),
        )
        .await
    }

    async fn serve(
        scenario: Scenario,
        bind: SocketAddr,
        public_url: Option<String>,
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
        let base_url = public_url.unwrap_or_else(|| format!("http://{addr}"));

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

        let work_dir = tempdir.path().join("work");
        std::fs::create_dir_all(&work_dir).map_err(EmulatorError::TempDir)?;
        let (scenario, created, diff, refs) = {
            let git_env = git_env.clone();
            tokio::task::spawn_blocking(move || -> Result<_, GitError> {
                let plan = RepositoryPlan {
                    git_dir,
                    forge: scenario.forge,
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
                let refs = git::all_refs(&git_env, &created.git_dir)?;
                Ok((scenario, created, diff, refs))
            })
            .await
            .map_err(|join| EmulatorError::Task(join.to_string()))??
        };
        let state = State::from_scenario(&scenario, &created, &diff, &base_url);
        let mut faults = FaultRegistry::default();
        for fault in &scenario.faults {
            faults.add(fault.clone()).map_err(EmulatorError::Fault)?;
        }
        let shared = Arc::new(Shared::new(
            state,
            faults,
            Setup {
                git: git_env,
                git_root,
                base_url,
                scenario,
                work_dir,
                started_at_unix: SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs()),
                initial: InitialRepository {
                    created,
                    diff,
                    refs,
                },
            },
        ));
        lifecycle::start_effects(&shared);

        let (shutdown_tx, shutdown_rx) = oneshot::channel::<()>();
        let app = router(shared.clone()).into_make_service_with_connect_info::<SocketAddr>();
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

    /// The emulator's shared state, for the crate's own tests.
    #[cfg(test)]
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// The github.com-style API root, `http://127.0.0.1:PORT` (like
    /// `https://api.github.com`): REST at `/repos/…`, GraphQL at `/graphql`.
    pub fn api_url(&self) -> String {
        self.shared.base_url.clone()
    }

    /// Which forge's API this emulator serves (the scenario's `forge`).
    pub fn forge(&self) -> EmulatedForge {
        self.shared.scenario.forge
    }

    /// GitLab's REST base, `http://127.0.0.1:PORT/api/v4` (served for a
    /// scenario with `forge = "gitlab"`; GitLab clients take it as their API
    /// URL).
    pub fn gitlab_api_url(&self) -> String {
        format!("{}/api/v4", self.shared.base_url)
    }

    /// The GitLab project's numeric id (the repository's database id).
    pub fn gitlab_project_id(&self) -> u64 {
        self.shared.read().repository.database_id
    }

    /// How many times a resolve of an already resolved GitLab discussion
    /// posted a duplicate system note (GitLab records a repeated
    /// resolution again; a careful client never causes one). Reset by
    /// [`RunningEmulator::reset`].
    pub fn duplicate_resolve_notes(&self) -> u64 {
        self.shared.read().duplicate_resolve_notes()
    }

    /// The GitLab discussion id of review thread `thread_id` (a `PRRT_…`
    /// node id or a database id as text), if there is such a thread.
    pub fn discussion_id(&self, thread_id: &str) -> Option<String> {
        let state = self.shared.read();
        let database_id = match crate::ids::parse_node_id(thread_id) {
            Some((crate::ids::NodeKind::ReviewThread, id)) => id,
            _ => thread_id.parse().ok()?,
        };
        state.pull_requests.iter().find_map(|pr| {
            pr.threads
                .iter()
                .find(|t| t.database_id == database_id)
                .map(|t| t.discussion_id.clone())
        })
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
    /// `http://127.0.0.1:PORT/{owner}/{repo}.git` (for GitLab, `owner` is
    /// the namespace: `group/sub`).
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

    /// How many GETs under `key` (as [`RunningEmulator::request_count`]
    /// spells it) were answered `304 Not Modified` to their
    /// `If-None-Match`.
    pub fn not_modified_count(&self, key: &str) -> u64 {
        self.shared
            .not_modified_counts()
            .get(key)
            .copied()
            .unwrap_or(0)
    }

    /// Every request count, by key.
    pub fn request_counts(&self) -> BTreeMap<String, u64> {
        self.shared.counts()
    }

    /// Forgets every request count.
    pub fn reset_request_counts(&self) {
        self.shared.reset_counts();
    }

    /// Sets a fault (as `POST /_emulator/faults`); returns its id.
    pub fn set_fault(&self, fault: FaultSpec) -> Result<u64, EmulatorError> {
        self.shared.add_fault(fault).map_err(EmulatorError::Fault)
    }

    /// Clears fault `id`; whether it was set.
    pub fn clear_fault(&self, id: u64) -> bool {
        self.shared.remove_fault(id)
    }

    /// Clears every fault.
    pub fn clear_faults(&self) {
        self.shared.clear_faults();
    }

    /// The faults with their counters (`calls`, `fired`), as in the state dump.
    pub fn faults(&self) -> serde_json::Value {
        self.shared.faults_json()
    }

    /// How the required-checks endpoints answer from now on: branch
    /// protection, and rulesets (`None`: the same as protection).
    pub fn set_required_checks_access(
        &self,
        protection: EndpointAccess,
        rulesets: Option<EndpointAccess>,
    ) {
        let mut state = self.shared.write();
        state.ci_mut().protection = protection;
        state.ci_mut().rulesets = rulesets.unwrap_or(protection);
    }

    /// Acts as a user (as `POST /_emulator/act`): a review with threads, a
    /// comment, a reply, a resolve, a review submission, or a push.
    pub async fn act(&self, act: Act) -> Result<ActOutcome, ActError> {
        control::act(&self.shared, act).await
    }

    /// `login` posts a top-level comment on the PR; returns its database id.
    pub async fn act_comment(&self, login: &str, body: &str) -> Result<u64, ActError> {
        let outcome = self
            .act(Act::Comment {
                user: login.to_owned(),
                pr: None,
                body: body.to_owned(),
            })
            .await?;
        Ok(outcome.comment_id.unwrap_or_default())
    }

    /// `login` replies in review thread `thread_id` (a `PRRT_` node id);
    /// returns the reply's database id.
    pub async fn act_reply(
        &self,
        login: &str,
        thread_id: &str,
        body: &str,
    ) -> Result<u64, ActError> {
        let outcome = self
            .act(Act::Reply {
                user: login.to_owned(),
                thread_id: Some(thread_id.to_owned()),
                comment_id: None,
                body: body.to_owned(),
            })
            .await?;
        Ok(outcome.comment_id.unwrap_or_default())
    }

    /// `login` commits `files` (path to new contents, `None` deletes) on
    /// `branch` and pushes, with every push effect; returns the commit.
    pub async fn act_push(
        &self,
        login: &str,
        branch: &str,
        files: BTreeMap<String, Option<String>>,
        message: &str,
    ) -> Result<String, ActError> {
        let outcome = self
            .act(Act::Push {
                user: login.to_owned(),
                branch: Some(branch.to_owned()),
                files,
                message: Some(message.to_owned()),
            })
            .await?;
        Ok(outcome.sha.unwrap_or_default())
    }

    /// Starts a CI run of every check for commit `sha` (any commit, on any
    /// branch), as a push to a PR would; returns the workflow run's id.
    pub fn run_ci(&self, sha: &str, branch: &str) -> Option<u64> {
        crate::ci::start_run(&self.shared, sha, branch, "push", "emulator")
    }

    /// The head SHA of pull request `number`.
    pub fn head_sha(&self, number: u64) -> Option<String> {
        self.shared
            .read()
            .pull_request(number)
            .map(|pr| pr.head_sha.clone())
    }

    /// The base SHA of pull request `number`.
    pub fn base_sha(&self, number: u64) -> Option<String> {
        self.shared
            .read()
            .pull_request(number)
            .map(|pr| pr.base_sha.clone())
    }

    /// Waits until no CI job and no bot delay is pending; `false` when
    /// `timeout` passed first.
    pub async fn wait_idle(&self, timeout: Duration) -> bool {
        self.shared.tasks.wait_idle(timeout).await
    }

    /// Back to the scenario's starting point (as `POST /_emulator/reset`):
    /// repository, state, faults; CI and start-up bots run again. Request
    /// counts are kept.
    pub async fn reset(&self) -> Result<(), EmulatorError> {
        self.shared.reset().await.map_err(EmulatorError::Git)
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
        let mut out = match state.forge {
            EmulatedForge::GitHub => format!(
                "Shepherd GitHub emulator serving {}\n\
                 \n\
                 API (github.com style):  {base}        GraphQL: {base}/graphql\n\
                 API (Enterprise style):  {base}/api/v3  GraphQL: {base}/api/graphql\n\
                 git:                     {}\n\
                 control (loopback):      {base}/_emulator/state, …/reset, …/act, …/faults, …/wait-idle\n",
                repo.full_name(),
                repo.git_url,
            ),
            EmulatedForge::GitLab => format!(
                "Shepherd GitLab emulator serving {} (project id {})\n\
                 \n\
                 API (REST v4):           {base}/api/v4\n\
                 git:                     {}\n\
                 control (loopback):      {base}/_emulator/state, …/reset, …/act, …/faults, …/wait-idle\n",
                repo.full_name(),
                repo.database_id,
                repo.git_url,
            ),
        };
        let what = match state.forge {
            EmulatedForge::GitHub => "pull request:           ",
            EmulatedForge::GitLab => "merge request:          ",
        };
        let sign = match state.forge {
            EmulatedForge::GitHub => '#',
            EmulatedForge::GitLab => '!',
        };
        for pr in &state.pull_requests {
            out.push_str(&format!(
                "{what} {sign}{} {} ({} <- {})\n",
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

    /// Stops the server and background work, and waits for the server.
    pub async fn shutdown(mut self) -> Result<(), EmulatorError> {
        self.shared.tasks.abort_all();
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
        self.shared.tasks.abort_all();
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}
