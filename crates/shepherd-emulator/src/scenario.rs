//! Scenarios: the starting state of an emulated forge.
//!
//! A scenario is a directory holding `scenario.toml` (users, repository, pull
//! request, review threads, comments, reviews) and two file trees, `base/` and
//! `head/`, that become the base and head commits. Tests can also build a
//! [`Scenario`] in code, through its public fields and constructors.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::automation::{BotProfile, BotSpec, CheckSpec, CiSpec, FaultSpec};

/// Errors from loading or validating a scenario.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// A file or directory of the scenario could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// What was being read.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// `scenario.toml` is not valid TOML or does not match the format
    /// (an unknown key, a missing key, a wrong type).
    #[error("cannot parse {}: {error}", path.display())]
    Parse {
        /// The file that failed to parse.
        path: PathBuf,
        /// The parser's message, which names the offending key and line.
        error: toml::de::Error,
    },
    /// A file tree contains something that cannot become a commit.
    #[error("unsupported file {}: {reason}", path.display())]
    UnsupportedFile {
        /// The file.
        path: PathBuf,
        /// Why it is refused.
        reason: &'static str,
    },
    /// The scenario parses but is inconsistent (an unknown author, a duplicate
    /// login, an invalid line range...).
    #[error("invalid scenario: {0}")]
    Invalid(String),
}

/// Which forge's API the emulator serves for a scenario (`forge` in
/// `scenario.toml`). The state underneath is the same: a pull request is a
/// merge request, a review thread a resolvable discussion, a CI workflow run
/// a pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmulatedForge {
    /// GitHub: GraphQL and REST (`/graphql`, `/repos/…`, `/api/v3/…`).
    #[default]
    #[serde(alias = "GitHub")]
    GitHub,
    /// GitLab: the REST API v4 (`/api/v4/…`).
    #[serde(alias = "GitLab")]
    GitLab,
}

impl EmulatedForge {
    /// `github` or `gitlab`.
    pub fn as_str(self) -> &'static str {
        match self {
            EmulatedForge::GitHub => "github",
            EmulatedForge::GitLab => "gitlab",
        }
    }
}

/// Whether an account is a person or a bot (GitHub `User` or `Bot`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UserKind {
    /// A person.
    #[default]
    User,
    /// An app or bot account.
    Bot,
}

impl UserKind {
    /// `user` or `bot`.
    pub fn as_str(self) -> &'static str {
        match self {
            UserKind::User => "user",
            UserKind::Bot => "bot",
        }
    }
}

/// A user's permission on the scenario's repository, from least to most.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Permission {
    /// No access: the repository answers 404, as GitHub does for private ones.
    None,
    /// Read access: can fetch and read, cannot push.
    Read,
    /// Write access: can push and resolve threads.
    #[default]
    Write,
    /// Admin access.
    Admin,
}

impl Permission {
    /// `none`, `read`, `write` or `admin`.
    pub fn as_str(self) -> &'static str {
        match self {
            Permission::None => "none",
            Permission::Read => "read",
            Permission::Write => "write",
            Permission::Admin => "admin",
        }
    }
}

/// A user (`[[users]]`).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserSpec {
    /// The login, as GraphQL reports it (REST adds `[bot]` for bots).
    pub login: String,
    /// The emulator token that authenticates as this user.
    pub token: String,
    /// Person or bot.
    #[serde(default)]
    pub kind: UserKind,
    /// Permission on the repository.
    #[serde(default)]
    pub permission: Permission,
    /// A member of the organisation that owns the repository: GitHub then
    /// calls the account's comments `MEMBER`, whatever its permission
    /// (which alone says what it may do).
    #[serde(default)]
    pub member: bool,
}

impl UserSpec {
    /// A user with the given kind and permission.
    pub fn new(
        login: impl Into<String>,
        token: impl Into<String>,
        kind: UserKind,
        permission: Permission,
    ) -> Self {
        UserSpec {
            login: login.into(),
            token: token.into(),
            kind,
            permission,
            member: false,
        }
    }
}

// Tokens are fake, but keep them out of Debug output all the same.
impl std::fmt::Debug for UserSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserSpec")
            .field("login", &self.login)
            .field("token", &"<redacted>")
            .field("kind", &self.kind)
            .field("permission", &self.permission)
            .field("member", &self.member)
            .finish()
    }
}

/// The repository (`[repository]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepositorySpec {
    /// Owner (user or organisation login).
    pub owner: String,
    /// Repository name.
    pub name: String,
    /// The default branch; `main` when omitted.
    #[serde(default = "default_branch")]
    pub default_branch: String,
    /// Who may see the repository and comment on its pull requests;
    /// `private` when omitted.
    #[serde(default)]
    pub visibility: Visibility,
}

/// A repository's visibility (GitHub's `visibility`, GitLab's
/// `visibility`). On a public repository any signed-in account may read it
/// and comment on its pull requests (GitHub: "anyone with an account";
/// GitLab: "any logged in user" can comment on a public project's merge
/// requests), without being a collaborator or member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// Only the scenario's users with a permission see it.
    #[default]
    Private,
    /// Anyone signed in sees it and may comment.
    Public,
}

impl Visibility {
    /// `private` or `public`.
    pub fn as_str(self) -> &'static str {
        match self {
            Visibility::Private => "private",
            Visibility::Public => "public",
        }
    }
}

fn default_branch() -> String {
    "main".to_owned()
}

impl RepositorySpec {
    /// A repository whose default branch is `main`.
    pub fn new(owner: impl Into<String>, name: impl Into<String>) -> Self {
        RepositorySpec {
            owner: owner.into(),
            name: name.into(),
            default_branch: default_branch(),
            visibility: Visibility::default(),
        }
    }
}

/// Open, closed or merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PullRequestStatus {
    /// Open.
    #[default]
    Open,
    /// Closed without merging.
    Closed,
    /// Merged.
    Merged,
}

/// The pull request (`[pull_request]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PullRequestSpec {
    /// The PR number.
    pub number: u64,
    /// Title; also the head commit's message.
    pub title: String,
    /// Description (Markdown).
    #[serde(default)]
    pub body: String,
    /// Login of the author (one of `[[users]]`).
    pub author: String,
    /// Head branch name.
    pub head: String,
    /// Base branch name.
    pub base: String,
    /// Open, closed or merged.
    #[serde(default)]
    pub state: PullRequestStatus,
    /// Whether the PR is a draft.
    #[serde(default)]
    pub draft: bool,
    /// Whether the head comes from a fork (`isCrossRepository`).
    #[serde(default)]
    pub fork: bool,
    /// Labels on the pull request (created in the repository as needed).
    #[serde(default)]
    pub labels: Vec<String>,
}

impl PullRequestSpec {
    /// An open, non-draft, same-repository PR with an empty body.
    pub fn new(
        number: u64,
        title: impl Into<String>,
        author: impl Into<String>,
        head: impl Into<String>,
        base: impl Into<String>,
    ) -> Self {
        PullRequestSpec {
            number,
            title: title.into(),
            body: String::new(),
            author: author.into(),
            head: head.into(),
            base: base.into(),
            state: PullRequestStatus::Open,
            draft: false,
            fork: false,
            labels: Vec::new(),
        }
    }
}

/// The side of the diff a thread is anchored to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The base side (removed lines).
    #[serde(alias = "LEFT")]
    Left,
    /// The head side (added and context lines).
    #[default]
    #[serde(alias = "RIGHT")]
    Right,
}

/// A comment in a review thread (`[[threads.comments]]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadCommentSpec {
    /// Login of the author.
    pub author: String,
    /// Markdown body.
    pub body: String,
    /// The `name` of a `[[reviews]]` entry this comment belongs to. Without it
    /// the comment gets its own COMMENTED review with an empty body, as a
    /// single comment does on GitHub.
    #[serde(default)]
    pub review: Option<String>,
}

impl ThreadCommentSpec {
    /// A comment in its own implicit review.
    pub fn new(author: impl Into<String>, body: impl Into<String>) -> Self {
        ThreadCommentSpec {
            author: author.into(),
            body: body.into(),
            review: None,
        }
    }
}

/// A review thread (`[[threads]]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadSpec {
    /// File path, relative to the repository root.
    pub path: String,
    /// The (last) line the thread is anchored to; omitted for a file-level
    /// thread (`subjectType: FILE`).
    #[serde(default)]
    pub line: Option<u32>,
    /// The first line of a multi-line thread.
    #[serde(default)]
    pub start_line: Option<u32>,
    /// Which side of the diff.
    #[serde(default)]
    pub side: Side,
    /// Whether newer commits outdated the thread (GraphQL then reports
    /// `line: null` and keeps `originalLine`).
    #[serde(default)]
    pub outdated: bool,
    /// Whether the thread is resolved.
    #[serde(default)]
    pub resolved: bool,
    /// The comments, oldest first; at least one.
    #[serde(default)]
    pub comments: Vec<ThreadCommentSpec>,
}

impl ThreadSpec {
    /// An unresolved, current thread on the head side at one line.
    pub fn new(path: impl Into<String>, line: u32, comments: Vec<ThreadCommentSpec>) -> Self {
        ThreadSpec {
            path: path.into(),
            line: Some(line),
            start_line: None,
            side: Side::Right,
            outdated: false,
            resolved: false,
            comments,
        }
    }
}

/// A top-level PR comment (`[[comments]]`, GitHub's issue comments).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IssueCommentSpec {
    /// Login of the author.
    pub author: String,
    /// Markdown body.
    pub body: String,
}

impl IssueCommentSpec {
    /// A top-level comment.
    pub fn new(author: impl Into<String>, body: impl Into<String>) -> Self {
        IssueCommentSpec {
            author: author.into(),
            body: body.into(),
        }
    }
}

/// The state of a review (GitHub `PullRequestReviewState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewStateSpec {
    /// A draft review, visible only to its author, with its comments.
    #[serde(alias = "PENDING")]
    Pending,
    /// Submitted as a comment.
    #[default]
    #[serde(alias = "COMMENTED")]
    Commented,
    /// Submitted as an approval.
    #[serde(alias = "APPROVED")]
    Approved,
    /// Submitted requesting changes.
    #[serde(alias = "CHANGES_REQUESTED")]
    ChangesRequested,
    /// Dismissed.
    #[serde(alias = "DISMISSED")]
    Dismissed,
}

/// A review (`[[reviews]]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewSpec {
    /// A scenario-local name that thread comments use to join this review.
    #[serde(default)]
    pub name: Option<String>,
    /// Login of the reviewer.
    pub author: String,
    /// The review's state.
    #[serde(default)]
    pub state: ReviewStateSpec,
    /// The review's body (may be empty).
    #[serde(default)]
    pub body: String,
}

impl ReviewSpec {
    /// An unnamed review.
    pub fn new(author: impl Into<String>, state: ReviewStateSpec, body: impl Into<String>) -> Self {
        ReviewSpec {
            name: None,
            author: author.into(),
            state,
            body: body.into(),
        }
    }
}

/// One file of a tree.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileSpec {
    /// The file's bytes.
    pub contents: Vec<u8>,
    /// Whether the file is executable (mode 100755).
    pub executable: bool,
}

impl FileSpec {
    /// A regular, non-executable file.
    pub fn text(contents: impl Into<String>) -> Self {
        FileSpec {
            contents: contents.into().into_bytes(),
            executable: false,
        }
    }
}

/// A file tree: `/`-separated relative paths to files.
pub type FileTree = BTreeMap<String, FileSpec>;

/// The starting state of an emulated forge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Which forge's API is served (`github` by default).
    #[serde(default)]
    pub forge: EmulatedForge,
    /// Accounts and their tokens.
    #[serde(default)]
    pub users: Vec<UserSpec>,
    /// The repository.
    pub repository: RepositorySpec,
    /// The pull request.
    pub pull_request: PullRequestSpec,
    /// Review threads, in creation order.
    #[serde(default)]
    pub threads: Vec<ThreadSpec>,
    /// Top-level PR comments, in creation order.
    #[serde(default)]
    pub comments: Vec<IssueCommentSpec>,
    /// Reviews, in creation order.
    #[serde(default)]
    pub reviews: Vec<ReviewSpec>,
    /// CI settings.
    #[serde(default)]
    pub ci: CiSpec,
    /// CI checks, the jobs of one workflow.
    #[serde(default)]
    pub checks: Vec<CheckSpec>,
    /// Reviewer bots.
    #[serde(default)]
    pub bots: Vec<BotSpec>,
    /// Faults active from the start.
    #[serde(default)]
    pub faults: Vec<FaultSpec>,
    /// The files of the base commit (`base/`).
    #[serde(skip)]
    pub base: FileTree,
    /// The files of the head commit (`head/`).
    #[serde(skip)]
    pub head: FileTree,
}

impl Scenario {
    /// A scenario with no users, threads, comments, reviews or files.
    pub fn new(repository: RepositorySpec, pull_request: PullRequestSpec) -> Self {
        Scenario {
            forge: EmulatedForge::GitHub,
            users: Vec::new(),
            repository,
            pull_request,
            threads: Vec::new(),
            comments: Vec::new(),
            reviews: Vec::new(),
            ci: CiSpec::default(),
            checks: Vec::new(),
            bots: Vec::new(),
            faults: Vec::new(),
            base: FileTree::new(),
            head: FileTree::new(),
        }
    }

    /// Loads and validates a scenario directory: `scenario.toml`, `base/`, `head/`.
    pub fn load(dir: impl AsRef<Path>) -> Result<Scenario, ScenarioError> {
        let dir = dir.as_ref();
        let toml_path = dir.join("scenario.toml");
        let text = std::fs::read_to_string(&toml_path).map_err(|source| ScenarioError::Read {
            path: toml_path.clone(),
            source,
        })?;
        let mut scenario = Self::parse_toml(&text, &toml_path)?;
        scenario.base = read_tree(&dir.join("base"))?;
        scenario.head = read_tree(&dir.join("head"))?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// Parses the text of a `scenario.toml` (no file trees) and validates it.
    pub fn from_toml(text: &str) -> Result<Scenario, ScenarioError> {
        let scenario = Self::parse_toml(text, Path::new("scenario.toml"))?;
        scenario.validate()?;
        Ok(scenario)
    }

    fn parse_toml(text: &str, path: &Path) -> Result<Scenario, ScenarioError> {
        toml::from_str(text).map_err(|error| ScenarioError::Parse {
            path: path.to_owned(),
            error,
        })
    }

    /// This scenario served as GitLab: `forge` becomes `gitlab`, and each
    /// ```` ```suggestion ```` block of a thread comment or a bot's body
    /// takes GitLab's offsets, so that it replaces the same lines: on one
    /// line ```` ```suggestion:-0+0 ````, on lines `start..=line`
    /// ```` ```suggestion:-N+0 ```` with `N = line - start` (GitLab anchors a
    /// suggestion at the thread's last line). Everything else is unchanged.
    pub fn into_gitlab(mut self) -> Result<Scenario, ScenarioError> {
        self.forge = EmulatedForge::GitLab;
        for thread in &mut self.threads {
            let above = match (thread.start_line, thread.line) {
                (Some(start), Some(line)) => line.saturating_sub(start),
                _ => 0,
            };
            for comment in &mut thread.comments {
                comment.body = gitlab_suggestions(&comment.body, above);
            }
        }
        for bot in &mut self.bots {
            bot.body = gitlab_suggestions(&bot.body, 0);
        }
        self.validate()?;
        Ok(self)
    }

    /// The user with this login.
    pub fn user(&self, login: &str) -> Option<&UserSpec> {
        self.users.iter().find(|u| u.login == login)
    }

    /// Checks that the scenario is consistent: unique logins and tokens, known
    /// authors, valid names, branches, line ranges and file paths.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        let invalid = |msg: String| Err(ScenarioError::Invalid(msg));
        if self.users.is_empty() {
            return invalid("at least one [[users]] entry is needed".into());
        }
        let mut logins = BTreeSet::new();
        let mut tokens = BTreeSet::new();
        for (i, user) in self.users.iter().enumerate() {
            if !is_safe_name(&user.login) {
                return invalid(format!("users[{i}]: invalid login `{}`", user.login));
            }
            if !logins.insert(user.login.as_str()) {
                return invalid(format!("users[{i}]: duplicate login `{}`", user.login));
            }
            if user.token.trim().is_empty() || user.token.chars().any(char::is_whitespace) {
                return invalid(format!(
                    "users[{i}] (`{}`): the token must be non-empty, without spaces",
                    user.login
                ));
            }
            if !tokens.insert(user.token.as_str()) {
                // Do not echo the token itself.
                return invalid(format!(
                    "users[{i}] (`{}`): token already used by another user",
                    user.login
                ));
            }
        }
        let known = |what: String, login: &str| -> Result<(), ScenarioError> {
            if logins.contains(login) {
                Ok(())
            } else {
                Err(ScenarioError::Invalid(format!(
                    "{what}: unknown author `{login}` (not in [[users]])"
                )))
            }
        };

        let repo = &self.repository;
        // GitLab projects live in nested groups: `group/sub` is one owner.
        let owner_ok = match self.forge {
            EmulatedForge::GitHub => is_safe_name(&repo.owner),
            EmulatedForge::GitLab => repo
                .owner
                .split('/')
                .all(|group| is_safe_name(group) && !group.ends_with(".git")),
        };
        if !owner_ok || !is_safe_name(&repo.name) {
            return invalid(format!(
                "repository: invalid owner/name `{}/{}` (letters, digits, `-`, `_`, `.`{})",
                repo.owner,
                repo.name,
                if self.forge == EmulatedForge::GitLab {
                    "; `/` between groups"
                } else {
                    ""
                }
            ));
        }
        if repo.name.ends_with(".git") {
            return invalid("repository: the name must not end with `.git`".into());
        }
        for (what, branch) in [
            ("repository.default_branch", &repo.default_branch),
            ("pull_request.head", &self.pull_request.head),
            ("pull_request.base", &self.pull_request.base),
        ] {
            if !is_valid_branch(branch) {
                return invalid(format!("{what}: invalid branch name `{branch}`"));
            }
        }

        let pr = &self.pull_request;
        if pr.number == 0 || pr.number > i32::MAX as u64 {
            return invalid(format!(
                "pull_request.number: {} is out of range",
                pr.number
            ));
        }
        if pr.head == pr.base {
            return invalid(format!(
                "pull_request: head and base are the same branch `{}`",
                pr.head
            ));
        }
        known("pull_request".into(), &pr.author)?;

        let mut review_names = BTreeMap::new();
        for (i, review) in self.reviews.iter().enumerate() {
            known(format!("reviews[{i}]"), &review.author)?;
            if let Some(name) = &review.name {
                if review_names.insert(name.as_str(), review).is_some() {
                    return invalid(format!("reviews[{i}]: duplicate name `{name}`"));
                }
            }
        }

        for (i, thread) in self.threads.iter().enumerate() {
            let what = format!("threads[{i}] ({})", thread.path);
            check_path(&thread.path)
                .map_err(|reason| ScenarioError::Invalid(format!("{what}: path {reason}")))?;
            match (thread.start_line, thread.line) {
                (_, Some(0)) | (Some(0), _) => {
                    return invalid(format!("{what}: lines start at 1"));
                }
                (Some(_), None) => {
                    return invalid(format!("{what}: start_line needs line"));
                }
                (Some(start), Some(line)) if start > line => {
                    return invalid(format!("{what}: start_line {start} is after line {line}"));
                }
                _ => {}
            }
            if thread.comments.is_empty() {
                return invalid(format!("{what}: a thread needs at least one comment"));
            }
            for (j, comment) in thread.comments.iter().enumerate() {
                let what = format!("{what} comments[{j}]");
                known(what.clone(), &comment.author)?;
                if let Some(name) = &comment.review {
                    let Some(review) = review_names.get(name.as_str()) else {
                        return invalid(format!("{what}: unknown review `{name}`"));
                    };
                    if review.author != comment.author {
                        return invalid(format!(
                            "{what}: review `{name}` is by `{}`, the comment by `{}`",
                            review.author, comment.author
                        ));
                    }
                }
            }
        }
        for (i, comment) in self.comments.iter().enumerate() {
            known(format!("comments[{i}]"), &comment.author)?;
        }
        for (label, tree) in [("base", &self.base), ("head", &self.head)] {
            for path in tree.keys() {
                check_path(path).map_err(|reason| {
                    ScenarioError::Invalid(format!("{label} file `{path}`: path {reason}"))
                })?;
            }
        }
        for (i, label) in pr.labels.iter().enumerate() {
            if label.trim().is_empty() {
                return invalid(format!("pull_request.labels[{i}]: empty label"));
            }
        }
        self.validate_automation()
    }

    /// Checks `[ci]`, `[[checks]]`, `[[bots]]` and `[[faults]]`.
    fn validate_automation(&self) -> Result<(), ScenarioError> {
        let invalid = |msg: String| Err(ScenarioError::Invalid(msg));
        if self.ci.workflow.trim().is_empty() {
            return invalid("ci.workflow: empty name".into());
        }
        let mut names = BTreeSet::new();
        for (i, check) in self.checks.iter().enumerate() {
            if check.name.trim().is_empty() {
                return invalid(format!("checks[{i}]: empty name"));
            }
            if !names.insert(check.name.as_str()) {
                return invalid(format!("checks[{i}]: duplicate name `{}`", check.name));
            }
            if check.command.trim().is_empty() {
                return invalid(format!("checks[{i}] (`{}`): empty command", check.name));
            }
            if check.timeout_secs == 0 {
                return invalid(format!(
                    "checks[{i}] (`{}`): timeout_secs must be at least 1",
                    check.name
                ));
            }
        }
        for (i, bot) in self.bots.iter().enumerate() {
            match self.user(&bot.login) {
                None => {
                    return invalid(format!(
                        "bots[{i}]: unknown login `{}` (not in [[users]])",
                        bot.login
                    ))
                }
                Some(user) if user.kind != UserKind::Bot => {
                    return invalid(format!(
                        "bots[{i}]: `{}` is not a user of kind \"bot\"",
                        bot.login
                    ))
                }
                Some(_) => {}
            }
            if let Err(err) = regex::Regex::new(&bot.pattern) {
                return invalid(format!("bots[{i}] (`{}`): bad pattern: {err}", bot.login));
            }
            if bot.body.trim().is_empty() {
                return invalid(format!("bots[{i}] (`{}`): empty body", bot.login));
            }
            if bot.rate_limit_after.is_some()
                && !matches!(bot.profile, BotProfile::Coderabbit | BotProfile::Copilot)
            {
                return invalid(format!(
                    "bots[{i}] (`{}`): rate_limit_after needs profile \"coderabbit\" or \"copilot\"",
                    bot.login
                ));
            }
            if bot.trigger.as_deref().is_some_and(|t| t.trim().is_empty()) {
                return invalid(format!("bots[{i}] (`{}`): empty trigger", bot.login));
            }
            if let Some(glob) = &bot.path {
                if glob.trim().is_empty() {
                    return invalid(format!("bots[{i}] (`{}`): empty path glob", bot.login));
                }
            }
        }
        for (i, fault) in self.faults.iter().enumerate() {
            fault
                .validate()
                .map_err(|msg| ScenarioError::Invalid(format!("faults[{i}]: {msg}")))?;
        }
        Ok(())
    }
}

/// Rewrites every ```` ```suggestion ```` fence opening of `body` (a
/// CommonMark fence: at most three spaces of indentation, three or more
/// backticks or tildes) into GitLab's ```` ```suggestion:-ABOVE+0 ````.
fn gitlab_suggestions(body: &str, above: u32) -> String {
    body.split_inclusive('\n')
        .map(|line| {
            let (text, ending) = match line.strip_suffix('\n') {
                Some(text) => (text, "\n"),
                None => (line, ""),
            };
            let indent = text.len() - text.trim_start_matches(' ').len();
            let rest = &text[indent..];
            let fence_len = rest.len() - rest.trim_start_matches(['`', '~']).len();
            let fence = &rest[..fence_len];
            let uniform = fence.chars().all(|c| c == '`') || fence.chars().all(|c| c == '~');
            if indent <= 3 && fence_len >= 3 && uniform && rest[fence_len..].trim() == "suggestion"
            {
                format!("{}{fence}suggestion:-{above}+0{ending}", &text[..indent])
            } else {
                line.to_owned()
            }
        })
        .collect()
}

/// Logins, owners and repository names: they end up in URLs and file paths.
fn is_safe_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A conservative subset of `git check-ref-format --branch`.
fn is_valid_branch(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && !name.starts_with('/')
        && !name.ends_with('/')
        && !name.ends_with(".lock")
        && !name.contains("..")
        && !name.contains("//")
        && !name.contains("@{")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

/// A relative, normalized path that git can store.
pub(crate) fn check_path(path: &str) -> Result<(), &'static str> {
    if path.is_empty() {
        return Err("is empty");
    }
    if path.contains('\n') || path.contains('\0') || path.starts_with('"') {
        return Err("contains a newline, a NUL or a leading quote");
    }
    for component in path.split('/') {
        match component {
            "" => return Err("has an empty component (leading, trailing or double `/`)"),
            "." | ".." => return Err("has a `.` or `..` component"),
            ".git" => return Err("has a `.git` component"),
            _ => {}
        }
    }
    Ok(())
}

/// Reads every regular file under `root` into a tree.
fn read_tree(root: &Path) -> Result<FileTree, ScenarioError> {
    let mut tree = FileTree::new();
    if !root.is_dir() {
        return Err(ScenarioError::Read {
            path: root.to_owned(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "directory not found"),
        });
    }
    for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
        let entry = entry.map_err(|err| {
            let path = err.path().unwrap_or(root).to_owned();
            ScenarioError::Read {
                path,
                source: err.into(),
            }
        })?;
        let path = entry.path();
        let file_type = entry.file_type();
        if file_type.is_dir() {
            continue;
        }
        if !file_type.is_file() {
            return Err(ScenarioError::UnsupportedFile {
                path: path.to_owned(),
                reason: "only regular files are supported (no symlinks)",
            });
        }
        let relative = path
            .strip_prefix(root)
            .ok()
            .and_then(|p| {
                p.components()
                    .map(|c| c.as_os_str().to_str())
                    .collect::<Option<Vec<_>>>()
            })
            .map(|parts| parts.join("/"))
            .ok_or_else(|| ScenarioError::UnsupportedFile {
                path: path.to_owned(),
                reason: "the path is not valid UTF-8",
            })?;
        let contents = std::fs::read(path).map_err(|source| ScenarioError::Read {
            path: path.to_owned(),
            source,
        })?;
        let metadata = entry.metadata().map_err(|err| ScenarioError::Read {
            path: path.to_owned(),
            source: err.into(),
        })?;
        tree.insert(
            relative,
            FileSpec {
                contents,
                executable: is_executable(&metadata),
            },
        );
    }
    Ok(tree)
}

#[cfg(unix)]
fn is_executable(metadata: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    metadata.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_metadata: &std::fs::Metadata) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
[[users]]
login = "alice"
token = "t-alice"

[repository]
owner = "acme"
name = "widgets"

[pull_request]
number = 1
title = "Add widgets"
author = "alice"
head = "feature"
base = "main"
"#;

    #[test]
    fn minimal_scenario_parses_with_defaults() {
        let s = Scenario::from_toml(MINIMAL).unwrap();
        assert_eq!(s.repository.default_branch, "main");
        assert_eq!(s.users[0].kind, UserKind::User);
        assert_eq!(s.users[0].permission, Permission::Write);
        assert_eq!(s.pull_request.state, PullRequestStatus::Open);
        assert!(s.threads.is_empty());
    }

    #[test]
    fn unknown_key_is_an_error_naming_the_key() {
        let text = MINIMAL.replace("title =", "colour = \"red\"\ntitle =");
        let err = Scenario::from_toml(&text).unwrap_err().to_string();
        assert!(err.contains("colour"), "{err}");
    }

    #[test]
    fn unknown_key_in_a_nested_table_is_an_error() {
        let text = format!(
            "{MINIMAL}\n[[threads]]\npath = \"a.rs\"\nline = 1\n[[threads.comments]]\nauthor = \"alice\"\nbody = \"x\"\nmood = \"grumpy\"\n"
        );
        let err = Scenario::from_toml(&text).unwrap_err().to_string();
        assert!(err.contains("mood"), "{err}");
    }

    #[test]
    fn unknown_author_is_refused() {
        let text = format!("{MINIMAL}\n[[comments]]\nauthor = \"mallory\"\nbody = \"hi\"\n");
        let err = Scenario::from_toml(&text).unwrap_err().to_string();
        assert!(err.contains("mallory"), "{err}");
    }

    #[test]
    fn review_reference_must_match_author() {
        let text = format!(
            "{MINIMAL}\n[[users]]\nlogin = \"bob\"\ntoken = \"t-bob\"\n\
             [[reviews]]\nname = \"r\"\nauthor = \"bob\"\nstate = \"pending\"\n\
             [[threads]]\npath = \"a.rs\"\nline = 1\n[[threads.comments]]\nauthor = \"alice\"\nbody = \"x\"\nreview = \"r\"\n"
        );
        let err = Scenario::from_toml(&text).unwrap_err().to_string();
        assert!(err.contains("review `r` is by `bob`"), "{err}");
    }

    #[test]
    fn duplicate_tokens_are_refused_without_echoing_them() {
        let text = format!("{MINIMAL}\n[[users]]\nlogin = \"bob\"\ntoken = \"t-alice\"\n");
        let err = Scenario::from_toml(&text).unwrap_err().to_string();
        assert!(err.contains("token already used"), "{err}");
        assert!(!err.contains("t-alice"), "{err}");
    }

    #[test]
    fn bad_line_ranges_are_refused() {
        let text = format!(
            "{MINIMAL}\n[[threads]]\npath = \"a.rs\"\nline = 3\nstart_line = 5\n[[threads.comments]]\nauthor = \"alice\"\nbody = \"x\"\n"
        );
        let err = Scenario::from_toml(&text).unwrap_err().to_string();
        assert!(err.contains("start_line 5 is after line 3"), "{err}");
    }

    #[test]
    fn unsafe_paths_are_refused() {
        for bad in ["", "/abs", "a/../b", "a//b", ".git/config", "a/"] {
            assert!(check_path(bad).is_err(), "{bad:?} accepted");
        }
        for good in ["a", "src/lib.rs", ".github/workflows/ci.yml", "a b/c"] {
            assert!(check_path(good).is_ok(), "{good:?} refused");
        }
    }

    #[test]
    fn uppercase_enum_aliases_are_accepted() {
        let text = format!(
            "{MINIMAL}\n[[reviews]]\nauthor = \"alice\"\nstate = \"CHANGES_REQUESTED\"\n\
             [[threads]]\npath = \"a.rs\"\nline = 1\nside = \"LEFT\"\n[[threads.comments]]\nauthor = \"alice\"\nbody = \"x\"\n"
        );
        let s = Scenario::from_toml(&text).unwrap();
        assert_eq!(s.reviews[0].state, ReviewStateSpec::ChangesRequested);
        assert_eq!(s.threads[0].side, Side::Left);
    }

    #[test]
    fn suggestion_fences_get_gitlab_offsets() {
        assert_eq!(
            gitlab_suggestions("Fix:\n\n```suggestion\n    x\n```", 2),
            "Fix:\n\n```suggestion:-2+0\n    x\n```"
        );
        assert_eq!(
            gitlab_suggestions("```suggestion\n```", 0),
            "```suggestion:-0+0\n```"
        );
        assert_eq!(
            gitlab_suggestions("  ~~~~suggestion \nx\n~~~~", 0),
            "  ~~~~suggestion:-0+0\nx\n~~~~"
        );
        // Other fences, the word elsewhere, and GitLab's form stay.
        for text in [
            "```sh\nsuggestion\n```\nno ```suggestion here",
            "```suggestion:-1+0\nx\n```",
            "    ```suggestion\nindented code\n```",
        ] {
            assert_eq!(gitlab_suggestions(text, 1), text);
        }
    }

    #[test]
    fn a_gitlab_scenario_takes_nested_groups() {
        let text = format!(
            "forge = \"gitlab\"\n{}",
            MINIMAL.replace("\"acme\"", "\"acme/tools\"")
        );
        let s = Scenario::from_toml(&text).unwrap();
        assert_eq!(s.forge, EmulatedForge::GitLab);
        assert_eq!(s.repository.owner, "acme/tools");
        // GitHub has no nested owners; a group named `x.git` would confuse git.
        let github = MINIMAL.replace("\"acme\"", "\"acme/tools\"");
        assert!(Scenario::from_toml(&github).is_err());
        let bad = text.replace("acme/tools", "acme/x.git");
        assert!(Scenario::from_toml(&bad).is_err());
    }

    #[test]
    fn debug_output_hides_tokens() {
        let user = UserSpec::new("alice", "sekrit", UserKind::User, Permission::Admin);
        assert!(!format!("{user:?}").contains("sekrit"));
    }

    #[test]
    fn load_reads_trees_and_executable_bits() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("scenario.toml"), MINIMAL).unwrap();
        std::fs::create_dir_all(dir.path().join("base/src")).unwrap();
        std::fs::create_dir_all(dir.path().join("head/src")).unwrap();
        std::fs::write(dir.path().join("base/src/a.txt"), "one\n").unwrap();
        std::fs::write(dir.path().join("head/src/a.txt"), "two\n").unwrap();
        std::fs::write(dir.path().join("head/run.sh"), "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let p = dir.path().join("head/run.sh");
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let s = Scenario::load(dir.path()).unwrap();
        assert_eq!(s.base["src/a.txt"].contents, b"one\n");
        assert_eq!(s.head.len(), 2);
        #[cfg(unix)]
        assert!(s.head["run.sh"].executable);
        assert!(!s.head["src/a.txt"].executable);
    }

    #[test]
    fn load_without_head_directory_names_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("scenario.toml"), MINIMAL).unwrap();
        std::fs::create_dir_all(dir.path().join("base")).unwrap();
        let err = Scenario::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("head"), "{err}");
    }
}
