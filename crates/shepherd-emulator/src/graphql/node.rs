//! The `Node` interface and what `node(id:)` finds: every object with a
//! global id, looked up as the viewer may see it.

use std::sync::Arc;

use async_graphql::{Interface, ID};

use super::actor::{Actor, Bot, User};
use super::label::Label;
use super::objects::{
    App, CheckRun, CheckSuite, Commit, IssueComment, PullRequest, PullRequestCommit,
    PullRequestReview, PullRequestReviewComment, PullRequestReviewThread, Repository,
    StatusCheckRollup, StatusContext, ACTIONS_APP_ID,
};
use super::view::{actors, CiView, PrView, RequestContext};
use crate::ids::{self, CommitKind, NodeKind};
use crate::state::{PullRequestRecord, State};

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

/// Finds the object a node id names, if the viewer may see it.
pub(crate) fn lookup(state: &State, rc: &RequestContext, id: &str) -> Option<Node> {
    if !rc.viewer.sees_repository() {
        // Only accounts are visible without access to the repository.
        let (kind, _) = ids::parse_node_id(id)?;
        if !matches!(kind, NodeKind::User | NodeKind::Bot) {
            return None;
        }
    }
    let Some((kind, database_id)) = ids::parse_node_id(id) else {
        return ci_lookup(rc, state, id);
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
        _ if !rc.viewer.sees_repository() => None,
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
        | NodeKind::App => ci_lookup(rc, state, id),
        // Read through REST (`GET …/issues/{n}/events`) only: the
        // emulator's schema has no timeline types.
        NodeKind::LabeledEvent | NodeKind::UnlabeledEvent => None,
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

fn contains(pr: &PullRequestRecord, kind: NodeKind, database_id: u64) -> bool {
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

/// Looks up a CI object by node id for `node(id:)`.
fn ci_lookup(rc: &RequestContext, state: &State, id: &str) -> Option<Node> {
    let ci = CiView::new(state);
    if let Some((kind, key)) = ids::parse_commit_node_id(id) {
        return match kind {
            CommitKind::Commit => Some(Node::Commit(Commit::new(key, ci))),
            CommitKind::StatusCheckRollup => {
                ci.ci.rollup_state(&key)?;
                Some(Node::StatusCheckRollup(StatusCheckRollup { sha: key, ci }))
            }
            CommitKind::PullRequestCommit => {
                let (number, sha) = key.split_once(':')?;
                let view =
                    PrView::new(state, number.parse().ok()?, &rc.viewer, &rc.shared.base_url)?;
                view.pr.commits.contains(&sha.to_owned()).then(|| {
                    Node::PullRequestCommit(PullRequestCommit {
                        view,
                        sha: sha.to_owned(),
                    })
                })
            }
        };
    }
    let (kind, database_id) = ids::parse_node_id(id)?;
    match kind {
        NodeKind::CheckRun => {
            let record = ci.ci.check_run(database_id)?.clone();
            Some(Node::CheckRun(CheckRun { record, ci }))
        }
        NodeKind::CheckSuite => {
            let record = ci.ci.check_suite(database_id)?.clone();
            Some(Node::CheckSuite(CheckSuite { record, ci }))
        }
        NodeKind::StatusContext => {
            let record = ci.ci.status(database_id)?.clone();
            Some(Node::StatusContext(StatusContext { record, ci }))
        }
        NodeKind::App if database_id == ACTIONS_APP_ID => Some(Node::App(App)),
        _ => None,
    }
}
