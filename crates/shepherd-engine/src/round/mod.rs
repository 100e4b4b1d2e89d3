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
//! [`repair`] → [`reviewers`] → [`converge`].
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
//! Every stage has this shape: pr-state, worktree, threads, triage,
//! cluster, approval, fix, validate, review, revalidate, gate, push,
//! replies, ci, reviewers, converge. What the stages need beyond the
//! books is passed part by part: the forge, the configuration or a section
//! of it, the options (worktree, approval's approver, fix's number of
//! parallel fixers), git, and `&mut` of what a stage sets up or learns
//! (the worktree stage's [`Setup`] and the configuration it reads, the
//! threads stage's and converge's access). Where several parts travel
//! together below a stage they form a small type named for what it is
//! (the fixers' `parallel::Merging`, validate's `VerifyFailure`). The
//! [`Runner`] holds the run's parts and its one method is the pipeline,
//! [`Runner::run_round`].

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
pub(crate) mod repair;
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

use shepherd_core::report::ThreadsLook;

pub(crate) use runner::{Books, Runner, Setup};
pub(crate) use state::{Round, RoundEnd, Tally};

use crate::error::Result;
use state::{Fixing, Triaged};

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
        threads::look_at_snapshot(&mut self.books, round.n, &snapshot)?;
        if let Some(end) = stop {
            return Ok(end);
        }
        let (synced, ws) = step!(worktree::stage(
            &mut self.books,
            &self.git,
            &self.opts,
            &mut self.setup,
            &mut self.config,
            round,
            snapshot
        ));
        let items = step!(threads::stage(
            &mut self.books,
            &*self.forge,
            &self.config.trust,
            &mut self.access,
            round,
            &synced,
            &ws
        ));
        tally.items = items.work.len() + items.carried.len();
        self.books
            .looked_at_threads(round.n, "threads", items.classified.clone())?;
        let mut triage = step!(triage::stage(&mut self.books, round, &synced, &ws, &items));
        let earlier_fixes =
            fix::adopt_earlier_fixes(&mut self.books, round, &synced, &ws, &items, &mut triage)
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
        let decided = step!(approval::stage(
            &mut self.books,
            &*self.forge,
            &self.config.approve,
            self.opts.approver.as_ref(),
            round,
            &synced,
            &items,
            triaged
        ));
        let fixing = Fixing {
            round,
            synced: &synced,
            ws: &ws,
            decided: &decided,
        };
        // The checks extend the changes (a fix-up commit) or end the round;
        // one that ends it does so before it commits anything.
        let fixed = fix::stage(
            &mut self.books,
            &*self.forge,
            &self.config,
            self.opts.max_parallel_fixes,
            fixing,
            &items,
        )
        .await?;
        tally.commits = fixed.0.commits.len();
        let validated = step!(validate::stage(
            &mut self.books,
            &self.config,
            fixing,
            fixed
        ));
        tally.commits = validated.0.commits.len();
        let reviewed = step!(review::stage(
            &mut self.books,
            &self.config,
            round,
            &synced,
            &ws,
            validated
        ));
        tally.commits = reviewed.0.commits.len();
        let revalidated = step!(validate::stage_revalidate(
            &mut self.books,
            &self.config,
            round,
            &ws,
            reviewed
        ));
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
                    push::abandon_unpushed(&mut self.books, round, &gated)?;
                }
                return Ok(end);
            }
        };
        tally.pushed.clone_from(&pushed);
        let failures = step!(replies::stage(
            &mut self.books,
            &*self.forge,
            &self.config.approve,
            round,
            &synced,
            &items,
            &decided,
            &gated
        ));
        let poll = (self.opts.ci_poll).unwrap_or_else(|| self.config.ci.poll_interval());
        let waiter = ci::Waiter {
            forge: &*self.forge,
            config: &self.config.ci,
            poll,
        };
        let ci = ci::stage(&mut self.books, waiter, round, &synced, pushed.as_deref()).await?;
        let repaired = step!(repair::stage(
            &mut self.books,
            waiter,
            &self.config,
            round,
            &synced,
            &ws,
            pushed.as_deref(),
            ci
        ));
        let (ci, pushed) = (repaired.ci, repaired.pushed);
        tally.ci = Some(ci.status);
        tally.pushed.clone_from(&pushed);
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
            self.books
                .looked_at_threads(round.n, ThreadsLook::CONVERGE, classified)?;
        }
        Ok(end)
    }
}
