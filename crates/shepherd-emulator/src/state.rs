//! The emulated forge's state: users, the repository, pull requests with
//! their threads, comments and reviews.
//!
//! One [`State`] lives behind a lock in [`crate::shared::Shared`]; handlers
//! read it and mutate it through the `apply_*` methods, each one effect of
//! GitHub's, applied whole under the write lock. Records carry their
//! database ids and node ids; everything is serializable for
//! `GET /_emulator/state`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use crate::ci_state::CiState;
use crate::git::{self, CreatedRepository, Hunk};
use crate::hunk::DiffHunk;
use crate::ids::{self, NodeKind};
use crate::scenario::{
    EmulatedForge, Permission, PullRequestStatus, ReviewStateSpec, Scenario, Side, UserKind,
    Visibility,
};

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

/// The whole emulated forge.
#[derive(Clone, Serialize)]
pub(crate) struct State {
    /// Which forge's API is served.
    pub(crate) forge: EmulatedForge,
    pub(crate) users: Vec<UserRecord>,
    pub(crate) repository: RepositoryRecord,
    /// Shared with the GraphQL snapshots of requests in flight (copied on
    /// write only while one holds it), so a request costs what it reads,
    /// not the size of the pull request.
    pub(crate) pull_requests: Vec<Arc<PullRequestRecord>>,
    /// The repository's labels.
    pub(crate) labels: Vec<LabelRecord>,
    /// Workflow runs, check suites and runs, commit statuses.
    /// Shared with requests in flight, as the pull requests are.
    pub(crate) ci: Arc<CiState>,
    /// What the reviewer bots posted.
    pub(crate) bot_posts: BTreeSet<BotPost>,
    /// Bumped by every reset: background work of an older epoch is dropped.
    pub(crate) epoch: u64,
    /// Next database id; shared by all kinds, as ids only need to be unique.
    next_database_id: u64,
    /// The emulator's clock (seconds since the epoch); advances one minute
    /// per created object so timestamps are deterministic and ordered.
    clock: i64,
}

impl State {
    /// Builds the state from a validated scenario and its created repository.
    pub(crate) fn from_scenario(
        scenario: &Scenario,
        repo: &CreatedRepository,
        diff: &BTreeMap<String, Vec<Hunk>>,
        base_url: &str,
    ) -> State {
        let mut state = State {
            forge: scenario.forge,
            users: Vec::new(),
            repository: RepositoryRecord {
                database_id: 0,
                id: String::new(),
                owner: scenario.repository.owner.clone(),
                name: scenario.repository.name.clone(),
                default_branch: scenario.repository.default_branch.clone(),
                html_url: format!(
                    "{base_url}/{}/{}",
                    scenario.repository.owner, scenario.repository.name
                ),
                git_url: format!(
                    "{base_url}/{}/{}.git",
                    scenario.repository.owner, scenario.repository.name
                ),
                git_dir: repo.git_dir.clone(),
                visibility: scenario.repository.visibility,
            },
            pull_requests: Vec::new(),
            labels: Vec::new(),
            ci: Arc::new(CiState::from_scenario(scenario)),
            bot_posts: BTreeSet::new(),
            epoch: 0,
            next_database_id: 1001,
            clock: git::BASE_EPOCH + 2 * 3600,
        };
        let repo_db_id = state.next_id();
        state.repository.database_id = repo_db_id;
        state.repository.id = ids::node_id(NodeKind::Repository, repo_db_id);

        for user in &scenario.users {
            let database_id = state.next_id();
            let kind = match user.kind {
                UserKind::User => NodeKind::User,
                UserKind::Bot => NodeKind::Bot,
            };
            state.users.push(UserRecord {
                database_id,
                id: ids::node_id(kind, database_id),
                login: user.login.clone(),
                token: user.token.clone(),
                kind: user.kind,
                permission: user.permission,
                member: user.member,
            });
        }

        let spec = &scenario.pull_request;
        let pr_db_id = state.next_id();
        let created_at = state.tick();
        let mut pr = PullRequestRecord {
            database_id: pr_db_id,
            id: ids::node_id(NodeKind::PullRequest, pr_db_id),
            number: spec.number,
            title: spec.title.clone(),
            body: spec.body.clone(),
            author: spec.author.clone(),
            status: spec.state,
            draft: spec.draft
                || (scenario.forge == EmulatedForge::GitLab && gitlab_draft_title(&spec.title)),
            fork: spec.fork,
            head_ref: spec.head.clone(),
            head_sha: repo.head_sha.clone(),
            base_ref: spec.base.clone(),
            base_sha: repo.base_sha.clone(),
            html_url: match scenario.forge {
                EmulatedForge::GitHub => {
                    format!("{}/pull/{}", state.repository.html_url, spec.number)
                }
                EmulatedForge::GitLab => format!(
                    "{}/-/merge_requests/{}",
                    state.repository.html_url, spec.number
                ),
            },
            closed_at: (spec.state != PullRequestStatus::Open).then(|| created_at.clone()),
            created_at: created_at.clone(),
            updated_at: created_at,
            threads: Vec::new(),
            issue_comments: Vec::new(),
            reviews: Vec::new(),
            system_notes: Vec::new(),
            labels: Vec::new(),
            label_events: Vec::new(),
            commits: vec![repo.head_sha.clone()],
            versions: Vec::new(),
            diff: diff.clone(),
        };
        let version_id = state.next_id();
        pr.versions.push(DiffVersionRecord {
            database_id: version_id,
            head_sha: pr.head_sha.clone(),
            base_sha: pr.base_sha.clone(),
            created_at: pr.created_at.clone(),
            files: diff.len(),
        });
        for name in &spec.labels {
            state.ensure_label(name);
            if !pr.labels.contains(name) {
                pr.labels.push(name.clone());
                // Labels set when the pull request was opened: its
                // author's, at its creation.
                let database_id = state.next_id();
                pr.label_events.push(LabelEventRecord {
                    database_id,
                    actor: spec.author.clone(),
                    label: name.clone(),
                    added: true,
                    created_at: pr.created_at.clone(),
                });
            }
        }

        let mut named_reviews = BTreeMap::new();
        for review in &scenario.reviews {
            let database_id = state.next_id();
            let created_at = state.tick();
            if let Some(name) = &review.name {
                named_reviews.insert(name.clone(), database_id);
            }
            pr.reviews.push(ReviewRecord {
                database_id,
                id: ids::node_id(NodeKind::Review, database_id),
                author: review.author.clone(),
                state: review.state,
                body: review.body.clone(),
                submitted_at: (review.state != ReviewStateSpec::Pending)
                    .then(|| created_at.clone()),
                created_at,
                commit: repo.head_sha.clone(),
            });
        }

        for thread in &scenario.threads {
            let thread_db_id = state.next_id();
            let left = thread.side == Side::Left;
            let diff_hunk = match thread.line {
                Some(line) => diff
                    .get(&thread.path)
                    .and_then(|hunks| git::diff_hunk(hunks, line, left))
                    .unwrap_or_else(|| fallback_hunk(scenario, &thread.path, line, left)),
                None => String::new(),
            };
            let diff_hunk = DiffHunk::from(diff_hunk);
            let mut record = ThreadRecord {
                database_id: thread_db_id,
                id: ids::node_id(NodeKind::ReviewThread, thread_db_id),
                discussion_id: ids::discussion_id(thread_db_id),
                path: thread.path.clone(),
                original_line: thread.line,
                original_start_line: thread.start_line,
                current_line: thread.line,
                current_start_line: thread.start_line,
                commit: repo.head_sha.clone(),
                side: thread.side,
                outdated: thread.outdated,
                resolved: thread.resolved,
                resolved_by: thread.resolved.then(|| spec.author.clone()),
                comments: Vec::new(),
            };
            for comment in &thread.comments {
                let review_id = match comment.review.as_ref().and_then(|n| named_reviews.get(n)) {
                    Some(id) => *id,
                    // A lone comment is a COMMENTED review of its own on GitHub.
                    None => state.implicit_review(&mut pr, &comment.author, &repo.head_sha),
                };
                let database_id = state.next_id();
                let reply_to = record.comments.first().map(|c| c.database_id);
                record.comments.push(ReviewCommentRecord {
                    database_id,
                    id: ids::node_id(NodeKind::ReviewComment, database_id),
                    author: comment.author.clone(),
                    body: comment.body.clone(),
                    created_at: state.tick(),
                    review_id,
                    reply_to,
                    diff_hunk: diff_hunk.clone(),
                    original_commit: repo.head_sha.clone(),
                });
            }
            pr.threads.push(record);
        }

        for comment in &scenario.comments {
            let database_id = state.next_id();
            pr.issue_comments.push(IssueCommentRecord {
                database_id,
                id: ids::node_id(NodeKind::IssueComment, database_id),
                discussion_id: ids::discussion_id(database_id),
                author: comment.author.clone(),
                body: comment.body.clone(),
                created_at: state.tick(),
            });
        }
        state.pull_requests.push(Arc::new(pr));
        state
    }

    pub(crate) fn next_id(&mut self) -> u64 {
        let id = self.next_database_id;
        self.next_database_id += 1;
        id
    }

    /// The current time, then advances the clock by a minute.
    pub(crate) fn tick(&mut self) -> String {
        let now = ids::iso8601(self.clock);
        self.clock += 60;
        now
    }

    /// The clock, in seconds since the epoch (for commits the emulator makes).
    pub(crate) fn now_epoch(&self) -> i64 {
        self.clock
    }

    fn implicit_review(&mut self, pr: &mut PullRequestRecord, author: &str, commit: &str) -> u64 {
        let database_id = self.next_id();
        let created_at = self.tick();
        pr.reviews.push(ReviewRecord {
            database_id,
            id: ids::node_id(NodeKind::Review, database_id),
            author: author.to_owned(),
            state: ReviewStateSpec::Commented,
            body: String::new(),
            submitted_at: Some(created_at.clone()),
            created_at,
            commit: commit.to_owned(),
        });
        database_id
    }

    /// The user a token authenticates, if any.
    pub(crate) fn user_by_token(&self, token: &str) -> Option<&UserRecord> {
        self.users.iter().find(|u| u.token == token)
    }

    /// The user with this login, if any.
    pub(crate) fn user(&self, login: &str) -> Option<&UserRecord> {
        self.users.iter().find(|u| u.login == login)
    }

    /// Whether `owner/name` is this emulator's repository (case-insensitive,
    /// as on GitHub).
    pub(crate) fn is_repository(&self, owner: &str, name: &str) -> bool {
        self.repository.owner.eq_ignore_ascii_case(owner)
            && self.repository.name.eq_ignore_ascii_case(name)
    }

    /// Pull request `p` (an index) to change: copied first if a request in
    /// flight still reads it.
    pub(crate) fn pr_mut(&mut self, p: usize) -> &mut PullRequestRecord {
        Arc::make_mut(&mut self.pull_requests[p])
    }

    /// The CI records to change: copied first if a request in flight still
    /// reads them.
    pub(crate) fn ci_mut(&mut self) -> &mut CiState {
        Arc::make_mut(&mut self.ci)
    }

    /// The pull request with this number.
    pub(crate) fn pull_request(&self, number: u64) -> Option<&PullRequestRecord> {
        self.pull_requests
            .iter()
            .find(|p| p.number == number)
            .map(|p| &**p)
    }

    /// Pull request `number`, shared: a snapshot that costs no copy.
    pub(crate) fn pull_request_shared(&self, number: u64) -> Option<Arc<PullRequestRecord>> {
        self.pull_requests
            .iter()
            .find(|p| p.number == number)
            .cloned()
    }

    /// Records that a branch now points to `new_sha`; returns the pull
    /// requests whose head moved, with their previous head.
    pub(crate) fn move_branch(&mut self, branch: &str, new_sha: &str) -> Vec<HeadMoved> {
        let mut moved = Vec::new();
        let now = ids::iso8601(self.clock);
        for pr in &mut self.pull_requests {
            if pr.head_ref == branch && pr.head_sha != new_sha {
                let pr = Arc::make_mut(pr);
                moved.push(HeadMoved {
                    number: pr.number,
                    old_sha: std::mem::replace(&mut pr.head_sha, new_sha.to_owned()),
                    new_sha: new_sha.to_owned(),
                });
                pr.updated_at = now.clone();
            }
        }
        if !moved.is_empty() {
            self.clock += 60;
        }
        moved
    }
}

/// A pull request's head moved after a push.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct HeadMoved {
    pub(crate) number: u64,
    pub(crate) old_sha: String,
    pub(crate) new_sha: String,
}

/// The writes: each one of GitHub's effects, applied whole.
impl State {
    fn pr_index(&self, number: u64) -> Result<usize, WriteError> {
        self.pull_requests
            .iter()
            .position(|p| p.number == number)
            .ok_or_else(|| WriteError::NotFound("Not Found".into()))
    }

    /// The pull request holding review thread `thread_id`, and the thread's index.
    pub(crate) fn thread_location(&self, thread_id: u64) -> Option<(usize, usize)> {
        self.pull_requests.iter().enumerate().find_map(|(p, pr)| {
            let t = pr.threads.iter().position(|t| t.database_id == thread_id)?;
            Some((p, t))
        })
    }

    /// Creates the label `name` in the repository unless it exists.
    pub(crate) fn ensure_label(&mut self, name: &str) {
        if self
            .labels
            .iter()
            .any(|l| l.name.eq_ignore_ascii_case(name))
        {
            return;
        }
        let database_id = self.next_id();
        self.labels.push(LabelRecord {
            database_id,
            id: ids::node_id(NodeKind::Label, database_id),
            name: name.to_owned(),
            // GitHub's default colour for labels created on the fly.
            color: "ededed".to_owned(),
            description: None,
        });
    }

    /// The label record named `name` (case-insensitive, as on GitHub).
    pub(crate) fn label(&self, name: &str) -> Option<&LabelRecord> {
        self.labels
            .iter()
            .find(|l| l.name.eq_ignore_ascii_case(name))
    }

    /// The review a new comment of `author` joins: their pending review if
    /// they have one (as on GitHub, where it then stays invisible to others
    /// until submitted), else a new COMMENTED review of its own.
    fn review_for_comment(&mut self, p: usize, author: &str) -> u64 {
        if let Some(id) = self.pull_requests[p].pending_review_of(author) {
            return id;
        }
        self.commented_review(p, author)
    }

    /// A new, submitted COMMENTED review with an empty body.
    fn commented_review(&mut self, p: usize, author: &str) -> u64 {
        let database_id = self.next_id();
        let created_at = self.tick();
        let commit = self.pull_requests[p].head_sha.clone();
        self.pr_mut(p).reviews.push(ReviewRecord {
            database_id,
            id: ids::node_id(NodeKind::Review, database_id),
            author: author.to_owned(),
            state: ReviewStateSpec::Commented,
            body: String::new(),
            submitted_at: Some(created_at.clone()),
            created_at,
            commit,
        });
        database_id
    }

    /// Appends a reply to thread `t` of PR `p`.
    fn push_reply(
        &mut self,
        p: usize,
        t: usize,
        author: &str,
        body: &str,
        review_id: u64,
    ) -> NewComment {
        let database_id = self.next_id();
        let created_at = self.tick();
        let pr = self.pr_mut(p);
        let thread = &mut pr.threads[t];
        let root = &thread.comments[0];
        let comment = ReviewCommentRecord {
            database_id,
            id: ids::node_id(NodeKind::ReviewComment, database_id),
            author: author.to_owned(),
            body: body.to_owned(),
            created_at: created_at.clone(),
            review_id,
            reply_to: Some(root.database_id),
            diff_hunk: root.diff_hunk.clone(),
            original_commit: thread.commit.clone(),
        };
        thread.comments.push(comment);
        let thread_id = thread.database_id;
        pr.updated_at = created_at;
        NewComment {
            pr_number: pr.number,
            thread_id,
            comment_id: database_id,
            review_id,
        }
    }

    /// REST `POST …/pulls/{n}/comments/{comment_id}/replies`: a reply in the
    /// thread of comment `comment_id` (a reply to a reply joins the same
    /// thread, answering its first comment).
    pub(crate) fn apply_reply_to_comment(
        &mut self,
        number: u64,
        author: &str,
        comment_id: u64,
        body: &str,
    ) -> Result<NewComment, WriteError> {
        let p = self.pr_index(number)?;
        let pr = &self.pull_requests[p];
        let t = pr
            .find_comment(comment_id)
            .filter(|(t, c)| pr.review_visible_to(pr.threads[*t].comments[*c].review_id, author))
            .map(|(t, _)| t)
            .ok_or_else(|| WriteError::NotFound("Not Found".into()))?;
        self.check_body(body)?;
        let review_id = self.review_for_comment(p, author);
        Ok(self.push_reply(p, t, author, body, review_id))
    }

    /// GraphQL `addPullRequestReviewThreadReply`: a reply in thread
    /// `thread_id`, in review `review_id` when given (which must be the
    /// author's pending review).
    pub(crate) fn apply_thread_reply(
        &mut self,
        thread_id: u64,
        author: &str,
        body: &str,
        review_id: Option<u64>,
    ) -> Result<NewComment, WriteError> {
        let (p, t) = self
            .thread_location(thread_id)
            .filter(|(p, t)| {
                let pr = &self.pull_requests[*p];
                pr.thread_visible_to(&pr.threads[*t], author)
            })
            .ok_or_else(|| WriteError::NotFound(String::new()))?;
        self.check_body(body)?;
        let review_id = match review_id {
            Some(id) => {
                let pr = &self.pull_requests[p];
                let ok = pr
                    .review(id)
                    .is_some_and(|r| r.author == author && r.state == ReviewStateSpec::Pending);
                if !ok {
                    return Err(WriteError::Unprocessable(
                        "The review must be a pending review of the viewer.".into(),
                    ));
                }
                id
            }
            None => self.review_for_comment(p, author),
        };
        Ok(self.push_reply(p, t, author, body, review_id))
    }

    /// `resolveReviewThread` / `unresolveReviewThread`; idempotent. Returns
    /// the PR number and the thread's index.
    pub(crate) fn apply_resolve(
        &mut self,
        thread_id: u64,
        viewer: &str,
        may_write: bool,
        resolve: bool,
    ) -> Result<(u64, usize), WriteError> {
        let (p, t) = self
            .thread_location(thread_id)
            .filter(|(p, t)| {
                let pr = &self.pull_requests[*p];
                pr.thread_visible_to(&pr.threads[*t], viewer)
            })
            .ok_or_else(|| WriteError::NotFound(String::new()))?;
        let pr = &self.pull_requests[p];
        if !may_write && pr.author != viewer {
            return Err(WriteError::Forbidden(format!(
                "{viewer} does not have the correct permissions to execute `{}`",
                if resolve {
                    "ResolveReviewThread"
                } else {
                    "UnresolveReviewThread"
                }
            )));
        }
        let now = ids::iso8601(self.clock);
        let pr = self.pr_mut(p);
        let thread = &mut pr.threads[t];
        if thread.resolved != resolve {
            thread.resolved = resolve;
            thread.resolved_by = resolve.then(|| viewer.to_owned());
            pr.updated_at = now;
            self.clock += 60;
        }
        Ok((self.pull_requests[p].number, t))
    }

    /// GitLab's `POST …/discussions/:id/notes`: a reply posted at once (the
    /// API never adds it to the author's draft notes), in a COMMENTED
    /// review of its own. The thread must have a submitted comment.
    pub(crate) fn apply_direct_reply(
        &mut self,
        thread_id: u64,
        author: &str,
        body: &str,
    ) -> Result<NewComment, WriteError> {
        let (p, t) = self
            .thread_location(thread_id)
            .filter(|(p, t)| {
                let pr = &self.pull_requests[*p];
                pr.thread_published(&pr.threads[*t])
            })
            .ok_or_else(|| WriteError::NotFound(String::new()))?;
        self.check_body(body)?;
        let review_id = self.commented_review(p, author);
        Ok(self.push_reply(p, t, author, body, review_id))
    }

    /// GitLab's `PUT …/discussions/:id?resolved=`: resolves or unresolves as
    /// [`State::apply_resolve`] does. A resolve that leaves every thread of
    /// the merge request resolved posts the system note `resolved all
    /// threads`; a resolve of a thread that was resolved already changes
    /// nothing but posts a system note all the same (marked `duplicate`), as
    /// GitLab records a repeated resolution again.
    pub(crate) fn apply_discussion_resolve(
        &mut self,
        thread_id: u64,
        viewer: &str,
        may_write: bool,
        resolve: bool,
    ) -> Result<(u64, usize), WriteError> {
        let was_resolved = self
            .thread_location(thread_id)
            .is_some_and(|(p, t)| self.pull_requests[p].threads[t].resolved);
        let (number, t) = self.apply_resolve(thread_id, viewer, may_write, resolve)?;
        if !resolve {
            return Ok((number, t));
        }
        let p = self.pr_index(number)?;
        let pr = &self.pull_requests[p];
        let all = pr
            .threads
            .iter()
            .filter(|thread| pr.thread_published(thread))
            .all(|thread| thread.resolved);
        if all || was_resolved {
            let body = if all {
                "resolved all threads"
            } else {
                "resolved this thread"
            };
            self.push_system_note(p, viewer, body, was_resolved);
        }
        Ok((number, t))
    }

    /// A GitLab system note on PR `number` (`added 1 commit`).
    pub(crate) fn apply_system_note(
        &mut self,
        number: u64,
        author: &str,
        body: &str,
    ) -> Result<u64, WriteError> {
        let p = self.pr_index(number)?;
        Ok(self.push_system_note(p, author, body, false))
    }

    fn push_system_note(&mut self, p: usize, author: &str, body: &str, duplicate: bool) -> u64 {
        let database_id = self.next_id();
        let created_at = self.tick();
        let pr = self.pr_mut(p);
        pr.system_notes.push(SystemNoteRecord {
            database_id,
            discussion_id: ids::discussion_id(database_id),
            author: author.to_owned(),
            body: body.to_owned(),
            created_at: created_at.clone(),
            duplicate,
        });
        pr.updated_at = created_at;
        database_id
    }

    /// GitLab's approve (`approve = true`) or unapprove of merge request
    /// `number` by `login`. An approval is an APPROVED review with no body
    /// (GitLab's approvals are no notes), withdrawing it dismisses that
    /// review; each posts GitLab's system note (`approved this merge
    /// request`, `unapproved this merge request`). Approving twice is
    /// `Forbidden`, withdrawing an approval never given `NotFound`.
    pub(crate) fn apply_approval(
        &mut self,
        number: u64,
        login: &str,
        approve: bool,
    ) -> Result<(), WriteError> {
        let p = self.pr_index(number)?;
        let standing = self.pull_requests[p]
            .approval_of(login)
            .map(|r| r.database_id);
        match (approve, standing) {
            (true, Some(_)) => {
                return Err(WriteError::Forbidden(
                    "the merge request is approved by this user already".into(),
                ))
            }
            (false, None) => return Err(WriteError::NotFound(String::new())),
            (true, None) => {
                let database_id = self.next_id();
                let created_at = self.tick();
                let pr = self.pr_mut(p);
                let commit = pr.head_sha.clone();
                pr.reviews.push(ReviewRecord {
                    database_id,
                    id: ids::node_id(NodeKind::Review, database_id),
                    author: login.to_owned(),
                    state: ReviewStateSpec::Approved,
                    body: String::new(),
                    submitted_at: Some(created_at.clone()),
                    created_at,
                    commit,
                });
            }
            (false, Some(review_id)) => {
                let pr = self.pr_mut(p);
                if let Some(review) = pr.reviews.iter_mut().find(|r| r.database_id == review_id) {
                    review.state = ReviewStateSpec::Dismissed;
                }
            }
        }
        let note = if approve {
            "approved this merge request"
        } else {
            "unapproved this merge request"
        };
        self.push_system_note(p, login, note, false);
        Ok(())
    }

    /// How many duplicate system notes repeated resolves posted (GitLab).
    pub(crate) fn duplicate_resolve_notes(&self) -> u64 {
        self.pull_requests
            .iter()
            .flat_map(|pr| &pr.system_notes)
            .filter(|n| n.duplicate)
            .count() as u64
    }

    /// A comment body must not be blank, nor longer than the forge takes:
    /// GitHub 65,536 characters, GitLab (notes) 1,000,000.
    fn check_body(&self, body: &str) -> Result<(), WriteError> {
        if body.trim().is_empty() {
            return Err(WriteError::Unprocessable("Body cannot be blank".into()));
        }
        let (limit, what) = match self.forge {
            EmulatedForge::GitHub => (65_536, "Body"),
            EmulatedForge::GitLab => (1_000_000, "Note"),
        };
        if body.chars().count() > limit {
            return Err(WriteError::Unprocessable(format!(
                "{what} is too long (maximum is {limit} characters)"
            )));
        }
        Ok(())
    }

    /// A top-level (issue) comment; returns its database id.
    pub(crate) fn apply_issue_comment(
        &mut self,
        number: u64,
        author: &str,
        body: &str,
    ) -> Result<u64, WriteError> {
        let p = self.pr_index(number)?;
        self.check_body(body)?;
        let database_id = self.next_id();
        let created_at = self.tick();
        let pr = self.pr_mut(p);
        pr.issue_comments.push(IssueCommentRecord {
            database_id,
            id: ids::node_id(NodeKind::IssueComment, database_id),
            discussion_id: ids::discussion_id(database_id),
            author: author.to_owned(),
            body: body.to_owned(),
            created_at: created_at.clone(),
        });
        pr.updated_at = created_at;
        Ok(database_id)
    }

    /// `PATCH …/pulls/{n}`: title, body, open or closed.
    pub(crate) fn apply_pull_request_edit(
        &mut self,
        number: u64,
        edit: &PullRequestEdit,
    ) -> Result<(), WriteError> {
        let p = self.pr_index(number)?;
        if let Some(title) = &edit.title {
            if title.trim().is_empty() {
                return Err(WriteError::Unprocessable("title cannot be blank".into()));
            }
        }
        if edit.state.is_some() && self.pull_requests[p].status == PullRequestStatus::Merged {
            return Err(WriteError::Unprocessable(
                "Cannot change the state of a merged pull request".into(),
            ));
        }
        let now = self.tick();
        let gitlab = self.forge == EmulatedForge::GitLab;
        let pr = self.pr_mut(p);
        if let Some(title) = &edit.title {
            pr.title = title.clone();
            // On GitLab the title says whether it is a draft.
            if gitlab {
                pr.draft = gitlab_draft_title(title);
            }
        }
        if let Some(body) = &edit.body {
            pr.body = body.clone();
        }
        if let Some(state) = edit.state {
            if state != pr.status {
                pr.closed_at = (state == PullRequestStatus::Closed).then(|| now.clone());
                pr.status = state;
            }
        }
        pr.updated_at = now;
        Ok(())
    }

    /// `POST …/issues/{n}/labels` by `actor`: adds labels (creating unknown
    /// ones); each label not there before gets an event.
    pub(crate) fn apply_add_labels(
        &mut self,
        number: u64,
        actor: &str,
        names: &[String],
    ) -> Result<(), WriteError> {
        let p = self.pr_index(number)?;
        check_label_names(names)?;
        let now = self.tick();
        for name in names {
            self.ensure_label(name);
            let canonical = self
                .label(name)
                .map_or_else(|| name.clone(), |l| l.name.clone());
            if self.pull_requests[p]
                .labels
                .iter()
                .any(|l| l.eq_ignore_ascii_case(name))
            {
                continue;
            }
            let database_id = self.next_id();
            let pr = self.pr_mut(p);
            pr.labels.push(canonical.clone());
            pr.label_events.push(LabelEventRecord {
                database_id,
                actor: actor.to_owned(),
                label: canonical,
                added: true,
                created_at: now.clone(),
            });
        }
        self.pr_mut(p).updated_at = now;
        Ok(())
    }

    /// `PUT …/issues/{n}/labels` (GitHub) or GitLab's `labels=` by
    /// `actor`: the labels become `names` (compared case-insensitively);
    /// each label removed and each added gets its event.
    pub(crate) fn apply_set_labels(
        &mut self,
        number: u64,
        actor: &str,
        names: &[String],
    ) -> Result<(), WriteError> {
        let p = self.pr_index(number)?;
        check_label_names(names)?;
        let gone: Vec<String> = self.pull_requests[p]
            .labels
            .iter()
            .filter(|l| !names.iter().any(|n| n.eq_ignore_ascii_case(l)))
            .cloned()
            .collect();
        for label in &gone {
            self.apply_remove_label(number, actor, label)?;
        }
        self.apply_add_labels(number, actor, names)
    }

    /// `DELETE …/issues/{n}/labels/{name}` by `actor`, with its event.
    pub(crate) fn apply_remove_label(
        &mut self,
        number: u64,
        actor: &str,
        name: &str,
    ) -> Result<(), WriteError> {
        let p = self.pr_index(number)?;
        let pr = &self.pull_requests[p];
        let Some(index) = pr.labels.iter().position(|l| l.eq_ignore_ascii_case(name)) else {
            return Err(WriteError::NotFound("Label does not exist".into()));
        };
        let now = self.tick();
        let database_id = self.next_id();
        let pr = self.pr_mut(p);
        let label = pr.labels.remove(index);
        pr.label_events.push(LabelEventRecord {
            database_id,
            actor: actor.to_owned(),
            label,
            added: false,
            created_at: now.clone(),
        });
        pr.updated_at = now;
        Ok(())
    }

    /// A review by `author` with `threads` (each a new thread of one
    /// comment). `Pending` creates the author's draft review.
    pub(crate) fn apply_review(
        &mut self,
        number: u64,
        author: &str,
        state: ReviewStateSpec,
        body: &str,
        threads: Vec<NewThread>,
    ) -> Result<CreatedReview, WriteError> {
        let p = self.pr_index(number)?;
        if self.pull_requests[p].pending_review_of(author).is_some() {
            return Err(WriteError::Unprocessable(
                "User can only have one pending review per pull request".into(),
            ));
        }
        if state == ReviewStateSpec::Dismissed {
            return Err(WriteError::Unprocessable(
                "a review cannot be created dismissed".into(),
            ));
        }
        if matches!(
            state,
            ReviewStateSpec::Commented | ReviewStateSpec::ChangesRequested
        ) && body.trim().is_empty()
            && threads.is_empty()
        {
            return Err(WriteError::Unprocessable(
                "Review body is required for this event".into(),
            ));
        }
        for thread in &threads {
            self.check_body(&thread.body)?;
        }
        let review_id = self.next_id();
        let created_at = self.tick();
        let commit = self.pull_requests[p].head_sha.clone();
        self.pr_mut(p).reviews.push(ReviewRecord {
            database_id: review_id,
            id: ids::node_id(NodeKind::Review, review_id),
            author: author.to_owned(),
            state,
            body: body.to_owned(),
            submitted_at: (state != ReviewStateSpec::Pending).then(|| created_at.clone()),
            created_at: created_at.clone(),
            commit: commit.clone(),
        });
        let mut created = Vec::new();
        for thread in threads {
            created.extend(self.push_thread(p, author, thread, review_id).threads);
        }
        self.pr_mut(p).updated_at = created_at;
        Ok(CreatedReview {
            review_id,
            threads: created,
        })
    }

    /// A single new thread (REST `POST …/pulls/{n}/comments`): in the
    /// author's pending review if they have one, else in a COMMENTED review
    /// of its own.
    pub(crate) fn apply_new_thread(
        &mut self,
        number: u64,
        author: &str,
        thread: NewThread,
    ) -> Result<CreatedReview, WriteError> {
        self.new_thread(number, author, thread, true)
    }

    /// GitLab's `POST …/merge_requests/:iid/discussions`: a new thread
    /// posted at once (the API never adds it to the author's draft notes),
    /// in a COMMENTED review of its own. A thread with an empty `path` is
    /// a discussion of the merge request itself (no position).
    pub(crate) fn apply_discussion(
        &mut self,
        number: u64,
        author: &str,
        thread: NewThread,
    ) -> Result<CreatedReview, WriteError> {
        self.new_thread(number, author, thread, false)
    }

    /// A new thread of one comment on PR `number`, in the author's pending
    /// review (`into_pending`, when they have one) or in a COMMENTED review
    /// of its own.
    fn new_thread(
        &mut self,
        number: u64,
        author: &str,
        thread: NewThread,
        into_pending: bool,
    ) -> Result<CreatedReview, WriteError> {
        let p = self.pr_index(number)?;
        self.check_body(&thread.body)?;
        let review_id = if into_pending {
            self.review_for_comment(p, author)
        } else {
            self.commented_review(p, author)
        };
        Ok(self.push_thread(p, author, thread, review_id))
    }

    /// Appends `thread`, its one comment in review `review_id`, to PR `p`
    /// on its current head.
    fn push_thread(
        &mut self,
        p: usize,
        author: &str,
        thread: NewThread,
        review_id: u64,
    ) -> CreatedReview {
        let thread_id = self.next_id();
        let comment_id = self.next_id();
        let created_at = self.tick();
        let pr = self.pr_mut(p);
        let commit = pr.head_sha.clone();
        pr.threads.push(ThreadRecord {
            database_id: thread_id,
            id: ids::node_id(NodeKind::ReviewThread, thread_id),
            discussion_id: ids::discussion_id(thread_id),
            path: thread.path,
            original_line: thread.line,
            original_start_line: thread.start_line,
            current_line: thread.line,
            current_start_line: thread.start_line,
            commit: commit.clone(),
            side: thread.side,
            outdated: false,
            resolved: false,
            resolved_by: None,
            comments: vec![ReviewCommentRecord {
                database_id: comment_id,
                id: ids::node_id(NodeKind::ReviewComment, comment_id),
                author: author.to_owned(),
                body: thread.body,
                created_at: created_at.clone(),
                review_id,
                reply_to: None,
                diff_hunk: thread.diff_hunk.into(),
                original_commit: commit,
            }],
        });
        pr.updated_at = created_at;
        CreatedReview {
            review_id,
            threads: vec![(thread_id, comment_id)],
        }
    }

    /// Submits `viewer`'s pending review `review_id` as `state`.
    pub(crate) fn apply_submit_review(
        &mut self,
        number: u64,
        viewer: &str,
        review_id: u64,
        state: ReviewStateSpec,
        body: Option<&str>,
    ) -> Result<(), WriteError> {
        let p = self.pr_index(number)?;
        let pr = &self.pull_requests[p];
        let Some(review) = pr
            .review(review_id)
            .filter(|r| pr.review_visible_to(r.database_id, viewer))
        else {
            return Err(WriteError::NotFound("Not Found".into()));
        };
        if review.state != ReviewStateSpec::Pending || review.author != viewer {
            return Err(WriteError::Unprocessable(
                "Can not submit a non-pending review".into(),
            ));
        }
        if matches!(state, ReviewStateSpec::Pending | ReviewStateSpec::Dismissed) {
            return Err(WriteError::Unprocessable(
                "event must be APPROVE, REQUEST_CHANGES or COMMENT".into(),
            ));
        }
        let now = self.tick();
        let pr = self.pr_mut(p);
        if let Some(review) = pr.reviews.iter_mut().find(|r| r.database_id == review_id) {
            review.state = state;
            review.submitted_at = Some(now.clone());
            if let Some(body) = body {
                review.body = body.to_owned();
            }
        }
        pr.updated_at = now;
        Ok(())
    }

    /// A push moved PR `number`'s head: threads on the head side follow
    /// their lines through `push_diff` (old head to new head) or become
    /// outdated when those lines changed; the PR's diff and commits are
    /// refreshed.
    pub(crate) fn apply_push(
        &mut self,
        number: u64,
        new_sha: &str,
        push_diff: &BTreeMap<String, Vec<Hunk>>,
        pr_diff: BTreeMap<String, Vec<Hunk>>,
        commits: Vec<String>,
    ) -> PushOutcome {
        let mut outcome = PushOutcome::default();
        let Ok(p) = self.pr_index(number) else {
            return outcome;
        };
        let version_id = self.next_id();
        let now = ids::iso8601(self.clock);
        let pr = self.pr_mut(p);
        let version = DiffVersionRecord {
            database_id: version_id,
            head_sha: new_sha.to_owned(),
            base_sha: pr.base_sha.clone(),
            created_at: now,
            files: pr_diff.len(),
        };
        pr.versions.push(version);
        for thread in &mut pr.threads {
            if thread.outdated || thread.side == Side::Left {
                continue;
            }
            let Some(line) = thread.current_line else {
                // A file-level thread is outdated by any change to its file.
                if push_diff.contains_key(&thread.path) {
                    thread.outdated = true;
                    outcome.outdated.push(thread.database_id);
                }
                continue;
            };
            let start = thread.current_start_line.unwrap_or(line);
            match git::remap_range(push_diff.get(&thread.path).map(Vec::as_slice), start, line) {
                Ok((new_start, new_line)) => {
                    if new_line != line {
                        outcome.moved.push(thread.database_id);
                    }
                    thread.current_line = Some(new_line);
                    thread.current_start_line = thread.current_start_line.map(|_| new_start);
                    thread.commit = new_sha.to_owned();
                }
                Err(()) => {
                    thread.outdated = true;
                    outcome.outdated.push(thread.database_id);
                }
            }
        }
        pr.diff = pr_diff;
        outcome.new_commits = commits.iter().filter(|c| !pr.commits.contains(c)).count();
        pr.commits = commits;
        outcome
    }
}

/// Whether a GitLab merge request title marks it a draft: it starts with
/// `Draft:`, `[Draft]` or `(Draft)`, in any case (GitLab's docs, "Mark
/// merge requests as drafts"; its `MergeRequest::DRAFT_REGEX`). GitLab
/// derives `draft` (and `work_in_progress`) from the title alone.
pub(crate) fn gitlab_draft_title(title: &str) -> bool {
    let title = title.trim_start().to_ascii_lowercase();
    ["draft:", "[draft]", "(draft)"]
        .iter()
        .any(|prefix| title.starts_with(prefix))
}

/// Label names must not be blank (GitHub's 422, GitLab's 400).
fn check_label_names(names: &[String]) -> Result<(), WriteError> {
    if names.iter().any(|n| n.trim().is_empty()) {
        return Err(WriteError::Unprocessable(
            "a label name cannot be blank".into(),
        ));
    }
    Ok(())
}

/// A one-line hunk for a comment on a line outside the diff (GitHub only
/// allows lines in the diff; scenarios are less strict).
fn fallback_hunk(scenario: &Scenario, path: &str, line: u32, left: bool) -> String {
    let tree = if left { &scenario.base } else { &scenario.head };
    let text = tree
        .get(path)
        .map(|f| String::from_utf8_lossy(&f.contents).into_owned())
        .unwrap_or_default();
    let content = text
        .lines()
        .nth(line.saturating_sub(1) as usize)
        .unwrap_or_default();
    format!("@@ -{line},1 +{line},1 @@\n {content}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{
        PullRequestSpec, RepositorySpec, ReviewSpec, ThreadCommentSpec, ThreadSpec, UserSpec,
    };

    fn state() -> State {
        let mut s = Scenario::new(
            RepositorySpec::new("o", "r"),
            PullRequestSpec::new(1, "t", "alice", "feature", "main"),
        );
        s.users = vec![
            UserSpec::new("alice", "ta", UserKind::User, Permission::Write),
            UserSpec::new("bob", "tb", UserKind::User, Permission::Write),
        ];
        s.threads.push(ThreadSpec::new(
            "a.txt",
            3,
            vec![ThreadCommentSpec::new("bob", "x")],
        ));
        let mut pending = ReviewSpec::new("alice", ReviewStateSpec::Pending, "");
        pending.name = Some("draft".into());
        s.reviews.push(pending);
        let repo = CreatedRepository {
            git_dir: PathBuf::from("/nonexistent"),
            base_sha: "b".repeat(40),
            head_sha: "h".repeat(40),
        };
        State::from_scenario(&s, &repo, &BTreeMap::new(), "http://emu")
    }

    #[test]
    fn a_reply_joins_the_authors_pending_review() {
        let mut state = state();
        let root = state.pull_requests[0].threads[0].comments[0].database_id;
        let pending = state.pull_requests[0].pending_review_of("alice").unwrap();
        let mine = state.apply_reply_to_comment(1, "alice", root, "r").unwrap();
        assert_eq!(mine.review_id, pending);
        let theirs = state.apply_reply_to_comment(1, "bob", root, "r").unwrap();
        assert_ne!(theirs.review_id, pending);
        let pr = &state.pull_requests[0];
        assert!(!pr.review_visible_to(mine.review_id, "bob"));
        assert!(pr.review_visible_to(theirs.review_id, "alice"));
        // Bob cannot answer alice's invisible comment.
        assert_eq!(
            state.apply_reply_to_comment(1, "bob", mine.comment_id, "r"),
            Err(WriteError::NotFound("Not Found".into()))
        );
    }

    #[test]
    fn resolving_twice_is_one_change() {
        let mut state = state();
        let thread = state.pull_requests[0].threads[0].database_id;
        let updated = state.pull_requests[0].updated_at.clone();
        state.apply_resolve(thread, "bob", true, true).unwrap();
        let once = state.pull_requests[0].updated_at.clone();
        assert_ne!(once, updated);
        state.apply_resolve(thread, "bob", true, true).unwrap();
        assert_eq!(state.pull_requests[0].updated_at, once);
        assert!(state.pull_requests[0].threads[0].resolved);
        // A non-writer who is not the author may not.
        assert!(matches!(
            state.apply_resolve(thread, "bob", false, false),
            Err(WriteError::Forbidden(_))
        ));
    }

    #[test]
    fn a_push_moves_or_outdates_threads() {
        let mut state = state();
        let diff = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,3 @@\n+new\n one\n two\n";
        let push = git::parse_diff(diff);
        let outcome = state.apply_push(1, &"n".repeat(40), &push, BTreeMap::new(), vec![]);
        let thread = &state.pull_requests[0].threads[0];
        assert_eq!(outcome.moved, vec![thread.database_id]);
        assert_eq!(thread.line(), Some(4));
        assert_eq!(thread.original_line, Some(3));
        let diff = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -3,2 +3,2 @@\n three\n-four\n+FOUR\n";
        let push = git::parse_diff(diff);
        let outcome = state.apply_push(1, &"m".repeat(40), &push, BTreeMap::new(), vec![]);
        assert_eq!(outcome.outdated.len(), 1);
        assert_eq!(state.pull_requests[0].threads[0].line(), None);
    }

    #[test]
    fn labels_are_created_once_and_removed_by_name() {
        let mut state = state();
        state
            .apply_add_labels(1, "alice", &["Bug".into(), "bug".into()])
            .unwrap();
        assert_eq!(state.pull_requests[0].labels, ["Bug"]);
        assert_eq!(state.labels.len(), 1);
        // Adding a label already there changes nothing and records nothing.
        state.apply_add_labels(1, "bob", &["BUG".into()]).unwrap();
        state.apply_remove_label(1, "bob", "BUG").unwrap();
        assert!(state.pull_requests[0].labels.is_empty());
        let events: Vec<(&str, &str, bool)> = state.pull_requests[0]
            .label_events
            .iter()
            .map(|e| (e.actor.as_str(), e.label.as_str(), e.added))
            .collect();
        assert_eq!(events, [("alice", "Bug", true), ("bob", "Bug", false)]);
        let times: Vec<&str> = state.pull_requests[0]
            .label_events
            .iter()
            .map(|e| e.created_at.as_str())
            .collect();
        assert!(times[0] < times[1], "{times:?}");
        assert_eq!(
            state.apply_remove_label(1, "alice", "bug"),
            Err(WriteError::NotFound("Label does not exist".into()))
        );
    }

    #[test]
    fn gitlab_drafts_are_marked_by_the_title() {
        for title in [
            "Draft: x",
            "draft:x",
            "[Draft] x",
            "(DRAFT) x",
            "  Draft: x",
        ] {
            assert!(gitlab_draft_title(title), "{title}");
        }
        for title in ["x Draft:", "Drafting x", "WIP: x", "Draft x", ""] {
            assert!(!gitlab_draft_title(title), "{title}");
        }
    }

    #[test]
    fn setting_labels_removes_and_adds_with_events() {
        let mut state = state();
        state
            .apply_add_labels(1, "alice", &["a".into(), "b".into()])
            .unwrap();
        let before = state.pull_requests[0].label_events.len();
        state
            .apply_set_labels(1, "bob", &["B".into(), "c".into()])
            .unwrap();
        assert_eq!(state.pull_requests[0].labels, ["b", "c"]);
        let events: Vec<(&str, &str, bool)> = state.pull_requests[0].label_events[before..]
            .iter()
            .map(|e| (e.actor.as_str(), e.label.as_str(), e.added))
            .collect();
        assert_eq!(events, [("bob", "a", false), ("bob", "c", true)]);
        // A blank name changes nothing.
        assert!(state.apply_set_labels(1, "bob", &[" ".into()]).is_err());
        assert_eq!(state.pull_requests[0].labels, ["b", "c"]);
        state.apply_set_labels(1, "bob", &[]).unwrap();
        assert!(state.pull_requests[0].labels.is_empty());
    }
}
