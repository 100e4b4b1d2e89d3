//! `PullRequest`'s fields.

use std::collections::HashSet;

use async_graphql::{Context, Object, Result, ID};

use super::common::{actor, actor_info, diff_totals, small_int};
use super::enums::{
    MergeableState, PullRequestReviewDecision, PullRequestReviewState, PullRequestState,
};
use crate::graphql::actor::Actor;
use crate::graphql::changed_file::{self, PullRequestChangedFileConnection};
use crate::graphql::checks::{commits_connection, PullRequestCommitConnection};
use crate::graphql::connection::{
    paginate, paginate_by, paginate_slice, paginate_visible, IssueCommentConnection,
    LabelConnection, PageArgs, PullRequestReviewConnection, PullRequestReviewThreadConnection,
};
use crate::graphql::empty_lists::{
    empty_page, reaction_groups, Milestone, ProjectCardConnection, ReactionGroup, ReviewRequest,
    ReviewRequestConnection, UserConnection,
};
use crate::graphql::label::Label;
use crate::graphql::objects::{
    Commit, IssueComment, PullRequest, PullRequestReview, PullRequestReviewThread, Ref, Repository,
};
use crate::graphql::owner::RepositoryOwner;
use crate::graphql::pr_extras::MergeStateStatus;
use crate::graphql::scalars::{DateTime, GitObjectId, Uri};
use crate::graphql::timeline::{
    PullRequestTimelineItems, PullRequestTimelineItemsConnection, PullRequestTimelineItemsItemType,
};
use crate::graphql::view::RequestContext;
use crate::scenario::{PullRequestStatus, ReviewStateSpec};

impl PullRequest {
    /// The page of the reviews at `indices` (into the PR's reviews, in
    /// order) that `args` asks for, cursors by database id.
    pub(super) fn review_page(
        &self,
        connection: &str,
        indices: Vec<usize>,
        args: &PageArgs,
    ) -> Result<Option<PullRequestReviewConnection>> {
        let reviews = &self.view.pr.reviews;
        let items = indices
            .into_iter()
            .map(|index| (reviews[index].database_id, index))
            .collect();
        let node = |index| PullRequestReview {
            view: self.view.clone(),
            index,
        };
        paginate_by(connection, items, args, node).map(|page| Some(page.into()))
    }
}

#[Object]
impl PullRequest {
    /// The Node ID of the PullRequest object.
    pub(crate) async fn id(&self) -> ID {
        ID(self.view.pr.id.clone())
    }

    /// Identifies the primary key from the database.
    async fn database_id(&self) -> Option<i32> {
        small_int(self.view.pr.database_id)
    }

    /// Identifies the pull request number.
    async fn number(&self) -> i32 {
        // Scenario validation keeps numbers within i32.
        i32::try_from(self.view.pr.number).unwrap_or(i32::MAX)
    }

    /// Identifies the pull request title.
    async fn title(&self) -> String {
        self.view.pr.title.clone()
    }

    /// The body as Markdown.
    async fn body(&self) -> String {
        self.view.pr.body.clone()
    }

    /// The HTTP URL for this pull request.
    async fn url(&self) -> Uri {
        Uri(self.view.pr.html_url.clone())
    }

    /// Identifies the state of the pull request.
    async fn state(&self) -> PullRequestState {
        match self.view.pr.status {
            PullRequestStatus::Open => PullRequestState::Open,
            PullRequestStatus::Closed => PullRequestState::Closed,
            PullRequestStatus::Merged => PullRequestState::Merged,
        }
    }

    /// Identifies if the pull request is a draft.
    async fn is_draft(&self) -> bool {
        self.view.pr.draft
    }

    /// Whether or not the pull request was merged.
    async fn merged(&self) -> bool {
        self.view.pr.status == PullRequestStatus::Merged
    }

    /// `true` if the pull request is closed.
    async fn closed(&self) -> bool {
        self.view.pr.status != PullRequestStatus::Open
    }

    /// Identifies the name of the head Ref associated with the pull request.
    async fn head_ref_name(&self) -> String {
        self.view.pr.head_ref.clone()
    }

    /// Identifies the oid of the head ref associated with the pull request.
    async fn head_ref_oid(&self) -> GitObjectId {
        GitObjectId(self.view.pr.head_sha.clone())
    }

    /// Identifies the name of the base Ref associated with the pull request.
    async fn base_ref_name(&self) -> String {
        self.view.pr.base_ref.clone()
    }

    /// Identifies the oid of the base ref associated with the pull request.
    async fn base_ref_oid(&self) -> GitObjectId {
        GitObjectId(self.view.pr.base_sha.clone())
    }

    /// Whether the head ref comes from another repository (a fork).
    async fn is_cross_repository(&self) -> bool {
        self.view.pr.fork
    }

    /// The actor who authored the pull request.
    async fn author(&self) -> Option<Actor> {
        actor(&self.view, &self.view.pr.author)
    }

    /// Identifies the date and time when the object was created.
    async fn created_at(&self) -> DateTime {
        DateTime(self.view.pr.created_at.clone())
    }

    /// Identifies the date and time when the object was last updated.
    async fn updated_at(&self) -> DateTime {
        DateTime(self.view.pr.updated_at.clone())
    }

    /// Did the viewer author this pull request.
    async fn viewer_did_author(&self) -> bool {
        self.view.pr.author == self.view.viewer.login
    }

    /// Identifies the date and time when the object was closed.
    async fn closed_at(&self) -> Option<DateTime> {
        self.view.pr.closed_at.clone().map(DateTime)
    }

    /// The date and time that the pull request was merged.
    async fn merged_at(&self) -> Option<DateTime> {
        match self.view.pr.status {
            PullRequestStatus::Merged => self.view.pr.closed_at.clone().map(DateTime),
            _ => None,
        }
    }

    /// Whether or not the pull request can be merged based on the existence
    /// of merge conflicts.
    async fn mergeable(&self) -> MergeableState {
        // The emulator does not compute mergeability; GitHub's answer while
        // it has not either is UNKNOWN.
        MergeableState::Unknown
    }

    /// The current status of this pull request with respect to code review:
    /// from each reviewer's latest approving or change-requesting review.
    async fn review_decision(&self) -> Option<PullRequestReviewDecision> {
        let mut latest: std::collections::BTreeMap<&str, ReviewStateSpec> =
            std::collections::BTreeMap::new();
        for review in &self.view.pr.reviews {
            if matches!(
                review.state,
                ReviewStateSpec::Approved
                    | ReviewStateSpec::ChangesRequested
                    | ReviewStateSpec::Dismissed
            ) {
                latest.insert(&review.author, review.state);
            }
        }
        if latest
            .values()
            .any(|s| *s == ReviewStateSpec::ChangesRequested)
        {
            Some(PullRequestReviewDecision::ChangesRequested)
        } else if latest.values().any(|s| *s == ReviewStateSpec::Approved) {
            Some(PullRequestReviewDecision::Approved)
        } else {
            None
        }
    }

    /// Indicates whether maintainers can modify the pull request.
    async fn maintainer_can_modify(&self) -> bool {
        false
    }

    /// The repository associated with this pull request's head Ref.
    async fn head_repository(&self) -> Option<Repository> {
        // A fork's repository is not part of a scenario.
        (!self.view.pr.fork)
            .then(|| Repository::new(self.view.repository.clone(), self.view.viewer.permission))
    }

    /// The repository associated with this pull request.
    async fn repository(&self) -> Repository {
        Repository::new(self.view.repository.clone(), self.view.viewer.permission)
    }

    /// The number of additions in this pull request.
    async fn additions(&self) -> i32 {
        diff_totals(&self.view).0
    }

    /// The number of deletions in this pull request.
    async fn deletions(&self) -> i32 {
        diff_totals(&self.view).1
    }

    /// The number of changed files in this pull request.
    async fn changed_files(&self) -> i32 {
        diff_totals(&self.view).2
    }

    /// Lists the files changed within this pull request.
    async fn files(
        &self,
        after: Option<String>,
        before: Option<String>,
        first: Option<i32>,
        last: Option<i32>,
    ) -> Result<Option<PullRequestChangedFileConnection>> {
        let args = PageArgs::new(first, last, after, before);
        changed_file::files_connection(&self.view, &args).map(Some)
    }

    /// The owner of the repository associated with this pull request's head
    /// Ref: the author for a fork (as REST's `head.repo`), else the
    /// repository's owner.
    async fn head_repository_owner(&self, ctx: &Context<'_>) -> Result<Option<RepositoryOwner>> {
        let rc = ctx.data::<RequestContext>()?;
        let login = if self.view.pr.fork {
            &self.view.pr.author
        } else {
            &self.view.repository.owner
        };
        let state = rc.shared.read();
        Ok(Some(RepositoryOwner::of(
            &state,
            login,
            &rc.shared.base_url,
        )))
    }

    /// Identifies the base Ref associated with the pull request.
    async fn base_ref(&self) -> Option<Ref> {
        Some(Ref {
            name: self.view.pr.base_ref.clone(),
            repository: Repository::new(self.view.repository.clone(), self.view.viewer.permission),
        })
    }

    /// Detailed information about the current pull request merge state
    /// status (REST's `mergeable_state`: the emulator never conflicts).
    async fn merge_state_status(&self) -> MergeStateStatus {
        MergeStateStatus::from_rest(crate::pr_derived::mergeable_state(
            &self.view.ci.ci,
            &self.view.pr,
        ))
    }

    /// The commit that was created when this pull request was merged: the
    /// emulator makes no merge commits (REST's `merge_commit_sha` is `null`).
    async fn merge_commit(&self) -> Option<Commit> {
        None
    }

    /// The commit that GitHub automatically generated to test if this pull
    /// request could be merged: the emulator makes none.
    async fn potential_merge_commit(&self) -> Option<Commit> {
        None
    }

    /// The actor who merged the pull request: not recorded by the emulator
    /// (REST's `merged_by` is `null` too).
    async fn merged_by(&self) -> Option<Actor> {
        None
    }

    /// A list of latest reviews per user associated with the pull request:
    /// each author's latest submitted review, oldest first.
    async fn latest_reviews(
        &self,
        after: Option<String>,
        before: Option<String>,
        first: Option<i32>,
        last: Option<i32>,
    ) -> Result<Option<PullRequestReviewConnection>> {
        // Each author's last submitted review, in one pass from the end.
        let reviews = &self.view.pr.reviews;
        let mut authors = HashSet::new();
        let mut latest: Vec<usize> = reviews
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, r)| r.state != ReviewStateSpec::Pending)
            .filter(|(_, r)| authors.insert(r.author.as_str()))
            .map(|(index, _)| index)
            .collect();
        latest.reverse();
        let args = PageArgs::new(first, last, after, before);
        self.review_page("latestReviews", latest, &args)
    }

    /// A list of review requests associated with the pull request: its
    /// requested reviewers (REST's `requested_reviewers`), in the order
    /// they were asked.
    async fn review_requests(
        &self,
        ctx: &Context<'_>,
        after: Option<String>,
        before: Option<String>,
        first: Option<i32>,
        last: Option<i32>,
    ) -> Result<Option<ReviewRequestConnection>> {
        let logins = &self.view.pr.requested_reviewers;
        let args = PageArgs::new(first, last, after, before).counting_only(ctx);
        // A request's cursor is its position (requests have no database id).
        let position =
            |login: &String| logins.iter().position(|l| l == login).unwrap_or_default() as u64 + 1;
        let node = |i: usize| ReviewRequest(actor_info(&self.view, &logins[i]).cloned());
        paginate_slice("reviewRequests", logins, position, &args, node).map(|p| Some(p.into()))
    }

    /// A list of Users assigned to this object: none (no assignees here).
    async fn assignees(
        &self,
        ctx: &Context<'_>,
        after: Option<String>,
        before: Option<String>,
        first: Option<i32>,
        last: Option<i32>,
    ) -> Result<UserConnection> {
        empty_page(ctx, "assignees", first, last, after, before).map(Into::into)
    }

    /// List of project cards associated with this pull request: none (no
    /// projects here).
    async fn project_cards(
        &self,
        ctx: &Context<'_>,
        after: Option<String>,
        before: Option<String>,
        first: Option<i32>,
        last: Option<i32>,
    ) -> Result<ProjectCardConnection> {
        empty_page(ctx, "projectCards", first, last, after, before).map(Into::into)
    }

    /// Identifies the milestone associated with the pull request: none.
    async fn milestone(&self) -> Option<Milestone> {
        None
    }

    /// A list of reactions grouped by content left on the subject (every
    /// group empty: the emulator has no reactions).
    async fn reaction_groups(&self) -> Option<Vec<ReactionGroup>> {
        reaction_groups()
    }

    /// A list of reviews associated with the pull request.
    // The arguments are GitHub's.
    #[allow(clippy::too_many_arguments)]
    async fn reviews(
        &self,
        after: Option<String>,
        author: Option<String>,
        before: Option<String>,
        first: Option<i32>,
        last: Option<i32>,
        states: Option<Vec<PullRequestReviewState>>,
    ) -> Result<Option<PullRequestReviewConnection>> {
        let items = self
            .view
            .pr
            .reviews
            .iter()
            .enumerate()
            .filter(|(_, r)| self.view.review_visible(r.database_id))
            .filter(|(_, r)| author.as_ref().is_none_or(|a| *a == r.author))
            .filter(|(_, r)| {
                states
                    .as_ref()
                    .is_none_or(|s| s.contains(&PullRequestReviewState::from(r.state)))
            })
            .map(|(index, _)| index)
            .collect();
        let args = PageArgs::new(first, last, after, before);
        self.review_page("reviews", items, &args)
    }

    /// The list of all review threads for this pull request.
    async fn review_threads(
        &self,
        after: Option<String>,
        before: Option<String>,
        first: Option<i32>,
        last: Option<i32>,
    ) -> Result<PullRequestReviewThreadConnection> {
        let args = PageArgs::new(first, last, after, before);
        let node = |index| PullRequestReviewThread {
            view: self.view.clone(),
            index,
        };
        let threads = &self.view.pr.threads;
        let visible = (
            |t: &_| self.view.thread_visible(t),
            self.view.hides_nothing(),
        );
        paginate_visible(
            "reviewThreads",
            threads,
            |t| t.database_id,
            visible,
            &args,
            node,
        )
        .map(Into::into)
    }

    /// A list of commits present in this pull request's head branch not
    /// present in the base branch.
    async fn commits(
        &self,
        ctx: &Context<'_>,
        after: Option<String>,
        before: Option<String>,
        first: Option<i32>,
        last: Option<i32>,
    ) -> Result<PullRequestCommitConnection> {
        let args = PageArgs::new(first, last, after, before).counting_only(ctx);
        commits_connection(&self.view, &args)
    }

    /// A list of labels associated with the object.
    async fn labels(
        &self,
        after: Option<String>,
        before: Option<String>,
        first: Option<i32>,
        last: Option<i32>,
    ) -> Result<Option<LabelConnection>> {
        let items = self
            .view
            .labels
            .iter()
            .enumerate()
            .map(|(i, record)| {
                let node = Label {
                    record: record.clone(),
                    repository_url: self.view.repository.html_url.clone(),
                };
                (i as u64 + 1, node)
            })
            .collect();
        let args = PageArgs::new(first, last, after, before);
        paginate("labels", items, &args).map(|page| Some(page.into()))
    }

    /// A list of events, comments, commits, etc. associated with the pull
    /// request. (The emulator records label events only.)
    async fn timeline_items(
        &self,
        after: Option<String>,
        before: Option<String>,
        first: Option<i32>,
        item_types: Option<Vec<PullRequestTimelineItemsItemType>>,
        last: Option<i32>,
    ) -> Result<PullRequestTimelineItemsConnection> {
        let view = &self.view;
        let items = (0..view.pr.label_events.len())
            .filter(|i| PullRequestTimelineItems::wanted(view, *i, item_types.as_deref()))
            .map(|i| (view.pr.label_events[i].database_id, i))
            .collect();
        let args = PageArgs::new(first, last, after, before);
        let node = |index| PullRequestTimelineItems::of(view, index);
        paginate_by("timelineItems", items, &args, node).map(Into::into)
    }

    /// A list of comments associated with the pull request.
    async fn comments(
        &self,
        after: Option<String>,
        before: Option<String>,
        first: Option<i32>,
        last: Option<i32>,
    ) -> Result<IssueCommentConnection> {
        let items = self
            .view
            .pr
            .issue_comments
            .iter()
            .enumerate()
            .map(|(index, c)| {
                let node = IssueComment {
                    view: self.view.clone(),
                    index,
                };
                (c.database_id, node)
            })
            .collect();
        let args = PageArgs::new(first, last, after, before);
        paginate("comments", items, &args).map(Into::into)
    }
}
