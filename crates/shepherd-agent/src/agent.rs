//! The agent seam: the trait every provider implements, and its errors.

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;

use crate::answer::{
    ApplyReviewAnswer, FixAnswer, FixValidationAnswer, ReviewAnswer, TriageAnswer,
};
use crate::exec::TimeoutKind;
use crate::task::{ApplyReviewTask, FixTask, FixValidationTask, ReviewTask, Role, TriageTask};
use crate::usage::UsageLog;

/// Where a call leaves its traces.
#[derive(Debug, Clone, Default)]
pub struct AgentContext {
    /// The directory transcripts are written to (the round's directory in
    /// the run directory); `None` keeps no transcript.
    pub transcript_dir: Option<PathBuf>,
    /// Names this call's transcripts, e.g. `triage` or `fix-PRRT_1`; the files
    /// are `<label>.attempt-<n>.json`. Characters outside `[A-Za-z0-9._-]`
    /// are replaced by `_`.
    pub label: String,
    /// Where subprocess providers record what each attempt consumed
    /// (tokens, cost, time). A clone shares the log: pass a clone of one
    /// log to many calls to collect a round's usage in one place.
    pub usage: UsageLog,
}

impl AgentContext {
    /// A context writing transcripts named `label` into `dir`, with a fresh
    /// usage log.
    pub fn new(dir: impl Into<PathBuf>, label: impl Into<String>) -> Self {
        AgentContext {
            transcript_dir: Some(dir.into()),
            label: label.into(),
            usage: UsageLog::new(),
        }
    }

    /// The same context recording usage into `log`.
    pub fn with_usage(mut self, log: UsageLog) -> Self {
        self.usage = log;
        self
    }

    /// The transcript path of attempt `number`, if transcripts are kept.
    pub fn transcript_path(&self, number: u32) -> Option<PathBuf> {
        let dir = self.transcript_dir.as_deref()?;
        let label = file_name_safe(&self.label, "agent");
        Some(dir.join(format!("{label}.attempt-{number}.json")))
    }
}

/// `label` as a file name: every character outside `[A-Za-z0-9._-]`
/// becomes `_`, and a name that would be empty or hidden (a leading `.`)
/// gets `prefix` in front.
pub fn file_name_safe(label: &str, prefix: &str) -> String {
    let safe: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() || safe.starts_with('.') {
        format!("{prefix}{safe}")
    } else {
        safe
    }
}

/// Why an agent call failed. Every variant fails closed: the engine never
/// treats a failed call as an answer.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The answer stayed invalid after the retry.
    #[error("{role} answer invalid after {attempts} attempts: {}", errors.join("; "))]
    InvalidAnswer {
        /// The role asked.
        role: Role,
        /// How many times the agent was asked.
        attempts: u32,
        /// The last attempt's errors.
        errors: Vec<String>,
    },
    /// The provider does not implement this role.
    #[error("provider {provider} does not implement the {role} role")]
    Unsupported {
        /// The provider's name.
        provider: String,
        /// The role asked.
        role: Role,
    },
    /// The task cannot be given to an agent.
    #[error("invalid {role} task: {reason}")]
    InvalidTask {
        /// The role asked.
        role: Role,
        /// What is wrong.
        reason: String,
    },
    /// The agent's process could not be run (spawn, wait, transcript).
    #[error(transparent)]
    Exec(#[from] crate::exec::ExecError),
    /// The agent exited unsuccessfully.
    #[error("agent {program} failed with {status}: {stderr_tail}")]
    Failed {
        /// The program.
        program: String,
        /// The exit status (`exit status: 2`, `signal: 9 (SIGKILL)`).
        status: String,
        /// The end of its stderr.
        stderr_tail: String,
    },
    /// An agent CLI failed and said why (its own error, from its JSON
    /// events or its stderr): `claude: 401 Unauthorized from
    /// https://api.anthropic.com: check ANTHROPIC_API_KEY (exit status: 1)`.
    #[error("{provider}: {message} ({status})")]
    Cli {
        /// The provider (`claude`).
        provider: String,
        /// How it ended (`exit status: 1`, `stopped after 30s of retries
        /// without progress`).
        status: String,
        /// The CLI's error, with what to check.
        message: String,
    },
    /// The agent ran too long, or was silent too long; its process group was killed.
    #[error("agent {program} timed out ({kind}, after {after:?}); its process group was killed")]
    Timeout {
        /// The program.
        program: String,
        /// Total or idle.
        kind: TimeoutKind,
        /// The limit that was reached.
        after: Duration,
    },
    /// Reading or writing a file failed.
    #[error("{action} {path}")]
    Io {
        /// What was being done (`reading`, `writing transcript`).
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A prompt could not be rendered.
    #[error(transparent)]
    Prompt(#[from] crate::prompts::PromptError),
}

impl AgentError {
    pub(crate) fn io(action: &'static str, path: &Path, source: std::io::Error) -> Self {
        AgentError::Io {
            action,
            path: path.to_owned(),
            source,
        }
    }
}

/// A provider of agent work. The engine holds one per role as
/// `Arc<dyn Agent>`; implementations must be cheap to share.
///
/// A provider edits files only inside the task's worktree and never commits:
/// Shepherd stages and commits what changed.
#[async_trait]
pub trait Agent: Send + Sync {
    /// The provider's name (`builtin`, `command`, `claude`, ...), for logs
    /// and reports.
    fn name(&self) -> &str;

    /// Triage the task's items. The answer has exactly one decision per item
    /// ([`crate::check_triage_answer`] holds).
    async fn triage(
        &self,
        task: &TriageTask,
        ctx: &AgentContext,
    ) -> Result<TriageAnswer, AgentError>;

    /// Fix the task's item or cluster in `task.worktree`. The answer has one
    /// outcome per item, and a cluster assessment exactly for a cluster task
    /// ([`crate::check_fix_answer`] holds).
    async fn fix(&self, task: &FixTask, ctx: &AgentContext) -> Result<FixAnswer, AgentError>;

    /// Judge whether a fix (its diff, in `task.worktree`) addresses each of
    /// the task's items, read-only. The answer has one verdict per item
    /// ([`crate::check_fix_validation_answer`] holds). The default refuses
    /// with [`AgentError::Unsupported`].
    async fn validate_fix(
        &self,
        task: &FixValidationTask,
        ctx: &AgentContext,
    ) -> Result<FixValidationAnswer, AgentError> {
        let _ = (task, ctx);
        Err(AgentError::Unsupported {
            provider: self.name().to_owned(),
            role: Role::FixValidation,
        })
    }

    /// Review the commits the forge has not seen, read-only
    /// ([`crate::check_review_answer`] holds). The default refuses with
    /// [`AgentError::Unsupported`].
    async fn review(
        &self,
        task: &ReviewTask,
        ctx: &AgentContext,
    ) -> Result<ReviewAnswer, AgentError> {
        let _ = (task, ctx);
        Err(AgentError::Unsupported {
            provider: self.name().to_owned(),
            role: Role::Review,
        })
    }

    /// Fix the review findings that held, in `task.worktree`. The answer has
    /// one outcome per finding ([`crate::check_apply_review_answer`] holds).
    /// The default refuses with [`AgentError::Unsupported`].
    async fn apply_review(
        &self,
        task: &ApplyReviewTask,
        ctx: &AgentContext,
    ) -> Result<ApplyReviewAnswer, AgentError> {
        let _ = (task, ctx);
        Err(AgentError::Unsupported {
            provider: self.name().to_owned(),
            role: Role::ApplyReview,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcript_names_are_sanitized() {
        let ctx = AgentContext::new("/run/r1", "fix-PRRT_1/../x y");
        assert_eq!(
            ctx.transcript_path(2),
            Some(PathBuf::from("/run/r1/fix-PRRT_1_.._x_y.attempt-2.json"))
        );
        let dotted = AgentContext::new("/run", "..");
        assert_eq!(
            dotted.transcript_path(1),
            Some(PathBuf::from("/run/agent...attempt-1.json"))
        );
        assert_eq!(AgentContext::default().transcript_path(1), None);
    }
}
