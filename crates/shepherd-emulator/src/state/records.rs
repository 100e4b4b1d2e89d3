//! The records the state is made of: users, the repository, pull requests
//! with their threads, comments, reviews, labels and diff versions, and what
//! a write answers; and why a write is refused.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::Serialize;

use crate::git::{self, Hunk};
use crate::hunk::DiffHunk;
use crate::ids::{self, NodeKind};
use crate::scenario::{Permission, PullRequestStatus, ReviewStateSpec, Side, UserKind, Visibility};

/// Why a write was refused; handlers turn it into GitHub's REST or GraphQL
/// error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum WriteError {
    /// The object does not exist or the viewer may not see it (404).
    #[error("{0}")]
    NotFound(String),
    /// The viewer may see it but not change it (403).
    #[error("{0}")]
    Forbidden(String),
    /// The request is well-formed but cannot be applied (422).
    #[error("{0}")]
    Unprocessable(String),
}

/// A user account.
#[derive(Clone, Serialize)]
pub(crate) struct UserRecord {
    pub(crate) database_id: u64,
    pub(crate) id: String,
    pub(crate) login: String,
    /// Fake emulator token; printed at start and in the state dump.
    pub(crate) token: String,
    pub(crate) kind: UserKind,
    pub(crate) permission: Permission,
    /// A member of the organisation owning the repository.
    pub(crate) member: bool,
}

/// The repository.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RepositoryRecord {
    pub(crate) database_id: u64,
    pub(crate) id: String,
    pub(crate) owner: String,
    pub(crate) name: String,
    pub(crate) default_branch: String,
    pub(crate) html_url: String,
    pub(crate) git_url: String,
    /// The bare repository on disk.
    pub(crate) git_dir: PathBuf,
    /// Private (the default) or public.
    pub(crate) visibility: Visibility,
}

impl RepositoryRecord {
    pub(crate) fn full_name(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }
}

/// A pull request with everything attached to it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PullRequestRecord {
    pub(crate) database_id: u64,
    pub(crate) id: String,
    pub(crate) number: u64,
    pub(crate) title: String,
    pub(crate) body: String,
    pub(crate) author: String,
    pub(crate) status: PullRequestStatus,
    pub(crate) draft: bool,
    pub(crate) fork: bool,
    pub(crate) head_ref: String,
    pub(crate) head_sha: String,
    pub(crate) base_ref: String,
    pub(crate) base_sha: String,
    pub(crate) html_url: String,
    pub(crate) created_at: String,
    pub(crate) updated_at: String,
    pub(crate) closed_at: Option<String>,
    pub(crate) threads: Vec<ThreadRecord>,
    pub(crate) issue_comments: Vec<IssueCommentRecord>,
    pub(crate) reviews: Vec<ReviewRecord>,
    /// GitLab's system notes ("added 1 commit", "resolved all threads");
    /// only a GitLab scenario makes them.
    pub(crate) system_notes: Vec<SystemNoteRecord>,
    /// Label names, in the order they were added.
    pub(crate) labels: Vec<String>,
    /// Who added or removed which label, when, oldest first (GitHub's
    /// `labeled`/`unlabeled` issue events, GitLab's resource label events).
    pub(crate) label_events: Vec<LabelEventRecord>,
    /// The PR's commits (`base..head`), oldest first.
    pub(crate) commits: Vec<String>,
    /// The diff versions GitLab records for a merge request: one at its
    /// creation and one for each push that moved its head, oldest first.
    pub(crate) versions: Vec<DiffVersionRecord>,
    /// Logins asked to review and not done yet (GitHub's requested
    /// reviewers, GitLab's `reviewers`), in the order they were asked.
    pub(crate) requested_reviewers: Vec<String>,
    /// GitLab: people taken off the merge request's reviewers (a
    /// `reviewer_ids` without them) whose submitted reviews would otherwise
    /// keep them listed (see `PullRequestRecord::listed_reviewers`).
    pub(crate) unlisted_reviewers: Vec<String>,
    /// The PR's diff (`base..head`), for `diffHunk`s of new threads.
    #[serde(skip)]
    pub(crate) diff: BTreeMap<String, Vec<Hunk>>,
}

impl PullRequestRecord {
    pub(crate) fn review(&self, database_id: u64) -> Option<&ReviewRecord> {
        position_by_id(&self.reviews, database_id, |r| r.database_id).map(|i| &self.reviews[i])
    }

    /// Whether `login` may see a comment of review `review_id`: a pending
    /// review is its author's alone.
    pub(crate) fn review_visible_to(&self, review_id: u64, login: &str) -> bool {
        self.review(review_id).is_none_or(|r| r.visible_to(login))
    }

    /// The pending review of `login`, if any (GitHub allows one per PR).
    pub(crate) fn pending_review_of(&self, login: &str) -> Option<u64> {
        self.reviews
            .iter()
            .find(|r| r.state == ReviewStateSpec::Pending && r.author == login)
            .map(|r| r.database_id)
    }

    /// `login`'s approval, as GitLab counts approvals: their latest review
    /// that approves, requests changes or was dismissed, if it approves.
    pub(crate) fn approval_of(&self, login: &str) -> Option<&ReviewRecord> {
        self.reviews
            .iter()
            .rev()
            .filter(|r| r.author == login)
            .find(|r| {
                matches!(
                    r.state,
                    ReviewStateSpec::Approved
                        | ReviewStateSpec::ChangesRequested
                        | ReviewStateSpec::Dismissed
                )
            })
            .filter(|r| r.state == ReviewStateSpec::Approved)
    }

    /// Every standing approval, oldest first: one per approver.
    pub(crate) fn approvals(&self) -> Vec<&ReviewRecord> {
        let mut seen = BTreeSet::new();
        let mut out: Vec<&ReviewRecord> = self
            .reviews
            .iter()
            .filter(|r| seen.insert(r.author.as_str()))
            .filter_map(|r| self.approval_of(&r.author))
            .collect();
        out.sort_by_key(|r| r.database_id);
        out
    }

    /// Whether a thread has a submitted comment (GitLab shows nothing else:
    /// comments of a pending review are their author's draft notes).
    pub(crate) fn thread_published(&self, thread: &ThreadRecord) -> bool {
        thread
            .comments
            .iter()
            .any(|c| self.review_published(c.review_id))
    }

    /// When a comment became a note others see, as GitLab dates it: a
    /// draft note becomes a note when its review is published, and the
    /// note is created then (GitLab's `DraftNotes::PublishService` creates
    /// the notes at publication), so a comment of a review kept pending is
    /// dated by the review's submission. (GitHub keeps the draft-time
    /// `createdAt` on the comment and dates the review by `submittedAt`.)
    pub(crate) fn note_time<'a>(&'a self, comment: &'a ReviewCommentRecord) -> &'a str {
        match self
            .review(comment.review_id)
            .and_then(|r| r.submitted_at.as_deref())
        {
            Some(submitted) if submitted > comment.created_at.as_str() => submitted,
            _ => &comment.created_at,
        }
    }

    /// Whether review `review_id` is submitted (not pending).
    pub(crate) fn review_published(&self, review_id: u64) -> bool {
        self.review(review_id)
            .is_none_or(|r| r.state != ReviewStateSpec::Pending)
    }

    /// Whether `login` may see the thread: some comment of it is visible.
    pub(crate) fn thread_visible_to(&self, thread: &ThreadRecord, login: &str) -> bool {
        thread
            .comments
            .iter()
            .any(|c| self.review_visible_to(c.review_id, login))
    }

    /// The thread and comment indexes of review comment `database_id`.
    pub(crate) fn find_comment(&self, database_id: u64) -> Option<(usize, usize)> {
        self.threads.iter().enumerate().find_map(|(t, thread)| {
            let c = thread
                .comments
                .iter()
                .position(|c| c.database_id == database_id)?;
            Some((t, c))
        })
    }

    /// GitHub's `diffHunk` for a new comment at `line` on `side` of `path`,
    /// if the line is in the PR's diff.
    pub(crate) fn hunk_for(&self, path: &str, line: u32, side: Side) -> Option<String> {
        let hunks = self.diff.get(path)?;
        git::diff_hunk(hunks, line, side == Side::Left)
    }
}

/// A review thread.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ThreadRecord {
    pub(crate) database_id: u64,
    pub(crate) id: String,
    /// GitLab's id of the discussion (40 hex digits).
    pub(crate) discussion_id: String,
    pub(crate) path: String,
    /// The line on the original commit; `None` for a file-level thread.
    pub(crate) original_line: Option<u32>,
    pub(crate) original_start_line: Option<u32>,
    /// The line on the PR's current head (moved by pushes that insert or
    /// remove lines above it).
    pub(crate) current_line: Option<u32>,
    pub(crate) current_start_line: Option<u32>,
    /// The commit the current position refers to.
    pub(crate) commit: String,
    pub(crate) side: Side,
    pub(crate) outdated: bool,
    pub(crate) resolved: bool,
    pub(crate) resolved_by: Option<String>,
    pub(crate) comments: Vec<ReviewCommentRecord>,
}

impl ThreadRecord {
    /// Whether this is a GitLab discussion of the merge request itself,
    /// started without a position (no file, no line).
    pub(crate) fn is_overview(&self) -> bool {
        self.path.is_empty()
    }

    /// The current line: GitHub answers `null` once the thread is outdated.
    pub(crate) fn line(&self) -> Option<u32> {
        if self.outdated {
            None
        } else {
            self.current_line
        }
    }

    /// The current start line (multi-line threads), `null` when outdated.
    pub(crate) fn start_line(&self) -> Option<u32> {
        if self.outdated {
            None
        } else {
            self.current_start_line
        }
    }
}

/// A comment in a review thread.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ReviewCommentRecord {
    pub(crate) database_id: u64,
    pub(crate) id: String,
    pub(crate) author: String,
    pub(crate) body: String,
    pub(crate) created_at: String,
    /// The review this comment was posted in.
    pub(crate) review_id: u64,
    /// The first comment of the thread, for replies.
    pub(crate) reply_to: Option<u64>,
    /// Shared by the thread's comments.
    pub(crate) diff_hunk: DiffHunk,
    /// The commit the comment was made on.
    pub(crate) original_commit: String,
}

/// One version of a merge request's diff (GitLab's merge request diff):
/// its head and base when it was recorded.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct DiffVersionRecord {
    pub(crate) database_id: u64,
    pub(crate) head_sha: String,
    pub(crate) base_sha: String,
    pub(crate) created_at: String,
    /// How many files its diff changes.
    pub(crate) files: usize,
}

/// A top-level PR comment (GitHub issue comment).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct IssueCommentRecord {
    pub(crate) database_id: u64,
    pub(crate) id: String,
    /// GitLab's id of the note's (individual) discussion.
    pub(crate) discussion_id: String,
    pub(crate) author: String,
    pub(crate) body: String,
    pub(crate) created_at: String,
    /// When its body last changed: `created_at` until it is edited (a
    /// walkthrough comment edited in place keeps its `created_at`).
    pub(crate) updated_at: String,
}

impl IssueCommentRecord {
    /// A new comment, never edited.
    pub(crate) fn new(database_id: u64, author: &str, body: &str, at: String) -> Self {
        IssueCommentRecord {
            database_id,
            id: ids::node_id(NodeKind::IssueComment, database_id),
            discussion_id: ids::discussion_id(database_id),
            author: author.to_owned(),
            body: body.to_owned(),
            updated_at: at.clone(),
            created_at: at,
        }
    }
}

/// A GitLab system note of a merge request.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SystemNoteRecord {
    pub(crate) database_id: u64,
    /// Its (individual) discussion's id.
    pub(crate) discussion_id: String,
    pub(crate) author: String,
    pub(crate) body: String,
    pub(crate) created_at: String,
    /// Recorded by a resolve of a discussion that was resolved already
    /// (the duplicate GitLab posts; Shepherd must never cause one).
    pub(crate) duplicate: bool,
}

/// A review.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ReviewRecord {
    pub(crate) database_id: u64,
    pub(crate) id: String,
    pub(crate) author: String,
    pub(crate) state: ReviewStateSpec,
    pub(crate) body: String,
    pub(crate) created_at: String,
    /// `None` while pending.
    pub(crate) submitted_at: Option<String>,
    pub(crate) commit: String,
}

impl ReviewRecord {
    /// A submitted COMMENTED review with an empty body, as GitHub makes one
    /// for a comment posted outside a review.
    pub(crate) fn commented(database_id: u64, author: &str, commit: String, at: String) -> Self {
        ReviewRecord {
            database_id,
            id: ids::node_id(NodeKind::Review, database_id),
            author: author.to_owned(),
            state: ReviewStateSpec::Commented,
            body: String::new(),
            submitted_at: Some(at.clone()),
            created_at: at,
            commit,
        }
    }

    /// Whether `login` may see this review: a pending review is its
    /// author's alone.
    pub(crate) fn visible_to(&self, login: &str) -> bool {
        self.state != ReviewStateSpec::Pending || self.author == login
    }
}

/// The index of the item whose database id is `id` in `items`, which the
/// state keeps in ascending id order (ids are handed out in order): a binary
/// search, with a linear scan should the order ever not hold.
pub(crate) fn position_by_id<T>(items: &[T], id: u64, key: impl Fn(&T) -> u64) -> Option<usize> {
    match items.binary_search_by_key(&id, &key) {
        Ok(index) => Some(index),
        Err(_) => items.iter().position(|item| key(item) == id),
    }
}

/// A repository label.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct LabelRecord {
    pub(crate) database_id: u64,
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) color: String,
    pub(crate) description: Option<String>,
}

/// A label added to or removed from a pull request: a change of its
/// labels, never a request that changed nothing (GitHub records no event
/// for a label the issue already has).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct LabelEventRecord {
    pub(crate) database_id: u64,
    /// The actor's login.
    pub(crate) actor: String,
    /// The label's name, as the repository spells it.
    pub(crate) label: String,
    /// Added, or removed.
    pub(crate) added: bool,
    pub(crate) created_at: String,
}

/// A comment a write created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NewComment {
    pub(crate) pr_number: u64,
    pub(crate) thread_id: u64,
    pub(crate) comment_id: u64,
    pub(crate) review_id: u64,
}

/// A new thread of a review: where, what, and its `diffHunk`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NewThread {
    pub(crate) path: String,
    pub(crate) line: Option<u32>,
    pub(crate) start_line: Option<u32>,
    pub(crate) side: Side,
    pub(crate) body: String,
    pub(crate) diff_hunk: String,
}

/// A review a write created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CreatedReview {
    pub(crate) review_id: u64,
    /// `(thread, root comment)` database ids, in the order given.
    pub(crate) threads: Vec<(u64, u64)>,
}

/// A `PATCH` of a pull request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PullRequestEdit {
    pub(crate) title: Option<String>,
    pub(crate) body: Option<String>,
    pub(crate) state: Option<PullRequestStatus>,
}

/// What a push did to one pull request's threads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct PushOutcome {
    /// Threads that became outdated.
    pub(crate) outdated: Vec<u64>,
    /// Threads whose line moved.
    pub(crate) moved: Vec<u64>,
    /// Commits of the pull request that were not in it before.
    pub(crate) new_commits: usize,
}

/// A comment a reviewer bot posted, so it never posts it twice.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub(crate) struct BotPost {
    pub(crate) login: String,
    pub(crate) path: String,
    pub(crate) line: u32,
    pub(crate) body: String,
}

/// What a profiled reviewer bot (CodeRabbit, Codex, Copilot, ask-only) has
/// done on one pull request: the heads it reviewed, how many reviews it
/// made, its walkthrough comment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct BotProgress {
    pub(crate) login: String,
    pub(crate) number: u64,
    /// Heads it reviewed (CodeRabbit reviews incrementally: never twice).
    pub(crate) reviewed: Vec<String>,
    /// Heads whose review it refused (rate limit, quota).
    pub(crate) declined: Vec<String>,
    /// Heads it is reviewing now (so a second ask does not start a second
    /// review of the same head).
    pub(crate) running: Vec<String>,
    /// Reviews made since its last refusal, against its rate limit.
    pub(crate) reviews: u32,
    /// Its walkthrough comment (CodeRabbit), edited in place.
    pub(crate) walkthrough: Option<u64>,
}
