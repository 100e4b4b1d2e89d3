//! What every handler shares: the state behind one lock, request counts,
//! faults, background tasks and the git setup. Below every handler; the
//! lifecycle (`lifecycle.rs`) and the router (`server.rs`) sit above.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use axum::response::Response;

use crate::automation::{FaultEffect, FaultSpec};
use crate::bot_rules::CompiledBot;
use crate::faults::{self, ApiFlavor, Decision, FaultRegistry};
use crate::git::{CreatedRepository, GitEnv, Hunk};
use crate::scenario::Scenario;
use crate::state::State;
use crate::tasks::Tasks;

/// The repository as the scenario made it, for resets.
pub(crate) struct InitialRepository {
    pub(crate) created: CreatedRepository,
    pub(crate) diff: BTreeMap<String, Vec<Hunk>>,
    pub(crate) refs: BTreeMap<String, String>,
}

/// What every handler shares: the state behind one lock, request counts,
/// the GraphQL schema and the git setup.
pub(crate) struct Shared {
    state: RwLock<State>,
    counts: Mutex<BTreeMap<String, u64>>,
    /// GETs answered `304 Not Modified`, by the same keys as `counts`.
    not_modified: Mutex<BTreeMap<String, u64>>,
    faults: Mutex<FaultRegistry>,
    /// CI jobs and bot delays in flight.
    pub(crate) tasks: Tasks,
    pub(crate) git: GitEnv,
    /// `GIT_PROJECT_ROOT`: holds `{owner}/{repo}.git`.
    pub(crate) git_root: PathBuf,
    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub(crate) base_url: String,
    /// Serializes pushes and their processing.
    pub(crate) push_lock: tokio::sync::Mutex<()>,
    /// The scenario: checks, bots and faults, and the state of a reset.
    pub(crate) scenario: Scenario,
    pub(crate) bots: Vec<CompiledBot>,
    /// Scratch space: CI checkouts, index files.
    pub(crate) work_dir: PathBuf,
    /// When the emulator started (seconds since the Unix epoch).
    pub(crate) started_at_unix: u64,
    pub(crate) initial: InitialRepository,
}

/// Everything of [`Shared`] but its locks, to build one.
pub(crate) struct Setup {
    pub(crate) git: GitEnv,
    pub(crate) git_root: PathBuf,
    pub(crate) base_url: String,
    pub(crate) scenario: Scenario,
    pub(crate) work_dir: PathBuf,
    pub(crate) started_at_unix: u64,
    pub(crate) initial: InitialRepository,
}

impl Shared {
    /// The shared state of a new emulator: `state` and `faults` behind
    /// their locks, no request counted, no task pending.
    pub(crate) fn new(state: State, faults: FaultRegistry, setup: Setup) -> Shared {
        Shared {
            state: RwLock::new(state),
            counts: Mutex::new(BTreeMap::new()),
            not_modified: Mutex::new(BTreeMap::new()),
            faults: Mutex::new(faults),
            tasks: Tasks::new(),
            git: setup.git,
            git_root: setup.git_root,
            base_url: setup.base_url,
            push_lock: tokio::sync::Mutex::new(()),
            bots: CompiledBot::compile(&setup.scenario.bots),
            scenario: setup.scenario,
            work_dir: setup.work_dir,
            started_at_unix: setup.started_at_unix,
            initial: setup.initial,
        }
    }

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

    pub(crate) fn counts(&self) -> BTreeMap<String, u64> {
        self.counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Counts one `304 Not Modified` answer under `key`.
    pub(crate) fn count_not_modified(&self, key: &str) {
        let mut counts = self
            .not_modified
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *counts.entry(key.to_owned()).or_default() += 1;
    }

    pub(crate) fn not_modified_counts(&self) -> BTreeMap<String, u64> {
        self.not_modified
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Forgets every request count (the `304` counts too).
    pub(crate) fn reset_counts(&self) {
        self.counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        self.not_modified
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    fn faults(&self) -> std::sync::MutexGuard<'_, FaultRegistry> {
        self.faults.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts a call against the faults of `key` and decides its fate.
    pub(crate) fn fault_decision(&self, key: &str) -> Decision {
        self.faults().on_call(key)
    }

    /// What every API does before serving a call (REST, GraphQL, git):
    /// counts it under `key`, waits out a `delay` fault, and answers
    /// `Err(response)` for a fault that replaces the call (in `flavor`'s
    /// error shape), `Ok(Some(spec))` for a `commit_then_fail` (serve it,
    /// then answer `spec`), `Ok(None)` to serve it.
    pub(crate) async fn enter(
        &self,
        key: &str,
        flavor: ApiFlavor,
    ) -> Result<Option<FaultSpec>, Response> {
        self.count(key);
        let decision = self.fault_decision(key);
        if !decision.delay.is_zero() {
            tokio::time::sleep(decision.delay).await;
        }
        match decision.answer {
            None => Ok(None),
            Some(spec) if spec.effect == FaultEffect::CommitThenFail => Ok(Some(spec)),
            Some(spec) => {
                tracing::info!(%key, effect = ?spec.effect, "fault fired");
                Err(faults::response(&spec, flavor))
            }
        }
    }

    /// Sets a fault; returns its id.
    pub(crate) fn add_fault(&self, spec: FaultSpec) -> Result<u64, String> {
        self.faults().add(spec)
    }

    /// Clears fault `id`; whether it was set.
    pub(crate) fn remove_fault(&self, id: u64) -> bool {
        self.faults().remove(id)
    }

    /// Clears every fault.
    pub(crate) fn clear_faults(&self) {
        self.faults().clear();
    }

    /// The faults with their counters.
    pub(crate) fn faults_json(&self) -> serde_json::Value {
        self.faults().to_json()
    }

    /// Replaces every fault with `specs` (validated with the scenario).
    pub(crate) fn replace_faults(&self, specs: &[FaultSpec]) {
        let mut faults = self.faults();
        faults.clear();
        for fault in specs {
            // Validated with the scenario: cannot be refused.
            let _ = faults.add(fault.clone());
        }
    }
}
