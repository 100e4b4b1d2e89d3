//! What the caller plugs into the engine: progress reporting, the approver,
//! the agents, and test knobs.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use shepherd_agent::{Agent, BuiltinAgent, CommandAgent, CommandConfig, Prompts};
use shepherd_core::config::{AgentRole, Config, Provider};
use shepherd_core::Decision;

use super::error::{EngineError, Result};
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
    /// The verify command, the hard gate before a push (`validate.json`).
    Validate,
    /// The honesty gate (`gate.json`).
    Gate,
    /// Push without force (`push.json`).
    Push,
    /// Replies, resolves and the resolve-retry lane (`replies.json`).
    Replies,
    /// The CI wait (`ci.json`).
    Ci,
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
            Stage::Gate => "gate",
            Stage::Push => "push",
            Stage::Replies => "replies",
            Stage::Ci => "ci",
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
    /// The triage decision.
    pub decision: Decision,
    /// Triage's reasoning.
    pub reasoning: String,
    /// The reply Shepherd would post.
    pub reply: String,
    /// Whether this item needs approval (reply-only decisions); the others
    /// are shown for context.
    pub needs_approval: bool,
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

/// The agents of a run, one per role the loop uses.
#[derive(Clone)]
pub struct Agents {
    /// Triage.
    pub triage: Arc<dyn Agent>,
    /// Fix of an isolated item.
    pub fix: Arc<dyn Agent>,
    /// Fix of a cluster.
    pub cluster_fix: Arc<dyn Agent>,
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

impl Agents {
    /// The `builtin` provider for every role.
    pub fn builtin() -> Self {
        let agent: Arc<dyn Agent> = Arc::new(BuiltinAgent::new());
        Agents {
            triage: agent.clone(),
            fix: agent.clone(),
            cluster_fix: agent,
        }
    }

    /// The agents `config` asks for (`builtin` or `command`), with prompts
    /// from `repo_root/.shepherd/prompts/` when present.
    pub fn from_config(config: &Config, repo_root: &std::path::Path) -> Result<Self> {
        let prompts = Prompts::load(repo_root).unwrap_or_else(|err| {
            tracing::warn!(%err, "cannot load the repository's prompts; using the embedded ones");
            Prompts::builtin()
        });
        let make = |role: AgentRole| -> Result<Arc<dyn Agent>> {
            let settings = config.agent.for_role(role);
            match settings.provider {
                Provider::Builtin => Ok(Arc::new(BuiltinAgent::new())),
                Provider::Command => {
                    let argv = settings
                        .command
                        .as_ref()
                        .map(|c| c.to_argv())
                        .unwrap_or_default();
                    let Some((program, args)) = argv.split_first() else {
                        return Err(EngineError::UnsupportedAgent {
                            provider: "command (without a command)".to_owned(),
                        });
                    };
                    let mut cc = CommandConfig::new(program);
                    cc.args = args.to_vec();
                    cc.args.extend(settings.extra_args.iter().cloned());
                    cc.total_timeout = settings.timeout;
                    if let Some(idle) = settings.idle_timeout {
                        cc.idle_timeout = idle;
                    }
                    cc.env.pass = settings.env.clone();
                    Ok(Arc::new(CommandAgent::new(cc, prompts.clone())))
                }
                other => Err(EngineError::UnsupportedAgent {
                    provider: other.as_str().to_owned(),
                }),
            }
        };
        Ok(Agents {
            triage: make(AgentRole::Triage)?,
            fix: make(AgentRole::Fix)?,
            cluster_fix: make(AgentRole::ClusterFix)?,
        })
    }
}

/// How the engine runs: what it reports to, who approves, and knobs.
#[derive(Clone)]
pub struct EngineOptions {
    /// Where progress goes.
    pub progress: Arc<dyn Progress>,
    /// Who approves reply-only decisions in `prompt` mode; `None` pauses.
    pub approver: Option<Arc<dyn Approver>>,
    /// The agents; `None` builds them from the run's configuration.
    pub agents: Option<Agents>,
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
}

impl std::fmt::Debug for EngineOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineOptions")
            .field("approver", &self.approver.is_some())
            .field("agents", &self.agents)
            .field("ci_poll", &self.ci_poll)
            .field("pid", &self.pid)
            .field("hostname", &self.hostname)
            .finish_non_exhaustive()
    }
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            progress: Arc::new(NoProgress),
            approver: None,
            agents: None,
            ci_poll: None,
            pid: std::process::id(),
            hostname: crate::store::local_hostname(),
            identity: None,
            approve: None,
        }
    }
}
