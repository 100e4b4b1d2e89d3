//! Everything a run's rounds work with ([`Runner`]), and the bookkeeping
//! every stage writes ([`Books`]): events, artifacts, progress, agent usage.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use shepherd_agent::UsageLog;
use shepherd_core::classify::Classified;
use shepherd_core::config::Config;
use shepherd_core::report::ThreadsLook;
use shepherd_core::usage::Spent;
use shepherd_forge::Forge;

use super::state::Round;
use crate::error::Result;
use crate::options::{Agents, CheckAgents, EngineOptions, Progress, ProgressEvent, Stage};
use crate::run_dir::{write_json, ItemInfo, RunDir, RunFile};
use crate::store::{Store, Timestamp};
use crate::worktree::{Git, Worktree};

/// What the forge said of each person's access to the repository, asked
/// once per run for the authors `[trust]` needs it for
/// ([`learn_access`](super::threads::learn_access)).
pub(crate) type Access = std::collections::BTreeMap<String, shepherd_forge::UserAccess>;

/// Everything a run's rounds work with: the bookkeeping every stage
/// writes ([`Books`]), and what the stages read (the forge, the
/// configuration, the options, git, what the worktree stage set up).
pub(crate) struct Runner {
    /// What the stages write: the store, `run.json`, the run directory,
    /// progress.
    pub(crate) books: Books,
    pub(crate) forge: Arc<dyn Forge>,
    pub(crate) config: Config,
    pub(crate) opts: EngineOptions,
    pub(crate) git: Git,
    /// What the first worktree stage of the run sets up.
    pub(crate) setup: Setup,
    /// What the forge said of each person's access to the repository, asked
    /// once per run for the authors `[trust]` needs it for
    /// ([`learn_access`](super::threads::learn_access)).
    pub(crate) access: Access,
}

/// What the worktree stage sets up once per run, for the rounds after it
/// (which get it in its [`Workspace`](super::workspace::Workspace)).
#[derive(Default)]
pub(crate) struct Setup {
    /// The run's worktree; the end of the run removes it.
    pub(crate) worktree: Option<Arc<Worktree>>,
    /// The agents of triage, fix and cluster-fix.
    pub(crate) agents: Option<Agents>,
    /// The checking agents.
    pub(crate) checks: Option<CheckAgents>,
    /// The configuration the run was started with, the repository files
    /// it has read; `None` for a run of an older version resumed from its
    /// `config.toml`.
    pub(crate) config_record: Option<crate::config::ConfigRecord>,
}

/// A run's bookkeeping, what every stage writes to: the state store (stage,
/// events, approvals, the ledger), `run.json` ([`RunFile`]), the round's
/// artifacts in the run directory, progress lines and agent usage. A stage
/// takes it as `&mut Books`; everything else it is given is read-only.
pub(crate) struct Books {
    /// The state store, behind a mutex so that a run's future is `Send`
    /// (never held across an await).
    store: std::sync::Mutex<Store>,
    pub(crate) run: RunFile,
    pub(crate) dir: RunDir,
    progress: Arc<dyn Progress>,
}

impl Books {
    pub(crate) fn new(
        store: Store,
        run: RunFile,
        dir: RunDir,
        progress: Arc<dyn Progress>,
    ) -> Self {
        Books {
            store: std::sync::Mutex::new(store),
            run,
            dir,
            progress,
        }
    }

    /// The state store.
    pub(crate) fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Report progress.
    pub(crate) fn emit(&self, event: ProgressEvent) {
        self.progress.event(&event);
    }

    /// Record that `stage` of round `round` finished: the store's stage and
    /// an event, `run.json`, and a progress line.
    pub(crate) fn stage_done(
        &mut self,
        round: &Round,
        stage: Stage,
        summary: String,
    ) -> Result<()> {
        self.store()
            .set_round_stage(&self.run.run_id, round.n, stage.as_str())?;
        self.store().append_event(
            &self.run.run_id,
            Some(round.n),
            "stage",
            &serde_json::json!({ "stage": stage.as_str(), "summary": summary }),
            Timestamp::now(),
        )?;
        self.save_run()?;
        self.emit(ProgressEvent::Stage {
            round: round.n,
            stage,
            summary,
        });
        Ok(())
    }

    /// Record an event of the run.
    pub(crate) fn event(
        &mut self,
        round: Option<u32>,
        kind: &str,
        payload: serde_json::Value,
    ) -> Result<()> {
        self.store()
            .append_event(&self.run.run_id, round, kind, &payload, Timestamp::now())?;
        Ok(())
    }

    /// Write a stage's artifact into the round's directory.
    pub(crate) fn artifact<T: Serialize + ?Sized>(
        &self,
        round: &Round,
        name: &str,
        value: &T,
    ) -> Result<()> {
        write_json(&round.dir.join(name), value)
    }

    /// Keep where each classified item is (kind, file, line, URL) in
    /// `run.json`, for the report.
    pub(crate) fn note_items(&mut self, classified: &[Classified]) {
        for c in classified {
            self.run.items.insert(
                c.item_id.clone(),
                ItemInfo {
                    kind: c.kind,
                    path: c.path.clone(),
                    line: c.line,
                    url: c.url.clone(),
                },
            );
        }
    }

    /// Record that round `n`'s `stage` saw `classified` as the PR's open
    /// feedback: what the report's "Review threads clear" is based on.
    pub(crate) fn looked_at_threads(
        &mut self,
        n: u32,
        stage: &str,
        classified: Vec<Classified>,
    ) -> Result<()> {
        self.run.last_open_items = classified;
        self.run.threads_look = Some(ThreadsLook {
            round: n,
            stage: stage.to_owned(),
        });
        self.save_run()
    }

    /// Save `run.json`.
    pub(crate) fn save_run(&self) -> Result<()> {
        self.dir.save(&self.run)
    }

    /// Count one agent call of `role` on `provider` in the run's usage
    /// (`run.json`, then the report): its wall time, and the tokens and cost
    /// the provider reported in `usage`.
    pub(crate) fn account_agent(
        &mut self,
        role: &str,
        provider: &str,
        elapsed: Duration,
        usage: &UsageLog,
    ) {
        let millis = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
        let total = usage.total();
        let spent = Spent {
            input_tokens: total.input_tokens,
            output_tokens: total.output_tokens,
            cost_usd: total.cost_usd,
        };
        self.run.agent.add_call(role, provider, millis, &spent);
    }
}
