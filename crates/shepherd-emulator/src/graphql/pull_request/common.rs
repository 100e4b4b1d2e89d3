//! What the pull request's objects share: GitHub's `Int`s, authors and
//! their association, the diff's totals.

use async_graphql::{Context, Result};

use crate::graphql::actor::Actor;
use crate::graphql::changed_file::{self};
use crate::graphql::pr_extras::CommentAuthorAssociation;
use crate::graphql::view::{ActorInfo, PrView, RequestContext};

pub(super) fn small_int(n: u64) -> Option<i32> {
    i32::try_from(n).ok()
}

pub(super) fn line_int(n: Option<u32>) -> Option<i32> {
    n.and_then(|n| i32::try_from(n).ok())
}

pub(super) fn actor(view: &PrView, login: &str) -> Option<Actor> {
    actor_info(view, login).cloned().map(Actor::from_info)
}

pub(super) fn actor_info<'a>(view: &'a PrView, login: &str) -> Option<&'a ActorInfo> {
    // An unknown login is a deleted account: GitHub answers `author: null`.
    view.actors.get(login)
}

/// How `login` relates to the repository (REST's `author_association`).
pub(super) fn association(
    ctx: &Context<'_>,
    view: &PrView,
    login: &str,
) -> Result<CommentAuthorAssociation> {
    let rc = ctx.data::<RequestContext>()?;
    let state = rc.shared.read();
    let word = crate::pr_derived::author_association(&state, &view.repository, login);
    Ok(CommentAuthorAssociation::from_rest(word))
}

/// The sums of the PR's diff: additions, deletions, files.
pub(super) fn diff_totals(view: &PrView) -> (i32, i32, i32) {
    let files = changed_file::files(view);
    let additions = files.iter().map(|f| f.additions).sum();
    let deletions = files.iter().map(|f| f.deletions).sum();
    let count = i32::try_from(files.len()).unwrap_or(i32::MAX);
    (additions, deletions, count)
}
