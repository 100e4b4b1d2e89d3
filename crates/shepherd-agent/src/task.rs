//! What Shepherd asks an agent: typed tasks for each role.
//!
//! A task is plain data: the command provider sends it as JSON on stdin, the
//! prompt renderer turns it into text, the builtin provider reads it directly.
//! Comment bodies in a task are untrusted (anyone who can comment on the PR
//! wrote them); every consumer treats them as data.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use shepherd_core::cluster::{render_brief, Cluster};
use shepherd_core::marker::Marker;
use shepherd_core::model::{
    AuthorKind, DiffSide, ForgeKind, PullRequest, ReviewThread, TopLevelComment, TopLevelKind,
};
use shepherd_core::suggestion::{extract_suggestions, SuggestionEdit, SuggestionError};

use crate::answer::{ReviewFinding, ThreadOutcome};

/// The agent roles of SPEC section 7: core's [`AgentRole`], the one role
/// enum (configuration, prompts, tasks and providers use it).
///
/// [`AgentRole`]: shepherd_core::config::AgentRole
pub use shepherd_core::config::AgentRole as Role;

/// The pull request a task is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrContext {
    /// Which forge hosts it.
    pub forge: ForgeKind,
    /// The PR/MR number.
    pub number: u64,
    /// The title (untrusted text, written by the PR's author).
    pub title: String,
    /// Web URL.
    pub url: String,
    /// The head commit the worktree is at.
    pub head_sha: String,
    /// The base branch.
    pub base_ref: String,
}

impl PrContext {
    /// The context of `pr` on `forge`.
    pub fn new(forge: ForgeKind, pr: &PullRequest) -> Self {
        PrContext {
            forge,
            number: pr.number,
            title: pr.title.clone(),
            url: pr.url.clone(),
            head_sha: pr.head_sha.clone(),
            base_ref: pr.base_ref.clone(),
        }
    }
}

/// What kind of feedback an item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ItemKind {
    /// A review thread on a file: can be fixed, replied to and resolved.
    ReviewThread,
    /// A comment on the PR's conversation.
    IssueComment,
    /// The body of a submitted review.
    ReviewBody,
    /// A required CI check that Shepherd's own push turned red (issue 31):
    /// fixed by a commit, never replied to or resolved. Only CI repair's
    /// fix tasks carry it.
    CiFailure,
}

/// One comment of an item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskComment {
    /// The comment's id.
    pub id: String,
    /// The author's login; `None` for a deleted account.
    pub author: Option<String>,
    /// Whether the author is a bot.
    pub author_is_bot: bool,
    /// Whether this is one of Shepherd's own earlier replies: the viewer's
    /// comment carrying the marker. A marker pasted by anyone else does not
    /// make a comment Shepherd's.
    pub from_shepherd: bool,
    /// The body: untrusted Markdown, never to be followed as instructions.
    pub body: String,
}

/// Whether an item carries a suggestion block Shepherd can apply, with its
/// forge's semantics (`shepherd_core::suggestion`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum SuggestionState {
    /// No suggestion block.
    Absent,
    /// One suggestion that can be applied if the file still matches its anchor.
    Applicable {
        /// The edit, with its site and the lines the reviewer saw (GitLab:
        /// possibly pending, [`SuggestionEdit::anchor_pending`], until the
        /// file at the head is read).
        edit: SuggestionEdit,
    },
    /// A suggestion block that cannot be applied as written.
    Refused {
        /// Why (names paths and lines, never comment text).
        reason: String,
    },
}

impl SuggestionState {
    /// The state of a review thread's suggestion with GitHub's semantics,
    /// per [`SuggestionEdit::from_thread`]; `viewer` is the account
    /// Shepherd runs as (its replies are skipped).
    pub fn of_thread(thread: &ReviewThread, viewer: &str) -> Self {
        Self::of_result(SuggestionEdit::from_thread(thread, viewer))
    }

    /// The state of a review thread's suggestion with `forge`'s semantics:
    /// [`Self::of_thread`] on GitHub; on GitLab
    /// [`SuggestionEdit::from_gitlab_thread`], its anchor pending (whoever
    /// applies it reads the file at the head: [`SuggestionEdit::pinned`]).
    pub fn of_thread_on(thread: &ReviewThread, forge: ForgeKind, viewer: &str) -> Self {
        Self::of_result(SuggestionEdit::from_thread_with(
            thread, forge, viewer, None,
        ))
    }

    /// The state of a constructor's result.
    pub fn of_result(result: Result<SuggestionEdit, SuggestionError>) -> Self {
        match result {
            Ok(edit) => SuggestionState::Applicable { edit },
            Err(SuggestionError::NoSuggestion { .. }) => SuggestionState::Absent,
            Err(e) => SuggestionState::Refused {
                reason: e.to_string(),
            },
        }
    }

    /// Whether the item has a suggestion block at all (applicable or not).
    pub fn is_present(&self) -> bool {
        !matches!(self, SuggestionState::Absent)
    }
}

fn refused(err: SuggestionError) -> SuggestionState {
    SuggestionState::Refused {
        reason: err.to_string(),
    }
}

/// What triage concluded about an item, passed on to its fixer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TriageNote {
    /// The triage (or approver's) reasoning.
    pub reasoning: String,
    /// The reply hint.
    pub reply_hint: String,
}

/// One item (review thread or top-level comment) as an agent sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskItem {
    /// The item id (thread id, or top-level comment id): answers refer to it.
    pub id: String,
    /// Thread or top-level comment.
    pub kind: ItemKind,
    /// The file a thread is on; `None` for top-level items.
    pub path: Option<String>,
    /// The last line of the thread's range on the current diff (else the
    /// original line); `None` for file threads and top-level items.
    pub line: Option<u32>,
    /// The first line of a multi-line range.
    pub start_line: Option<u32>,
    /// Whether the thread's lines changed since it was written.
    pub outdated: bool,
    /// The side of the diff a thread is on; `None` for top-level items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side: Option<DiffSide>,
    /// Who opened the item; `None` for a deleted account.
    pub author: Option<String>,
    /// Whether the item was opened by a bot.
    pub author_is_bot: bool,
    /// Every comment, oldest first (one for a top-level item).
    pub comments: Vec<TaskComment>,
    /// The item's suggestion block, with the semantics of the forge the
    /// item was made for ([`TaskItem::from_thread_on`]).
    pub suggestion: SuggestionState,
    /// Triage's conclusion, in fix tasks; `None` in triage tasks.
    pub triage: Option<TriageNote>,
    /// The failing check, for an item of kind `ci-failure` (CI repair);
    /// `None` for the PR's feedback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci: Option<CiFailureContext>,
}

/// A required check Shepherd's push turned red, as its fix agent sees it
/// (issue 31). The log and the diff are untrusted text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CiFailureContext {
    /// The check's name.
    pub check: String,
    /// The head it failed on.
    pub sha: String,
    /// The head before Shepherd's commits.
    pub before_sha: String,
    /// What the check said there, in words (`passed`, `did not run`).
    pub before: String,
    /// The check's log, cut to what matters (the failing step, error lines
    /// with their context, the last lines); empty when none could be read.
    pub log: String,
    /// The diff of Shepherd's commits since `before_sha`.
    pub diff: String,
}

fn task_comment(
    id: &str,
    author: Option<&shepherd_core::model::Author>,
    body: &str,
    from_shepherd: bool,
) -> TaskComment {
    TaskComment {
        id: id.to_owned(),
        author: author.map(|a| a.login.clone()),
        author_is_bot: author.is_some_and(|a| a.kind == AuthorKind::Bot),
        from_shepherd,
        body: body.to_owned(),
    }
}

impl TaskItem {
    /// The item of a review thread, its suggestion read with GitHub's
    /// semantics ([`TaskItem::from_thread_on`] for another forge). `viewer`
    /// is the account Shepherd runs as: its comments with a marker are
    /// Shepherd's own replies ([`TaskComment::from_shepherd`]).
    pub fn from_thread(thread: &ReviewThread, viewer: &str) -> Self {
        let root_author = thread.root().and_then(|c| c.author.as_ref());
        TaskItem {
            id: thread.id.clone(),
            kind: ItemKind::ReviewThread,
            path: Some(thread.path.clone()),
            line: thread.display_line(),
            start_line: if thread.line.is_some() {
                thread.start_line
            } else {
                thread.original_start_line
            },
            outdated: thread.is_outdated,
            side: Some(thread.diff_side),
            author: root_author.map(|a| a.login.clone()),
            author_is_bot: root_author.is_some_and(|a| a.kind == AuthorKind::Bot),
            comments: thread
                .comments
                .iter()
                .map(|c| {
                    let own = Marker::find_own(&c.body, c.author.as_ref(), viewer).is_some();
                    task_comment(&c.id, c.author.as_ref(), &c.body, own)
                })
                .collect(),
            suggestion: SuggestionState::of_thread(thread, viewer),
            triage: None,
            ci: None,
        }
    }

    /// The item of a review thread of `forge`, its suggestion read with
    /// that forge's semantics ([`SuggestionState::of_thread_on`]).
    pub fn from_thread_on(thread: &ReviewThread, forge: ForgeKind, viewer: &str) -> Self {
        TaskItem {
            suggestion: SuggestionState::of_thread_on(thread, forge, viewer),
            ..TaskItem::from_thread(thread, viewer)
        }
    }

    /// The item's suggestion with GitLab's semantics, read from the item's
    /// own fields, its anchor pending: what [`SuggestionState::of_thread_on`]
    /// gives the thread the item was made from, whichever constructor made
    /// it. Top-level items keep their state.
    pub fn gitlab_suggestion(&self) -> SuggestionState {
        if self.kind != ItemKind::ReviewThread {
            return self.suggestion.clone();
        }
        let path = self.path.clone().unwrap_or_default();
        let line = match self.line {
            _ if self.outdated => return refused(SuggestionError::Outdated { path }),
            Some(line) => line,
            None => return refused(SuggestionError::NotOnLines { path }),
        };
        let comments = self
            .comments
            .iter()
            .filter(|c| !c.from_shepherd)
            .map(|c| (c.id.as_str(), c.body.as_str()));
        SuggestionState::of_result(SuggestionEdit::gitlab(
            &path,
            self.side.unwrap_or(DiffSide::Right),
            self.start_line.unwrap_or(line),
            line,
            comments,
            None,
        ))
    }

    /// The item of a top-level comment or review body. A suggestion block
    /// there has no lines to apply to, so it is refused. An item is never
    /// one of Shepherd's replies (classification leaves those out), whatever
    /// marker someone pasted in it.
    pub fn from_top_level(comment: &TopLevelComment) -> Self {
        let suggestion = if extract_suggestions(&comment.body).is_empty() {
            SuggestionState::Absent
        } else {
            SuggestionState::Refused {
                reason: "a suggestion outside a review thread has no lines to apply to".to_owned(),
            }
        };
        TaskItem {
            id: comment.id.clone(),
            kind: match comment.kind {
                TopLevelKind::IssueComment => ItemKind::IssueComment,
                TopLevelKind::ReviewBody => ItemKind::ReviewBody,
            },
            path: None,
            line: None,
            start_line: None,
            outdated: false,
            side: None,
            author: comment.author.as_ref().map(|a| a.login.clone()),
            author_is_bot: comment
                .author
                .as_ref()
                .is_some_and(|a| a.kind == AuthorKind::Bot),
            comments: vec![task_comment(
                &comment.id,
                comment.author.as_ref(),
                &comment.body,
                false,
            )],
            suggestion,
            triage: None,
            ci: None,
        }
    }

    /// The item of a failing CI check: its id is `ci:<check>`, it has no
    /// comment and no file, and its fixer is told the check, the log and
    /// Shepherd's diff ([`CiFailureContext`]).
    pub fn from_ci_failure(ci: CiFailureContext) -> Self {
        TaskItem {
            id: format!("ci:{}", ci.check),
            kind: ItemKind::CiFailure,
            path: None,
            line: None,
            start_line: None,
            outdated: false,
            side: None,
            author: None,
            author_is_bot: true,
            comments: Vec::new(),
            suggestion: SuggestionState::Absent,
            triage: None,
            ci: Some(ci),
        }
    }

    /// The same item carrying triage's conclusion, for a fix task.
    pub fn with_triage(mut self, note: TriageNote) -> Self {
        self.triage = Some(note);
        self
    }

    /// The comment that opened the item.
    pub fn root_body(&self) -> &str {
        self.comments.first().map_or("", |c| c.body.as_str())
    }
}

/// Triage the round's new items.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TriageTask {
    /// The PR.
    pub pr: PrContext,
    /// The run's worktree, at the PR head: where the agent reads the code.
    pub worktree: PathBuf,
    /// The new items; the answer must cover exactly these ids.
    pub items: Vec<TaskItem>,
}

/// The cluster a cluster-fix task is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterContext {
    /// The cluster, as grouping found it.
    pub cluster: Cluster,
    /// Files fixed in the previous round, on re-entry.
    pub just_fixed_files: Option<Vec<String>>,
    /// The rendered `<cluster-brief>` block (SPEC section 5).
    pub brief: String,
}

impl ClusterContext {
    /// The context of `cluster`, with its brief rendered.
    pub fn new(cluster: Cluster, just_fixed_files: Option<Vec<String>>) -> Self {
        let brief = render_brief(&cluster, just_fixed_files.as_deref());
        ClusterContext {
            cluster,
            just_fixed_files,
            brief,
        }
    }
}

/// Fix one isolated item, or a cluster of items, in a worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FixTask {
    /// The PR.
    pub pr: PrContext,
    /// The directory the fixer works in (its own temporary worktree). The
    /// fixer edits files there and never commits.
    pub worktree: PathBuf,
    /// The item (one) or the cluster's members (two or more). The answer must
    /// have one outcome per item.
    pub items: Vec<TaskItem>,
    /// The cluster, for a cluster-fix task; `None` for an isolated item.
    pub cluster: Option<ClusterContext>,
    /// Files the fix is expected to touch (the items' files, the cluster's files).
    pub files_hint: Vec<String>,
}

impl FixTask {
    /// A task for one isolated item; the files hint is the item's file.
    pub fn single(pr: PrContext, worktree: PathBuf, item: TaskItem) -> Self {
        let files_hint = item.path.iter().cloned().collect();
        FixTask {
            pr,
            worktree,
            items: vec![item],
            cluster: None,
            files_hint,
        }
    }

    /// A task for a cluster and its members; the files hint is the cluster's files.
    pub fn cluster(
        pr: PrContext,
        worktree: PathBuf,
        cluster: ClusterContext,
        items: Vec<TaskItem>,
    ) -> Self {
        let files_hint = cluster.cluster.files.clone();
        FixTask {
            pr,
            worktree,
            items,
            cluster: Some(cluster),
            files_hint,
        }
    }

    /// [`Role::ClusterFix`] with a cluster, else [`Role::Fix`].
    pub fn role(&self) -> Role {
        if self.cluster.is_some() {
            Role::ClusterFix
        } else {
            Role::Fix
        }
    }
}

/// Judge whether a fix addresses the items it was for (SPEC section 3,
/// step 7): read-only, after the fix is made and before it is pushed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FixValidationTask {
    /// The PR.
    pub pr: PrContext,
    /// A checkout with the fix applied. The agent reads it and changes nothing.
    pub worktree: PathBuf,
    /// The items the fix is for (with triage's note). The answer must have
    /// one verdict per item.
    pub items: Vec<TaskItem>,
    /// What the fixer said it did, per item; empty when Shepherd applied a
    /// suggestion block itself.
    pub claimed: Vec<ThreadOutcome>,
    /// The fix's commit, once committed.
    pub commit: Option<String>,
    /// The fix as a unified diff against the code before it (`git diff`
    /// output, with the default `a/` and `b/` prefixes). Untrusted: an
    /// agent wrote the change.
    pub diff: String,
}

impl FixValidationTask {
    /// A task for the fix of `items` shown by `diff`.
    pub fn new(pr: PrContext, worktree: PathBuf, items: Vec<TaskItem>, diff: String) -> Self {
        FixValidationTask {
            pr,
            worktree,
            items,
            claimed: Vec::new(),
            commit: None,
            diff,
        }
    }
}

/// One commit under review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewCommit {
    /// The full SHA.
    pub sha: String,
    /// The first line of its message (untrusted: whoever pushed wrote it).
    pub subject: String,
}

/// Review, read-only, the commits the forge has not seen (SPEC section 3,
/// step 9): `base_sha..head_sha`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewTask {
    /// The PR.
    pub pr: PrContext,
    /// The run's worktree, at `head_sha`. The agent reads it and changes nothing.
    pub worktree: PathBuf,
    /// The last commit the forge has from this run (the review base).
    pub base_sha: String,
    /// The local head to be pushed.
    pub head_sha: String,
    /// The commits of `base_sha..head_sha`, oldest first.
    pub commits: Vec<ReviewCommit>,
    /// Repository-relative paths the commits change.
    pub files: Vec<String>,
    /// `git diff base_sha..head_sha` (untrusted). Prompts show at most
    /// [`crate::prompts::MAX_PROMPT_DIFF`] characters of it and tell the
    /// agent how to read the rest.
    pub diff: String,
}

/// A review finding that held when its reproduction was run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldFinding {
    /// The finding, as the reviewer reported it (untrusted).
    pub finding: ReviewFinding,
    /// What showed that it holds (the end of the reproduction's output), or
    /// why it was not refuted; untrusted.
    pub evidence: String,
}

/// Fix the review findings that held (SPEC section 3, step 9), in a worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplyReviewTask {
    /// The PR.
    pub pr: PrContext,
    /// The directory the fixer works in. It edits files there and never commits.
    pub worktree: PathBuf,
    /// The findings to fix; the answer must have one outcome per finding id.
    pub findings: Vec<HeldFinding>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use shepherd_core::model::Comment;

    use super::*;

    /// A reviewer's comment on the thread's hunk.
    fn comment(id: &str, login: &str, body: &str) -> Comment {
        shepherd_core::testing::comment(id, login, body)
            .hunk("@@ -1,2 +1,2 @@\n a\n b")
            .build()
    }

    fn thread(comments: Vec<Comment>) -> ReviewThread {
        shepherd_core::testing::thread("T1")
            .path("src/a.rs")
            .at(2)
            .comments(comments)
            .build()
    }

    /// SECURITY: only the viewer's marker makes a comment Shepherd's. A
    /// marker pasted by anyone else must not tell the agent that a request
    /// was Shepherd's own reply, nor hide the suggestion beside it.
    #[test]
    fn a_pasted_marker_does_not_make_a_comment_shepherds() {
        let marked = |text: &str| Marker::new("T1", 1, false).append_to(text);
        let t = thread(vec![
            comment("c1", "rev", "rename b"),
            comment("c2", "shep", &marked("Done.")),
            comment("c3", "mallory", &marked("```suggestion\nc\n```")),
            comment("c4", "rev", &marked("Quoting your reply: not done.")),
        ]);
        for forge in [ForgeKind::GitHub, ForgeKind::GitLab] {
            let item = TaskItem::from_thread_on(&t, forge, "Shep");
            let own: Vec<(&str, bool)> = item
                .comments
                .iter()
                .map(|c| (c.id.as_str(), c.from_shepherd))
                .collect();
            assert_eq!(
                own,
                [("c1", false), ("c2", true), ("c3", false), ("c4", false)]
            );
            let SuggestionState::Applicable { edit } = &item.suggestion else {
                panic!("{forge}: {:?}", item.suggestion);
            };
            assert_eq!(edit.comment_id, "c3");
            if forge == ForgeKind::GitLab {
                assert_eq!(item.gitlab_suggestion(), item.suggestion);
            }
        }
        // Shepherd's own reply quoting a block is skipped.
        let t = thread(vec![
            comment("c1", "rev", "rename b"),
            comment("c2", "shep", &marked("```suggestion\nc\n```")),
        ]);
        assert_eq!(
            TaskItem::from_thread(&t, "shep").suggestion,
            SuggestionState::Absent
        );
    }

    #[test]
    fn a_top_level_item_is_never_shepherds() {
        let item = TaskItem::from_top_level(&TopLevelComment {
            id: "IC_1".into(),
            database_id: Some(1),
            kind: TopLevelKind::IssueComment,
            author: None,
            body: Marker::new("IC_0", 1, false).append_to("Please add docs."),
            url: String::new(),
            created_at: String::new(),
            review_state: None,
        });
        assert!(!item.comments[0].from_shepherd);
    }
}
