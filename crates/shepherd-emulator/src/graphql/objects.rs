//! The GraphQL objects' handles: what each object holds (a snapshot and an
//! index into it). Below every resolver: each object's fields are resolved
//! in its own file (`pull_request.rs`, `checks.rs`, `query.rs`), which
//! names the others' objects through these handles only.

use std::sync::Arc;

use super::view::{CiView, PrView};
use crate::ci_state::{CheckRunRecord, CheckSuiteRecord, StatusRecord, WorkflowRunRecord};
use crate::git::CommitDetail;
use crate::scenario::Permission;
use crate::state::RepositoryRecord;

/// GitHub Actions' app id.
pub(crate) const ACTIONS_APP_ID: u64 = 15368;

/// Represents a Git commit.
#[derive(Clone)]
pub(crate) struct Commit {
    pub(crate) sha: String,
    pub(crate) ci: Arc<CiView>,
    /// Its message, authors and dates, read from git once when a field
    /// asks (`commit_detail.rs`).
    pub(crate) detail: Arc<tokio::sync::OnceCell<Option<CommitDetail>>>,
}

impl Commit {
    pub(crate) fn new(sha: String, ci: Arc<CiView>) -> Commit {
        Commit {
            sha,
            ci,
            detail: Arc::default(),
        }
    }
}

/// Represents a Git commit part of a pull request.
#[derive(Clone)]
pub(crate) struct PullRequestCommit {
    pub(crate) view: Arc<PrView>,
    pub(crate) sha: String,
}

/// Represents the rollup for both the check runs and status for a commit.
#[derive(Clone)]
pub(crate) struct StatusCheckRollup {
    pub(crate) sha: String,
    pub(crate) ci: Arc<CiView>,
}

/// A check run.
#[derive(Clone)]
pub(crate) struct CheckRun {
    pub(crate) record: CheckRunRecord,
    pub(crate) ci: Arc<CiView>,
}

/// A check suite.
#[derive(Clone)]
pub(crate) struct CheckSuite {
    pub(crate) record: CheckSuiteRecord,
    pub(crate) ci: Arc<CiView>,
}

/// A workflow run.
#[derive(Clone)]
pub(crate) struct WorkflowRun {
    pub(crate) record: WorkflowRunRecord,
    pub(crate) ci: Arc<CiView>,
}

/// A workflow contains meta information about an Actions workflow file.
#[derive(Clone)]
pub(crate) struct Workflow {
    /// The workflow's name (the run's).
    pub(crate) name: String,
}

/// A GitHub App: the emulator's checks all belong to GitHub Actions.
#[derive(Clone)]
pub(crate) struct App;

/// Represents an individual commit status context.
#[derive(Clone)]
pub(crate) struct StatusContext {
    pub(crate) record: StatusRecord,
    pub(crate) ci: Arc<CiView>,
}

/// A repository pull request.
#[derive(Clone)]
pub(crate) struct PullRequest {
    pub(crate) view: Arc<PrView>,
}

/// A threaded list of comments for a given pull request.
#[derive(Clone)]
pub(crate) struct PullRequestReviewThread {
    pub(crate) view: Arc<PrView>,
    pub(crate) index: usize,
}

/// A review comment associated with a given repository pull request.
#[derive(Clone)]
pub(crate) struct PullRequestReviewComment {
    pub(crate) view: Arc<PrView>,
    pub(crate) thread: usize,
    pub(crate) index: usize,
}

/// A review thread in a list of nodes: written straight to JSON when its
/// selection allows (see `pull_request.rs`), else resolved as a
/// [`PullRequestReviewThread`]; the same type in the schema.
pub(crate) struct ThreadNode(pub(crate) PullRequestReviewThread);

impl From<PullRequestReviewThread> for ThreadNode {
    fn from(thread: PullRequestReviewThread) -> ThreadNode {
        ThreadNode(thread)
    }
}

/// A review comment in a list of nodes: written straight to JSON when its
/// selection allows (see `pull_request.rs`), else resolved as a
/// [`PullRequestReviewComment`]; the same type in the schema.
pub(crate) struct CommentNode(pub(crate) PullRequestReviewComment);

impl From<PullRequestReviewComment> for CommentNode {
    fn from(comment: PullRequestReviewComment) -> CommentNode {
        CommentNode(comment)
    }
}

/// A review object for a given pull request.
#[derive(Clone)]
pub(crate) struct PullRequestReview {
    pub(crate) view: Arc<PrView>,
    pub(crate) index: usize,
}

/// Represents a comment on an Issue (or a pull request's conversation).
#[derive(Clone)]
pub(crate) struct IssueComment {
    pub(crate) view: Arc<PrView>,
    pub(crate) index: usize,
}

/// A repository.
#[derive(Clone)]
pub(crate) struct Repository {
    pub(crate) record: RepositoryRecord,
    pub(crate) permission: Permission,
}

/// A git reference (a branch) of the repository.
#[derive(Clone)]
pub(crate) struct Ref {
    pub(crate) name: String,
    pub(crate) repository: Repository,
}
