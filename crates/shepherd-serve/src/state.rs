//! What the handlers share, and who resumes runs.

use std::net::SocketAddr;
use std::sync::Arc;

use shepherd_engine::StateDir;

use crate::secret::Secret;

/// Continues a paused run in the background (`shepherd resume RUN`).
pub trait Resumer: Send + Sync {
    /// Start resuming run `run_id`; return once it is started (the run's
    /// progress is then read from the store like any other run's).
    fn resume(&self, run_id: &str) -> Result<(), String>;
}

/// What every handler shares.
pub(crate) struct AppState {
    pub(crate) state: StateDir,
    pub(crate) secret: Secret,
    pub(crate) addr: SocketAddr,
    pub(crate) resumer: Arc<dyn Resumer>,
    pub(crate) approver: String,
}
