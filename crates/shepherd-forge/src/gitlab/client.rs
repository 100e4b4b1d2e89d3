//! `GitLabClient`: the `Forge` of gitlab.com and self-managed GitLab (REST
//! API v4).
//!
//! Reads: the merge request, `/user`, the viewer's draft notes (a pending
//! review), every discussion (`per_page=100`, then `X-Next-Page`), and, for
//! threads whose position is older than the head, one comparison per
//! position head (see `discussions` for the outdated rule). A snapshot reads
//! the discussions once for both the threads and the top-level items, beside
//! the merge request, and asks the comparisons at once.
//!
//! The write side lives in `writes` and CI in `ci`; the `Forge`
//! implementation (`forge_impl`) only delegates to them and to the reads
//! here.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Mutex, OnceLock};

use futures::stream::{self, StreamExt};
use serde::de::DeserializeOwned;
use shepherd_core::model::{PullRequest, RepoRef, ReviewThread, TopLevelComment};
use url::Url;

use super::discussions::{self, MrView};
use super::endpoints::{GitLabEndpoints, ProjectId};
use super::wire::{CompareWire, DiscussionWire, DraftNoteWire, MergeRequestWire, UserWire};
use crate::error::{ForgeError, Result};
use crate::token::Token;
use crate::transport::{Api, ClientConfig, Conditional, Flavor, Transport, SHARED_IN_FLIGHT};

/// The account the token belongs to.
#[derive(Debug, Clone)]
pub(crate) struct Viewer {
    pub(crate) id: Option<u64>,
    pub(crate) username: String,
}

/// The GitLab client. Cheap to share behind an `Arc`.
pub struct GitLabClient {
    pub(super) repo: RepoRef,
    project: ProjectId,
    endpoints: GitLabEndpoints,
    pub(crate) transport: Transport,
    /// Learnt from the first `/user` answer (it cannot change for a token).
    viewer: OnceLock<Viewer>,
    /// The merge request this client works on, when bound to one.
    merge_request: Option<u64>,
    /// The merge request of each discussion read or replied to: GitLab
    /// addresses a discussion only through its merge request, and
    /// [`Forge::resolve_thread`](crate::forge::Forge::resolve_thread) names
    /// the thread alone.
    discussions: Mutex<HashMap<String, u64>>,
}

impl GitLabClient {
    /// A client for `repo` (its full path names the project) at
    /// `endpoints`, with the default [`ClientConfig`].
    pub fn new(repo: RepoRef, endpoints: GitLabEndpoints, token: Token) -> Result<Self> {
        GitLabClient::with_config(repo, endpoints, token, ClientConfig::default())
    }

    /// A client with explicit HTTP options (timeouts, retries).
    pub fn with_config(
        repo: RepoRef,
        endpoints: GitLabEndpoints,
        token: Token,
        config: ClientConfig,
    ) -> Result<Self> {
        let api = Api {
            flavor: Flavor::GitLab,
            rest: endpoints.api.clone(),
            // Only asking a reviewer again goes through GraphQL (see
            // `reviewers`); everything else is REST v4.
            graphql: Some(endpoints.graphql_url()),
        };
        Ok(GitLabClient {
            project: ProjectId::of(&repo),
            repo,
            endpoints,
            transport: Transport::new(api, token, config)?,
            viewer: OnceLock::new(),
            merge_request: None,
            discussions: Mutex::new(HashMap::new()),
        })
    }

    /// The same client bound to merge request `iid`: a thread it has not
    /// read is taken to be of that merge request when resolved.
    pub fn with_merge_request(mut self, iid: u64) -> Self {
        self.merge_request = Some(iid);
        self
    }

    /// The merge request the client is bound to.
    pub(crate) fn bound_merge_request(&self) -> Option<u64> {
        self.merge_request
    }

    /// Records that discussion `id` belongs to merge request `iid`.
    pub(crate) fn learn(&self, id: &str, iid: u64) {
        let mut known = self.discussions.lock().unwrap_or_else(|e| e.into_inner());
        known.insert(id.to_owned(), iid);
    }

    /// The merge request of discussion `id`: as read, else the bound one.
    pub(crate) fn merge_request_of(&self, id: &str) -> Result<u64> {
        let known = self.discussions.lock().unwrap_or_else(|e| e.into_inner());
        known
            .get(id)
            .copied()
            .or(self.merge_request)
            .ok_or_else(|| ForgeError::CannotResolve {
                thread: id.to_owned(),
                reason: "its merge request is unknown to this client: read the merge \
                         request's threads first, or bind the client with `with_merge_request`"
                    .into(),
            })
    }

    /// The same client naming the project by `project` (a numeric id)
    /// rather than by the repository's full path.
    pub fn with_project(mut self, project: ProjectId) -> Self {
        self.project = project;
        self
    }

    /// The endpoints the client talks to.
    pub fn endpoints(&self) -> &GitLabEndpoints {
        &self.endpoints
    }

    /// How the client names the project.
    pub fn project(&self) -> &ProjectId {
        &self.project
    }

    /// The client's token (for git credentials; never print `expose()`).
    pub fn token(&self) -> &Token {
        self.transport.token()
    }

    /// A GET of `path` (`/projects/5/merge_requests/1`) under the REST base.
    /// Retried on transient failures.
    pub async fn rest_get<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<T> {
        self.transport.rest_get(path, query).await
    }

    /// `…/projects/<project>/<tail…>`, the project encoded as one segment.
    pub(crate) fn project_url(&self, tail: &[&str]) -> Result<Url> {
        let project = self.project.segment();
        let mut segments = vec!["projects", project.as_str()];
        segments.extend_from_slice(tail);
        self.transport.url(&segments)
    }

    /// `…/projects/<project>/merge_requests/<iid>/<tail…>`.
    pub(crate) fn mr_url(&self, iid: u64, tail: &[&str]) -> Result<Url> {
        let iid = iid.to_string();
        let mut segments = vec!["merge_requests", iid.as_str()];
        segments.extend_from_slice(tail);
        self.project_url(&segments)
    }

    /// The web URL of merge request `iid`, for comments posted without
    /// reading the merge request.
    pub(crate) fn mr_web_url(&self, iid: u64) -> String {
        format!(
            "{}/{}/-/merge_requests/{iid}",
            self.endpoints.web_base(),
            self.repo.full_name()
        )
    }

    pub(crate) async fn fetch_viewer(&self) -> Result<Viewer> {
        if let Some(viewer) = self.viewer.get() {
            return Ok(viewer.clone());
        }
        let user: UserWire = self.transport.rest_get("/user", &[]).await?;
        let viewer = Viewer {
            id: user.id,
            username: user.username,
        };
        Ok(self.viewer.get_or_init(|| viewer).clone())
    }

    pub(crate) async fn fetch_mr(&self, iid: u64) -> Result<MergeRequestWire> {
        let url = self.mr_url(iid, &[])?;
        self.transport.get(&url, &[], Conditional::No).await
    }

    /// Whether the viewer has draft notes (a pending review) on `iid`. The
    /// API lists the caller's own drafts only; a GitLab without the draft
    /// notes API (404) has none.
    async fn has_pending_review(&self, iid: u64, viewer: &Viewer) -> Result<bool> {
        let url = self.mr_url(iid, &["draft_notes"])?;
        let pages: Vec<Vec<DraftNoteWire>> =
            match self.transport.get_pages(&url, &[], Conditional::No).await {
                Ok(pages) => pages,
                Err(ForgeError::NotFound { .. }) => return Ok(false),
                Err(err) => return Err(err),
            };
        Ok(pages
            .into_iter()
            .flatten()
            .any(|draft| draft.author_id.is_none() || draft.author_id == viewer.id))
    }

    /// The merge request wire and its forge-neutral state.
    pub(super) async fn mr_state(&self, iid: u64) -> Result<(MergeRequestWire, PullRequest)> {
        let viewer = self.fetch_viewer().await?;
        let (mr, pending) =
            tokio::try_join!(self.fetch_mr(iid), self.has_pending_review(iid, &viewer))?;
        let pr = mr
            .pull_request(pending)
            .map_err(|message| ForgeError::Decode {
                request: format!("merge request !{iid}"),
                message,
            })?;
        Ok((mr, pr))
    }

    async fn fetch_discussions(&self, iid: u64) -> Result<Vec<DiscussionWire>> {
        let url = self.mr_url(iid, &["discussions"])?;
        // The discussion pages are the chain a snapshot waits on: the lead.
        let pages: Vec<Vec<DiscussionWire>> = self
            .transport
            .lead()
            .get_pages(&url, &[], Conditional::No)
            .await?;
        Ok(pages.into_iter().flatten().collect())
    }

    /// The comparison from `from` to `to`; `None` when it cannot be had (the
    /// threads anchored at `from` then read as outdated).
    async fn fetch_compare(&self, from: &str, to: &str) -> Option<CompareWire> {
        let url = self.project_url(&["repository", "compare"]).ok()?;
        let query = [("from", from), ("to", to), ("straight", "true")];
        match self
            .transport
            .get::<CompareWire>(&url, &query, Conditional::No)
            .await
        {
            Ok(compare) => Some(compare),
            Err(err) => {
                tracing::warn!(from, to, "{err}; threads anchored there read as outdated");
                None
            }
        }
    }

    /// Unresolved threads and top-level items of `mr`, from one read of its
    /// discussions.
    pub(super) async fn threads_and_items(
        &self,
        mr: &MergeRequestWire,
    ) -> Result<(Vec<ReviewThread>, Vec<TopLevelComment>)> {
        let all = self.fetch_discussions(mr.iid).await?;
        self.settle_discussions(mr, all).await
    }

    /// The merge request's state, its unresolved threads and its top-level
    /// items: the discussions are read beside the merge request (they need
    /// only its number), so the reads take as many steps as the discussion
    /// pages, and one more for the comparisons of threads at older heads.
    pub(super) async fn snapshot_parts(
        &self,
        iid: u64,
    ) -> Result<(PullRequest, Vec<ReviewThread>, Vec<TopLevelComment>)> {
        let ((mr, pr), all) = tokio::try_join!(self.mr_state(iid), self.fetch_discussions(iid))?;
        let (threads, items) = self.settle_discussions(&mr, all).await?;
        Ok((pr, threads, items))
    }

    /// [`GitLabClient::threads_and_items`] with the discussions read: split
    /// them, and trace the threads written at older heads (the comparisons
    /// asked at once, at most [`SHARED_IN_FLIGHT`] in flight).
    async fn settle_discussions(
        &self,
        mr: &MergeRequestWire,
        all: Vec<DiscussionWire>,
    ) -> Result<(Vec<ReviewThread>, Vec<TopLevelComment>)> {
        let view = MrView {
            head_sha: mr
                .head_sha()
                .map_err(|message| ForgeError::Decode {
                    request: format!("merge request !{}", mr.iid),
                    message,
                })?
                .to_owned(),
            start_sha: mr.diff_refs.as_ref().and_then(|d| d.start_sha.clone()),
            web_url: mr.web_url.clone(),
        };
        for discussion in &all {
            self.learn(&discussion.id, mr.iid);
        }
        let split = discussions::split(all, &view);
        let mut heads: Vec<String> = split
            .threads
            .iter()
            .filter_map(|pending| pending.trace_from(&view))
            .collect::<HashSet<&str>>()
            .into_iter()
            .map(str::to_owned)
            .collect();
        // In a fixed order, so that logs and tests see the same requests.
        heads.sort();
        let head = view.head_sha.as_str();
        let compares: HashMap<String, Option<CompareWire>> = stream::iter(heads)
            .map(|from: String| async move {
                let compare = self.fetch_compare(&from, head).await;
                (from, compare)
            })
            .buffer_unordered(SHARED_IN_FLIGHT)
            .collect()
            .await;
        let threads = discussions::settle(split.threads, &view, &compares);
        let mut items = split.items;
        // GitLab's timestamps are RFC 3339 in UTC with milliseconds
        // (`2024-05-02T10:00:00.000Z`), so text order is time order; the
        // sort is stable.
        items.sort_by(|a, b| a.created_at.cmp(&b.created_at));
        Ok((threads, items))
    }
}

impl fmt::Debug for GitLabClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GitLabClient")
            .field("repo", &self.repo)
            .field("project", &self.project)
            .field("endpoints", &self.endpoints)
            .finish_non_exhaustive()
    }
}
