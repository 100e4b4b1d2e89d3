//! The named values of the configuration: providers, roles, modes, commands.

use std::fmt;
use std::str::FromStr;

use super::error::{parse_name, ParseNameError};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};

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

pub(super) const PROVIDER_NAMES: &[&str] = &[
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

pub(super) const ON_EXHAUST_NAMES: &[&str] = &["approval", "fail"];

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
    /// Approve only what a maintainer approved on the forge: the label
    /// [`APPROVAL_LABEL`] (added by a writer other than Shepherd's own
    /// account) or a `/shepherd approve` comment, each covering feedback
    /// published before it; otherwise pause (exit 3). For stateless CI runs: the approval lives on the
    /// forge, not in a local database, and the next run (triggered by the
    /// label event) reads it there.
    Label,
}

/// The label by which a maintainer approves a pull request's reply-only
/// decisions in `approve.mode = "label"`. Adding a label needs triage
/// access on GitHub and the Reporter role on GitLab: a PR's author from a
/// fork cannot add it. Shepherd never adds or removes it itself, and one
/// its own account added approves nothing.
pub const APPROVAL_LABEL: &str = "shepherd-approved";

pub(super) const APPROVE_MODE_NAMES: &[&str] = &["prompt", "auto", "label"];

impl ApproveMode {
    /// Every value, in declaration order.
    pub const ALL: [ApproveMode; 3] = [ApproveMode::Prompt, ApproveMode::Auto, ApproveMode::Label];

    /// How strict the mode is: a pull request's own file may only raise it
    /// (`auto` < `label` < `prompt`).
    pub fn strictness(self) -> u8 {
        match self {
            ApproveMode::Auto => 0,
            ApproveMode::Label => 1,
            ApproveMode::Prompt => 2,
        }
    }
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

pub(super) const ROLE_NAMES: &[&str] = &[
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

impl AgentRole {
    /// Whether the role may change files. Providers give read-only roles
    /// read-only tools (or a read-only sandbox) and writing roles write
    /// access to the worktree; no role may commit or push.
    pub fn writes(self) -> bool {
        matches!(
            self,
            AgentRole::Fix | AgentRole::ClusterFix | AgentRole::ApplyReview
        )
    }
}

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
