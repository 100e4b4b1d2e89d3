//! The `command` provider: any executable speaking JSON.
//!
//! Protocol (version 1): Shepherd runs the program in the task's worktree
//! through [`crate::exec`] and writes one [`CommandRequest`] as JSON to its
//! stdin, then closes it. The program answers with the answer JSON (matching
//! `answer_schema`) either on stdout, or in the file named by the
//! `SHEPHERD_ANSWER_FILE` variable (which wins when the program wrote it). It
//! exits 0. An answer that fails validation is asked for once more, with
//! `attempt: 2` and `previous_errors` filled in, then fails closed.
//!
//! Every role speaks the same protocol: `role` is `triage`, `fix`,
//! `cluster-fix`, `fix-validation`, `review` or `apply-review`, and `task`
//! is that role's task type. The crate's README shows an example. Usage is
//! recorded with the measured duration only (the protocol carries no token
//! counts).

use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::agent::{AgentContext, AgentError};
use crate::driver::{
    agent_through_driver, prompt_for, read_answer_file, run_to_success, Call, RawAnswer, Transport,
    DEFAULT_IDLE_TIMEOUT, DEFAULT_KILL_GRACE, DEFAULT_TOTAL_TIMEOUT,
};
use crate::exec::{EnvPolicy, ProcessSpec};
use crate::prompts::Prompts;
use crate::task::Role;
use crate::usage::Usage;
use crate::validate::Attempt;

/// The protocol version of [`CommandRequest`].
pub const PROTOCOL_VERSION: u32 = 1;

/// The variable naming the file an agent may write its answer to.
pub const ANSWER_FILE_ENV: &str = "SHEPHERD_ANSWER_FILE";

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
    /// The task as JSON: a [`TriageTask`](crate::task::TriageTask), [`FixTask`](crate::task::FixTask), [`FixValidationTask`](crate::task::FixValidationTask),
    /// [`ReviewTask`](crate::task::ReviewTask) or [`ApplyReviewTask`](crate::task::ApplyReviewTask), per `role`.
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
            total_timeout: DEFAULT_TOTAL_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            kill_grace: DEFAULT_KILL_GRACE,
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
}

#[async_trait]
impl Transport for CommandAgent {
    fn provider(&self) -> &str {
        "command"
    }

    /// One call: the request on stdin, the raw answer back.
    async fn call(
        &self,
        call: &Call<'_>,
        attempt: Attempt,
        ctx: &AgentContext,
    ) -> Result<RawAnswer, AgentError> {
        let prompt = prompt_for(call, &attempt);
        let request = CommandRequest {
            version: PROTOCOL_VERSION,
            role: call.role,
            attempt: attempt.number,
            previous_errors: attempt.previous_errors,
            prompt,
            answer_schema: call.schema.clone(),
            task: call.task.clone(),
        };
        let stdin = serde_json::to_vec(&request).map_err(|e| AgentError::InvalidTask {
            role: call.role,
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
            cwd: call.worktree.to_owned(),
            env,
            stdin,
            total_timeout: self.config.total_timeout,
            idle_timeout: self.config.idle_timeout,
            kill_grace: self.config.kill_grace,
            transcript: ctx.transcript_path(attempt.number),
        };
        let output = run_to_success(&spec).await?;
        // An answer file left empty does not count: the answer is on stdout.
        let text = match read_answer_file(&answer_file)? {
            Some(text) if !text.is_empty() => text,
            _ => String::from_utf8_lossy(&output.stdout).into_owned(),
        };
        Ok(RawAnswer {
            text,
            usage: Usage::timed(output.duration),
        })
    }
}

agent_through_driver!(CommandAgent);
