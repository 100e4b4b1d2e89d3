//! What the handlers share, and who resumes runs.

use std::net::SocketAddr;
use std::sync::Arc;

use shepherd_engine::StateDir;

use crate::secret::Secret;

/// The file in a run's directory where a [`Resumer`] writes why its last
/// resume failed (the words the resume said); the run's page shows it while
/// the run can be resumed, and a new resume removes it.
pub const RESUME_FAILURE_FILE: &str = "resume-failed.txt";

/// Continues a paused run in the background (`shepherd resume RUN`).
pub trait Resumer: Send + Sync {
    /// Start resuming run `run_id`; return once it is started (the run's
    /// progress is then read from the store like any other run's). A
    /// resume that fails before it gets going (no token, the run locked) is
    /// an error with its words, shown on the page; one that fails later
    /// writes them to [`RESUME_FAILURE_FILE`]. This may block for a moment.
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
