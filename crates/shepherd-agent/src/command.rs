//! The `command` provider: any executable speaking JSON.
//!
//! Protocol (version 1): Shepherd runs the program in the task's worktree
//! through [`crate::exec`] and writes one [`CommandRequest`] as JSON to its
//! stdin, then closes it. The program answers with the answer JSON (matching
//! `answer_schema`) either on stdout, or in the file named by the
//! `SHEPHERD_ANSWER_FILE` variable (which wins when the program wrote it). It
//! exits 0. An answer that fails validation is asked for once more, with
//! `attempt: 2` and `previous_errors` filled in, then fails closed.

use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::agent::{Agent, AgentContext, AgentError};
use crate::answer::{check_fix_answer, check_triage_answer, FixAnswer, TriageAnswer};
use crate::exec::{self, EnvPolicy, ProcessSpec, Termination};
use crate::prompts::{retry_section, Prompts};
use crate::task::{FixTask, Role, TriageTask};
use crate::validate::{answer_schema, ask_validated, Attempt};

/// The protocol version of [`CommandRequest`].
pub const PROTOCOL_VERSION: u32 = 1;

/// The variable naming the file an agent may write its answer to.
pub const ANSWER_FILE_ENV: &str = "SHEPHERD_ANSWER_FILE";

/// Keep this much of stderr in an error message.
const STDERR_TAIL: usize = 2000;

/// What a command agent reads on stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandRequest {
    /// [`PROTOCOL_VERSION`].
    pub version: u32,
    /// The role asked.
    pub role: Role,
    /// 1, or 2 for the retry.
    pub attempt: u32,
    /// Why the previous answer was refused (on the retry).
    pub previous_errors: Vec<String>,
    /// The rendered prompt (with the retry section on the retry), for
    /// programs that hand it to a model.
    pub prompt: String,
    /// The JSON Schema the answer must match.
    pub answer_schema: serde_json::Value,
    /// The task ([`TriageTask`] or [`FixTask`]) as JSON.
    pub task: serde_json::Value,
}

/// How to run a command agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandConfig {
    /// The executable.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra variables (token-like names are dropped regardless).
    pub env: EnvPolicy,
    /// The longest one call may run.
    pub total_timeout: Duration,
    /// The longest one call may go without output.
    pub idle_timeout: Duration,
    /// Between SIGTERM and SIGKILL on timeout.
    pub kill_grace: Duration,
}

impl CommandConfig {
    /// Runs `program` with no arguments, a 30-minute total and 10-minute idle
    /// timeout, and a 5-second kill grace.
    pub fn new(program: impl Into<PathBuf>) -> Self {
        CommandConfig {
            program: program.into(),
            args: Vec::new(),
            env: EnvPolicy::default(),
            total_timeout: Duration::from_secs(30 * 60),
            idle_timeout: Duration::from_secs(10 * 60),
            kill_grace: Duration::from_secs(5),
        }
    }
}

/// The `command` provider.
#[derive(Debug, Clone)]
pub struct CommandAgent {
    config: CommandConfig,
    prompts: Prompts,
}

impl CommandAgent {
    /// A provider running `config` with `prompts`.
    pub fn new(config: CommandConfig, prompts: Prompts) -> Self {
        CommandAgent { config, prompts }
    }

    /// One call: the request on stdin, the raw answer back.
    async fn call(
        &self,
        call: &Call<'_>,
        attempt: Attempt,
        ctx: &AgentContext,
    ) -> Result<String, AgentError> {
        let Call {
            role,
            worktree,
            prompt,
            schema,
            task,
        } = *call;
        let mut prompt = prompt.to_owned();
        if !attempt.previous_errors.is_empty() {
            prompt.push_str(&retry_section(&attempt.previous_errors));
        }
        let request = CommandRequest {
            version: PROTOCOL_VERSION,
            role,
            attempt: attempt.number,
            previous_errors: attempt.previous_errors,
            prompt,
            answer_schema: schema.clone(),
            task: task.clone(),
        };
        let stdin = serde_json::to_vec(&request).map_err(|e| AgentError::InvalidTask {
            role,
            reason: format!("cannot serialize the request: {e}"),
        })?;
        let answer_dir = tempfile::tempdir()
            .map_err(|e| AgentError::io("creating", &std::env::temp_dir(), e))?;
        let answer_file = answer_dir.path().join("answer.json");
        let mut env = self.config.env.clone();
        env.set.push((
            ANSWER_FILE_ENV.to_owned(),
            answer_file.display().to_string(),
        ));
        let spec = ProcessSpec {
            program: self.config.program.clone(),
            args: self.config.args.clone(),
            cwd: worktree.to_owned(),
            env,
            stdin,
            total_timeout: self.config.total_timeout,
            idle_timeout: self.config.idle_timeout,
            kill_grace: self.config.kill_grace,
            transcript: ctx.transcript_path(attempt.number),
        };
        let output = exec::run(&spec).await?;
        let program = self.config.program.display().to_string();
        match output.termination {
            Termination::TimedOut(kind) => Err(AgentError::Timeout {
                program,
                kind,
                after: match kind {
                    exec::TimeoutKind::Total => self.config.total_timeout,
                    exec::TimeoutKind::Idle => self.config.idle_timeout,
                },
            }),
            Termination::Exited(status) if !status.success() => Err(AgentError::Failed {
                program,
                status: status.to_string(),
                stderr_tail: tail(&String::from_utf8_lossy(&output.stderr), STDERR_TAIL),
            }),
            Termination::Exited(_) => match std::fs::read(&answer_file) {
                Ok(bytes) if !bytes.is_empty() => Ok(String::from_utf8_lossy(&bytes).into_owned()),
                Ok(_) => Ok(String::from_utf8_lossy(&output.stdout).into_owned()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
                }
                Err(e) => Err(AgentError::io("reading answer file", &answer_file, e)),
            },
        }
    }

    async fn ask<A, T, C, E>(
        &self,
        role: Role,
        task: &T,
        worktree: &std::path::Path,
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
        ask_validated(role, |attempt| self.call(&call, attempt, ctx), check).await
    }
}

/// What stays the same between the attempts of one call.
#[derive(Clone, Copy)]
struct Call<'a> {
    role: Role,
    worktree: &'a std::path::Path,
    prompt: &'a str,
    schema: &'a serde_json::Value,
    task: &'a serde_json::Value,
}

fn tail(s: &str, max: usize) -> String {
    let count = s.chars().count();
    let kept: String = s.chars().skip(count.saturating_sub(max)).collect();
    kept.trim().to_owned()
}

#[async_trait]
impl Agent for CommandAgent {
    fn name(&self) -> &str {
        "command"
    }

    async fn triage(
        &self,
        task: &TriageTask,
        ctx: &AgentContext,
    ) -> Result<TriageAnswer, AgentError> {
        let prompt = self
            .prompts
            .render_triage(task, &answer_schema::<TriageAnswer>())?;
        self.ask(
            Role::Triage,
            task,
            &task.worktree,
            prompt,
            ctx,
            |a: &TriageAnswer| check_triage_answer(task, a).map_err(|e| vec![e]),
        )
        .await
    }

    async fn fix(&self, task: &FixTask, ctx: &AgentContext) -> Result<FixAnswer, AgentError> {
        if task.items.is_empty() {
            return Err(AgentError::InvalidTask {
                role: task.role(),
                reason: "no items".to_owned(),
            });
        }
        let prompt = self
            .prompts
            .render_fix(task, &answer_schema::<FixAnswer>())?;
        self.ask(
            task.role(),
            task,
            &task.worktree,
            prompt,
            ctx,
            |a: &FixAnswer| check_fix_answer(task, a),
        )
        .await
    }
}
