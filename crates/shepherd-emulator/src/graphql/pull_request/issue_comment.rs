//! `IssueComment`'s fields.

use async_graphql::{Context, Object, Result, ID};

use super::common::{actor, association, small_int};
use crate::graphql::actor::Actor;
use crate::graphql::empty_lists::{reaction_groups, ReactionGroup};
use crate::graphql::objects::{IssueComment, PullRequest};
use crate::graphql::pr_extras::CommentAuthorAssociation;
use crate::graphql::scalars::{DateTime, Uri};
use crate::state::IssueCommentRecord;

impl IssueComment {
    pub(super) fn record(&self) -> &IssueCommentRecord {
        &self.view.pr.issue_comments[self.index]
    }
}

#[Object]
impl IssueComment {
    /// The Node ID of the IssueComment object.
    pub(crate) async fn id(&self) -> ID {
        ID(self.record().id.clone())
    }

    /// Identifies the primary key from the database.
    async fn database_id(&self) -> Option<i32> {
        small_int(self.record().database_id)
    }

    /// The body as Markdown.
    async fn body(&self) -> String {
        self.record().body.clone()
    }

    /// The HTTP URL for this issue comment.
    async fn url(&self) -> Uri {
        Uri(format!(
            "{}#issuecomment-{}",
            self.view.pr.html_url,
            self.record().database_id
        ))
    }

    /// Identifies the date and time when the object was created.
    async fn created_at(&self) -> DateTime {
        DateTime(self.record().created_at.clone())
    }

    /// Identifies the date and time when the object was last updated (a
    /// bot's walkthrough comment, edited in place, moves; its `createdAt`
    /// does not).
    async fn updated_at(&self) -> DateTime {
        DateTime(self.record().updated_at.clone())
    }

    /// The moment the editor made the last edit, `null` when never edited.
    async fn last_edited_at(&self) -> Option<DateTime> {
        let record = self.record();
        (record.updated_at != record.created_at).then(|| DateTime(record.updated_at.clone()))
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

    /// Check if this comment was edited and includes an edit with the
    /// creation data (the emulator's comments are never edited).
    async fn includes_created_edit(&self) -> bool {
        false
    }

    /// Returns whether or not a comment has been minimized (never here).
    async fn is_minimized(&self) -> bool {
        false
    }

    /// Returns why the comment was minimized.
    async fn minimized_reason(&self) -> Option<String> {
        None
    }

    /// A list of reactions grouped by content left on the subject.
    async fn reaction_groups(&self) -> Option<Vec<ReactionGroup>> {
        reaction_groups()
    }

    /// The pull request this comment belongs to.
    async fn pull_request(&self) -> Option<PullRequest> {
        Some(PullRequest {
            view: self.view.clone(),
        })
    }
}
