//! From flags and the current directory to a parsed target and a connected forge.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use anyhow::anyhow;
use clap::Args;
use shepherd_core::target::{parse_remote_url, parse_target, RemoteInfo, Target, TargetContext};
use shepherd_core::ForgeKind;
use shepherd_forge::{Forge, GitHubClient, GitHubEndpoints, GitLabClient, GitLabEndpoints, Token};

use crate::error::{CliError, CliResult};

/// Flags that say which forge and repository a target lives on.
#[derive(Debug, Clone, Args)]
pub(crate) struct ForgeArgs {
    /// The forge, when neither the URL nor the remote tells it
    #[arg(long, value_enum)]
    pub forge: Option<ForgeFlag>,

    /// The repository (`owner/name`, or a URL to name the host too), instead of the `origin` remote
    #[arg(long, value_name = "REPO")]
    pub repo: Option<String>,

    /// The API base URL: `https://HOST/api/v3` for GitHub Enterprise, or the emulator's URL;
    /// implies `--forge github` unless it ends in `/api/v4` (GitLab)
    #[arg(long, value_name = "URL", env = "SHEPHERD_API_URL")]
    pub api_url: Option<String>,
}

/// `--forge` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ForgeFlag {
    Github,
    Gitlab,
}

impl From<ForgeFlag> for ForgeKind {
    fn from(flag: ForgeFlag) -> Self {
        match flag {
            ForgeFlag::Github => ForgeKind::GitHub,
            ForgeFlag::Gitlab => ForgeKind::GitLab,
        }
    }
}

/// Read the `origin` remote of `dir`, if `dir` is in a git repository that has one.
///
/// A missing `git`, a directory outside a repository, or a remote we cannot
/// parse all mean "no remote": the target or the flags must then say where
/// the PR lives, and `parse_target` says so if they do not.
fn origin_remote(dir: &Path) -> Option<RemoteInfo> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["remote", "get-url", "origin"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let url = String::from_utf8(output.stdout).ok()?;
    match parse_remote_url(url.trim()) {
        Ok(remote) => Some(remote),
        Err(err) => {
            tracing::debug!(%err, "ignoring an origin remote that does not name a forge repository");
            None
        }
    }
}

/// The forge an explicit `--api-url` implies: GitLab's REST API lives under
/// `/api/v4`, anything else is taken for GitHub's (github.com-style or `/api/v3`).
fn forge_of_api_url(args: &ForgeArgs) -> Option<ForgeKind> {
    let url = args.api_url.as_deref()?;
    Some(if url.trim_end_matches('/').ends_with("/api/v4") {
        ForgeKind::GitLab
    } else {
        ForgeKind::GitHub
    })
}

/// Parse `input` into a target, using the flags and the current directory's remote.
pub(crate) fn resolve_target(input: &str, args: &ForgeArgs) -> CliResult<Target> {
    let cwd = std::env::current_dir().map_err(|e| CliError::failure(anyhow!(e)))?;
    let ctx = TargetContext {
        forge: args
            .forge
            .map(ForgeKind::from)
            .or_else(|| forge_of_api_url(args)),
        repo: args.repo.clone(),
        remote: origin_remote(&cwd),
        gitlab_hosts: Vec::new(),
        github_hosts: Vec::new(),
    };
    parse_target(input, &ctx).map_err(|err| {
        let hint = if ctx.remote.is_none() && ctx.repo.is_none() {
            Some("run inside a clone of the repository, or pass --repo OWNER/NAME or a full URL")
        } else {
            None
        };
        let mut err = CliError::usage(err);
        if let Some(hint) = hint {
            err = err.with_hint(hint);
        }
        err
    })
}

/// Connect to the forge of `target`: endpoints from `--api-url` or the host, token discovered.
///
/// Token discovery may run `gh auth token` or `glab`, so call this before entering async code.
pub(crate) fn connect(target: &Target, args: &ForgeArgs) -> CliResult<Arc<dyn Forge>> {
    let host = &target.repo.host;
    match target.forge {
        ForgeKind::GitHub => {
            let endpoints = match &args.api_url {
                Some(url) => GitHubEndpoints::from_api_url(url),
                None => GitHubEndpoints::for_host(host),
            }
            .map_err(CliError::usage)?;
            let token = Token::discover(host).map_err(CliError::failure)?;
            let client = GitHubClient::new(target.repo.clone(), endpoints, token)
                .map_err(CliError::failure)?;
            Ok(Arc::new(client))
        }
        ForgeKind::GitLab => {
            let endpoints = match &args.api_url {
                Some(url) => GitLabEndpoints::from_api_url(url),
                None => GitLabEndpoints::for_host(host),
            }
            .map_err(CliError::usage)?;
            let token = Token::discover_gitlab(host).map_err(CliError::failure)?;
            // Bound to the MR: resolving needs its iid, and merged-results
            // pipelines are found through it.
            let client = GitLabClient::new(target.repo.clone(), endpoints, token)
                .map_err(CliError::failure)?
                .with_merge_request(target.number);
            Ok(Arc::new(client))
        }
    }
}

/// A tokio runtime for one command.
pub(crate) fn runtime() -> CliResult<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::failure(anyhow!("cannot start the async runtime: {e}")))
}
