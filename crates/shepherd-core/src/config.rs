//! Configuration (SPEC section 10): the typed settings, the embedded default
//! configuration, the layering of repository file, user file, environment and
//! flags, and the reference table the README's configuration section is
//! rendered from.
//!
//! Nothing here reads files or the environment: callers pass the text of each
//! file and a lookup for environment variables.
//!
//! # Layers
//!
//! [`Config::layered`] applies [`ConfigLayer`]s in the order given, each
//! overriding the ones before it key by key: the repository's `shepherd.toml`
//! (or `.shepherd/config.toml`, see [`repo_config_path`]), then the user's
//! config ([`user_config_path`]), then the environment ([`ENV_VARS`]), then
//! flags ([`Overrides`]). Tables merge; any other value (arrays included)
//! replaces the earlier one whole. A key no layer sets has its default
//! ([`Config::default`], equal to [`DEFAULT_CONFIG_TOML`]). TOML has no null,
//! so a later layer cannot unset an optional key an earlier one set.
//!
//! # Errors
//!
//! Every layer is checked on its own against the key table before merging, so
//! an error names the key and where it came from: the file's path, the
//! environment variable, or the flags. Unknown keys suggest a close name
//! (``unknown key `loop.max_round` in /repo/shepherd.toml; did you mean
//! `max_rounds`?``). The first error found is returned.
//!
//! # Validation decisions
//!
//! - `loop.max_rounds` is at least 1.
//! - `cluster.min_volume` is at least 2: a cluster has two items, and a volume
//!   of 1 would open the gate on every round.
//! - `cluster.escalate_after = 0` disables escalation.
//! - `agent.idle_timeout_secs = 0` disables the idle timeout; every other
//!   timeout and `ci.poll_interval_secs` is at least 1.
//!   `ci.appear_timeout_secs = 0` means checks absent at the first look stay
//!   absent.
//! - A provider of `command` (in `[agent]` or a role) needs a command; a
//!   command set while another provider is chosen is ignored (a later layer
//!   may switch providers).
//! - A host may not be listed as both GitHub and GitLab; hosts are written
//!   without scheme or path.
//! - `agent.env` refuses names of forge credentials
//!   ([`is_forge_credential_name`]).
//! - Strings that name something (model, logins, globs, hosts, commands) may
//!   not be empty.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use toml::{Table, Value};

use crate::gate::GateConfig;
use crate::model::{Author, AuthorKind};

mod head;

pub use head::{HeadConfig, LayerRecord, SourceRecord};

/// The default configuration, embedded. It parses into [`Config::default`]
/// and documents every key (keys without a default are commented out).
pub const DEFAULT_CONFIG_TOML: &str = include_str!("default-config.toml");

/// Where a repository's configuration may live, relative to its root, in the
/// order [`repo_config_path`] looks.
pub const REPO_CONFIG_PATHS: [&str; 2] = ["shepherd.toml", ".shepherd/config.toml"];

// ---------------------------------------------------------------------------
// Errors

/// What can be wrong with a configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A file is not valid TOML.
    #[error("invalid TOML in {origin}: {message}")]
    Syntax {
        /// Where the text came from (a path).
        origin: String,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A key Shepherd does not know.
    #[error("unknown key `{key}` in {origin}{hint}", hint = did_you_mean(.suggestion))]
    UnknownKey {
        /// The dotted key (`loop.max_round`).
        key: String,
        /// Where it was set.
        origin: String,
        /// A known key with a close name, if there is one.
        suggestion: Option<String>,
    },
    /// A value of the wrong TOML type.
    #[error("wrong type for `{key}` in {origin}: expected {expected}, found {found}")]
    WrongType {
        /// The dotted key; an array element is written `key[i]`.
        key: String,
        /// Where it was set.
        origin: String,
        /// What the key takes (`an integer`).
        expected: &'static str,
        /// The TOML type found (`string`).
        found: &'static str,
    },
    /// A value of the right type that is not allowed.
    #[error("invalid value for `{key}` in {origin}: {reason}")]
    InvalidValue {
        /// The dotted key; an array element is written `key[i]`.
        key: String,
        /// Where it was set.
        origin: String,
        /// Why it is refused.
        reason: String,
    },
    /// A key another key's value makes necessary is not set.
    #[error("`{key}` is required because `{because_key}` is {because_value} (set in {origin})")]
    Missing {
        /// The key that must be set.
        key: String,
        /// The key whose value requires it.
        because_key: String,
        /// That value, as written in TOML.
        because_value: String,
        /// Where `because_key` was set.
        origin: String,
    },
    /// Both repository config files exist.
    #[error("both {} and {} exist in the repository; keep one", REPO_CONFIG_PATHS[0], REPO_CONFIG_PATHS[1])]
    AmbiguousRepoConfig,
}

fn did_you_mean(suggestion: &Option<String>) -> String {
    match suggestion {
        Some(s) => format!("; did you mean `{s}`?"),
        None => String::new(),
    }
}

/// A value that is not one of a fixed set of names ([`Provider`],
/// [`OnExhaust`], [`ApproveMode`], [`AgentRole`] from strings).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not one of {expected}")]
pub struct ParseNameError {
    /// What was given.
    pub value: String,
    /// The accepted names, written out.
    pub expected: String,
}

fn parse_name<T: Copy>(
    value: &str,
    all: &[T],
    name: impl Fn(T) -> &'static str,
) -> Result<T, ParseNameError> {
    all.iter()
        .copied()
        .find(|v| name(*v) == value)
        .ok_or_else(|| ParseNameError {
            value: value.to_string(),
            expected: quoted_list(all.iter().map(|v| name(*v))),
        })
}

fn quoted_list<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

// ---------------------------------------------------------------------------
// Named values

macro_rules! named_enum_impls {
    ($ty:ident, $names:ident) => {
        impl $ty {
            /// The name used in configuration files, environment and flags.
            pub fn as_str(self) -> &'static str {
                $names[self as usize]
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $ty {
            type Err = ParseNameError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                parse_name(s, &$ty::ALL, $ty::as_str)
            }
        }
    };
}

/// Which agent CLI runs a role (SPEC section 7).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// No model: suggestion blocks are applied, everything else is needs-human.
    #[default]
    Builtin,
    /// Claude Code (`claude -p`).
    Claude,
    /// OpenAI Codex CLI (`codex exec`).
    Codex,
    /// GitHub Copilot CLI (`copilot -p`).
    Copilot,
    /// Gemini CLI (`gemini -p`).
    Gemini,
    /// opencode (`opencode run`).
    Opencode,
    /// Any executable (`agent.command`): the task as JSON on stdin, the answer
    /// as JSON on stdout.
    Command,
}

const PROVIDER_NAMES: &[&str] = &[
    "builtin", "claude", "codex", "copilot", "gemini", "opencode", "command",
];

impl Provider {
    /// Every provider, in declaration order.
    pub const ALL: [Provider; 7] = [
        Provider::Builtin,
        Provider::Claude,
        Provider::Codex,
        Provider::Copilot,
        Provider::Gemini,
        Provider::Opencode,
        Provider::Command,
    ];
}
named_enum_impls!(Provider, PROVIDER_NAMES);

/// What reaching `loop.max_rounds` without convergence does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnExhaust {
    /// Pause the run for a human (exit 3).
    #[default]
    Approval,
    /// Fail the run (exit 4).
    Fail,
}

const ON_EXHAUST_NAMES: &[&str] = &["approval", "fail"];

impl OnExhaust {
    /// Every value, in declaration order.
    pub const ALL: [OnExhaust; 2] = [OnExhaust::Approval, OnExhaust::Fail];
}
named_enum_impls!(OnExhaust, ON_EXHAUST_NAMES);

/// How reply-only decisions are approved (SPEC section 3, step 6).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApproveMode {
    /// Ask on a terminal; without one, pause the run (exit 3) for
    /// `shepherd approve`/`resume`.
    #[default]
    Prompt,
    /// Approve the triage as it is, without a pause (for CI).
    Auto,
}

const APPROVE_MODE_NAMES: &[&str] = &["prompt", "auto"];

impl ApproveMode {
    /// Every value, in declaration order.
    pub const ALL: [ApproveMode; 2] = [ApproveMode::Prompt, ApproveMode::Auto];
}
named_enum_impls!(ApproveMode, APPROVE_MODE_NAMES);

/// The agent roles of SPEC section 7, as named in `[agent.roles.<role>]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AgentRole {
    /// Decides what to do about each new item.
    Triage,
    /// Fixes one isolated code-change item.
    Fix,
    /// Fixes a cluster of related items at their root.
    ClusterFix,
    /// Checks that a fix addresses its comment, and repairs a fix that broke
    /// the verify command (the one repair attempt of SPEC section 3 step 8).
    FixValidation,
    /// Reviews the unpushed commits, read-only.
    Review,
    /// Fixes confirmed review findings.
    ApplyReview,
    /// Writes the optional narrative of the report.
    ReportNarrative,
}

const ROLE_NAMES: &[&str] = &[
    "triage",
    "fix",
    "cluster-fix",
    "fix-validation",
    "review",
    "apply-review",
    "report-narrative",
];

impl AgentRole {
    /// Every role, in declaration order.
    pub const ALL: [AgentRole; 7] = [
        AgentRole::Triage,
        AgentRole::Fix,
        AgentRole::ClusterFix,
        AgentRole::FixValidation,
        AgentRole::Review,
        AgentRole::ApplyReview,
        AgentRole::ReportNarrative,
    ];
}
named_enum_impls!(AgentRole, ROLE_NAMES);

/// A command line: a string run by `sh -c`, or an argument vector run
/// directly. Written in TOML as a string or an array of strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CommandSpec {
    /// Run by `sh -c` (pipes, `&&` and variables work).
    Shell(String),
    /// The program and its arguments, no shell involved.
    Argv(Vec<String>),
}

impl CommandSpec {
    /// The argument vector to spawn: `["sh", "-c", line]` for a shell
    /// command, the array itself otherwise.
    pub fn to_argv(&self) -> Vec<String> {
        match self {
            CommandSpec::Shell(line) => vec!["sh".to_string(), "-c".to_string(), line.clone()],
            CommandSpec::Argv(argv) => argv.clone(),
        }
    }
}

impl fmt::Display for CommandSpec {
    /// The shell line, or the arguments joined by spaces (for messages).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandSpec::Shell(line) => f.write_str(line),
            CommandSpec::Argv(argv) => f.write_str(&argv.join(" ")),
        }
    }
}

impl Serialize for CommandSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            CommandSpec::Shell(line) => serializer.serialize_str(line),
            CommandSpec::Argv(argv) => {
                let mut seq = serializer.serialize_seq(Some(argv.len()))?;
                for arg in argv {
                    seq.serialize_element(arg)?;
                }
                seq.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for CommandSpec {
    // A visitor rather than `serde(untagged)`: it keeps the error precise.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CommandVisitor;

        impl<'de> Visitor<'de> for CommandVisitor {
            type Value = CommandSpec;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of strings")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<CommandSpec, E> {
                Ok(CommandSpec::Shell(v.to_string()))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<CommandSpec, A::Error> {
                let mut argv = Vec::new();
                while let Some(arg) = seq.next_element::<String>()? {
                    argv.push(arg);
                }
                Ok(CommandSpec::Argv(argv))
            }
        }

        deserializer.deserialize_any(CommandVisitor)
    }
}

// ---------------------------------------------------------------------------
// The configuration

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
    /// `[forge]`: hosts of self-managed forges.
    pub forge: ForgeConfig,
    /// `[review]`: the pre-push review.
    pub review: ReviewConfig,
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
}

impl Default for LoopConfig {
    fn default() -> Self {
        LoopConfig {
            max_rounds: 8,
            on_exhaust: OnExhaust::Approval,
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
    /// Seconds between two looks at the checks.
    pub poll_interval_secs: u64,
    /// Seconds to wait for checks to appear on a new head (within `timeout_secs`).
    pub appear_timeout_secs: u64,
    /// Whether failed jobs are re-run, at most once per head commit.
    pub rerun_failed: bool,
}

impl Default for CiConfig {
    fn default() -> Self {
        CiConfig {
            timeout_secs: 1800,
            poll_interval_secs: 15,
            appear_timeout_secs: 180,
            rerun_failed: true,
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
    /// Whether comments of the repository's collaborators are acted on.
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
fn normalize_login(login: &str) -> String {
    let l = login.trim();
    let l = l.strip_prefix('@').unwrap_or(l);
    let l = l.strip_suffix("[bot]").unwrap_or(l);
    l.to_ascii_lowercase()
}

impl TrustConfig {
    /// Whether comments of `author` are acted on. `is_collaborator` is what
    /// the forge says of the author. A deleted author (`None`) is never trusted.
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

// ---------------------------------------------------------------------------
// Layers

/// Where a layer comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The repository's config file, by path.
    Repo(String),
    /// The user's config file, by path.
    User(String),
    /// `SHEPHERD_*` environment variables.
    Env,
    /// Command-line flags.
    Flags,
    /// The pull request head's config file, by repository path: untrusted,
    /// see [`HeadConfig`].
    PrHead(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Repo(path) | Source::User(path) => f.write_str(path),
            Source::Env => f.write_str("the environment"),
            Source::Flags => f.write_str("command-line flags"),
            Source::PrHead(path) => write!(f, "{path} on the pull request's head"),
        }
    }
}

/// What a layer holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayerContent {
    /// The text of a TOML file.
    Toml(String),
    /// Environment variables of [`ENV_VARS`] that are set, as (name, value).
    Env(Vec<(String, String)>),
    /// Flag values.
    Flags(Overrides),
}

/// One layer of configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigLayer {
    /// Where it comes from (named in errors).
    pub source: Source,
    /// What it says.
    pub content: LayerContent,
}

impl ConfigLayer {
    /// The repository's config file.
    pub fn repo(path: impl Into<String>, text: impl Into<String>) -> Self {
        ConfigLayer {
            source: Source::Repo(path.into()),
            content: LayerContent::Toml(text.into()),
        }
    }

    /// The user's config file.
    pub fn user(path: impl Into<String>, text: impl Into<String>) -> Self {
        ConfigLayer {
            source: Source::User(path.into()),
            content: LayerContent::Toml(text.into()),
        }
    }

    /// The environment: `lookup` is asked for each variable of [`ENV_VARS`]
    /// (pass `|k| std::env::var(k).ok()`). An empty value counts as unset.
    pub fn env(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let vars = ENV_VARS
            .iter()
            .filter_map(|v| {
                lookup(v.name)
                    .filter(|value| !value.is_empty())
                    .map(|value| (v.name.to_string(), value))
            })
            .collect();
        ConfigLayer {
            source: Source::Env,
            content: LayerContent::Env(vars),
        }
    }

    /// Command-line flags.
    pub fn flags(overrides: Overrides) -> Self {
        ConfigLayer {
            source: Source::Flags,
            content: LayerContent::Flags(overrides),
        }
    }
}

/// The settings command-line flags can override; `None` leaves a key alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `agent.provider`.
    pub agent_provider: Option<Provider>,
    /// `agent.model`.
    pub agent_model: Option<String>,
    /// `agent.timeout_secs`.
    pub agent_timeout_secs: Option<u64>,
    /// `loop.max_rounds`.
    pub max_rounds: Option<u32>,
    /// `loop.on_exhaust`.
    pub on_exhaust: Option<OnExhaust>,
    /// `approve.mode`.
    pub approve: Option<ApproveMode>,
    /// `approve.resolve_wontfix`.
    pub resolve_wontfix: Option<bool>,
    /// `cluster.enabled`.
    pub cluster_enabled: Option<bool>,
    /// `verify.command`.
    pub verify_command: Option<CommandSpec>,
    /// `ci.timeout_secs`.
    pub ci_timeout_secs: Option<u64>,
    /// `review.enabled`.
    pub review_enabled: Option<bool>,
}

impl Overrides {
    /// The overrides as (key, value) pairs.
    fn entries(&self) -> Vec<(&'static str, Value)> {
        let mut out = Vec::new();
        let s = |v: &str| Value::String(v.to_string());
        let int = |v: u64| Value::Integer(i64::try_from(v).unwrap_or(i64::MAX));
        if let Some(v) = self.agent_provider {
            out.push(("agent.provider", s(v.as_str())));
        }
        if let Some(v) = &self.agent_model {
            out.push(("agent.model", s(v)));
        }
        if let Some(v) = self.agent_timeout_secs {
            out.push(("agent.timeout_secs", int(v)));
        }
        if let Some(v) = self.max_rounds {
            out.push(("loop.max_rounds", int(u64::from(v))));
        }
        if let Some(v) = self.on_exhaust {
            out.push(("loop.on_exhaust", s(v.as_str())));
        }
        if let Some(v) = self.approve {
            out.push(("approve.mode", s(v.as_str())));
        }
        if let Some(v) = self.resolve_wontfix {
            out.push(("approve.resolve_wontfix", Value::Boolean(v)));
        }
        if let Some(v) = self.cluster_enabled {
            out.push(("cluster.enabled", Value::Boolean(v)));
        }
        if let Some(v) = &self.verify_command {
            out.push(("verify.command", command_value(v)));
        }
        if let Some(v) = self.ci_timeout_secs {
            out.push(("ci.timeout_secs", int(v)));
        }
        if let Some(v) = self.review_enabled {
            out.push(("review.enabled", Value::Boolean(v)));
        }
        out
    }
}

fn command_value(c: &CommandSpec) -> Value {
    match c {
        CommandSpec::Shell(line) => Value::String(line.clone()),
        CommandSpec::Argv(argv) => Value::Array(argv.iter().cloned().map(Value::String).collect()),
    }
}

/// One environment variable Shepherd reads as configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvVar {
    /// The variable (`SHEPHERD_MAX_ROUNDS`).
    pub name: &'static str,
    /// The key it sets (`loop.max_rounds`).
    pub key: &'static str,
}

/// The environment variables read by [`ConfigLayer::env`]. Booleans accept
/// `true/false`, `1/0`, `yes/no`, `on/off`; a command is a shell line.
pub const ENV_VARS: &[EnvVar] = &[
    EnvVar {
        name: "SHEPHERD_AGENT",
        key: "agent.provider",
    },
    EnvVar {
        name: "SHEPHERD_MODEL",
        key: "agent.model",
    },
    EnvVar {
        name: "SHEPHERD_AGENT_TIMEOUT",
        key: "agent.timeout_secs",
    },
    EnvVar {
        name: "SHEPHERD_MAX_ROUNDS",
        key: "loop.max_rounds",
    },
    EnvVar {
        name: "SHEPHERD_ON_EXHAUST",
        key: "loop.on_exhaust",
    },
    EnvVar {
        name: "SHEPHERD_APPROVE",
        key: "approve.mode",
    },
    EnvVar {
        name: "SHEPHERD_RESOLVE_WONTFIX",
        key: "approve.resolve_wontfix",
    },
    EnvVar {
        name: "SHEPHERD_CLUSTER",
        key: "cluster.enabled",
    },
    EnvVar {
        name: "SHEPHERD_VERIFY",
        key: "verify.command",
    },
    EnvVar {
        name: "SHEPHERD_CI_TIMEOUT",
        key: "ci.timeout_secs",
    },
    EnvVar {
        name: "SHEPHERD_REVIEW",
        key: "review.enabled",
    },
];

/// The environment variable that names the user config file instead of the
/// default location ([`user_config_path`]).
pub const CONFIG_PATH_ENV: &str = "SHEPHERD_CONFIG";

/// Which repository config file to read, given which exist (paths relative
/// to the repository root, as in [`REPO_CONFIG_PATHS`]). Both existing is an
/// error: one would silently be ignored.
pub fn repo_config_path(
    exists: impl Fn(&str) -> bool,
) -> Result<Option<&'static str>, ConfigError> {
    let found: Vec<&'static str> = REPO_CONFIG_PATHS
        .iter()
        .copied()
        .filter(|p| exists(p))
        .collect();
    match found.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(*one)),
        _ => Err(ConfigError::AmbiguousRepoConfig),
    }
}

/// Where the user's config file is: `$SHEPHERD_CONFIG`, else
/// `$XDG_CONFIG_HOME/shepherd/config.toml` (when absolute), else
/// `$HOME/.config/shepherd/config.toml`; `None` without a home.
pub fn user_config_path(lookup: impl Fn(&str) -> Option<String>) -> Option<String> {
    let var = |k: &str| lookup(k).filter(|v| !v.is_empty());
    if let Some(path) = var(CONFIG_PATH_ENV) {
        return Some(path);
    }
    if let Some(xdg) = var("XDG_CONFIG_HOME").filter(|x| x.starts_with('/')) {
        return Some(format!(
            "{}/shepherd/config.toml",
            xdg.trim_end_matches('/')
        ));
    }
    var("HOME").map(|home| {
        format!(
            "{}/.config/shepherd/config.toml",
            home.trim_end_matches('/')
        )
    })
}

/// For each key set by the layers, where the value in effect came from
/// (a path, `environment variable SHEPHERD_…`, or `command-line flags`).
pub type Origins = BTreeMap<String, String>;

impl Config {
    /// Applies the layers in order (later ones override earlier ones key by
    /// key) over the defaults, and validates the result.
    pub fn layered(layers: &[ConfigLayer]) -> Result<Config, ConfigError> {
        Self::layered_with_origins(layers).map(|(config, _)| config)
    }

    /// [`Config::layered`], also telling where each set key came from (for
    /// `shepherd doctor`).
    pub fn layered_with_origins(layers: &[ConfigLayer]) -> Result<(Config, Origins), ConfigError> {
        let mut merged = Table::new();
        let mut origins = Origins::new();
        for layer in layers {
            for (origin, table) in layer_tables(layer)? {
                check_table(&table, &mut Vec::new(), &origin)?;
                merge(&mut merged, table, &mut Vec::new(), &origin, &mut origins);
            }
        }
        let config: Config = Value::Table(merged)
            .try_into()
            .map_err(|e: toml::de::Error| {
                // The key table checked every value already; this is a mismatch
                // between the table and the types, reported rather than hidden.
                ConfigError::InvalidValue {
                    key: "(configuration)".to_string(),
                    origin: "the merged configuration".to_string(),
                    reason: e.message().to_string(),
                }
            })?;
        config.validate(&origins)?;
        Ok((config, origins))
    }

    /// The embedded default configuration, with its comments.
    pub fn default_toml() -> &'static str {
        DEFAULT_CONFIG_TOML
    }

    /// The configuration as TOML (keys without a value are left out).
    pub fn to_toml(&self) -> String {
        match toml::to_string_pretty(self) {
            Ok(text) => text,
            // Unreachable: every field is a string, integer, boolean, array
            // or table, all of which TOML can write (tested on a config that
            // sets every key).
            Err(e) => format!("# the configuration could not be written as TOML: {e}\n"),
        }
    }

    /// What the honesty gate reads.
    pub fn gate_config(&self) -> GateConfig {
        GateConfig {
            resolve_wontfix: self.approve.resolve_wontfix,
            resolve_human_threads: self.resolve.human_threads,
        }
    }

    /// Checks between keys, after merging.
    fn validate(&self, origins: &Origins) -> Result<(), ConfigError> {
        let origin_of = |key: &str| {
            origins
                .get(key)
                .cloned()
                .unwrap_or_else(|| "the defaults".to_string())
        };
        let command = Provider::Command.as_str();
        if self.agent.provider == Provider::Command && self.agent.command.is_none() {
            return Err(ConfigError::Missing {
                key: "agent.command".to_string(),
                because_key: "agent.provider".to_string(),
                because_value: format!("\"{command}\""),
                origin: origin_of("agent.provider"),
            });
        }
        for role in AgentRole::ALL {
            let settings = self.agent.for_role(role);
            if settings.provider == Provider::Command && settings.command.is_none() {
                let because_key = format!("agent.roles.{role}.provider");
                return Err(ConfigError::Missing {
                    key: format!("agent.roles.{role}.command"),
                    because_value: format!("\"{command}\""),
                    origin: origin_of(&because_key),
                    because_key,
                });
            }
        }
        let github: BTreeSet<String> = self
            .forge
            .github_hosts
            .iter()
            .map(|h| h.to_ascii_lowercase())
            .collect();
        if let Some(host) = self
            .forge
            .gitlab_hosts
            .iter()
            .find(|h| github.contains(&h.to_ascii_lowercase()))
        {
            return Err(ConfigError::InvalidValue {
                key: "forge.gitlab_hosts".to_string(),
                origin: origin_of("forge.gitlab_hosts"),
                reason: format!("`{host}` is also in `forge.github_hosts`; a host is one forge"),
            });
        }
        Ok(())
    }
}

/// The tables a layer contributes, each with the origin its errors name.
fn layer_tables(layer: &ConfigLayer) -> Result<Vec<(String, Table)>, ConfigError> {
    let origin = layer.source.to_string();
    match &layer.content {
        LayerContent::Toml(text) => {
            let table: Table = text
                .parse()
                .map_err(|e: toml::de::Error| ConfigError::Syntax {
                    origin: origin.clone(),
                    message: e.to_string(),
                })?;
            Ok(vec![(origin, table)])
        }
        LayerContent::Env(vars) => vars
            .iter()
            .map(|(name, raw)| {
                let origin = format!("environment variable {name}");
                let Some(var) = ENV_VARS.iter().find(|v| v.name == name) else {
                    return Err(ConfigError::UnknownKey {
                        key: name.clone(),
                        origin,
                        suggestion: None,
                    });
                };
                let value = env_value(var.key, raw, &origin)?;
                Ok((origin, nested(var.key, value)))
            })
            .collect(),
        LayerContent::Flags(overrides) => {
            let mut table = Table::new();
            for (key, value) in overrides.entries() {
                merge(
                    &mut table,
                    nested(key, value),
                    &mut Vec::new(),
                    &origin,
                    &mut Origins::new(),
                );
            }
            Ok(vec![(origin, table)])
        }
    }
}

/// A table holding `value` at the dotted `key`.
fn nested(key: &str, value: Value) -> Table {
    let mut value = value;
    for segment in key.rsplit('.') {
        let mut t = Table::new();
        t.insert(segment.to_string(), value);
        value = Value::Table(t);
    }
    match value {
        Value::Table(t) => t,
        // `rsplit` yields at least one segment, so `value` is a table here.
        _ => Table::new(),
    }
}

/// Parses an environment variable's text as the type of its key.
fn env_value(key: &str, raw: &str, origin: &str) -> Result<Value, ConfigError> {
    let invalid = |reason: String| ConfigError::InvalidValue {
        key: key.to_string(),
        origin: origin.to_string(),
        reason,
    };
    let Some(doc) = key_doc(&key.split('.').collect::<Vec<_>>()) else {
        return Err(ConfigError::UnknownKey {
            key: key.to_string(),
            origin: origin.to_string(),
            suggestion: None,
        });
    };
    let raw = raw.trim();
    Ok(match doc.kind {
        Kind::Bool => match raw.to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => Value::Boolean(true),
            "false" | "0" | "no" | "off" => Value::Boolean(false),
            _ => {
                return Err(invalid(format!(
                    "`{raw}` is not a boolean (true/false, 1/0, yes/no, on/off)"
                )))
            }
        },
        Kind::Int { .. } => Value::Integer(
            raw.parse()
                .map_err(|_| invalid(format!("`{raw}` is not an integer")))?,
        ),
        Kind::Str | Kind::Enum(_) | Kind::Command => Value::String(raw.to_string()),
        Kind::StrList => Value::Array(
            raw.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| Value::String(s.to_string()))
                .collect(),
        ),
    })
}

fn merge(
    into: &mut Table,
    from: Table,
    path: &mut Vec<String>,
    origin: &str,
    origins: &mut Origins,
) {
    for (name, value) in from {
        path.push(name.clone());
        match value {
            Value::Table(src) => {
                let slot = into
                    .entry(name)
                    .or_insert_with(|| Value::Table(Table::new()));
                if !slot.is_table() {
                    *slot = Value::Table(Table::new());
                }
                if let Value::Table(dst) = slot {
                    merge(dst, src, path, origin, origins);
                }
            }
            other => {
                origins.insert(path.join("."), origin.to_string());
                into.insert(name, other);
            }
        }
        path.pop();
    }
}

// ---------------------------------------------------------------------------
// The key table: checking each layer, and the reference documentation

/// The type of a key.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Bool,
    Int { min: i64, max: i64 },
    Str,
    Enum(&'static [&'static str]),
    StrList,
    Command,
}

impl Kind {
    fn expected(self) -> &'static str {
        match self {
            Kind::Bool => "a boolean",
            Kind::Int { .. } => "an integer",
            Kind::Str | Kind::Enum(_) => "a string",
            Kind::StrList => "an array of strings",
            Kind::Command => "a string or an array of strings",
        }
    }

    fn describe(self) -> String {
        match self {
            Kind::Bool => "boolean".to_string(),
            Kind::Int { min, .. } => format!("integer ≥ {min}"),
            Kind::Str => "string".to_string(),
            Kind::Enum(names) => format!("one of {}", quoted_list(names.iter().copied())),
            Kind::StrList => "array of strings".to_string(),
            Kind::Command => "string or array of strings".to_string(),
        }
    }
}

/// An extra check of a string value: `Err` holds the reason it is refused.
type StrCheck = fn(&str) -> Result<(), String>;

/// One key: its dotted name (`<role>` stands for each role), type, an extra
/// check of each string, and its description.
struct KeyDoc {
    key: &'static str,
    kind: Kind,
    check: Option<StrCheck>,
    doc: &'static str,
}

const ROLE: &str = "<role>";
const U32: i64 = u32::MAX as i64;
const SECS: i64 = i64::MAX;

const fn key(key: &'static str, kind: Kind, doc: &'static str) -> KeyDoc {
    KeyDoc {
        key,
        kind,
        check: None,
        doc,
    }
}

const fn checked(key: &'static str, kind: Kind, check: StrCheck, doc: &'static str) -> KeyDoc {
    KeyDoc {
        key,
        kind,
        check: Some(check),
        doc,
    }
}

/// Every key. The README's table is rendered from this
/// ([`reference_markdown`]); tests keep it equal to the types and to
/// `default-config.toml`.
static KEYS: &[KeyDoc] = &[
    key(
        "agent.provider",
        Kind::Enum(PROVIDER_NAMES),
        "Which agent runs every role unless a role overrides it. `builtin` needs no model: it applies \
         suggestion blocks and marks everything else needs-human.",
    ),
    checked("agent.model", Kind::Str, non_empty, "Model passed to the provider; unset uses the provider's own default."),
    key(
        "agent.timeout_secs",
        Kind::Int { min: 1, max: SECS },
        "Total seconds an agent call may take before its process group is killed.",
    ),
    key(
        "agent.idle_timeout_secs",
        Kind::Int { min: 0, max: SECS },
        "Seconds without output after which an agent call is killed; 0 disables.",
    ),
    key("agent.extra_args", Kind::StrList, "Extra arguments appended to the provider's command line."),
    checked(
        "agent.command",
        Kind::Command,
        non_empty,
        "The executable for `provider = \"command\"`: a string run by `sh -c`, or an array run directly. \
         It gets the task as JSON on stdin and answers JSON on stdout.",
    ),
    checked(
        "agent.env",
        Kind::StrList,
        env_name,
        "Extra environment variables passed to agents, beyond the built-in allow-list. Forge credentials \
         (`GITHUB_TOKEN`, `GH_TOKEN`, `GITLAB_TOKEN`, …) are refused.",
    ),
    key(
        "agent.roles.<role>.provider",
        Kind::Enum(PROVIDER_NAMES),
        "The provider of one role (`triage`, `fix`, `cluster-fix`, `fix-validation`, `review`, \
         `apply-review`, `report-narrative`); unset inherits `agent.provider`.",
    ),
    checked(
        "agent.roles.<role>.model",
        Kind::Str,
        non_empty,
        "The role's model; unset inherits `agent.model` when the role keeps the provider of `[agent]`.",
    ),
    key(
        "agent.roles.<role>.timeout_secs",
        Kind::Int { min: 1, max: SECS },
        "The role's total timeout; unset inherits `agent.timeout_secs`.",
    ),
    key(
        "agent.roles.<role>.idle_timeout_secs",
        Kind::Int { min: 0, max: SECS },
        "The role's idle timeout (0 disables); unset inherits `agent.idle_timeout_secs`.",
    ),
    key(
        "agent.roles.<role>.extra_args",
        Kind::StrList,
        "The role's extra arguments; unset inherits `agent.extra_args` when the role keeps the provider of `[agent]`.",
    ),
    checked(
        "agent.roles.<role>.command",
        Kind::Command,
        non_empty,
        "The role's command for provider `command`; unset inherits `agent.command` when the role keeps the \
         provider of `[agent]`.",
    ),
    key("loop.max_rounds", Kind::Int { min: 1, max: U32 }, "Most rounds a run makes."),
    key(
        "loop.on_exhaust",
        Kind::Enum(ON_EXHAUST_NAMES),
        "What reaching `max_rounds` without convergence does: `approval` pauses for a human, `fail` fails \
         the run. Neither reports success.",
    ),
    key(
        "approve.mode",
        Kind::Enum(APPROVE_MODE_NAMES),
        "How reply-only decisions are approved: `prompt` asks on a terminal and pauses the run otherwise; \
         `auto` approves without a pause (CI).",
    ),
    key("approve.resolve_wontfix", Kind::Bool, "Whether approved wontfix decisions resolve their threads."),
    key(
        "resolve.human_threads",
        Kind::Bool,
        "Whether threads opened by a person may be resolved; false leaves them for the person.",
    ),
    key("cluster.enabled", Kind::Bool, "Whether related feedback is clustered and fixed at its root."),
    key(
        "cluster.min_volume",
        Kind::Int { min: 2, max: U32 },
        "New items in a round that open the cluster gate (a cluster has at least two items).",
    ),
    key(
        "cluster.escalate_after",
        Kind::Int { min: 0, max: U32 },
        "Consecutive fix rounds of new feedback on one area before it is escalated to a human; 0 disables \
         escalation.",
    ),
    checked(
        "verify.command",
        Kind::Command,
        non_empty,
        "The command that checks a fix: a string run by `sh -c`, or an array run directly. Unset: \
         `verify.sh`, `.shepherd/verify`, or the project's obvious test command.",
    ),
    key("verify.timeout_secs", Kind::Int { min: 1, max: SECS }, "Seconds the verify command may take."),
    key(
        "ci.timeout_secs",
        Kind::Int { min: 1, max: SECS },
        "Seconds to wait for the checks of a pushed head before the verdict is `UNKNOWN`.",
    ),
    key("ci.poll_interval_secs", Kind::Int { min: 1, max: SECS }, "Seconds between two looks at the checks."),
    key(
        "ci.appear_timeout_secs",
        Kind::Int { min: 0, max: SECS },
        "Seconds to wait for checks to appear on a new head (within `ci.timeout_secs`).",
    ),
    key("ci.rerun_failed", Kind::Bool, "Whether failed jobs are re-run, at most once per head commit."),
    key("trust.collaborators", Kind::Bool, "Whether comments of the repository's collaborators are acted on."),
    checked(
        "trust.bots",
        Kind::StrList,
        login,
        "Bot logins whose comments are acted on (only accounts the forge marks as bots).",
    ),
    checked("trust.users", Kind::StrList, login, "Further logins whose comments are acted on, people or bots."),
    checked(
        "paths.protected",
        Kind::StrList,
        glob_pattern,
        "Paths Shepherd never commits changes to: globs over repository paths (`*`, `?`, `**`); a match on a \
         directory covers what is below it.",
    ),
    checked("forge.github_hosts", Kind::StrList, host, "Hosts that are GitHub Enterprise Server instances."),
    checked("forge.gitlab_hosts", Kind::StrList, host, "Hosts that are self-managed GitLab instances."),
    key(
        "review.enabled",
        Kind::Bool,
        "Whether the pre-push review runs. It needs an agent other than builtin for the review role, \
         configured in `[agent.roles.review]`.",
    ),
];

fn glob_pattern(s: &str) -> Result<(), String> {
    non_empty(s)?;
    crate::glob::check(s).map_err(|e| e.to_string())
}

fn non_empty(s: &str) -> Result<(), String> {
    if s.trim().is_empty() {
        Err("must not be empty".to_string())
    } else {
        Ok(())
    }
}

fn login(s: &str) -> Result<(), String> {
    non_empty(s)?;
    if s.chars().any(char::is_whitespace) {
        return Err(format!("`{s}` is not a login (it has whitespace)"));
    }
    Ok(())
}

fn host(s: &str) -> Result<(), String> {
    non_empty(s)?;
    if s.contains("://") || s.contains('/') || s.chars().any(char::is_whitespace) {
        return Err(format!(
            "`{s}` is not a host name; write it as `git.example.com` (a port is allowed)"
        ));
    }
    Ok(())
}

fn env_name(s: &str) -> Result<(), String> {
    let mut chars = s.chars();
    let valid = matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(format!("`{s}` is not an environment variable name"));
    }
    if is_forge_credential_name(s) {
        return Err(format!(
            "`{s}` holds forge credentials, which never reach an agent"
        ));
    }
    Ok(())
}

/// Whether an environment variable name looks like it holds forge
/// credentials (`GITHUB_TOKEN`, `GH_TOKEN`, `GITLAB_TOKEN`, `CI_JOB_TOKEN`,
/// `GH_ENTERPRISE_TOKEN`, or any name mentioning GitHub/GitLab together with
/// a token, password, secret, key, PAT or auth). Such names are refused in
/// `agent.env`.
pub fn is_forge_credential_name(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "GH_TOKEN",
        "GITHUB_TOKEN",
        "GITLAB_TOKEN",
        "GLAB_TOKEN",
        "CI_JOB_TOKEN",
        "GH_ENTERPRISE_TOKEN",
    ];
    let upper = name.to_ascii_uppercase();
    if EXACT.contains(&upper.as_str()) {
        return true;
    }
    let forge = upper.contains("GITHUB")
        || upper.contains("GITLAB")
        || upper.starts_with("GH_")
        || upper.starts_with("GLAB_");
    let secret = [
        "TOKEN",
        "PASSWORD",
        "SECRET",
        "KEY",
        "CREDENTIAL",
        "PAT",
        "AUTH",
    ]
    .iter()
    .any(|w| upper.contains(w));
    forge && secret
}

/// Whether a concrete key segment matches a table segment.
fn segment_matches(pattern: &str, segment: &str) -> bool {
    pattern == segment || (pattern == ROLE && ROLE_NAMES.contains(&segment))
}

fn key_doc(path: &[&str]) -> Option<&'static KeyDoc> {
    KEYS.iter().find(|d| {
        let pat: Vec<&str> = d.key.split('.').collect();
        pat.len() == path.len() && pat.iter().zip(path).all(|(p, s)| segment_matches(p, s))
    })
}

/// The names allowed directly under `path` (tables and keys).
fn children(path: &[&str]) -> Vec<&'static str> {
    let mut out = BTreeSet::new();
    for d in KEYS {
        let pat: Vec<&'static str> = d.key.split('.').collect();
        if pat.len() > path.len() && pat.iter().zip(path).all(|(p, s)| segment_matches(p, s)) {
            match pat[path.len()] {
                ROLE => out.extend(ROLE_NAMES.iter().copied()),
                name => {
                    out.insert(name);
                }
            }
        }
    }
    out.into_iter().collect()
}

fn check_table(table: &Table, path: &mut Vec<String>, origin: &str) -> Result<(), ConfigError> {
    for (name, value) in table {
        path.push(name.clone());
        let segments: Vec<&str> = path.iter().map(String::as_str).collect();
        let key = path.join(".");
        if let Some(doc) = key_doc(&segments) {
            check_leaf(doc, value, &key, origin)?;
        } else if !children(&segments).is_empty() {
            match value {
                Value::Table(t) => check_table(t, path, origin)?,
                other => {
                    return Err(ConfigError::WrongType {
                        key,
                        origin: origin.to_string(),
                        expected: "a table",
                        found: other.type_str(),
                    })
                }
            }
        } else {
            let suggestion = suggest(&segments);
            return Err(ConfigError::UnknownKey {
                key,
                origin: origin.to_string(),
                suggestion,
            });
        }
        path.pop();
    }
    Ok(())
}

/// A close sibling name, else the full key of a key of that name elsewhere,
/// preferring one that shares more of the path (`max_rounds` at the top level
/// suggests `loop.max_rounds`; `review.provider` suggests
/// `agent.roles.review.provider`).
fn suggest(path: &[&str]) -> Option<String> {
    let (name, parent) = path.split_last()?;
    if let Some(close) = closest(name, children(parent).into_iter()) {
        return Some(close.to_string());
    }
    let mut best: Option<(usize, String)> = None;
    for key in KEYS.iter().flat_map(|d| expand_role(d.key)) {
        let segments: Vec<&str> = key.split('.').collect();
        if segments.last() != Some(name) {
            continue;
        }
        let shared = parent.iter().filter(|p| segments.contains(p)).count();
        if best.as_ref().is_none_or(|(score, _)| shared > *score) {
            best = Some((shared, key.clone()));
        }
    }
    best.map(|(_, key)| key)
}

/// A key with `<role>` replaced by each role name (the key itself otherwise).
fn expand_role(key: &str) -> Vec<String> {
    if key.contains(ROLE) {
        ROLE_NAMES.iter().map(|r| key.replace(ROLE, r)).collect()
    } else {
        vec![key.to_string()]
    }
}

fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let name = name.to_ascii_lowercase();
    candidates
        .map(|c| (edit_distance(&name, c), c))
        .filter(|(d, c)| *d <= (c.chars().count().max(name.chars().count()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Edit distance over characters, a swap of two neighbours counting as one
/// edit (optimal string alignment): `modle` is one edit from `model`.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // d[i][j]: distance between a[..i] and b[..j].
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

fn check_leaf(doc: &KeyDoc, value: &Value, key: &str, origin: &str) -> Result<(), ConfigError> {
    let wrong = |key: String, expected: &'static str, found: &Value| ConfigError::WrongType {
        key,
        origin: origin.to_string(),
        expected,
        found: found.type_str(),
    };
    let invalid = |key: String, reason: String| ConfigError::InvalidValue {
        key,
        origin: origin.to_string(),
        reason,
    };
    let check_str = |key: String, s: &str| match doc.check {
        Some(check) => check(s).map_err(|reason| invalid(key, reason)),
        None => Ok(()),
    };
    let strings = |key: &str, items: &[Value]| -> Result<(), ConfigError> {
        for (i, item) in items.iter().enumerate() {
            let item_key = format!("{key}[{i}]");
            match item {
                Value::String(s) => check_str(item_key, s)?,
                other => return Err(wrong(item_key, "a string", other)),
            }
        }
        Ok(())
    };
    match (doc.kind, value) {
        (Kind::Bool, Value::Boolean(_)) => Ok(()),
        (Kind::Int { min, max }, Value::Integer(i)) => {
            if *i < min {
                Err(invalid(
                    key.to_string(),
                    format!("{i} (must be at least {min})"),
                ))
            } else if *i > max {
                Err(invalid(
                    key.to_string(),
                    format!("{i} (must be at most {max})"),
                ))
            } else {
                Ok(())
            }
        }
        (Kind::Str, Value::String(s)) => check_str(key.to_string(), s),
        (Kind::Enum(names), Value::String(s)) => {
            if names.contains(&s.as_str()) {
                Ok(())
            } else {
                let hint = did_you_mean(&closest(s, names.iter().copied()).map(str::to_string));
                Err(invalid(
                    key.to_string(),
                    format!(
                        "`{s}` is not one of {}{hint}",
                        quoted_list(names.iter().copied())
                    ),
                ))
            }
        }
        (Kind::StrList, Value::Array(items)) => strings(key, items),
        (Kind::Command, Value::String(s)) => check_str(key.to_string(), s),
        (Kind::Command, Value::Array(items)) => {
            if items.is_empty() {
                return Err(invalid(
                    key.to_string(),
                    "the array is empty; give the program first".to_string(),
                ));
            }
            strings(key, items)
        }
        (kind, other) => Err(wrong(key.to_string(), kind.expected(), other)),
    }
}

/// The reference of every key (type, default, description) and of the
/// environment variables, as Markdown, for the README and `shepherd doctor`.
pub fn reference_markdown() -> String {
    let defaults = match Value::try_from(Config::default()) {
        Ok(Value::Table(t)) => t,
        _ => Table::new(),
    };
    let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    let mut out = String::new();
    out.push_str("| Key | Type | Default | Description |\n|---|---|---|---|\n");
    for d in KEYS {
        let default =
            lookup(&defaults, d.key).map_or_else(|| "unset".to_string(), |v| format!("`{v}`"));
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            d.key,
            cell(&d.kind.describe()),
            cell(&default),
            cell(d.doc)
        ));
    }
    out.push_str(
        "\nEnvironment variables override the configuration files; flags override both. \
         Booleans accept `true/false`, `1/0`, `yes/no`, `on/off`; an empty variable counts as unset.\n\n",
    );
    out.push_str("| Variable | Key |\n|---|---|\n");
    for v in ENV_VARS {
        out.push_str(&format!("| `{}` | `{}` |\n", v.name, v.key));
    }
    out
}

fn lookup<'a>(table: &'a Table, key: &str) -> Option<&'a Value> {
    let (first, rest) = key
        .split_once('.')
        .map_or((key, None), |(a, b)| (a, Some(b)));
    let value = table.get(first)?;
    match (rest, value) {
        (None, v) => Some(v),
        (Some(rest), Value::Table(t)) => lookup(t, rest),
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    const REPO: &str = "/repo/shepherd.toml";
    const USER: &str = "/home/u/.config/shepherd/config.toml";

    fn repo(text: &str) -> ConfigLayer {
        ConfigLayer::repo(REPO, text)
    }

    fn user(text: &str) -> ConfigLayer {
        ConfigLayer::user(USER, text)
    }

    fn env(vars: &[(&str, &str)]) -> ConfigLayer {
        let vars: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ConfigLayer::env(move |k| vars.get(k).cloned())
    }

    fn err(layers: &[ConfigLayer]) -> String {
        Config::layered(layers).unwrap_err().to_string()
    }

    /// Leaf keys of a table, dotted.
    fn leaves(table: &Table, prefix: &str, out: &mut BTreeSet<String>) {
        for (k, v) in table {
            let key = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            match v {
                Value::Table(t) => leaves(t, &key, out),
                _ => {
                    out.insert(key);
                }
            }
        }
    }

    /// A configuration that sets every key, every role included.
    fn full_config() -> Config {
        let mut c = Config::default();
        c.agent.provider = Provider::Claude;
        c.agent.model = Some("sonnet".into());
        c.agent.extra_args = vec!["--verbose".into()];
        c.agent.command = Some(CommandSpec::Argv(vec!["./agent".into(), "--json".into()]));
        c.agent.env = vec!["ANTHROPIC_API_KEY".into()];
        let o = RoleOverride {
            provider: Some(Provider::Codex),
            model: Some("gpt-5".into()),
            timeout_secs: Some(60),
            idle_timeout_secs: Some(0),
            extra_args: Some(vec!["-q".into()]),
            command: Some(CommandSpec::Shell("./review | tee log".into())),
        };
        let r = &mut c.agent.roles;
        for slot in [
            &mut r.triage,
            &mut r.fix,
            &mut r.cluster_fix,
            &mut r.fix_validation,
            &mut r.review,
            &mut r.apply_review,
            &mut r.report_narrative,
        ] {
            *slot = o.clone();
        }
        c.verify.command = Some(CommandSpec::Shell("cargo test".into()));
        c.trust.users = vec!["alice".into()];
        c.forge.github_hosts = vec!["ghe.corp".into()];
        c.forge.gitlab_hosts = vec!["gitlab.corp:8443".into()];
        c
    }

    // --- defaults -----------------------------------------------------------

    #[test]
    fn default_config_toml_equals_default() {
        let parsed: Config = toml::from_str(DEFAULT_CONFIG_TOML).unwrap();
        assert_eq!(parsed, Config::default());
        let layered = Config::layered(&[repo(DEFAULT_CONFIG_TOML)]).unwrap();
        assert_eq!(layered, Config::default());
        assert_eq!(Config::layered(&[]).unwrap(), Config::default());
    }

    #[test]
    fn default_config_toml_has_no_unknown_keys() {
        let table: Table = DEFAULT_CONFIG_TOML.parse().unwrap();
        check_table(&table, &mut Vec::new(), "default-config.toml").unwrap();
    }

    #[test]
    fn defaults_are_the_documented_ones() {
        let c = Config::default();
        assert_eq!(c.agent.provider, Provider::Builtin);
        assert_eq!(c.loop_.max_rounds, 8);
        assert_eq!(c.loop_.on_exhaust, OnExhaust::Approval);
        assert_eq!(c.approve.mode, ApproveMode::Prompt);
        assert!(!c.approve.resolve_wontfix);
        assert!(c.resolve.human_threads);
        assert!(c.cluster.enabled);
        assert_eq!(c.cluster.min_volume, 4);
        assert_eq!(c.cluster.escalate_after, 2);
        assert_eq!(c.verify.command, None);
        assert!(c.ci.rerun_failed);
        assert!(c.trust.collaborators);
        assert!(c.trust.bots.iter().any(|b| b == "coderabbitai"));
        assert!(c
            .trust
            .bots
            .iter()
            .any(|b| b == "copilot-pull-request-reviewer"));
        assert!(c.trust.bots.iter().any(|b| b == "github-actions"));
        assert_eq!(c.paths.protected, vec![".github/workflows/**".to_string()]);
        assert!(c.review.enabled);
        assert_eq!(
            c.gate_config(),
            GateConfig {
                resolve_wontfix: false,
                resolve_human_threads: true
            }
        );
    }

    // --- the key table ------------------------------------------------------

    /// Keys written commented out in default-config.toml, by section
    /// (`# [agent.roles.review]` headers count as sections).
    fn commented_keys(text: &str) -> BTreeSet<String> {
        let mut section = String::new();
        let mut out = BTreeSet::new();
        for line in text.lines() {
            let line = line.trim();
            let body = line.strip_prefix('#').map(str::trim).unwrap_or(line);
            if let Some(header) = body.strip_prefix('[').and_then(|b| b.strip_suffix(']')) {
                section = header.to_string();
            } else if line.starts_with('#') {
                if let Some((k, _)) = body.split_once(" = ") {
                    if !k.contains(' ') {
                        out.insert(format!("{section}.{k}"));
                    }
                }
            }
        }
        out
    }

    #[test]
    fn key_table_and_default_config_list_the_same_keys() {
        let table: Table = DEFAULT_CONFIG_TOML.parse().unwrap();
        let mut set = BTreeSet::new();
        leaves(&table, "", &mut set);
        for key in &set {
            let segments: Vec<&str> = key.split('.').collect();
            assert!(
                key_doc(&segments).is_some(),
                "{key} of default-config.toml is not in the key table"
            );
        }
        let commented = commented_keys(DEFAULT_CONFIG_TOML);
        for d in KEYS {
            let present = expand_role(d.key)
                .iter()
                .any(|k| set.contains(k) || commented.contains(k));
            assert!(
                present,
                "{} of the key table is not in default-config.toml",
                d.key
            );
        }
        // Commented keys are real keys too.
        for key in &commented {
            let segments: Vec<&str> = key.split('.').collect();
            assert!(key_doc(&segments).is_some(), "commented {key} is not a key");
        }
    }

    #[test]
    fn key_table_matches_the_types() {
        let Value::Table(table) = Value::try_from(full_config()).unwrap() else {
            panic!("not a table")
        };
        let mut set = BTreeSet::new();
        leaves(&table, "", &mut set);
        let documented: BTreeSet<String> = KEYS.iter().flat_map(|d| expand_role(d.key)).collect();
        assert_eq!(set, documented);
        // And the checks accept what the types produce.
        check_table(&table, &mut Vec::new(), "full").unwrap();
    }

    #[test]
    fn enum_names_match_serde() {
        fn check<
            T: Serialize
                + Copy
                + fmt::Display
                + FromStr<Err = ParseNameError>
                + PartialEq
                + fmt::Debug,
        >(
            all: &[T],
            names: &[&str],
        ) {
            assert_eq!(all.len(), names.len());
            for (v, name) in all.iter().zip(names) {
                assert_eq!(
                    Value::try_from(*v).unwrap(),
                    Value::String(name.to_string())
                );
                assert_eq!(v.to_string(), *name);
                assert_eq!(name.parse::<T>().unwrap(), *v);
            }
        }
        check(&Provider::ALL, PROVIDER_NAMES);
        check(&OnExhaust::ALL, ON_EXHAUST_NAMES);
        check(&ApproveMode::ALL, APPROVE_MODE_NAMES);
        check(&AgentRole::ALL, ROLE_NAMES);
        assert_eq!(
            "claud".parse::<Provider>().unwrap_err().to_string(),
            "`claud` is not one of `builtin`, `claude`, `codex`, `copilot`, `gemini`, `opencode`, `command`"
        );
    }

    #[test]
    fn reference_markdown_lists_every_key_and_variable() {
        let md = reference_markdown();
        for d in KEYS {
            assert!(
                md.contains(&format!("| `{}` |", d.key)),
                "{} missing",
                d.key
            );
        }
        for v in ENV_VARS {
            assert!(
                md.contains(&format!("| `{}` | `{}` |", v.name, v.key)),
                "{} missing",
                v.name
            );
        }
        assert!(md.contains("| `loop.max_rounds` | integer ≥ 1 | `8` | Most rounds a run makes. |"));
        assert!(md.contains("| `agent.model` | string | unset |"));
        assert!(
            md.contains("| `paths.protected` | array of strings | `[\".github/workflows/**\"]` |")
        );
        assert!(md.contains("| `loop.on_exhaust` | one of `approval`, `fail` | `\"approval\"` |"));
        // Every row has four cells: no description breaks the table.
        for line in md
            .lines()
            .filter(|l| l.starts_with("| `") && l.contains('.'))
        {
            let cells = line.replace("\\|", "").matches('|').count();
            assert!(cells == 5 || cells == 3, "bad row: {line}");
        }
    }

    #[test]
    fn to_toml_round_trips() {
        for config in [Config::default(), full_config()] {
            let text = config.to_toml();
            assert!(!text.starts_with('#'), "{text}");
            assert_eq!(Config::layered(&[repo(&text)]).unwrap(), config, "{text}");
        }
        assert!(Config::default().to_toml().contains("max_rounds = 8"));
        assert!(!Config::default().to_toml().contains("roles"));
    }

    // --- layering -----------------------------------------------------------

    #[test]
    fn layering_overrides_key_by_key() {
        type Check = fn(&Config) -> bool;
        let cases: Vec<(&str, Vec<ConfigLayer>, Check)> = vec![
            (
                "user over repo",
                vec![
                    repo("[loop]\nmax_rounds = 3"),
                    user("[loop]\nmax_rounds = 5"),
                ],
                |c| c.loop_.max_rounds == 5,
            ),
            (
                "sibling keys of one table survive",
                vec![
                    repo("[cluster]\nmin_volume = 6"),
                    user("[cluster]\nenabled = false"),
                ],
                |c| {
                    c.cluster.min_volume == 6 && !c.cluster.enabled && c.cluster.escalate_after == 2
                },
            ),
            (
                "env over files",
                vec![
                    repo("[loop]\nmax_rounds = 3"),
                    user("[loop]\nmax_rounds = 5"),
                    env(&[("SHEPHERD_MAX_ROUNDS", "2")]),
                ],
                |c| c.loop_.max_rounds == 2,
            ),
            (
                "flags over env",
                vec![
                    env(&[("SHEPHERD_MAX_ROUNDS", "2"), ("SHEPHERD_APPROVE", "auto")]),
                    ConfigLayer::flags(Overrides {
                        max_rounds: Some(1),
                        ..Overrides::default()
                    }),
                ],
                |c| c.loop_.max_rounds == 1 && c.approve.mode == ApproveMode::Auto,
            ),
            (
                "arrays replace, not append",
                vec![
                    repo("[trust]\nbots = [\"a\"]"),
                    user("[trust]\nbots = [\"b\"]"),
                ],
                |c| c.trust.bots == vec!["b".to_string()],
            ),
            (
                "role tables merge",
                vec![
                    repo("[agent.roles.review]\nmodel = \"o3\""),
                    user("[agent.roles.review]\nprovider = \"codex\""),
                ],
                |c| {
                    c.agent.roles.review.model.as_deref() == Some("o3")
                        && c.agent.roles.review.provider == Some(Provider::Codex)
                },
            ),
            (
                "string command replaced by array",
                vec![
                    repo("[verify]\ncommand = \"make test\""),
                    user("[verify]\ncommand = [\"cargo\", \"test\"]"),
                ],
                |c| {
                    c.verify.command == Some(CommandSpec::Argv(vec!["cargo".into(), "test".into()]))
                },
            ),
            (
                "flag verify command",
                vec![
                    repo("[verify]\ncommand = \"make test\""),
                    ConfigLayer::flags(Overrides {
                        verify_command: Some(CommandSpec::Shell("just test".into())),
                        ..Overrides::default()
                    }),
                ],
                |c| c.verify.command == Some(CommandSpec::Shell("just test".into())),
            ),
            (
                "provider command in repo, switched to claude by env, keeps the command",
                vec![
                    repo("[agent]\nprovider = \"command\"\ncommand = \"./agent\""),
                    env(&[("SHEPHERD_AGENT", "claude")]),
                ],
                |c| {
                    c.agent.provider == Provider::Claude
                        && c.agent.command == Some(CommandSpec::Shell("./agent".into()))
                },
            ),
            (
                "command set in one file, provider in a later one",
                vec![
                    repo("[agent]\ncommand = [\"./agent\"]"),
                    env(&[("SHEPHERD_AGENT", "command")]),
                ],
                |c| c.agent.provider == Provider::Command,
            ),
            (
                "escalate_after 0 disables, and is allowed",
                vec![repo("[cluster]\nescalate_after = 0")],
                |c| c.cluster.escalate_after == 0,
            ),
        ];
        for (name, layers, check) in cases {
            let config = Config::layered(&layers).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(check(&config), "{name}: {config:#?}");
        }
    }

    #[test]
    fn origins_name_the_layer_that_set_each_key() {
        let (_, origins) = Config::layered_with_origins(&[
            repo("[loop]\nmax_rounds = 3\non_exhaust = \"fail\""),
            user("[loop]\nmax_rounds = 5"),
            env(&[("SHEPHERD_APPROVE", "auto")]),
            ConfigLayer::flags(Overrides {
                cluster_enabled: Some(false),
                ..Overrides::default()
            }),
        ])
        .unwrap();
        let expected: Origins = [
            ("approve.mode", "environment variable SHEPHERD_APPROVE"),
            ("cluster.enabled", "command-line flags"),
            ("loop.max_rounds", USER),
            ("loop.on_exhaust", REPO),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(origins, expected);
    }

    #[test]
    fn every_override_sets_its_key() {
        let all = Overrides {
            agent_provider: Some(Provider::Gemini),
            agent_model: Some("m".into()),
            agent_timeout_secs: Some(7),
            max_rounds: Some(3),
            on_exhaust: Some(OnExhaust::Fail),
            approve: Some(ApproveMode::Auto),
            resolve_wontfix: Some(true),
            cluster_enabled: Some(false),
            verify_command: Some(CommandSpec::Argv(vec!["make".into()])),
            ci_timeout_secs: Some(9),
            review_enabled: Some(false),
        };
        let c = Config::layered(&[ConfigLayer::flags(all)]).unwrap();
        assert_eq!(c.agent.provider, Provider::Gemini);
        assert_eq!(c.agent.model.as_deref(), Some("m"));
        assert_eq!(c.agent.timeout_secs, 7);
        assert_eq!(c.loop_.max_rounds, 3);
        assert_eq!(c.loop_.on_exhaust, OnExhaust::Fail);
        assert_eq!(c.approve.mode, ApproveMode::Auto);
        assert!(c.approve.resolve_wontfix);
        assert!(!c.cluster.enabled);
        assert_eq!(
            c.verify.command,
            Some(CommandSpec::Argv(vec!["make".into()]))
        );
        assert_eq!(c.ci.timeout_secs, 9);
        assert!(!c.review.enabled);
        assert_eq!(
            Config::layered(&[ConfigLayer::flags(Overrides::default())]).unwrap(),
            Config::default()
        );
    }

    // --- environment --------------------------------------------------------

    #[test]
    fn env_mapping() {
        type Check = fn(&Config) -> bool;
        let cases: &[(&str, &str, Check)] = &[
            ("SHEPHERD_AGENT", "codex", |c| {
                c.agent.provider == Provider::Codex
            }),
            ("SHEPHERD_MODEL", "opus", |c| {
                c.agent.model.as_deref() == Some("opus")
            }),
            ("SHEPHERD_AGENT_TIMEOUT", "120", |c| {
                c.agent.timeout_secs == 120
            }),
            ("SHEPHERD_MAX_ROUNDS", " 12 ", |c| c.loop_.max_rounds == 12),
            ("SHEPHERD_ON_EXHAUST", "fail", |c| {
                c.loop_.on_exhaust == OnExhaust::Fail
            }),
            ("SHEPHERD_APPROVE", "auto", |c| {
                c.approve.mode == ApproveMode::Auto
            }),
            ("SHEPHERD_RESOLVE_WONTFIX", "yes", |c| {
                c.approve.resolve_wontfix
            }),
            ("SHEPHERD_CLUSTER", "0", |c| !c.cluster.enabled),
            ("SHEPHERD_CLUSTER", "OFF", |c| !c.cluster.enabled),
            ("SHEPHERD_VERIFY", "make check && make lint", |c| {
                c.verify.command == Some(CommandSpec::Shell("make check && make lint".into()))
            }),
            ("SHEPHERD_CI_TIMEOUT", "60", |c| c.ci.timeout_secs == 60),
            ("SHEPHERD_REVIEW", "false", |c| !c.review.enabled),
        ];
        for (var, value, check) in cases {
            let c = Config::layered(&[env(&[(var, value)])])
                .unwrap_or_else(|e| panic!("{var}={value}: {e}"));
            assert!(check(&c), "{var}={value}");
        }
        // Every variable is covered above, and maps to a plain key.
        for v in ENV_VARS {
            assert!(
                cases.iter().any(|(n, _, _)| *n == v.name),
                "{} untested",
                v.name
            );
            assert!(
                key_doc(&v.key.split('.').collect::<Vec<_>>()).is_some(),
                "{}",
                v.key
            );
            assert!(v.name.starts_with("SHEPHERD_"));
        }
        let names: BTreeSet<&str> = ENV_VARS.iter().map(|v| v.name).collect();
        assert_eq!(names.len(), ENV_VARS.len());
    }

    #[test]
    fn env_asks_only_for_its_variables_and_ignores_empty_ones() {
        let asked = std::cell::RefCell::new(Vec::new());
        let layer = ConfigLayer::env(|k| {
            asked.borrow_mut().push(k.to_string());
            Some(String::new())
        });
        assert_eq!(layer.content, LayerContent::Env(Vec::new()));
        let expected: Vec<String> = ENV_VARS.iter().map(|v| v.name.to_string()).collect();
        assert_eq!(*asked.borrow(), expected);
    }

    // --- errors -------------------------------------------------------------

    #[test]
    fn error_messages() {
        let cases: &[(&str, &str)] = &[
            ("[loop]\nmax_round = 3", "unknown key `loop.max_round` in /repo/shepherd.toml; did you mean `max_rounds`?"),
            ("[loop]\nmax-rounds = 3", "unknown key `loop.max-rounds` in /repo/shepherd.toml; did you mean `max_rounds`?"),
            ("max_rounds = 3", "unknown key `max_rounds` in /repo/shepherd.toml; did you mean `loop.max_rounds`?"),
            ("[loops]\nmax_rounds = 3", "unknown key `loops` in /repo/shepherd.toml; did you mean `loop`?"),
            ("[frobnicate]\nx = 1", "unknown key `frobnicate` in /repo/shepherd.toml"),
            ("[agent.roles.reviewer]\nmodel = \"x\"", "unknown key `agent.roles.reviewer` in /repo/shepherd.toml; did you mean `review`?"),
            ("[agent.roles.review]\nmodle = \"x\"", "unknown key `agent.roles.review.modle` in /repo/shepherd.toml; did you mean `model`?"),
            ("[agent.roles.review]\nenv = []", "unknown key `agent.roles.review.env` in /repo/shepherd.toml; did you mean `agent.env`?"),
            ("[review]\nprovider = \"codex\"", "unknown key `review.provider` in /repo/shepherd.toml; did you mean `agent.roles.review.provider`?"),
            ("loop = 3", "wrong type for `loop` in /repo/shepherd.toml: expected a table, found integer"),
            ("[[loop]]\nmax_rounds = 3", "wrong type for `loop` in /repo/shepherd.toml: expected a table, found array"),
            ("[loop]\nmax_rounds = \"8\"", "wrong type for `loop.max_rounds` in /repo/shepherd.toml: expected an integer, found string"),
            ("[loop]\nmax_rounds = 8.0", "wrong type for `loop.max_rounds` in /repo/shepherd.toml: expected an integer, found float"),
            ("[cluster]\nenabled = \"yes\"", "wrong type for `cluster.enabled` in /repo/shepherd.toml: expected a boolean, found string"),
            ("[trust]\nbots = \"coderabbitai\"", "wrong type for `trust.bots` in /repo/shepherd.toml: expected an array of strings, found string"),
            ("[trust]\nbots = [\"a\", 3]", "wrong type for `trust.bots[1]` in /repo/shepherd.toml: expected a string, found integer"),
            ("[verify]\ncommand = 3", "wrong type for `verify.command` in /repo/shepherd.toml: expected a string or an array of strings, found integer"),
            ("[loop]\nmax_rounds = 0", "invalid value for `loop.max_rounds` in /repo/shepherd.toml: 0 (must be at least 1)"),
            ("[loop]\nmax_rounds = -3", "invalid value for `loop.max_rounds` in /repo/shepherd.toml: -3 (must be at least 1)"),
            ("[loop]\nmax_rounds = 5000000000", "invalid value for `loop.max_rounds` in /repo/shepherd.toml: 5000000000 (must be at most 4294967295)"),
            ("[cluster]\nmin_volume = 1", "invalid value for `cluster.min_volume` in /repo/shepherd.toml: 1 (must be at least 2)"),
            ("[ci]\npoll_interval_secs = 0", "invalid value for `ci.poll_interval_secs` in /repo/shepherd.toml: 0 (must be at least 1)"),
            ("[agent]\ntimeout_secs = 0", "invalid value for `agent.timeout_secs` in /repo/shepherd.toml: 0 (must be at least 1)"),
            ("[loop]\non_exhaust = \"pause\"", "invalid value for `loop.on_exhaust` in /repo/shepherd.toml: `pause` is not one of `approval`, `fail`"),
            ("[loop]\non_exhaust = \"aproval\"", "invalid value for `loop.on_exhaust` in /repo/shepherd.toml: `aproval` is not one of `approval`, `fail`; did you mean `approval`?"),
            ("[agent]\nprovider = \"claud\"", "invalid value for `agent.provider` in /repo/shepherd.toml: `claud` is not one of `builtin`, `claude`, `codex`, `copilot`, `gemini`, `opencode`, `command`; did you mean `claude`?"),
            ("[approve]\nmode = \"interactive\"", "invalid value for `approve.mode` in /repo/shepherd.toml: `interactive` is not one of `prompt`, `auto`"),
            ("[agent]\nenv = [\"GITHUB_TOKEN\"]", "invalid value for `agent.env[0]` in /repo/shepherd.toml: `GITHUB_TOKEN` holds forge credentials, which never reach an agent"),
            ("[agent]\nenv = [\"OK\", \"MY_GITLAB_PASSWORD\"]", "invalid value for `agent.env[1]` in /repo/shepherd.toml: `MY_GITLAB_PASSWORD` holds forge credentials, which never reach an agent"),
            ("[agent]\nenv = [\"1BAD\"]", "invalid value for `agent.env[0]` in /repo/shepherd.toml: `1BAD` is not an environment variable name"),
            ("[agent]\nmodel = \" \"", "invalid value for `agent.model` in /repo/shepherd.toml: must not be empty"),
            ("[verify]\ncommand = \"\"", "invalid value for `verify.command` in /repo/shepherd.toml: must not be empty"),
            ("[verify]\ncommand = []", "invalid value for `verify.command` in /repo/shepherd.toml: the array is empty; give the program first"),
            ("[verify]\ncommand = [\"\", \"x\"]", "invalid value for `verify.command[0]` in /repo/shepherd.toml: must not be empty"),
            ("[trust]\nusers = [\"bob smith\"]", "invalid value for `trust.users[0]` in /repo/shepherd.toml: `bob smith` is not a login (it has whitespace)"),
            ("[paths]\nprotected = [\"\"]", "invalid value for `paths.protected[0]` in /repo/shepherd.toml: must not be empty"),
            ("[paths]\nprotected = [\"ok/**\", \"src/[abc\"]", "invalid value for `paths.protected[1]` in /repo/shepherd.toml: invalid glob `src/[abc`: unclosed character class; missing ']'"),
            ("[forge]\ngithub_hosts = [\"https://ghe.corp\"]", "invalid value for `forge.github_hosts[0]` in /repo/shepherd.toml: `https://ghe.corp` is not a host name; write it as `git.example.com` (a port is allowed)"),
            ("[forge]\ngithub_hosts = [\"git.corp\"]\ngitlab_hosts = [\"GIT.corp\"]", "invalid value for `forge.gitlab_hosts` in /repo/shepherd.toml: `GIT.corp` is also in `forge.github_hosts`; a host is one forge"),
            ("[agent]\nprovider = \"command\"", "`agent.command` is required because `agent.provider` is \"command\" (set in /repo/shepherd.toml)"),
            ("[agent]\nprovider = \"claude\"\n[agent.roles.triage]\nprovider = \"command\"", "`agent.roles.triage.command` is required because `agent.roles.triage.provider` is \"command\" (set in /repo/shepherd.toml)"),
        ];
        for (text, expected) in cases {
            assert_eq!(err(&[repo(text)]), *expected, "for {text:?}");
        }
    }

    #[test]
    fn errors_name_the_layer_that_caused_them() {
        assert_eq!(
            err(&[
                repo("[loop]\nmax_rounds = 3"),
                user("[loop]\nmax_rounds = 0")
            ]),
            format!("invalid value for `loop.max_rounds` in {USER}: 0 (must be at least 1)")
        );
        assert_eq!(
            err(&[repo("[agent]\nprovider = \"claude\""), user("[agent]\nprovider = \"command\"")]),
            format!("`agent.command` is required because `agent.provider` is \"command\" (set in {USER})")
        );
        assert_eq!(
            err(&[env(&[("SHEPHERD_AGENT", "command")])]),
            "`agent.command` is required because `agent.provider` is \"command\" \
             (set in environment variable SHEPHERD_AGENT)"
        );
        // A role inheriting `command` from [agent] needs nothing more.
        Config::layered(&[repo("[agent]\nprovider = \"command\"\ncommand = \"./a\"\n[agent.roles.fix]\ntimeout_secs = 5")])
            .unwrap();
        // A role keeping `command` while [agent] moves away must name its own.
        assert_eq!(
            err(&[
                repo("[agent]\nprovider = \"claude\"\ncommand = \"./a\"\n[agent.roles.fix]\nprovider = \"command\""),
            ]),
            "`agent.roles.fix.command` is required because `agent.roles.fix.provider` is \"command\" \
             (set in /repo/shepherd.toml)"
        );
    }

    #[test]
    fn env_and_flag_errors() {
        let cases: &[(&str, &str, &str)] = &[
            ("SHEPHERD_MAX_ROUNDS", "abc", "invalid value for `loop.max_rounds` in environment variable SHEPHERD_MAX_ROUNDS: `abc` is not an integer"),
            ("SHEPHERD_MAX_ROUNDS", "0", "invalid value for `loop.max_rounds` in environment variable SHEPHERD_MAX_ROUNDS: 0 (must be at least 1)"),
            ("SHEPHERD_APPROVE", "yes", "invalid value for `approve.mode` in environment variable SHEPHERD_APPROVE: `yes` is not one of `prompt`, `auto`"),
            ("SHEPHERD_AGENT", "Claude", "invalid value for `agent.provider` in environment variable SHEPHERD_AGENT: `Claude` is not one of `builtin`, `claude`, `codex`, `copilot`, `gemini`, `opencode`, `command`; did you mean `claude`?"),
            ("SHEPHERD_CLUSTER", "maybe", "invalid value for `cluster.enabled` in environment variable SHEPHERD_CLUSTER: `maybe` is not a boolean (true/false, 1/0, yes/no, on/off)"),
        ];
        for (var, value, expected) in cases {
            assert_eq!(err(&[env(&[(var, value)])]), *expected);
        }
        assert_eq!(
            err(&[ConfigLayer::flags(Overrides {
                max_rounds: Some(0),
                ..Overrides::default()
            })]),
            "invalid value for `loop.max_rounds` in command-line flags: 0 (must be at least 1)"
        );
        assert_eq!(
            err(&[ConfigLayer::flags(Overrides {
                agent_model: Some(String::new()),
                ..Overrides::default()
            })]),
            "invalid value for `agent.model` in command-line flags: must not be empty"
        );
    }

    #[test]
    fn syntax_errors_name_the_file_and_line() {
        let e = Config::layered(&[repo("[loop]\nmax_rounds = 3\nmax_rounds = 4\n")]).unwrap_err();
        let ConfigError::Syntax { origin, message } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(origin, REPO);
        assert!(message.contains("line 3"), "{message}");
        let text = e.to_string();
        assert!(
            text.starts_with("invalid TOML in /repo/shepherd.toml: "),
            "{text}"
        );
        let e = err(&[user("[loop\n")]);
        assert!(e.starts_with(&format!("invalid TOML in {USER}: ")), "{e}");
    }

    #[test]
    fn first_bad_layer_stops_before_later_ones() {
        // The later layer would fix the value, but the broken file is still an error.
        assert!(Config::layered(&[
            repo("[loop]\nmax_rounds = 0"),
            user("[loop]\nmax_rounds = 3")
        ])
        .is_err());
    }

    // --- the realistic repository config ------------------------------------

    const REALISTIC: &str = r#"
# shepherd.toml of a Rust service
[agent]
provider = "claude"
model = "sonnet"
timeout_secs = 2400
extra_args = ["--permission-mode", "acceptEdits"]
env = ["ANTHROPIC_API_KEY", "CARGO_HOME"]

[agent.roles.triage]
model = "haiku"
timeout_secs = 300

[agent.roles.review]
provider = "codex"
model = "gpt-5"
extra_args = ["--sandbox", "read-only"]

[agent.roles.report-narrative]
provider = "builtin"

[loop]
max_rounds = 5
on_exhaust = "fail"

[approve]
mode = "auto"
resolve_wontfix = true

[resolve]
human_threads = false

[cluster]
min_volume = 3
escalate_after = 3

[verify]
command = ["cargo", "test", "--workspace", "--locked"]
timeout_secs = 3600

[ci]
timeout_secs = 3600
poll_interval_secs = 30
appear_timeout_secs = 300
rerun_failed = false

[trust]
bots = ["coderabbitai", "copilot-pull-request-reviewer", "renovate"]
users = ["release-bot[bot]", "@Alice"]

[paths]
protected = [".github/workflows/**", "deploy/**", "*.lock"]

[forge]
github_hosts = ["github.corp.example:8443"]
"#;

    #[test]
    fn realistic_repo_config_parses() {
        let c = Config::layered(&[repo(REALISTIC)]).unwrap();
        assert_eq!(c.agent.provider, Provider::Claude);
        assert_eq!(c.loop_.max_rounds, 5);
        assert_eq!(c.loop_.on_exhaust, OnExhaust::Fail);
        assert_eq!(c.approve.mode, ApproveMode::Auto);
        assert_eq!(
            c.gate_config(),
            GateConfig {
                resolve_wontfix: true,
                resolve_human_threads: false
            }
        );
        assert_eq!(c.cluster.min_volume, 3);
        assert_eq!(
            c.verify.command.as_ref().map(CommandSpec::to_argv),
            Some(vec![
                "cargo".into(),
                "test".into(),
                "--workspace".into(),
                "--locked".into()
            ])
        );
        assert_eq!(c.ci.poll_interval(), Duration::from_secs(30));
        assert!(!c.ci.rerun_failed);
        assert!(c.paths.is_protected("Cargo.lock"));
        assert!(c.paths.is_protected("deploy/prod/app.yaml"));
        assert_eq!(
            c.forge.github_hosts,
            vec!["github.corp.example:8443".to_string()]
        );

        let triage = c.agent.for_role(AgentRole::Triage);
        assert_eq!(triage.provider, Provider::Claude);
        assert_eq!(triage.model.as_deref(), Some("haiku"));
        assert_eq!(triage.timeout, Duration::from_secs(300));
        assert_eq!(
            triage.extra_args,
            vec!["--permission-mode".to_string(), "acceptEdits".to_string()]
        );
        assert_eq!(
            triage.env,
            vec!["ANTHROPIC_API_KEY".to_string(), "CARGO_HOME".to_string()]
        );

        let review = c.agent.for_role(AgentRole::Review);
        assert_eq!(review.provider, Provider::Codex);
        assert_eq!(review.model.as_deref(), Some("gpt-5"));
        assert_eq!(review.timeout, Duration::from_secs(2400));
        assert_eq!(
            review.extra_args,
            vec!["--sandbox".to_string(), "read-only".to_string()]
        );

        let narrative = c.agent.for_role(AgentRole::ReportNarrative);
        assert_eq!(narrative.provider, Provider::Builtin);
        assert_eq!(
            narrative.model, None,
            "a claude model means nothing to builtin"
        );
        assert!(narrative.extra_args.is_empty());

        let fix = c.agent.for_role(AgentRole::Fix);
        assert_eq!(fix.model.as_deref(), Some("sonnet"));
        assert_eq!(fix.idle_timeout, Some(Duration::from_secs(600)));
    }

    // --- pieces -------------------------------------------------------------

    #[test]
    fn for_role_inherits_timeouts_always_and_the_rest_only_with_the_provider() {
        let c = Config::layered(&[repo(
            "[agent]\nprovider = \"command\"\ncommand = \"./a\"\nidle_timeout_secs = 0\nextra_args = [\"-x\"]\n\
             [agent.roles.fix]\nprovider = \"command\"\n\
             [agent.roles.review]\nprovider = \"gemini\"\nidle_timeout_secs = 30",
        )])
        .unwrap();
        let fix = c.agent.for_role(AgentRole::Fix);
        assert_eq!(fix.command, Some(CommandSpec::Shell("./a".into())));
        assert_eq!(fix.extra_args, vec!["-x".to_string()]);
        assert_eq!(fix.idle_timeout, None);
        let review = c.agent.for_role(AgentRole::Review);
        assert_eq!(review.command, None);
        assert!(review.extra_args.is_empty());
        assert_eq!(review.idle_timeout, Some(Duration::from_secs(30)));
        assert_eq!(review.timeout, Duration::from_secs(1800));
        assert_eq!(review.role, AgentRole::Review);
    }

    fn author(login: &str, kind: AuthorKind) -> Author {
        Author {
            login: login.into(),
            kind,
        }
    }

    #[test]
    fn trust() {
        let t = TrustConfig {
            users: vec!["@Alice".into(), "release-bot[bot]".into()],
            ..TrustConfig::default()
        };
        let cases = [
            (Some(author("coderabbitai", AuthorKind::Bot)), false, true),
            (
                Some(author("coderabbitai[bot]", AuthorKind::Bot)),
                false,
                true,
            ),
            (Some(author("CodeRabbitAI", AuthorKind::Bot)), false, true),
            // A person who registered a bot's name is not that bot.
            (Some(author("coderabbitai", AuthorKind::User)), false, false),
            (Some(author("random-bot", AuthorKind::Bot)), false, false),
            (Some(author("random-bot", AuthorKind::Bot)), true, false),
            (Some(author("bob", AuthorKind::User)), true, true),
            (Some(author("bob", AuthorKind::User)), false, false),
            (Some(author("alice", AuthorKind::User)), false, true),
            (Some(author("release-bot", AuthorKind::Bot)), false, true),
            (Some(author("", AuthorKind::User)), true, false),
            (None, true, false),
        ];
        for (a, collaborator, expected) in cases {
            assert_eq!(
                t.trusts(a.as_ref(), collaborator),
                expected,
                "{a:?} collaborator={collaborator}"
            );
        }
        let strict = TrustConfig {
            collaborators: false,
            ..TrustConfig::default()
        };
        assert!(!strict.trusts(Some(&author("bob", AuthorKind::User)), true));
    }

    #[test]
    fn protected_paths_cover_what_is_below_them() {
        // The glob semantics themselves are tested in `crate::glob`.
        let paths = PathsConfig {
            protected: vec!["secrets".into(), ".github/workflows/**".into()],
        };
        assert!(paths.is_protected("secrets/prod/key.pem"));
        assert!(paths.is_protected(".github/workflows/ci.yml"));
        assert!(!paths.is_protected("src/secrets.rs"));
        assert!(!paths.is_protected(".github/CODEOWNERS"));
    }

    #[test]
    fn repo_and_user_config_paths() {
        assert_eq!(repo_config_path(|_| false).unwrap(), None);
        assert_eq!(
            repo_config_path(|p| p == "shepherd.toml").unwrap(),
            Some("shepherd.toml")
        );
        assert_eq!(
            repo_config_path(|p| p == ".shepherd/config.toml").unwrap(),
            Some(".shepherd/config.toml")
        );
        assert_eq!(
            repo_config_path(|_| true).unwrap_err().to_string(),
            "both shepherd.toml and .shepherd/config.toml exist in the repository; keep one"
        );

        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            user_config_path(vars(&[("SHEPHERD_CONFIG", "/x.toml"), ("HOME", "/h")])),
            Some("/x.toml".into())
        );
        assert_eq!(
            user_config_path(vars(&[("XDG_CONFIG_HOME", "/cfg/"), ("HOME", "/h")])),
            Some("/cfg/shepherd/config.toml".into())
        );
        assert_eq!(
            user_config_path(vars(&[("XDG_CONFIG_HOME", "relative"), ("HOME", "/h")])),
            Some("/h/.config/shepherd/config.toml".into())
        );
        assert_eq!(
            user_config_path(vars(&[("SHEPHERD_CONFIG", ""), ("HOME", "/h")])),
            Some("/h/.config/shepherd/config.toml".into())
        );
        assert_eq!(user_config_path(vars(&[])), None);
    }

    #[test]
    fn forge_credential_names() {
        for name in [
            "GITHUB_TOKEN",
            "gh_token",
            "GITLAB_TOKEN",
            "CI_JOB_TOKEN",
            "GH_ENTERPRISE_TOKEN",
            "MY_GITHUB_PAT",
            "GITLAB_API_KEY",
        ] {
            assert!(is_forge_credential_name(name), "{name}");
        }
        for name in [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "PATH",
            "GITHUB_REPOSITORY",
            "CARGO_HOME",
        ] {
            assert!(!is_forge_credential_name(name), "{name}");
        }
    }

    #[test]
    fn edit_distance_and_closest() {
        assert_eq!(edit_distance("max_round", "max_rounds"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("modle", "model"), 1);
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(
            closest("modle", ["model", "provider"].into_iter()),
            Some("model")
        );
        assert_eq!(closest("zzz", ["model", "provider"].into_iter()), None);
    }

    #[test]
    fn command_spec() {
        assert_eq!(
            CommandSpec::Shell("a && b".into()).to_argv(),
            vec!["sh", "-c", "a && b"]
        );
        assert_eq!(
            CommandSpec::Argv(vec!["make".into(), "test".into()]).to_string(),
            "make test"
        );
        let parsed: VerifyConfig = toml::from_str("command = [\"a\", \"b\"]").unwrap();
        assert_eq!(
            parsed.command,
            Some(CommandSpec::Argv(vec!["a".into(), "b".into()]))
        );
        let e = toml::from_str::<VerifyConfig>("command = 3").unwrap_err();
        assert!(
            e.message().contains("a string or an array of strings"),
            "{e}"
        );
    }

    #[test]
    fn ci_durations() {
        let ci = CiConfig {
            timeout_secs: 60,
            appear_timeout_secs: 600,
            ..CiConfig::default()
        };
        assert_eq!(ci.appear_timeout(), Duration::from_secs(60));
        assert_eq!(ci.timeout(), Duration::from_secs(60));
        assert_eq!(VerifyConfig::default().timeout(), Duration::from_secs(1800));
    }
}
