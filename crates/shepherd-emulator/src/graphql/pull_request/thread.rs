//! `PullRequestReviewThread`'s fields.

use async_graphql::{Object, Result, ID};

use super::common::{actor, line_int};
use super::enums::{DiffSide, PullRequestReviewThreadSubjectType};
use crate::graphql::actor::Actor;
use crate::graphql::connection::{paginate_visible, PageArgs, PullRequestReviewCommentConnection};
use crate::graphql::objects::{
    PullRequest, PullRequestReviewComment, PullRequestReviewThread, Repository,
};
use crate::scenario::Permission;
use crate::state::ThreadRecord;

impl PullRequestReviewThread {
    pub(super) fn record(&self) -> &ThreadRecord {
        &self.view.pr.threads[self.index]
    }

    pub(super) fn viewer_can_toggle(&self) -> bool {
        self.view.viewer.permission >= Permission::Write
            || self.view.viewer.login == self.view.pr.author
    }
}

#[Object]
impl PullRequestReviewThread {
    /// The Node ID of the PullRequestReviewThread object.
    pub(crate) async fn id(&self) -> ID {
        ID(self.record().id.clone())
    }

    /// Whether this thread has been resolved.
    async fn is_resolved(&self) -> bool {
        self.record().resolved
    }

    /// Whether or not the thread has been collapsed (resolved).
    async fn is_collapsed(&self) -> bool {
        self.record().resolved
    }

    /// Indicates whether this thread was outdated by newer changes.
    async fn is_outdated(&self) -> bool {
        self.record().outdated
    }

    /// Identifies the file path of this thread.
    async fn path(&self) -> String {
        self.record().path.clone()
    }

    /// The line in the file to which this thread refers.
    async fn line(&self) -> Option<i32> {
        line_int(self.record().line())
    }

    /// The start line in the file to which this thread refers (multi-line only).
    async fn start_line(&self) -> Option<i32> {
        line_int(self.record().start_line())
    }

    /// The original line in the file to which this thread refers.
    async fn original_line(&self) -> Option<i32> {
        line_int(self.record().original_line)
    }

    /// The original start line in the file to which this thread refers (multi-line only).
    async fn original_start_line(&self) -> Option<i32> {
        line_int(self.record().original_start_line)
    }

    /// The side of the diff on which this thread was placed.
    async fn diff_side(&self) -> DiffSide {
        self.record().side.into()
    }

    /// The side of the diff that the first line of the thread starts on (multi-line only).
    async fn start_diff_side(&self) -> Option<DiffSide> {
        let record = self.record();
        record.original_start_line.map(|_| record.side.into())
    }

    /// The level at which the comments in the corresponding thread are targeted.
    async fn subject_type(&self) -> PullRequestReviewThreadSubjectType {
        match self.record().original_line {
            Some(_) => PullRequestReviewThreadSubjectType::Line,
            None => PullRequestReviewThreadSubjectType::File,
        }
    }

    /// Indicates whether the current viewer can reply to this thread.
    async fn viewer_can_reply(&self) -> bool {
        // The emulator's read-only tokens cannot write (see the README).
        self.view.viewer.permission >= Permission::Write
    }

    /// Whether or not the viewer can resolve this thread.
    async fn viewer_can_resolve(&self) -> bool {
        !self.record().resolved && self.viewer_can_toggle()
    }

    /// Whether or not the viewer can unresolve this thread.
    async fn viewer_can_unresolve(&self) -> bool {
        self.record().resolved && self.viewer_can_toggle()
    }

    /// The user who resolved this thread.
    async fn resolved_by(&self) -> Option<crate::graphql::actor::User> {
        let login = self.record().resolved_by.as_ref()?;
        match actor(&self.view, login)? {
            Actor::User(user) => Some(user),
            Actor::Bot(_) => None,
        }
    }

    /// Identifies the pull request associated with this thread.
    async fn pull_request(&self) -> PullRequest {
        PullRequest {
            view: self.view.clone(),
        }
    }

    /// Identifies the repository associated with this thread.
    async fn repository(&self) -> Repository {
        Repository::new(self.view.repository.clone(), self.view.viewer.permission)
    }

    /// A list of pull request comments associated with the thread.
    async fn comments(
        &self,
        after: Option<String>,
        before: Option<String>,
        first: Option<i32>,
        last: Option<i32>,
    ) -> Result<PullRequestReviewCommentConnection> {
        self.comments_page(&PageArgs::new(first, last, after, before))
    }
}

impl PullRequestReviewThread {
    /// What `comments` answers.
    pub(super) fn comments_page(
        &self,
        args: &PageArgs,
    ) -> Result<PullRequestReviewCommentConnection> {
        let args = args.clone();
        let node = |index| PullRequestReviewComment {
            view: self.view.clone(),
            thread: self.index,
            index,
        };
        let comments = &self.record().comments;
        let visible = (
            |c: &_| self.view.comment_visible(c),
            self.view.hides_nothing(),
        );
        paginate_visible(
            "comments",
            comments,
            |c| c.database_id,
            visible,
            &args,
            node,
        )
        .map(Into::into)
    }
}
