//! `PullRequest` and what hangs off it: review threads, review comments,
//! reviews and issue comments, with GitHub's names and nullability.

use std::borrow::Cow;
use std::collections::HashSet;

use async_graphql::context::QueryEnv;
use async_graphql::parser::types::{Field, SelectionSet};
use async_graphql::registry::Registry;
use async_graphql::resolver_utils::enum_value;
use async_graphql::{
    Context, ContextSelectionSet, Enum, Object, OutputType, Positioned, Result, ServerResult,
    Value, ID,
};

use super::actor::Actor;
use super::changed_file::{self, PullRequestChangedFileConnection};
use super::checks::{commits_connection, PullRequestCommitConnection};
use super::connection::{
    paginate, paginate_by, paginate_slice, IssueCommentConnection, LabelConnection, PageArgs,
    PageInfo, PullRequestReviewCommentConnection, PullRequestReviewConnection,
    PullRequestReviewThreadConnection,
};
use super::empty_lists::{
    empty_page, reaction_groups, Milestone, ProjectCardConnection, ReactionGroup,
    ReviewRequestConnection, UserConnection,
};
use super::json::{
    argument, plain_fields, write_bool, write_int, write_name, write_object, write_str, FieldsMemo,
    JsonString, JsonStrings, JsonText,
};
use super::label::Label;
use super::objects::{
    CommentNode, Commit, IssueComment, PullRequest, PullRequestReview, PullRequestReviewComment,
    PullRequestReviewThread, Ref, Repository, ThreadNode,
};
use super::owner::RepositoryOwner;
use super::pr_extras::{CommentAuthorAssociation, MergeStateStatus};
use super::scalars::{DateTime, GitObjectId, Uri};
use super::timeline::{
    PullRequestTimelineItems, PullRequestTimelineItemsConnection, PullRequestTimelineItemsItemType,
};
use super::view::{ActorInfo, PrView, RequestContext};
use crate::hunk::DiffHunk;
use crate::scenario::{Permission, PullRequestStatus, ReviewStateSpec, Side, UserKind};
use crate::state::{IssueCommentRecord, ReviewCommentRecord, ReviewRecord, ThreadRecord};

/// The possible states of a pull request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub(crate) enum PullRequestState {
    /// A pull request that has been closed without being merged.
    Closed,
    /// A pull request that has been closed by being merged.
    Merged,
    /// A pull request that is still open.
    Open,
}

/// Whether or not a PullRequest can be merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub(crate) enum MergeableState {
    /// The pull request cannot be merged due to merge conflicts.
    Conflicting,
    /// The pull request can be merged.
    Mergeable,
    /// The mergeability of the pull request is still being calculated.
    Unknown,
}

/// The review status of a pull request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub(crate) enum PullRequestReviewDecision {
    /// The pull request has received an approving review.
    Approved,
    /// Changes have been requested on the pull request.
    ChangesRequested,
    /// A review is required before the pull request can be merged.
    ReviewRequired,
}

/// The possible sides of a diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub(crate) enum DiffSide {
    /// The left side of the diff.
    Left,
    /// The right side of the diff.
    Right,
}

impl From<PullRequestStatus> for PullRequestState {
    fn from(status: PullRequestStatus) -> Self {
        match status {
            PullRequestStatus::Open => PullRequestState::Open,
            PullRequestStatus::Closed => PullRequestState::Closed,
            PullRequestStatus::Merged => PullRequestState::Merged,
        }
    }
}

impl From<Side> for DiffSide {
    fn from(side: Side) -> Self {
        match side {
            Side::Left => DiffSide::Left,
            Side::Right => DiffSide::Right,
        }
    }
}

/// The possible subject types of a pull request review comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub(crate) enum PullRequestReviewThreadSubjectType {
    /// A comment that has been made against the file of a pull request.
    File,
    /// A comment that has been made against the line of a pull request.
    Line,
}

/// The possible states of a pull request review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub(crate) enum PullRequestReviewState {
    /// A review allowing the pull request to merge.
    Approved,
    /// A review blocking the pull request from merging.
    ChangesRequested,
    /// An informational review.
    Commented,
    /// A review that has been dismissed.
    Dismissed,
    /// A review that has not yet been submitted.
    Pending,
}

impl From<ReviewStateSpec> for PullRequestReviewState {
    fn from(state: ReviewStateSpec) -> Self {
        match state {
            ReviewStateSpec::Pending => PullRequestReviewState::Pending,
            ReviewStateSpec::Commented => PullRequestReviewState::Commented,
            ReviewStateSpec::Approved => PullRequestReviewState::Approved,
            ReviewStateSpec::ChangesRequested => PullRequestReviewState::ChangesRequested,
            ReviewStateSpec::Dismissed => PullRequestReviewState::Dismissed,
        }
    }
}

/// The possible states of a pull request review comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub(crate) enum PullRequestReviewCommentState {
    /// A comment that is part of a pending review.
    Pending,
    /// A comment that is part of a submitted review.
    Submitted,
}

fn small_int(n: u64) -> Option<i32> {
    i32::try_from(n).ok()
}

fn line_int(n: Option<u32>) -> Option<i32> {
    n.and_then(|n| i32::try_from(n).ok())
}

fn actor(view: &PrView, login: &str) -> Option<Actor> {
    actor_info(view, login).cloned().map(Actor::from_info)
}

fn actor_info<'a>(view: &'a PrView, login: &str) -> Option<&'a ActorInfo> {
    // An unknown login is a deleted account: GitHub answers `author: null`.
    view.actors.get(login)
}

/// How `login` relates to the repository (REST's `author_association`).
fn association(ctx: &Context<'_>, view: &PrView, login: &str) -> Result<CommentAuthorAssociation> {
    let rc = ctx.data::<RequestContext>()?;
    let state = rc.shared.read();
    let word = crate::pr_derived::author_association(&state, &view.repository, login);
    Ok(CommentAuthorAssociation::from_rest(word))
}

/// The sums of the PR's diff: additions, deletions, files.
fn diff_totals(view: &PrView) -> (i32, i32, i32) {
    let files = changed_file::files(view);
    let additions = files.iter().map(|f| f.additions).sum();
    let deletions = files.iter().map(|f| f.deletions).sum();
    let count = i32::try_from(files.len()).unwrap_or(i32::MAX);
    (additions, deletions, count)
}

impl PullRequest {
    /// The page of the reviews at `indices` (into the PR's reviews, in
    /// order) that `args` asks for, cursors by database id.
    fn review_page(
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
        let args = PageArgs {
            first,
            last,
            after,
            before,
        };
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
        let args = PageArgs {
            first,
            last,
            after,
            before,
        };
        self.review_page("latestReviews", latest, &args)
    }

    /// A list of review requests associated with the pull request: none
    /// (the emulator has no review requests).
    async fn review_requests(
        &self,
        ctx: &Context<'_>,
        after: Option<String>,
        before: Option<String>,
        first: Option<i32>,
        last: Option<i32>,
    ) -> Result<Option<ReviewRequestConnection>> {
        empty_page(ctx, "reviewRequests", first, last, after, before).map(|p| Some(p.into()))
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
        let args = PageArgs {
            first,
            last,
            after,
            before,
        };
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
        let args = PageArgs {
            first,
            last,
            after,
            before,
        };
        let node = |index| PullRequestReviewThread {
            view: self.view.clone(),
            index,
        };
        if self.view.hides_nothing() {
            let threads = &self.view.pr.threads;
            return paginate_slice("reviewThreads", threads, |t| t.database_id, &args, node)
                .map(Into::into);
        }
        let items = self
            .view
            .pr
            .threads
            .iter()
            .enumerate()
            .filter(|(_, t)| self.view.thread_visible(t))
            .map(|(index, t)| (t.database_id, index))
            .collect();
        paginate_by("reviewThreads", items, &args, node).map(Into::into)
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
        let args = PageArgs {
            first,
            last,
            after,
            before,
        }
        .counting_only(ctx);
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
        let args = PageArgs {
            first,
            last,
            after,
            before,
        };
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
        let args = PageArgs {
            first,
            last,
            after,
            before,
        };
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
        let args = PageArgs {
            first,
            last,
            after,
            before,
        };
        paginate("comments", items, &args).map(Into::into)
    }
}

impl PullRequestReviewThread {
    fn record(&self) -> &ThreadRecord {
        &self.view.pr.threads[self.index]
    }

    fn viewer_can_toggle(&self) -> bool {
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
    async fn resolved_by(&self) -> Option<super::actor::User> {
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
        self.comments_page(&PageArgs {
            first,
            last,
            after,
            before,
        })
    }
}

impl PullRequestReviewThread {
    /// What `comments` answers.
    fn comments_page(&self, args: &PageArgs) -> Result<PullRequestReviewCommentConnection> {
        let args = args.clone();
        let node = |index| PullRequestReviewComment {
            view: self.view.clone(),
            thread: self.index,
            index,
        };
        let comments = &self.record().comments;
        if self.view.hides_nothing() {
            return paginate_slice("comments", comments, |c| c.database_id, &args, node)
                .map(Into::into);
        }
        let items = comments
            .iter()
            .enumerate()
            .filter(|(_, c)| self.view.comment_visible(c))
            .map(|(index, c)| (c.database_id, index))
            .collect();
        paginate_by("comments", items, &args, node).map(Into::into)
    }
}

impl PullRequestReviewComment {
    fn thread_record(&self) -> &ThreadRecord {
        &self.view.pr.threads[self.thread]
    }

    fn record(&self) -> &ReviewCommentRecord {
        &self.thread_record().comments[self.index]
    }

    fn url_text(&self) -> String {
        format!(
            "{}#discussion_r{}",
            self.view.pr.html_url,
            self.record().database_id
        )
    }

    fn review(&self) -> Option<PullRequestReview> {
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

impl OutputType for ThreadNode {
    fn type_name() -> Cow<'static, str> {
        <PullRequestReviewThread as OutputType>::type_name()
    }

    fn create_type_info(registry: &mut Registry) -> String {
        <PullRequestReviewThread as OutputType>::create_type_info(registry)
    }

    async fn resolve(
        &self,
        ctx: &ContextSelectionSet<'_>,
        field: &Positioned<Field>,
    ) -> ServerResult<Value> {
        if let Some(strings) = ctx.data_opt::<JsonStrings>() {
            let mut out = Vec::with_capacity(1024);
            let mut hunks = Vec::new();
            if self
                .0
                .write_json(ctx.query_env, ctx.item, &mut out, &mut hunks)
                .is_some()
            {
                return Ok(strings.text(JsonText::new(out, hunks)));
            }
        }
        OutputType::resolve(&self.0, ctx, field).await
    }
}

impl PullRequestReviewThread {
    /// Writes this thread as JSON, when `set` asks only for fields written
    /// here (those of a page of review threads), with the values the
    /// resolvers above give; its comments' hunks' places go into `hunks`.
    /// `None` (a field not written here, a page of comments that fails):
    /// async-graphql resolves it.
    fn write_json(
        &self,
        env: &QueryEnv,
        set: &Positioned<SelectionSet>,
        out: &mut Vec<u8>,
        hunks: &mut Vec<(usize, DiffHunk)>,
    ) -> Option<()> {
        let fields = plain_fields(env, set, "PullRequestReviewThread", &["comments"])?;
        let mut memo = FieldsMemo::default();
        let record = self.record();
        write_object(out, &fields, |out, field| {
            let line = |n: Option<u32>| line_int(n);
            let side = |side: Side| match enum_value(DiffSide::from(side)) {
                Value::Enum(name) => Some(name),
                _ => None,
            };
            match field.name {
                "__typename" => write_str(out, "PullRequestReviewThread"),
                "id" => write_str(out, &record.id),
                "isResolved" | "isCollapsed" => write_bool(out, record.resolved),
                "isOutdated" => write_bool(out, record.outdated),
                "path" => write_str(out, &record.path),
                "line" => write_int(out, line(record.line())),
                "startLine" => write_int(out, line(record.start_line())),
                "originalLine" => write_int(out, line(record.original_line)),
                "originalStartLine" => write_int(out, line(record.original_start_line)),
                "diffSide" => write_name(out, &side(record.side)?),
                "subjectType" => match enum_value(match record.original_line {
                    Some(_) => PullRequestReviewThreadSubjectType::Line,
                    None => PullRequestReviewThreadSubjectType::File,
                }) {
                    Value::Enum(name) => write_name(out, &name),
                    _ => return None,
                },
                "viewerCanReply" => {
                    write_bool(out, self.view.viewer.permission >= Permission::Write)
                }
                "viewerCanResolve" => write_bool(out, !record.resolved && self.viewer_can_toggle()),
                "viewerCanUnresolve" => {
                    write_bool(out, record.resolved && self.viewer_can_toggle())
                }
                "comments" => {
                    let int = |name| match argument(env, field, name)? {
                        Value::Null => Some(None),
                        Value::Number(n) => i32::try_from(n.as_i64()?).ok().map(Some),
                        _ => None,
                    };
                    let text = |name| match argument(env, field, name)? {
                        Value::Null => Some(None),
                        Value::String(s) => Some(Some(s)),
                        _ => None,
                    };
                    let args = PageArgs {
                        first: int("first")?,
                        last: int("last")?,
                        after: text("after")?,
                        before: text("before")?,
                    };
                    // An error is async-graphql's to report, with its path.
                    let page = self.comments_page(&args).ok()?;
                    comments_json(&page, env, field.selection_set, out, hunks, &mut memo)?;
                }
                _ => return None,
            }
            Some(())
        })
    }
}

/// Writes a page of comments for a selection of plain fields (`nodes`, not
/// `edges`).
fn comments_json<'a>(
    page: &PullRequestReviewCommentConnection,
    env: &'a QueryEnv,
    set: &'a Positioned<SelectionSet>,
    out: &mut Vec<u8>,
    hunks: &mut Vec<(usize, DiffHunk)>,
    memo: &mut FieldsMemo<'a>,
) -> Option<()> {
    let fields = memo.get(env, set, "PullRequestReviewCommentConnection", &[])?;
    write_object(out, &fields, |out, field| {
        match field.name {
            "__typename" => write_str(out, "PullRequestReviewCommentConnection"),
            "totalCount" => write_int(out, Some(page.total_count)),
            "pageInfo" => page_info_json(&page.page_info, env, field.selection_set, out)?,
            "nodes" => match &page.nodes {
                None => out.extend_from_slice(b"null"),
                Some(nodes) => {
                    out.push(b'[');
                    for (i, node) in nodes.iter().enumerate() {
                        if i > 0 {
                            out.push(b',');
                        }
                        match node {
                            None => out.extend_from_slice(b"null"),
                            Some(node) => {
                                node.0
                                    .write_json(env, field.selection_set, out, hunks, memo)?
                            }
                        }
                    }
                    out.push(b']');
                }
            },
            _ => return None,
        }
        Some(())
    })
}

/// Writes a `PageInfo` for a selection of plain fields.
fn page_info_json(
    info: &PageInfo,
    env: &QueryEnv,
    set: &Positioned<SelectionSet>,
    out: &mut Vec<u8>,
) -> Option<()> {
    let fields = plain_fields(env, set, "PageInfo", &[])?;
    let cursor = |out: &mut Vec<u8>, cursor: &Option<String>| match cursor {
        Some(cursor) => write_str(out, cursor),
        None => out.extend_from_slice(b"null"),
    };
    write_object(out, &fields, |out, field| {
        match field.name {
            "__typename" => write_str(out, "PageInfo"),
            "hasNextPage" => write_bool(out, info.has_next_page),
            "hasPreviousPage" => write_bool(out, info.has_previous_page),
            "startCursor" => cursor(out, &info.start_cursor),
            "endCursor" => cursor(out, &info.end_cursor),
            _ => return None,
        }
        Some(())
    })
}

impl OutputType for CommentNode {
    fn type_name() -> Cow<'static, str> {
        <PullRequestReviewComment as OutputType>::type_name()
    }

    fn create_type_info(registry: &mut Registry) -> String {
        <PullRequestReviewComment as OutputType>::create_type_info(registry)
    }

    async fn resolve(
        &self,
        ctx: &ContextSelectionSet<'_>,
        field: &Positioned<Field>,
    ) -> ServerResult<Value> {
        if let Some(strings) = ctx.data_opt::<JsonStrings>() {
            if let Some(json) = self.0.json(ctx.query_env, ctx.item) {
                return Ok(strings.text(json));
            }
        }
        OutputType::resolve(&self.0, ctx, field).await
    }
}

impl PullRequestReviewComment {
    /// This comment as JSON text, when `set` asks only for fields written
    /// here (the ones a page of review threads asks for), with the values
    /// the resolvers above give. `None`: async-graphql resolves it.
    fn json(&self, env: &QueryEnv, set: &Positioned<SelectionSet>) -> Option<JsonText> {
        let mut out = Vec::with_capacity(512);
        let mut hunks = Vec::new();
        self.write_json(env, set, &mut out, &mut hunks, &mut FieldsMemo::default())?;
        Some(JsonText::new(out, hunks))
    }

    /// Writes [`Self::json`] into `out`, its hunk's place into `hunks`.
    fn write_json<'a>(
        &self,
        env: &'a QueryEnv,
        set: &'a Positioned<SelectionSet>,
        out: &mut Vec<u8>,
        hunks: &mut Vec<(usize, DiffHunk)>,
        memo: &mut FieldsMemo<'a>,
    ) -> Option<()> {
        let fields = memo.get(env, set, "PullRequestReviewComment", &[])?;
        let record = self.record();
        write_object(out, &fields, |out, field| {
            match field.name {
                "__typename" => write_str(out, "PullRequestReviewComment"),
                "id" => write_str(out, &record.id),
                "databaseId" => write_int(out, small_int(record.database_id)),
                "body" => write_str(out, &record.body),
                "url" => write_str(out, &self.url_text()),
                "createdAt" => write_str(out, &record.created_at),
                // What `diffHunk` resolves to, made JSON once.
                "diffHunk" => hunks.push((out.len(), record.diff_hunk.clone())),
                "path" => write_str(out, &self.thread_record().path),
                "outdated" => write_bool(out, self.thread_record().outdated),
                "viewerDidAuthor" => write_bool(out, record.author == self.view.viewer.login),
                "author" => match actor_info(&self.view, &record.author) {
                    None => out.extend_from_slice(b"null"),
                    Some(info) => actor_json(out, env, field.selection_set, info, memo)?,
                },
                "pullRequestReview" => match self.review() {
                    None => out.extend_from_slice(b"null"),
                    Some(review) => review.json(out, env, field.selection_set, memo)?,
                },
                _ => return None,
            }
            Some(())
        })
    }
}

/// Writes an `Actor` selection of plain fields, as `actor.rs` resolves them
/// (`Actor::from_info` picks the type).
fn actor_json<'a>(
    out: &mut Vec<u8>,
    env: &'a QueryEnv,
    set: &'a Positioned<SelectionSet>,
    info: &ActorInfo,
    memo: &mut FieldsMemo<'a>,
) -> Option<()> {
    let typename = match info.kind {
        UserKind::User => "User",
        UserKind::Bot => "Bot",
    };
    let fields = memo.get(env, set, "Actor", &[])?;
    write_object(out, &fields, |out, field| {
        match field.name {
            "__typename" => write_str(out, typename),
            "login" => write_str(out, &info.login),
            "url" => write_str(out, &info.url),
            "resourcePath" => write_str(out, &info.resource_path),
            _ => return None,
        }
        Some(())
    })
}

impl PullRequestReview {
    /// Writes this review for a selection of plain fields (see
    /// [`PullRequestReviewComment::json`]).
    fn json<'a>(
        &self,
        out: &mut Vec<u8>,
        env: &'a QueryEnv,
        set: &'a Positioned<SelectionSet>,
        memo: &mut FieldsMemo<'a>,
    ) -> Option<()> {
        let fields = memo.get(env, set, "PullRequestReview", &[])?;
        let record = self.record();
        write_object(out, &fields, |out, field| {
            match field.name {
                "__typename" => write_str(out, "PullRequestReview"),
                "id" => write_str(out, &record.id),
                "databaseId" => write_int(out, small_int(record.database_id)),
                "body" => write_str(out, &record.body),
                "url" => write_str(out, &self.url_text()),
                "createdAt" => write_str(out, &record.created_at),
                "state" => match enum_value(PullRequestReviewState::from(record.state)) {
                    Value::Enum(name) => write_name(out, &name),
                    _ => return None,
                },
                _ => return None,
            }
            Some(())
        })
    }
}

impl PullRequestReview {
    fn record(&self) -> &ReviewRecord {
        &self.view.pr.reviews[self.index]
    }

    fn url_text(&self) -> String {
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

impl IssueComment {
    fn record(&self) -> &IssueCommentRecord {
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
