//! One round of SPEC section 3, as explicit named stages.
//!
//! Each stage lives in its own module, takes what the stages before it made
//! (`state`: the PR as synced, the items, their decisions, the changes),
//! writes its artifact into `rounds/N/`, records an event in the store and
//! reports progress. It returns its own product, or ends the round
//! ([`RoundEnd`]); [`Runner::run_round`] is the pipeline, and the types keep
//! its order.
//!
//! Order: [`pr_state`] → [`worktree`] → [`threads`] → [`triage`] →
//! [`cluster`] → [`approval`] → [`fix`] (with [`parallel`] fixers and
//! [`metadata`] edits) → [`validate`] → [`review`] → revalidate (in
//! [`validate`]) → [`gate`] → [`push`] → [`replies`] → [`ci`] →
//! [`reviewers`] → [`converge`].
//!
//! The worktree stage makes the [`workspace::Workspace`] (the worktree and
//! the agents): a stage that runs git or an agent takes it, so none can run
//! before it. What the round changed goes from stage to stage in a type of
//! each: `Fixed` → `Validated` → `Reviewed` → `Revalidated` → `Gated`.
//!
//! Below the stages, shared by them and read first: `item` (the work items
//! and decision helpers), `unit` (the fix unit), `state` (what each stage
//! makes, and how a round ends), `workspace` and `runner` (the [`Runner`]
//! and its bookkeeping, [`Books`]). No stage imports this module; this
//! module holds the pipeline.
//!
//! # A stage's signature says what it reads and writes
//!
//! A stage is a function of its module, `stage`, that takes:
//!
//! 1. `books: &mut Books`: the one thing every stage writes (the store,
//!    `run.json`, the round's artifacts, progress, agent usage), first;
//! 2. shared references to exactly the read-only parts of the run it uses:
//!    `&dyn Forge`, a section of the configuration (`&CiConfig`,
//!    `&ClusterConfig`, `&TrustConfig`) or `&Config` when it reads several,
//!    a value of the options already resolved (ci's poll interval);
//!    `&mut` of anything else it learns (converge's `&mut Access`);
//! 3. `round: &Round`, then the products of the stages before it
//!    (`&Synced`, `&Workspace`, `&Items`, …), and returns its own product
//!    as a [`Step`](state::Step) (or ends the round).
//!
//! [`Runner::run_round`] borrows the parts from the [`Runner`] field by
//! field (`&mut self.books, &*self.forge, &self.config.ci, …`) and hands
//! each stage its context. To add a stage (settling reviewers, repairing
//! CI): write `round/<name>.rs` with its `stage` function and its product
//! type in `state`, add a [`Stage`](crate::options::Stage) variant, and call
//! it from [`Runner::run_round`] at its place in the order. Helpers two
//! stages share are functions too (`threads::learn_access`,
//! `guard::read_only_call`), taking what they read the same way.
//!
//! Converted so far: pr-state, triage, cluster, gate, push, ci, converge
//! and the agent guard. The others are still `impl Runner` methods
//! (`stage_worktree`, `stage_threads`, `stage_approval`, `stage_fix`,
//! `stage_validate`, `stage_review`, `stage_revalidate`, `stage_replies`)
//! and move to the same shape one at a time.

mod answer;
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
pub(crate) mod reviewers;
mod runner;
pub(crate) mod settle;
mod state;
pub(crate) mod threads;
pub(crate) mod triage;
mod unit;
pub(crate) mod validate;
pub(crate) mod workspace;
pub(crate) mod worktree;

use shepherd_core::classify::Classified;
use shepherd_core::report::ThreadsLook;

pub(crate) use runner::{Books, Runner};
pub(crate) use state::{Round, RoundEnd, Tally};

use crate::error::Result;
use crate::store::Timestamp;
use shepherd_core::model::PrSnapshot;
use state::{Fixing, Gated, Triaged};

impl Runner {
    /// The round's stages, in order: each takes what the stages before it
    /// made and returns its own product, or ends the round ([`RoundEnd`]).
    /// `tally` keeps what the run's summary of the round counts, as far as
    /// the round got.
    pub(crate) async fn run_round(&mut self, round: &Round, tally: &mut Tally) -> Result<RoundEnd> {
        macro_rules! step {
            ($stage:expr) => {
                match $stage.await? {
                    Ok(made) => made,
                    Err(end) => return Ok(end),
                }
            };
        }
        let (snapshot, stop) = step!(pr_state::stage(&mut self.books, &*self.forge, round));
        // What pr-state fetched is a look at the threads: a stop there (a
        // pending review) or before the threads stage still reports them.
        self.look_at_threads_of_snapshot(round.n, &snapshot)?;
        if let Some(end) = stop {
            return Ok(end);
        }
        let (synced, ws) = step!(self.stage_worktree(round, snapshot));
        let items = step!(self.stage_threads(round, &synced, &ws));
        tally.items = items.work.len() + items.carried.len();
        self.looked_at_threads(round.n, "threads", items.classified.clone())?;
        let mut triage = step!(triage::stage(&mut self.books, round, &synced, &ws, &items));
        let earlier_fixes = self
            .adopt_earlier_fixes(round, &synced, &ws, &items, &mut triage)
            .await?;
        let clusters = cluster::stage(
            &mut self.books,
            &self.config.cluster,
            round,
            &ws,
            &items,
            &mut triage,
        )
        .await?;
        let triaged = Triaged {
            triage,
            earlier_fixes,
            clusters,
        };
        let decided = step!(self.stage_approval(round, &synced, &items, triaged));
        let fixing = Fixing {
            round,
            synced: &synced,
            ws: &ws,
            decided: &decided,
        };
        // The checks extend the changes (a fix-up commit) or end the round;
        // one that ends it does so before it commits anything.
        let fixed = self.stage_fix(fixing, &items).await?;
        tally.commits = fixed.0.commits.len();
        let validated = step!(self.stage_validate(fixing, fixed));
        tally.commits = validated.0.commits.len();
        let reviewed = step!(self.stage_review(round, &synced, &ws, validated));
        tally.commits = reviewed.0.commits.len();
        let revalidated = step!(self.stage_revalidate(round, &ws, reviewed));
        let gated = step!(gate::stage(
            &mut self.books,
            &self.config,
            round,
            &ws,
            &decided,
            revalidated
        ));
        let pushed = match push::stage(&mut self.books, round, &synced, &ws, &gated).await? {
            Ok(pushed) => pushed,
            Err(end) => {
                if matches!(end, RoundEnd::Restart { .. }) {
                    // Someone else pushed first: nothing of this attempt is
                    // on the forge, and the report must not say it is.
                    self.abandon_unpushed(round, &gated)?;
                }
                return Ok(end);
            }
        };
        tally.pushed.clone_from(&pushed);
        let failures = step!(self.stage_replies(round, &synced, &items, &decided, &gated));
        let poll = (self.opts.ci_poll).unwrap_or_else(|| self.config.ci.poll_interval());
        let ci = ci::stage(
            &mut self.books,
            &*self.forge,
            &self.config.ci,
            poll,
            round,
            &synced,
            pushed.as_deref(),
        )
        .await?;
        tally.ci = Some(ci.status);
        let (reviewers, mut changes_requested) = reviewers::stage(
            &mut self.books,
            &*self.forge,
            &self.config,
            poll,
            round,
            &synced,
            &ws,
            pushed.as_deref(),
            &ci,
        )
        .await?;
        let (end, stalled) = converge::stage(
            &mut self.books,
            &*self.forge,
            &self.config,
            &mut self.access,
            round,
            &ci,
            failures.len(),
            &reviewers,
            &mut changes_requested,
        )
        .await?;
        tally.stalled = stalled;
        if matches!(end, RoundEnd::Converged | RoundEnd::Next { .. }) {
            // The post-CI re-fetch classified the threads anew.
            let classified = self.books.run.last_open_items.clone();
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
    fn abandon_unpushed(&mut self, round: &Round, gated: &Gated) -> Result<()> {
        let Gated(changes) = gated;
        let now = Timestamp::now();
        for (_, p) in changes.planned.iter().filter(|(_, p)| !p.carried) {
            if p.result.metadata_applied {
                continue;
            }
            self.books
                .store()
                .append_ledger(&crate::store::LedgerRecord {
                    run_id: self.books.run.run_id.clone(),
                    entry: shepherd_core::LedgerEntry::new(&p.result.item_id, round.n),
                    fix_kind: None,
                    reply_body: None,
                    at: now,
                })?;
        }
        self.books.event(
            Some(round.n),
            "attempt-abandoned",
            serde_json::json!({
                "reason": "push rejected",
                "unpushed_commits": changes.commits,
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
        self.books.run.last_open_items = classified;
        self.books.run.threads_look = Some(ThreadsLook {
            round: n,
            stage: stage.to_owned(),
        });
        self.books.save_run()
    }

    /// Classify the snapshot pr-state fetched.
    fn look_at_threads_of_snapshot(&mut self, n: u32, snapshot: &PrSnapshot) -> Result<()> {
        let (_, classified, _) = threads::classify_snapshot(&self.books, snapshot)?;
        self.books.note_items(&classified);
        self.looked_at_threads(n, "pr-state", classified)
    }
}
