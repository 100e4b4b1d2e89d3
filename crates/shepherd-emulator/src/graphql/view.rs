//! What one GraphQL request sees: the viewer and per-PR snapshots filtered
//! for the viewer (pending reviews are visible only to their author).

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use async_graphql::{Result, ID};

use super::errors::{not_found, typed};
use crate::auth::Viewer;
use crate::ci_state::CiState;
use crate::scenario::{ReviewStateSpec, UserKind};
use crate::shared::Shared;
use crate::state::{
    position_by_id, LabelRecord, PullRequestRecord, RepositoryRecord, ReviewCommentRecord, State,
    ThreadRecord,
};

/// Request data: the shared emulator and the authenticated viewer.
pub(crate) struct RequestContext {
    pub(crate) shared: Arc<Shared>,
    pub(crate) viewer: Viewer,
}

/// What GraphQL shows about an account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ActorInfo {
    pub(crate) login: String,
    pub(crate) kind: UserKind,
    pub(crate) database_id: u64,
    pub(crate) id: String,
    pub(crate) url: String,
    pub(crate) resource_path: String,
}

impl ActorInfo {
    pub(crate) fn new(
        login: &str,
        kind: UserKind,
        database_id: u64,
        id: &str,
        base_url: &str,
    ) -> ActorInfo {
        let resource_path = match kind {
            UserKind::User => format!("/{login}"),
            UserKind::Bot => format!("/apps/{login}"),
        };
        ActorInfo {
            login: login.to_owned(),
            kind,
            database_id,
            id: id.to_owned(),
            url: format!("{base_url}{resource_path}"),
            resource_path,
        }
    }
}

/// Every account, by login.
pub(crate) fn actors(state: &State, base_url: &str) -> BTreeMap<String, ActorInfo> {
    state
        .users
        .iter()
        .map(|u| {
            let info = ActorInfo::new(&u.login, u.kind, u.database_id, &u.id, base_url);
            (u.login.clone(), info)
        })
        .collect()
}

/// A snapshot of one pull request as the viewer sees it: other users'
/// pending reviews (and the comments in them) are hidden.
pub(crate) struct PrView {
    /// Shared with the state (no copy), as of the request.
    pub(crate) pr: Arc<PullRequestRecord>,
    pub(crate) repository: RepositoryRecord,
    pub(crate) actors: BTreeMap<String, ActorInfo>,
    pub(crate) viewer: Viewer,
    /// The PR's labels, in order.
    pub(crate) labels: Vec<LabelRecord>,
    /// The repository's labels (what the PR's label events name).
    pub(crate) repository_labels: Vec<LabelRecord>,
    /// CI, for the PR's commits.
    pub(crate) ci: Arc<CiView>,
    hidden_reviews: HashSet<u64>,
}

impl PrView {
    /// Snapshots pull request `number`; `None` when there is none.
    pub(crate) fn new(
        state: &State,
        number: u64,
        viewer: &Viewer,
        base_url: &str,
    ) -> Option<Arc<PrView>> {
        let pr = state.pull_request_shared(number)?;
        let hidden_reviews = pr
            .reviews
            .iter()
            .filter(|r| r.state == ReviewStateSpec::Pending && r.author != viewer.login)
            .map(|r| r.database_id)
            .collect();
        let labels = pr
            .labels
            .iter()
            .filter_map(|name| state.label(name).cloned())
            .collect();
        Some(Arc::new(PrView {
            pr,
            repository: state.repository.clone(),
            actors: actors(state, base_url),
            viewer: viewer.clone(),
            labels,
            repository_labels: state.labels.clone(),
            ci: CiView::new(state),
            hidden_reviews,
        }))
    }

    /// Whether the viewer may see this review comment.
    pub(crate) fn comment_visible(&self, comment: &ReviewCommentRecord) -> bool {
        self.hidden_reviews.is_empty() || !self.hidden_reviews.contains(&comment.review_id)
    }

    /// Whether the viewer may see this thread: some comment of it is visible.
    pub(crate) fn thread_visible(&self, thread: &ThreadRecord) -> bool {
        self.hidden_reviews.is_empty() || thread.comments.iter().any(|c| self.comment_visible(c))
    }

    /// Whether the viewer may see this review.
    pub(crate) fn review_visible(&self, review_id: u64) -> bool {
        !self.hidden_reviews.contains(&review_id)
    }
}

impl PrView {
    /// The index of review `id` in the PR's reviews.
    pub(crate) fn review_index(&self, id: u64) -> Option<usize> {
        position_by_id(&self.pr.reviews, id, |r| r.database_id)
    }

    /// Whether no review is hidden from the viewer (then every thread and
    /// comment is visible).
    pub(crate) fn hides_nothing(&self) -> bool {
        self.hidden_reviews.is_empty()
    }
}

/// A snapshot of CI for one request, shared by the objects below.
pub(crate) struct CiView {
    /// Shared with the state (no copy), as of the request.
    pub(crate) ci: Arc<CiState>,
    pub(crate) repository: RepositoryRecord,
    /// Base branch of each pull request, by number and by node id.
    pub(crate) bases: BTreeMap<u64, (String, String)>,
}

impl CiView {
    pub(crate) fn new(state: &State) -> Arc<CiView> {
        Arc::new(CiView {
            ci: Arc::clone(&state.ci),
            repository: state.repository.clone(),
            bases: state
                .pull_requests
                .iter()
                .map(|pr| (pr.number, (pr.base_ref.clone(), pr.id.clone())))
                .collect(),
        })
    }

    /// Whether context `name` is required for the PR named by number or id.
    pub(crate) fn is_required(
        &self,
        name: &str,
        pull_request_id: Option<&ID>,
        pull_request_number: Option<i32>,
    ) -> Result<bool> {
        let base = match (pull_request_number, pull_request_id) {
            (Some(number), _) => u64::try_from(number)
                .ok()
                .and_then(|n| self.bases.get(&n))
                .map(|(base, _)| base.clone()),
            (None, Some(id)) => self
                .bases
                .values()
                .find(|(_, node)| *node == id.0)
                .map(|(base, _)| base.clone()),
            (None, None) => {
                return Err(typed(
                    "ARGUMENT_ERROR",
                    "One of `pullRequestId` or `pullRequestNumber` must be provided.",
                ))
            }
        };
        let base = base.ok_or_else(|| not_found("Could not resolve to a PullRequest."))?;
        Ok(self.ci.required_for(&base).iter().any(|r| r == name))
    }
}
