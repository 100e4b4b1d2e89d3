//! Commits and their CI: `Commit`, `PullRequestCommit`, `StatusCheckRollup`
//! with its `CheckRun`/`StatusContext` contexts, `CheckSuite`, `App`.

use std::sync::Arc;

use async_graphql::{Context, Enum, Object, Result, SimpleObject, Union, ID};

use super::commit_detail::{self, GitActorConnection};

use super::actor::Actor;
use super::connection::{paginate, PageArgs, PageInfo};
use super::errors::not_found;
use super::objects::{
    App, CheckRun, CheckSuite, Commit, PullRequest, PullRequestCommit, StatusCheckRollup,
    StatusContext, Workflow, WorkflowRun, ACTIONS_APP_ID,
};
use super::scalars::{DateTime, GitObjectId, Uri};
use super::view::{ActorInfo, PrView, RequestContext};
use crate::ci_state::{Conclusion, RunStatus, StatusState as CiStatusState};
use crate::ids::{self, CommitKind, NodeKind};

/// The possible states for a check suite or run status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub(crate) enum CheckStatusState {
    /// The check suite or run has been completed.
    Completed,
    /// The check suite or run is in progress.
    InProgress,
    /// The check suite or run is in pending state.
    Pending,
    /// The check suite or run has been queued.
    Queued,
    /// The check suite or run has been requested.
    Requested,
    /// The check suite or run is in waiting state.
    Waiting,
}

impl From<RunStatus> for CheckStatusState {
    fn from(status: RunStatus) -> Self {
        match status {
            RunStatus::Queued => CheckStatusState::Queued,
            RunStatus::InProgress => CheckStatusState::InProgress,
            RunStatus::Completed => CheckStatusState::Completed,
        }
    }
}

/// The possible states for a check suite or run conclusion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub(crate) enum CheckConclusionState {
    /// The check suite or run was cancelled.
    Cancelled,
    /// The check suite or run has failed.
    Failure,
    /// The check suite or run has succeeded.
    Success,
    /// The check suite or run has timed out.
    TimedOut,
}

impl From<Conclusion> for CheckConclusionState {
    fn from(conclusion: Conclusion) -> Self {
        match conclusion {
            Conclusion::Success => CheckConclusionState::Success,
            Conclusion::Failure => CheckConclusionState::Failure,
            Conclusion::TimedOut => CheckConclusionState::TimedOut,
        }
    }
}

/// The possible commit status states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub(crate) enum StatusState {
    /// Status is errored.
    Error,
    /// Status is failing.
    Failure,
    /// Status is pending.
    Pending,
    /// Status is successful.
    Success,
}

impl From<CiStatusState> for StatusState {
    fn from(state: CiStatusState) -> Self {
        match state {
            CiStatusState::Pending => StatusState::Pending,
            CiStatusState::Success => StatusState::Success,
            CiStatusState::Failure => StatusState::Failure,
            CiStatusState::Error => StatusState::Error,
        }
    }
}

fn small_int(n: u64) -> Option<i32> {
    i32::try_from(n).ok()
}

#[Object]
impl Commit {
    /// The Node ID of the Commit object.
    pub(crate) async fn id(&self) -> ID {
        ID(ids::commit_node_id(CommitKind::Commit, &self.sha))
    }

    /// The Git object ID.
    async fn oid(&self) -> GitObjectId {
        GitObjectId(self.sha.clone())
    }

    /// An abbreviated version of the Git object ID.
    async fn abbreviated_oid(&self) -> String {
        self.sha.chars().take(7).collect()
    }

    /// The HTTP URL for this commit.
    async fn url(&self) -> Uri {
        Uri(format!(
            "{}/commit/{}",
            self.ci.repository.html_url, self.sha
        ))
    }

    /// The Git commit message headline.
    async fn message_headline(&self, ctx: &Context<'_>) -> Result<String> {
        Ok(commit_detail::headline(
            &commit_detail::load(ctx, self).await?,
        ))
    }

    /// The Git commit message body.
    async fn message_body(&self, ctx: &Context<'_>) -> Result<String> {
        Ok(commit_detail::body(&commit_detail::load(ctx, self).await?))
    }

    /// The Git commit message.
    async fn message(&self, ctx: &Context<'_>) -> Result<String> {
        Ok(commit_detail::load(ctx, self).await?.message)
    }

    /// The datetime when this commit was authored.
    async fn authored_date(&self, ctx: &Context<'_>) -> Result<DateTime> {
        let detail = commit_detail::load(ctx, self).await?;
        Ok(commit_detail::date(&detail.authored_date))
    }

    /// The datetime when this commit was committed.
    async fn committed_date(&self, ctx: &Context<'_>) -> Result<DateTime> {
        let detail = commit_detail::load(ctx, self).await?;
        Ok(commit_detail::date(&detail.committed_date))
    }

    /// The list of authors for this commit based on the git author and the
    /// Co-authored-by message trailer (the git author only here).
    async fn authors(
        &self,
        ctx: &Context<'_>,
        after: Option<String>,
        before: Option<String>,
        first: Option<i32>,
        last: Option<i32>,
    ) -> Result<GitActorConnection> {
        let detail = commit_detail::load(ctx, self).await?;
        let args = PageArgs::new(first, last, after, before).counting_only(ctx);
        commit_detail::authors(&detail, &args)
    }

    /// Check and Status rollup information for this commit.
    async fn status_check_rollup(&self) -> Option<StatusCheckRollup> {
        self.ci.ci.rollup_state(&self.sha)?;
        Some(StatusCheckRollup {
            sha: self.sha.clone(),
            ci: self.ci.clone(),
        })
    }
}

#[Object]
impl PullRequestCommit {
    /// The Node ID of the PullRequestCommit object.
    pub(crate) async fn id(&self) -> ID {
        let key = format!("{}:{}", self.view.pr.number, self.sha);
        ID(ids::commit_node_id(CommitKind::PullRequestCommit, &key))
    }

    /// The Git commit object.
    async fn commit(&self) -> Commit {
        Commit::new(self.sha.clone(), self.view.ci.clone())
    }

    /// The pull request this commit belongs to.
    async fn pull_request(&self) -> PullRequest {
        PullRequest {
            view: self.view.clone(),
        }
    }

    /// The HTTP URL for this pull request commit.
    async fn url(&self) -> Uri {
        Uri(format!("{}/commits/{}", self.view.pr.html_url, self.sha))
    }
}

/// The connection type for PullRequestCommit.
#[derive(SimpleObject)]
pub(crate) struct PullRequestCommitConnection {
    /// A list of edges.
    pub(crate) edges: Option<Vec<Option<PullRequestCommitEdge>>>,
    /// A list of nodes.
    pub(crate) nodes: Option<Vec<Option<PullRequestCommit>>>,
    /// Information to aid in pagination.
    pub(crate) page_info: PageInfo,
    /// Identifies the total count of items in the connection.
    pub(crate) total_count: i32,
}

/// An edge in a connection.
#[derive(Clone, SimpleObject)]
pub(crate) struct PullRequestCommitEdge {
    /// A cursor for use in pagination.
    pub(crate) cursor: String,
    /// The item at the end of the edge.
    pub(crate) node: Option<PullRequestCommit>,
}

/// The commits of a pull request, oldest first; cursors are positions.
pub(crate) fn commits_connection(
    view: &Arc<PrView>,
    args: &PageArgs,
) -> Result<PullRequestCommitConnection> {
    let items = view
        .pr
        .commits
        .iter()
        .enumerate()
        .map(|(i, sha)| {
            let node = PullRequestCommit {
                view: view.clone(),
                sha: sha.clone(),
            };
            (i as u64 + 1, node)
        })
        .collect();
    let page = paginate("commits", items, args)?;
    let edges = page
        .items
        .iter()
        .map(|(cursor, node)| {
            Some(PullRequestCommitEdge {
                cursor: cursor.clone(),
                node: Some(node.clone()),
            })
        })
        .collect();
    let nodes = page.items.into_iter().map(|(_, n)| Some(n)).collect();
    Ok(PullRequestCommitConnection {
        edges: Some(edges),
        nodes: Some(nodes),
        page_info: page.page_info,
        total_count: page.total_count,
    })
}

/// Types that can be inside a StatusCheckRollup context.
#[derive(Clone, Union)]
pub(crate) enum StatusCheckRollupContext {
    /// A check run.
    CheckRun(CheckRun),
    /// A legacy commit status.
    StatusContext(StatusContext),
}

/// The connection type for StatusCheckRollupContext.
#[derive(SimpleObject)]
pub(crate) struct StatusCheckRollupContextConnection {
    /// The number of check runs in this rollup.
    pub(crate) check_run_count: i32,
    /// A list of edges.
    pub(crate) edges: Option<Vec<Option<StatusCheckRollupContextEdge>>>,
    /// A list of nodes.
    pub(crate) nodes: Option<Vec<Option<StatusCheckRollupContext>>>,
    /// Information to aid in pagination.
    pub(crate) page_info: PageInfo,
    /// The number of status contexts in this rollup.
    pub(crate) status_context_count: i32,
    /// Identifies the total count of items in the connection.
    pub(crate) total_count: i32,
}

/// An edge in a connection.
#[derive(Clone, SimpleObject)]
pub(crate) struct StatusCheckRollupContextEdge {
    /// A cursor for use in pagination.
    pub(crate) cursor: String,
    /// The item at the end of the edge.
    pub(crate) node: Option<StatusCheckRollupContext>,
}

#[Object]
impl StatusCheckRollup {
    /// The Node ID of the StatusCheckRollup object.
    pub(crate) async fn id(&self) -> ID {
        ID(ids::commit_node_id(
            CommitKind::StatusCheckRollup,
            &self.sha,
        ))
    }

    /// The combined status for the commit.
    async fn state(&self) -> StatusState {
        self.ci
            .ci
            .rollup_state(&self.sha)
            .unwrap_or(CiStatusState::Pending)
            .into()
    }

    /// The commit the status and check runs are attached to.
    async fn commit(&self) -> Option<Commit> {
        Some(Commit::new(self.sha.clone(), self.ci.clone()))
    }

    /// A list of status contexts and check runs for this commit.
    async fn contexts(
        &self,
        after: Option<String>,
        before: Option<String>,
        first: Option<i32>,
        last: Option<i32>,
    ) -> Result<StatusCheckRollupContextConnection> {
        let runs = self.ci.ci.latest_check_runs(&self.sha);
        let statuses = self.ci.ci.latest_statuses(&self.sha);
        let check_run_count = i32::try_from(runs.len()).unwrap_or(i32::MAX);
        let status_context_count = i32::try_from(statuses.len()).unwrap_or(i32::MAX);
        let mut items: Vec<(u64, StatusCheckRollupContext)> = runs
            .into_iter()
            .map(|r| {
                let node = StatusCheckRollupContext::CheckRun(CheckRun {
                    record: r.clone(),
                    ci: self.ci.clone(),
                });
                (r.database_id, node)
            })
            .chain(statuses.into_iter().map(|s| {
                let node = StatusCheckRollupContext::StatusContext(StatusContext {
                    record: s.clone(),
                    ci: self.ci.clone(),
                });
                (s.database_id, node)
            }))
            .collect();
        items.sort_by_key(|(id, _)| *id);
        let args = PageArgs::new(first, last, after, before);
        let page = paginate("contexts", items, &args)?;
        let edges = page
            .items
            .iter()
            .map(|(cursor, node)| {
                Some(StatusCheckRollupContextEdge {
                    cursor: cursor.clone(),
                    node: Some(node.clone()),
                })
            })
            .collect();
        let nodes = page.items.into_iter().map(|(_, n)| Some(n)).collect();
        Ok(StatusCheckRollupContextConnection {
            check_run_count,
            edges: Some(edges),
            nodes: Some(nodes),
            page_info: page.page_info,
            status_context_count,
            total_count: page.total_count,
        })
    }
}

#[Object]
impl CheckRun {
    /// The Node ID of the CheckRun object.
    pub(crate) async fn id(&self) -> ID {
        ID(self.record.id.clone())
    }

    /// Identifies the primary key from the database.
    async fn database_id(&self) -> Option<i32> {
        small_int(self.record.database_id)
    }

    /// The name of the check for this check run.
    async fn name(&self) -> String {
        self.record.name.clone()
    }

    /// The current status of the check run.
    async fn status(&self) -> CheckStatusState {
        self.record.status.into()
    }

    /// The conclusion of the check run.
    async fn conclusion(&self) -> Option<CheckConclusionState> {
        self.record.conclusion.map(Into::into)
    }

    /// Identifies the date and time when the check run was started.
    async fn started_at(&self) -> Option<DateTime> {
        self.record.started_at.clone().map(DateTime)
    }

    /// Identifies the date and time when the check run was completed.
    async fn completed_at(&self) -> Option<DateTime> {
        self.record.completed_at.clone().map(DateTime)
    }

    /// The URL from which to find full details of the check run on the integrator's site.
    async fn details_url(&self) -> Option<Uri> {
        Some(Uri(self.html_url()))
    }

    /// The HTTP URL for this check run.
    async fn url(&self) -> Uri {
        Uri(self.html_url())
    }

    /// The permalink to the check run summary.
    async fn permalink(&self) -> Uri {
        Uri(self.html_url())
    }

    /// A string representing the check run.
    async fn title(&self) -> Option<String> {
        self.record.output_title.clone()
    }

    /// A string representing the check run's summary.
    async fn summary(&self) -> Option<String> {
        self.record.output_summary.clone()
    }

    /// A string representing the check run's text.
    async fn text(&self) -> Option<String> {
        self.record.output_text.clone()
    }

    /// Whether this is required to pass before merging for a specific pull request.
    async fn is_required(
        &self,
        pull_request_id: Option<ID>,
        pull_request_number: Option<i32>,
    ) -> Result<bool> {
        self.ci.is_required(
            &self.record.name,
            pull_request_id.as_ref(),
            pull_request_number,
        )
    }

    /// The check suite that this run is a part of.
    async fn check_suite(&self) -> Result<CheckSuite> {
        let record = self
            .ci
            .ci
            .check_suite(self.record.check_suite_id)
            .cloned()
            .ok_or_else(|| not_found("Could not resolve the check suite."))?;
        Ok(CheckSuite {
            record,
            ci: self.ci.clone(),
        })
    }
}

impl CheckRun {
    fn html_url(&self) -> String {
        format!(
            "{}/actions/runs/{}/job/{}",
            self.ci.repository.html_url, self.record.workflow_run_id, self.record.database_id
        )
    }
}

#[Object]
impl CheckSuite {
    /// The Node ID of the CheckSuite object.
    pub(crate) async fn id(&self) -> ID {
        ID(self.record.id.clone())
    }

    /// Identifies the primary key from the database.
    async fn database_id(&self) -> Option<i32> {
        small_int(self.record.database_id)
    }

    /// The GitHub App which created this check suite.
    async fn app(&self) -> Option<App> {
        Some(App)
    }

    /// The status of this check suite.
    async fn status(&self) -> CheckStatusState {
        self.record.status.into()
    }

    /// The conclusion of this check suite.
    async fn conclusion(&self) -> Option<CheckConclusionState> {
        self.record.conclusion.map(Into::into)
    }

    /// The commit for this check suite.
    async fn commit(&self) -> Commit {
        Commit::new(self.record.head_sha.clone(), self.ci.clone())
    }

    /// Identifies the date and time when the object was created.
    async fn created_at(&self) -> DateTime {
        DateTime(self.record.created_at.clone())
    }

    /// Identifies the date and time when the object was last updated.
    async fn updated_at(&self) -> DateTime {
        DateTime(self.record.updated_at.clone())
    }

    /// The workflow run associated with this check suite.
    async fn workflow_run(&self) -> Option<WorkflowRun> {
        let record = self
            .ci
            .ci
            .workflow_run(self.record.workflow_run_id)?
            .clone();
        Some(WorkflowRun {
            record,
            ci: self.ci.clone(),
        })
    }

    /// The HTTP URL for this check suite.
    async fn url(&self) -> Uri {
        Uri(format!(
            "{}/actions/runs/{}",
            self.ci.repository.html_url, self.record.workflow_run_id
        ))
    }
}

#[Object]
impl WorkflowRun {
    /// The Node ID of the WorkflowRun object.
    pub(crate) async fn id(&self) -> ID {
        ID(self.record.id.clone())
    }

    /// Identifies the primary key from the database.
    async fn database_id(&self) -> Option<i32> {
        small_int(self.record.database_id)
    }

    /// A number that uniquely identifies this workflow run in its parent workflow.
    async fn run_number(&self) -> i32 {
        i32::try_from(self.record.run_number).unwrap_or(i32::MAX)
    }

    /// The event that triggered the workflow run.
    async fn event(&self) -> String {
        self.record.event.clone()
    }

    /// Identifies the date and time when the object was created.
    async fn created_at(&self) -> DateTime {
        DateTime(self.record.created_at.clone())
    }

    /// Identifies the date and time when the object was last updated.
    async fn updated_at(&self) -> DateTime {
        DateTime(self.record.updated_at.clone())
    }

    /// The HTTP URL for this workflow run.
    async fn url(&self) -> Uri {
        Uri(format!(
            "{}/actions/runs/{}",
            self.ci.repository.html_url, self.record.database_id
        ))
    }

    /// The workflow executed in this workflow run.
    async fn workflow(&self) -> Workflow {
        Workflow {
            name: self.record.name.clone(),
        }
    }

    /// The check suite this workflow run belongs to.
    async fn check_suite(&self) -> Result<CheckSuite> {
        let record = self
            .ci
            .ci
            .check_suite(self.record.check_suite_id)
            .cloned()
            .ok_or_else(|| not_found("Could not resolve the check suite."))?;
        Ok(CheckSuite {
            record,
            ci: self.ci.clone(),
        })
    }
}

#[Object]
impl Workflow {
    /// The name of the workflow.
    async fn name(&self) -> String {
        self.name.clone()
    }
}

#[Object]
impl App {
    /// The Node ID of the App object.
    pub(crate) async fn id(&self) -> ID {
        ID(ids::node_id(NodeKind::App, ACTIONS_APP_ID))
    }

    /// Identifies the primary key from the database.
    async fn database_id(&self) -> Option<i32> {
        small_int(ACTIONS_APP_ID)
    }

    /// A slug based on the name of the app for use in URLs.
    async fn slug(&self) -> String {
        "github-actions".to_owned()
    }

    /// The name of the app.
    async fn name(&self) -> String {
        "GitHub Actions".to_owned()
    }
}

#[Object]
impl StatusContext {
    /// The Node ID of the StatusContext object.
    pub(crate) async fn id(&self) -> ID {
        ID(self.record.id.clone())
    }

    /// The name of this status context.
    async fn context(&self) -> String {
        self.record.context.clone()
    }

    /// The state of this status context.
    async fn state(&self) -> StatusState {
        self.record.state.into()
    }

    /// The description for this status context.
    async fn description(&self) -> Option<String> {
        self.record.description.clone()
    }

    /// The URL for this status context.
    async fn target_url(&self) -> Option<Uri> {
        self.record.target_url.clone().map(Uri)
    }

    /// Identifies the date and time when the object was created.
    async fn created_at(&self) -> DateTime {
        DateTime(self.record.created_at.clone())
    }

    /// The actor who created this status context: the account that
    /// posted it (a review bot's `CodeRabbit` status is the bot's), `null`
    /// for CI's own statuses (the Actions app is no account here).
    async fn creator(&self, ctx: &Context<'_>) -> Result<Option<Actor>> {
        let rc = ctx.data::<RequestContext>()?;
        let state = rc.shared.read();
        Ok(state.user(&self.record.creator).map(|u| {
            let info = ActorInfo::new(&u.login, u.kind, u.database_id, &u.id, &rc.shared.base_url);
            Actor::from_info(info)
        }))
    }

    /// This commit this status context is attached to.
    async fn commit(&self) -> Option<Commit> {
        Some(Commit::new(self.record.sha.clone(), self.ci.clone()))
    }

    /// Whether this is required to pass before merging for a specific pull request.
    async fn is_required(
        &self,
        pull_request_id: Option<ID>,
        pull_request_number: Option<i32>,
    ) -> Result<bool> {
        self.ci.is_required(
            &self.record.context,
            pull_request_id.as_ref(),
            pull_request_number,
        )
    }
}
