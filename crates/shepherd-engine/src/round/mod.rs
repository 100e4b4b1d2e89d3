//! One round of SPEC section 3, as explicit named stages.
//!
//! Each stage lives in its own module, reads and extends the [`Round`] being
//! worked, writes its artifact into `rounds/N/`, records an event in the
//! store and reports progress. A stage either lets the round go on or ends
//! it ([`RoundEnd`]).
//!
//! Order: [`pr_state`] → [`worktree`] → [`threads`] → [`triage`] →
//! [`cluster`] → [`approval`] → [`fix`] (with [`parallel`] fixers and
//! [`metadata`] edits) → [`validate`] → [`review`] → revalidate (in
//! [`validate`]) → [`gate`] → [`push`] → [`replies`] → [`ci`] →
//! [`converge`].
//!
//! Below the stages, shared by them and read first: `item` (the work items
//! and decision helpers), `unit` (the fix unit), `state` (the [`Round`] and
//! how it ends) and `runner` (the [`Runner`] and its bookkeeping). No stage
//! imports this module; this module holds the pipeline.

pub(crate) mod approval;
pub(crate) mod ci;
pub(crate) mod cluster;
pub(crate) mod converge;
pub(crate) mod fix;
pub(crate) mod gate;
pub(crate) mod guard;
mod item;
pub(crate) mod metadata;
pub(crate) mod parallel;
pub(crate) mod pr_state;
pub(crate) mod push;
pub(crate) mod replies;
pub(crate) mod review;
mod runner;
pub(crate) mod settle;
mod state;
pub(crate) mod threads;
pub(crate) mod triage;
mod unit;
pub(crate) mod validate;
pub(crate) mod worktree;

use shepherd_core::classify::Classified;
use shepherd_core::report::ThreadsLook;

pub(crate) use item::decision_name;
pub(crate) use runner::Runner;
pub(crate) use state::{Round, RoundEnd};

use crate::error::Result;
use crate::options::CheckAgents;
use crate::store::Timestamp;
use state::Flow;

impl Runner {
    /// Set up the checking agents after the worktree stage (which reads the
    /// repository's configuration and sets up the core agents).
    async fn setup_check_agents(&mut self) -> Result<Flow> {
        if self.opts.check_agents.is_some() {
            return Ok(Ok(()));
        }
        let checks = if self.opts.agents.is_some() {
            CheckAgents::builtin()
        } else {
            match CheckAgents::from_config(&self.config, self.opts.checkout.as_deref()) {
                Ok(c) => c,
                Err(err) => {
                    return Ok(Err(RoundEnd::Failed {
                        reason: err.to_string(),
                    }))
                }
            }
        };
        self.opts.check_agents = Some(checks);
        Ok(Ok(()))
    }

    /// The round's stages, in order.
    pub(crate) async fn run_round(&mut self, round: &mut Round) -> Result<RoundEnd> {
        macro_rules! step {
            ($e:expr) => {
                if let Err(end) = $e.await? {
                    return Ok(end);
                }
            };
        }
        let pr_state = self.stage_pr_state(round).await?;
        // What pr-state fetched is a look at the threads: a stop there (a
        // pending review) or before the threads stage still reports them.
        self.look_at_threads_of_snapshot(round)?;
        if let Err(end) = pr_state {
            return Ok(end);
        }
        step!(self.stage_worktree(round));
        step!(self.setup_check_agents());
        step!(self.stage_threads(round));
        self.looked_at_threads(round.n, "threads", round.classified.clone())?;
        step!(self.stage_triage(round));
        self.adopt_earlier_fixes(round).await?;
        step!(self.stage_cluster(round));
        step!(self.stage_approval(round));
        step!(self.stage_fix(round));
        step!(self.stage_validate(round));
        step!(self.stage_review(round));
        step!(self.stage_revalidate(round));
        step!(self.stage_gate(round));
        let pushed = self.stage_push(round).await?;
        if let Err(end) = pushed {
            if matches!(end, RoundEnd::Restart { .. }) {
                // Someone else pushed first: nothing of this attempt is on
                // the forge, and the report must not say it is.
                self.abandon_unpushed(round)?;
            }
            return Ok(end);
        }
        step!(self.stage_replies(round));
        step!(self.stage_ci(round));
        let end = self.stage_converge(round).await?;
        if matches!(end, RoundEnd::Converged | RoundEnd::Next { .. }) {
            // The post-CI re-fetch classified the threads anew.
            let classified = self.run.last_open_items.clone();
            self.looked_at_threads(round.n, ThreadsLook::CONVERGE, classified)?;
        }
        Ok(end)
    }

    /// After a rejected push: every result the gate recorded for this
    /// attempt (commits that were not pushed, replies that were not posted)
    /// is superseded in the ledger by an entry that claims nothing, so the
    /// report lists neither, and a reply another runner posted with the same
    /// marker is never taken for this run's. Metadata edits (already public)
    /// keep their entries.
    fn abandon_unpushed(&mut self, round: &Round) -> Result<()> {
        let now = Timestamp::now();
        for (_, p) in round.planned.iter().filter(|(_, p)| !p.carried) {
            if p.result.metadata_applied {
                continue;
            }
            self.store().append_ledger(&crate::store::LedgerRecord {
                run_id: self.run.run_id.clone(),
                entry: shepherd_core::LedgerEntry::new(&p.result.item_id, round.n),
                fix_kind: None,
                reply_body: None,
                at: now,
            })?;
        }
        self.event(
            Some(round.n),
            "attempt-abandoned",
            serde_json::json!({
                "reason": "push rejected",
                "unpushed_commits": round.commits,
            }),
        )?;
        Ok(())
    }

    /// Record that round `n`'s `stage` saw `classified` as the PR's open
    /// feedback: what the report's "Review threads clear" is based on.
    fn looked_at_threads(
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

    /// Classify the snapshot pr-state fetched, if it fetched one.
    fn look_at_threads_of_snapshot(&mut self, round: &Round) -> Result<()> {
        let Some(snapshot) = round.snapshot.as_ref() else {
            return Ok(());
        };
        let (_, classified, _) = self.classify_snapshot(snapshot)?;
        for c in &classified {
            self.run.items.insert(
                c.item_id.clone(),
                crate::run_dir::ItemInfo {
                    kind: c.kind,
                    path: c.path.clone(),
                    line: c.line,
                    url: c.url.clone(),
                },
            );
        }
        self.looked_at_threads(round.n, "pr-state", classified)
    }
}
