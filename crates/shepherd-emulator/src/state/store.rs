//! The [`State`]: built from a scenario, its clock and ids, and the
//! lookups handlers read it through.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::Serialize;

use super::records::{
    BotPost, BotProgress, DiffVersionRecord, IssueCommentRecord, LabelEventRecord, LabelRecord,
    PullRequestRecord, RepositoryRecord, ReviewCommentRecord, ReviewRecord, ThreadRecord,
    UserRecord,
};
use crate::ci_state::CiState;
use crate::git::{self, CreatedRepository, Hunk};
use crate::hunk::{one_line_hunk, DiffHunk};
use crate::ids::{self, NodeKind};
use crate::scenario::{
    EmulatedForge, PullRequestStatus, ReviewStateSpec, Scenario, Side, UserKind,
};

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
    /// What each profiled bot did on each pull request.
    pub(crate) bot_progress: Vec<BotProgress>,
    /// Bumped by every reset: background work of an older epoch is dropped.
    pub(crate) epoch: u64,
    /// Next database id; shared by all kinds, as ids only need to be unique.
    pub(super) next_database_id: u64,
    /// The emulator's clock (seconds since the epoch); advances one minute
    /// per created object so timestamps are deterministic and ordered.
    pub(super) clock: i64,
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
            bot_progress: Vec::new(),
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
            requested_reviewers: Vec::new(),
            unlisted_reviewers: Vec::new(),
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
            let at = state.tick();
            pr.issue_comments.push(IssueCommentRecord::new(
                database_id,
                &comment.author,
                &comment.body,
                at,
            ));
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

    pub(super) fn implicit_review(
        &mut self,
        pr: &mut PullRequestRecord,
        author: &str,
        commit: &str,
    ) -> u64 {
        let database_id = self.next_id();
        let created_at = self.tick();
        pr.reviews.push(ReviewRecord::commented(
            database_id,
            author,
            commit.to_owned(),
            created_at,
        ));
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

/// The one-line hunk of a scenario's comment on a line outside the diff.
pub(super) fn fallback_hunk(scenario: &Scenario, path: &str, line: u32, left: bool) -> String {
    let tree = if left { &scenario.base } else { &scenario.head };
    let text = tree
        .get(path)
        .map(|f| String::from_utf8_lossy(&f.contents).into_owned())
        .unwrap_or_default();
    one_line_hunk(&text, line)
}
