//! The agent CLIs (`claude`, `codex`, `copilot`, `gemini`, `opencode`) as
//! providers: one [`CliAgent`] type, one module per CLI saying how its
//! command line is built for a role and how its output is read.
//!
//! Every call goes through [`crate::exec`] (sealed environment, process
//! group, timeouts, transcript) in the task's worktree, and through the
//! shared role driver (prompt, schema validation, one retry, usage). The
//! prompt goes on stdin wherever the CLI reads it there (all but
//! `copilot`, whose prompt is an argument). Read-only roles (triage,
//! fix-validation, review) get read-only tools or a read-only sandbox;
//! writing roles (fix, cluster-fix, apply-review) may edit files; no role
//! may commit or push. The README of this crate documents each command line.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::agent::{AgentContext, AgentError};
use crate::driver::{
    agent_through_driver, prompt_for, read_answer_file, stderr_tail, Call, RawAnswer, Transport,
    DEFAULT_IDLE_TIMEOUT, DEFAULT_KILL_GRACE, DEFAULT_TOTAL_TIMEOUT,
};
use crate::exec::{self, EnvPolicy, ProcessOutput, ProcessSpec, Termination, TimeoutKind, Watch};
use crate::prompts::Prompts;
use crate::providers::codex;
use crate::providers::invocation::{CliFailure, Invocation, Request};
use crate::providers::registry::CliProvider;
use crate::usage::Usage;
use crate::validate::Attempt;

/// The reason phrase of an HTTP status.
fn reason_phrase(code: u16) -> &'static str {
    match code {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "error",
    }
}

/// How to run one agent CLI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliConfig {
    /// Which CLI.
    pub provider: CliProvider,
    /// The executable: a name looked up on the agent's `PATH`, or a path.
    pub program: PathBuf,
    /// The model (`--model`); `None` leaves the CLI's default. For opencode
    /// it is `provider/model`.
    pub model: Option<String>,
    /// Extra arguments, placed before the tool and permission flags.
    pub extra_args: Vec<String>,
    /// Extra variables: `pass` names (token-like ones dropped), `credentials`
    /// (model keys, forge credentials dropped), fixed `set` values, and the
    /// `parent` environment they come from. The provider's own names
    /// ([`CliProvider::env_names`]) are added to these.
    pub env: EnvPolicy,
    /// The longest one call may run.
    pub total_timeout: Duration,
    /// The longest one call may go without output.
    pub idle_timeout: Duration,
    /// Between SIGTERM and SIGKILL on timeout.
    pub kill_grace: Duration,
    /// How long the CLI may retry (429s, reconnects) without progress
    /// before it is stopped; only for CLIs whose output Shepherd reads
    /// while they run ([`CliProvider::classifier`]).
    pub no_progress_timeout: Duration,
}

/// The default longest a CLI may retry without progress.
pub const DEFAULT_NO_PROGRESS_TIMEOUT: Duration = Duration::from_secs(5 * 60);

impl CliConfig {
    /// Runs `provider`'s executable from `PATH` with its default model, a
    /// 30-minute total and 10-minute idle timeout, and a 5-second kill grace.
    pub fn new(provider: CliProvider) -> Self {
        CliConfig {
            provider,
            program: PathBuf::from(provider.program()),
            model: None,
            extra_args: Vec::new(),
            env: EnvPolicy::default(),
            total_timeout: DEFAULT_TOTAL_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            kill_grace: DEFAULT_KILL_GRACE,
            no_progress_timeout: DEFAULT_NO_PROGRESS_TIMEOUT,
        }
    }
}

/// Why a CLI provider cannot be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CliConfigError {
    /// An opencode model must name its provider.
    #[error("opencode model {model:?} must be written provider/model (e.g. anthropic/claude-sonnet-4-5)")]
    OpencodeModel {
        /// The model given.
        model: String,
    },
    /// The model is empty or starts with `-` (it would read as a flag).
    #[error("model {model:?} is not a model name")]
    BadModel {
        /// The model given.
        model: String,
    },
}

/// A provider driving one agent CLI (see the module docs).
#[derive(Debug, Clone)]
pub struct CliAgent {
    config: CliConfig,
    prompts: Prompts,
}

impl CliAgent {
    /// A provider running `config` with `prompts`. Refuses a model that is
    /// not a model name, and an opencode model without its provider.
    pub fn new(config: CliConfig, prompts: Prompts) -> Result<Self, CliConfigError> {
        if let Some(model) = &config.model {
            if model.trim().is_empty() || model.starts_with('-') {
                return Err(CliConfigError::BadModel {
                    model: model.clone(),
                });
            }
            if config.provider == CliProvider::Opencode && !model.contains('/') {
                return Err(CliConfigError::OpencodeModel {
                    model: model.clone(),
                });
            }
        }
        Ok(CliAgent { config, prompts })
    }

    /// Its configuration.
    pub fn config(&self) -> &CliConfig {
        &self.config
    }

    /// The environment policy of a call: the configured one plus the
    /// provider's own names.
    fn env_policy(&self) -> EnvPolicy {
        let mut env = self.config.env.clone();
        let own_parent;
        let parent: &[(OsString, OsString)] = match &env.parent {
            Some(p) => p,
            None => {
                own_parent = std::env::vars_os().collect::<Vec<_>>();
                &own_parent
            }
        };
        let is_set = |name: &str| {
            parent
                .iter()
                .any(|(k, v)| k.to_str() == Some(name) && !v.is_empty())
        };
        let (pass, credentials) = self.config.provider.env_names(is_set);
        env.pass.extend(pass);
        env.credentials.extend(credentials);
        env.set.extend(self.config.provider.fixed_env());
        env
    }

    /// The value of `name` in the environment the agent is built from.
    fn parent_value(&self, name: &str) -> Option<String> {
        let value = match &self.config.env.parent {
            Some(parent) => parent
                .iter()
                .find(|(k, _)| k.to_str() == Some(name))
                .map(|(_, v)| v.clone()),
            None => std::env::var_os(name),
        };
        value
            .and_then(|v| v.into_string().ok())
            .filter(|v| !v.trim().is_empty())
    }

    /// The endpoint the CLI talks to, for an error message: the base URL
    /// variable, else what the CLI's own configuration selects, else the
    /// CLI's default; with where it comes from and the key variable to
    /// check.
    fn endpoint(&self) -> Option<(String, Option<String>)> {
        let provider = self.config.provider;
        let (variable, default) = provider.base_url_variable()?;
        let key = provider.key_variable().map(str::to_owned);
        if let Some(url) = self.parent_value(variable) {
            return Some((url, key));
        }
        let env = |name: &str| self.parent_value(name);
        Some(match provider.configured_endpoint(&env) {
            Some(configured) => (
                format!("{} ({})", configured.url, configured.source),
                configured.key_variable.or(key),
            ),
            None => (default.to_owned(), key),
        })
    }

    /// A failed call as the user reads it: the CLI's own error, its
    /// endpoint, and what to check.
    fn failure(
        &self,
        status: String,
        own: Option<CliFailure>,
        output: &ProcessOutput,
    ) -> AgentError {
        let provider = self.config.provider;
        let Some(own) = own else {
            return AgentError::Failed {
                program: self.config.program.display().to_string(),
                status,
                stderr_tail: stderr_tail(output),
            };
        };
        let message = match own.status {
            Some(code) => {
                let mut m = format!("{code} {}", reason_phrase(code));
                let endpoint = self.endpoint();
                if let Some((url, _)) = &endpoint {
                    m.push_str(&format!(" from {url}"));
                }
                if code == 429 {
                    m.push_str(": rate limited");
                }
                if matches!(code, 401 | 403) {
                    let key = endpoint
                        .and_then(|(_, key)| key)
                        .or_else(|| provider.key_variable().map(str::to_owned));
                    if let Some(key) = key {
                        m.push_str(&format!(": check {key}"));
                    }
                }
                format!("{m}; {provider} said: {}", own.message)
            }
            None => own.message,
        };
        AgentError::Cli {
            provider: provider.name().to_owned(),
            status,
            message,
        }
    }

    /// Runs `spec`, watching the output where the provider can; a timeout,
    /// a stop or an unsuccessful exit is an error with the CLI's own words.
    async fn run(&self, spec: &ProcessSpec) -> Result<ProcessOutput, AgentError> {
        let provider = self.config.provider;
        let watch = provider.classifier().map(|classify| Watch {
            classify: Arc::new(classify),
            no_progress: self.config.no_progress_timeout,
        });
        let output = exec::run_watched(spec, watch.as_ref()).await?;
        let own = || {
            provider.own_error(
                &String::from_utf8_lossy(&output.stdout),
                &String::from_utf8_lossy(&output.stderr),
            )
        };
        if let Some(reason) = &output.stopped {
            let own = own().or_else(|| {
                Some(CliFailure {
                    status: None,
                    message: reason.clone(),
                })
            });
            return Err(self.failure(
                "stopped: the error is not one a retry fixes".to_owned(),
                own,
                &output,
            ));
        }
        match output.termination {
            Termination::TimedOut(TimeoutKind::NoProgress) => Err(self.failure(
                format!(
                    "stopped after {}s of retries without progress",
                    self.config.no_progress_timeout.as_secs_f32()
                ),
                own().or_else(|| {
                    Some(CliFailure {
                        status: None,
                        message: "retrying without progress".to_owned(),
                    })
                }),
                &output,
            )),
            Termination::TimedOut(kind) => Err(AgentError::Timeout {
                program: self.config.program.display().to_string(),
                kind,
                after: match kind {
                    TimeoutKind::Idle => spec.idle_timeout,
                    _ => spec.total_timeout,
                },
            }),
            Termination::Exited(status) if !status.success() => {
                Err(self.failure(status.to_string(), own(), &output))
            }
            Termination::Exited(_) => Ok(output),
        }
    }
}

#[async_trait]
impl Transport for CliAgent {
    fn provider(&self) -> &str {
        self.config.provider.name()
    }

    async fn call(
        &self,
        call: &Call<'_>,
        attempt: Attempt,
        ctx: &AgentContext,
    ) -> Result<RawAnswer, AgentError> {
        let prompt = prompt_for(call, &attempt);
        let request = Request {
            role: call.role,
            worktree: call.worktree,
            prompt: &prompt,
            schema: call.schema,
            model: self.config.model.as_deref(),
            extra_args: &self.config.extra_args,
        };
        let Invocation {
            args,
            stdin,
            scratch,
            answer_file,
            env: call_env,
        } = self.config.provider.spec().invocation(&request)?;
        let mut env = self.env_policy();
        env.set.extend(call_env);
        if self.config.provider == CliProvider::Codex {
            // codex ignores OPENAI_BASE_URL: a CODEX_HOME of Shepherd's declares it.
            if let Some(base_url) = self.parent_value("OPENAI_BASE_URL") {
                let dir = match (&ctx.transcript_dir, &scratch) {
                    (Some(dir), _) => dir.clone(),
                    (None, Some(scratch)) => scratch.path().to_owned(),
                    (None, None) => std::env::temp_dir(),
                };
                let home = codex::prepare_home(&dir, &base_url)?;
                env.set
                    .push(("CODEX_HOME".to_owned(), home.display().to_string()));
            }
        }
        let spec = ProcessSpec {
            program: self.config.program.clone(),
            args,
            cwd: call.worktree.to_owned(),
            env,
            stdin,
            total_timeout: self.config.total_timeout,
            idle_timeout: self.config.idle_timeout,
            kill_grace: self.config.kill_grace,
            transcript: ctx.transcript_path(attempt.number),
        };
        let output = self.run(&spec).await?;
        let answer_file = match &answer_file {
            Some(path) => read_answer_file(path)?,
            None => None,
        };
        // The scratch files (the schema, the answer file) have been read.
        drop(scratch);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let parsed = self
            .config
            .provider
            .spec()
            .parse(&stdout, answer_file.as_deref())
            .map_err(|reason| AgentError::Cli {
                provider: self.config.provider.name().to_owned(),
                status: "exit status: 0".to_owned(),
                message: reason,
            })?;
        Ok(RawAnswer {
            text: parsed.text,
            usage: Usage {
                input_tokens: parsed.input_tokens,
                output_tokens: parsed.output_tokens,
                cost_usd: parsed.cost_usd,
                duration: output.duration,
            },
        })
    }
}

agent_through_driver!(CliAgent);

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use crate::exec;

    #[test]
    fn no_provider_names_a_forge_credential() {
        for provider in CliProvider::ALL {
            let (pass, credentials) = provider.env_names(|_| true);
            for name in pass.iter().chain(&credentials) {
                assert!(!exec::is_forge_credential(name), "{provider}: {name}");
            }
            for name in &pass {
                assert!(
                    !exec::is_token_like(name),
                    "{provider} passes {name} as plain"
                );
            }
        }
    }

    #[test]
    fn cloud_credentials_only_when_that_cloud_is_chosen() {
        let (_, plain) = CliProvider::Claude.env_names(|_| false);
        assert_eq!(plain, ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"]);
        let (pass, bedrock) = CliProvider::Claude.env_names(|n| n == "CLAUDE_CODE_USE_BEDROCK");
        assert!(bedrock.contains(&"AWS_SECRET_ACCESS_KEY".to_owned()));
        assert!(pass.contains(&"AWS_REGION".to_owned()));
        assert!(!bedrock.contains(&"GOOGLE_APPLICATION_CREDENTIALS".to_owned()));
        let (_, copilot) = CliProvider::Copilot.env_names(|_| false);
        assert!(copilot.is_empty(), "no BYOK key without a BYOK endpoint");
        let (pass, byok) = CliProvider::Copilot.env_names(|n| n == "COPILOT_PROVIDER_BASE_URL");
        assert!(byok.contains(&"COPILOT_PROVIDER_API_KEY".to_owned()));
        assert!(pass.contains(&"COPILOT_PROVIDER_BASE_URL".to_owned()));
    }

    #[test]
    fn models_are_checked() {
        let mut config = CliConfig::new(CliProvider::Opencode);
        config.model = Some("claude-sonnet".into());
        assert!(matches!(
            CliAgent::new(config.clone(), Prompts::builtin()),
            Err(CliConfigError::OpencodeModel { .. })
        ));
        config.model = Some("anthropic/claude-sonnet".into());
        assert!(CliAgent::new(config, Prompts::builtin()).is_ok());
        let mut flag = CliConfig::new(CliProvider::Claude);
        flag.model = Some("--dangerously-skip-permissions".into());
        assert!(matches!(
            CliAgent::new(flag, Prompts::builtin()),
            Err(CliConfigError::BadModel { .. })
        ));
    }
}
