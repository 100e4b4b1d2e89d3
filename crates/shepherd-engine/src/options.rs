//! What the caller plugs into the engine: progress reporting, the approver,
//! the agents, and test knobs.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use shepherd_agent::prompts::PromptError;
use shepherd_agent::{agent_for, Agent, BuiltinAgent, Prompts, SettingsError};
use shepherd_core::config::{AgentRole, Config};
use shepherd_core::Decision;

use crate::store::RunStatus;

/// The named stages of a round (SPEC section 3), in order. Each writes its
/// artifact into `rounds/N/` of the run directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// PR state: head, base, state, fork, pending review (`pr-state.json`).
    PrState,
    /// The run's worktree, re-synced to the live head (`worktree.json`).
    Worktree,
    /// Threads fetched and classified (`threads.json`).
    Threads,
    /// Triage of the new items (`triage.json`).
    Triage,
    /// Cluster gate and grouping (`clusters.json`).
    Cluster,
    /// Approval of reply-only decisions (`approval.json`).
    Approval,
    /// Fixes and their commits (`results.json`).
    Fix,
    /// The verify command on the round's commits, with one repair attempt,
    /// and fix-validation verdicts (`validate.json`, `verify.log`).
    Validate,
    /// The pre-push review of the commits the forge has not seen
    /// (`pre-push-review.md`, `pre-push-review.json`).
    Review,
    /// The verify command again, the hard gate before a push
    /// (`revalidate.json`).
    Revalidate,
    /// The honesty gate (`gate.json`).
    Gate,
    /// Push without force (`push.json`).
    Push,
    /// Replies, resolves and the resolve-retry lane (`replies.json`).
    Replies,
    /// The CI wait (`ci.json`).
    Ci,
    /// The failing checks of a pushed head: their logs read, each
    /// classified (`repair.json`).
    Repair,
    /// The wait for the awaited reviewers' review of the head
    /// (`reviewers.json`).
    Reviewers,
    /// Post-CI re-fetch and the convergence check (`mergeability.json`).
    Converge,
}

impl Stage {
    /// The stage's name (`pr-state`), also what the store records.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::PrState => "pr-state",
            Stage::Worktree => "worktree",
            Stage::Threads => "threads",
            Stage::Triage => "triage",
            Stage::Cluster => "cluster",
            Stage::Approval => "approval",
            Stage::Fix => "fix",
            Stage::Validate => "validate",
            Stage::Review => "review",
            Stage::Revalidate => "revalidate",
            Stage::Gate => "gate",
            Stage::Push => "push",
            Stage::Replies => "replies",
            Stage::Ci => "ci",
            Stage::Repair => "repair",
            Stage::Reviewers => "reviewers",
            Stage::Converge => "converge",
        }
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Something the engine reports while it works.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum ProgressEvent {
    /// A run started or resumed.
    RunStarted {
        /// The run id.
        run_id: String,
        /// The target, as a person reads it.
        target: String,
        /// Whether this is a resume.
        resumed: bool,
    },
    /// A round started.
    RoundStarted {
        /// The round.
        round: u32,
    },
    /// A stage finished.
    Stage {
        /// The round.
        round: u32,
        /// The stage.
        stage: Stage,
        /// One line saying what it did.
        summary: String,
    },
    /// A long wait is still going on (CI).
    Waiting {
        /// The round.
        round: u32,
        /// What is waited for.
        what: String,
    },
    /// A note worth showing (a stale lock taken over, a rejected push).
    Note {
        /// The note.
        message: String,
    },
    /// The run stopped.
    RunFinished {
        /// The run id.
        run_id: String,
        /// How it ended.
        status: RunStatus,
        /// Why.
        reason: Option<String>,
    },
}

/// Receives [`ProgressEvent`]s; the CLI prints one line per stage.
pub trait Progress: Send + Sync {
    /// Called for each event, on the engine's task; must not block long.
    fn event(&self, event: &ProgressEvent);
}

/// A [`Progress`] that shows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn event(&self, _event: &ProgressEvent) {}
}

/// One item the approver sees.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalItem {
    /// The item id.
    pub item_id: String,
    /// Its file, for threads.
    pub path: Option<String>,
    /// Its line, for threads.
    pub line: Option<u32>,
    /// Who opened it.
    pub author: Option<String>,
    /// The web URL of its first comment.
    #[serde(default)]
    pub url: Option<String>,
    /// The first line of its first comment, shortened.
    #[serde(default)]
    pub excerpt: String,
    /// The triage decision.
    pub decision: Decision,
    /// Triage's reasoning.
    pub reasoning: String,
    /// The reply Shepherd would post.
    pub reply: String,
    /// Whether this item needs approval (reply-only decisions); the others
    /// are shown for context.
    pub needs_approval: bool,
    /// Whether `reply` is posted once approved: false for a needs-human
    /// item Shepherd reports to you only (`approve.reply_needs_human =
    /// false`); a reply the approver writes is posted all the same.
    #[serde(default = "posted_by_default")]
    pub reply_posted: bool,
}

/// A request written before `reply_posted` existed posted every reply.
fn posted_by_default() -> bool {
    true
}

/// What the approver is asked (the triage table of one round).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// The run.
    pub run_id: String,
    /// The round.
    pub round: u32,
    /// Every new item of the round.
    pub items: Vec<ApprovalItem>,
}

/// One change the approver makes to an item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalChange {
    /// The item.
    pub item_id: String,
    /// The decision to act on instead of triage's.
    pub decision: Option<Decision>,
    /// The reply to post instead of the drafted one.
    pub reply: Option<String>,
}

/// The approver's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ApprovalVerdict {
    /// Approve every item, with these changes.
    Approve(Vec<ApprovalChange>),
    /// Reject: the run acts on nothing and stops.
    Reject,
    /// Not now: the run pauses (exit 3) and can be approved later.
    Defer,
}

/// Asks a person to approve reply-only decisions (the CLI's TTY prompt).
/// Without one, a run in `prompt` mode pauses instead.
pub trait Approver: Send + Sync {
    /// Ask; may block on the terminal.
    fn review(&self, request: &ApprovalRequest) -> ApprovalVerdict;
}

/// The agents of the fix loop's core roles: triage, fix, cluster-fix.
#[derive(Clone)]
pub struct Agents {
    /// Triage.
    pub triage: Arc<dyn Agent>,
    /// Fix of an isolated item (and of a metadata item, and the repair of a
    /// fix that broke the verify command when fix-validation is builtin).
    pub fix: Arc<dyn Agent>,
    /// Fix of a cluster.
    pub cluster_fix: Arc<dyn Agent>,
}

/// The agents of the checking roles: fix-validation, review, apply-review.
#[derive(Clone)]
pub struct CheckAgents {
    /// Judges whether each fix addresses its comment (read-only), and
    /// repairs a fix that broke the verify command.
    pub fix_validation: Arc<dyn Agent>,
    /// The pre-push review (read-only).
    pub review: Arc<dyn Agent>,
    /// Fixes the pre-push review findings that held.
    pub apply_review: Arc<dyn Agent>,
}

impl std::fmt::Debug for Agents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agents")
            .field("triage", &self.triage.name())
            .field("fix", &self.fix.name())
            .field("cluster_fix", &self.cluster_fix.name())
            .finish()
    }
}

impl std::fmt::Debug for CheckAgents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckAgents")
            .field("fix_validation", &self.fix_validation.name())
            .field("review", &self.review.name())
            .field("apply_review", &self.apply_review.name())
            .finish()
    }
}

/// Why the agents of a run cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum AgentSetupError {
    /// A role's provider settings are wrong.
    #[error("cannot set up the agents: {0}")]
    Settings(#[from] SettingsError),
    /// A prompt override of the user's checkout is invalid.
    #[error("cannot load the prompt overrides of {checkout}: {source}")]
    Prompts {
        /// The checkout whose `.shepherd/prompts/` was read.
        checkout: PathBuf,
        /// What is wrong.
        #[source]
        source: PromptError,
    },
}

/// The prompts of a run: `checkout/.shepherd/prompts/` over the embedded
/// ones, or the embedded ones without a checkout.
fn prompts(checkout: Option<&Path>) -> std::result::Result<Prompts, AgentSetupError> {
    match checkout {
        Some(root) => Prompts::load(root).map_err(|source| AgentSetupError::Prompts {
            checkout: root.to_path_buf(),
            source,
        }),
        None => Ok(Prompts::builtin()),
    }
}

/// The agent `config` asks for in each role, with the prompts of
/// `checkout` ([`Agents::from_config`]).
fn role_agents<'a>(
    config: &'a Config,
    checkout: Option<&Path>,
) -> std::result::Result<
    impl Fn(AgentRole) -> std::result::Result<Arc<dyn Agent>, SettingsError> + 'a,
    AgentSetupError,
> {
    let prompts = prompts(checkout)?;
    Ok(move |role: AgentRole| agent_for(&config.agent.for_role(role), prompts.clone()))
}

impl Agents {
    /// The `builtin` provider for every role.
    pub fn builtin() -> Self {
        Agents::all(Arc::new(BuiltinAgent::new()))
    }

    /// The same provider for every role.
    pub fn all(agent: Arc<dyn Agent>) -> Self {
        Agents {
            triage: agent.clone(),
            fix: agent.clone(),
            cluster_fix: agent,
        }
    }

    /// The agents `config` asks for, one per role, each built by
    /// [`shepherd_agent::agent_for`] from `config.agent.for_role(role)`
    /// (any provider: `builtin`, `command`, `claude`, `codex`, `copilot`,
    /// `gemini`, `opencode`).
    ///
    /// Prompts come from `checkout/.shepherd/prompts/` (the user's own
    /// checkout, where `shepherd run` was started), never from the pull
    /// request's worktree: a pull request cannot rewrite the instructions
    /// its own agents get. Without a checkout the embedded prompts are used.
    /// An invalid override is an error, not silently skipped.
    pub fn from_config(
        config: &Config,
        checkout: Option<&Path>,
    ) -> std::result::Result<Self, AgentSetupError> {
        let make = role_agents(config, checkout)?;
        Ok(Agents {
            triage: make(AgentRole::Triage)?,
            fix: make(AgentRole::Fix)?,
            cluster_fix: make(AgentRole::ClusterFix)?,
        })
    }
}

impl CheckAgents {
    /// The `builtin` provider for every checking role: no fix-validation,
    /// no repair by it, no pre-push review.
    pub fn builtin() -> Self {
        CheckAgents::all(Arc::new(BuiltinAgent::new()))
    }

    /// The same provider for every checking role.
    pub fn all(agent: Arc<dyn Agent>) -> Self {
        CheckAgents {
            fix_validation: agent.clone(),
            review: agent.clone(),
            apply_review: agent,
        }
    }

    /// The checking agents `config` asks for, like [`Agents::from_config`].
    pub fn from_config(
        config: &Config,
        checkout: Option<&Path>,
    ) -> std::result::Result<Self, AgentSetupError> {
        let make = role_agents(config, checkout)?;
        Ok(CheckAgents {
            fix_validation: make(AgentRole::FixValidation)?,
            review: make(AgentRole::Review)?,
            apply_review: make(AgentRole::ApplyReview)?,
        })
    }
}

/// Whether `agent` is the `builtin` provider (no model).
pub(crate) fn is_builtin(agent: &dyn Agent) -> bool {
    agent.name() == "builtin"
}

/// The fields of a pull request a metadata fix edits: the forge's type.
pub type PrFields = shepherd_forge::PullRequestFields;

/// How the engine runs: what it reports to, who approves, and knobs.
#[derive(Clone)]
pub struct EngineOptions {
    /// Where progress goes.
    pub progress: Arc<dyn Progress>,
    /// Who approves reply-only decisions in `prompt` mode; `None` pauses.
    pub approver: Option<Arc<dyn Approver>>,
    /// The agents of triage, fix and cluster-fix; `None` builds them from
    /// the run's configuration.
    pub agents: Option<Agents>,
    /// The agents of fix-validation, review and apply-review; `None` builds
    /// them from the run's configuration, or, when `agents` is given, makes
    /// them builtin (an embedder that injects agents gets no checks it did
    /// not ask for).
    pub check_agents: Option<CheckAgents>,
    /// The first CI poll interval, overriding `ci.poll_interval_secs`
    /// (tests poll in milliseconds).
    pub ci_poll: Option<Duration>,
    /// This process's id (the lock holder).
    pub pid: u32,
    /// This host's name (the lock holder).
    pub hostname: String,
    /// Commit as this name and email; `None` uses git's configured identity,
    /// else `Shepherd <shepherd@localhost>`.
    pub identity: Option<(String, String)>,
    /// On resume, the approval mode to use instead of the run's
    /// (`shepherd resume --approve auto`).
    pub approve: Option<shepherd_core::config::ApproveMode>,
    /// On resume, post the drafted reply of items Shepherd could not judge
    /// (`shepherd resume --reply-needs-human`), whatever the run's
    /// configuration says.
    pub reply_needs_human: bool,
    /// The user's checkout (where `shepherd run` was started): prompt
    /// overrides are read from its `.shepherd/prompts/`, never from the pull
    /// request. `None` uses the embedded prompts.
    pub checkout: Option<PathBuf>,
    /// How many fix agents run at once (at least 1).
    pub max_parallel_fixes: usize,
}

/// How many fix agents run at once by default.
pub const DEFAULT_PARALLEL_FIXES: usize = 4;

impl std::fmt::Debug for EngineOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineOptions")
            .field("approver", &self.approver.is_some())
            .field("agents", &self.agents)
            .field("check_agents", &self.check_agents)
            .field("ci_poll", &self.ci_poll)
            .field("pid", &self.pid)
            .field("hostname", &self.hostname)
            .field("checkout", &self.checkout)
            .field("max_parallel_fixes", &self.max_parallel_fixes)
            .finish_non_exhaustive()
    }
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            progress: Arc::new(NoProgress),
            approver: None,
            agents: None,
            check_agents: None,
            ci_poll: None,
            pid: std::process::id(),
            hostname: crate::store::local_hostname(),
            identity: None,
            approve: None,
            reply_needs_human: false,
            checkout: None,
            max_parallel_fixes: DEFAULT_PARALLEL_FIXES,
        }
    }
}
