//! The [`Forge`] implementation of [`GitLabClient`]: it delegates to the
//! reads in `client`, the writes in `writes` and CI in `ci`.

use async_trait::async_trait;
use shepherd_core::model::{
    ForgeKind, PrSnapshot, PullRequest, RepoRef, ReviewThread, TopLevelComment,
};

use super::client::GitLabClient;
use super::{ci, writes};
use crate::ci::{CheckRun, CombinedStatus, RequiredChecks, StatusRollup, WorkflowRun};
use crate::error::Result;
use crate::forge::{
    Forge, ItemRef, LabelEvent, PostedComment, PullRequestFields, ThreadRef, UserAccess,
};
use crate::transport::Conditional;

#[async_trait]
impl Forge for GitLabClient {
    fn kind(&self) -> ForgeKind {
        ForgeKind::GitLab
    }

    fn repo(&self) -> &RepoRef {
        &self.repo
    }

    async fn viewer(&self) -> Result<String> {
        Ok(self.fetch_viewer().await?.username)
    }

    async fn pull_request(&self, number: u64) -> Result<PullRequest> {
        Ok(self.mr_state(number).await?.1)
    }

    async fn review_threads(&self, number: u64) -> Result<Vec<ReviewThread>> {
        let mr = self.fetch_mr(number).await?;
        Ok(self.threads_and_items(&mr).await?.0)
    }

    async fn top_level_comments(&self, number: u64) -> Result<Vec<TopLevelComment>> {
        let mr = self.fetch_mr(number).await?;
        Ok(self.threads_and_items(&mr).await?.1)
    }

    async fn reply_to_thread(
        &self,
        number: u64,
        thread: &ThreadRef,
        body: &str,
    ) -> Result<PostedComment> {
        writes::reply_to_thread(self, number, thread, body).await
    }

    async fn post_issue_comment(&self, number: u64, body: &str) -> Result<PostedComment> {
        writes::post_note(self, number, body).await
    }

    async fn find_marker_reply(
        &self,
        number: u64,
        item: &ItemRef,
        viewer: &str,
    ) -> Result<Option<PostedComment>> {
        writes::find_marker_reply(self, number, item, viewer).await
    }

    async fn find_marker_replies(
        &self,
        number: u64,
        item: &ItemRef,
        viewer: &str,
    ) -> Result<Vec<PostedComment>> {
        writes::find_marker_replies(self, number, item, viewer).await
    }

    async fn delete_comment(&self, number: u64, item: &ItemRef, comment_id: u64) -> Result<()> {
        let _ = item;
        writes::delete_note(self, number, comment_id).await
    }

    async fn resolve_thread(&self, thread_id: &str) -> Result<()> {
        let iid = self.merge_request_of(thread_id)?;
        writes::resolve_discussion(self, iid, thread_id).await
    }

    async fn pull_request_fields(&self, number: u64) -> Result<PullRequestFields> {
        let mr = self.fetch_mr(number).await?;
        Ok(PullRequestFields {
            title: mr.title,
            body: mr.description.unwrap_or_default(),
            labels: mr.labels,
        })
    }

    async fn user_access(&self, login: &str) -> Result<UserAccess> {
        #[derive(serde::Deserialize)]
        struct Member {
            username: String,
            access_level: u32,
            #[serde(default)]
            state: Option<String>,
        }
        // `members/all` includes members inherited from groups; `query`
        // matches names too, so the username is compared exactly.
        let url = self.project_url(&["members", "all"])?;
        let pages: Vec<Vec<Member>> = self
            .transport
            .get_pages(&url, &[("query", login)], Conditional::No)
            .await?;
        let level = pages
            .into_iter()
            .flatten()
            .filter(|m| m.username.eq_ignore_ascii_case(login))
            .filter(|m| m.state.as_deref().is_none_or(|s| s == "active"))
            .map(|m| m.access_level)
            .max()
            .unwrap_or(0);
        let role = match level {
            50.. => "owner",
            40..=49 => "maintainer",
            30..=39 => "developer",
            20..=29 => "reporter",
            10..=19 => "guest",
            _ => "none",
        };
        Ok(UserAccess {
            login: login.to_owned(),
            role: role.to_owned(),
            can_write: level >= 30,
        })
    }

    async fn label_events(&self, number: u64) -> Result<Vec<LabelEvent>> {
        // `GET /projects/:id/merge_requests/:iid/resource_label_events`:
        // `action` is `add` or `remove`; `label` is null once the label
        // itself was deleted (then the event names nothing to count).
        #[derive(serde::Deserialize)]
        struct Event {
            action: String,
            created_at: String,
            #[serde(default)]
            user: Option<super::wire::UserWire>,
            #[serde(default)]
            label: Option<Label>,
        }
        #[derive(serde::Deserialize)]
        struct Label {
            name: String,
        }
        let iid = number.to_string();
        let url = self.project_url(&["merge_requests", &iid, "resource_label_events"])?;
        let pages: Vec<Vec<Event>> = self.transport.get_pages(&url, &[], Conditional::No).await?;
        Ok(pages
            .into_iter()
            .flatten()
            .filter_map(|e| {
                let added = match e.action.as_str() {
                    "add" => true,
                    "remove" => false,
                    _ => return None,
                };
                Some(LabelEvent {
                    label: e.label?.name,
                    added,
                    actor: e.user.map(|u| u.author()),
                    created_at: e.created_at,
                })
            })
            .collect())
    }

    async fn update_pull_request(
        &self,
        number: u64,
        title: Option<&str>,
        body: Option<&str>,
    ) -> Result<()> {
        writes::update_merge_request(self, number, title, body).await
    }

    async fn add_labels(&self, number: u64, labels: &[String]) -> Result<()> {
        writes::add_labels(self, number, labels).await
    }

    async fn remove_label(&self, number: u64, label: &str) -> Result<()> {
        writes::remove_label(self, number, label).await
    }

    async fn reviewer_activity(
        &self,
        number: u64,
        head: &str,
    ) -> Result<shepherd_core::reviewers::Activity> {
        super::reviewers::activity(self, number, head).await
    }

    async fn request_review(&self, number: u64, logins: &[String]) -> Result<()> {
        super::reviewers::request_review(self, number, logins).await
    }

    async fn check_log(&self, check: &CheckRun) -> Result<String> {
        ci::job_trace(self, check.id).await
    }

    async fn check_runs(&self, sha: &str) -> Result<Vec<CheckRun>> {
        ci::check_runs(self, sha).await
    }

    async fn combined_status(&self, sha: &str) -> Result<CombinedStatus> {
        Ok(ci::combined_status(sha))
    }

    async fn status_check_rollup(&self, number: u64) -> Result<StatusRollup> {
        ci::status_check_rollup(self, number).await
    }

    async fn required_checks(&self, number: u64, base_ref: &str) -> Result<RequiredChecks> {
        let _ = base_ref;
        Ok(ci::required_checks(self, number).await)
    }

    async fn workflow_runs(&self, head_sha: &str) -> Result<Vec<WorkflowRun>> {
        ci::pipelines(self, head_sha).await
    }

    async fn rerun_failed_jobs(&self, run_id: u64) -> Result<()> {
        ci::retry_failed_jobs(self, run_id).await.map(|_| ())
    }

    async fn rerun_failed_checks(&self, number: u64, head_sha: &str) -> Result<Vec<u64>> {
        ci::rerun_failed_checks(self, number, head_sha).await
    }

    async fn snapshot(&self, number: u64) -> Result<PrSnapshot> {
        let (pr, threads, comments) = self.snapshot_parts(number).await?;
        // Learnt by `mr_state` (the pending review is the viewer's own).
        let viewer = self.fetch_viewer().await?.username;
        Ok(PrSnapshot {
            forge: ForgeKind::GitLab,
            repo: self.repo.clone(),
            viewer,
            pr,
            threads,
            comments,
        })
    }
}
