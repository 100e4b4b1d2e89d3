//! The emulator's lifecycle over its shared state: what runs on start
//! (CI, start-up bots) and a reset to the scenario's starting point. Above
//! CI and the bots, below the control API and the server.

use std::sync::Arc;

use crate::git::{self, GitError};
use crate::shared::Shared;
use crate::state::State;

impl Shared {
    /// Back to the scenario's starting point: background work stops, the
    /// repository's refs and the state are restored, the scenario's faults
    /// replace the current ones, and the start-up CI and bots run again.
    pub(crate) async fn reset(self: &Arc<Self>) -> Result<(), GitError> {
        self.tasks.abort_all();
        {
            let _guard = self.push_lock.lock().await;
            let (git_env, git_dir, refs) = (
                self.git.clone(),
                self.initial.created.git_dir.clone(),
                self.initial.refs.clone(),
            );
            tokio::task::spawn_blocking(move || git::restore_refs(&git_env, &git_dir, &refs))
                .await
                .map_err(|join| GitError::Spawn {
                    what: "update-ref".into(),
                    source: std::io::Error::other(join),
                })??;
            let mut fresh = State::from_scenario(
                &self.scenario,
                &self.initial.created,
                &self.initial.diff,
                &self.base_url,
            );
            let mut state = self.write();
            fresh.epoch = state.epoch + 1;
            *state = fresh;
        }
        self.replace_faults(&self.scenario.faults);
        start_effects(self);
        tracing::info!("emulator reset");
        Ok(())
    }
}

/// What runs when the emulator starts (and after a reset): CI for each PR
/// head when `[ci] run_on_start`, and the bots marked `on_start` on the
/// PR's own diff.
pub(crate) fn start_effects(shared: &Arc<Shared>) {
    let heads: Vec<(u64, String, String, String, Vec<git::AddedLine>)> = {
        let state = shared.read();
        state
            .pull_requests
            .iter()
            .map(|pr| {
                (
                    pr.number,
                    pr.head_sha.clone(),
                    pr.head_ref.clone(),
                    pr.author.clone(),
                    git::added_lines(&pr.diff),
                )
            })
            .collect()
    };
    for (number, sha, branch, author, added) in heads {
        if shared.scenario.ci.run_on_start {
            crate::ci::start_run(shared, &sha, &branch, "pull_request", &author);
        }
        crate::bots::wake(shared, number, &sha, &added, true);
    }
}
