//! The shapes of GitHub's GraphQL answers, and their translation into
//! `shepherd_core::model` types.
//!
//! Enum values GitHub may extend (review states, diff sides) are read as
//! strings and mapped leniently; the pull request's state, which decisions
//! hang on, is mapped strictly.

use serde::Deserialize;
use shepherd_core::ci::{CheckConclusion, CheckSource, CheckState, CheckStatus};
use shepherd_core::model::{
    Author, AuthorKind, Comment, DiffSide, PrStatus, PullRequest, ReviewState, ReviewThread,
    SubjectType, TopLevelComment, TopLevelKind,
};

use crate::intern::Interner;

/// A GraphQL connection's `pageInfo`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PageInfo {
    pub(crate) has_next_page: bool,
    pub(crate) end_cursor: Option<String>,
}

/// A GraphQL connection: `nodes` is a nullable list of nullable items.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Connection<T> {
    #[serde(default)]
    pub(crate) page_info: PageInfo,
    #[serde(default)]
    pub(crate) total_count: Option<u64>,
    #[serde(default = "Option::default")]
    pub(crate) nodes: Option<Vec<Option<T>>>,
}

impl<T> Connection<T> {
    /// The non-null nodes, in order.
    pub(crate) fn into_nodes(self) -> impl Iterator<Item = T> {
        self.nodes.into_iter().flatten().flatten()
    }
}

/// `repository { pullRequest { … } }`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RepositoryData<T> {
    pub(crate) repository: Option<PullRequestData<T>>,
}

/// `pullRequest { … }`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PullRequestData<T> {
    pub(crate) pull_request: Option<T>,
}

impl<T> RepositoryData<T> {
    /// The pull request, if both the repository and the PR resolved.
    pub(crate) fn into_pull_request(self) -> Option<T> {
        self.repository?.pull_request
    }
}

/// An `Actor` with its concrete type.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ActorWire {
    #[serde(rename = "__typename", default)]
    pub(crate) typename: Option<String>,
    pub(crate) login: String,
}

/// `viewer { login }`.
#[derive(Debug, Deserialize)]
pub(crate) struct ViewerWire {
    pub(crate) login: String,
}

/// The answer to `Viewer`.
#[derive(Debug, Deserialize)]
pub(crate) struct ViewerData {
    pub(crate) viewer: ViewerWire,
}

/// The answer to `PullRequestState`.
#[derive(Debug, Deserialize)]
pub(crate) struct PullRequestStateData {
    pub(crate) viewer: ViewerWire,
    pub(crate) repository: Option<PullRequestData<PullRequestWire>>,
}

impl PullRequestStateData {
    /// The viewer's login and the pull request, if the repository and the PR resolved.
    pub(crate) fn into_parts(self) -> (String, Option<PullRequestWire>) {
        let pr = self.repository.and_then(|r| r.pull_request);
        (self.viewer.login, pr)
    }
}

/// The author of a pending review.
#[derive(Debug, Deserialize)]
pub(crate) struct ReviewAuthorWire {
    pub(crate) author: Option<ActorWire>,
}

/// `pullRequest` in `PullRequestState`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PullRequestWire {
    pub(crate) id: String,
    pub(crate) number: u64,
    pub(crate) title: String,
    pub(crate) url: String,
    pub(crate) state: String,
    pub(crate) is_draft: bool,
    pub(crate) head_ref_name: String,
    pub(crate) head_ref_oid: String,
    pub(crate) base_ref_name: String,
    pub(crate) is_cross_repository: bool,
    pub(crate) author: Option<ActorWire>,
    pub(crate) reviews: Option<Connection<ReviewAuthorWire>>,
}

/// `pullRequest.reviewThreads` in `ReviewThreads`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReviewThreadsPr {
    pub(crate) review_threads: Connection<ThreadWire>,
}

/// One review thread.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadWire {
    pub(crate) id: String,
    pub(crate) is_resolved: bool,
    pub(crate) is_outdated: bool,
    pub(crate) path: String,
    pub(crate) line: Option<u32>,
    pub(crate) start_line: Option<u32>,
    pub(crate) original_line: Option<u32>,
    pub(crate) original_start_line: Option<u32>,
    pub(crate) diff_side: String,
    pub(crate) subject_type: Option<String>,
    pub(crate) viewer_can_reply: bool,
    pub(crate) viewer_can_resolve: bool,
    pub(crate) comments: Connection<CommentWire>,
}

/// The answer to `ThreadComments`.
#[derive(Debug, Deserialize)]
pub(crate) struct ThreadCommentsData {
    pub(crate) node: Option<ThreadCommentsNode>,
}

/// `node(id:)` as a thread (empty when the id names something else).
#[derive(Debug, Deserialize)]
pub(crate) struct ThreadCommentsNode {
    pub(crate) comments: Option<Connection<CommentWire>>,
}

/// A review comment.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CommentWire {
    pub(crate) id: String,
    pub(crate) database_id: Option<u64>,
    pub(crate) body: String,
    pub(crate) url: String,
    pub(crate) created_at: String,
    pub(crate) diff_hunk: Option<String>,
    pub(crate) author: Option<ActorWire>,
    pub(crate) pull_request_review: Option<ReviewStateWire>,
}

/// `pullRequestReview { state submittedAt }` (`submittedAt` is null while
/// the review is pending).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReviewStateWire {
    pub(crate) state: String,
    #[serde(default)]
    pub(crate) submitted_at: Option<String>,
}

/// `pullRequest.comments` in `PullRequestComments`.
#[derive(Debug, Deserialize)]
pub(crate) struct IssueCommentsPr {
    pub(crate) comments: Connection<IssueCommentWire>,
}

/// A conversation (issue) comment.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct IssueCommentWire {
    pub(crate) id: String,
    pub(crate) database_id: Option<u64>,
    pub(crate) body: String,
    pub(crate) url: String,
    pub(crate) created_at: String,
    pub(crate) author: Option<ActorWire>,
}

/// `__typename == "Bot"` is a bot; anything else (User, Mannequin,
/// EnterpriseUserAccount, Organization) is a person. No author: a deleted account.
pub(crate) fn author(actor: Option<ActorWire>) -> Option<Author> {
    let actor = actor?;
    let kind = match actor.typename.as_deref() {
        Some("Bot") => AuthorKind::Bot,
        _ => AuthorKind::User,
    };
    Some(Author {
        login: actor.login,
        kind,
    })
}

/// GitHub's `PullRequestReviewState`; `None` for a value this build does not know.
pub(crate) fn review_state(state: &str) -> Option<ReviewState> {
    match state {
        "PENDING" => Some(ReviewState::Pending),
        "COMMENTED" => Some(ReviewState::Commented),
        "APPROVED" => Some(ReviewState::Approved),
        "CHANGES_REQUESTED" => Some(ReviewState::ChangesRequested),
        "DISMISSED" => Some(ReviewState::Dismissed),
        other => {
            tracing::debug!(state = other, "unknown review state");
            None
        }
    }
}

/// The pull request, given the viewer's login; `Err` names an unknown state.
pub(crate) fn pull_request(wire: PullRequestWire, viewer: &str) -> Result<PullRequest, String> {
    let state = match wire.state.as_str() {
        "OPEN" => PrStatus::Open,
        "CLOSED" => PrStatus::Closed,
        "MERGED" => PrStatus::Merged,
        other => return Err(format!("unknown pull request state `{other}`")),
    };
    // Only its author sees a PENDING review, but the check does not rely on it.
    let viewer_has_pending_review = wire.reviews.is_some_and(|reviews| {
        reviews.into_nodes().any(|review| {
            review
                .author
                .is_some_and(|a| a.login.eq_ignore_ascii_case(viewer))
        })
    });
    Ok(PullRequest {
        number: wire.number,
        id: Some(wire.id),
        title: wire.title,
        url: wire.url,
        state,
        is_draft: wire.is_draft,
        head_ref: wire.head_ref_name,
        head_sha: wire.head_ref_oid,
        base_ref: wire.base_ref_name,
        is_cross_repository: wire.is_cross_repository,
        viewer_has_pending_review,
        author: author(wire.author),
    })
}

/// A review comment; its diff hunk is shared through `hunks`.
pub(crate) fn comment(wire: CommentWire, hunks: &Interner) -> Comment {
    Comment {
        id: wire.id,
        database_id: wire.database_id,
        author: author(wire.author),
        body: wire.body,
        url: wire.url,
        created_at: wire.created_at,
        diff_hunk: wire.diff_hunk.map(|hunk| hunks.intern(hunk)),
        review_state: wire
            .pull_request_review
            .as_ref()
            .and_then(|review| review_state(&review.state)),
        review_submitted_at: wire
            .pull_request_review
            .and_then(|review| review.submitted_at),
    }
}

/// A thread with the comments of its first page (a long thread's later
/// pages are appended by the caller).
pub(crate) fn thread(wire: ThreadWire, hunks: &Interner) -> ReviewThread {
    let comments: Vec<Comment> = wire
        .comments
        .into_nodes()
        .map(|c| comment(c, hunks))
        .collect();
    let diff_side = match wire.diff_side.as_str() {
        "LEFT" => DiffSide::Left,
        _ => DiffSide::Right,
    };
    let subject_type = match wire.subject_type.as_deref() {
        Some("FILE") => SubjectType::File,
        _ => SubjectType::Line,
    };
    ReviewThread {
        id: wire.id,
        is_resolved: wire.is_resolved,
        is_outdated: wire.is_outdated,
        path: wire.path,
        line: wire.line,
        start_line: wire.start_line,
        original_line: wire.original_line,
        original_start_line: wire.original_start_line,
        diff_side,
        subject_type,
        viewer_can_reply: wire.viewer_can_reply,
        viewer_can_resolve: wire.viewer_can_resolve,
        comments,
    }
}

/// A conversation comment.
pub(crate) fn issue_comment(wire: IssueCommentWire) -> TopLevelComment {
    TopLevelComment {
        id: wire.id,
        database_id: wire.database_id,
        kind: TopLevelKind::IssueComment,
        author: author(wire.author),
        body: wire.body,
        url: wire.url,
        created_at: wire.created_at,
        review_state: None,
    }
}

/// The answer to `ThreadById`.
#[derive(Debug, Deserialize)]
pub(crate) struct ThreadByIdData {
    pub(crate) node: Option<ThreadByIdNode>,
}

/// `node(id:)` in `ThreadById`: its fields are absent when the id names
/// something other than a review thread.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadByIdNode {
    #[serde(rename = "__typename", default)]
    pub(crate) typename: Option<String>,
    pub(crate) is_resolved: Option<bool>,
    pub(crate) comments: Option<Connection<CommentWire>>,
}

/// The answer to `ResolveReviewThread`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResolveData {
    pub(crate) resolve_review_thread: Option<ResolvePayload>,
}

/// `resolveReviewThread { thread }`.
#[derive(Debug, Deserialize)]
pub(crate) struct ResolvePayload {
    pub(crate) thread: Option<ResolvedThread>,
}

/// The thread a resolve returns.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResolvedThread {
    pub(crate) is_resolved: bool,
}

/// `pullRequest { commits(last: 1) }` in `StatusCheckRollup`.
#[derive(Debug, Deserialize)]
pub(crate) struct RollupPr {
    pub(crate) commits: Connection<RollupCommitNode>,
}

/// A `PullRequestCommit`.
#[derive(Debug, Deserialize)]
pub(crate) struct RollupCommitNode {
    pub(crate) commit: RollupCommit,
}

/// The head commit and its rollup (`null` when it has no check).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RollupCommit {
    pub(crate) oid: String,
    pub(crate) status_check_rollup: Option<RollupWire>,
}

/// `statusCheckRollup { state contexts }`.
#[derive(Debug, Deserialize)]
pub(crate) struct RollupWire {
    pub(crate) state: Option<String>,
    pub(crate) contexts: Connection<RollupContextWire>,
}

/// A `CheckRun` or a `StatusContext` of the rollup, told by `__typename`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RollupContextWire {
    #[serde(rename = "__typename")]
    pub(crate) typename: String,
    pub(crate) name: Option<String>,
    pub(crate) status: Option<String>,
    pub(crate) conclusion: Option<String>,
    pub(crate) is_required: Option<bool>,
    pub(crate) context: Option<String>,
    pub(crate) state: Option<String>,
}

/// A check of the rollup as the verdict reads it; `None` for a context of a
/// kind this build does not know.
pub(crate) fn rollup_check(wire: RollupContextWire) -> Option<CheckState> {
    match wire.typename.as_str() {
        "CheckRun" => Some(CheckState {
            name: wire.name?,
            source: CheckSource::CheckRun,
            status: check_status(wire.status.as_deref()),
            conclusion: wire.conclusion.as_deref().and_then(check_conclusion),
            required: wire.is_required,
        }),
        "StatusContext" => Some(CheckState::from_status_context(
            wire.context?,
            wire.state.as_deref().unwrap_or(""),
            wire.is_required,
        )),
        other => {
            tracing::debug!(typename = other, "unknown status rollup context");
            None
        }
    }
}

/// A check status in either spelling; an unknown one reads as `pending`, so
/// that it can never pass.
pub(crate) fn check_status(status: Option<&str>) -> CheckStatus {
    let parsed = status.and_then(CheckStatus::parse);
    if parsed.is_none() {
        tracing::debug!(?status, "unknown check status, read as pending");
    }
    parsed.unwrap_or(CheckStatus::Pending)
}

/// A check conclusion in either spelling; an unknown one reads as none (the
/// verdict then says `UNKNOWN` for a completed check).
pub(crate) fn check_conclusion(conclusion: &str) -> Option<CheckConclusion> {
    let parsed = CheckConclusion::parse(conclusion);
    if parsed.is_none() {
        tracing::debug!(conclusion, "unknown check conclusion");
    }
    parsed
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    /// Unwraps GitHub's `{"data": …}` envelope of a fixture.
    fn data<T: serde::de::DeserializeOwned>(fixture: &str) -> T {
        let mut value: serde_json::Value = serde_json::from_str(fixture).unwrap();
        serde_json::from_value(value["data"].take()).unwrap()
    }

    #[test]
    fn decodes_pull_request_state() {
        let d: PullRequestStateData =
            data(include_str!("../../tests/fixtures/pull_request_state.json"));
        let (viewer, pr) = d.into_parts();
        let pr = pull_request(pr.unwrap(), &viewer).unwrap();
        assert_eq!(viewer, "shepherd-bot");
        assert_eq!(pr.number, 42);
        assert_eq!(pr.id.as_deref(), Some("PR_kwDOABCD1M5abcde"));
        assert_eq!(pr.state, PrStatus::Open);
        assert!(!pr.is_draft);
        assert_eq!(pr.head_ref, "feature/retry");
        assert_eq!(pr.head_sha, "4b825dc642cb6eb9a060e54bf8d69288fbee4904");
        assert_eq!(pr.base_ref, "main");
        assert!(!pr.is_cross_repository);
        assert!(pr.viewer_has_pending_review);
        assert_eq!(
            pr.author,
            Some(Author {
                login: "octocat".into(),
                kind: AuthorKind::User
            })
        );
    }

    #[test]
    fn pending_review_of_someone_else_does_not_count() {
        let d: PullRequestStateData =
            data(include_str!("../../tests/fixtures/pull_request_state.json"));
        let pr = pull_request(d.into_parts().1.unwrap(), "someone-else").unwrap();
        assert!(!pr.viewer_has_pending_review);
    }

    #[test]
    fn unknown_pull_request_state_is_an_error() {
        let mut value: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/pull_request_state.json"))
                .unwrap();
        value["data"]["repository"]["pullRequest"]["state"] = "ARCHIVED".into();
        let d: PullRequestStateData = serde_json::from_value(value["data"].take()).unwrap();
        let err = pull_request(d.into_parts().1.unwrap(), "x").unwrap_err();
        assert!(err.contains("ARCHIVED"), "{err}");
    }

    #[test]
    fn decodes_review_threads() {
        let d: RepositoryData<ReviewThreadsPr> =
            data(include_str!("../../tests/fixtures/review_threads.json"));
        let conn = d.into_pull_request().unwrap().review_threads;
        assert!(!conn.page_info.has_next_page);
        let threads: Vec<ReviewThread> = conn
            .into_nodes()
            .map(|t| thread(t, &Interner::default()))
            .collect();
        assert_eq!(threads.len(), 3);

        let first = &threads[0];
        assert_eq!(first.id, "PRRT_kwDOABCD1M5aaaa1");
        assert!(!first.is_resolved && !first.is_outdated);
        assert_eq!(first.path, "src/retry.rs");
        assert_eq!((first.start_line, first.line), (Some(10), Some(12)));
        assert_eq!(first.diff_side, DiffSide::Right);
        assert_eq!(first.subject_type, SubjectType::Line);
        assert!(first.viewer_can_reply && first.viewer_can_resolve);
        assert_eq!(first.comments.len(), 2);
        let root = &first.comments[0];
        assert_eq!(root.database_id, Some(1_543_210_987));
        assert_eq!(
            root.author,
            Some(Author {
                login: "coderabbitai".into(),
                kind: AuthorKind::Bot
            })
        );
        assert_eq!(root.review_state, Some(ReviewState::Commented));
        assert!(root.diff_hunk.as_deref().unwrap().starts_with("@@ -8,6"));
        assert_eq!(first.comments[1].author, None, "a ghost has no author");

        let resolved = &threads[1];
        assert!(resolved.is_resolved);

        let outdated = &threads[2];
        assert!(outdated.is_outdated);
        assert_eq!(outdated.line, None);
        assert_eq!(outdated.display_line(), Some(7));
        assert_eq!(outdated.diff_side, DiffSide::Left);
        assert_eq!(outdated.subject_type, SubjectType::File);
        assert_eq!(
            outdated.comments[0].review_state,
            Some(ReviewState::Pending)
        );
    }

    #[test]
    fn decodes_thread_comments_page() {
        let d: ThreadCommentsData = data(include_str!("../../tests/fixtures/thread_comments.json"));
        let conn = d.node.unwrap().comments.unwrap();
        assert!(!conn.page_info.has_next_page);
        assert_eq!(conn.total_count, Some(101));
        let hunks = Interner::default();
        let comments: Vec<Comment> = conn.into_nodes().map(|c| comment(c, &hunks)).collect();
        assert_eq!(comments.len(), 1);
        assert_eq!(comments[0].id, "PRRC_kwDOABCD1M6bbbb101");
    }

    #[test]
    fn decodes_issue_comments() {
        let d: RepositoryData<IssueCommentsPr> = data(include_str!(
            "../../tests/fixtures/pull_request_comments.json"
        ));
        let comments: Vec<TopLevelComment> = d
            .into_pull_request()
            .unwrap()
            .comments
            .into_nodes()
            .map(issue_comment)
            .collect();
        assert_eq!(comments.len(), 2);
        assert_eq!(comments[0].kind, TopLevelKind::IssueComment);
        assert_eq!(comments[0].database_id, Some(2_100_000_001));
        assert_eq!(comments[1].author.as_ref().unwrap().kind, AuthorKind::Bot);
    }

    #[test]
    fn null_nodes_are_skipped() {
        let conn: Connection<IssueCommentWire> = serde_json::from_str(
            r#"{"pageInfo":{"hasNextPage":false,"endCursor":null},"nodes":[null]}"#,
        )
        .unwrap();
        assert_eq!(conn.into_nodes().count(), 0);
        let conn: Connection<IssueCommentWire> = serde_json::from_str(
            r#"{"pageInfo":{"hasNextPage":false,"endCursor":null},"nodes":null}"#,
        )
        .unwrap();
        assert_eq!(conn.into_nodes().count(), 0);
    }

    #[test]
    fn typename_other_than_bot_is_a_user() {
        for (typename, kind) in [
            (Some("Bot"), AuthorKind::Bot),
            (Some("User"), AuthorKind::User),
            (Some("Mannequin"), AuthorKind::User),
            (None, AuthorKind::User),
        ] {
            let a = author(Some(ActorWire {
                typename: typename.map(str::to_owned),
                login: "x".into(),
            }));
            assert_eq!(a.unwrap().kind, kind, "{typename:?}");
        }
        assert_eq!(author(None), None);
    }
}
