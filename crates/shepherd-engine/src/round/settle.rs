//! Post, then settle: what keeps two runs without a shared database (two CI
//! jobs on one pull request) from leaving a reply doubled.
//!
//! A reply is "look for our marker, then post": two runs can both pass the
//! look before either posts. So after a reply is posted (or adopted), the
//! viewer's comments carrying the item's marker that the round's snapshot
//! did not show are read back, and the earliest of them (lowest REST id,
//! which both forges hand out in posting order; then the node id) is THE
//! reply. When this run posted a later one, it deletes its own and records
//! the earliest as adopted. Both runs agree on the earliest, so the later
//! poster removes the double, seconds after it appeared. Only the viewer's
//! own marker comments count (a marker someone else pasted is never the
//! reply and never deleted), and only the comment this run posted is ever
//! deleted.

use std::collections::BTreeSet;

use shepherd_core::classify::ItemKind;
use shepherd_core::model::ReviewState;
use shepherd_forge::{Forge, ItemRef, PostedComment};

use super::item::WorkItem;
use super::state::Synced;

/// What settling a reply found.
#[derive(Debug)]
pub(crate) struct Settled {
    /// The reply of record: ours, or the earlier one another run posted.
    pub(crate) reply: PostedComment,
    /// Our reply, deleted because another run's came first.
    pub(crate) deleted: Option<String>,
    /// Why the reply could not be settled (a failure of the round): the
    /// read failed, or our doubled reply could not be deleted.
    pub(crate) error: Option<String>,
}

/// Where the replies to `item` live.
pub(crate) fn item_ref(item: &WorkItem) -> ItemRef {
    match item.classified.kind {
        ItemKind::ReviewThread => ItemRef::Thread(item.id().to_owned()),
        ItemKind::IssueComment | ItemKind::ReviewBody => ItemRef::TopLevel(item.id().to_owned()),
    }
}

/// The order that decides which of several replies is the reply.
fn order_key(c: &PostedComment) -> (u64, &str) {
    (c.database_id.unwrap_or(u64::MAX), c.id.as_str())
}

/// Whether `c` is a reply of ours to `item` that the round's snapshot did
/// not show (`known` are the ids it showed): posted by `viewer`, outside
/// any pending review, with the item's marker.
pub(crate) fn is_new_own_reply(
    c: &PostedComment,
    item: &WorkItem,
    known: &BTreeSet<String>,
    viewer: &str,
) -> bool {
    !known.contains(&c.id)
        && c.review_state != Some(ReviewState::Pending)
        && c.marker.as_ref().is_some_and(|m| m.item == item.id())
        && c.author
            .as_ref()
            .is_some_and(|a| a.login.eq_ignore_ascii_case(viewer))
}

/// Settles `ours`, the reply to `item` of pull request `number` this run
/// posted (`sent`) or adopted: the earliest of the viewer's replies with
/// the item's marker that the snapshot did not show (`known` are the ids
/// it showed) is the reply; ours is deleted when it is not that one and
/// this run posted it.
pub(crate) async fn settle_reply(
    forge: &dyn Forge,
    number: u64,
    synced: &Synced,
    item: &WorkItem,
    known: &BTreeSet<String>,
    ours: PostedComment,
    sent: bool,
) -> Settled {
    let viewer = &synced.snapshot.viewer;
    let at = item_ref(item);
    let found = match forge.find_marker_replies(number, &at, viewer).await {
        Ok(found) => found,
        Err(err) => {
            return Settled {
                error: Some(format!(
                    "posted {}, but cannot read the item's replies back to see whether \
                     another run replied at the same time: {err}",
                    ours.id
                )),
                reply: ours,
                deleted: None,
            }
        }
    };
    let earliest = found
        .into_iter()
        .filter(|c| is_new_own_reply(c, item, known, viewer))
        .chain(std::iter::once(ours.clone()))
        .min_by(|a, b| order_key(a).cmp(&order_key(b)));
    let Some(earliest) = earliest.filter(|e| e.id != ours.id) else {
        return Settled {
            reply: ours,
            deleted: None,
            error: None,
        };
    };
    tracing::info!(
        item = item.id(),
        ours = %ours.id,
        earlier = %earliest.id,
        "another run replied first"
    );
    if !sent {
        // Found, not posted here: the run that posted it settles it.
        return Settled {
            reply: earliest,
            deleted: None,
            error: None,
        };
    }
    let Some(rest_id) = ours.database_id else {
        return Settled {
            error: Some(format!(
                "our reply {} doubles {}, posted by another run first, and cannot be deleted: \
                 the forge gave it no REST id",
                ours.id, earliest.id
            )),
            reply: ours,
            deleted: None,
        };
    };
    match forge.delete_comment(number, &at, rest_id).await {
        Ok(()) => Settled {
            reply: earliest,
            deleted: Some(ours.id),
            error: None,
        },
        Err(err) => Settled {
            error: Some(format!(
                "our reply {} doubles {}, posted by another run first, and deleting it \
                 failed: {err}",
                ours.id, earliest.id
            )),
            reply: ours,
            deleted: None,
        },
    }
}
