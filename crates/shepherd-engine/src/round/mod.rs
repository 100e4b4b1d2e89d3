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

pub(crate) mod approval;
pub(crate) mod ci;
pub(crate) mod cluster;
pub(crate) mod converge;
pub(crate) mod fix;
pub(crate) mod gate;
pub(crate) mod guard;
pub(crate) mod metadata;
pub(crate) mod parallel;
pub(crate) mod pr_state;
pub(crate) mod push;
pub(crate) mod replies;
pub(crate) mod review;
pub(crate) mod threads;
pub(crate) mod triage;
pub(crate) mod validate;
pub(crate) mod worktree;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use shepherd_agent::{AgentContext, TriageDecision, UsageLog};
use shepherd_core::ci::CiVerdict;
use shepherd_core::classify::{Classified, ItemKind};
use shepherd_core::cluster::ClusterReport;
use shepherd_core::config::Config;
use shepherd_core::gate::{GateItem, GateItemKind, ItemResult};
use shepherd_core::model::{AuthorKind, PrSnapshot, ReviewThread, TopLevelComment};
use shepherd_core::report::{PublicFailure, RoleUsage, ThreadsLook};
use shepherd_core::{Decision, Ledger};
use shepherd_forge::Forge;

use crate::run::error::Result;
use crate::run::files::{write_json, PauseKind, RunDir, RunFile};
use crate::run::options::{Agents, CheckAgents, EngineOptions, ProgressEvent, Stage};
use crate::store::{Store, Timestamp};
use crate::worktree::{Git, Worktree};

/// How a round ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RoundEnd {
    /// CI green, nothing new, nothing pending: the run converged.
    Converged,
    /// Not converged; another round may follow.
    Next { note: String },
    /// The push was rejected (someone pushed meanwhile): re-sync and re-run.
    Restart { note: String },
    /// The run waits for a person.
    Paused { kind: PauseKind, reason: String },
    /// The run failed.
    Failed { reason: String },
    /// The PR is closed or merged: nothing more to do.
    Ended { reason: String },
}

/// A stage's verdict: go on, or end the round.
pub(crate) type Flow = std::result::Result<(), RoundEnd>;

/// One item the round acts on, with what the snapshot says of it.
#[derive(Debug, Clone)]
pub(crate) struct WorkItem {
    pub(crate) classified: Classified,
    pub(crate) thread: Option<ReviewThread>,
    pub(crate) comment: Option<TopLevelComment>,
}

impl WorkItem {
    pub(crate) fn id(&self) -> &str {
        &self.classified.item_id
    }

    /// The item's lexical theme, from its opening comment: what an item
    /// gets when triage gave none (the cluster stage and escalation areas
    /// must agree on it).
    pub(crate) fn lexical_theme(&self) -> shepherd_core::theme::Theme {
        let body = match (&self.thread, &self.comment) {
            (Some(t), _) => t.root().map_or("", |c| c.body.as_str()),
            (None, Some(c)) => c.body.as_str(),
            (None, None) => "",
        };
        shepherd_core::theme::classify_theme_at(body, None, self.classified.path.as_deref())
    }

    /// The comment a reply answers: the thread's root, or the comment itself.
    pub(crate) fn reply_target(&self) -> String {
        match (&self.thread, &self.comment) {
            (Some(t), _) => t.root().map(|c| c.id.clone()).unwrap_or_default(),
            (None, Some(c)) => c.id.clone(),
            (None, None) => String::new(),
        }
    }

    /// The item as the honesty gate sees it.
    pub(crate) fn gate_item(&self) -> GateItem {
        let kind = match &self.thread {
            Some(t) => GateItemKind::ReviewThread {
                root_comment_id: self.reply_target(),
                path: t.path.clone(),
                // A deleted author counts as a person: the cautious side.
                opened_by_human: t
                    .root()
                    .and_then(|c| c.author.as_ref())
                    .is_none_or(|a| a.kind != AuthorKind::Bot),
            },
            None => GateItemKind::TopLevel {
                comment_id: self.reply_target(),
            },
        };
        GateItem {
            id: self.id().to_owned(),
            kind,
        }
    }

    /// The item as the report lists one it did not act on.
    pub(crate) fn attention(
        &self,
        kind: shepherd_core::report::AttentionKind,
        why: String,
    ) -> shepherd_core::report::AttentionItem {
        let body = match (&self.thread, &self.comment) {
            (Some(t), _) => t.root().map_or("", |c| c.body.as_str()),
            (None, Some(c)) => c.body.as_str(),
            (None, None) => "",
        };
        shepherd_core::report::AttentionItem {
            kind,
            path: self.classified.path.clone(),
            line: self.classified.line,
            item_id: self.id().to_owned(),
            url: self.classified.url.clone(),
            excerpt: shepherd_core::report::excerpt(body),
            why,
        }
    }

    /// Every comment id the snapshot showed on the item.
    pub(crate) fn comment_ids(&self) -> Vec<String> {
        match (&self.thread, &self.comment) {
            (Some(t), _) => t.comments.iter().map(|c| c.id.clone()).collect(),
            (None, Some(c)) => vec![c.id.clone()],
            (None, None) => Vec::new(),
        }
    }
}

/// What the round means to make public about one item.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Planned {
    /// What the gate checks.
    pub(crate) result: ItemResult,
    /// Thread, issue comment or review body.
    pub(crate) kind: ItemKind,
    /// How it was fixed.
    pub(crate) fix_kind: Option<String>,
    /// What the fixer said it did.
    pub(crate) summary: String,
    /// Whether it comes from an earlier attempt of the run (already fixed,
    /// pushed or approved; not yet replied).
    pub(crate) carried: bool,
}

/// The state of one round as its stages build it.
pub(crate) struct Round {
    pub(crate) n: u32,
    pub(crate) dir: PathBuf,
    pub(crate) snapshot: Option<PrSnapshot>,
    pub(crate) ledger: Ledger,
    pub(crate) classified: Vec<Classified>,
    /// New, trusted items to triage and act on.
    pub(crate) work: Vec<WorkItem>,
    /// Items carried from an earlier attempt (fixed or approved, not replied).
    pub(crate) carried: Vec<(WorkItem, Planned)>,
    /// Threads whose authorized resolve has not succeeded.
    pub(crate) resolve_retry: Vec<WorkItem>,
    pub(crate) triage: BTreeMap<String, TriageDecision>,
    /// Items a Shepherd commit already on the PR fixes (an earlier run
    /// whose reply was lost), with that commit.
    pub(crate) earlier_fixes: BTreeMap<String, String>,
    pub(crate) approved: BTreeMap<String, Decision>,
    pub(crate) reply_override: BTreeMap<String, String>,
    pub(crate) clusters: Option<ClusterReport>,
    /// Items escalated to a person, with the context sentence.
    pub(crate) escalated: BTreeMap<String, String>,
    /// Every result of the round (new and carried), in reply order.
    pub(crate) planned: Vec<(WorkItem, Planned)>,
    /// The head the round started from (after the sync).
    pub(crate) start_sha: String,
    /// Commits the round made.
    pub(crate) commits: Vec<String>,
    /// What the round pushed.
    pub(crate) pushed: Option<String>,
    pub(crate) failures: Vec<PublicFailure>,
    pub(crate) ci: Option<CiVerdict>,
    pub(crate) stalled: bool,
    /// Fix-validation verdicts of the round's agent fixes (`validate.json`).
    pub(crate) fix_validations: Vec<parallel::FixValidationRecord>,
    /// The last verify run: at which HEAD, and whether it passed.
    pub(crate) verified: Option<validate::Verified>,
}

impl Round {
    pub(crate) fn new(n: u32, dir: PathBuf) -> Self {
        Round {
            n,
            dir,
            snapshot: None,
            ledger: Ledger::new(),
            classified: Vec::new(),
            work: Vec::new(),
            carried: Vec::new(),
            resolve_retry: Vec::new(),
            triage: BTreeMap::new(),
            earlier_fixes: BTreeMap::new(),
            approved: BTreeMap::new(),
            reply_override: BTreeMap::new(),
            clusters: None,
            escalated: BTreeMap::new(),
            planned: Vec::new(),
            start_sha: String::new(),
            commits: Vec::new(),
            pushed: None,
            failures: Vec::new(),
            ci: None,
            stalled: false,
            fix_validations: Vec::new(),
            verified: None,
        }
    }

    pub(crate) fn snapshot(&self) -> &PrSnapshot {
        // Every stage after `pr-state` runs with a snapshot: pr_state sets it
        // or ends the round.
        self.snapshot
            .as_ref()
            .unwrap_or_else(|| unreachable!("stages after pr-state always have a snapshot"))
    }
}

/// Everything a run's rounds work with.
pub(crate) struct Runner {
    pub(crate) forge: Arc<dyn Forge>,
    pub(crate) agents: Option<Agents>,
    /// The state store, behind a mutex so that a run's future is `Send`
    /// (never held across an await).
    pub(crate) store: std::sync::Mutex<Store>,
    pub(crate) config: Config,
    pub(crate) opts: EngineOptions,
    pub(crate) run: RunFile,
    pub(crate) dir: RunDir,
    pub(crate) git: Git,
    pub(crate) worktree: Option<Arc<Worktree>>,
    /// The configuration the run was started with; `None` for a run of an
    /// older version resumed from its `config.toml`.
    pub(crate) config_record: Option<crate::run::config::ConfigRecord>,
}

impl Runner {
    /// The state store.
    pub(crate) fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Report progress.
    pub(crate) fn emit(&self, event: ProgressEvent) {
        self.opts.progress.event(&event);
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

    /// Save `run.json`.
    pub(crate) fn save_run(&self) -> Result<()> {
        self.dir.save(&self.run)
    }

    /// The worktree; stages after `worktree` always have one.
    pub(crate) fn wt(&self) -> Arc<Worktree> {
        self.worktree
            .clone()
            .unwrap_or_else(|| unreachable!("stages after worktree always have one"))
    }

    /// The agents; stages after `worktree` always have them.
    pub(crate) fn agents(&self) -> &Agents {
        self.agents
            .as_ref()
            .unwrap_or_else(|| unreachable!("agents are set once the configuration is read"))
    }

    /// Run a blocking git operation off the async threads.
    pub(crate) async fn git<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Worktree) -> std::result::Result<T, crate::worktree::WorktreeError>
            + Send
            + 'static,
    {
        let wt = self.wt();
        tokio::task::spawn_blocking(move || f(&wt))
            .await
            .map_err(|e| crate::run::error::EngineError::Task(e.to_string()))?
            .map_err(Into::into)
    }

    /// The context of one agent call of `round`: transcripts in
    /// `rounds/N/agents/<label>.attempt-K.json`, usage into `usage`.
    pub(crate) fn agent_ctx(round: &Round, label: &str, usage: &UsageLog) -> AgentContext {
        AgentContext::new(round.dir.join("agents"), label).with_usage(usage.clone())
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
        let agent = &mut self.run.agent;
        agent.calls += 1;
        agent.millis = agent.millis.saturating_add(millis);
        if !agent.providers.iter().any(|p| p == provider) {
            agent.providers.push(provider.to_owned());
        }
        let tokens = match (total.input_tokens, total.output_tokens) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
        if let Some(t) = tokens {
            agent.tokens = Some(agent.tokens.unwrap_or(0) + t);
        }
        if let Some(c) = total.cost_usd {
            agent.cost_usd = Some(agent.cost_usd.unwrap_or(0.0) + c);
        }
        let idx = match agent.roles.iter().position(|r| r.role == role) {
            Some(i) => i,
            None => {
                agent.roles.push(RoleUsage {
                    role: role.to_owned(),
                    ..RoleUsage::default()
                });
                agent.roles.len() - 1
            }
        };
        let r = &mut agent.roles[idx];
        r.calls += 1;
        r.millis = r.millis.saturating_add(millis);
        if !r.providers.iter().any(|p| p == provider) {
            r.providers.push(provider.to_owned());
        }
        let add = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
        r.input_tokens = add(r.input_tokens, total.input_tokens);
        r.output_tokens = add(r.output_tokens, total.output_tokens);
        if let Some(c) = total.cost_usd {
            r.cost_usd = Some(r.cost_usd.unwrap_or(0.0) + c);
        }
    }

    /// The checking agents (fix-validation, review, apply-review); set once
    /// the configuration is read.
    pub(crate) fn checks(&self) -> &CheckAgents {
        self.opts
            .check_agents
            .as_ref()
            .unwrap_or_else(|| unreachable!("check agents are set once the configuration is read"))
    }

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
                crate::run::files::ItemInfo {
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

/// The outcome a reply-only decision states.
pub(crate) fn reply_only_outcome(decision: Decision) -> Option<shepherd_core::Outcome> {
    use shepherd_core::Outcome;
    match decision {
        Decision::Question => Some(Outcome::Replied),
        Decision::Wontfix => Some(Outcome::Declined),
        Decision::AlreadyAddressed | Decision::Invalid => Some(Outcome::NotAddressing),
        Decision::NeedsHuman => Some(Outcome::NeedsHuman),
        Decision::CodeChange | Decision::MetadataChange => None,
    }
}

/// Whether a decision only replies (and so needs approval).
pub(crate) fn is_reply_only(decision: Decision) -> bool {
    reply_only_outcome(decision).is_some()
}

/// `code-change`, as SPEC spells decisions.
pub(crate) fn decision_name(decision: Decision) -> String {
    serde_json::to_value(decision)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{decision:?}"))
}
