//! The sealed `git` environment every call goes through (a private HOME,
//! no system or global config, no prompts, a cleared environment), and
//! what a failed call reports.

use std::ffi::OsString;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use crate::scenario::EmulatedForge;

/// Errors from running `git`.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// `git` could not be started.
    #[error("cannot run git {what}")]
    Spawn {
        /// Which git command.
        what: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// `git` exited with a failure.
    #[error("git {what} failed ({status}): {stderr}")]
    Failed {
        /// Which git command.
        what: String,
        /// Its exit status.
        status: ExitStatus,
        /// What it printed on stderr.
        stderr: String,
    },
    /// `git` printed something unexpected.
    #[error("git {what} printed unexpected output: {output}")]
    BadOutput {
        /// Which git command.
        what: String,
        /// The output.
        output: String,
    },
    /// A file or directory for git could not be created.
    #[error("cannot create {}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

/// Builds sealed `git` commands: cleared environment, a private HOME, no
/// system or global config, no prompts.
#[derive(Debug, Clone)]
pub(crate) struct GitEnv {
    home: PathBuf,
    path: Option<OsString>,
}

impl GitEnv {
    /// Uses `home` (an empty temporary directory) as HOME.
    pub(crate) fn new(home: PathBuf) -> Self {
        GitEnv {
            home,
            path: std::env::var_os("PATH"),
        }
    }

    fn sealed_vars(&self) -> Vec<(&'static str, OsString)> {
        let mut vars = vec![
            ("HOME", self.home.clone().into_os_string()),
            ("GIT_CONFIG_NOSYSTEM", "1".into()),
            (
                "GIT_CONFIG_GLOBAL",
                self.home.join(".gitconfig").into_os_string(),
            ),
            ("GIT_TERMINAL_PROMPT", "0".into()),
            ("LC_ALL", "C".into()),
        ];
        if let Some(path) = &self.path {
            vars.push(("PATH", path.clone()));
        }
        vars
    }

    /// A `git` command with the sealed environment and stdin closed.
    pub(crate) fn command(&self) -> Command {
        let mut cmd = Command::new("git");
        cmd.env_clear()
            .envs(self.sealed_vars())
            .stdin(Stdio::null());
        cmd
    }

    /// The same, for tokio (used for the `http-backend` CGI).
    pub(crate) fn tokio_command(&self) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new("git");
        cmd.env_clear()
            .envs(self.sealed_vars())
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `git --git-dir=DIR ARGS…` and returns its trimmed stdout.
    pub(crate) fn run(&self, git_dir: &Path, args: &[&str]) -> Result<String, GitError> {
        let mut cmd = self.command();
        cmd.arg("--git-dir").arg(git_dir).args(args);
        output_of(cmd, &args.join(" "), None)
    }

    /// The same with extra environment variables and optional stdin.
    pub(super) fn run_with(
        &self,
        git_dir: &Path,
        args: &[&str],
        envs: &[(&str, &std::ffi::OsStr)],
        stdin: Option<&[u8]>,
    ) -> Result<String, GitError> {
        let mut cmd = self.command();
        cmd.arg("--git-dir").arg(git_dir).args(args);
        for (name, value) in envs {
            cmd.env(name, value);
        }
        output_of(cmd, &args.join(" "), stdin)
    }
}

pub(super) fn output_of(
    mut cmd: Command,
    what: &str,
    stdin: Option<&[u8]>,
) -> Result<String, GitError> {
    tracing::debug!(cmd = ?cmd, "running git");
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    if stdin.is_some() {
        cmd.stdin(Stdio::piped());
    }
    let spawn_err = |source| GitError::Spawn {
        what: what.to_owned(),
        source,
    };
    let mut child = cmd.spawn().map_err(spawn_err)?;
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // fast-import reads all of stdin before it prints anything, so writing
        // first and reading afterwards cannot deadlock.
        pipe.write_all(input).map_err(spawn_err)?;
    }
    let output = child.wait_with_output().map_err(spawn_err)?;
    if !output.status.success() {
        return Err(GitError::Failed {
            what: what.to_owned(),
            status: output.status,
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// The ref the forge keeps a pull request's head at: GitHub's
/// `refs/pull/N/head`, GitLab's `refs/merge-requests/N/head`.
pub(crate) fn pull_ref(forge: EmulatedForge, number: u64) -> String {
    match forge {
        EmulatedForge::GitHub => format!("refs/pull/{number}/head"),
        EmulatedForge::GitLab => format!("refs/merge-requests/{number}/head"),
    }
}

impl GitEnv {
    /// Runs `git --git-dir=DIR ARGS…` and returns its stdout untouched.
    pub(super) fn run_raw(&self, git_dir: &Path, args: &[&str]) -> Result<Vec<u8>, GitError> {
        let mut cmd = self.command();
        cmd.arg("--git-dir")
            .arg(git_dir)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        tracing::debug!(cmd = ?cmd, "running git");
        let what = args.join(" ");
        let output = cmd.output().map_err(|source| GitError::Spawn {
            what: what.clone(),
            source,
        })?;
        if !output.status.success() {
            return Err(GitError::Failed {
                what,
                status: output.status,
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            });
        }
        Ok(output.stdout)
    }
}
