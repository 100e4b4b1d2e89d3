//! What `gh` asks of a pull request that the emulator has no such thing
//! for: reactions, assignees, classic project cards and milestones; and
//! review requests, which it has (the requested reviewers, never teams). Each is GitHub's type (a subset of its fields) and
//! always answers what GitHub answers when there is none: every reaction
//! group with no one in it, empty connections, `milestone: null`. The
//! object types of the empty lists are never built; they are in the schema
//! so that the queries asking for them validate.

use async_graphql::{Context, Enum, Object, Result, SimpleObject, Union};

use super::actor::{Bot, User};
use super::connection::{connection, paginate, Page, PageArgs, PageInfo};
use super::owner::Organization;
use super::scalars::DateTime;
use super::view::ActorInfo;
use crate::scenario::UserKind;

/// Emojis that can be attached to Issues, Pull Requests and Comments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub(crate) enum ReactionContent {
    /// Represents the `:confused:` emoji.
    Confused,
    /// Represents the `:eyes:` emoji.
    Eyes,
    /// Represents the `:heart:` emoji.
    Heart,
    /// Represents the `:hooray:` emoji.
    Hooray,
    /// Represents the `:laugh:` emoji.
    Laugh,
    /// Represents the `:rocket:` emoji.
    Rocket,
    /// Represents the `:-1:` emoji.
    ThumbsDown,
    /// Represents the `:+1:` emoji.
    ThumbsUp,
}

/// A group of emoji reactions to a particular piece of content.
#[derive(Clone)]
pub(crate) struct ReactionGroup {
    content: ReactionContent,
}

/// Every reaction group, each empty: GitHub's answer for content no one
/// reacted to (the emulator has no reactions).
pub(crate) fn reaction_groups() -> Option<Vec<ReactionGroup>> {
    use ReactionContent::*;
    let all = [
        ThumbsUp, ThumbsDown, Laugh, Hooray, Confused, Heart, Rocket, Eyes,
    ];
    Some(
        all.into_iter()
            .map(|content| ReactionGroup { content })
            .collect(),
    )
}

/// The arguments of a connection field as [`PageArgs`], counting only when
/// no items are asked for.
fn args(
    ctx: &Context<'_>,
    first: Option<i32>,
    last: Option<i32>,
    after: Option<String>,
    before: Option<String>,
) -> PageArgs {
    PageArgs::new(first, last, after, before).counting_only(ctx)
}

/// An empty page of `connection`, after GitHub's argument checks.
pub(crate) fn empty_page<T>(
    ctx: &Context<'_>,
    connection: &str,
    first: Option<i32>,
    last: Option<i32>,
    after: Option<String>,
    before: Option<String>,
) -> Result<Page<T>> {
    paginate(
        connection,
        Vec::new(),
        &args(ctx, first, last, after, before),
    )
}

#[Object]
impl ReactionGroup {
    /// Identifies the emoji reaction.
    async fn content(&self) -> ReactionContent {
        self.content
    }

    /// Users who have reacted to the reaction subject with the emotion
    /// represented by this reaction group (none).
    async fn users(
        &self,
        ctx: &Context<'_>,
        after: Option<String>,
        before: Option<String>,
        first: Option<i32>,
        last: Option<i32>,
    ) -> Result<ReactingUserConnection> {
        let page: Page<User> = empty_page(ctx, "users", first, last, after, before)?;
        Ok(ReactingUserConnection {
            nodes: Some(Vec::new()),
            page_info: page.page_info,
            total_count: page.total_count,
        })
    }

    /// Whether or not the authenticated user has left a reaction on the subject.
    async fn viewer_has_reacted(&self) -> bool {
        false
    }
}

/// The connection type for User (reactions).
#[derive(SimpleObject)]
pub(crate) struct ReactingUserConnection {
    /// A list of nodes.
    nodes: Option<Vec<Option<User>>>,
    /// Information to aid in pagination.
    page_info: PageInfo,
    /// Identifies the total count of items in the connection.
    total_count: i32,
}

connection!(
    UserConnection,
    UserEdge,
    User,
    "The connection type for User."
);

/// A card in a (classic) project.
#[derive(Clone)]
pub(crate) struct ProjectCard;

#[Object]
impl ProjectCard {
    /// The project that contains this card.
    async fn project(&self) -> Project {
        Project
    }

    /// The project column this card is associated under.
    async fn column(&self) -> Option<ProjectColumn> {
        None
    }
}

/// A (classic) project.
#[derive(Clone)]
pub(crate) struct Project;

#[Object]
impl Project {
    /// The project's name.
    async fn name(&self) -> String {
        String::new()
    }
}

/// A column inside a (classic) project.
#[derive(Clone)]
pub(crate) struct ProjectColumn;

#[Object]
impl ProjectColumn {
    /// The project column's name.
    async fn name(&self) -> String {
        String::new()
    }
}

connection!(
    ProjectCardConnection,
    ProjectCardEdge,
    ProjectCard,
    "The connection type for ProjectCard."
);

/// Represents a Milestone object on a given repository.
#[derive(Clone)]
pub(crate) struct Milestone;

#[Object]
impl Milestone {
    /// Identifies the number of the milestone.
    async fn number(&self) -> i32 {
        0
    }

    /// Identifies the title of the milestone.
    async fn title(&self) -> String {
        String::new()
    }

    /// Identifies the description of the milestone.
    async fn description(&self) -> Option<String> {
        None
    }

    /// Identifies the due date of the milestone.
    async fn due_on(&self) -> Option<DateTime> {
        None
    }
}

/// A team of users in an organization.
#[derive(Clone)]
pub(crate) struct Team;

#[Object]
impl Team {
    /// The name of the team.
    async fn name(&self) -> String {
        String::new()
    }

    /// The slug corresponding to the team.
    async fn slug(&self) -> String {
        String::new()
    }

    /// The organization that owns this team.
    async fn organization(&self) -> Organization {
        Organization::default()
    }
}

/// Types that can be requested reviewers.
#[derive(Clone, Union)]
pub(crate) enum RequestedReviewer {
    /// A bot.
    Bot(Bot),
    /// A team.
    Team(Team),
    /// A user.
    User(User),
}

/// A request for a user to review a pull request.
#[derive(Clone)]
pub(crate) struct ReviewRequest(pub(crate) Option<ActorInfo>);

#[Object]
impl ReviewRequest {
    /// The reviewer that is requested (a user or a bot of the scenario;
    /// `null` for a deleted account).
    async fn requested_reviewer(&self) -> Option<RequestedReviewer> {
        let info = self.0.clone()?;
        Some(match info.kind {
            UserKind::User => RequestedReviewer::User(User(info)),
            UserKind::Bot => RequestedReviewer::Bot(Bot(info)),
        })
    }
}

connection!(
    ReviewRequestConnection,
    ReviewRequestEdge,
    ReviewRequest,
    "The connection type for ReviewRequest."
);
