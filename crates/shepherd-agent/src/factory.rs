//! Building the provider of a role from its configuration
//! ([`shepherd_core::config::AgentSettings`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use shepherd_core::config::{AgentRole, AgentSettings, CommandSpec, Provider};

use crate::agent::Agent;
use crate::builtin::BuiltinAgent;
use crate::command::{CommandAgent, CommandConfig};
use crate::exec::EnvPolicy;
use crate::prompts::Prompts;
use crate::providers::{CliAgent, CliConfig, CliConfigError, CliProvider};

/// Between SIGTERM and SIGKILL when a call times out.
pub const KILL_GRACE: Duration = Duration::from_secs(5);

/// Why a role's provider cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// Provider `command` without a command (configuration validation
    /// normally catches this first).
    #[error("agent role {role}: provider command needs agent.command")]
    MissingCommand {
        /// The role.
        role: AgentRole,
    },
    /// An empty command line.
    #[error("agent role {role}: the command is empty")]
    EmptyCommand {
        /// The role.
        role: AgentRole,
    },
    /// A CLI provider's settings are wrong.
    #[error("agent role {role}: {source}")]
    Cli {
        /// The role.
        role: AgentRole,
        /// What is wrong.
        #[source]
        source: CliConfigError,
    },
}

/// The idle timeout of `settings`: disabled (`None`) means as long as the
/// total timeout.
fn idle(settings: &AgentSettings) -> Duration {
    settings.idle_timeout.unwrap_or(settings.timeout)
}

/// The command provider's configuration for `settings`. A shell command
/// runs as `sh -c COMMAND shepherd-agent EXTRA_ARGS...` (the extra
/// arguments are `"$@"`); an argument vector runs directly, extra arguments
/// appended. `agent.env` names are passed through, token-like ones dropped.
pub fn command_config(settings: &AgentSettings) -> Result<CommandConfig, SettingsError> {
    let role = settings.role;
    let (program, mut args) = match &settings.command {
        None => return Err(SettingsError::MissingCommand { role }),
        Some(CommandSpec::Shell(line)) if line.trim().is_empty() => {
            return Err(SettingsError::EmptyCommand { role })
        }
        Some(CommandSpec::Shell(line)) => (
            PathBuf::from("sh"),
            vec!["-c".to_owned(), line.clone(), "shepherd-agent".to_owned()],
        ),
        Some(CommandSpec::Argv(argv)) => match argv.split_first() {
            Some((program, rest)) if !program.is_empty() => (PathBuf::from(program), rest.to_vec()),
            _ => return Err(SettingsError::EmptyCommand { role }),
        },
    };
    args.extend(settings.extra_args.iter().cloned());
    Ok(CommandConfig {
        program,
        args,
        env: EnvPolicy {
            pass: settings.env.clone(),
            ..EnvPolicy::default()
        },
        total_timeout: settings.timeout,
        idle_timeout: idle(settings),
        kill_grace: KILL_GRACE,
    })
}

/// A CLI provider's configuration for `settings`. `agent.env` names are
/// passed through (token-like ones dropped), except for opencode, whose
/// model keys depend on the model's provider: there they are the
/// credentials passed (forge credentials still never are).
pub fn cli_config(provider: CliProvider, settings: &AgentSettings) -> CliConfig {
    let mut config = CliConfig::new(provider);
    config.model = settings.model.clone();
    config.extra_args = settings.extra_args.clone();
    if provider == CliProvider::Opencode {
        config.env.credentials = settings.env.clone();
    } else {
        config.env.pass = settings.env.clone();
    }
    config.total_timeout = settings.timeout;
    config.idle_timeout = idle(settings);
    config.kill_grace = KILL_GRACE;
    // Retries without progress stop a call no later than silence would.
    config.no_progress_timeout = config.no_progress_timeout.min(config.idle_timeout);
    config
}

/// The provider that runs a role, from its settings
/// (`config.agent.for_role(role)`), with `prompts`.
pub fn agent_for(
    settings: &AgentSettings,
    prompts: Prompts,
) -> Result<Arc<dyn Agent>, SettingsError> {
    let provider = match settings.provider {
        Provider::Builtin => return Ok(Arc::new(BuiltinAgent::new())),
        Provider::Command => {
            return Ok(Arc::new(CommandAgent::new(
                command_config(settings)?,
                prompts,
            )))
        }
        Provider::Claude => CliProvider::Claude,
        Provider::Codex => CliProvider::Codex,
        Provider::Copilot => CliProvider::Copilot,
        Provider::Gemini => CliProvider::Gemini,
        Provider::Opencode => CliProvider::Opencode,
    };
    let agent = CliAgent::new(cli_config(provider, settings), prompts).map_err(|source| {
        SettingsError::Cli {
            role: settings.role,
            source,
        }
    })?;
    Ok(Arc::new(agent))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;
    use shepherd_core::config::AgentConfig;

    fn settings(provider: Provider) -> AgentSettings {
        let mut config = AgentConfig {
            provider,
            model: Some("m/x".into()),
            timeout_secs: 60,
            idle_timeout_secs: 0,
            extra_args: vec!["--extra".into()],
            env: vec!["OPENROUTER_API_KEY".into()],
            ..AgentConfig::default()
        };
        config.command = Some(CommandSpec::Shell("my-agent --json".into()));
        config.for_role(AgentRole::Review)
    }

    #[test]
    fn every_provider_builds() {
        for provider in Provider::ALL {
            let agent = agent_for(&settings(provider), Prompts::builtin()).unwrap();
            assert_eq!(agent.name(), provider.as_str());
        }
    }

    #[test]
    fn command_lines_and_timeouts() {
        let c = command_config(&settings(Provider::Command)).unwrap();
        assert_eq!(c.program, PathBuf::from("sh"));
        assert_eq!(
            c.args,
            ["-c", "my-agent --json", "shepherd-agent", "--extra"]
        );
        assert_eq!(c.total_timeout, Duration::from_secs(60));
        assert_eq!(
            c.idle_timeout,
            Duration::from_secs(60),
            "disabled idle = total"
        );
        let mut argv = settings(Provider::Command);
        argv.command = Some(CommandSpec::Argv(vec!["/bin/agent".into(), "-v".into()]));
        let c = command_config(&argv).unwrap();
        assert_eq!(
            (c.program, c.args),
            (
                PathBuf::from("/bin/agent"),
                vec!["-v".into(), "--extra".into()]
            )
        );
        argv.command = Some(CommandSpec::Argv(Vec::new()));
        assert_eq!(
            command_config(&argv).unwrap_err(),
            SettingsError::EmptyCommand {
                role: AgentRole::Review
            }
        );
    }

    #[test]
    fn agent_env_is_credentials_only_for_opencode() {
        let open = cli_config(CliProvider::Opencode, &settings(Provider::Opencode));
        assert_eq!(open.env.credentials, ["OPENROUTER_API_KEY"]);
        assert!(open.env.pass.is_empty());
        let claude = cli_config(CliProvider::Claude, &settings(Provider::Claude));
        assert_eq!(claude.env.pass, ["OPENROUTER_API_KEY"]);
        assert!(claude.env.credentials.is_empty());
        let mut bad = settings(Provider::Opencode);
        bad.model = Some("no-provider".into());
        assert!(matches!(
            agent_for(&bad, Prompts::builtin()),
            Err(SettingsError::Cli { .. })
        ));
    }
}
