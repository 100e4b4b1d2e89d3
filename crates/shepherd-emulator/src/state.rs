//! The emulated forge's state: users, the repository, pull requests with
//! their threads, comments and reviews.
//!
//! One [`State`] lives behind a lock in [`crate::server::Shared`]; handlers
//! read it and (from issue 3 on) mutate it. Records carry their database ids
//! and node ids; everything is serializable for `GET /_emulator/state`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::git::{self, CreatedRepository, Hunk};
use crate::ids::{self, NodeKind};
use crate::scenario::{Permission, PullRequestStatus, ReviewStateSpec, Scenario, Side, UserKind};

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
    pub(crate) threads: Vec<ThreadRecord>,
    pub(crate) issue_comments: Vec<IssueCommentRecord>,
    pub(crate) reviews: Vec<ReviewRecord>,
}

impl PullRequestRecord {
    pub(crate) fn review(&self, database_id: u64) -> Option<&ReviewRecord> {
        self.reviews.iter().find(|r| r.database_id == database_id)
    }
}

/// A review thread.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ThreadRecord {
    pub(crate) database_id: u64,
    pub(crate) id: String,
    pub(crate) path: String,
    /// The line on the original commit; `None` for a file-level thread.
    pub(crate) original_line: Option<u32>,
    pub(crate) original_start_line: Option<u32>,
    pub(crate) side: Side,
    pub(crate) outdated: bool,
    pub(crate) resolved: bool,
    pub(crate) resolved_by: Option<String>,
    pub(crate) comments: Vec<ReviewCommentRecord>,
}

impl ThreadRecord {
    /// The current line: GitHub answers `null` once the thread is outdated.
    pub(crate) fn line(&self) -> Option<u32> {
        if self.outdated {
            None
        } else {
            self.original_line
        }
    }

    /// The current start line (multi-line threads), `null` when outdated.
    pub(crate) fn start_line(&self) -> Option<u32> {
        if self.outdated {
            None
        } else {
            self.original_start_line
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
    pub(crate) diff_hunk: String,
    /// The commit the comment was made on.
    pub(crate) original_commit: String,
}

/// A top-level PR comment (GitHub issue comment).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct IssueCommentRecord {
    pub(crate) database_id: u64,
    pub(crate) id: String,
    pub(crate) author: String,
    pub(crate) body: String,
    pub(crate) created_at: String,
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

/// The whole emulated forge.
#[derive(Clone, Serialize)]
pub(crate) struct State {
    pub(crate) users: Vec<UserRecord>,
    pub(crate) repository: RepositoryRecord,
    pub(crate) pull_requests: Vec<PullRequestRecord>,
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
            },
            pull_requests: Vec::new(),
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
            draft: spec.draft,
            fork: spec.fork,
            head_ref: spec.head.clone(),
            head_sha: repo.head_sha.clone(),
            base_ref: spec.base.clone(),
            base_sha: repo.base_sha.clone(),
            html_url: format!("{}/pull/{}", state.repository.html_url, spec.number),
            created_at: created_at.clone(),
            updated_at: created_at,
            threads: Vec::new(),
            issue_comments: Vec::new(),
            reviews: Vec::new(),
        };

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
            let mut record = ThreadRecord {
                database_id: thread_db_id,
                id: ids::node_id(NodeKind::ReviewThread, thread_db_id),
                path: thread.path.clone(),
                original_line: thread.line,
                original_start_line: thread.start_line,
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
                author: comment.author.clone(),
                body: comment.body.clone(),
                created_at: state.tick(),
            });
        }
        state.pull_requests.push(pr);
        state
    }

    fn next_id(&mut self) -> u64 {
        let id = self.next_database_id;
        self.next_database_id += 1;
        id
    }

    /// The current time, then advances the clock by a minute.
    fn tick(&mut self) -> String {
        let now = ids::iso8601(self.clock);
        self.clock += 60;
        now
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

    /// The pull request with this number.
    pub(crate) fn pull_request(&self, number: u64) -> Option<&PullRequestRecord> {
        self.pull_requests.iter().find(|p| p.number == number)
    }

    /// Records that a branch now points to `new_sha`; returns the pull
    /// requests whose head moved, with their previous head.
    pub(crate) fn move_branch(&mut self, branch: &str, new_sha: &str) -> Vec<HeadMoved> {
        let mut moved = Vec::new();
        let now = ids::iso8601(self.clock);
        for pr in &mut self.pull_requests {
            if pr.head_ref == branch && pr.head_sha != new_sha {
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
