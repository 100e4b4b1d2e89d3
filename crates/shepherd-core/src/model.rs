//! The forge-neutral view of a pull request and its review feedback.
//!
//! Both forge clients translate their API answers into these types; everything
//! downstream (classification, triage, the gate, reports) reads only these.

use serde::{Deserialize, Serialize};

/// Which kind of forge hosts the repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ForgeKind {
    /// github.com or a GitHub Enterprise Server host.
    GitHub,
    /// gitlab.com or a self-managed GitLab host.
    GitLab,
}

impl ForgeKind {
    /// The word users type for this forge (`github`, `gitlab`).
    pub fn as_str(self) -> &'static str {
        self.spec().name
    }

    /// What this forge calls a change request ("pull request", "merge request").
    pub fn request_noun(self) -> &'static str {
        self.spec().request_noun
    }
}

impl std::fmt::Display for ForgeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A repository on a forge host. `owner` may hold several `/`-separated
/// segments on GitLab (nested groups).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RepoRef {
    /// Host name, lowercased, with a port when one was given (`github.com`, `ghe.corp:8443`).
    pub host: String,
    /// Owner, organisation, or GitLab group path (`group/subgroup`).
    pub owner: String,
    /// Repository or project name.
    pub name: String,
}

impl RepoRef {
    /// `owner/name`, GitLab's "full path".
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }
}

impl std::fmt::Display for RepoRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}/{}", self.host, self.owner, self.name)
    }
}

/// Open, closed or merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PrStatus {
    /// Open for review.
    Open,
    /// Closed without merging.
    Closed,
    /// Merged.
    Merged,
}

/// Whether an author is a person or an app/bot account.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthorKind {
    /// A person (GitHub `User`, and anything that is not a `Bot`).
    User,
    /// An app or bot account (GitHub `__typename == "Bot"`).
    Bot,
}

/// Who wrote a comment. A deleted account (GitHub's "ghost") has no author.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Author {
    /// The login, as the forge spells it.
    pub login: String,
    /// Person or bot.
    pub kind: AuthorKind,
}

/// The state of the review a comment belongs to (GitHub `PullRequestReviewState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReviewState {
    /// A draft review, visible only to its author.
    Pending,
    /// Submitted as a comment.
    Commented,
    /// Submitted as an approval.
    Approved,
    /// Submitted requesting changes.
    ChangesRequested,
    /// Dismissed.
    Dismissed,
}

/// The state of a pull request, as one round sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequest {
    /// The PR/MR number (GitLab `iid`).
    pub number: u64,
    /// The forge's node id (`PR_…`), when it has one.
    pub id: Option<String>,
    /// Title.
    pub title: String,
    /// Web URL.
    pub url: String,
    /// Open, closed or merged.
    pub state: PrStatus,
    /// Whether the PR is a draft.
    pub is_draft: bool,
    /// The head branch name.
    pub head_ref: String,
    /// The head commit.
    pub head_sha: String,
    /// The base branch name.
    pub base_ref: String,
    /// Whether the head lives in another repository (a fork). Shepherd refuses those.
    pub is_cross_repository: bool,
    /// Whether the viewer (the account Shepherd runs as) has a PENDING review
    /// on this PR: replies posted now could vanish into it.
    pub viewer_has_pending_review: bool,
    /// The PR's author.
    pub author: Option<Author>,
}

/// Which side of the diff a thread is anchored to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum DiffSide {
    /// The base side (removed lines).
    Left,
    /// The head side (added and context lines).
    Right,
}

/// Whether a thread is about lines or about a whole file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum SubjectType {
    /// Anchored to a line range.
    Line,
    /// Anchored to the file.
    File,
}

/// One comment of a review thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comment {
    /// The node id (`PRRC_…`) or, on GitLab, the note id.
    pub id: String,
    /// The numeric id REST uses (GitHub `databaseId`, GitLab note id).
    pub database_id: Option<u64>,
    /// The author; `None` for a deleted account.
    pub author: Option<Author>,
    /// The body, untrusted Markdown.
    pub body: String,
    /// Web URL.
    pub url: String,
    /// Creation time as the forge reports it (RFC 3339).
    pub created_at: String,
    /// The diff hunk the comment was made on, when the forge gives one.
    /// Shared: every comment of a thread, and every thread on the same line,
    /// has the same hunk, and a client keeps one copy of each.
    pub diff_hunk: Option<std::sync::Arc<str>>,
    /// The state of the review this comment belongs to, when it has one.
    pub review_state: Option<ReviewState>,
    /// When the review this comment belongs to was submitted (RFC 3339),
    /// when the forge says (GitHub's `pullRequestReview.submittedAt`): a
    /// comment drafted in a pending review keeps its draft-time
    /// `created_at` and is seen by others only from the submission on.
    /// `None` on GitLab, which creates the note when it is published.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_submitted_at: Option<String>,
}

/// An unresolved (or resolved) review thread with all its comments, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewThread {
    /// The thread's node id (`PRRT_…`) or GitLab discussion id.
    pub id: String,
    /// Whether the thread is resolved.
    pub is_resolved: bool,
    /// Whether the lines it is anchored to changed since it was written.
    pub is_outdated: bool,
    /// The file path.
    pub path: String,
    /// The last line of the range on the current diff, if it still exists.
    pub line: Option<u32>,
    /// The first line of a multi-line range on the current diff.
    pub start_line: Option<u32>,
    /// `line` as it was when the thread was written.
    pub original_line: Option<u32>,
    /// `start_line` as it was when the thread was written.
    pub original_start_line: Option<u32>,
    /// Which side of the diff.
    pub diff_side: DiffSide,
    /// Line or file thread.
    pub subject_type: SubjectType,
    /// Whether the viewer may reply.
    pub viewer_can_reply: bool,
    /// Whether the viewer may resolve.
    pub viewer_can_resolve: bool,
    /// Every comment, oldest first.
    pub comments: Vec<Comment>,
}

impl ReviewThread {
    /// The line to show a person: the current line, else the original one.
    pub fn display_line(&self) -> Option<u32> {
        self.line.or(self.original_line)
    }

    /// The comment that opened the thread.
    pub fn root(&self) -> Option<&Comment> {
        self.comments.first()
    }
}

/// What kind of top-level feedback a [`TopLevelComment`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TopLevelKind {
    /// A comment on the PR's conversation (GitHub issue comment, GitLab MR note).
    IssueComment,
    /// The body of a submitted review.
    ReviewBody,
}

/// A comment outside any review thread: it can be replied to, never resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopLevelComment {
    /// The node id (`IC_…`, `PRR_…`) or GitLab note id.
    pub id: String,
    /// The numeric id REST uses.
    pub database_id: Option<u64>,
    /// Issue comment or review body.
    pub kind: TopLevelKind,
    /// The author; `None` for a deleted account.
    pub author: Option<Author>,
    /// The body, untrusted Markdown.
    pub body: String,
    /// Web URL.
    pub url: String,
    /// Creation time (RFC 3339).
    pub created_at: String,
    /// For a review body, the review's state.
    pub review_state: Option<ReviewState>,
}

/// Everything one fetch of a PR returns: what a round starts from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrSnapshot {
    /// Which forge answered.
    pub forge: ForgeKind,
    /// The repository.
    pub repo: RepoRef,
    /// The login of the account the token belongs to.
    pub viewer: String,
    /// The PR itself.
    pub pr: PullRequest,
    /// Unresolved review threads (outdated ones included), in forge order.
    pub threads: Vec<ReviewThread>,
    /// Top-level comments and non-empty review bodies, oldest first.
    pub comments: Vec<TopLevelComment>,
}
