//! `User`, `Bot` and the `Actor` interface they implement.

use async_graphql::{Interface, Object, ID};

use super::scalars::Uri;
use super::view::ActorInfo;
use crate::scenario::UserKind;

/// A user account.
#[derive(Clone)]
pub(crate) struct User(pub(crate) ActorInfo);

#[Object]
impl User {
    /// The Node ID of the User object.
    pub(crate) async fn id(&self) -> ID {
        ID(self.0.id.clone())
    }

    /// Identifies the primary key from the database.
    async fn database_id(&self) -> Option<i32> {
        i32::try_from(self.0.database_id).ok()
    }

    /// The username used to login.
    pub(crate) async fn login(&self) -> String {
        self.0.login.clone()
    }

    /// The user's public profile name.
    async fn name(&self) -> Option<String> {
        // Scenario accounts have no profile name; GitHub answers null then.
        None
    }

    /// The HTTP URL for this user.
    pub(crate) async fn url(&self) -> Uri {
        Uri(self.0.url.clone())
    }

    /// The HTTP path for this user.
    pub(crate) async fn resource_path(&self) -> Uri {
        Uri(self.0.resource_path.clone())
    }
}

/// A GitHub App or bot account.
#[derive(Clone)]
pub(crate) struct Bot(pub(crate) ActorInfo);

#[Object]
impl Bot {
    /// The Node ID of the Bot object.
    pub(crate) async fn id(&self) -> ID {
        ID(self.0.id.clone())
    }

    /// Identifies the primary key from the database.
    async fn database_id(&self) -> Option<i32> {
        i32::try_from(self.0.database_id).ok()
    }

    /// The username of the actor.
    async fn login(&self) -> String {
        self.0.login.clone()
    }

    /// The HTTP URL for this bot.
    async fn url(&self) -> Uri {
        Uri(self.0.url.clone())
    }

    /// The HTTP path for this bot.
    async fn resource_path(&self) -> Uri {
        Uri(self.0.resource_path.clone())
    }
}

/// Represents an object which can take actions on GitHub.
// Two fields sharing a type trips clippy's duplicate-attribute check.
#[allow(clippy::duplicated_attributes)]
#[derive(Clone, Interface)]
#[graphql(
    field(name = "login", ty = "String", desc = "The username of the actor."),
    field(name = "url", ty = "Uri", desc = "The HTTP URL for this actor."),
    field(
        name = "resource_path",
        ty = "Uri",
        desc = "The HTTP path for this actor."
    )
)]
pub(crate) enum Actor {
    /// A person.
    User(User),
    /// A bot.
    Bot(Bot),
}

impl Actor {
    pub(crate) fn from_info(info: ActorInfo) -> Actor {
        match info.kind {
            UserKind::User => Actor::User(User(info)),
            UserKind::Bot => Actor::Bot(Bot(info)),
        }
    }
}
