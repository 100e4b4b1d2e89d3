//! The one command factory for the `git` binary.
//!
//! Every git process Shepherd starts is built here: a sealed environment
//! (no system config, no terminal prompts, no inherited `GIT_*` variables
//! that could point git at another repository or inject config), hooks
//! disabled, stdin null, stdout and stderr captured. Credentials travel as
//! `GIT_CONFIG_*` environment entries of the one command that talks to the
//! remote: never in argv, never in `.git/config`, never in a log line or an
//! error (both are redacted).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};

use base64::Engine as _;

/// Inherited `GIT_*` variables that are kept: they choose how to reach a
/// remote or who commits, not which repository or config git uses.
const KEPT_GIT_VARS: &[&str] = &[
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_SSH_VARIANT",
    "GIT_EXEC_PATH",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
];

/// Errors of running git.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// The program could not be started.
    #[error("cannot run {program}")]
    Spawn {
        /// The program (`git`).
        program: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Git exited unsuccessfully.
    #[error("`git {args}` failed ({status}): {stderr}")]
    Failed {
        /// The arguments, joined and redacted.
        args: String,
        /// Its exit status.
        status: ExitStatus,
        /// Its stderr, trimmed and redacted.
        stderr: String,
    },
}

/// Credentials for an HTTP(S) remote: sent as a Basic `Authorization` header.
///
/// `Debug` never shows the token.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpCredentials {
    username: String,
    token: String,
}

impl HttpCredentials {
    /// `username:token`.
    pub fn new(username: impl Into<String>, token: impl Into<String>) -> Self {
        HttpCredentials {
            username: username.into(),
            token: token.into(),
        }
    }

    /// `forge`'s form (`x-access-token:TOKEN`, `oauth2:TOKEN`).
    pub fn for_forge(forge: shepherd_core::ForgeKind, token: impl Into<String>) -> Self {
        HttpCredentials::new(forge.spec().git_username, token)
    }

    /// GitHub's form: `x-access-token:TOKEN`.
    pub fn github(token: impl Into<String>) -> Self {
        HttpCredentials::for_forge(shepherd_core::ForgeKind::GitHub, token)
    }

    /// GitLab's form: `oauth2:TOKEN`.
    pub fn gitlab(token: impl Into<String>) -> Self {
        HttpCredentials::for_forge(shepherd_core::ForgeKind::GitLab, token)
    }

    fn basic(&self) -> String {
        base64::engine::general_purpose::STANDARD
            .encode(format!("{}:{}", self.username, self.token))
    }

    /// The strings that must never be shown: the token and its encodings.
    fn secrets(&self) -> Vec<String> {
        [self.token.clone(), self.basic()]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect()
    }
}

impl std::fmt::Debug for HttpCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpCredentials")
            .field("username", &self.username)
            .field("token", &"***")
            .finish()
    }
}

/// How to run git: the program, extra environment, optional credentials.
///
/// Cheap to clone; a [`Worktree`](super::Worktree) keeps its own copy.
#[derive(Clone)]
pub struct Git {
    program: PathBuf,
    env: Vec<(OsString, OsString)>,
    credentials: Option<HttpCredentials>,
}

impl Default for Git {
    fn default() -> Self {
        Git {
            program: PathBuf::from("git"),
            env: Vec::new(),
            credentials: None,
        }
    }
}

impl std::fmt::Debug for Git {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let env_keys: Vec<_> = self.env.iter().map(|(k, _)| k).collect();
        f.debug_struct("Git")
            .field("program", &self.program)
            .field("env_keys", &env_keys)
            .field("credentials", &self.credentials)
            .finish()
    }
}

impl Git {
    /// `git` from `PATH`, the user's global config, no credentials.
    pub fn new() -> Self {
        Git::default()
    }

    /// Use another git executable.
    pub fn with_program(mut self, program: impl Into<PathBuf>) -> Self {
        self.program = program.into();
        self
    }

    /// Set an environment variable for every command (tests set `HOME`).
    /// `GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n` are the factory's own and are ignored here.
    pub fn with_env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Commit as `name <email>` (author and committer).
    pub fn with_identity(self, name: &str, email: &str) -> Self {
        self.with_env("GIT_AUTHOR_NAME", name)
            .with_env("GIT_AUTHOR_EMAIL", email)
            .with_env("GIT_COMMITTER_NAME", name)
            .with_env("GIT_COMMITTER_EMAIL", email)
    }

    /// Authenticate to HTTP(S) remotes with `credentials`.
    pub fn with_credentials(mut self, credentials: HttpCredentials) -> Self {
        self.credentials = Some(credentials);
        self
    }

    /// Redact URL userinfo and any credential from `text`.
    pub(crate) fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        if let Some(c) = &self.credentials {
            for secret in c.secrets() {
                out = out.replace(&secret, "***");
            }
        }
        redact_userinfo(&out)
    }

    /// Build the command. `auth_url` is the remote this command talks to;
    /// credentials are attached only for an HTTP(S) one, scoped to its origin.
    fn command(&self, dir: &Path, args: &[OsString], auth_url: Option<&str>) -> Command {
        self.command_in_env(dir, args, auth_url, std::env::vars_os())
    }

    /// [`Git::command`] with the parent environment given (for tests).
    fn command_in_env(
        &self,
        dir: &Path,
        args: &[OsString],
        auth_url: Option<&str>,
        parent_env: impl Iterator<Item = (OsString, OsString)>,
    ) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.current_dir(dir)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, _) in parent_env {
            let name = key.to_string_lossy();
            if name.starts_with("GIT_") && !KEPT_GIT_VARS.contains(&name.as_ref()) {
                cmd.env_remove(&key);
            }
        }
        cmd.env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            // Stable, parseable messages.
            .env("LC_ALL", "C")
            .env("LANGUAGE", "C");
        for (k, v) in &self.env {
            if !k.to_string_lossy().starts_with("GIT_CONFIG_") {
                cmd.env(k, v);
            }
        }
        // Shepherd runs unattended: the user's hooks (which may prompt, or be
        // slow) do not run on its worktree; the verify step is its check.
        // Nor does git's auto maintenance (`maintenance.auto`): it detaches
        // by default (`maintenance.autoDetach`, git-config(1)), outlives the
        // command and Shepherd, and a process left working in the clone
        // makes the lock sweep (`locks.rs`) call it busy. Gitaly turns it
        // off in its command factory for the same reason (gitaly MR 6368).
        let mut config = vec![
            ("core.hooksPath".to_string(), "/dev/null".to_string()),
            ("maintenance.auto".to_string(), "false".to_string()),
        ];
        if let (Some(creds), Some(origin)) = (&self.credentials, auth_url.and_then(http_origin)) {
            config.push((
                format!("http.{origin}.extraHeader"),
                format!("Authorization: Basic {}", creds.basic()),
            ));
        }
        cmd.env("GIT_CONFIG_COUNT", config.len().to_string());
        for (i, (k, v)) in config.into_iter().enumerate() {
            cmd.env(format!("GIT_CONFIG_KEY_{i}"), k)
                .env(format!("GIT_CONFIG_VALUE_{i}"), v);
        }
        cmd
    }

    /// Run git in `dir` and return its output whatever its exit status.
    pub(crate) fn output<S: AsRef<OsStr>>(
        &self,
        dir: &Path,
        args: &[S],
        auth_url: Option<&str>,
    ) -> Result<Output, GitError> {
        self.output_with_env(dir, args, auth_url, &[])
    }

    /// [`Git::output`] with extra environment for this one command (a
    /// trace file). `GIT_CONFIG_*` entries are ignored, as in [`Git::with_env`].
    pub(crate) fn output_with_env<S: AsRef<OsStr>>(
        &self,
        dir: &Path,
        args: &[S],
        auth_url: Option<&str>,
        env: &[(&str, &OsStr)],
    ) -> Result<Output, GitError> {
        let args: Vec<OsString> = args.iter().map(|a| a.as_ref().to_os_string()).collect();
        let shown = self.redact(&join_args(&args));
        // Never log `cmd` itself: its Debug shows the environment.
        tracing::debug!(dir = %dir.display(), args = %shown, authenticated = auth_url.is_some() && self.credentials.is_some(), "git");
        let mut cmd = self.command(dir, &args, auth_url);
        for (key, value) in env {
            if !key.starts_with("GIT_CONFIG_") {
                cmd.env(key, value);
            }
        }
        cmd.output().map_err(|source| GitError::Spawn {
            program: self.program.display().to_string(),
            source,
        })
    }

    /// Run git in `dir`; a non-zero exit is [`GitError::Failed`].
    pub(crate) fn run<S: AsRef<OsStr>>(
        &self,
        dir: &Path,
        args: &[S],
        auth_url: Option<&str>,
    ) -> Result<Output, GitError> {
        let out = self.output(dir, args, auth_url)?;
        if out.status.success() {
            Ok(out)
        } else {
            Err(self.failed(args, &out))
        }
    }

    /// Modified, deleted and untracked (not ignored) paths of the worktree
    /// at `dir` (`git status --porcelain=v1 -z`: a rename or copy names its
    /// new path, then its source, which is skipped).
    pub(crate) fn changed_paths(&self, dir: &Path) -> Result<Vec<String>, GitError> {
        let out = self.run(
            dir,
            &["status", "--porcelain=v1", "-z", "--untracked-files=all"],
            None,
        )?;
        let mut paths = Vec::new();
        let mut entries = out
            .stdout
            .split(|b| *b == 0)
            .filter(|s| !s.is_empty())
            .map(String::from_utf8_lossy);
        while let Some(entry) = entries.next() {
            let (status, path) = (entry.get(..2).unwrap_or(""), entry.get(3..).unwrap_or(""));
            paths.push(path.to_string());
            if status.starts_with('R') || status.starts_with('C') {
                entries.next();
            }
        }
        Ok(paths)
    }

    /// Run git in `dir` and return its stdout, trimmed.
    pub(crate) fn stdout<S: AsRef<OsStr>>(
        &self,
        dir: &Path,
        args: &[S],
    ) -> Result<String, GitError> {
        let out = self.run(dir, args, None)?;
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// The error for a failed command.
    pub(crate) fn failed<S: AsRef<OsStr>>(&self, args: &[S], out: &Output) -> GitError {
        let args: Vec<OsString> = args.iter().map(|a| a.as_ref().to_os_string()).collect();
        GitError::Failed {
            args: self.redact(&join_args(&args)),
            status: out.status,
            stderr: self.redact(String::from_utf8_lossy(&out.stderr).trim()),
        }
    }
}

fn join_args(args: &[OsString]) -> String {
    args.iter()
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `scheme://host[:port]/` of an HTTP(S) URL, without userinfo; `None` for
/// anything else (ssh, file, paths).
pub(crate) fn http_origin(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    let host = parsed.host_str()?;
    Some(match parsed.port() {
        Some(port) => format!("{}://{host}:{port}/", parsed.scheme()),
        None => format!("{}://{host}/", parsed.scheme()),
    })
}

/// Replace the userinfo of every `scheme://user:pass@host` in `text` with `***`.
pub(crate) fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        // The authority ends at the first '/', whitespace or quote.
        let end = tail
            .find(|c: char| c == '/' || c.is_whitespace() || matches!(c, '\'' | '"' | '<' | '>'))
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(at) => {
                out.push_str("***");
                out.push_str(&authority[at..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_is_redacted_everywhere() {
        assert_eq!(
            redact_userinfo(
                "fatal: unable to access 'https://x-access-token:ghs_abc@github.com/o/r.git/': 403"
            ),
            "fatal: unable to access 'https://***@github.com/o/r.git/': 403"
        );
        assert_eq!(
            redact_userinfo("a http://u@h:1/x and https://h2/y ok"),
            "a http://***@h:1/x and https://h2/y ok"
        );
        assert_eq!(redact_userinfo("no urls here"), "no urls here");
        assert_eq!(
            redact_userinfo("trailing https://t:k@h"),
            "trailing https://***@h"
        );
    }

    #[test]
    fn origin_of_http_urls_only() {
        assert_eq!(
            http_origin("https://user:tok@github.com/o/r.git").as_deref(),
            Some("https://github.com/")
        );
        assert_eq!(
            http_origin("http://127.0.0.1:8080/o/r.git").as_deref(),
            Some("http://127.0.0.1:8080/")
        );
        assert_eq!(http_origin("git@github.com:o/r.git"), None);
        assert_eq!(http_origin("ssh://git@github.com/o/r.git"), None);
        assert_eq!(http_origin("/tmp/remote.git"), None);
        assert_eq!(http_origin("file:///tmp/remote.git"), None);
    }

    #[test]
    fn credentials_never_show_in_debug_or_redaction() {
        let creds = HttpCredentials::github("ghs_SUPERSECRET");
        let git = Git::new().with_credentials(creds.clone());
        assert!(!format!("{creds:?}").contains("SUPERSECRET"));
        assert!(!format!("{git:?}").contains("SUPERSECRET"));
        let b64 = creds.basic();
        let redacted = git.redact(&format!("token ghs_SUPERSECRET header {b64}"));
        assert!(
            !redacted.contains("SUPERSECRET") && !redacted.contains(&b64),
            "{redacted}"
        );
    }

    #[test]
    fn inherited_git_variables_are_dropped_and_the_env_sealed() {
        let parent = [
            ("GIT_DIR", "/elsewhere/.git"),
            ("GIT_WORK_TREE", "/elsewhere"),
            ("GIT_CONFIG_PARAMETERS", "'core.hooksPath'='/evil'"),
            ("GIT_CONFIG_COUNT", "3"),
            ("GIT_SSH_COMMAND", "ssh -i key"),
            ("PATH", "/usr/bin"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let git = Git::new()
            .with_env("HOME", "/tmp/home")
            .with_env("GIT_CONFIG_KEY_0", "user.name")
            .with_credentials(HttpCredentials::github("tok"));
        let cmd = git.command_in_env(
            Path::new("."),
            &[],
            Some("https://github.com/o/r.git"),
            parent.into_iter(),
        );
        let envs: std::collections::HashMap<String, Option<String>> = cmd
            .get_envs()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.map(|v| v.to_string_lossy().into_owned()),
                )
            })
            .collect();
        let get = |k: &str| envs.get(k).cloned();
        assert_eq!(get("GIT_DIR"), Some(None));
        assert_eq!(get("GIT_WORK_TREE"), Some(None));
        assert_eq!(get("GIT_CONFIG_PARAMETERS"), Some(None));
        assert_eq!(get("GIT_SSH_COMMAND"), None, "kept: not touched");
        assert_eq!(get("PATH"), None, "kept: not touched");
        assert_eq!(get("GIT_CONFIG_NOSYSTEM"), Some(Some("1".into())));
        assert_eq!(get("GIT_TERMINAL_PROMPT"), Some(Some("0".into())));
        assert_eq!(get("HOME"), Some(Some("/tmp/home".into())));
        // The factory's own config list: hooks and auto maintenance off,
        // then the scoped header.
        assert_eq!(get("GIT_CONFIG_COUNT"), Some(Some("3".into())));
        assert_eq!(get("GIT_CONFIG_KEY_0"), Some(Some("core.hooksPath".into())));
        assert_eq!(
            get("GIT_CONFIG_KEY_1"),
            Some(Some("maintenance.auto".into()))
        );
        assert_eq!(get("GIT_CONFIG_VALUE_1"), Some(Some("false".into())));
        assert_eq!(
            get("GIT_CONFIG_KEY_2"),
            Some(Some("http.https://github.com/.extraHeader".into()))
        );
        let header = get("GIT_CONFIG_VALUE_2").flatten().unwrap_or_default();
        assert_eq!(header, "Authorization: Basic eC1hY2Nlc3MtdG9rZW46dG9r");
        // No credentials for a command that does not talk to an HTTP remote.
        let cmd = git.command_in_env(Path::new("."), &[], None, std::iter::empty());
        assert!(cmd.get_envs().all(|(k, _)| k != "GIT_CONFIG_KEY_2"));
    }
}
