//! `PullRequestReviewComment`'s fields.

use async_graphql::{Object, ID};

use super::common::{actor, line_int, small_int};
use super::enums::{PullRequestReviewCommentState, PullRequestReviewThreadSubjectType};
use crate::graphql::actor::Actor;
use crate::graphql::json::JsonString;
use crate::graphql::objects::{PullRequest, PullRequestReview, PullRequestReviewComment};
use crate::graphql::scalars::{DateTime, Uri};
use crate::scenario::ReviewStateSpec;
use crate::state::{ReviewCommentRecord, ThreadRecord};

impl PullRequestReviewComment {
    pub(super) fn thread_record(&self) -> &ThreadRecord {
        &self.view.pr.threads[self.thread]
    }

    pub(super) fn record(&self) -> &ReviewCommentRecord {
        &self.thread_record().comments[self.index]
    }

    pub(super) fn url_text(&self) -> String {
        format!(
            "{}#discussion_r{}",
            self.view.pr.html_url,
            self.record().database_id
        )
    }

    pub(super) fn review(&self) -> Option<PullRequestReview> {
        let index = self.view.review_index(self.record().review_id)?;
        Some(PullRequestReview {
            view: self.view.clone(),
            index,
        })
    }
}

#[Object]
impl PullRequestReviewComment {
    /// The Node ID of the PullRequestReviewComment object.
    pub(crate) async fn id(&self) -> ID {
        ID(self.record().id.clone())
    }

    /// Identifies the primary key from the database.
    async fn database_id(&self) -> Option<i32> {
        small_int(self.record().database_id)
    }

    /// The comment body of this review comment.
    async fn body(&self) -> String {
        self.record().body.clone()
    }

    /// The HTTP URL for this review comment.
    async fn url(&self) -> Uri {
        Uri(self.url_text())
    }

    /// Identifies when the comment was created.
    async fn created_at(&self) -> DateTime {
        DateTime(self.record().created_at.clone())
    }

    /// The diff hunk to which the comment applies.
    async fn diff_hunk(&self) -> JsonString {
        // Escaped once, when the comment was made (see `json.rs`).
        self.record().diff_hunk.clone().into()
    }

    /// The actor who authored the comment.
    async fn author(&self) -> Option<Actor> {
        actor(&self.view, &self.record().author)
    }

    /// The pull request review associated with this review comment.
    async fn pull_request_review(&self) -> Option<PullRequestReview> {
        self.review()
    }

    /// The path to which the comment applies.
    async fn path(&self) -> String {
        self.thread_record().path.clone()
    }

    /// The line number associated with this comment.
    async fn line(&self) -> Option<i32> {
        line_int(self.thread_record().line())
    }

    /// The start line number associated with this comment.
    async fn start_line(&self) -> Option<i32> {
        line_int(self.thread_record().start_line())
    }

    /// The original line number associated with this comment.
    async fn original_line(&self) -> Option<i32> {
        line_int(self.thread_record().original_line)
    }

    /// The original start line number associated with this comment.
    async fn original_start_line(&self) -> Option<i32> {
        line_int(self.thread_record().original_start_line)
    }

    /// Identifies if the comment is outdated.
    async fn outdated(&self) -> bool {
        self.thread_record().outdated
    }

    /// The comment this is a reply to.
    async fn reply_to(&self) -> Option<PullRequestReviewComment> {
        let target = self.record().reply_to?;
        let index = self
            .thread_record()
            .comments
            .iter()
            .position(|c| c.database_id == target)?;
        Some(PullRequestReviewComment {
            view: self.view.clone(),
            thread: self.thread,
            index,
        })
    }

    /// Identifies the state of the comment.
    async fn state(&self) -> PullRequestReviewCommentState {
        let pending = self
            .view
            .review_index(self.record().review_id)
            .is_some_and(|i| self.view.pr.reviews[i].state == ReviewStateSpec::Pending);
        if pending {
            PullRequestReviewCommentState::Pending
        } else {
            PullRequestReviewCommentState::Submitted
        }
    }

    /// The level at which the comments in the corresponding thread are targeted.
    async fn subject_type(&self) -> PullRequestReviewThreadSubjectType {
        match self.thread_record().original_line {
            Some(_) => PullRequestReviewThreadSubjectType::Line,
            None => PullRequestReviewThreadSubjectType::File,
        }
    }

    /// Did the viewer author this comment.
    async fn viewer_did_author(&self) -> bool {
        self.record().author == self.view.viewer.login
    }

    /// The pull request associated with this review comment.
    async fn pull_request(&self) -> PullRequest {
        PullRequest {
            view: self.view.clone(),
        }
    }
}
