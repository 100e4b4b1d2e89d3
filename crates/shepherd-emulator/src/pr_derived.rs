//! What GitHub derives from a pull request's state rather than stores:
//! its mergeable state and how an account relates to the repository.
//! Shared by the REST and GraphQL views, so both say the same.

use crate::ci_state::CiState;
use crate::scenario::{Permission, PullRequestStatus};
use crate::state::{PullRequestRecord, RepositoryRecord, State};

/// GitHub's `mergeable_state` of an open PR: `draft`, `blocked` (a
/// required check has not succeeded), `unstable` (another check failed) or
/// `clean`. The emulator never has merge conflicts.
pub(crate) fn mergeable_state(ci: &CiState, pr: &PullRequestRecord) -> &'static str {
    if pr.status != PullRequestStatus::Open {
        return "unknown";
    }
    if pr.draft {
        return "draft";
    }
    let runs = ci.latest_check_runs(&pr.head_sha);
    let succeeded = |name: &str| {
        runs.iter().any(|r| {
            r.name == name
                && r.conclusion
                    .is_some_and(|c| matches!(c.as_str(), "success" | "neutral" | "skipped"))
        }) || ci
            .latest_statuses(&pr.head_sha)
            .iter()
            .any(|s| s.context == name && s.state.as_str() == "success")
    };
    if ci
        .required_for(&pr.base_ref)
        .iter()
        .any(|name| !succeeded(name))
    {
        return "blocked";
    }
    if runs
        .iter()
        .any(|r| r.conclusion.is_some_and(|c| c.failed()))
    {
        return "unstable";
    }
    "clean"
}

/// How a user relates to the repository, as GitHub words it
/// (`CommentAuthorAssociation`, REST's `author_association`; GitHub's
/// descriptions in quotes):
///
/// - `OWNER`, "the owner of the repository";
/// - `MEMBER`, "a member of the organization that owns the repository"
///   (`member = true` in `[[users]]`), whatever its role;
/// - `COLLABORATOR`, "invited to collaborate on the repository": any role,
///   `read` included, so the word alone does not say who may write;
/// - `CONTRIBUTOR`, "has previously committed to the repository": here an
///   account without a role whose pull request was merged;
/// - `FIRST_TIME_CONTRIBUTOR`, "has not previously committed to the
///   repository": an account without a role with a pull request not merged;
/// - `NONE`, "no association with the repository": anyone else, such as a
///   stranger commenting on a public repository.
pub(crate) fn author_association(
    state: &State,
    repo: &RepositoryRecord,
    login: &str,
) -> &'static str {
    if login == repo.owner {
        return "OWNER";
    }
    if state.user(login).is_some_and(|user| user.member) {
        return "MEMBER";
    }
    if state
        .user(login)
        .is_some_and(|user| user.permission > Permission::None)
    {
        return "COLLABORATOR";
    }
    let mut authored = state.pull_requests.iter().filter(|pr| pr.author == login);
    match authored.clone().next() {
        None => "NONE",
        Some(_) if authored.any(|pr| pr.status == PullRequestStatus::Merged) => "CONTRIBUTOR",
        Some(_) => "FIRST_TIME_CONTRIBUTOR",
    }
}
