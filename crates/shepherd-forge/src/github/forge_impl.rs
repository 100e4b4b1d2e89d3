//! The [`Forge`] implementation of [`GitHubClient`]: it delegates to the
//! reads in `client`, the writes in `writes` and the CI reads in `checks`.

use async_trait::async_trait;
use serde_json::json;
use shepherd_core::model::{ForgeKind, PullRequest, RepoRef, ReviewThread, TopLevelComment};

use super::client::{
    fetch_pull_request, fetch_review_threads, fetch_top_level_comments, repo_url, GitHubClient,
    GraphQlExec,
};
use super::queries::{VIEWER, VIEWER_OP};
use super::reviews::fetch_review_bodies;
use super::wire::ViewerData;
use super::{checks, writes};
use crate::ci::{CheckRun, CombinedStatus, RequiredChecks, StatusRollup, WorkflowRun};
use crate::error::ForgeError;
use crate::error::Result;
use crate::forge::{
    Forge, ItemRef, LabelEvent, PostedComment, PullRequestFields, ThreadRef, UserAccess,
};
use crate::transport::Conditional;

#[async_trait]
impl Forge for GitHubClient {
    fn kind(&self) -> ForgeKind {
        ForgeKind::GitHub
    }

    fn repo(&self) -> &RepoRef {
        &self.repo
    }

    async fn viewer(&self) -> Result<String> {
        if let Some(login) = self.viewer.get() {
            return Ok(login.clone());
        }
        let data: ViewerData = self.transport.query(VIEWER_OP, VIEWER, json!({})).await?;
        Ok(self.viewer.get_or_init(|| data.viewer.login).clone())
    }

    async fn pull_request(&self, number: u64) -> Result<PullRequest> {
        let (viewer, pr) = fetch_pull_request(&self.transport, &self.repo, number).await?;
        // A racing fetch stores the same login; either value is right.
        let _ = self.viewer.set(viewer);
        Ok(pr)
    }

    async fn review_threads(&self, number: u64) -> Result<Vec<ReviewThread>> {
        fetch_review_threads(&self.transport, &self.repo, number).await
    }

    async fn top_level_comments(&self, number: u64) -> Result<Vec<TopLevelComment>> {
        let reviews = fetch_review_bodies(&self.transport, &self.repo, number);
        fetch_top_level_comments(&self.transport, &self.repo, number, reviews).await
    }

    async fn reply_to_thread(
        &self,
        number: u64,
        thread: &ThreadRef,
        body: &str,
    ) -> Result<PostedComment> {
        writes::reply_to_thread(&self.transport, &self.repo, number, thread, body).await
    }

    async fn post_issue_comment(&self, number: u64, body: &str) -> Result<PostedComment> {
        writes::post_issue_comment(&self.transport, &self.repo, number, body).await
    }

    async fn find_marker_reply(
        &self,
        number: u64,
        item: &ItemRef,
        viewer: &str,
    ) -> Result<Option<PostedComment>> {
        writes::find_marker_reply(&self.transport, &self.repo, number, item, viewer).await
    }

    async fn find_marker_replies(
        &self,
        number: u64,
        item: &ItemRef,
        viewer: &str,
    ) -> Result<Vec<PostedComment>> {
        writes::find_marker_replies(&self.transport, &self.repo, number, item, viewer).await
    }

    async fn delete_comment(&self, number: u64, item: &ItemRef, comment_id: u64) -> Result<()> {
        let _ = number;
        writes::delete_comment(&self.transport, &self.repo, item, comment_id).await
    }

    async fn resolve_thread(&self, thread_id: &str) -> Result<()> {
        writes::resolve_thread(&self.transport, thread_id).await
    }

    async fn pull_request_fields(&self, number: u64) -> Result<PullRequestFields> {
        #[derive(serde::Deserialize)]
        struct Label {
            name: String,
        }
        #[derive(serde::Deserialize)]
        struct Pull {
            title: String,
            #[serde(default)]
            body: Option<String>,
            #[serde(default)]
            labels: Vec<Label>,
        }
        let number = number.to_string();
        let url = repo_url(&self.transport, &self.repo, &["pulls", &number])?;
        let pull: Pull = self.transport.get(&url, &[], Conditional::No).await?;
        Ok(PullRequestFields {
            title: pull.title,
            body: pull.body.unwrap_or_default(),
            labels: pull.labels.into_iter().map(|l| l.name).collect(),
        })
    }

    async fn user_access(&self, login: &str) -> Result<UserAccess> {
        #[derive(serde::Deserialize)]
        struct Permission {
            permission: String,
            #[serde(default)]
            role_name: Option<String>,
        }
        let url = repo_url(
            &self.transport,
            &self.repo,
            &["collaborators", login, "permission"],
        )?;
        // GitHub answers 404 for a login that is no user at all.
        let answer: Permission = match self.transport.get(&url, &[], Conditional::No).await {
            Ok(p) => p,
            Err(ForgeError::NotFound { .. }) => Permission {
                permission: "none".into(),
                role_name: None,
            },
            Err(e) => return Err(e),
        };
        // `permission` folds maintain into write and triage into read;
        // `role_name` says which.
        let can_write = matches!(answer.permission.as_str(), "admin" | "write");
        Ok(UserAccess {
            login: login.to_owned(),
            role: answer.role_name.unwrap_or(answer.permission),
            can_write,
        })
    }

    async fn label_events(&self, number: u64) -> Result<Vec<LabelEvent>> {
        let url = repo_url(
            &self.transport,
            &self.repo,
            &["issues", &number.to_string(), "events"],
        )?;
        let pages: Vec<Vec<super::rest_wire::IssueEventRest>> =
            self.transport.get_pages(&url, &[], Conditional::No).await?;
        Ok(pages
            .into_iter()
            .flatten()
            .filter_map(super::rest_wire::IssueEventRest::into_label_event)
            .collect())
    }

    async fn update_pull_request(
        &self,
        number: u64,
        title: Option<&str>,
        body: Option<&str>,
    ) -> Result<()> {
        writes::update_pull_request(&self.transport, &self.repo, number, title, body).await
    }

    async fn add_labels(&self, number: u64, labels: &[String]) -> Result<()> {
        writes::add_labels(&self.transport, &self.repo, number, labels).await
    }

    async fn remove_label(&self, number: u64, label: &str) -> Result<()> {
        writes::remove_label(&self.transport, &self.repo, number, label).await
    }

    async fn reviewer_activity(
        &self,
        number: u64,
        head: &str,
    ) -> Result<shepherd_core::reviewers::Activity> {
        super::reviewers::activity(&self.transport, &self.repo, number, head).await
    }

    async fn request_review(&self, number: u64, logins: &[String]) -> Result<()> {
        super::reviewers::request_review(&self.transport, &self.repo, number, logins).await
    }

    async fn check_log(&self, check: &CheckRun) -> Result<String> {
        super::logs::check_log(&self.transport, &self.repo, check).await
    }

    async fn check_runs(&self, sha: &str) -> Result<Vec<CheckRun>> {
        checks::check_runs(&self.transport, &self.repo, sha).await
    }

    async fn combined_status(&self, sha: &str) -> Result<CombinedStatus> {
        checks::combined_status(&self.transport, &self.repo, sha).await
    }

    async fn status_check_rollup(&self, number: u64) -> Result<StatusRollup> {
        checks::status_check_rollup(&self.transport, &self.repo, number).await
    }

    async fn required_checks(&self, number: u64, base_ref: &str) -> Result<RequiredChecks> {
        Ok(checks::required_checks(&self.transport, &self.repo, number, base_ref).await)
    }

    async fn workflow_runs(&self, head_sha: &str) -> Result<Vec<WorkflowRun>> {
        checks::workflow_runs(&self.transport, &self.repo, head_sha).await
    }

    async fn rerun_failed_jobs(&self, run_id: u64) -> Result<()> {
        checks::rerun_failed_jobs(&self.transport, &self.repo, run_id).await
    }
}
