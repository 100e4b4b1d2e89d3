//! The agent CLIs Shepherd drives: [`CliProvider`], and the one `match`
//! naming every CLI (`CliProvider::spec`), which maps each to its
//! provider module's `CliSpec`. Below the provider modules' users, above
//! the modules themselves, so no provider module imports this one.

use shepherd_core::config::Provider;

use crate::exec::{LineSignal, OutputStream};
use crate::providers::invocation::{CliFailure, ConfiguredEndpoint};
use crate::providers::spec::CliSpec;
use crate::providers::versions::Support;
use crate::providers::{claude, codex, copilot, gemini, opencode};

/// An agent CLI Shepherd knows how to drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CliProvider {
    /// Claude Code: `claude -p`.
    Claude,
    /// OpenAI Codex CLI: `codex exec`.
    Codex,
    /// GitHub Copilot CLI: `copilot -p`.
    Copilot,
    /// Gemini CLI: `gemini -p`.
    Gemini,
    /// opencode: `opencode run`.
    Opencode,
}

impl CliProvider {
    /// Every CLI provider.
    pub const ALL: [CliProvider; 5] = [
        CliProvider::Claude,
        CliProvider::Codex,
        CliProvider::Copilot,
        CliProvider::Gemini,
        CliProvider::Opencode,
    ];

    /// The provider's name, as in the configuration (`claude`).
    pub fn name(self) -> &'static str {
        self.spec().name()
    }

    /// The executable looked up on the agent's `PATH` (the same as the name).
    pub fn program(self) -> &'static str {
        self.name()
    }

    /// The CLI provider of a configured provider; `None` for `builtin` and
    /// `command`.
    pub fn from_provider(provider: Provider) -> Option<Self> {
        match provider {
            Provider::Claude => Some(CliProvider::Claude),
            Provider::Codex => Some(CliProvider::Codex),
            Provider::Copilot => Some(CliProvider::Copilot),
            Provider::Gemini => Some(CliProvider::Gemini),
            Provider::Opencode => Some(CliProvider::Opencode),
            Provider::Builtin | Provider::Command => None,
        }
    }

    /// The variables this CLI gets besides [`crate::exec::BASE_ENV`], given
    /// which variables are set in the parent environment: `(pass,
    /// credentials)` for [`EnvPolicy`](crate::exec::EnvPolicy). Credentials are the provider's own
    /// model keys; forge credentials are never among them.
    pub fn env_names(self, is_set: impl Fn(&str) -> bool) -> (Vec<String>, Vec<String>) {
        let xdg = [
            "XDG_CONFIG_HOME",
            "XDG_DATA_HOME",
            "XDG_STATE_HOME",
            "XDG_CACHE_HOME",
        ];
        let (pass, credentials) = self.spec().env_names(&is_set);
        let own = |v: Vec<&str>| v.into_iter().map(str::to_owned).collect();
        (own(xdg.into_iter().chain(pass).collect()), own(credentials))
    }

    /// Fixed variables this CLI gets: no auto-update, telemetry or other
    /// traffic besides the model API during a run.
    pub fn fixed_env(self) -> Vec<(String, String)> {
        self.spec()
            .fixed_env()
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    /// How this CLI's output is read while it runs: which lines are
    /// progress, retries, or a call that cannot succeed. `None`: only the
    /// total and idle timeouts apply.
    ///
    /// A provider module adds its own by writing a `classify(OutputStream,
    /// &str) -> LineSignal` and returning it from its spec.
    pub fn classifier(self) -> Option<fn(OutputStream, &str) -> LineSignal> {
        self.spec().classifier()
    }

    /// The CLI's own error in its output after a failed call, if it said one.
    pub(crate) fn own_error(self, stdout: &str, stderr: &str) -> Option<CliFailure> {
        self.spec().own_error(stdout, stderr)
    }

    /// The variable holding the CLI's model key, named in an error about
    /// credentials.
    pub fn key_variable(self) -> Option<&'static str> {
        self.spec().key_variable()
    }

    /// The variable that points the CLI at another endpoint, and the
    /// endpoint it uses without it.
    pub fn base_url_variable(self) -> Option<(&'static str, &'static str)> {
        self.spec().base_url_variable()
    }

    /// The endpoint the CLI's own configuration selects when the base URL
    /// variable is unset.
    pub(crate) fn configured_endpoint(
        self,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Option<ConfiguredEndpoint> {
        self.spec().configured_endpoint(env)
    }
}

impl CliProvider {
    /// The tested release and the package of this CLI. Kept equal to the
    /// pinned `package.json` of the end-to-end tests (tested).
    pub fn support(self) -> Support {
        self.spec().support()
    }
}

impl CliProvider {
    /// The description of this CLI. (The one `match` naming every CLI.)
    pub(crate) fn spec(self) -> &'static dyn CliSpec {
        match self {
            CliProvider::Claude => &claude::Spec,
            CliProvider::Codex => &codex::Spec,
            CliProvider::Copilot => &copilot::Spec,
            CliProvider::Gemini => &gemini::Spec,
            CliProvider::Opencode => &opencode::Spec,
        }
    }
}

impl std::fmt::Display for CliProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod spec_tests {
    use super::*;
    use crate::exec;

    #[test]
    fn every_cli_is_described_completely() {
        let mut names = Vec::new();
        for cli in CliProvider::ALL {
            let spec = cli.spec();
            assert_eq!(spec.name(), cli.name());
            assert!(!names.contains(&spec.name()), "{cli}: name twice");
            names.push(spec.name());
            // A version range: a package and a tested release.
            let support = spec.support();
            assert!(!support.package.is_empty(), "{cli}");
            assert_ne!(support.tested, (0, 0, 0), "{cli}");
            assert!(support.range().ends_with(".x"), "{cli}");
            // Its credentials are model keys, never a forge's; its fixed
            // values are not tokens.
            for all_set in [false, true] {
                let (pass, credentials) = spec.env_names(&|_| all_set);
                for name in pass.iter().chain(&credentials) {
                    assert!(!exec::is_forge_credential(name), "{cli}: {name}");
                }
            }
            for (name, _) in spec.fixed_env() {
                assert!(!exec::is_token_like(name), "{cli}: {name}");
            }
            if let Some((var, default)) = spec.base_url_variable() {
                assert!(!var.is_empty() && !default.is_empty(), "{cli}");
            }
        }
        // The configuration's providers and the registry agree.
        for cli in CliProvider::ALL {
            let provider: shepherd_core::config::Provider = cli.name().parse().unwrap_or_default();
            assert_eq!(CliProvider::from_provider(provider), Some(cli), "{cli}");
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod version_tests {
    use super::*;
    use crate::providers::versions::{parse_version, Fit};

    #[test]
    fn versions_are_read_from_what_each_cli_prints() {
        let cases = [
            ("2.1.332 (Claude Code)\n", Some((2, 1, 332))),
            ("codex-cli 0.171.0\n", Some((0, 171, 0))),
            (
                "GitHub Copilot CLI 1.0.102. Run 'copilot update' to check for updates.",
                Some((1, 0, 102)),
            ),
            ("0.61.0\n", Some((0, 61, 0))),
            ("1.18.33\n", Some((1, 18, 33))),
            ("no version here 1.2", None),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_version(text), expected, "{text}");
        }
    }

    #[test]
    fn the_tested_minor_series_is_supported() {
        let s = CliProvider::Claude.support();
        assert_eq!(s.range(), "2.1.x");
        assert_eq!(s.fit((2, 1, 204)), Fit::Supported);
        assert_eq!(s.fit((2, 2, 0)), Fit::Untested);
    }

    /// The table above is the pinned `package.json` of the end-to-end tests.
    #[test]
    fn the_tested_versions_are_the_pinned_ones() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../shepherd-model-server/clis/package.json"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        for cli in CliProvider::ALL {
            let s = cli.support();
            let pinned = json["dependencies"][s.package]
                .as_str()
                .unwrap_or_else(|| panic!("{} is not pinned in {path}", s.package));
            let (a, b, c) = s.tested;
            assert_eq!(pinned, format!("{a}.{b}.{c}"), "{}", cli.name());
        }
    }
}
