//! API tokens: a type that never prints its secret, and token discovery for
//! GitHub (`GITHUB_TOKEN`/`GH_TOKEN`, then `gh auth token`) and GitLab
//! (`GITLAB_TOKEN`/`GITLAB_ACCESS_TOKEN`/`GL_TOKEN`, then an authenticated
//! `glab`).

use std::ffi::OsStr;
use std::fmt;
use std::process::{Command, Stdio};

use shepherd_core::ForgeKind;

use crate::error::{ForgeError, Result};
use crate::hosts::{is_github_dot_com, is_gitlab_dot_com};

/// Environment variables read for github.com, in order (the registry's).
const GITHUB_COM_VARS: &[&str] = ForgeKind::GitHub.spec().token_vars;

/// Environment variables read for a GitHub Enterprise host, in order: the
/// Enterprise-specific ones first, so a github.com token in `GITHUB_TOKEN` does
/// not shadow them.
const ENTERPRISE_VARS: &[&str] = ForgeKind::GitHub.spec().self_hosted_token_vars;

/// Environment variables read for any GitLab host, in order: glab's own
/// `GITLAB_TOKEN` and `GITLAB_ACCESS_TOKEN`, then `GL_TOKEN` (the name
/// semantic-release and other CI tools use).
const GITLAB_VARS: &[&str] = ForgeKind::GitLab.spec().token_vars;

/// Where a token came from, for messages (`doctor`, a rejected token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSource {
    /// An environment variable, by name.
    Env(&'static str),
    /// The output of `gh auth token --hostname HOST`.
    GhCli,
    /// The token `glab` stores for the host (`glab config get token --host
    /// HOST`, else `glab auth status --hostname HOST --show-token`).
    GlabCli,
    /// Handed to [`Token::new`] by the caller.
    Given,
}

impl fmt::Display for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenSource::Env(name) => write!(f, "the {name} environment variable"),
            TokenSource::GhCli => f.write_str("`gh auth token`"),
            TokenSource::GlabCli => f.write_str("glab's stored login"),
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

    /// Finds the token of `forge` for `host`: [`Token::discover`] or
    /// [`Token::discover_gitlab`]. This spawns processes and blocks.
    pub fn discover_for(forge: ForgeKind, host: &str) -> Result<Token> {
        match forge {
            ForgeKind::GitHub => Token::discover(host),
            ForgeKind::GitLab => Token::discover_gitlab(host),
        }
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
        if let Some(token) = token_from_env(host, Token::env_vars(host), env) {
            return Ok(token);
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

    /// Finds a GitLab token for `host` (gitlab.com or self-managed) from the
    /// process environment, else from an authenticated `glab` on `PATH`.
    ///
    /// Reads `GITLAB_TOKEN`, `GITLAB_ACCESS_TOKEN`, `GL_TOKEN`, in that order
    /// (empty values are skipped). glab has no `auth token` command: its
    /// stored token is read with `glab config get token --host HOST`, else
    /// from the `Token:` line of `glab auth status --hostname HOST
    /// --show-token` (a login kept in the system keyring). This spawns
    /// processes and blocks: call it before entering async code, or from
    /// `spawn_blocking`.
    pub fn discover_gitlab(host: &str) -> Result<Token> {
        Token::discover_gitlab_with(host, |name| std::env::var(name).ok(), "glab")
    }

    /// [`Token::discover_gitlab`] with the environment lookup and the `glab`
    /// program given, so that tests need not touch the process environment.
    pub fn discover_gitlab_with(
        host: &str,
        env: impl Fn(&str) -> Option<String>,
        glab_program: impl AsRef<OsStr>,
    ) -> Result<Token> {
        if let Some(token) = token_from_env(host, GITLAB_VARS, env) {
            return Ok(token);
        }
        let glab_note = match glab_token(host, glab_program.as_ref()) {
            Ok(secret) => {
                tracing::debug!(host, "token from glab");
                return Ok(Token {
                    secret,
                    source: TokenSource::GlabCli,
                });
            }
            Err(note) => note,
        };
        let login = if is_gitlab_dot_com(host) {
            "`glab auth login`".to_owned()
        } else {
            format!("`glab auth login --hostname {host}`")
        };
        Err(ForgeError::NoToken {
            host: host.to_owned(),
            hint: format!(
                "set one of {} (a token with the `api` scope), or log in with {login} ({glab_note})",
                GITLAB_VARS.join(", ")
            ),
        })
    }

    /// The environment variables [`Token::discover_gitlab`] reads, in order.
    pub fn gitlab_env_vars() -> &'static [&'static str] {
        GITLAB_VARS
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

/// The first non-empty value (trimmed) among the variables `names`.
fn token_from_env(
    host: &str,
    names: &[&'static str],
    env: impl Fn(&str) -> Option<String>,
) -> Option<Token> {
    names.iter().find_map(|&name| {
        let value = env(name)?;
        let value = value.trim();
        if value.is_empty() {
            return None;
        }
        tracing::debug!(host, source = name, "token from the environment");
        Some(Token {
            secret: value.to_owned(),
            source: TokenSource::Env(name),
        })
    })
}

/// The note of a `tool` that is not on `PATH`.
fn not_installed(tool: &str) -> String {
    format!("{tool} is not installed")
}

/// Runs `program` (the CLI `tool`) with `args`: its stdout and stderr when it
/// succeeded; `Err` says why not, showing the command as `shown`.
fn run_cli(
    tool: &str,
    program: &OsStr,
    args: &[&str],
    shown: &str,
) -> std::result::Result<(String, String), String> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    tracing::debug!(cmd = ?cmd, "asking {tool} for a token");
    let output = match cmd.output() {
        Ok(output) => output,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Err(not_installed(tool)),
        Err(err) => return Err(format!("{tool} could not be run: {err}")),
    };
    if !output.status.success() {
        // The CLI's output is not repeated: it is not needed to act, and may
        // hold the token or details of the CLI's config.
        return Err(format!("`{shown}` failed with {}", output.status));
    }
    Ok((
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    ))
}

/// Runs `gh auth token --hostname HOST`; `Err` says why there is no token.
fn gh_auth_token(host: &str, program: &OsStr) -> std::result::Result<String, String> {
    let shown = format!("gh auth token --hostname {host}");
    let (stdout, _) = run_cli(
        "gh",
        program,
        &["auth", "token", "--hostname", host],
        &shown,
    )?;
    let secret = stdout.trim().to_owned();
    if secret.is_empty() {
        return Err(format!("`{shown}` printed nothing"));
    }
    Ok(secret)
}

/// Runs `glab` with `args`: its stdout and stderr when it succeeded. A
/// failure shows the subcommand only (`glab config get`).
fn run_glab(program: &OsStr, args: &[&str]) -> std::result::Result<(String, String), String> {
    let subcommand: Vec<&str> = args.iter().copied().take(2).collect();
    let shown = format!("glab {}", subcommand.join(" "));
    run_cli("glab", program, args, &shown)
}

/// glab's stored token for `host`; `Err` says why there is none.
fn glab_token(host: &str, program: &OsStr) -> std::result::Result<String, String> {
    let first = match run_glab(program, &["config", "get", "token", "--host", host]) {
        Ok((stdout, _)) => {
            let secret = stdout.trim();
            if !secret.is_empty() && !secret.contains(char::is_whitespace) {
                return Ok(secret.to_owned());
            }
            format!("`glab config get token --host {host}` printed nothing")
        }
        Err(note) if note == not_installed("glab") => return Err(note),
        Err(note) => note,
    };
    // A login kept in the keyring is not in glab's config file.
    match run_glab(
        program,
        &["auth", "status", "--hostname", host, "--show-token"],
    ) {
        Ok((stdout, stderr)) => token_from_status(&stdout)
            .or_else(|| token_from_status(&stderr))
            .ok_or_else(|| format!("{first}; `glab auth status` showed no token")),
        Err(note) => Err(format!("{first}; {note}")),
    }
}

/// The token of a `Token: …` line of `glab auth status --show-token`
/// (`✓ Token: glpat-…`, `Token found: …`); a masked value (`****`) is none.
fn token_from_status(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let (label, value) = line.rsplit_once(": ")?;
        if !label.contains("Token") {
            return None;
        }
        let value = value.trim();
        let usable = !value.is_empty()
            && !value.contains(char::is_whitespace)
            && !value.chars().all(|c| c == '*');
        usable.then(|| value.to_owned())
    })
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

    /// A fake `glab`: `config get token` prints `config` and exits with
    /// `config_code`; `auth status` prints `status` on stderr, exit 0.
    fn fake_glab(dir: &Path, config: &str, config_code: i32, status: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("glab");
        let args_log = dir.join("args");
        let script = format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\nif [ \"$1\" = config ]; then printf '%s' '{config}'; exit {config_code}; fi\nprintf '%s\\n' '{status}' >&2\nexit 0\n",
            args_log.display()
        );
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn gitlab_variables_in_order() {
        let env = env_of(&[("GL_TOKEN", "three"), ("GITLAB_ACCESS_TOKEN", "two")]);
        let token = Token::discover_gitlab_with("gitlab.com", &env, "/nonexistent/glab").unwrap();
        assert_eq!(token.expose(), "two");
        assert_eq!(token.source(), &TokenSource::Env("GITLAB_ACCESS_TOKEN"));
        let env = env_of(&[("GITLAB_TOKEN", " one\n"), ("GL_TOKEN", "three")]);
        let token = Token::discover_gitlab_with("gitlab.corp", &env, "/nonexistent/glab").unwrap();
        assert_eq!(token.expose(), "one");
        // GitHub's variables are not GitLab's.
        let env = env_of(&[("GITHUB_TOKEN", "gh")]);
        assert!(Token::discover_gitlab_with("gitlab.com", &env, "/nonexistent/glab").is_err());
    }

    #[test]
    fn falls_back_to_glab_config() {
        let dir = tempfile::tempdir().unwrap();
        let glab = fake_glab(dir.path(), "glpat-fromconfig\n", 0, "");
        let token = Token::discover_gitlab_with("gitlab.corp:8443", env_of(&[]), &glab).unwrap();
        assert_eq!(token.expose(), "glpat-fromconfig");
        assert_eq!(token.source(), &TokenSource::GlabCli);
        let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
        assert_eq!(args.trim(), "config get token --host gitlab.corp:8443");
    }

    #[test]
    fn falls_back_to_glab_auth_status_for_a_keyring_login() {
        let dir = tempfile::tempdir().unwrap();
        let status = "gitlab.com\n  ✓ Logged in to gitlab.com as alice (keyring)\n  ✓ Token: glpat-fromkeyring";
        let glab = fake_glab(dir.path(), "", 0, status);
        let token = Token::discover_gitlab_with("gitlab.com", env_of(&[]), &glab).unwrap();
        assert_eq!(token.expose(), "glpat-fromkeyring");
        let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
        assert_eq!(
            args.lines().collect::<Vec<_>>(),
            [
                "config get token --host gitlab.com",
                "auth status --hostname gitlab.com --show-token"
            ]
        );
    }

    #[test]
    fn a_masked_or_missing_glab_token_is_no_token() {
        let dir = tempfile::tempdir().unwrap();
        let glab = fake_glab(dir.path(), "", 1, "  ✓ Token: **************************");
        let err = Token::discover_gitlab_with("gitlab.corp", env_of(&[]), &glab).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, ForgeError::NoToken { .. }));
        assert!(
            text.contains("GITLAB_TOKEN, GITLAB_ACCESS_TOKEN, GL_TOKEN"),
            "{text}"
        );
        assert!(
            text.contains("glab auth login --hostname gitlab.corp"),
            "{text}"
        );
        assert!(text.contains("showed no token"), "{text}");
        let err = Token::discover_gitlab_with("gitlab.com", env_of(&[]), "/nonexistent/glab")
            .unwrap_err()
            .to_string();
        assert!(err.contains("glab is not installed"), "{err}");
        assert!(err.contains("`glab auth login`"), "{err}");
        assert_eq!(
            token_from_status("Token found: glpat-x1"),
            Some("glpat-x1".into())
        );
        assert_eq!(token_from_status("✓ Logged in to h as u: fine"), None);
    }

    #[test]
    fn gh_printing_nothing_is_no_token() {
        let dir = tempfile::tempdir().unwrap();
        let gh = fake_gh(dir.path(), "", 0);
        assert!(Token::discover_with("github.com", env_of(&[]), &gh).is_err());
    }
}
