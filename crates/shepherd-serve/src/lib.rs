//! `shepherd serve`: a local dashboard over the state database and the run
//! directories (SPEC section 1).
//!
//! Pages are rendered on the server ([`maud`], which escapes every
//! interpolated string) with a little embedded CSS and JavaScript; nothing is
//! loaded from the network. The pages read the [`shepherd_engine::Store`] and
//! the run directories afresh on every request, so they are live while runs
//! progress; a run's page follows it through server-sent events.
//!
//! Approvals go through the engine's own functions, the ones `shepherd
//! approve` and `shepherd reject` call ([`shepherd_engine::approve_run`],
//! [`shepherd_engine::reject_run`]); resuming is delegated to a [`Resumer`]
//! (the CLI's runs `shepherd resume` itself), so the honesty gate checks a
//! dashboard approval exactly as it checks one from the command line.
//!
//! Safety: the server listens on loopback unless told otherwise, and
//! answers only requests for a loopback `Host` there (DNS rebinding); every
//! request needs the per-start secret (the printed URL carries it once, then
//! a `SameSite=Strict` cookie); every state-changing request also needs the
//! secret in its form and, when the browser sends one, an `Origin` equal to
//! the server's own. A Content-Security-Policy forbids inline scripts and
//! every other origin, should escaping ever fail.

#![warn(missing_docs)]

mod auth;
pub mod code;
mod comment;
mod error;
mod handlers;
pub mod markdown;
pub mod pages;
mod secret;
mod state;
pub mod view;

use std::net::SocketAddr;
use std::sync::Arc;

use shepherd_engine::StateDir;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

pub use error::ServeError;
pub use secret::Secret;
use state::AppState;
pub use state::{Resumer, RESUME_FAILURE_FILE};

/// How to start the dashboard.
pub struct ServeConfig {
    /// The state directory (database and run directories).
    pub state: StateDir,
    /// Where to listen (default loopback; port 0 picks a free one).
    pub listen: SocketAddr,
    /// Who resumes runs.
    pub resumer: Arc<dyn Resumer>,
    /// The name approvals are recorded under.
    pub approver: String,
}

/// A running dashboard.
pub struct Server {
    addr: SocketAddr,
    secret: Secret,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("addr", &self.addr).finish()
    }
}

impl Server {
    /// Bind and start serving.
    pub async fn start(config: ServeConfig) -> Result<Server, ServeError> {
        let listener =
            TcpListener::bind(config.listen)
                .await
                .map_err(|source| ServeError::Bind {
                    addr: config.listen,
                    source,
                })?;
        let addr = listener.local_addr().map_err(|source| ServeError::Bind {
            addr: config.listen,
            source,
        })?;
        let secret = Secret::generate()?;
        let app = Arc::new(AppState {
            state: config.state,
            secret: secret.clone(),
            addr,
            resumer: config.resumer,
            approver: config.approver,
        });
        let router = handlers::router(app);
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            axum::serve(listener, router)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await
        });
        tracing::info!(%addr, "dashboard listening");
        Ok(Server {
            addr,
            secret,
            stop: Some(stop),
            task,
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL, without the secret (`http://127.0.0.1:PORT`).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The URL to open: the base URL with the secret (print it once).
    pub fn url(&self) -> String {
        format!("http://{}/?token={}", self.addr, self.secret.as_str())
    }

    /// The per-start secret.
    pub fn secret(&self) -> &str {
        self.secret.as_str()
    }

    /// The cookie name the session is kept in (per port: cookies are not).
    pub fn cookie_name(&self) -> String {
        auth::cookie_name(self.addr.port())
    }

    /// Serve until the process is stopped (or the server fails).
    pub async fn wait(mut self) -> std::io::Result<()> {
        let _keep = self.stop.take();
        match (&mut self.task).await {
            Ok(r) => r,
            Err(e) => Err(std::io::Error::other(e.to_string())),
        }
    }

    /// Stop serving and wait for the server to end.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        // Open event streams never end by themselves: give the rest a
        // moment, then stop them.
        if tokio::time::timeout(std::time::Duration::from_secs(2), &mut self.task)
            .await
            .is_err()
        {
            self.task.abort();
        }
    }
}
