//! GitHub's enums of a pull request and its reviews, threads and
//! comments, and how the scenario's values map to them.

use async_graphql::Enum;

use crate::scenario::{PullRequestStatus, ReviewStateSpec, Side};

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
