//! What every subprocess provider does the same way: render the role's
//! prompt, make one call per attempt through a [`Transport`], validate the
//! answer with one retry ([`ask_validated`]), and record each attempt's usage.
//!
//! A provider only says how one call runs ([`Transport::call`]); the roles
//! are implemented once, here.

use std::path::Path;
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::agent::{AgentContext, AgentError};
use crate::answer::{
    ApplyReviewAnswer, FixAnswer, FixValidationAnswer, ReviewAnswer, TriageAnswer,
};
use crate::check::{
    check_apply_review_answer, check_fix_answer, check_fix_validation_answer, check_review_answer,
    check_triage_answer,
};
use crate::exec::{self, ProcessOutput, ProcessSpec, Termination, TimeoutKind};
use crate::prompts::Prompts;
use crate::task::{ApplyReviewTask, FixTask, FixValidationTask, ReviewTask, Role, TriageTask};
use crate::usage::{Usage, UsageRecord};
use crate::validate::{answer_schema, ask_validated, Attempt};

/// What stays the same between the attempts of one call.
#[derive(Clone, Copy)]
pub(crate) struct Call<'a> {
    /// The role asked.
    pub role: Role,
    /// Where the agent runs.
    pub worktree: &'a Path,
    /// The rendered prompt (without the retry section).
    pub prompt: &'a str,
    /// The answer's JSON Schema.
    pub schema: &'a serde_json::Value,
    /// The task as JSON.
    pub task: &'a serde_json::Value,
}

/// What one call returned: the answer's text (a JSON document, still to be
/// validated) and what the call consumed.
pub(crate) struct RawAnswer {
    pub text: String,
    pub usage: Usage,
}

/// How a provider makes one call.
#[async_trait]
pub(crate) trait Transport: Send + Sync {
    /// The provider's name, for usage records.
    fn provider(&self) -> &str;

    /// Runs one attempt of `call`. `attempt.previous_errors` is non-empty on
    /// the retry; the transport shows them to the agent.
    async fn call(
        &self,
        call: &Call<'_>,
        attempt: Attempt,
        ctx: &AgentContext,
    ) -> Result<RawAnswer, AgentError>;
}

async fn ask<A, T, C, E>(
    transport: &(impl Transport + ?Sized),
    role: Role,
    task: &T,
    worktree: &Path,
    prompt: String,
    ctx: &AgentContext,
    check: C,
) -> Result<A, AgentError>
where
    A: DeserializeOwned + JsonSchema,
    T: Serialize,
    C: Fn(&A) -> Result<(), Vec<E>>,
    E: std::fmt::Display,
{
    let schema = answer_schema::<A>();
    let task_json = serde_json::to_value(task).map_err(|e| AgentError::InvalidTask {
        role,
        reason: format!("cannot serialize the task: {e}"),
    })?;
    let call = Call {
        role,
        worktree,
        prompt: &prompt,
        schema: &schema,
        task: &task_json,
    };
    ask_validated(
        role,
        |attempt| {
            let number = attempt.number;
            async move {
                let raw = transport.call(&call, attempt, ctx).await?;
                ctx.usage.record(UsageRecord {
                    role,
                    provider: transport.provider().to_owned(),
                    attempt: number,
                    usage: raw.usage,
                });
                Ok(raw.text)
            }
        },
        check,
    )
    .await
}

pub(crate) async fn triage(
    t: &(impl Transport + ?Sized),
    prompts: &Prompts,
    task: &TriageTask,
    ctx: &AgentContext,
) -> Result<TriageAnswer, AgentError> {
    let prompt = prompts.render_triage(task, &answer_schema::<TriageAnswer>())?;
    ask(
        t,
        Role::Triage,
        task,
        &task.worktree,
        prompt,
        ctx,
        |a: &TriageAnswer| check_triage_answer(task, a).map_err(|e| vec![e]),
    )
    .await
}

pub(crate) async fn fix(
    t: &(impl Transport + ?Sized),
    prompts: &Prompts,
    task: &FixTask,
    ctx: &AgentContext,
) -> Result<FixAnswer, AgentError> {
    if task.items.is_empty() {
        return Err(AgentError::InvalidTask {
            role: task.role(),
            reason: "no items".to_owned(),
        });
    }
    let prompt = prompts.render_fix(task, &answer_schema::<FixAnswer>())?;
    ask(
        t,
        task.role(),
        task,
        &task.worktree,
        prompt,
        ctx,
        |a: &FixAnswer| check_fix_answer(task, a),
    )
    .await
}

pub(crate) async fn validate_fix(
    t: &(impl Transport + ?Sized),
    prompts: &Prompts,
    task: &FixValidationTask,
    ctx: &AgentContext,
) -> Result<FixValidationAnswer, AgentError> {
    if task.items.is_empty() {
        return Err(AgentError::InvalidTask {
            role: Role::FixValidation,
            reason: "no items".to_owned(),
        });
    }
    let prompt = prompts.render_fix_validation(task, &answer_schema::<FixValidationAnswer>())?;
    ask(
        t,
        Role::FixValidation,
        task,
        &task.worktree,
        prompt,
        ctx,
        |a: &FixValidationAnswer| check_fix_validation_answer(task, a),
    )
    .await
}

pub(crate) async fn review(
    t: &(impl Transport + ?Sized),
    prompts: &Prompts,
    task: &ReviewTask,
    ctx: &AgentContext,
) -> Result<ReviewAnswer, AgentError> {
    let prompt = prompts.render_review(task, &answer_schema::<ReviewAnswer>())?;
    ask(
        t,
        Role::Review,
        task,
        &task.worktree,
        prompt,
        ctx,
        check_review_answer,
    )
    .await
}

pub(crate) async fn apply_review(
    t: &(impl Transport + ?Sized),
    prompts: &Prompts,
    task: &ApplyReviewTask,
    ctx: &AgentContext,
) -> Result<ApplyReviewAnswer, AgentError> {
    if task.findings.is_empty() {
        return Err(AgentError::InvalidTask {
            role: Role::ApplyReview,
            reason: "no findings".to_owned(),
        });
    }
    let prompt = prompts.render_apply_review(task, &answer_schema::<ApplyReviewAnswer>())?;
    ask(
        t,
        Role::ApplyReview,
        task,
        &task.worktree,
        prompt,
        ctx,
        |a: &ApplyReviewAnswer| check_apply_review_answer(task, a),
    )
    .await
}

/// The prompt of `call` for `attempt`: with the retry section when the
/// previous answer was refused.
pub(crate) fn prompt_for(call: &Call<'_>, attempt: &Attempt) -> String {
    let mut prompt = call.prompt.to_owned();
    if !attempt.previous_errors.is_empty() {
        prompt.push_str(&crate::prompts::retry_section(&attempt.previous_errors));
    }
    prompt
}

/// The default longest one call may run.
pub(crate) const DEFAULT_TOTAL_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// The default longest one call may go without output.
pub(crate) const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// The default time between SIGTERM and SIGKILL on timeout.
pub(crate) const DEFAULT_KILL_GRACE: Duration = Duration::from_secs(5);

/// Keep this much of stderr in an error message.
pub(crate) const STDERR_TAIL: usize = 2000;

/// Runs `spec` through [`exec::run`]; a timeout or an unsuccessful exit is
/// an error naming the program.
pub(crate) async fn run_to_success(spec: &ProcessSpec) -> Result<ProcessOutput, AgentError> {
    let output = exec::run(spec).await?;
    let program = || spec.program.display().to_string();
    match output.termination {
        Termination::TimedOut(kind) => Err(AgentError::Timeout {
            program: program(),
            kind,
            after: match kind {
                TimeoutKind::Total => spec.total_timeout,
                TimeoutKind::Idle => spec.idle_timeout,
                // No watch here: a no-progress stop cannot happen.
                TimeoutKind::NoProgress => spec.idle_timeout,
            },
        }),
        Termination::Exited(status) if !status.success() => Err(AgentError::Failed {
            program: program(),
            status: status.to_string(),
            stderr_tail: stderr_tail(&output),
        }),
        Termination::Exited(_) => Ok(output),
    }
}

/// The end of a process's stderr, for an error message.
pub(crate) fn stderr_tail(output: &ProcessOutput) -> String {
    tail(&String::from_utf8_lossy(&output.stderr), STDERR_TAIL)
}

/// The answer file an agent was told to write, as text; `None` when the
/// agent did not create it.
pub(crate) fn read_answer_file(path: &Path) -> Result<Option<String>, AgentError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(AgentError::io("reading answer file", path, e)),
    }
}

/// Implements [`crate::Agent`] for a [`Transport`] that has a `prompts`
/// field: every role goes through this module's drivers, and the agent is
/// named after its provider.
macro_rules! agent_through_driver {
    ($agent:ty) => {
        #[async_trait::async_trait]
        impl $crate::agent::Agent for $agent {
            fn name(&self) -> &str {
                $crate::driver::Transport::provider(self)
            }

            async fn triage(
                &self,
                task: &$crate::task::TriageTask,
                ctx: &$crate::agent::AgentContext,
            ) -> Result<$crate::answer::TriageAnswer, $crate::agent::AgentError> {
                $crate::driver::triage(self, &self.prompts, task, ctx).await
            }

            async fn fix(
                &self,
                task: &$crate::task::FixTask,
                ctx: &$crate::agent::AgentContext,
            ) -> Result<$crate::answer::FixAnswer, $crate::agent::AgentError> {
                $crate::driver::fix(self, &self.prompts, task, ctx).await
            }

            async fn validate_fix(
                &self,
                task: &$crate::task::FixValidationTask,
                ctx: &$crate::agent::AgentContext,
            ) -> Result<$crate::answer::FixValidationAnswer, $crate::agent::AgentError> {
                $crate::driver::validate_fix(self, &self.prompts, task, ctx).await
            }

            async fn review(
                &self,
                task: &$crate::task::ReviewTask,
                ctx: &$crate::agent::AgentContext,
            ) -> Result<$crate::answer::ReviewAnswer, $crate::agent::AgentError> {
                $crate::driver::review(self, &self.prompts, task, ctx).await
            }

            async fn apply_review(
                &self,
                task: &$crate::task::ApplyReviewTask,
                ctx: &$crate::agent::AgentContext,
            ) -> Result<$crate::answer::ApplyReviewAnswer, $crate::agent::AgentError> {
                $crate::driver::apply_review(self, &self.prompts, task, ctx).await
            }
        }
    };
}
pub(crate) use agent_through_driver;

/// The last `max` characters of `s`, trimmed.
pub(crate) fn tail(s: &str, max: usize) -> String {
    let count = s.chars().count();
    let kept: String = s.chars().skip(count.saturating_sub(max)).collect();
    kept.trim().to_owned()
}
