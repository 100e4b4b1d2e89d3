//! The `Forge` trait: what the engine asks of GitHub or GitLab, and the
//! small types of its write side.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use shepherd_core::ci::{CheckConclusion, CheckStatus};
use shepherd_core::marker::Marker;
use shepherd_core::model::{
    Author, ForgeKind, PrSnapshot, PullRequest, RepoRef, ReviewState, ReviewThread, TopLevelComment,
};

use crate::ci::{CheckRun, CombinedStatus, RequiredChecks, StatusRollup, WorkflowRun};
use crate::error::{ForgeError, Result};

/// The review thread a reply goes into: the thread's node id and the REST id
/// of its root comment (GitHub replies to the root; replies to replies are
/// not supported). On GitLab: the discussion id and the id of its first note
/// (the reply is a note on the discussion).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ThreadRef {
    /// The thread's node id (`PRRT_…`) or GitLab discussion id: what the
    /// marker names.
    pub thread_id: String,
    /// The REST id of the thread's root comment (`databaseId`, GitLab note id).
    pub root_comment_id: u64,
}

impl ThreadRef {
    /// The reference of `thread`, when its root comment has a REST id.
    pub fn of(thread: &ReviewThread) -> Option<ThreadRef> {
        Some(ThreadRef {
            thread_id: thread.id.clone(),
            root_comment_id: thread.root()?.database_id?,
        })
    }
}

/// An item Shepherd replies to, for [`Forge::find_marker_reply`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemRef {
    /// A review thread, by node id: the reply is in the thread.
    Thread(String),
    /// A top-level comment or review body, by node id (GitLab: note id):
    /// the reply is a conversation comment of the pull request (GitLab: a
    /// merge request note).
    TopLevel(String),
}

impl ItemRef {
    /// The item's id, as the marker names it.
    pub fn id(&self) -> &str {
        match self {
            ItemRef::Thread(id) | ItemRef::TopLevel(id) => id,
        }
    }
}

/// The editable fields of a pull request: what a metadata fix reads before
/// it edits, so the author's text is kept.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequestFields {
    /// The title.
    pub title: String,
    /// The description (GitHub body, GitLab description), Markdown.
    pub body: String,
    /// The label names.
    pub labels: Vec<String>,
}

/// What a user may do in the repository, as the forge says: what decides
/// whether their `/shepherd approve` command approves anything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserAccess {
    /// The login asked about.
    pub login: String,
    /// The forge's word for the role (GitHub `role_name`: `admin`,
    /// `maintain`, `write`, `triage`, `read`, `none`; GitLab: `developer`,
    /// `maintainer`, `owner`, `reporter`, `guest`, `none`).
    pub role: String,
    /// Write, maintain or admin on GitHub; Developer or above on GitLab.
    pub can_write: bool,
}

/// A label added to or removed from a pull request, as the forge records
/// it: who and when decide whether the approval label approves anything
/// (GitHub: the issue events `labeled` and `unlabeled`; GitLab: the merge
/// request's resource label events, `add` and `remove`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelEvent {
    /// The label's name.
    pub label: String,
    /// Added (`true`) or removed.
    pub added: bool,
    /// Who did it; `None` for a deleted account.
    pub actor: Option<Author>,
    /// When, as the forge reports it (RFC 3339).
    pub created_at: String,
}

/// A comment Shepherd posted (or found by its marker).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PostedComment {
    /// The node id (`PRRC_…`, `IC_…`).
    pub id: String,
    /// The REST id, when the forge gave one.
    pub database_id: Option<u64>,
    /// Web URL.
    pub url: String,
    /// The state of the review the comment belongs to (review comments
    /// only): never `Pending` for a reply [`Forge::reply_to_thread`] returns.
    pub review_state: Option<ReviewState>,
    /// Who posted it (compare with the viewer before trusting a found marker
    /// that another account could have written).
    pub author: Option<Author>,
    /// The marker in its body, as read back from the forge.
    pub marker: Option<Marker>,
}

/// The error of an operation a forge client does not implement.
/// The JSON fields of a pull request edit: `title` and the description,
/// which the forge names `body_field`; empty when nothing is to change.
pub(crate) fn edit_fields(
    title: Option<&str>,
    body: Option<&str>,
    body_field: &str,
) -> serde_json::Map<String, serde_json::Value> {
    let mut fields = serde_json::Map::new();
    if let Some(title) = title {
        fields.insert("title".into(), title.into());
    }
    if let Some(body) = body {
        fields.insert(body_field.into(), body.into());
    }
    fields
}

fn unsupported<T>(operation: &'static str) -> Result<T> {
    Err(ForgeError::Unsupported { operation })
}

/// One repository on one forge, as seen by one token.
///
/// Used as `Arc<dyn Forge>`. Implementations retry reads on transient
/// failures. Mutations are never retried blindly: each is sent once (resent
/// only when the forge refused it with a rate limit, which means it was not
/// processed). After a failed reply, the caller MUST call
/// [`Forge::find_marker_reply`] before posting again: a reply whose answer was
/// lost (a 502, a timeout, a crash) may have landed, and its marker says so.
///
/// The write and CI methods have default bodies answering
/// [`ForgeError::Unsupported`], so that a fake or a partial client fails
/// closed rather than pretending.
#[async_trait]
pub trait Forge: Send + Sync {
    /// Which forge this is.
    fn kind(&self) -> ForgeKind;

    /// The repository this client talks about.
    fn repo(&self) -> &RepoRef;

    /// The login of the account the token belongs to.
    async fn viewer(&self) -> Result<String>;

    /// The state of pull request `number`.
    async fn pull_request(&self, number: u64) -> Result<PullRequest>;

    /// Every unresolved review thread of `number`, outdated ones included,
    /// each with every comment (oldest first), in forge order.
    async fn review_threads(&self, number: u64) -> Result<Vec<ReviewThread>>;

    /// The conversation comments of `number` and the non-empty bodies of its
    /// submitted reviews, oldest first.
    async fn top_level_comments(&self, number: u64) -> Result<Vec<TopLevelComment>>;

    /// Replies `body` in the review thread `thread` of pull request `number`,
    /// then reads the reply back: it must exist, and must not belong to a
    /// PENDING review ([`ForgeError::ReplyInPendingReview`]). Sent once.
    async fn reply_to_thread(
        &self,
        number: u64,
        thread: &ThreadRef,
        body: &str,
    ) -> Result<PostedComment> {
        let _ = (number, thread, body);
        unsupported("reply_to_thread")
    }

    /// Posts `body` as a conversation comment of `number` (the reply to a
    /// top-level item). Sent once.
    async fn post_issue_comment(&self, number: u64, body: &str) -> Result<PostedComment> {
        let _ = (number, body);
        unsupported("post_issue_comment")
    }

    /// The latest comment of `viewer` (the account Shepherd posts as,
    /// [`Forge::viewer`]) carrying Shepherd's marker for `item`: in the
    /// thread (resolved or not) for a thread, among the conversation comments
    /// of `number` for a top-level item. Called before any re-post, so that a
    /// retried or crashed reply never doubles. Anyone else's comment is never
    /// the reply, whatever marker it carries (markers are plain text: a
    /// pasted one must not pass for a reply that was never posted).
    async fn find_marker_reply(
        &self,
        number: u64,
        item: &ItemRef,
        viewer: &str,
    ) -> Result<Option<PostedComment>> {
        let _ = (number, item, viewer);
        unsupported("find_marker_reply")
    }

    /// Every comment of `viewer` carrying Shepherd's marker for `item`,
    /// oldest first, where [`Forge::find_marker_reply`] looks: what settles
    /// a reply two runs posted at once (the earliest is the reply). As
    /// there, anyone else's comment is never one of them.
    async fn find_marker_replies(
        &self,
        number: u64,
        item: &ItemRef,
        viewer: &str,
    ) -> Result<Vec<PostedComment>> {
        let _ = (number, item, viewer);
        unsupported("find_marker_replies")
    }

    /// Deletes the comment with REST id `comment_id` that replies to `item`
    /// of `number`: a review comment for a thread (GitLab: a note of the
    /// discussion), a conversation comment for a top-level item (GitLab: a
    /// note of the merge request). A comment that is gone already (404) is
    /// success. Sent once. Only ever called for the viewer's own reply.
    async fn delete_comment(&self, number: u64, item: &ItemRef, comment_id: u64) -> Result<()> {
        let _ = (number, item, comment_id);
        unsupported("delete_comment")
    }

    /// Resolves the review thread `thread_id`; resolving a resolved thread
    /// succeeds (without a call where the forge would record a second
    /// resolve: GitLab). Sent once; after a transient failure, the thread is
    /// re-read and the resolve sent once more only if it is still unresolved.
    ///
    /// GitLab addresses a discussion through its merge request: its client
    /// knows the merge request of every thread it has read or replied to,
    /// and the one it is bound to (`GitLabClient::with_merge_request`).
    async fn resolve_thread(&self, thread_id: &str) -> Result<()> {
        let _ = thread_id;
        unsupported("resolve_thread")
    }

    /// The title, description and labels of `number`, as they are now.
    async fn pull_request_fields(&self, number: u64) -> Result<PullRequestFields> {
        let _ = number;
        unsupported("pull_request_fields")
    }

    /// What `login` may do in the repository (GitHub: the collaborator
    /// permission API; GitLab: the project's members, inherited ones
    /// included). Someone who is not a collaborator or member has role
    /// `none`.
    async fn user_access(&self, login: &str) -> Result<UserAccess> {
        let _ = login;
        unsupported("user_access")
    }

    /// Every label event of `number`, oldest first (each page).
    async fn label_events(&self, number: u64) -> Result<Vec<LabelEvent>> {
        let _ = number;
        unsupported("label_events")
    }

    /// Sets the title and/or the body of `number` (nothing is sent when both
    /// are `None`). Sent once.
    async fn update_pull_request(
        &self,
        number: u64,
        title: Option<&str>,
        body: Option<&str>,
    ) -> Result<()> {
        let _ = (number, title, body);
        unsupported("update_pull_request")
    }

    /// Adds `labels` to `number` (labels already there stay). Sent once.
    async fn add_labels(&self, number: u64, labels: &[String]) -> Result<()> {
        let _ = (number, labels);
        unsupported("add_labels")
    }

    /// Removes `label` from `number`; a label already absent is fine.
    async fn remove_label(&self, number: u64, label: &str) -> Result<()> {
        let _ = (number, label);
        unsupported("remove_label")
    }

    /// The latest check runs of commit `sha`, every page. Conditional (ETag).
    async fn check_runs(&self, sha: &str) -> Result<Vec<CheckRun>> {
        let _ = sha;
        unsupported("check_runs")
    }

    /// What the forge shows of the reviews of PR `number` on commit `head`
    /// (issue 27: the reviewers a run waits for): its reviews with their
    /// commit, the head's statuses and check runs with who made them, whom
    /// review is requested from, and the conversation's comments, each with
    /// the forge's own times.
    async fn reviewer_activity(
        &self,
        number: u64,
        head: &str,
    ) -> Result<shepherd_core::reviewers::Activity> {
        let _ = (number, head);
        unsupported("reviewer_activity")
    }

    /// Ask `logins` to review PR `number` (again): GitHub's requested
    /// reviewers, GitLab's merge request reviewers.
    async fn request_review(&self, number: u64, logins: &[String]) -> Result<()> {
        let _ = (number, logins);
        unsupported("request_review")
    }

    /// What a check printed, to read why it failed: an Actions job's log
    /// (GitHub answers its logs route with a redirect to the file), a GitLab
    /// job's trace, or for a check run of another app its output (title,
    /// summary, text). Untrusted text, as the CI wrote it.
    async fn check_log(&self, check: &CheckRun) -> Result<String> {
        let _ = check;
        unsupported("check_log")
    }

    /// The combined legacy status of commit `sha`. Conditional (ETag).
    async fn combined_status(&self, sha: &str) -> Result<CombinedStatus> {
        let _ = sha;
        unsupported("combined_status")
    }

    /// The status rollup of the head commit of `number`, with `isRequired`.
    async fn status_check_rollup(&self, number: u64) -> Result<StatusRollup> {
        let _ = number;
        unsupported("status_check_rollup")
    }

    /// The checks required for `number` (base branch `base_ref`), from every
    /// source that answers. A source that fails is recorded, not fatal; when
    /// none answers, the set is `Unknown` (the caller then counts every check).
    async fn required_checks(&self, number: u64, base_ref: &str) -> Result<RequiredChecks> {
        let _ = (number, base_ref);
        unsupported("required_checks")
    }

    /// The workflow runs of commit `head_sha`, every page. Conditional (ETag).
    async fn workflow_runs(&self, head_sha: &str) -> Result<Vec<WorkflowRun>> {
        let _ = head_sha;
        unsupported("workflow_runs")
    }

    /// Re-runs the failed jobs of workflow run `run_id`. Sent once; the
    /// caller re-runs at most once per head SHA.
    async fn rerun_failed_jobs(&self, run_id: u64) -> Result<()> {
        let _ = run_id;
        unsupported("rerun_failed_jobs")
    }

    /// Re-runs the failed jobs of the CI of `head_sha`, the head of
    /// `number`: what the engine calls, at most once per head SHA, after a
    /// `FAIL` verdict. Returns the ids of what was re-run (GitHub: workflow
    /// runs; GitLab: the failed jobs), empty when nothing had failed. Each
    /// re-run is sent once.
    ///
    /// The default re-runs, through [`Forge::workflow_runs`] and
    /// [`Forge::rerun_failed_jobs`], every completed run of `head_sha` that
    /// failed, was cancelled, timed out or could not start.
    async fn rerun_failed_checks(&self, number: u64, head_sha: &str) -> Result<Vec<u64>> {
        let _ = number;
        let mut rerun = Vec::new();
        for run in self.workflow_runs(head_sha).await? {
            let failed = run.status == CheckStatus::Completed
                && matches!(
                    run.conclusion,
                    Some(
                        CheckConclusion::Failure
                            | CheckConclusion::Cancelled
                            | CheckConclusion::TimedOut
                            | CheckConclusion::StartupFailure
                    )
                );
            if failed {
                self.rerun_failed_jobs(run.id).await?;
                rerun.push(run.id);
            }
        }
        Ok(rerun)
    }

    /// Everything a round starts from: the PR, the viewer, the unresolved
    /// threads and the top-level comments, read concurrently (the viewer
    /// after the PR, which a client may learn it from). None of the reads
    /// waits for another, so a snapshot takes as many steps as its longest
    /// read: the thread pages.
    async fn snapshot(&self, number: u64) -> Result<PrSnapshot> {
        let pr_and_viewer = async {
            let pr = self.pull_request(number).await?;
            let viewer = self.viewer().await?;
            Ok::<_, ForgeError>((pr, viewer))
        };
        // Every read runs to its end, and a failure is told in this fixed
        // order (the PR first): which request is named does not depend on
        // which answer came back first.
        let (pr_and_viewer, threads, comments) = tokio::join!(
            pr_and_viewer,
            self.review_threads(number),
            self.top_level_comments(number)
        );
        let (pr, viewer) = pr_and_viewer?;
        let (threads, comments) = (threads?, comments?);
        Ok(PrSnapshot {
            forge: self.kind(),
            repo: self.repo().clone(),
            viewer,
            pr,
            threads,
            comments,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    use shepherd_core::model::TopLevelKind;

    use super::*;

    /// A forge that records the order of calls; `viewer` is known only after
    /// `pull_request`, as on GitHub.
    #[derive(Default)]
    struct Recording {
        calls: Mutex<Vec<&'static str>>,
        viewer_fetches: AtomicUsize,
        repo: Option<RepoRef>,
    }

    #[async_trait]
    impl Forge for Recording {
        fn kind(&self) -> ForgeKind {
            ForgeKind::GitHub
        }
        fn repo(&self) -> &RepoRef {
            self.repo.as_ref().unwrap()
        }
        async fn viewer(&self) -> Result<String> {
            self.calls.lock().unwrap().push("viewer");
            self.viewer_fetches.fetch_add(1, Ordering::SeqCst);
            Ok("me".into())
        }
        async fn pull_request(&self, number: u64) -> Result<PullRequest> {
            self.calls.lock().unwrap().push("pull_request");
            Ok(shepherd_core::testing::pull_request(number))
        }
        async fn review_threads(&self, _number: u64) -> Result<Vec<ReviewThread>> {
            self.calls.lock().unwrap().push("review_threads");
            Ok(Vec::new())
        }
        async fn top_level_comments(&self, _number: u64) -> Result<Vec<TopLevelComment>> {
            self.calls.lock().unwrap().push("top_level_comments");
            Ok(vec![TopLevelComment {
                id: "IC_1".into(),
                database_id: Some(1),
                kind: TopLevelKind::IssueComment,
                author: None,
                body: "b".into(),
                url: "u".into(),
                created_at: "2024-01-01T00:00:00Z".into(),
                review_state: None,
            }])
        }
    }

    /// A forge with workflow runs of every conclusion, recording re-runs.
    #[derive(Default)]
    struct Runs {
        rerun: Mutex<Vec<u64>>,
    }

    #[async_trait]
    impl Forge for Runs {
        fn kind(&self) -> ForgeKind {
            ForgeKind::GitHub
        }
        fn repo(&self) -> &RepoRef {
            unreachable!("not asked")
        }
        async fn viewer(&self) -> Result<String> {
            unreachable!("not asked")
        }
        async fn pull_request(&self, _number: u64) -> Result<PullRequest> {
            unreachable!("not asked")
        }
        async fn review_threads(&self, _number: u64) -> Result<Vec<ReviewThread>> {
            unreachable!("not asked")
        }
        async fn top_level_comments(&self, _number: u64) -> Result<Vec<TopLevelComment>> {
            unreachable!("not asked")
        }
        async fn workflow_runs(&self, head_sha: &str) -> Result<Vec<WorkflowRun>> {
            let run =
                |id: u64, status: CheckStatus, conclusion: Option<CheckConclusion>| WorkflowRun {
                    id,
                    name: None,
                    head_sha: head_sha.to_owned(),
                    status,
                    conclusion,
                    run_attempt: 1,
                    event: "push".into(),
                    url: String::new(),
                };
            Ok(vec![
                run(1, CheckStatus::Completed, Some(CheckConclusion::Success)),
                run(2, CheckStatus::Completed, Some(CheckConclusion::Failure)),
                run(3, CheckStatus::InProgress, None),
                run(4, CheckStatus::Completed, Some(CheckConclusion::TimedOut)),
                run(5, CheckStatus::Completed, Some(CheckConclusion::Skipped)),
                run(6, CheckStatus::Completed, Some(CheckConclusion::Cancelled)),
            ])
        }
        async fn rerun_failed_jobs(&self, run_id: u64) -> Result<()> {
            self.rerun.lock().unwrap().push(run_id);
            Ok(())
        }
    }

    #[tokio::test]
    async fn the_default_rerun_reruns_the_runs_that_failed() {
        let forge = Runs::default();
        let rerun = forge.rerun_failed_checks(7, "abc").await.unwrap();
        assert_eq!(rerun, [2, 4, 6]);
        assert_eq!(*forge.rerun.lock().unwrap(), [2, 4, 6]);
    }

    #[tokio::test]
    async fn unimplemented_writes_fail_closed() {
        let forge = Recording {
            repo: None,
            ..Recording::default()
        };
        let err = forge
            .find_marker_reply(1, &ItemRef::Thread("PRRT_1".into()), "me")
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                ForgeError::Unsupported {
                    operation: "find_marker_reply"
                }
            ),
            "{err:?}"
        );
        assert!(forge.resolve_thread("PRRT_1").await.is_err());
    }

    #[test]
    fn thread_ref_needs_the_root_rest_id() {
        let mut thread = shepherd_core::testing::thread("PRRT_1")
            .path("a.rs")
            .build();
        assert_eq!(ThreadRef::of(&thread), None);
        thread.comments.push(shepherd_core::model::Comment {
            id: "PRRC_1".into(),
            database_id: Some(77),
            author: None,
            body: "b".into(),
            url: "u".into(),
            created_at: "2024-01-01T00:00:00Z".into(),
            diff_hunk: None,
            review_state: None,
            review_submitted_at: None,
        });
        let got = ThreadRef::of(&thread).unwrap();
        assert_eq!(
            (got.thread_id.as_str(), got.root_comment_id),
            ("PRRT_1", 77)
        );
        assert_eq!(ItemRef::TopLevel("IC_1".into()).id(), "IC_1");
    }

    #[tokio::test]
    async fn snapshot_asks_the_viewer_after_the_pr_and_combines_everything() {
        let repo = RepoRef {
            host: "github.com".into(),
            owner: "o".into(),
            name: "r".into(),
        };
        let recording = Arc::new(Recording {
            repo: Some(repo.clone()),
            ..Recording::default()
        });
        let forge: Arc<dyn Forge> = recording.clone();
        let snapshot = forge.snapshot(7).await.unwrap();
        assert_eq!(snapshot.forge, ForgeKind::GitHub);
        assert_eq!(snapshot.repo, repo);
        assert_eq!(snapshot.viewer, "me");
        assert_eq!(snapshot.pr.number, 7);
        assert_eq!(snapshot.comments.len(), 1);
        let calls = recording.calls.lock().unwrap().clone();
        let at = |name: &str| calls.iter().position(|c| *c == name).unwrap();
        assert!(at("pull_request") < at("viewer"), "{calls:?}");
        assert_eq!(calls.len(), 4);
        assert_eq!(recording.viewer_fetches.load(Ordering::SeqCst), 1);
    }
}
