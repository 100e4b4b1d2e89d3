//! `PullRequestReview`'s fields.

use async_graphql::{Context, Object, Result, ID};

use super::common::{actor, association, small_int};
use super::enums::PullRequestReviewState;
use crate::graphql::actor::Actor;
use crate::graphql::empty_lists::{reaction_groups, ReactionGroup};
use crate::graphql::objects::{Commit, PullRequest, PullRequestReview};
use crate::graphql::pr_extras::CommentAuthorAssociation;
use crate::graphql::scalars::{DateTime, Uri};
use crate::state::ReviewRecord;

impl PullRequestReview {
    pub(super) fn record(&self) -> &ReviewRecord {
        &self.view.pr.reviews[self.index]
    }

    pub(super) fn url_text(&self) -> String {
        format!(
            "{}#pullrequestreview-{}",
            self.view.pr.html_url,
            self.record().database_id
        )
    }
}

#[Object]
impl PullRequestReview {
    /// The Node ID of the PullRequestReview object.
    pub(crate) async fn id(&self) -> ID {
        ID(self.record().id.clone())
    }

    /// Identifies the primary key from the database.
    async fn database_id(&self) -> Option<i32> {
        small_int(self.record().database_id)
    }

    /// Identifies the pull request review body.
    async fn body(&self) -> String {
        self.record().body.clone()
    }

    /// Identifies the current state of the pull request review.
    async fn state(&self) -> PullRequestReviewState {
        self.record().state.into()
    }

    /// The HTTP URL permalink for this PullRequestReview.
    async fn url(&self) -> Uri {
        Uri(self.url_text())
    }

    /// Identifies the date and time when the object was created.
    async fn created_at(&self) -> DateTime {
        DateTime(self.record().created_at.clone())
    }

    /// Identifies when the Pull Request Review was submitted.
    async fn submitted_at(&self) -> Option<DateTime> {
        self.record().submitted_at.clone().map(DateTime)
    }

    /// The actor who authored the comment.
    async fn author(&self) -> Option<Actor> {
        actor(&self.view, &self.record().author)
    }

    /// Did the viewer author this comment.
    async fn viewer_did_author(&self) -> bool {
        self.record().author == self.view.viewer.login
    }

    /// Author's association with the subject of the comment.
    async fn author_association(&self, ctx: &Context<'_>) -> Result<CommentAuthorAssociation> {
        association(ctx, &self.view, &self.record().author)
    }

    /// Identifies the commit associated with this pull request review.
    async fn commit(&self) -> Option<Commit> {
        Some(Commit::new(
            self.record().commit.clone(),
            self.view.ci.clone(),
        ))
    }

    /// A list of reactions grouped by content left on the subject.
    async fn reaction_groups(&self) -> Option<Vec<ReactionGroup>> {
        reaction_groups()
    }

    /// Identifies the pull request associated with this pull request review.
    async fn pull_request(&self) -> PullRequest {
        PullRequest {
            view: self.view.clone(),
        }
    }
}
