//! Stage 2, worktree: the run's isolated worktree (a linked worktree of a
//! bare cache clone under the state directory; the user's checkout is never
//! touched), re-synced to the live remote head every round
//! (`worktree.json`). On the first round of a run, the repository's
//! configuration is read from the worktree and the agents are set up.

use std::sync::Arc;

use serde::Serialize;
use shepherd_core::config::{repo_config_path, Config, ConfigLayer};

use super::pr_state::short;
use super::{Flow, Round, RoundEnd, Runner};
use crate::run::error::{EngineError, Result};
use crate::run::files::write_text;
use crate::run::options::{Agents, ProgressEvent, Stage};
use crate::worktree::{clear_stale_git_locks, LockSweep, SyncOutcome, Worktree};

#[derive(Serialize)]
struct WorktreeArtifact<'a> {
    path: String,
    created: bool,
    sync: &'a SyncOutcome,
    pr_head: &'a str,
    note: Option<String>,
}

impl Runner {
    pub(crate) async fn stage_worktree(&mut self, round: &mut Round) -> Result<Flow> {
        let head_ref = round.snapshot().pr.head_ref.clone();
        let pr_head = round.snapshot().pr.head_sha.clone();
        let mut created = false;
        if self.worktree.is_none() {
            let git = self.git.clone();
            let cache = self.run.cache_dir.clone();
            let dir = self.run.worktree_dir.clone();
            let url = self.run.git_url.clone();
            let head = head_ref.clone();
            let made = tokio::task::spawn_blocking(move || -> Result<(Worktree, bool, LockSweep)> {
                Worktree::init_bare(&git, &cache)?;
                // The first git command of this process on the run: none of
                // ours is running, and the PR lock says no other Shepherd
                // works on this run. Locks a killed process left go first.
                let sweep = clear_stale_git_locks(&cache, &dir)?;
                if dir.exists() {
                    match Worktree::open(&git, &cache, &dir, &url) {
                        Ok(wt) => return Ok((wt, false, sweep)),
                        Err(err) => {
                            tracing::warn!(%err, dir = %dir.display(), "recreating the worktree");
                            let _ = std::fs::remove_dir_all(&dir);
                        }
                    }
                }
                Ok((
                    Worktree::create(&git, &cache, &dir, &url, &head)?,
                    true,
                    sweep,
                ))
            })
            .await
            .map_err(|e| EngineError::Task(e.to_string()))?;
            let (wt, fresh, sweep) = match made {
                Ok(made) => made,
                Err(err) => {
                    return Ok(Err(RoundEnd::Failed {
                        reason: format!("cannot set up the worktree: {err}"),
                    }))
                }
            };
            self.report_lock_sweep(round, &sweep)?;
            created = fresh;
            self.worktree = Some(Arc::new(wt));
        }
        let head = head_ref.clone();
        let sync = match self.git(move |wt| wt.sync_to_remote_head(&head)).await {
            Ok(sync) => sync,
            Err(err) => {
                return Ok(Err(RoundEnd::Failed {
                    reason: format!("cannot sync the worktree to {head_ref}: {err}"),
                }))
            }
        };
        round.start_sha = sync.new_sha.0.clone();

        if self.needs_repo_config {
            if let Err(reason) = self.read_repo_config() {
                return Ok(Err(RoundEnd::Failed { reason }));
            }
            self.needs_repo_config = false;
        }
        if self.agents.is_none() {
            let agents = match &self.opts.agents {
                Some(agents) => agents.clone(),
                None => match Agents::from_config(&self.config, self.opts.checkout.as_deref()) {
                    Ok(agents) => agents,
                    Err(err) => {
                        return Ok(Err(RoundEnd::Failed {
                            reason: err.to_string(),
                        }))
                    }
                },
            };
            self.agents = Some(agents);
        }

        let note = (sync.new_sha.0 != pr_head).then(|| {
            format!(
                "the live head {} differs from the fetched head {}: someone pushed; the round works on the live head",
                short(&sync.new_sha.0),
                short(&pr_head)
            )
        });
        self.artifact(
            round,
            "worktree.json",
            &WorktreeArtifact {
                path: self.wt().path().display().to_string(),
                created,
                sync: &sync,
                pr_head: &pr_head,
                note: note.clone(),
            },
        )?;
        let mut summary = format!(
            "{} at {}",
            if created { "created" } else { "synced" },
            short(&sync.new_sha.0)
        );
        if !sync.abandoned.is_empty() {
            summary.push_str(&format!(
                ", {} unpushed local commit(s) left behind",
                sync.abandoned.len()
            ));
        }
        self.stage_done(round, Stage::Worktree, summary)?;
        Ok(Ok(()))
    }

    /// Say what the sweep of stale git locks did: a progress note and an
    /// event when it removed locks, or found some it had to leave.
    fn report_lock_sweep(&mut self, round: &Round, sweep: &LockSweep) -> Result<()> {
        let shown = |locks: &[std::path::PathBuf]| {
            locks
                .iter()
                .map(|l| l.display().to_string())
                .collect::<Vec<_>>()
        };
        let (message, payload) = match sweep {
            LockSweep::Clean => return Ok(()),
            LockSweep::Removed { locks } => (
                format!(
                    "removed {} stale git lock(s) left by a process that is gone: {}",
                    locks.len(),
                    shown(locks).join(", ")
                ),
                serde_json::json!({ "action": "removed", "locks": shown(locks) }),
            ),
            LockSweep::Busy { locks, pids } => (
                format!(
                    "git lock(s) {} are there while process(es) {} work in the repository: \
                     left alone (they may be held)",
                    shown(locks).join(", "),
                    pids.iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                serde_json::json!({ "action": "busy", "locks": shown(locks), "pids": pids }),
            ),
            LockSweep::Unknown { locks } => (
                format!(
                    "git lock(s) {} are there and this system cannot tell whether a process \
                     holds them: left alone; remove them if no git command runs there",
                    shown(locks).join(", ")
                ),
                serde_json::json!({ "action": "unknown", "locks": shown(locks) }),
            ),
        };
        self.emit(ProgressEvent::Note { message });
        self.event(Some(round.n), "git-locks", payload)
    }

    /// Layer the repository's `shepherd.toml` (or `.shepherd/config.toml`)
    /// under the run's other layers, and save the result as `config.toml`.
    fn read_repo_config(&mut self) -> std::result::Result<(), String> {
        let root = self.wt().path().to_path_buf();
        let found = repo_config_path(|p| root.join(p).is_file()).map_err(|e| e.to_string())?;
        let mut layers = Vec::new();
        if let Some(rel) = found {
            let path = root.join(rel);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            layers.push(ConfigLayer::repo(rel, text));
        }
        layers.extend(self.layers.iter().cloned());
        let config = Config::layered(&layers).map_err(|e| format!("invalid configuration: {e}"))?;
        self.run.round_limit = if self.run.target.is_targeted() {
            1
        } else {
            config.loop_.max_rounds
        };
        write_text(&self.dir.config_file(), &config.to_toml()).map_err(|e| e.to_string())?;
        self.config = config;
        Ok(())
    }
}
