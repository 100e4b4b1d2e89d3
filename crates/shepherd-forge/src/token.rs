//! API tokens: a type that never prints its secret, and GitHub token discovery.

use std::ffi::OsStr;
use std::fmt;
use std::process::{Command, Stdio};

use crate::error::{ForgeError, Result};
use crate::github::endpoints::is_github_dot_com;

/// Environment variables read for github.com, in order.
const GITHUB_COM_VARS: &[&str] = &["GITHUB_TOKEN", "GH_TOKEN"];

/// Environment variables read for a GitHub Enterprise host, in order: the
/// Enterprise-specific ones first, so a github.com token in `GITHUB_TOKEN` does
/// not shadow them.
const ENTERPRISE_VARS: &[&str] = &[
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
];

/// Where a token came from, for messages (`doctor`, a rejected token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSource {
    /// An environment variable, by name.
    Env(&'static str),
    /// The output of `gh auth token --hostname HOST`.
    GhCli,
    /// Handed to [`Token::new`] by the caller.
    Given,
}

impl fmt::Display for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenSource::Env(name) => write!(f, "the {name} environment variable"),
            TokenSource::GhCli => f.write_str("`gh auth token`"),
            TokenSource::Given => f.write_str("the caller"),
        }
    }
}

/// An API token. `Debug` and `Display` print `***`; only [`Token::expose`]
/// gives the secret, for the `Authorization` header and git credentials.
#[derive(Clone)]
pub struct Token {
    secret: String,
    source: TokenSource,
}

impl Token {
    /// A token given directly (a flag, a test).
    pub fn new(secret: impl Into<String>) -> Self {
        Token {
            secret: secret.into(),
            source: TokenSource::Given,
        }
    }

    /// The secret. Never log it, never put it in an error or an agent's environment.
    pub fn expose(&self) -> &str {
        &self.secret
    }

    /// Where the token came from.
    pub fn source(&self) -> &TokenSource {
        &self.source
    }

    /// Finds a GitHub token for `host` from the process environment, else from
    /// `gh auth token --hostname HOST` when `gh` is on `PATH`.
    ///
    /// For github.com: `GITHUB_TOKEN`, then `GH_TOKEN`. For an Enterprise host:
    /// `GH_ENTERPRISE_TOKEN`, `GITHUB_ENTERPRISE_TOKEN`, `GITHUB_TOKEN`, `GH_TOKEN`.
    /// Empty values are skipped. This spawns a process and blocks: call it
    /// before entering async code, or from `spawn_blocking`.
    pub fn discover(host: &str) -> Result<Token> {
        Token::discover_with(host, |name| std::env::var(name).ok(), "gh")
    }

    /// [`Token::discover`] with the environment lookup and the `gh` program
    /// given, so that tests need not touch the process environment.
    ///
    /// A `gh` that cannot be spawned, exits non-zero or prints nothing means
    /// "no token" ([`ForgeError::NoToken`], with a hint naming what to set).
    pub fn discover_with(
        host: &str,
        env: impl Fn(&str) -> Option<String>,
        gh_program: impl AsRef<OsStr>,
    ) -> Result<Token> {
        for &name in Token::env_vars(host) {
            if let Some(value) = env(name) {
                let value = value.trim();
                if !value.is_empty() {
                    tracing::debug!(host, source = name, "token from the environment");
                    return Ok(Token {
                        secret: value.to_owned(),
                        source: TokenSource::Env(name),
                    });
                }
            }
        }
        let gh_note = match gh_auth_token(host, gh_program.as_ref()) {
            Ok(secret) => {
                tracing::debug!(host, "token from `gh auth token`");
                return Ok(Token {
                    secret,
                    source: TokenSource::GhCli,
                });
            }
            Err(note) => note,
        };
        let vars = Token::env_vars(host).join(", ");
        let login = if is_github_dot_com(host) {
            "`gh auth login`".to_owned()
        } else {
            format!("`gh auth login --hostname {host}`")
        };
        Err(ForgeError::NoToken {
            host: host.to_owned(),
            hint: format!("set one of {vars}, or log in with {login} ({gh_note})"),
        })
    }

    /// The environment variables [`Token::discover`] reads for `host`, in order.
    pub fn env_vars(host: &str) -> &'static [&'static str] {
        if is_github_dot_com(host) {
            GITHUB_COM_VARS
        } else {
            ENTERPRISE_VARS
        }
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// Runs `gh auth token --hostname HOST`; `Err` says why there is no token.
fn gh_auth_token(host: &str, program: &OsStr) -> std::result::Result<String, String> {
    let mut cmd = Command::new(program);
    cmd.args(["auth", "token", "--hostname", host])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    tracing::debug!(cmd = ?cmd, "asking gh for a token");
    let output = match cmd.output() {
        Ok(output) => output,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err("gh is not installed".to_owned())
        }
        Err(err) => return Err(format!("gh could not be run: {err}")),
    };
    if !output.status.success() {
        // gh's stderr is not repeated: it is not needed to act, and keeps
        // anything gh prints about its config out of our messages.
        return Err(format!(
            "`gh auth token --hostname {host}` failed with {}",
            output.status
        ));
    }
    let secret = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    if secret.is_empty() {
        return Err(format!("`gh auth token --hostname {host}` printed nothing"));
    }
    Ok(secret)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};

    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| map.get(name).cloned()
    }

    /// A fake `gh` script that prints `output` and exits with `code`.
    fn fake_gh(dir: &Path, output: &str, code: i32) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("gh");
        let args_log = dir.join("args");
        let script = format!(
            "#!/bin/sh\necho \"$@\" > '{}'\nprintf '%s' '{output}'\nexit {code}\n",
            args_log.display()
        );
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn debug_and_display_hide_the_secret() {
        let token = Token::new("ghp_secret123");
        assert_eq!(format!("{token:?}"), "***");
        assert_eq!(format!("{token}"), "***");
        assert_eq!(token.expose(), "ghp_secret123");
    }

    #[test]
    fn github_token_wins_over_gh_token() {
        let env = env_of(&[("GITHUB_TOKEN", "one"), ("GH_TOKEN", "two")]);
        let token = Token::discover_with("github.com", env, "/nonexistent/gh").unwrap();
        assert_eq!(token.expose(), "one");
        assert_eq!(token.source(), &TokenSource::Env("GITHUB_TOKEN"));
    }

    #[test]
    fn empty_variables_are_skipped() {
        let env = env_of(&[("GITHUB_TOKEN", "  "), ("GH_TOKEN", "two\n")]);
        let token = Token::discover_with("github.com", env, "/nonexistent/gh").unwrap();
        assert_eq!(token.expose(), "two");
    }

    #[test]
    fn enterprise_variables_come_first_for_enterprise_hosts() {
        let env = env_of(&[("GITHUB_TOKEN", "dotcom"), ("GH_ENTERPRISE_TOKEN", "ghe")]);
        let token = Token::discover_with("ghe.corp", &env, "/nonexistent/gh").unwrap();
        assert_eq!(token.expose(), "ghe");
        // github.com ignores the Enterprise variables.
        let token = Token::discover_with("github.com", &env, "/nonexistent/gh").unwrap();
        assert_eq!(token.expose(), "dotcom");
        let only_ghe = env_of(&[("GITHUB_ENTERPRISE_TOKEN", "ghe2")]);
        assert!(Token::discover_with("github.com", &only_ghe, "/nonexistent/gh").is_err());
    }

    #[test]
    fn falls_back_to_gh_auth_token() {
        let dir = tempfile::tempdir().unwrap();
        let gh = fake_gh(dir.path(), "gho_fromgh\n", 0);
        let token = Token::discover_with("ghe.corp:8443", env_of(&[]), &gh).unwrap();
        assert_eq!(token.expose(), "gho_fromgh");
        assert_eq!(token.source(), &TokenSource::GhCli);
        let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
        assert_eq!(args.trim(), "auth token --hostname ghe.corp:8443");
    }

    #[test]
    fn failing_gh_is_no_token_with_a_hint() {
        let dir = tempfile::tempdir().unwrap();
        let gh = fake_gh(dir.path(), "", 1);
        let err = Token::discover_with("github.com", env_of(&[]), &gh).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, ForgeError::NoToken { .. }));
        assert!(text.contains("GITHUB_TOKEN, GH_TOKEN"), "{text}");
        assert!(text.contains("gh auth login"), "{text}");
        assert!(text.contains("failed"), "{text}");
    }

    #[test]
    fn missing_gh_is_no_token() {
        let err = Token::discover_with("ghe.corp", env_of(&[]), "/nonexistent/gh").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("no token for ghe.corp"), "{text}");
        assert!(text.contains("GH_ENTERPRISE_TOKEN"), "{text}");
        assert!(text.contains("--hostname ghe.corp"), "{text}");
        assert!(text.contains("gh is not installed"), "{text}");
    }

    #[test]
    fn gh_printing_nothing_is_no_token() {
        let dir = tempfile::tempdir().unwrap();
        let gh = fake_gh(dir.path(), "", 0);
        assert!(Token::discover_with("github.com", env_of(&[]), &gh).is_err());
    }
}
