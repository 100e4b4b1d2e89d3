//! The query root and `Repository`; `node(id:)` looks up in `node.rs`.

use async_graphql::{Context, Enum, Object, Result, ID};

use super::actor::User;
use super::connection::{paginate, PageArgs, PullRequestConnection};
use super::errors::{not_found, unresolvable_node};
use super::node::{self, Node};
use super::objects::{PullRequest, Ref, Repository};
use super::pr_extras::{BranchProtectionRule, IssueOrder, IssueOrderField, OrderDirection};
use super::pull_request::PullRequestState;
use super::scalars::Uri;
use super::search::{self, SearchResultItemConnection, SearchType};
use super::view::{ActorInfo, PrView, RequestContext};
use crate::scenario::{Permission, Visibility};
use crate::state::RepositoryRecord;

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
        self.record.visibility == Visibility::Private
    }

    /// Identifies if the repository is a fork.
    async fn is_fork(&self) -> bool {
        false
    }

    /// The users permission level on the repository.
    async fn viewer_permission(&self) -> Option<RepositoryPermission> {
        match self.permission {
            // GitHub answers READ to an account without a role on a
            // public repository.
            Permission::None if self.record.visibility == Visibility::Public => {
                Some(RepositoryPermission::Read)
            }
            Permission::None => None,
            Permission::Read => Some(RepositoryPermission::Read),
            Permission::Write => Some(RepositoryPermission::Write),
            Permission::Admin => Some(RepositoryPermission::Admin),
        }
    }

    /// The Ref associated with the repository's default branch.
    async fn default_branch_ref(&self) -> Option<Ref> {
        Some(Ref {
            name: self.record.default_branch.clone(),
            repository: self.clone(),
        })
    }

    /// A list of pull requests that have been opened in the repository,
    /// oldest first unless `orderBy` says otherwise (then the cursors are
    /// positions in that order).
    // The arguments are GitHub's.
    #[allow(clippy::too_many_arguments)]
    async fn pull_requests(
        &self,
        ctx: &Context<'_>,
        after: Option<String>,
        base_ref_name: Option<String>,
        before: Option<String>,
        first: Option<i32>,
        head_ref_name: Option<String>,
        labels: Option<Vec<String>>,
        last: Option<i32>,
        order_by: Option<IssueOrder>,
        states: Option<Vec<PullRequestState>>,
    ) -> Result<PullRequestConnection> {
        let rc = ctx.data::<RequestContext>()?;
        let state = rc.shared.read();
        let items: Vec<(u64, PullRequest)> = state
            .pull_requests
            .iter()
            .filter(|pr| {
                states
                    .as_ref()
                    .is_none_or(|s| s.contains(&PullRequestState::from(pr.status)))
            })
            .filter(|pr| head_ref_name.as_ref().is_none_or(|h| *h == pr.head_ref))
            .filter(|pr| base_ref_name.as_ref().is_none_or(|b| *b == pr.base_ref))
            .filter(|pr| {
                labels
                    .as_ref()
                    .is_none_or(|wanted| wanted.iter().any(|l| pr.labels.contains(l)))
            })
            .filter_map(|pr| {
                let view = PrView::new(&state, pr.number, &rc.viewer, &rc.shared.base_url)?;
                Some((pr.database_id, PullRequest { view }))
            })
            .collect();
        drop(state);
        let mut items = items;
        items.sort_by_key(|(id, _)| *id);
        if let Some(order) = order_by {
            // Creation order is the database ids' order.
            match order.field {
                IssueOrderField::CreatedAt => {}
                IssueOrderField::UpdatedAt => {
                    items.sort_by(|(_, a), (_, b)| a.view.pr.updated_at.cmp(&b.view.pr.updated_at))
                }
                IssueOrderField::Comments => {
                    items.sort_by_key(|(_, pr)| pr.view.pr.issue_comments.len())
                }
            }
            if order.direction == OrderDirection::Desc {
                items.reverse();
            }
            // Cursors are positions in this order.
            items = items
                .into_iter()
                .enumerate()
                .map(|(i, (_, pr))| (i as u64 + 1, pr))
                .collect();
        }
        let args = PageArgs::new(first, last, after, before).counting_only(ctx);
        paginate("pullRequests", items, &args).map(Into::into)
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

#[Object]
impl Ref {
    /// The ref name.
    async fn name(&self) -> String {
        self.name.clone()
    }

    /// The ref's prefix, such as `refs/heads/` or `refs/tags/`.
    async fn prefix(&self) -> String {
        "refs/heads/".to_owned()
    }

    /// The repository the ref belongs to.
    async fn repository(&self) -> Repository {
        self.repository.clone()
    }

    /// Branch protection rules for this ref: the emulator's rule for its
    /// protected branches (those with required checks), else `null`.
    async fn branch_protection_rule(
        &self,
        ctx: &Context<'_>,
    ) -> Result<Option<BranchProtectionRule>> {
        let rc = ctx.data::<RequestContext>()?;
        let required = rc.shared.read().ci.required_for(&self.name);
        Ok((!required.is_empty()).then(|| BranchProtectionRule {
            pattern: self.name.clone(),
            requires_status_checks: true,
            requires_strict_status_checks: false,
            required_status_check_contexts: Some(required.into_iter().map(Some).collect()),
        }))
    }
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
        if !state.is_repository(&owner, &name) || !rc.viewer.sees_repository() {
            return Err(not_found(format!(
                "Could not resolve to a Repository with the name '{owner}/{name}'."
            )));
        }
        Ok(Some(Repository::new(
            state.repository.clone(),
            rc.viewer.permission,
        )))
    }

    /// Perform a search across resources: pull requests here (see
    /// `search.rs` for the qualifiers).
    // The arguments are GitHub's.
    #[allow(clippy::too_many_arguments)]
    async fn search(
        &self,
        ctx: &Context<'_>,
        after: Option<String>,
        before: Option<String>,
        first: Option<i32>,
        last: Option<i32>,
        query: String,
        #[graphql(name = "type")] kind: SearchType,
    ) -> Result<SearchResultItemConnection> {
        let args = PageArgs::new(first, last, after, before);
        search::search(ctx, &query, kind, args)
    }

    /// Fetches an object given its ID.
    async fn node(&self, ctx: &Context<'_>, id: ID) -> Result<Option<Node>> {
        let rc = ctx.data::<RequestContext>()?;
        let state = rc.shared.read();
        node::lookup(&state, rc, &id)
            .map(Some)
            .ok_or_else(|| unresolvable_node(&id.0))
    }
}
