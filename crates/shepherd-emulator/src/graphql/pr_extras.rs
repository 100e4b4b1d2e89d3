//! GitHub's enums and small objects for what `gh` reads of a pull request
//! beyond Shepherd's own needs: `mergeStateStatus`, `authorAssociation`,
//! the `orderBy` of `Repository.pullRequests` and the base branch's
//! protection rule.

use async_graphql::{Enum, InputObject, SimpleObject};

/// Detailed status information about a pull request merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub(crate) enum MergeStateStatus {
    /// The head ref is out of date.
    Behind,
    /// The merge is blocked.
    Blocked,
    /// Mergeable and passing commit status.
    Clean,
    /// The merge commit cannot be cleanly created.
    Dirty,
    /// The merge is blocked due to the pull request being a draft.
    Draft,
    /// Mergeable with passing commit status and pre-receive hooks.
    HasHooks,
    /// The state cannot currently be determined.
    Unknown,
    /// Mergeable with non-passing commit status.
    Unstable,
}

impl MergeStateStatus {
    /// The GraphQL spelling of REST's `mergeable_state`
    /// (`crate::pr_derived::mergeable_state`).
    pub(crate) fn from_rest(word: &str) -> MergeStateStatus {
        match word {
            "draft" => MergeStateStatus::Draft,
            "blocked" => MergeStateStatus::Blocked,
            "unstable" => MergeStateStatus::Unstable,
            "clean" => MergeStateStatus::Clean,
            _ => MergeStateStatus::Unknown,
        }
    }
}

/// A comment author association with repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub(crate) enum CommentAuthorAssociation {
    /// Author has been invited to collaborate on the repository.
    Collaborator,
    /// Author has previously committed to the repository.
    Contributor,
    /// Author has not previously committed to GitHub.
    FirstTimer,
    /// Author has not previously committed to the repository.
    FirstTimeContributor,
    /// Author is a placeholder for an unclaimed user.
    Mannequin,
    /// Author is a member of the organization that owns the repository.
    Member,
    /// Author has no association with the repository.
    None,
    /// Author is the owner of the repository.
    Owner,
}

impl CommentAuthorAssociation {
    /// The GraphQL spelling of REST's `author_association`
    /// (`crate::pr_derived::author_association`).
    pub(crate) fn from_rest(word: &str) -> CommentAuthorAssociation {
        match word {
            "OWNER" => CommentAuthorAssociation::Owner,
            "COLLABORATOR" => CommentAuthorAssociation::Collaborator,
            "MEMBER" => CommentAuthorAssociation::Member,
            "CONTRIBUTOR" => CommentAuthorAssociation::Contributor,
            "FIRST_TIME_CONTRIBUTOR" => CommentAuthorAssociation::FirstTimeContributor,
            "FIRST_TIMER" => CommentAuthorAssociation::FirstTimer,
            _ => CommentAuthorAssociation::None,
        }
    }
}

/// Possible directions in which to order a list of items when provided an
/// `orderBy` argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub(crate) enum OrderDirection {
    /// Specifies an ascending order for a given `orderBy` argument.
    Asc,
    /// Specifies a descending order for a given `orderBy` argument.
    Desc,
}

/// Properties by which issue connections can be ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub(crate) enum IssueOrderField {
    /// Order issues by comment count
    Comments,
    /// Order issues by creation time
    CreatedAt,
    /// Order issues by update time
    UpdatedAt,
}

/// Ways in which lists of issues can be ordered upon return.
#[derive(Debug, Clone, Copy, InputObject)]
pub(crate) struct IssueOrder {
    /// The direction in which to order issues by the specified field.
    pub(crate) direction: OrderDirection,
    /// The field in which to order issues by.
    pub(crate) field: IssueOrderField,
}

/// A branch protection rule: the emulator's protected branches (the PR's
/// base and the default branch, when there are required checks).
#[derive(Debug, Clone, SimpleObject)]
pub(crate) struct BranchProtectionRule {
    /// Identifies the protection rule pattern.
    pub(crate) pattern: String,
    /// Are status checks required to update matching branches.
    pub(crate) requires_status_checks: bool,
    /// Are branches required to be up to date before merging (never: REST's
    /// `strict` is `false` too).
    pub(crate) requires_strict_status_checks: bool,
    /// List of required status check contexts that must pass for commits to
    /// be accepted to matching branches.
    pub(crate) required_status_check_contexts: Option<Vec<Option<String>>>,
}
