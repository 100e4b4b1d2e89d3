//! The query root and `Repository`; `node(id:)` looks up in `node.rs`.

use async_graphql::{Context, Enum, Object, Result, ID};

use super::actor::User;
use super::errors::not_found;
use super::node::{self, Node};
use super::objects::{PullRequest, Repository};
use super::scalars::Uri;
use super::view::{ActorInfo, PrView, RequestContext};
use crate::scenario::Permission;
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
        node::lookup(&state, rc, &id).map(Some).ok_or_else(|| {
            not_found(format!(
                "Could not resolve to a node with the global id of '{}'",
                id.0
            ))
        })
    }
}
