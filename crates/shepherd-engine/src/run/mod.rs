//! Runs: starting, driving and resuming them, and what callers plug in.
//!
//! [`Engine::start`] runs rounds (see the `round` module) until the run
//! converges, pauses for a person, fails with a reason, or reaches its round
//! limit; [`Engine::resume`] continues a paused or interrupted run. One run
//! per PR at a time: the store's lock. Everything a run does is in its
//! directory ([`RunDir`]) and the store.

mod approve;
mod imp;

pub use crate::config::{ConfigRecord, Effective, RepoConfigSource, RepoFile};
pub use crate::error::{EngineError, Result};
pub use crate::options::{
    AgentSetupError, Agents, ApprovalChange, ApprovalItem, ApprovalRequest, ApprovalVerdict,
    Approver, CheckAgents, EngineOptions, NoProgress, PrFields, Progress, ProgressEvent, Stage,
    DEFAULT_PARALLEL_FIXES,
};
pub use crate::run_dir::{HeldItem, ItemInfo, PauseKind, RunDir, RunFile};
pub use approve::{approval_request, approve_run, reject_run};
pub use imp::{effective_status, load_run_file, run_report, Engine, RunOutcome, RunSpec};
