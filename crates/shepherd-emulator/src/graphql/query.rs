//! The query root, `Repository`, and the `Node` interface with `node(id:)`.

use std::sync::Arc;

use async_graphql::{Context, Enum, Interface, Object, Result, ID};

use super::actor::{Actor, Bot, User};
use super::checks::{
    App, CheckRun, CheckSuite, Commit, PullRequestCommit, StatusCheckRollup, StatusContext,
};
use super::errors::not_found;
use super::label::Label;
use super::pull_request::{
    IssueComment, PullRequest, PullRequestReview, PullRequestReviewComment, PullRequestReviewThread,
};
use super::scalars::Uri;
use super::view::{actors, ActorInfo, PrView, RequestContext};
use crate::ids::{self, NodeKind};
use crate::scenario::Permission;
use crate::state::{RepositoryRecord, State};

/// The access level to a repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub(crate) enum RepositoryPermission {
    /// Can read, clone, push, and add collaborators.
    Admin,
    /// Can read, clone and push, and manage some settings.
    Maintain,
    /// Can read and clone.
    Read,
    /// Can read, clone, and manage issues and pull requests.
    Triage,
    /// Can read, clone, and push.
    Write,
}

/// A repository.
#[derive(Clone)]
pub(crate) struct Repository {
    record: RepositoryRecord,
    permission: Permission,
}

impl Repository {
    pub(crate) fn new(record: RepositoryRecord, permission: Permission) -> Self {
        Repository { record, permission }
    }
}

#[Object]
impl Repository {
    /// The Node ID of the Repository object.
    pub(crate) async fn id(&self) -> ID {
        ID(self.record.id.clone())
    }

    /// Identifies the primary key from the database.
    async fn database_id(&self) -> Option<i32> {
        i32::try_from(self.record.database_id).ok()
    }

    /// The name of the repository.
    async fn name(&self) -> String {
        self.record.name.clone()
    }

    /// The repository's name with owner.
    async fn name_with_owner(&self) -> String {
        self.record.full_name()
    }

    /// The HTTP URL for this repository.
    async fn url(&self) -> Uri {
        Uri(self.record.html_url.clone())
    }

    /// Identifies if the repository is private or internal.
    async fn is_private(&self) -> bool {
        true
    }

    /// Identifies if the repository is a fork.
    async fn is_fork(&self) -> bool {
        false
    }

    /// The users permission level on the repository.
    async fn viewer_permission(&self) -> Option<RepositoryPermission> {
        match self.permission {
            Permission::None => None,
            Permission::Read => Some(RepositoryPermission::Read),
            Permission::Write => Some(RepositoryPermission::Write),
            Permission::Admin => Some(RepositoryPermission::Admin),
        }
    }

    /// Returns a single pull request from the current repository by number.
    async fn pull_request(&self, ctx: &Context<'_>, number: i32) -> Result<Option<PullRequest>> {
        let rc = ctx.data::<RequestContext>()?;
        let view = u64::try_from(number).ok().and_then(|n| {
            let state = rc.shared.read();
            PrView::new(&state, n, &rc.viewer, &rc.shared.base_url)
        });
        match view {
            Some(view) => Ok(Some(PullRequest { view })),
            None => Err(not_found(format!(
                "Could not resolve to a PullRequest with the number of {number}."
            ))),
        }
    }
}

/// An object with an ID.
#[derive(Clone, Interface)]
#[graphql(field(name = "id", ty = "ID", desc = "ID of the object."))]
pub(crate) enum Node {
    /// A repository.
    Repository(Repository),
    /// A user.
    User(User),
    /// A bot.
    Bot(Bot),
    /// A pull request.
    PullRequest(PullRequest),
    /// A review thread.
    PullRequestReviewThread(PullRequestReviewThread),
    /// A review comment.
    PullRequestReviewComment(PullRequestReviewComment),
    /// A review.
    PullRequestReview(PullRequestReview),
    /// An issue comment.
    IssueComment(IssueComment),
    /// A label.
    Label(Label),
    /// A commit.
    Commit(Commit),
    /// A commit of a pull request.
    PullRequestCommit(PullRequestCommit),
    /// The CI rollup of a commit.
    StatusCheckRollup(StatusCheckRollup),
    /// A check run.
    CheckRun(CheckRun),
    /// A check suite.
    CheckSuite(CheckSuite),
    /// A legacy commit status.
    StatusContext(StatusContext),
    /// A GitHub App.
    App(App),
}

/// The query root of GitHub's GraphQL interface.
pub(crate) struct Query;

#[Object]
impl Query {
    /// The currently authenticated user.
    async fn viewer(&self, ctx: &Context<'_>) -> Result<User> {
        let rc = ctx.data::<RequestContext>()?;
        let v = &rc.viewer;
        // GitHub types `viewer` as `User!`, whatever the account's kind.
        let info = ActorInfo::new(
            &v.login,
            v.kind,
            v.database_id,
            &v.node_id,
            &rc.shared.base_url,
        );
        Ok(User(info))
    }

    /// Lookup a given repository by the owner and repository name.
    async fn repository(
        &self,
        ctx: &Context<'_>,
        name: String,
        owner: String,
    ) -> Result<Option<Repository>> {
        let rc = ctx.data::<RequestContext>()?;
        let state = rc.shared.read();
        // GitHub hides repositories the viewer cannot see behind the same
        // answer as missing ones.
        if !state.is_repository(&owner, &name) || rc.viewer.permission == Permission::None {
            return Err(not_found(format!(
                "Could not resolve to a Repository with the name '{owner}/{name}'."
            )));
        }
        Ok(Some(Repository::new(
            state.repository.clone(),
            rc.viewer.permission,
        )))
    }

    /// Fetches an object given its ID.
    async fn node(&self, ctx: &Context<'_>, id: ID) -> Result<Option<Node>> {
        let rc = ctx.data::<RequestContext>()?;
        let state = rc.shared.read();
        lookup_node(&state, rc, &id).map(Some).ok_or_else(|| {
            not_found(format!(
                "Could not resolve to a node with the global id of '{}'",
                id.0
            ))
        })
    }
}

/// Finds the object a node id names, if the viewer may see it.
fn lookup_node(state: &State, rc: &RequestContext, id: &str) -> Option<Node> {
    if rc.viewer.permission == Permission::None {
        // Only accounts are visible without access to the repository.
        let (kind, _) = ids::parse_node_id(id)?;
        if !matches!(kind, NodeKind::User | NodeKind::Bot) {
            return None;
        }
    }
    let Some((kind, database_id)) = ids::parse_node_id(id) else {
        return super::checks::lookup(rc, state, id);
    };
    let base_url = &rc.shared.base_url;
    match kind {
        NodeKind::User | NodeKind::Bot => {
            let info = actors(state, base_url)
                .into_values()
                .find(|a| a.database_id == database_id)?;
            match Actor::from_info(info) {
                Actor::User(user) if kind == NodeKind::User => Some(Node::User(user)),
                Actor::Bot(bot) if kind == NodeKind::Bot => Some(Node::Bot(bot)),
                _ => None,
            }
        }
        _ if rc.viewer.permission == Permission::None => None,
        NodeKind::Repository => (state.repository.database_id == database_id).then(|| {
            Node::Repository(Repository::new(
                state.repository.clone(),
                rc.viewer.permission,
            ))
        }),
        NodeKind::Label => state
            .labels
            .iter()
            .find(|l| l.database_id == database_id)
            .map(|record| {
                Node::Label(Label {
                    record: record.clone(),
                    repository_url: state.repository.html_url.clone(),
                })
            }),
        NodeKind::CheckRun
        | NodeKind::CheckSuite
        | NodeKind::StatusContext
        | NodeKind::WorkflowRun
        | NodeKind::App => super::checks::lookup(rc, state, id),
        NodeKind::PullRequest
        | NodeKind::ReviewThread
        | NodeKind::ReviewComment
        | NodeKind::Review
        | NodeKind::IssueComment => {
            let pr = state
                .pull_requests
                .iter()
                .find(|pr| contains(pr, kind, database_id))?;
            let view = PrView::new(state, pr.number, &rc.viewer, base_url)?;
            node_in_pull_request(view, kind, database_id)
        }
    }
}

fn contains(pr: &crate::state::PullRequestRecord, kind: NodeKind, database_id: u64) -> bool {
    match kind {
        NodeKind::PullRequest => pr.database_id == database_id,
        NodeKind::ReviewThread => pr.threads.iter().any(|t| t.database_id == database_id),
        NodeKind::ReviewComment => pr
            .threads
            .iter()
            .any(|t| t.comments.iter().any(|c| c.database_id == database_id)),
        NodeKind::Review => pr.reviews.iter().any(|r| r.database_id == database_id),
        NodeKind::IssueComment => pr
            .issue_comments
            .iter()
            .any(|c| c.database_id == database_id),
        _ => false,
    }
}

fn node_in_pull_request(view: Arc<PrView>, kind: NodeKind, database_id: u64) -> Option<Node> {
    let pr = &view.pr;
    match kind {
        NodeKind::PullRequest => Some(Node::PullRequest(PullRequest { view: view.clone() })),
        NodeKind::ReviewThread => {
            let index = pr
                .threads
                .iter()
                .position(|t| t.database_id == database_id)?;
            if !view.thread_visible(&pr.threads[index]) {
                return None;
            }
            Some(Node::PullRequestReviewThread(PullRequestReviewThread {
                view: view.clone(),
                index,
            }))
        }
        NodeKind::ReviewComment => {
            let (thread, index) = pr.threads.iter().enumerate().find_map(|(t, thread)| {
                let c = thread
                    .comments
                    .iter()
                    .position(|c| c.database_id == database_id)?;
                Some((t, c))
            })?;
            if !view.comment_visible(&pr.threads[thread].comments[index]) {
                return None;
            }
            Some(Node::PullRequestReviewComment(PullRequestReviewComment {
                view: view.clone(),
                thread,
                index,
            }))
        }
        NodeKind::Review => {
            let index = pr
                .reviews
                .iter()
                .position(|r| r.database_id == database_id)?;
            if !view.review_visible(database_id) {
                return None;
            }
            Some(Node::PullRequestReview(PullRequestReview {
                view: view.clone(),
                index,
            }))
        }
        NodeKind::IssueComment => {
            let index = pr
                .issue_comments
                .iter()
                .position(|c| c.database_id == database_id)?;
            Some(Node::IssueComment(IssueComment {
                view: view.clone(),
                index,
            }))
        }
        _ => None,
    }
}
