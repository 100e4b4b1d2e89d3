//! What a target is: the PR/MR a run works on, where each part of it came
//! from, and what the caller knows beforehand (the remote, the flags).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::model::{ForgeKind, RepoRef};

use super::quote::redact_userinfo;

/// How a run treats the PR's feedback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Every unresolved thread, clustering, rounds until convergence.
    Full,
    /// One thread only: no clustering, one round plus its CI wait.
    Targeted(TargetedThread),
}

/// The one thread a targeted URL selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetedThread {
    /// A GitHub review comment's database id, from `#discussion_rN` or `#rN`;
    /// the thread is the one containing that comment.
    #[serde(rename = "github-discussion")]
    GitHubDiscussion(u64),
    /// A GitLab note id, from `#note_N`; the thread is the discussion
    /// containing that note.
    #[serde(rename = "gitlab-note")]
    GitLabNote(u64),
}

/// A URL fragment that points at something other than a review thread. It is
/// recorded for messages and does not change the mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Anchor {
    /// `#issuecomment-N`: a top-level comment's database id.
    IssueComment(u64),
    /// `#pullrequestreview-N`: a review's database id.
    Review(u64),
}

/// Where the forge of a [`Target`] was learned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ForgeSource {
    /// The URL in the input (its host or its path shape).
    Url,
    /// The `--forge` flag.
    Flag,
    /// The host is listed in the configuration as GitHub or GitLab.
    ConfiguredHost,
    /// The `origin` remote is on github.com or gitlab.com.
    Remote,
    /// The reference's kind: `PR`/`#` is GitHub's, `MR`/`!` GitLab's.
    Reference,
    /// The host's first label (`gitlab.example.com`, `github.corp`).
    HostName,
}

/// Where the repository of a [`Target`] was learned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RepoSource {
    /// The URL in the input.
    Url,
    /// An `owner/repo#N` or `group/project!N` reference.
    Reference,
    /// The `--repo` flag.
    Flag,
    /// The `origin` remote of the current directory.
    Remote,
}

/// The one PR/MR a run works on, fully resolved.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Target {
    /// GitHub or GitLab.
    pub forge: ForgeKind,
    /// Where `forge` came from.
    pub forge_source: ForgeSource,
    /// The repository. When it was learned without a host (`owner/repo#N`,
    /// `--repo owner/name`), the host is the remote's, else `github.com` or
    /// `gitlab.com`.
    pub repo: RepoRef,
    /// Where `repo` came from.
    pub repo_source: RepoSource,
    /// The PR number or GitLab MR iid, at least 1.
    pub number: u64,
    /// Full, or targeted at one thread.
    pub mode: Mode,
    /// A non-thread anchor of the URL, if any.
    pub anchor: Option<Anchor>,
}

impl Target {
    /// Whether the run handles one thread only.
    pub fn is_targeted(&self) -> bool {
        matches!(self.mode, Mode::Targeted(_))
    }

    /// The short reference: `#42` on GitHub, `!42` on GitLab.
    pub fn short_ref(&self) -> String {
        match self.forge {
            ForgeKind::GitHub => format!("#{}", self.number),
            ForgeKind::GitLab => format!("!{}", self.number),
        }
    }
}

impl fmt::Display for Target {
    /// `pull request github.com/o/r#42`, `merge request gitlab.com/g/p!7 (note 99)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}{}",
            self.forge.request_noun(),
            self.repo,
            self.short_ref()
        )?;
        match self.mode {
            Mode::Full => Ok(()),
            Mode::Targeted(TargetedThread::GitHubDiscussion(id)) => {
                write!(f, " (thread of review comment {id})")
            }
            Mode::Targeted(TargetedThread::GitLabNote(id)) => {
                write!(f, " (discussion of note {id})")
            }
        }
    }
}

/// A git remote, read from its URL.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RemoteInfo {
    /// The repository. For `http(s)` remotes the host keeps a non-default port
    /// (it is the web port); for ssh remotes it has none (the ssh port says
    /// nothing about the web).
    pub repo: RepoRef,
    /// The forge, when the host is `github.com` or `gitlab.com`; `None` for
    /// any other host (Enterprise or self-managed: ask the configuration).
    pub forge: Option<ForgeKind>,
}

/// What [`parse_target`](crate::target::parse_target) knows besides the input.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TargetContext {
    /// The `--forge` flag.
    pub forge: Option<ForgeKind>,
    /// The `--repo` flag: `owner/name`, `group/sub/project`, or a URL
    /// (`https://host/owner/name`) to name the host too.
    pub repo: Option<String>,
    /// The `origin` remote of the current directory, if there is one.
    pub remote: Option<RemoteInfo>,
    /// Hosts configured as GitLab (self-managed). A port is optional.
    pub gitlab_hosts: Vec<String>,
    /// Hosts configured as GitHub (Enterprise Server). A port is optional.
    pub github_hosts: Vec<String>,
    /// The host (`host[:port]`) an explicit API URL (`--api-url`,
    /// `SHEPHERD_API_URL`) points at: the host of a repository named
    /// without one (`--repo owner/name`, `owner/name#42`), before the
    /// remote's. Its tokens, runs and reports are that host's.
    pub api_host: Option<String>,
}

impl TargetContext {
    /// The hosts configured as `forge`'s self-hosted instances.
    pub fn hosts_of(&self, forge: ForgeKind) -> &[String] {
        match forge {
            ForgeKind::GitHub => &self.github_hosts,
            ForgeKind::GitLab => &self.gitlab_hosts,
        }
    }
}

impl fmt::Debug for TargetContext {
    // `--repo` may be a URL; never print credentials it might carry.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TargetContext")
            .field("forge", &self.forge)
            .field("repo", &self.repo.as_deref().map(redact_userinfo))
            .field("remote", &self.remote)
            .field("api_host", &self.api_host)
            .field("gitlab_hosts", &self.gitlab_hosts)
            .field("github_hosts", &self.github_hosts)
            .finish()
    }
}

/// One claim about the forge, for [`TargetError::ForgeConflict`](crate::target::TargetError::ForgeConflict).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForgeClaim {
    /// The URL in the input is of this forge.
    Url {
        /// The URL, credentials redacted.
        url: String,
        /// Its forge.
        forge: ForgeKind,
    },
    /// `--forge` said so.
    Flag(ForgeKind),
    /// The configuration lists the host as this forge.
    ConfiguredHost {
        /// The host.
        host: String,
        /// Its configured forge.
        forge: ForgeKind,
    },
    /// The `origin` remote is on a well-known host.
    Remote {
        /// The host.
        host: String,
        /// Its forge.
        forge: ForgeKind,
    },
}

impl ForgeClaim {
    pub(super) fn forge(&self) -> ForgeKind {
        match self {
            ForgeClaim::Url { forge, .. }
            | ForgeClaim::ConfiguredHost { forge, .. }
            | ForgeClaim::Remote { forge, .. } => *forge,
            ForgeClaim::Flag(forge) => *forge,
        }
    }

    pub(super) fn source(&self) -> ForgeSource {
        match self {
            ForgeClaim::Url { .. } => ForgeSource::Url,
            ForgeClaim::Flag(_) => ForgeSource::Flag,
            ForgeClaim::ConfiguredHost { .. } => ForgeSource::ConfiguredHost,
            ForgeClaim::Remote { .. } => ForgeSource::Remote,
        }
    }
}

impl fmt::Display for ForgeClaim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ForgeClaim::Url { url, forge } => {
                write!(f, "\"{url}\" is a {forge} {} URL", forge.request_noun())
            }
            ForgeClaim::Flag(forge) => write!(f, "--forge is {forge}"),
            ForgeClaim::ConfiguredHost { host, forge } => {
                write!(f, "host {host} is configured as {forge}")
            }
            ForgeClaim::Remote { host, forge } => {
                write!(f, "the origin remote is on {host} ({forge})")
            }
        }
    }
}
