//! The typed configuration: [`Config`] and one struct per section, with
//! their defaults and the questions the rest of Shepherd asks of them.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::names::{AgentRole, ApproveMode, CommandSpec, OnExhaust, Provider};
use crate::model::{Author, AuthorKind};

/// Shepherd's configuration. Every section has its defaults; see the module
/// documentation for layering and validation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// `[agent]`: which agent runs each role.
    pub agent: AgentConfig,
    /// `[loop]`: how many rounds, and what happens at the limit.
    #[serde(rename = "loop")]
    pub loop_: LoopConfig,
    /// `[approve]`: approval of reply-only decisions.
    pub approve: ApproveConfig,
    /// `[resolve]`: which threads may be resolved.
    pub resolve: ResolveConfig,
    /// `[cluster]`: clustering of related feedback.
    pub cluster: ClusterConfig,
    /// `[verify]`: the command that checks a fix.
    pub verify: VerifyConfig,
    /// `[ci]`: waiting for checks.
    pub ci: CiConfig,
    /// `[trust]`: whose comments are acted on.
    pub trust: TrustConfig,
    /// `[paths]`: paths never committed to.
    pub paths: PathsConfig,
    /// `[forge]`: hosts of self-managed forges, and their CA.
    pub forge: ForgeConfig,
    /// `[review]`: the pre-push review.
    pub review: ReviewConfig,
    /// `[reviewers]`: whose review of each pushed head is awaited.
    pub reviewers: ReviewersConfig,
}

/// `[agent]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    /// Which agent runs every role unless a role overrides it. `builtin`
    /// needs no model: it applies suggestion blocks and marks everything else
    /// needs-human.
    pub provider: Provider,
    /// Model passed to the provider; unset uses the provider's own default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Total seconds an agent call may take before its process group is killed.
    pub timeout_secs: u64,
    /// Seconds without output after which an agent call is killed; 0 disables.
    pub idle_timeout_secs: u64,
    /// Extra arguments appended to the provider's command line.
    pub extra_args: Vec<String>,
    /// The executable for `provider = "command"`: a string run by `sh -c`, or
    /// an array run directly. It gets the task as JSON on stdin and answers JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<CommandSpec>,
    /// Extra environment variables passed to agents, beyond the built-in
    /// allow-list. Forge credentials are refused.
    pub env: Vec<String>,
    /// `[agent.roles.<role>]`: per-role overrides.
    #[serde(skip_serializing_if = "RoleOverrides::is_empty")]
    pub roles: RoleOverrides,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            provider: Provider::Builtin,
            model: None,
            timeout_secs: 1800,
            idle_timeout_secs: 600,
            extra_args: Vec::new(),
            command: None,
            env: Vec::new(),
            roles: RoleOverrides::default(),
        }
    }
}

/// `[agent.roles]`: one optional table per role.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RoleOverrides {
    /// `[agent.roles.triage]`.
    #[serde(skip_serializing_if = "RoleOverride::is_empty")]
    pub triage: RoleOverride,
    /// `[agent.roles.fix]`.
    #[serde(skip_serializing_if = "RoleOverride::is_empty")]
    pub fix: RoleOverride,
    /// `[agent.roles.cluster-fix]`.
    #[serde(rename = "cluster-fix", skip_serializing_if = "RoleOverride::is_empty")]
    pub cluster_fix: RoleOverride,
    /// `[agent.roles.fix-validation]`.
    #[serde(
        rename = "fix-validation",
        skip_serializing_if = "RoleOverride::is_empty"
    )]
    pub fix_validation: RoleOverride,
    /// `[agent.roles.review]`.
    #[serde(skip_serializing_if = "RoleOverride::is_empty")]
    pub review: RoleOverride,
    /// `[agent.roles.apply-review]`.
    #[serde(
        rename = "apply-review",
        skip_serializing_if = "RoleOverride::is_empty"
    )]
    pub apply_review: RoleOverride,
    /// `[agent.roles.report-narrative]`.
    #[serde(
        rename = "report-narrative",
        skip_serializing_if = "RoleOverride::is_empty"
    )]
    pub report_narrative: RoleOverride,
}

impl RoleOverrides {
    /// The override of one role.
    pub fn get(&self, role: AgentRole) -> &RoleOverride {
        match role {
            AgentRole::Triage => &self.triage,
            AgentRole::Fix => &self.fix,
            AgentRole::ClusterFix => &self.cluster_fix,
            AgentRole::FixValidation => &self.fix_validation,
            AgentRole::Review => &self.review,
            AgentRole::ApplyReview => &self.apply_review,
            AgentRole::ReportNarrative => &self.report_narrative,
        }
    }

    /// Whether no role overrides anything.
    pub fn is_empty(&self) -> bool {
        AgentRole::ALL.iter().all(|r| self.get(*r).is_empty())
    }
}

/// `[agent.roles.<role>]`: what one role does differently from `[agent]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RoleOverride {
    /// The role's provider; unset inherits `agent.provider`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<Provider>,
    /// The role's model; unset inherits `agent.model` when the role keeps the
    /// provider of `[agent]`, else the provider's own default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The role's total timeout; unset inherits `agent.timeout_secs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// The role's idle timeout; unset inherits `agent.idle_timeout_secs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_timeout_secs: Option<u64>,
    /// The role's extra arguments; unset inherits `agent.extra_args` when the
    /// role keeps the provider of `[agent]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_args: Option<Vec<String>>,
    /// The role's command (provider `command`); unset inherits
    /// `agent.command` when the role keeps the provider of `[agent]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<CommandSpec>,
}

impl RoleOverride {
    /// Whether the role overrides nothing.
    pub fn is_empty(&self) -> bool {
        *self == RoleOverride::default()
    }
}

/// What one role runs with, `[agent]` and its override combined
/// ([`AgentConfig::for_role`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSettings {
    /// The role.
    pub role: AgentRole,
    /// The provider.
    pub provider: Provider,
    /// The model, or the provider's default.
    pub model: Option<String>,
    /// Total timeout.
    pub timeout: Duration,
    /// Idle timeout; `None` when disabled.
    pub idle_timeout: Option<Duration>,
    /// Extra arguments for the provider's command line.
    pub extra_args: Vec<String>,
    /// The command, for provider `command` (always set then, once validated).
    pub command: Option<CommandSpec>,
    /// Extra environment variable names passed to the agent.
    pub env: Vec<String>,
}

impl AgentConfig {
    /// The settings one role runs with. Timeouts inherit from `[agent]`
    /// always; model, extra arguments and command only when the role keeps
    /// the provider of `[agent]` (a model name of one provider means nothing
    /// to another).
    pub fn for_role(&self, role: AgentRole) -> AgentSettings {
        let o = self.roles.get(role);
        let provider = o.provider.unwrap_or(self.provider);
        let same = provider == self.provider;
        let idle = o.idle_timeout_secs.unwrap_or(self.idle_timeout_secs);
        AgentSettings {
            role,
            provider,
            model: o
                .model
                .clone()
                .or_else(|| same.then(|| self.model.clone()).flatten()),
            timeout: Duration::from_secs(o.timeout_secs.unwrap_or(self.timeout_secs)),
            idle_timeout: (idle > 0).then(|| Duration::from_secs(idle)),
            extra_args: o.extra_args.clone().unwrap_or_else(|| {
                if same {
                    self.extra_args.clone()
                } else {
                    Vec::new()
                }
            }),
            command: o
                .command
                .clone()
                .or_else(|| same.then(|| self.command.clone()).flatten()),
            env: self.env.clone(),
        }
    }
}

/// `[loop]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoopConfig {
    /// Most rounds a run makes (at least 1).
    pub max_rounds: u32,
    /// What reaching `max_rounds` without convergence does.
    pub on_exhaust: OnExhaust,
    /// Whether a run that ends `handed-off` (the loop is done, but items
    /// wait for a person) exits 0. Off by default: a CI job stays red
    /// while the PR is not clear, so nobody merges on a green check that
    /// only means "Shepherd is done".
    pub succeed_when_handed_off: bool,
}

impl Default for LoopConfig {
    fn default() -> Self {
        LoopConfig {
            max_rounds: 8,
            on_exhaust: OnExhaust::Approval,
            succeed_when_handed_off: false,
        }
    }
}

/// `[approve]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApproveConfig {
    /// How reply-only decisions are approved.
    pub mode: ApproveMode,
    /// Whether approved wontfix decisions resolve their threads.
    pub resolve_wontfix: bool,
    /// Whether an item Shepherd could not judge (`needs-human`) is answered
    /// on the forge with the drafted reply; false reports it to the user
    /// only (a reply a person wrote at approval is always posted).
    pub reply_needs_human: bool,
}

/// `[resolve]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ResolveConfig {
    /// Whether threads opened by a person may be resolved; false leaves them
    /// for the person.
    pub human_threads: bool,
}

impl Default for ResolveConfig {
    fn default() -> Self {
        ResolveConfig {
            human_threads: true,
        }
    }
}

/// `[cluster]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClusterConfig {
    /// Whether related feedback is clustered and fixed at its root.
    pub enabled: bool,
    /// New items in a round that open the cluster gate (at least 2).
    pub min_volume: usize,
    /// Consecutive fix rounds of new feedback on one area before it is
    /// escalated to a human; 0 disables escalation.
    pub escalate_after: u32,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            enabled: true,
            min_volume: crate::cluster::DEFAULT_MIN_VOLUME,
            escalate_after: crate::cluster::DEFAULT_ESCALATE_AFTER,
        }
    }
}

/// `[verify]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VerifyConfig {
    /// The command that checks a fix; unset: `verify.sh`, `.shepherd/verify`,
    /// or the project's obvious test command.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<CommandSpec>,
    /// Seconds the verify command may take.
    pub timeout_secs: u64,
}

impl Default for VerifyConfig {
    fn default() -> Self {
        VerifyConfig {
            command: None,
            timeout_secs: 1800,
        }
    }
}

impl VerifyConfig {
    /// `timeout_secs` as a duration.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs)
    }
}

/// `[ci]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CiConfig {
    /// Seconds to wait for the checks of a pushed head before the verdict is
    /// `UNKNOWN`.
    pub timeout_secs: u64,
    /// The longest wait, in seconds, between two looks at the checks (the first looks come sooner: after 2, 4, 8 s).
    pub poll_interval_secs: u64,
    /// Seconds to wait for checks to appear on a new head (within `timeout_secs`).
    pub appear_timeout_secs: u64,
    /// Whether failed jobs are re-run, at most once per head commit.
    pub rerun_failed: bool,
    /// How many fixes of one failing check Shepherd's own push broke a run
    /// tries before the failure is handed to a person; 0 never tries.
    pub repair_attempts: u32,
    /// Whether a check that already failed before Shepherd's push is
    /// repaired too (otherwise it is reported and left alone).
    pub repair_pre_existing: bool,
}

impl Default for CiConfig {
    fn default() -> Self {
        CiConfig {
            timeout_secs: 1800,
            poll_interval_secs: 15,
            appear_timeout_secs: 180,
            rerun_failed: true,
            repair_attempts: 2,
            repair_pre_existing: false,
        }
    }
}

impl CiConfig {
    /// `timeout_secs` as a duration.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs)
    }

    /// `poll_interval_secs` as a duration.
    pub fn poll_interval(&self) -> Duration {
        Duration::from_secs(self.poll_interval_secs)
    }

    /// `appear_timeout_secs` as a duration, capped by the total timeout.
    pub fn appear_timeout(&self) -> Duration {
        Duration::from_secs(self.appear_timeout_secs.min(self.timeout_secs))
    }
}

/// `[trust]`: whose comments are acted on. Others are reported, not acted on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrustConfig {
    /// Whether comments of people the forge says may write to the
    /// repository are acted on (GitHub: write, maintain or admin; GitLab:
    /// Developer or above). Anyone else, such as a stranger commenting on
    /// a public repository, is reported, never acted on.
    pub collaborators: bool,
    /// Bot logins whose comments are acted on (only accounts the forge marks
    /// as bots: a person who registered a bot's name is not trusted by it).
    pub bots: Vec<String>,
    /// Further logins whose comments are acted on, people or bots.
    pub users: Vec<String>,
}

/// The bots trusted by default: common review bots and CI.
pub const DEFAULT_TRUSTED_BOTS: &[&str] = &[
    "coderabbitai",
    "copilot-pull-request-reviewer",
    "github-actions",
    "gemini-code-assist",
    "chatgpt-codex-connector",
    "claude",
    "cursor",
    "sourcery-ai",
    "greptile-apps",
];

impl Default for TrustConfig {
    fn default() -> Self {
        TrustConfig {
            collaborators: true,
            bots: DEFAULT_TRUSTED_BOTS.iter().map(|b| b.to_string()).collect(),
            users: Vec::new(),
        }
    }
}

/// A login as compared: case-insensitive, without a leading `@` or a
/// trailing `[bot]` (GitHub's REST spelling of app accounts).
pub(super) fn normalize_login(login: &str) -> String {
    let l = login.trim();
    let l = l.strip_prefix('@').unwrap_or(l);
    let l = l.strip_suffix("[bot]").unwrap_or(l);
    l.to_ascii_lowercase()
}

impl TrustConfig {
    /// Whether trusting `author` depends on what the forge says of their
    /// access: a person not named in `trust.users`, with
    /// `trust.collaborators` on. Only for them is the forge asked.
    pub fn needs_access(&self, author: Option<&Author>) -> bool {
        let Some(author) = author else { return false };
        let login = normalize_login(&author.login);
        self.collaborators
            && author.kind == AuthorKind::User
            && !login.is_empty()
            && !self.users.iter().any(|u| normalize_login(u) == login)
    }

    /// Whether comments of `author` are acted on. `is_collaborator` is
    /// whether the forge says the author may write to the repository. A
    /// deleted author (`None`) is never trusted.
    pub fn trusts(&self, author: Option<&Author>, is_collaborator: bool) -> bool {
        let Some(author) = author else { return false };
        let login = normalize_login(&author.login);
        if login.is_empty() {
            return false;
        }
        if self.users.iter().any(|u| normalize_login(u) == login) {
            return true;
        }
        match author.kind {
            AuthorKind::Bot => self.bots.iter().any(|b| normalize_login(b) == login),
            AuthorKind::User => self.collaborators && is_collaborator,
        }
    }

    /// Why comments of `author` are not acted on, or `None` when they are
    /// ([`TrustConfig::trusts`]): one sentence naming the key to change.
    /// `role` is the forge's word for the author's access, when it was
    /// asked (`read`, `none`, `reporter`, …).
    pub fn untrusted_because(
        &self,
        author: Option<&Author>,
        is_collaborator: bool,
        role: Option<&str>,
    ) -> Option<String> {
        if self.trusts(author, is_collaborator) {
            return None;
        }
        Some(match author {
            None => "its author's account was deleted; a deleted account is never trusted".to_owned(),
            Some(a) if normalize_login(&a.login).is_empty() => {
                "its author has no login; such an account is never trusted".to_owned()
            }
            Some(a) => match a.kind {
                AuthorKind::Bot => format!(
                    "opened by the bot @{}, which is not in `trust.bots` or `trust.users`",
                    a.login
                ),
                AuthorKind::User if !self.collaborators => format!(
                    "opened by @{}; `trust.collaborators = false` and the login is not in `trust.users`",
                    a.login
                ),
                AuthorKind::User => match role {
                    Some(role) => format!(
                        "opened by @{}, who has `{role}` access to the repository (acting on a \
                         comment takes write, maintain or admin; GitLab: Developer or above) and \
                         is not in `trust.users`",
                        a.login
                    ),
                    None => format!(
                        "opened by @{}, who may not write to the repository and is not in \
                         `trust.users`",
                        a.login
                    ),
                },
            },
        })
    }
}

/// `[paths]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PathsConfig {
    /// Paths Shepherd never commits changes to (globs over repository paths).
    pub protected: Vec<String>,
}

impl Default for PathsConfig {
    fn default() -> Self {
        PathsConfig {
            protected: vec![".github/workflows/**".to_string()],
        }
    }
}

impl PathsConfig {
    /// Whether a repository-relative path is protected: some pattern matches
    /// it or one of its parent directories (see [`crate::glob::PathGlobs`]).
    /// Patterns are checked when the configuration is read; should one not
    /// compile, every path counts as protected (fail closed).
    pub fn is_protected(&self, path: &str) -> bool {
        match crate::glob::PathGlobs::new(&self.protected) {
            Ok(globs) => globs.covering(path).is_some(),
            Err(_) => true,
        }
    }
}

/// `[forge]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ForgeConfig {
    /// Hosts that are GitHub Enterprise Server instances.
    pub github_hosts: Vec<String>,
    /// Hosts that are self-managed GitLab instances.
    pub gitlab_hosts: Vec<String>,
    /// A PEM file of CA certificates trusted for the forge's API, besides
    /// the system's store (an absolute path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<String>,
}

impl ForgeConfig {
    /// The self-hosted instances configured for `forge` (its
    /// [`hosts_key`](crate::forges::ForgeSpec::hosts_key)).
    pub fn hosts_of(&self, forge: crate::ForgeKind) -> &[String] {
        match forge {
            crate::ForgeKind::GitHub => &self.github_hosts,
            crate::ForgeKind::GitLab => &self.gitlab_hosts,
        }
    }
}

/// `[review]`. The reviewer's provider and model are `[agent.roles.review]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReviewConfig {
    /// Whether the pre-push review runs (it needs an agent other than
    /// builtin for the review role).
    pub enabled: bool,
}

impl Default for ReviewConfig {
    fn default() -> Self {
        ReviewConfig { enabled: true }
    }
}

/// `[reviewers]`: the reviewers whose review of each pushed head a run
/// waits for before it calls the PR converged (docs/reviewers.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReviewersConfig {
    /// Logins whose review of the pushed head is awaited. Unset: the bots
    /// of `[trust] bots` that put a commit status or check run of their own
    /// on the head.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_for: Option<Vec<String>>,
    /// How long to wait for each after a push, in seconds.
    pub settle_timeout_secs: u64,
    /// Whether review is re-requested from awaited reviewers that support
    /// it, once per head.
    pub request: bool,
    /// Per login, the comment that asks that bot to review again, posted
    /// once per head when it has not started.
    pub trigger: std::collections::BTreeMap<String, String>,
}

impl Default for ReviewersConfig {
    fn default() -> Self {
        ReviewersConfig {
            wait_for: None,
            settle_timeout_secs: 600,
            request: false,
            trigger: std::collections::BTreeMap::new(),
        }
    }
}

impl ReviewersConfig {
    /// `settle_timeout_secs` as a duration.
    pub fn settle_timeout(&self) -> Duration {
        Duration::from_secs(self.settle_timeout_secs)
    }

    /// The trigger comment for `login`, matched as forges match logins
    /// (case aside, with or without `[bot]`).
    pub fn trigger_for(&self, login: &str) -> Option<&str> {
        self.trigger
            .iter()
            .find(|(who, _)| crate::reviewers::same_login(who, login))
            .map(|(_, text)| text.as_str())
    }
}

/// The default configuration, embedded. It parses into [`Config::default`]
/// and documents every key (keys without a default are commented out).
pub const DEFAULT_CONFIG_TOML: &str = include_str!("../default-config.toml");
