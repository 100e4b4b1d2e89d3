//! Which pull request (GitHub) or merge request (GitLab) a run works on.
//!
//! The target is parsed deterministically from what the user typed (SPEC
//! section 2), never guessed by an agent, so every round of a run uses the
//! same number. Accepted forms, alone or inside free text:
//!
//! - a number: `42`;
//! - a GitHub-style reference: `#42`, `PR #42`, `PR 42`, `PR#42`, `pr42`,
//!   `pull request #42`, `owner/repo#42`;
//! - a GitLab-style reference: `!42`, `MR !42`, `MR 42`, `mr42`,
//!   `merge request !42`, `group/sub/project!42`;
//! - a GitHub pull request URL on any host (`…/owner/repo/pull/42`, with or
//!   without `/files`, `/commits`, `/checks`, a query, `#discussion_rN`,
//!   `#rN`, `#issuecomment-N`, `#pullrequestreview-N`);
//! - a GitLab merge request URL (`…/group/sub/project/-/merge_requests/42`, the
//!   legacy `…/project/merge_requests/42`, with `/diffs`, `#note_N`).
//!
//! References with a sigil, a keyword or a URL are *explicit*; a bare number
//! counts only when the text holds no explicit reference, so "resolve PR 42
//! in 3 rounds" names 42. The same number repeated is fine ("PR 42 (#42)").
//! Issues (`issue #5`, `…/issues/5`) are never targets: they are set aside,
//! and rejected when nothing else is left.
//!
//! The forge comes from the URL, else `--forge`, else a host configured as
//! GitHub or GitLab, else the `origin` remote's well-known host, else the kind
//! of the reference (`!42` is GitLab's), else the host name (`gitlab.corp`).
//! The repository comes from the URL, else `owner/repo#N`, else `--repo`, else
//! the remote. Every contradiction between these sources is a [`TargetError`]
//! whose message quotes the input; the CLI maps it to exit code 2.
//!
//! URLs may carry credentials (`https://user:token@host/…`): they are never
//! echoed. Every URL quoted in an error has its user info replaced by `***`.

use std::fmt;

use serde::{Deserialize, Serialize};
use url::Url;

use crate::model::{ForgeKind, RepoRef};

/// The longest input an error quotes before eliding the rest.
const MAX_QUOTE: usize = 160;

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

/// What [`parse_target`] knows besides the input.
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
            .field("gitlab_hosts", &self.gitlab_hosts)
            .field("github_hosts", &self.github_hosts)
            .finish()
    }
}

/// One claim about the forge, for [`TargetError::ForgeConflict`].
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
    fn forge(&self) -> ForgeKind {
        match self {
            ForgeClaim::Url { forge, .. }
            | ForgeClaim::ConfiguredHost { forge, .. }
            | ForgeClaim::Remote { forge, .. } => *forge,
            ForgeClaim::Flag(forge) => *forge,
        }
    }

    fn source(&self) -> ForgeSource {
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

/// Why a target or a remote URL was refused. Every message quotes what was
/// refused (credentials redacted) and says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// Nothing in the input names a number.
    #[error(
        "no pull request or merge request number in \"{input}\"; \
         name one, e.g. 42, #42, !42 or a URL"
    )]
    NoNumber {
        /// The input.
        input: String,
    },
    /// The reference names number 0.
    #[error("\"{reference}\" in \"{input}\": 0 is not a pull request or merge request number")]
    Zero {
        /// The reference as written.
        reference: String,
        /// The input.
        input: String,
    },
    /// The number does not fit in 64 bits.
    #[error("\"{reference}\" in \"{input}\": the number is too large")]
    TooLarge {
        /// The reference as written.
        reference: String,
        /// The input.
        input: String,
    },
    /// Two references name different numbers.
    #[error("found both {first} and {second} in \"{input}\"; name exactly one")]
    NumberConflict {
        /// The first reference, as written.
        first: String,
        /// The first reference with a different number, as written.
        second: String,
        /// The input.
        input: String,
    },
    /// The only reference is an issue.
    #[error(
        "\"{reference}\" in \"{input}\" is an issue, not a pull request or merge request; \
         name the pull request or merge request"
    )]
    NotAPullRequest {
        /// The issue reference or URL, as written.
        reference: String,
        /// The input.
        input: String,
    },
    /// A reference's kind (`PR`/`#` or `MR`/`!`) contradicts the forge.
    #[error(
        "\"{reference}\" names a {kind_noun}, but the forge is {forge} ({source_desc}); \
         on {forge} write {suggestion}"
    )]
    KindConflict {
        /// The reference as written.
        reference: String,
        /// What the reference names ("pull request" or "merge request").
        kind_noun: &'static str,
        /// The forge it contradicts.
        forge: ForgeKind,
        /// Where that forge came from, in words.
        source_desc: String,
        /// A spelling that would be accepted.
        suggestion: String,
    },
    /// One reference is GitHub-style and another GitLab-style.
    #[error(
        "\"{first}\" names a pull request but \"{second}\" names a merge request \
         in \"{input}\"; name one of them"
    )]
    MixedKinds {
        /// The GitHub-style reference.
        first: String,
        /// The GitLab-style reference.
        second: String,
        /// The input.
        input: String,
    },
    /// One reference mixes a keyword of one forge with the sigil of the other.
    #[error(
        "\"{reference}\" in \"{input}\" mixes a pull request with a merge request; \
         write PR #N (GitHub) or MR !N (GitLab)"
    )]
    MixedReference {
        /// The reference as written.
        reference: String,
        /// The input.
        input: String,
    },
    /// Two sources disagree about the forge.
    #[error("conflicting forges: {first}, but {second}")]
    ForgeConflict {
        /// The stronger claim.
        first: ForgeClaim,
        /// The claim contradicting it.
        second: ForgeClaim,
    },
    /// The URL is on another host than the `origin` remote.
    #[error(
        "\"{url}\" is on host {url_host}, but the origin remote is on {remote_host}; \
         run shepherd in a clone of that repository, or name a target on {remote_host}"
    )]
    HostMismatch {
        /// The URL, credentials redacted.
        url: String,
        /// The URL's host.
        url_host: String,
        /// The remote's host.
        remote_host: String,
    },
    /// Two sources name different repositories.
    #[error("conflicting repositories: {first} ({first_source}) and {second} ({second_source}); name one")]
    RepoConflict {
        /// The first repository.
        first: String,
        /// Where it came from.
        first_source: &'static str,
        /// The other repository.
        second: String,
        /// Where it came from.
        second_source: &'static str,
    },
    /// Two URLs select different threads.
    #[error(
        "\"{input}\" selects two different threads ({first} and {second}); \
         targeted mode handles exactly one"
    )]
    ThreadConflict {
        /// The first thread anchor.
        first: String,
        /// The other thread anchor.
        second: String,
        /// The input.
        input: String,
    },
    /// A pull request or merge request URL that cannot be used.
    #[error("\"{url}\": {reason}")]
    InvalidUrl {
        /// The URL, credentials redacted.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The `--repo` value is not a repository.
    #[error("invalid --repo \"{value}\": {reason}")]
    InvalidRepoArg {
        /// The value, credentials redacted.
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The resolved repository is not valid on its forge.
    #[error("invalid repository {repo} for {forge}: {reason}")]
    InvalidRepo {
        /// The repository.
        repo: String,
        /// Its forge.
        forge: ForgeKind,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Nothing tells whether the host is GitHub or GitLab.
    #[error(
        "cannot tell whether {subject} is on GitHub or GitLab; \
         pass --forge github or --forge gitlab, or list the host in the configuration"
    )]
    UnknownForge {
        /// The host, or the repository when no host is known.
        subject: String,
    },
    /// No URL, reference, `--repo` or remote names a repository.
    #[error(
        "no repository for \"{input}\": run shepherd inside a clone with an origin remote, \
         pass --repo OWNER/NAME, or name the target by URL"
    )]
    NoRepository {
        /// The input.
        input: String,
    },
    /// A git remote URL that does not name a forge repository.
    #[error("cannot read the remote URL \"{url}\": {reason}")]
    InvalidRemote {
        /// The URL, credentials redacted.
        url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}

/// Parse `input` into the one PR/MR it names, using `ctx` for what the input
/// leaves open. Deterministic and free of IO.
pub fn parse_target(input: &str, ctx: &TargetContext) -> Result<Target, TargetError> {
    let quoted = quote_input(input);
    let scan = scan(input)?;

    // The number: explicit references win over bare numbers.
    let explicit: Vec<&Found> = scan.refs.iter().filter(|r| r.explicit).collect();
    let candidates: Vec<&Found> = if explicit.is_empty() {
        scan.refs.iter().collect()
    } else {
        explicit
    };
    let Some(first) = candidates.first() else {
        return Err(match scan.issues.first() {
            Some(issue) => TargetError::NotAPullRequest {
                reference: issue.clone(),
                input: quoted,
            },
            None => TargetError::NoNumber { input: quoted },
        });
    };
    for c in &candidates {
        check_number(c, &quoted)?;
    }
    let number = first.number;
    if let Some(other) = candidates.iter().find(|c| c.number != number) {
        return Err(TargetError::NumberConflict {
            first: first.text.clone(),
            second: other.text.clone(),
            input: quoted,
        });
    }

    // The spellings must agree: `PR 42` and `!42` name different things.
    let kinded: Vec<(&Found, ForgeKind)> = candidates
        .iter()
        .filter_map(|c| c.kind.map(|k| (*c, k)))
        .collect();
    if let Some((a, ka)) = kinded.first() {
        if let Some((b, _)) = kinded.iter().find(|(_, k)| k != ka) {
            let (pr, mr) = if *ka == ForgeKind::GitHub {
                (a, b)
            } else {
                (b, a)
            };
            return Err(TargetError::MixedKinds {
                first: pr.text.clone(),
                second: mr.text.clone(),
                input: quoted,
            });
        }
    }

    // URLs must agree on the repository and on the thread.
    let urls: Vec<&UrlRef> = candidates.iter().filter_map(|c| c.url.as_ref()).collect();
    let url = urls.first().copied();
    if let Some(u) = url {
        if let Some(other) = urls.iter().find(|o| !same_repo(&o.repo, &u.repo)) {
            return Err(TargetError::RepoConflict {
                first: u.repo.to_string(),
                first_source: "URL",
                second: other.repo.to_string(),
                second_source: "URL",
            });
        }
    }
    let mut thread: Option<TargetedThread> = None;
    for u in &urls {
        match (thread, u.thread) {
            (Some(a), Some(b)) if a != b => {
                return Err(TargetError::ThreadConflict {
                    first: describe_thread(a),
                    second: describe_thread(b),
                    input: quoted,
                })
            }
            (None, Some(b)) => thread = Some(b),
            _ => {}
        }
    }
    let anchor = urls.iter().find_map(|u| u.anchor);

    // Host: a URL must be on the remote's host.
    if let (Some(u), Some(remote)) = (url, &ctx.remote) {
        if !same_host(&u.repo.host, &remote.repo.host) {
            return Err(TargetError::HostMismatch {
                url: u.text.clone(),
                url_host: u.repo.host.clone(),
                remote_host: remote.repo.host.clone(),
            });
        }
    }

    // Repository: URL, else owner/repo#N, else --repo, else the remote.
    let flag_repo = ctx.repo.as_deref().map(parse_repo_arg).transpose()?;
    let path_ref = candidates.iter().find_map(|c| c.path.as_ref());
    if let Some(p) = path_ref {
        if let Some(other) = candidates
            .iter()
            .filter_map(|c| c.path.as_ref())
            .find(|o| !same_path(o, p))
        {
            return Err(TargetError::RepoConflict {
                first: p.display(),
                first_source: "reference",
                second: other.display(),
                second_source: "reference",
            });
        }
    }
    let remote_host = ctx.remote.as_ref().map(|r| r.repo.host.clone());
    let (host, path, repo_source): (Option<String>, RepoPath, RepoSource) = if let Some(u) = url {
        let url_path = RepoPath {
            owner: u.repo.owner.clone(),
            name: u.repo.name.clone(),
        };
        if let Some(p) = path_ref.filter(|p| !same_path(p, &url_path)) {
            return Err(TargetError::RepoConflict {
                first: u.repo.to_string(),
                first_source: "URL",
                second: p.display(),
                second_source: "reference",
            });
        }
        if let Some(flag) = &flag_repo {
            let host_differs = flag
                .host
                .as_deref()
                .is_some_and(|h| !same_host(h, &u.repo.host));
            if host_differs || !same_path(&flag.path, &url_path) {
                return Err(TargetError::RepoConflict {
                    first: u.repo.to_string(),
                    first_source: "URL",
                    second: flag.display(),
                    second_source: "--repo",
                });
            }
        }
        (Some(u.repo.host.clone()), url_path, RepoSource::Url)
    } else if let Some(p) = path_ref {
        let host = match &flag_repo {
            Some(flag) => {
                if !same_path(&flag.path, p) {
                    return Err(TargetError::RepoConflict {
                        first: p.display(),
                        first_source: "reference",
                        second: flag.display(),
                        second_source: "--repo",
                    });
                }
                flag.host.clone().or(remote_host)
            }
            None => remote_host,
        };
        (host, p.clone(), RepoSource::Reference)
    } else if let Some(flag) = flag_repo {
        (flag.host.or(remote_host), flag.path, RepoSource::Flag)
    } else if let Some(remote) = &ctx.remote {
        (
            Some(remote.repo.host.clone()),
            RepoPath {
                owner: remote.repo.owner.clone(),
                name: remote.repo.name.clone(),
            },
            RepoSource::Remote,
        )
    } else {
        return Err(TargetError::NoRepository { input: quoted });
    };

    // Forge: every certain claim must agree; the first one wins.
    let mut claims: Vec<ForgeClaim> = Vec::new();
    if let Some(u) = url {
        claims.push(ForgeClaim::Url {
            url: u.text.clone(),
            forge: u.forge,
        });
    }
    if let Some(forge) = ctx.forge {
        claims.push(ForgeClaim::Flag(forge));
    }
    if let Some(h) = &host {
        if let Some(forge) = configured_forge(h, ctx) {
            claims.push(ForgeClaim::ConfiguredHost {
                host: h.clone(),
                forge,
            });
        }
    }
    if let Some(remote) = &ctx.remote {
        let on_target_host = host
            .as_deref()
            .is_none_or(|h| same_host(h, &remote.repo.host));
        if let (true, Some(forge)) = (on_target_host, remote.forge) {
            claims.push(ForgeClaim::Remote {
                host: remote.repo.host.clone(),
                forge,
            });
        }
    }
    if let Some(head) = claims.first() {
        if let Some(other) = claims.iter().find(|c| c.forge() != head.forge()) {
            return Err(TargetError::ForgeConflict {
                first: head.clone(),
                second: other.clone(),
            });
        }
    }
    let mut resolved: Option<(ForgeKind, ForgeSource, String)> = claims
        .first()
        .map(|c| (c.forge(), c.source(), claim_desc(c)));

    // The references' kinds must match the forge, or pick it.
    match &resolved {
        Some((forge, _, desc)) => {
            if let Some((bad, kind)) = kinded.iter().find(|(_, k)| k != forge) {
                return Err(TargetError::KindConflict {
                    reference: bad.text.clone(),
                    kind_noun: kind.request_noun(),
                    forge: *forge,
                    source_desc: desc.clone(),
                    suggestion: suggestion(*forge, bad),
                });
            }
        }
        None => {
            resolved = kinded
                .first()
                .map(|(_, k)| (*k, ForgeSource::Reference, String::new()));
        }
    }
    if resolved.is_none() {
        if let Some(forge) = host.as_deref().and_then(forge_from_host_name) {
            resolved = Some((forge, ForgeSource::HostName, String::new()));
        }
    }
    let Some((forge, forge_source, _)) = resolved else {
        return Err(TargetError::UnknownForge {
            subject: host.unwrap_or_else(|| path.display()),
        });
    };

    let host = host.unwrap_or_else(|| default_host(forge).to_owned());
    let repo = RepoRef {
        host,
        owner: path.owner,
        name: path.name,
    };
    if forge == ForgeKind::GitHub && repo.owner.contains('/') {
        return Err(TargetError::InvalidRepo {
            repo: repo.to_string(),
            forge,
            reason: "GitHub repositories are owner/name, without nested groups",
        });
    }

    Ok(Target {
        forge,
        forge_source,
        repo,
        repo_source,
        number,
        mode: thread.map_or(Mode::Full, Mode::Targeted),
        anchor,
    })
}

/// Read a git remote URL (`https://host/owner/repo(.git)`, with or without
/// credentials; `git@host:owner/repo.git`; `ssh://git@host:port/owner/repo.git`;
/// nested GitLab groups) into its host and repository. Credentials are
/// dropped and never appear in errors.
pub fn parse_remote_url(url: &str) -> Result<RemoteInfo, TargetError> {
    let raw = url.trim();
    let invalid = |reason| TargetError::InvalidRemote {
        url: truncate(&redact_userinfo(raw)),
        reason,
    };
    if raw.is_empty() {
        return Err(invalid("the URL is empty"));
    }
    let (host, path) = if let Some(scheme_end) = raw.find("://") {
        let scheme = raw[..scheme_end].to_ascii_lowercase();
        let web = match scheme.as_str() {
            "http" | "https" => true,
            "ssh" | "git" | "git+ssh" | "ssh+git" => false,
            "file" => return Err(invalid("a local path is not a forge repository")),
            _ => return Err(invalid("unsupported URL scheme")),
        };
        let parsed = Url::parse(raw).map_err(|_| invalid("not a valid URL"))?;
        let host_name = match parsed.host_str() {
            Some(h) if !h.is_empty() => h.to_owned(),
            _ => return Err(invalid("the URL has no host")),
        };
        let host = match (web, parsed.port()) {
            (true, Some(port)) => format!("{host_name}:{port}"),
            _ => host_name,
        };
        (host, parsed.path().to_owned())
    } else {
        // scp-like syntax: [user@]host:path. A path before any ':' is local.
        let Some((left, path)) = raw.split_once(':') else {
            return Err(invalid("a local path is not a forge repository"));
        };
        let host = left.rsplit_once('@').map_or(left, |(_, h)| h);
        if host.is_empty()
            || host.contains('/')
            || host.contains('\\')
            || path.contains('\\')
            || path.starts_with("//")
        {
            return Err(invalid("neither a URL nor user@host:owner/repo"));
        }
        (host.to_owned(), path.to_owned())
    };
    let segments: Vec<&str> = path
        .trim_matches('/')
        .trim_end_matches(".git")
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let path = repo_path_from_segments(&segments)
        .ok_or_else(|| invalid("the path is not owner/repo (or group/subgroup/project)"))?;
    let host = normalize_host(&host);
    let forge = well_known_forge(&host);
    Ok(RemoteInfo {
        repo: RepoRef {
            host,
            owner: path.owner,
            name: path.name,
        },
        forge,
    })
}

/// Replace the user info of every URL in `text` (`https://user:token@host/…`)
/// by `***`, so that credentials never reach a message.
pub fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(idx) = rest.find("://") {
        let (head, tail) = rest.split_at(idx + 3);
        out.push_str(head);
        let auth_end = tail
            .find(|c: char| c == '/' || c == '?' || c == '#' || c.is_whitespace())
            .unwrap_or(tail.len());
        let authority = &tail[..auth_end];
        match authority.rfind('@') {
            Some(at) => {
                out.push_str("***");
                out.push_str(&authority[at..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[auth_end..];
    }
    // scp-like `user:secret@host:path`: redact a user part holding a ':'.
    if let Some(at) = rest.find('@') {
        let user = &rest[..at];
        // After the last whitespace character, which may be several bytes long.
        let starts_token = user
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace())
            .map_or(0, |(i, c)| i + c.len_utf8());
        if user[starts_token..].contains(':') && !user[starts_token..].contains('/') {
            out.push_str(&rest[..starts_token]);
            out.push_str("***");
            out.push_str(&rest[at..]);
            return out;
        }
    }
    out.push_str(rest);
    out
}

// ---------------------------------------------------------------------------
// Scanning

/// A PR/MR reference found in the input.
#[derive(Debug)]
struct Found {
    /// As written (credentials redacted).
    text: String,
    /// The digits.
    digits: String,
    /// The parsed number; 0 when `digits` is 0 or overflows (checked later).
    number: u64,
    /// Sigil, keyword or URL (as opposed to a bare number).
    explicit: bool,
    /// The forge the reference's spelling implies.
    kind: Option<ForgeKind>,
    /// For URLs.
    url: Option<UrlRef>,
    /// For `owner/repo#N`.
    path: Option<RepoPath>,
}

#[derive(Debug)]
struct UrlRef {
    text: String,
    forge: ForgeKind,
    repo: RepoRef,
    thread: Option<TargetedThread>,
    anchor: Option<Anchor>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct RepoPath {
    owner: String,
    name: String,
}

impl RepoPath {
    fn display(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }
}

struct FlagRepo {
    host: Option<String>,
    path: RepoPath,
}

impl FlagRepo {
    fn display(&self) -> String {
        match &self.host {
            Some(h) => format!("{h}/{}", self.path.display()),
            None => self.path.display(),
        }
    }
}

#[derive(Default)]
struct Scan {
    refs: Vec<Found>,
    /// Issue references and URLs, as written.
    issues: Vec<String>,
}

fn scan(input: &str) -> Result<Scan, TargetError> {
    let tokens: Vec<&str> = input.split_whitespace().map(strip_punct).collect();
    let mut out = Scan::default();
    let mut i = 0;
    while i < tokens.len() {
        let tok = tokens[i];
        let next = tokens.get(i + 1).copied().unwrap_or("");
        let lower = tok.to_ascii_lowercase();

        if let Some(start) = find_scheme(tok) {
            let url_text = strip_punct(&tok[start..]);
            match parse_forge_url(url_text)? {
                UrlShape::Pr(u) => out.refs.push(*u),
                UrlShape::Issue => out.issues.push(redact_userinfo(url_text)),
                UrlShape::Other => {}
            }
            i += 1;
            continue;
        }
        if looks_like_schemeless_url(tok) {
            if let Ok(shape) = parse_forge_url(&format!("https://{tok}")) {
                match shape {
                    UrlShape::Pr(mut u) => {
                        u.text = redact_userinfo(tok);
                        if let Some(url) = u.url.as_mut() {
                            url.text = u.text.clone();
                        }
                        out.refs.push(*u);
                        i += 1;
                        continue;
                    }
                    UrlShape::Issue => {
                        out.issues.push(redact_userinfo(tok));
                        i += 1;
                        continue;
                    }
                    UrlShape::Other => {}
                }
            }
        }

        // `PR 42`, `MR !42`, `PR: #42`
        if let Some(kind) = keyword_kind(&lower) {
            if let Some((sigil, digits)) = sigil_number(next) {
                let text = format!("{tok} {next}");
                check_sigil(kind, sigil, &text, input)?;
                out.refs.push(explicit_ref(text, digits, Some(kind)));
                i += 2;
                continue;
            }
        }
        // `pull request #42`, `merge request !42`
        if let Some(kind) = two_word_keyword(&lower, next) {
            let third = tokens.get(i + 2).copied().unwrap_or("");
            if let Some((sigil, digits)) = sigil_number(third) {
                let text = format!("{tok} {next} {third}");
                check_sigil(kind, sigil, &text, input)?;
                out.refs.push(explicit_ref(text, digits, Some(kind)));
                i += 3;
                continue;
            }
        }
        // `issue #5`, `issue 5`, `issue#5`
        if (lower == "issue" || lower == "issues") && sigil_number(next).is_some() {
            out.issues.push(format!("{tok} {next}"));
            i += 2;
            continue;
        }
        if let Some(rest) = lower.strip_prefix("issue") {
            if rest.starts_with('#') && sigil_number(rest).is_some() {
                out.issues.push(tok.to_owned());
                i += 1;
                continue;
            }
        }
        // `pr42`, `PR#42`, `mr!42`
        if let Some(r) = inline_keyword(tok, &lower, input)? {
            out.refs.push(r);
            i += 1;
            continue;
        }
        // `#42`, `!42`
        if let Some((Some(sigil), digits)) = sigil_number(tok) {
            out.refs
                .push(explicit_ref(tok.to_owned(), digits, Some(sigil)));
            i += 1;
            continue;
        }
        // `owner/repo#42`, `group/sub/project!42`
        if let Some(r) = path_reference(tok) {
            out.refs.push(r);
            i += 1;
            continue;
        }
        // `42`
        if !tok.is_empty() && tok.bytes().all(|b| b.is_ascii_digit()) {
            out.refs.push(Found {
                text: tok.to_owned(),
                digits: tok.to_owned(),
                number: tok.parse().unwrap_or(0),
                explicit: false,
                kind: None,
                url: None,
                path: None,
            });
        }
        i += 1;
    }
    Ok(out)
}

fn explicit_ref(text: String, digits: &str, kind: Option<ForgeKind>) -> Found {
    Found {
        number: digits.parse().unwrap_or(0),
        digits: digits.to_owned(),
        text,
        explicit: true,
        kind,
        url: None,
        path: None,
    }
}

/// `PR !42` mixes two kinds in one reference.
fn check_sigil(
    kind: ForgeKind,
    sigil: Option<ForgeKind>,
    text: &str,
    input: &str,
) -> Result<(), TargetError> {
    match sigil {
        Some(s) if s != kind => Err(TargetError::MixedReference {
            reference: text.to_owned(),
            input: quote_input(input),
        }),
        _ => Ok(()),
    }
}

/// Strip the punctuation free text wraps references in: `(#42)`, `PR 42.`,
/// `<https://…>`, `**PR**`.
fn strip_punct(tok: &str) -> &str {
    tok.trim_start_matches(['(', '[', '{', '<', '"', '\'', '`', '*'])
        .trim_end_matches([
            ')', ']', '}', '>', '"', '\'', '`', '*', '.', ',', ';', ':', '?', '!',
        ])
}

fn find_scheme(tok: &str) -> Option<usize> {
    let lower = tok.to_ascii_lowercase();
    match (lower.find("https://"), lower.find("http://")) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// `github.com/o/r/pull/42`: a first segment with a dot, then a path.
fn looks_like_schemeless_url(tok: &str) -> bool {
    match tok.split_once('/') {
        Some((host, rest)) => {
            host.contains('.')
                && !rest.is_empty()
                && (rest.contains("/pull/")
                    || rest.contains("merge_requests/")
                    || rest.contains("/issues/"))
        }
        None => false,
    }
}

fn keyword_kind(lower: &str) -> Option<ForgeKind> {
    ForgeKind::ALL
        .into_iter()
        .find(|k| k.spec().request_abbrev == lower)
}

fn two_word_keyword(lower: &str, next: &str) -> Option<ForgeKind> {
    if !next.eq_ignore_ascii_case("request") {
        return None;
    }
    ForgeKind::ALL
        .into_iter()
        .find(|k| k.spec().request_word == lower)
}

/// `#42` → (GitHub, "42"); `!42` → (GitLab, "42"); `42` → (None, "42").
fn sigil_number(tok: &str) -> Option<(Option<ForgeKind>, &str)> {
    let first = tok.chars().next()?;
    let (sigil, digits) = match ForgeKind::ALL
        .into_iter()
        .find(|k| k.spec().number_sigil == first)
    {
        Some(kind) => (Some(kind), &tok[first.len_utf8()..]),
        None => (None, tok),
    };
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some((sigil, digits))
}

/// `pr42`, `PR#42`, `MR!42`.
fn inline_keyword(tok: &str, lower: &str, input: &str) -> Result<Option<Found>, TargetError> {
    for kind in ForgeKind::ALL {
        if let Some(rest) = lower.strip_prefix(kind.spec().request_abbrev) {
            if let Some((sigil, digits)) = sigil_number(rest) {
                check_sigil(kind, sigil, tok, input)?;
                return Ok(Some(explicit_ref(tok.to_owned(), digits, Some(kind))));
            }
        }
    }
    Ok(None)
}

fn path_reference(tok: &str) -> Option<Found> {
    let at = tok.rfind(['#', '!'])?;
    let (path, tail) = tok.split_at(at);
    let (sigil, digits) = sigil_number(tail)?;
    let segments: Vec<&str> = path.split('/').collect();
    let repo = repo_path_from_segments(&segments)?;
    let mut found = explicit_ref(tok.to_owned(), digits, sigil);
    found.path = Some(repo);
    Some(found)
}

fn valid_segment(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

fn repo_path_from_segments(segments: &[&str]) -> Option<RepoPath> {
    if segments.len() < 2 || !segments.iter().all(|s| valid_segment(s)) {
        return None;
    }
    let (name, owner) = segments.split_last()?;
    Some(RepoPath {
        owner: owner.join("/"),
        name: (*name).to_owned(),
    })
}

fn check_number(found: &Found, quoted: &str) -> Result<(), TargetError> {
    if found.number != 0 {
        return Ok(());
    }
    if found.digits.bytes().all(|b| b == b'0') {
        Err(TargetError::Zero {
            reference: found.text.clone(),
            input: quoted.to_owned(),
        })
    } else {
        Err(TargetError::TooLarge {
            reference: found.text.clone(),
            input: quoted.to_owned(),
        })
    }
}

// ---------------------------------------------------------------------------
// URLs

enum UrlShape {
    Pr(Box<Found>),
    Issue,
    Other,
}

fn parse_forge_url(text: &str) -> Result<UrlShape, TargetError> {
    let Ok(url) = Url::parse(text) else {
        return Ok(UrlShape::Other);
    };
    let Some(host_name) = url.host_str().filter(|h| !h.is_empty()) else {
        return Ok(UrlShape::Other);
    };
    let host = normalize_host(&match url.port() {
        Some(port) => format!("{host_name}:{port}"),
        None => host_name.to_owned(),
    });
    let redacted = truncate(&redact_userinfo(text));
    let segments: Vec<&str> = url
        .path_segments()
        .map(|s| s.filter(|s| !s.is_empty()).collect())
        .unwrap_or_default();

    let Some((forge, shape)) = ForgeKind::ALL
        .into_iter()
        .find_map(|kind| url_shape(kind, &segments).map(|m| (kind, m)))
    else {
        return Ok(UrlShape::Other);
    };
    let (repo_segments, digits) = match shape {
        Shape::Request(repo, digits) => (repo, digits),
        Shape::Issue => return Ok(UrlShape::Issue),
    };

    if let Some(host_forge) = well_known_forge(&host) {
        if host_forge != forge {
            return Err(TargetError::InvalidUrl {
                url: redacted,
                reason: format!(
                    "{host} is {host_forge}, but the path is a {forge} {} path",
                    forge.request_noun()
                ),
            });
        }
    }
    let Some(path) = repo_path_from_segments(repo_segments) else {
        return Err(TargetError::InvalidUrl {
            url: redacted,
            reason: "the repository path is not valid".to_owned(),
        });
    };
    if forge == ForgeKind::GitHub && path.owner.contains('/') {
        return Err(TargetError::InvalidUrl {
            url: redacted,
            reason: "a GitHub pull request URL is HOST/OWNER/REPO/pull/N".to_owned(),
        });
    }

    let (thread, anchor) = match url.fragment() {
        Some(fragment) => read_fragment(forge, fragment),
        None => (None, None),
    };
    Ok(UrlShape::Pr(Box::new(Found {
        text: redacted.clone(),
        digits: digits.to_owned(),
        number: digits.parse().unwrap_or(0),
        explicit: true,
        kind: Some(forge),
        url: Some(UrlRef {
            text: redacted,
            forge,
            repo: RepoRef {
                host,
                owner: path.owner.clone(),
                name: path.name.clone(),
            },
            thread,
            anchor,
        }),
        path: None,
    })))
}

enum Shape<'a> {
    Request(&'a [&'a str], &'a str),
    Issue,
}

fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// The shape of a URL path on `forge`: a change request, an issue, or neither.
fn url_shape<'a>(forge: ForgeKind, segments: &'a [&'a str]) -> Option<Shape<'a>> {
    match forge {
        ForgeKind::GitHub => github_shape(segments),
        ForgeKind::GitLab => gitlab_shape(segments),
    }
}

/// `owner/repo/pull/N[/…]`, or `owner/repo/issues/N`.
fn github_shape<'a>(segments: &'a [&'a str]) -> Option<Shape<'a>> {
    match segments {
        [_, _, "pull", n, ..] if is_digits(n) => Some(Shape::Request(&segments[..2], n)),
        [_, _, "issues", n, ..] if is_digits(n) => Some(Shape::Issue),
        _ => None,
    }
}

/// `group/…/project/-/merge_requests/N[/…]`, legacy
/// `group/…/project/merge_requests/N`, and the issue equivalents.
fn gitlab_shape<'a>(segments: &'a [&'a str]) -> Option<Shape<'a>> {
    let pos = segments
        .iter()
        .position(|s| matches!(*s, "merge_requests" | "issues" | "work_items"))?;
    let n = segments.get(pos + 1).filter(|n| is_digits(n))?;
    let repo_end = if pos > 0 && segments[pos - 1] == "-" {
        pos - 1
    } else {
        pos
    };
    if repo_end < 2 {
        return None;
    }
    match segments[pos] {
        "merge_requests" => Some(Shape::Request(&segments[..repo_end], n)),
        _ => Some(Shape::Issue),
    }
}

fn read_fragment(forge: ForgeKind, fragment: &str) -> (Option<TargetedThread>, Option<Anchor>) {
    let number = |prefix: &str| -> Option<u64> {
        fragment
            .strip_prefix(prefix)
            .filter(|d| is_digits(d))
            .and_then(|d| d.parse().ok())
            .filter(|n| *n != 0)
    };
    match forge {
        ForgeKind::GitHub => {
            if let Some(id) = number("discussion_r").or_else(|| number("r")) {
                (Some(TargetedThread::GitHubDiscussion(id)), None)
            } else if let Some(id) = number("issuecomment-") {
                (None, Some(Anchor::IssueComment(id)))
            } else if let Some(id) = number("pullrequestreview-") {
                (None, Some(Anchor::Review(id)))
            } else {
                (None, None)
            }
        }
        ForgeKind::GitLab => (number("note_").map(TargetedThread::GitLabNote), None),
    }
}

fn describe_thread(t: TargetedThread) -> String {
    match t {
        TargetedThread::GitHubDiscussion(id) => format!("#discussion_r{id}"),
        TargetedThread::GitLabNote(id) => format!("#note_{id}"),
    }
}

// ---------------------------------------------------------------------------
// Hosts and repositories

/// Lowercase, drop a trailing dot, and map the aliases of the two public
/// forges (`www.`, `ssh.github.com`, `altssh.gitlab.com`) to their web host.
fn normalize_host(host: &str) -> String {
    let host = host.trim().trim_end_matches('.').to_ascii_lowercase();
    match ForgeKind::ALL
        .iter()
        .find(|k| k.spec().host_aliases.contains(&host.as_str()))
    {
        Some(kind) => kind.spec().default_host.to_owned(),
        None => host,
    }
}

/// The host without its port (`[::1]:80` → `[::1]`).
fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |i| &host[..=i]);
    }
    host.rsplit_once(':').map_or(host, |(h, _)| h)
}

/// Hosts compare by name: an ssh remote has no web port.
fn same_host(a: &str, b: &str) -> bool {
    let (a, b) = (normalize_host(a), normalize_host(b));
    host_name(&a) == host_name(&b)
}

fn well_known_forge(host: &str) -> Option<ForgeKind> {
    ForgeKind::of_public_host(host_name(host))
}

fn configured_forge(host: &str, ctx: &TargetContext) -> Option<ForgeKind> {
    let matches = |configured: &String| {
        let c = normalize_host(configured);
        let h = normalize_host(host);
        c == h || (!c.contains(':') && c == host_name(&h))
    };
    // A host is one forge's (the configuration refuses it in two lists).
    ForgeKind::ALL
        .into_iter()
        .find(|kind| ctx.hosts_of(*kind).iter().any(matches))
}

/// A guess from the host's first label, used only when nothing else says.
fn forge_from_host_name(host: &str) -> Option<ForgeKind> {
    let name = host_name(host);
    let first = name.split('.').next().unwrap_or(name);
    if !name.contains('.') {
        return None;
    }
    ForgeKind::ALL
        .into_iter()
        .find(|k| k.spec().host_label == first)
}

fn default_host(forge: ForgeKind) -> &'static str {
    forge.spec().default_host
}

/// Forges treat owner and repository names case-insensitively.
fn same_path(a: &RepoPath, b: &RepoPath) -> bool {
    a.owner.eq_ignore_ascii_case(&b.owner) && a.name.eq_ignore_ascii_case(&b.name)
}

fn same_repo(a: &RepoRef, b: &RepoRef) -> bool {
    same_host(&a.host, &b.host)
        && a.owner.eq_ignore_ascii_case(&b.owner)
        && a.name.eq_ignore_ascii_case(&b.name)
}

fn parse_repo_arg(value: &str) -> Result<FlagRepo, TargetError> {
    let invalid = |reason| TargetError::InvalidRepoArg {
        value: truncate(&redact_userinfo(value)),
        reason,
    };
    let value = value.trim();
    if value.contains("://") {
        let url = Url::parse(value).map_err(|_| invalid("not a valid URL"))?;
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| invalid("the URL has no host"))?;
        let host = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_owned(),
        };
        let segments: Vec<&str> = url
            .path()
            .trim_matches('/')
            .trim_end_matches(".git")
            .split('/')
            .filter(|s| !s.is_empty())
            .collect();
        let path = repo_path_from_segments(&segments)
            .ok_or_else(|| invalid("expected https://HOST/OWNER/NAME"))?;
        Ok(FlagRepo {
            host: Some(normalize_host(&host)),
            path,
        })
    } else {
        let segments: Vec<&str> = value
            .trim_matches('/')
            .trim_end_matches(".git")
            .split('/')
            .collect();
        let path = repo_path_from_segments(&segments)
            .ok_or_else(|| invalid("expected OWNER/NAME (or GROUP/SUBGROUP/PROJECT)"))?;
        Ok(FlagRepo { host: None, path })
    }
}

fn claim_desc(claim: &ForgeClaim) -> String {
    match claim {
        ForgeClaim::Url { .. } => "from the URL".to_owned(),
        ForgeClaim::Flag(_) => "from --forge".to_owned(),
        ForgeClaim::ConfiguredHost { host, .. } => format!("{host} is configured so"),
        ForgeClaim::Remote { host, .. } => format!("the origin remote is on {host}"),
    }
}

fn suggestion(forge: ForgeKind, found: &Found) -> String {
    let n = &found.digits;
    let sigil = forge.spec().number_sigil;
    match (forge, &found.path) {
        (_, Some(p)) => format!("\"{}{sigil}{n}\"", p.display()),
        // How people write each one in prose.
        (ForgeKind::GitHub, None) => format!("\"{n}\", \"#{n}\" or \"PR {n}\""),
        (ForgeKind::GitLab, None) => format!("\"{n}\", \"!{n}\" or \"MR !{n}\""),
    }
}

fn truncate(text: &str) -> String {
    if text.chars().count() <= MAX_QUOTE {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(MAX_QUOTE).collect();
    out.push('…');
    out
}

/// The input as messages quote it: credentials redacted, whitespace
/// collapsed, long input elided.
fn quote_input(input: &str) -> String {
    let collapsed = input.split_whitespace().collect::<Vec<_>>().join(" ");
    truncate(&redact_userinfo(&collapsed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn remote(url: &str) -> RemoteInfo {
        parse_remote_url(url).expect("test remote parses")
    }

    /// A clone of github.com/o/r.
    fn gh() -> TargetContext {
        TargetContext {
            remote: Some(remote("git@github.com:o/r.git")),
            ..TargetContext::default()
        }
    }

    /// A clone of gitlab.com/g/s/p.
    fn gl() -> TargetContext {
        TargetContext {
            remote: Some(remote("https://gitlab.com/g/s/p.git")),
            ..TargetContext::default()
        }
    }

    /// A clone of an Enterprise host nothing is configured for.
    fn ghe() -> TargetContext {
        TargetContext {
            remote: Some(remote("ssh://git@ghe.corp:2222/o/r.git")),
            ..TargetContext::default()
        }
    }

    /// A clone of a self-managed GitLab.
    fn corp_gitlab() -> TargetContext {
        TargetContext {
            remote: Some(remote("git@git.corp:grp/proj.git")),
            gitlab_hosts: vec!["git.corp".to_owned()],
            ..TargetContext::default()
        }
    }

    fn nowhere() -> TargetContext {
        TargetContext::default()
    }

    fn with_flags(forge: Option<ForgeKind>, repo: Option<&str>) -> TargetContext {
        TargetContext {
            forge,
            repo: repo.map(str::to_owned),
            ..TargetContext::default()
        }
    }

    const GH: ForgeKind = ForgeKind::GitHub;
    const GL: ForgeKind = ForgeKind::GitLab;
    const FULL: Mode = Mode::Full;

    fn gh_thread(id: u64) -> Mode {
        Mode::Targeted(TargetedThread::GitHubDiscussion(id))
    }

    fn gl_note(id: u64) -> Mode {
        Mode::Targeted(TargetedThread::GitLabNote(id))
    }

    #[test]
    fn accepted_forms() {
        let cases: Vec<(&str, TargetContext, ForgeKind, &str, u64, Mode)> = vec![
            ("42", gh(), GH, "github.com/o/r", 42, FULL),
            ("#42", gh(), GH, "github.com/o/r", 42, FULL),
            ("PR #42", gh(), GH, "github.com/o/r", 42, FULL),
            ("PR 42", gh(), GH, "github.com/o/r", 42, FULL),
            ("pr42", gh(), GH, "github.com/o/r", 42, FULL),
            ("PR#42", gh(), GH, "github.com/o/r", 42, FULL),
            ("pr: #42", gh(), GH, "github.com/o/r", 42, FULL),
            ("pull request #42", gh(), GH, "github.com/o/r", 42, FULL),
            ("resolve PR 42", gh(), GH, "github.com/o/r", 42, FULL),
            ("PR 42 (#42)", gh(), GH, "github.com/o/r", 42, FULL),
            ("  42\n", gh(), GH, "github.com/o/r", 42, FULL),
            ("0042", gh(), GH, "github.com/o/r", 42, FULL),
            (
                "resolve PR 42 in 3 rounds",
                gh(),
                GH,
                "github.com/o/r",
                42,
                FULL,
            ),
            (
                "PR 42, which fixes issue #5",
                gh(),
                GH,
                "github.com/o/r",
                42,
                FULL,
            ),
            ("o/r#42", gh(), GH, "github.com/o/r", 42, FULL),
            ("other/repo#42", gh(), GH, "github.com/other/repo", 42, FULL),
            (
                "https://github.com/o/r/pull/42",
                gh(),
                GH,
                "github.com/o/r",
                42,
                FULL,
            ),
            (
                "https://github.com/o/r/pull/42/",
                gh(),
                GH,
                "github.com/o/r",
                42,
                FULL,
            ),
            (
                "https://github.com/o/r/pull/42/files",
                gh(),
                GH,
                "github.com/o/r",
                42,
                FULL,
            ),
            (
                "https://github.com/o/r/pull/42/commits",
                gh(),
                GH,
                "github.com/o/r",
                42,
                FULL,
            ),
            (
                "https://github.com/o/r/pull/42/checks",
                gh(),
                GH,
                "github.com/o/r",
                42,
                FULL,
            ),
            (
                "https://github.com/o/r/pull/42/commits/0a1b2c",
                gh(),
                GH,
                "github.com/o/r",
                42,
                FULL,
            ),
            (
                "https://github.com/o/r/pull/42#discussion_r123",
                gh(),
                GH,
                "github.com/o/r",
                42,
                gh_thread(123),
            ),
            (
                "https://github.com/o/r/pull/42/files#r456",
                gh(),
                GH,
                "github.com/o/r",
                42,
                gh_thread(456),
            ),
            (
                "https://github.com/o/r/pull/42/files#diff-abc12R7",
                gh(),
                GH,
                "github.com/o/r",
                42,
                FULL,
            ),
            (
                "https://github.com/o/r/pull/42?notification_referrer_id=x&tab=files",
                gh(),
                GH,
                "github.com/o/r",
                42,
                FULL,
            ),
            (
                "please fix https://github.com/o/r/pull/42 thanks",
                gh(),
                GH,
                "github.com/o/r",
                42,
                FULL,
            ),
            (
                "(see https://github.com/o/r/pull/42).",
                gh(),
                GH,
                "github.com/o/r",
                42,
                FULL,
            ),
            (
                "<https://github.com/o/r/pull/42>",
                gh(),
                GH,
                "github.com/o/r",
                42,
                FULL,
            ),
            (
                "[the PR](https://github.com/o/r/pull/42)",
                gh(),
                GH,
                "github.com/o/r",
                42,
                FULL,
            ),
            (
                "github.com/o/r/pull/42",
                gh(),
                GH,
                "github.com/o/r",
                42,
                FULL,
            ),
            (
                "HTTPS://WWW.GitHub.com/o/r/pull/42",
                gh(),
                GH,
                "github.com/o/r",
                42,
                FULL,
            ),
            (
                "https://x:secret@github.com/o/r/pull/42",
                gh(),
                GH,
                "github.com/o/r",
                42,
                FULL,
            ),
            (
                "PR 42 https://github.com/o/r/pull/42#discussion_r9",
                gh(),
                GH,
                "github.com/o/r",
                42,
                gh_thread(9),
            ),
            (
                "https://ghe.corp/o/r/pull/7",
                ghe(),
                GH,
                "ghe.corp/o/r",
                7,
                FULL,
            ),
            (
                "https://ghe.corp:8443/o/r/pull/7#discussion_r9",
                ghe(),
                GH,
                "ghe.corp:8443/o/r",
                7,
                gh_thread(9),
            ),
            ("#7", ghe(), GH, "ghe.corp/o/r", 7, FULL),
            ("!17", gl(), GL, "gitlab.com/g/s/p", 17, FULL),
            ("MR !17", gl(), GL, "gitlab.com/g/s/p", 17, FULL),
            ("MR 17", gl(), GL, "gitlab.com/g/s/p", 17, FULL),
            ("mr17", gl(), GL, "gitlab.com/g/s/p", 17, FULL),
            ("MR!17", gl(), GL, "gitlab.com/g/s/p", 17, FULL),
            ("merge request !17", gl(), GL, "gitlab.com/g/s/p", 17, FULL),
            ("17", gl(), GL, "gitlab.com/g/s/p", 17, FULL),
            ("g/s/p!17", gl(), GL, "gitlab.com/g/s/p", 17, FULL),
            ("other/proj!17", gl(), GL, "gitlab.com/other/proj", 17, FULL),
            (
                "https://gitlab.com/g/s/p/-/merge_requests/17",
                gl(),
                GL,
                "gitlab.com/g/s/p",
                17,
                FULL,
            ),
            (
                "https://gitlab.com/g/s/p/-/merge_requests/17/diffs",
                gl(),
                GL,
                "gitlab.com/g/s/p",
                17,
                FULL,
            ),
            (
                "https://gitlab.com/g/s/p/-/merge_requests/17#note_99",
                gl(),
                GL,
                "gitlab.com/g/s/p",
                17,
                gl_note(99),
            ),
            (
                "https://gitlab.com/g/s/p/-/merge_requests/17/diffs#note_99",
                gl(),
                GL,
                "gitlab.com/g/s/p",
                17,
                gl_note(99),
            ),
            (
                "https://gitlab.com/g/s/p/merge_requests/17",
                gl(),
                GL,
                "gitlab.com/g/s/p",
                17,
                FULL,
            ),
            ("17", corp_gitlab(), GL, "git.corp/grp/proj", 17, FULL),
            (
                "https://git.corp/grp/proj/-/merge_requests/17",
                corp_gitlab(),
                GL,
                "git.corp/grp/proj",
                17,
                FULL,
            ),
            (
                "https://gitlab.corp/a/b/c/-/merge_requests/3",
                nowhere(),
                GL,
                "gitlab.corp/a/b/c",
                3,
                FULL,
            ),
            (
                "MR !3",
                with_flags(None, Some("g/p")),
                GL,
                "gitlab.com/g/p",
                3,
                FULL,
            ),
            (
                "42",
                with_flags(Some(GH), Some("o/r")),
                GH,
                "github.com/o/r",
                42,
                FULL,
            ),
            (
                "42",
                with_flags(Some(GH), Some("https://ghe.corp/o/r")),
                GH,
                "ghe.corp/o/r",
                42,
                FULL,
            ),
            (
                "o/r#42",
                with_flags(None, None),
                GH,
                "github.com/o/r",
                42,
                FULL,
            ),
        ];
        assert!(cases.len() >= 40);
        for (input, ctx, forge, repo, number, mode) in cases {
            let t = parse_target(input, &ctx).unwrap_or_else(|e| panic!("{input:?}: {e}"));
            assert_eq!(t.forge, forge, "{input:?}");
            assert_eq!(t.repo.to_string(), repo, "{input:?}");
            assert_eq!(t.number, number, "{input:?}");
            assert_eq!(t.mode, mode, "{input:?}");
        }
    }

    #[test]
    fn sources_are_recorded() {
        let cases: Vec<(&str, TargetContext, ForgeSource, RepoSource)> = vec![
            ("42", gh(), ForgeSource::Remote, RepoSource::Remote),
            ("x/y#42", gh(), ForgeSource::Remote, RepoSource::Reference),
            (
                "https://github.com/o/r/pull/1",
                gh(),
                ForgeSource::Url,
                RepoSource::Url,
            ),
            (
                "17",
                corp_gitlab(),
                ForgeSource::ConfiguredHost,
                RepoSource::Remote,
            ),
            ("#7", ghe(), ForgeSource::Reference, RepoSource::Remote),
            (
                "42",
                with_flags(Some(GH), Some("o/r")),
                ForgeSource::Flag,
                RepoSource::Flag,
            ),
        ];
        for (input, ctx, forge_source, repo_source) in cases {
            let t = parse_target(input, &ctx).unwrap_or_else(|e| panic!("{input:?}: {e}"));
            assert_eq!(t.forge_source, forge_source, "{input:?}");
            assert_eq!(t.repo_source, repo_source, "{input:?}");
        }
    }

    #[test]
    fn a_gitlab_host_name_is_a_last_resort_guess() {
        let ctx = TargetContext {
            remote: Some(remote("git@gitlab.example.org:team/app.git")),
            ..TargetContext::default()
        };
        let t = parse_target("5", &ctx).expect("parses");
        assert_eq!((t.forge, t.forge_source), (GL, ForgeSource::HostName));
        // An explicit flag overrides the guess without a conflict.
        let ctx = TargetContext {
            forge: Some(GH),
            ..ctx
        };
        let t = parse_target("5", &ctx).expect("parses");
        assert_eq!((t.forge, t.forge_source), (GH, ForgeSource::Flag));
    }

    #[test]
    fn anchors_are_recorded_without_targeting() {
        let t =
            parse_target("https://github.com/o/r/pull/42#issuecomment-789", &gh()).expect("parses");
        assert_eq!((t.mode, t.anchor), (FULL, Some(Anchor::IssueComment(789))));
        let t = parse_target("https://github.com/o/r/pull/42#pullrequestreview-5", &gh())
            .expect("parses");
        assert_eq!((t.mode, t.anchor), (FULL, Some(Anchor::Review(5))));
    }

    #[test]
    fn the_emulator_host_keeps_its_port() {
        let ctx = TargetContext {
            remote: Some(remote("http://127.0.0.1:4000/o/r.git")),
            ..TargetContext::default()
        };
        let t = parse_target("http://127.0.0.1:4000/o/r/pull/3", &ctx).expect("parses");
        assert_eq!(t.repo.host, "127.0.0.1:4000");
        assert_eq!(t.forge, GH);
    }

    #[test]
    fn display() {
        let t = parse_target("42", &gh()).expect("parses");
        assert_eq!(t.to_string(), "pull request github.com/o/r#42");
        let t = parse_target("https://gitlab.com/g/s/p/-/merge_requests/7#note_99", &gl())
            .expect("parses");
        assert_eq!(
            t.to_string(),
            "merge request gitlab.com/g/s/p!7 (discussion of note 99)"
        );
        assert_eq!(t.short_ref(), "!7");
        assert!(t.is_targeted());
        let t =
            parse_target("https://github.com/o/r/pull/42#discussion_r5", &gh()).expect("parses");
        assert_eq!(
            t.to_string(),
            "pull request github.com/o/r#42 (thread of review comment 5)"
        );
    }

    /// Assert the error, and that its message holds every needle.
    fn rejects(
        input: &str,
        ctx: &TargetContext,
        is_variant: fn(&TargetError) -> bool,
        needles: &[&str],
    ) {
        let err = match parse_target(input, ctx) {
            Ok(t) => panic!("{input:?} was accepted as {t}"),
            Err(e) => e,
        };
        assert!(is_variant(&err), "{input:?}: unexpected {err:?}");
        let msg = err.to_string();
        for needle in needles {
            assert!(msg.contains(needle), "{input:?}: {msg:?} lacks {needle:?}");
        }
    }

    #[test]
    fn rejections() {
        use TargetError as E;
        rejects(
            "",
            &gh(),
            |e| matches!(e, E::NoNumber { .. }),
            &["no pull request or merge request number", "\"\""],
        );
        rejects(
            "please fix the tests",
            &gh(),
            |e| matches!(e, E::NoNumber { .. }),
            &["\"please fix the tests\""],
        );
        rejects(
            "abc#42 v1.2.3 42nd",
            &gh(),
            |e| matches!(e, E::NoNumber { .. }),
            &["abc#42"],
        );
        rejects(
            "#12 and #13",
            &gh(),
            |e| matches!(e, E::NumberConflict { .. }),
            &["found both #12 and #13", "name exactly one"],
        );
        rejects(
            "12 or 13",
            &gh(),
            |e| matches!(e, E::NumberConflict { .. }),
            &["found both 12 and 13"],
        );
        rejects(
            "https://github.com/o/r/pull/1 https://github.com/o/r/pull/2",
            &gh(),
            |e| matches!(e, E::NumberConflict { .. }),
            &["found both https://github.com/o/r/pull/1 and https://github.com/o/r/pull/2"],
        );
        rejects(
            "https://github.com/o/r/pull/1 https://github.com/o/other/pull/1",
            &gh(),
            |e| matches!(e, E::RepoConflict { .. }),
            &[
                "conflicting repositories",
                "github.com/o/r",
                "github.com/o/other",
            ],
        );
        rejects(
            "https://github.com/o/r/pull/1#discussion_r1 https://github.com/o/r/pull/1#discussion_r2",
            &gh(),
            |e| matches!(e, E::ThreadConflict { .. }),
            &["#discussion_r1", "#discussion_r2", "exactly one"],
        );
        rejects(
            "MR !3",
            &with_flags(Some(GH), Some("o/r")),
            |e| matches!(e, E::KindConflict { .. }),
            &[
                "\"MR !3\" names a merge request",
                "the forge is github (from --forge)",
                "\"#3\"",
            ],
        );
        rejects(
            "#42",
            &gl(),
            |e| matches!(e, E::KindConflict { .. }),
            &[
                "names a pull request",
                "gitlab",
                "origin remote is on gitlab.com",
                "\"!42\"",
            ],
        );
        rejects(
            "o/r#42",
            &gl(),
            |e| matches!(e, E::KindConflict { .. }),
            &["\"o/r!42\""],
        );
        rejects(
            "https://github.com/o/r/pull/3",
            &with_flags(Some(GL), None),
            |e| matches!(e, E::ForgeConflict { .. }),
            &[
                "conflicting forges",
                "is a github pull request URL",
                "--forge is gitlab",
            ],
        );
        rejects(
            "42",
            &TargetContext {
                forge: Some(GL),
                ..gh()
            },
            |e| matches!(e, E::ForgeConflict { .. }),
            &["--forge is gitlab", "origin remote is on github.com"],
        );
        rejects(
            "https://git.corp/grp/proj/pull/4",
            &corp_gitlab(),
            |e| matches!(e, E::ForgeConflict { .. }),
            &["host git.corp is configured as gitlab"],
        );
        rejects(
            "https://github.com/o/r/pull/3",
            &gl(),
            |e| matches!(e, E::HostMismatch { .. }),
            &["on host github.com", "origin remote is on gitlab.com"],
        );
        rejects(
            "https://ghe.corp/o/r/pull/3",
            &gh(),
            |e| matches!(e, E::HostMismatch { .. }),
            &["ghe.corp", "github.com"],
        );
        rejects(
            "https://github.com/o/r/issues/5",
            &gh(),
            |e| matches!(e, E::NotAPullRequest { .. }),
            &["is an issue", "issues/5"],
        );
        rejects(
            "https://gitlab.com/g/p/-/issues/5",
            &gl(),
            |e| matches!(e, E::NotAPullRequest { .. }),
            &["is an issue"],
        );
        rejects(
            "fix issue #5",
            &gh(),
            |e| matches!(e, E::NotAPullRequest { .. }),
            &["\"issue #5\"", "is an issue"],
        );
        rejects(
            "#0",
            &gh(),
            |e| matches!(e, E::Zero { .. }),
            &["\"#0\"", "0 is not"],
        );
        rejects(
            "PR 99999999999999999999999",
            &gh(),
            |e| matches!(e, E::TooLarge { .. }),
            &["too large", "99999999999999999999999"],
        );
        rejects(
            "PR 42 !42",
            &gh(),
            |e| matches!(e, E::MixedKinds { .. }),
            &[
                "\"PR 42\" names a pull request",
                "\"!42\" names a merge request",
            ],
        );
        rejects(
            "PR !42",
            &gh(),
            |e| matches!(e, E::MixedReference { .. }),
            &["\"PR !42\"", "mixes"],
        );
        rejects(
            "42",
            &nowhere(),
            |e| matches!(e, E::NoRepository { .. }),
            &["no repository for \"42\"", "--repo"],
        );
        rejects(
            "42",
            &ghe(),
            |e| matches!(e, E::UnknownForge { .. }),
            &["ghe.corp", "--forge"],
        );
        rejects(
            "42",
            &with_flags(None, Some("o/r")),
            |e| matches!(e, E::UnknownForge { .. }),
            &["o/r"],
        );
        rejects(
            "o/r#42",
            &with_flags(None, Some("x/y")),
            |e| matches!(e, E::RepoConflict { .. }),
            &["o/r", "x/y", "--repo"],
        );
        rejects(
            "https://github.com/o/r/pull/4",
            &TargetContext {
                repo: Some("o/other".to_owned()),
                ..gh()
            },
            |e| matches!(e, E::RepoConflict { .. }),
            &["github.com/o/r", "o/other"],
        );
        rejects(
            "a/b/c#42",
            &gh(),
            |e| matches!(e, E::InvalidRepo { .. }),
            &["a/b/c", "owner/name"],
        );
        rejects(
            "42",
            &with_flags(Some(GH), Some("not-a-repo")),
            |e| matches!(e, E::InvalidRepoArg { .. }),
            &["--repo \"not-a-repo\""],
        );
        rejects(
            "https://github.com/o/r/-/merge_requests/4",
            &gh(),
            |e| matches!(e, E::InvalidUrl { .. }),
            &["github.com is github", "gitlab merge request path"],
        );
    }

    #[test]
    fn credentials_in_the_input_are_never_echoed() {
        let err = parse_target(
            "https://u:hunter2@github.com/o/r/pull/1 https://ghp_secret@github.com/o/r/pull/2",
            &gh(),
        )
        .expect_err("two numbers");
        let msg = err.to_string();
        assert!(
            !msg.contains("hunter2") && !msg.contains("ghp_secret"),
            "{msg}"
        );
        assert!(msg.contains("https://***@github.com/o/r/pull/1"), "{msg}");

        let err = parse_target("https://u:hunter2@ghe.corp/o/r/pull/1", &gh()).expect_err("host");
        assert!(!err.to_string().contains("hunter2"), "{err}");
        assert!(!format!("{err:?}").contains("hunter2"), "{err:?}");

        let ctx = TargetContext {
            repo: Some("https://u:hunter2@ghe.corp/o".to_owned()),
            ..gh()
        };
        assert!(!format!("{ctx:?}").contains("hunter2"));
        let err = parse_target("1", &ctx).expect_err("bad --repo");
        assert!(!err.to_string().contains("hunter2"), "{err}");
    }

    #[test]
    fn long_input_is_elided() {
        let input = format!("{} #1 #2", "word ".repeat(100));
        let msg = parse_target(&input, &gh())
            .expect_err("two numbers")
            .to_string();
        assert!(msg.contains('…') && msg.len() < 400, "{msg}");
    }

    #[test]
    fn remote_urls() {
        let cases: &[(&str, &str, Option<ForgeKind>)] = &[
            ("https://github.com/o/r.git", "github.com/o/r", Some(GH)),
            ("https://github.com/o/r", "github.com/o/r", Some(GH)),
            ("https://github.com/o/r/", "github.com/o/r", Some(GH)),
            (
                "https://x-access-token:ghs_abc@github.com/o/r.git",
                "github.com/o/r",
                Some(GH),
            ),
            ("git@github.com:o/r.git", "github.com/o/r", Some(GH)),
            ("github.com:o/r", "github.com/o/r", Some(GH)),
            (
                "ssh://git@ssh.github.com:443/o/r.git",
                "github.com/o/r",
                Some(GH),
            ),
            ("ssh://git@ghe.corp:2222/o/r.git", "ghe.corp/o/r", None),
            ("https://ghe.corp:8443/o/r.git", "ghe.corp:8443/o/r", None),
            ("http://127.0.0.1:4000/o/r.git", "127.0.0.1:4000/o/r", None),
            ("git://host.example/o/r.git", "host.example/o/r", None),
            (
                "https://gitlab.com/g/sub/p.git",
                "gitlab.com/g/sub/p",
                Some(GL),
            ),
            (
                "git@gitlab.com:g/sub/sub2/p.git",
                "gitlab.com/g/sub/sub2/p",
                Some(GL),
            ),
            ("  https://GitHub.com/O/R.git\n", "github.com/O/R", Some(GH)),
        ];
        for (url, repo, forge) in cases {
            let info = parse_remote_url(url).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!(info.repo.to_string(), *repo, "{url}");
            assert_eq!(info.forge, *forge, "{url}");
            assert!(!format!("{info:?}").contains("ghs_abc"));
        }
        let nested = parse_remote_url("git@gitlab.com:g/sub/p.git").expect("parses");
        assert_eq!(
            (nested.repo.owner.as_str(), nested.repo.name.as_str()),
            ("g/sub", "p")
        );
    }

    #[test]
    fn remote_url_rejections_never_echo_credentials() {
        for (url, needle) in [
            ("", "empty"),
            ("/home/me/repo", "local path"),
            ("../repo", "local path"),
            ("file:///tmp/r", "local path"),
            ("ftp://host/o/r", "unsupported URL scheme"),
            ("https://github.com/o", "not owner/repo"),
            ("https://user:hunter2@github.com/o", "not owner/repo"),
            ("https://ghp_hunter2@github.com/", "not owner/repo"),
            ("C:\\work\\repo", "neither a URL"),
        ] {
            let err = parse_remote_url(url).expect_err(url);
            assert!(matches!(err, TargetError::InvalidRemote { .. }), "{url}");
            let msg = err.to_string();
            assert!(msg.contains(needle), "{url}: {msg}");
            assert!(
                !msg.contains("hunter2") && !format!("{err:?}").contains("hunter2"),
                "{msg}"
            );
        }
    }

    #[test]
    fn redaction() {
        assert_eq!(redact_userinfo("https://a:b@h/x"), "https://***@h/x");
        assert_eq!(
            redact_userinfo("see https://tok@h/x and http://h/y"),
            "see https://***@h/x and http://h/y"
        );
        assert_eq!(redact_userinfo("git@github.com:o/r"), "git@github.com:o/r");
        assert_eq!(redact_userinfo("u:secret@host:o/r"), "***@host:o/r");
        assert_eq!(redact_userinfo("ping @bob about it"), "ping @bob about it");
        // Regression: multi-byte whitespace before an '@' (found by proptest).
        assert_eq!(redact_userinfo("A\u{2000}@"), "A\u{2000}@");
        assert_eq!(redact_userinfo("x\u{2002}u:p@h:o/r"), "x\u{2002}***@h:o/r");
    }

    /// Each accepted spelling of `n`, with a context it is valid in.
    fn forms(n: u64) -> Vec<(String, TargetContext)> {
        let github = [
            format!("{n}"),
            format!("#{n}"),
            format!("PR #{n}"),
            format!("PR {n}"),
            format!("pr{n}"),
            format!("PR#{n}"),
            format!("pull request #{n}"),
            format!("o/r#{n}"),
            format!("resolve PR {n} please"),
            format!("PR {n} (#{n})"),
            format!("https://github.com/o/r/pull/{n}"),
            format!("https://github.com/o/r/pull/{n}/files"),
            format!("https://github.com/o/r/pull/{n}#discussion_r7"),
            format!("https://github.com/o/r/pull/{n}#issuecomment-7"),
        ];
        let gitlab = [
            format!("{n}"),
            format!("!{n}"),
            format!("MR !{n}"),
            format!("MR {n}"),
            format!("mr{n}"),
            format!("merge request !{n}"),
            format!("g/s/p!{n}"),
            format!("https://gitlab.com/g/s/p/-/merge_requests/{n}"),
            format!("https://gitlab.com/g/s/p/-/merge_requests/{n}/diffs#note_3"),
            format!("https://gitlab.com/g/s/p/merge_requests/{n}"),
        ];
        github
            .into_iter()
            .map(|f| (f, gh()))
            .chain(gitlab.into_iter().map(|f| (f, gl())))
            .collect()
    }

    const FRAGMENTS: &[&str] = &[
        "https://",
        "http://",
        "ssh://",
        "git@",
        "u:p@",
        "github.com",
        "gitlab.com",
        "ghe.corp:8443",
        "/",
        "o/r",
        "g/s/p",
        "/pull/",
        "/-/",
        "merge_requests/",
        "/issues/",
        "#",
        "!",
        "42",
        "0",
        "99999999999999999999999",
        "@",
        ":",
        "PR",
        "MR",
        "pull request",
        "issue",
        " ",
        "\u{2000}",
        "é",
        "#discussion_r",
        "#note_",
        "#r",
        "?q=1",
        ".git",
        "(",
        ")",
        "<",
        ">",
        "[",
        "](",
        ".",
    ];

    proptest! {
        #[test]
        fn every_form_parses_back_to_its_number(n in 1..=u64::from(u32::MAX)) {
            for (input, ctx) in forms(n) {
                let t = parse_target(&input, &ctx);
                prop_assert!(t.is_ok(), "{input:?}: {:?}", t);
                prop_assert_eq!(t.map(|t| t.number).ok(), Some(n), "{}", input);
            }
        }

        #[test]
        fn parsing_never_panics(input in "\\PC{0,80}") {
            let _ = parse_target(&input, &gh());
            let _ = parse_remote_url(&input);
            let _ = redact_userinfo(&input);
        }

        #[test]
        fn parsing_reference_like_text_never_panics(
            parts in prop::collection::vec(prop::sample::select(FRAGMENTS), 0..16),
        ) {
            let input: String = parts.concat();
            for ctx in [gh(), gl(), ghe(), nowhere(), with_flags(Some(GL), Some(&input))] {
                if let Err(e) = parse_target(&input, &ctx) {
                    prop_assert!(!e.to_string().is_empty());
                }
            }
            let _ = parse_remote_url(&input);
        }
    }
}
