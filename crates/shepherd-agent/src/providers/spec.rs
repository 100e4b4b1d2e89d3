//! What Shepherd knows of one agent CLI, in one place per CLI: the
//! [`CliSpec`] each provider module implements, and the registry
//! ([`CliProvider::spec`], the one `match` naming every CLI).
//!
//! Adding a CLI is a module implementing [`CliSpec`], a variant of
//! [`CliProvider`] (and of the configuration's `Provider`); the compiler
//! names every other place. `docs/extending.md` lists them.

use crate::agent::AgentError;
use crate::exec::{LineSignal, OutputStream};
use crate::providers::invocation::{CliFailure, ConfiguredEndpoint, Invocation, Parsed, Request};
use crate::providers::versions::Support;

/// Which of its variables a CLI gets, given which are set in the parent
/// environment: `(pass, credentials)` names for [`crate::exec::EnvPolicy`].
pub(crate) type EnvNames = (Vec<&'static str>, Vec<&'static str>);

/// One agent CLI, described and driven (see the module docs).
pub(crate) trait CliSpec: Sync {
    /// The provider's name, as in the configuration and on `PATH` (`claude`).
    fn name(&self) -> &'static str;

    /// The npm package and the release the end-to-end tests run.
    fn support(&self) -> Support;

    /// The variables this CLI gets besides [`crate::exec::BASE_ENV`] and the
    /// XDG directories: `(pass, credentials)`. Credentials are the CLI's own
    /// model keys; forge credentials are dropped even if named here.
    fn env_names(&self, is_set: &dyn Fn(&str) -> bool) -> EnvNames;

    /// Fixed variables: no auto-update, telemetry or other traffic besides
    /// the model API during a run.
    fn fixed_env(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    /// How the CLI's output is read while it runs; `None`: only the total
    /// and idle timeouts apply.
    fn classifier(&self) -> Option<fn(OutputStream, &str) -> LineSignal> {
        None
    }

    /// The CLI's own error in its output after a failed call, if it said one.
    fn own_error(&self, stdout: &str, stderr: &str) -> Option<CliFailure>;

    /// The variable holding the CLI's model key, named in an error about
    /// credentials.
    fn key_variable(&self) -> Option<&'static str>;

    /// The variable that points the CLI at another endpoint, and the
    /// endpoint it uses without it.
    fn base_url_variable(&self) -> Option<(&'static str, &'static str)>;

    /// The endpoint the CLI's own configuration selects when the base URL
    /// variable is unset (`env` reads Shepherd's environment); `None`: the
    /// default of [`CliSpec::base_url_variable`].
    fn configured_endpoint(
        &self,
        _env: &dyn Fn(&str) -> Option<String>,
    ) -> Option<ConfiguredEndpoint> {
        None
    }

    /// The command line, stdin and scratch files of one call.
    fn invocation(&self, request: &Request<'_>) -> Result<Invocation, AgentError>;

    /// The answer and usage in what the CLI printed (and wrote to the
    /// call's answer file, if it has one).
    fn parse(&self, stdout: &str, answer_file: Option<&str>) -> Result<Parsed, String>;
}
