//! `RepositoryOwner` (a `User` or an `Organization`): who owns the
//! repository, or the head repository of a pull request. An owner that is
//! no user of the scenario is an organization, with the id REST gives it.

use async_graphql::{Interface, Object, ID};

use super::actor::User;
use super::scalars::Uri;
use super::view::ActorInfo;
use crate::ids::{self, NodeKind};
use crate::state::State;

/// An account on GitHub, with one or more owners, that has repositories,
/// members and teams.
#[derive(Clone, Default)]
pub(crate) struct Organization {
    login: String,
    database_id: u64,
    url: String,
}

#[Object]
impl Organization {
    /// The Node ID of the Organization object.
    async fn id(&self) -> ID {
        ID(ids::node_id(NodeKind::User, self.database_id))
    }

    /// The organization's login name.
    async fn login(&self) -> String {
        self.login.clone()
    }

    /// The organization's public profile name (the emulator has none).
    async fn name(&self) -> Option<String> {
        None
    }

    /// The HTTP URL for this organization.
    async fn url(&self) -> Uri {
        Uri(self.url.clone())
    }

    /// The HTTP path for this organization.
    async fn resource_path(&self) -> Uri {
        Uri(format!("/{}", self.login))
    }
}

/// Represents an owner of a Repository.
// Several fields sharing a type trips clippy's duplicate-attribute check.
#[allow(clippy::duplicated_attributes)]
#[derive(Clone, Interface)]
#[graphql(
    field(
        name = "id",
        ty = "ID",
        desc = "The Node ID of the RepositoryOwner object"
    ),
    field(name = "login", ty = "String", desc = "The username used to login."),
    field(name = "url", ty = "Uri", desc = "The HTTP URL for the owner."),
    field(
        name = "resource_path",
        ty = "Uri",
        desc = "The HTTP URL for the owner."
    )
)]
pub(crate) enum RepositoryOwner {
    /// A user of the scenario.
    User(User),
    /// Any other owner.
    Organization(Organization),
}

impl RepositoryOwner {
    /// The account `login` as an owner: the scenario's user of that login
    /// (a bot is no owner: GitHub's apps own no repositories), else an
    /// organization.
    pub(crate) fn of(state: &State, login: &str, base_url: &str) -> RepositoryOwner {
        match state.user(login) {
            Some(user) if user.kind == crate::scenario::UserKind::User => {
                RepositoryOwner::User(User(ActorInfo::new(
                    &user.login,
                    user.kind,
                    user.database_id,
                    &user.id,
                    base_url,
                )))
            }
            _ => RepositoryOwner::Organization(Organization {
                login: login.to_owned(),
                // The REST organization's id (`rest/json.rs`, `owner_json`).
                database_id: 1_000_000 + state.repository.database_id,
                url: format!("{base_url}/{login}"),
            }),
        }
    }
}
