//! Which feedback a round must handle, and why (SPEC section 3 step 3, section 6).
//!
//! Every unresolved review thread, top-level comment and review body of a
//! [`PrSnapshot`] is classified against the [`Ledger`]:
//!
//! - **new**: the last word is not ours. Any comment after our reply, by
//!   anyone (the viewer's own login included, when it carries no marker;
//!   anyone else whatever markers it carries), makes a thread new again. A thread Shepherd resolved that someone
//!   unresolved is new ("reopened after Shepherd resolved it"). A thread with
//!   no comments at all is new too: an unresolved thread nobody can read must
//!   block convergence rather than pass silently (a person sees it in triage).
//! - **resolve-retry**: our reply is the last word, resolving was authorized,
//!   and the resolve has not succeeded.
//! - **awaiting reviewer**: our reply is the last word and the thread was left
//!   open on purpose (a question, needs-human, an unauthorized resolve).
//!   When that reply handed the item to a person (outcome `needs-human`, from
//!   the ledger or, with no entry describing the reply, from the marker's
//!   `outcome`), [`Classified::waits_for_a_person`] says so: a later run,
//!   even one with no state of its own, knows the PR is not clear.
//!
//! Shepherd's replies are the viewer's comments carrying its [`Marker`] for
//! the item ([`Marker::find_own`]): the login alone is not enough (Shepherd
//! may run as the same account as a reviewer), nor is the marker alone.
//!
//! **Security rule.** Markers are plain text: anyone who can comment can
//! paste one. A marker counts only in a comment written by the viewer (the
//! account Shepherd runs as); in anyone else's comment it is ordinary text,
//! and the comment is feedback like any other: it makes its thread new, it
//! is a top-level item of its own, it never enters a rebuilt ledger, and
//! its `resolve=yes` authorizes nothing. With no ledger entry that
//! describes the reply (a fresh machine, a stateless CI runner), the state
//! is rebuilt from the viewer's markers. A ledger entry whose `reply_id`
//! names another comment than the marker's is not trusted, and the marker
//! rule applies.
//!
//! Top-level comments and review bodies can be replied to but not resolved:
//! each is new until a later top-level comment of the viewer carries our
//! marker for its id, or the ledger records a reply. The viewer's comments
//! carrying a marker are Shepherd's replies, not items; empty bodies and
//! pending (draft) reviews are not items either. Resolved threads are not
//! items.
//!
//! Classification reads the ledger through an index built once, so a round
//! with N threads costs O(N + entries).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::ledger::{Ledger, LedgerEntry, Outcome};
use crate::marker::Marker;
use crate::model::{
    Author, Comment, PrSnapshot, ReviewState, ReviewThread, TopLevelComment, TopLevelKind,
};

/// What kind of feedback an item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ItemKind {
    /// A review thread: can be replied to and resolved.
    ReviewThread,
    /// A comment on the PR's conversation: can be replied to only.
    IssueComment,
    /// The body of a submitted review: can be replied to only.
    ReviewBody,
}

impl ItemKind {
    /// Whether items of this kind can be resolved.
    pub fn is_resolvable(self) -> bool {
        self == ItemKind::ReviewThread
    }
}

/// What a round does with an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// The last word is not ours: triage it.
    New,
    /// Our reply is posted and the resolve was authorized but has not
    /// succeeded: resolve it, without a second reply.
    ResolveRetry,
    /// Our reply is the last word and the item was left open on purpose.
    AwaitingReviewer,
}

impl Class {
    /// `new`, `resolve-retry`, `awaiting-reviewer`.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::New => "new",
            Class::ResolveRetry => "resolve-retry",
            Class::AwaitingReviewer => "awaiting-reviewer",
        }
    }
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One classified item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Classified {
    /// The thread id or top-level comment id (what markers and the ledger use).
    pub item_id: String,
    /// Thread, issue comment or review body.
    pub kind: ItemKind,
    /// New, resolve-retry, or awaiting reviewer.
    pub class: Class,
    /// One sentence a person reads: why this class.
    pub reason: String,
    /// The file, for threads.
    pub path: Option<String>,
    /// The line to show (current, else original), for threads.
    pub line: Option<u32>,
    /// Who opened the item; `None` for a deleted account.
    pub author: Option<Author>,
    /// Whether the thread's lines changed since it was written.
    pub outdated: bool,
    /// The web URL of the item's first comment.
    pub url: Option<String>,
    /// The round of our latest reply to the item, if there is one.
    pub replied_round: Option<u32>,
    /// Whether our reply, the last word, handed the item to a person
    /// (outcome `needs-human`): it waits for one, not for the reviewer.
    #[serde(default)]
    pub waits_for_a_person: bool,
}

/// The latest ledger entry of every item, built once from [`Ledger::entries`].
#[derive(Debug, Clone, Default)]
pub struct LedgerIndex<'a> {
    latest: HashMap<&'a str, &'a LedgerEntry>,
}

impl<'a> LedgerIndex<'a> {
    /// Index `ledger`: later entries replace earlier ones.
    pub fn new(ledger: &'a Ledger) -> Self {
        let mut latest = HashMap::with_capacity(ledger.entries().len());
        for entry in ledger.entries() {
            latest.insert(entry.item_id.as_str(), entry);
        }
        LedgerIndex { latest }
    }

    /// The latest entry of `item_id`: the item's state.
    pub fn latest(&self, item_id: &str) -> Option<&'a LedgerEntry> {
        self.latest.get(item_id).copied()
    }
}

/// Classify every item of `snapshot`: threads in forge order, then top-level
/// comments and review bodies, oldest first.
pub fn classify(snapshot: &PrSnapshot, ledger: &Ledger) -> Vec<Classified> {
    classify_items(
        &snapshot.threads,
        &snapshot.comments,
        &snapshot.viewer,
        ledger,
    )
}

/// [`classify`] on the parts of a snapshot. `viewer` is the login Shepherd
/// runs as: only its comments' markers are Shepherd's.
pub fn classify_items(
    threads: &[ReviewThread],
    comments: &[TopLevelComment],
    viewer: &str,
    ledger: &Ledger,
) -> Vec<Classified> {
    let index = LedgerIndex::new(ledger);
    let mut out = Vec::with_capacity(threads.len() + comments.len());
    out.extend(
        threads
            .iter()
            .filter_map(|t| classify_thread(t, viewer, &index)),
    );
    out.extend(classify_top_level(comments, viewer, &index));
    out
}

/// Rebuild ledger entries from the markers on the forge, for a fresh state
/// directory: one entry per item that has a reply of ours (a comment of
/// `viewer` with the item's marker; see the module's security rule), its
/// latest reply (`replied`, `reply_id` = that comment's id, `round` from the
/// marker). `resolve_authorized` holds for a thread whose marker says
/// `resolve=yes`; `resolved` is true for such a thread that is resolved now.
/// The outcome is the marker's (unknown for a marker of an earlier version);
/// decisions are unknown and left empty.
pub fn rebuild_ledger_from_markers(snapshot: &PrSnapshot, viewer: &str) -> Vec<LedgerEntry> {
    let mut out = Vec::new();
    for thread in &snapshot.threads {
        if let Some((_, comment, marker)) = last_reply(thread, viewer) {
            let authorized = marker.resolve_authorized;
            out.push(LedgerEntry {
                outcome: marker.outcome,
                reply_id: Some(comment.id.clone()),
                resolve_authorized: authorized,
                replied: true,
                resolved: authorized && thread.is_resolved,
                ..LedgerEntry::new(thread.id.clone(), marker.round)
            });
        }
    }
    let replies = top_level_replies(&snapshot.comments, viewer);
    for (i, comment) in snapshot.comments.iter().enumerate() {
        if is_own_reply(comment, viewer) {
            continue;
        }
        if let Some(reply) = replies.get(comment.id.as_str()).filter(|r| r.index > i) {
            out.push(LedgerEntry {
                outcome: reply.marker.outcome,
                reply_id: Some(reply.comment.id.clone()),
                replied: true,
                ..LedgerEntry::new(comment.id.clone(), reply.marker.round)
            });
        }
    }
    out
}

fn classify_thread(
    thread: &ReviewThread,
    viewer: &str,
    index: &LedgerIndex<'_>,
) -> Option<Classified> {
    if thread.is_resolved {
        return None;
    }
    let root = thread.root();
    let item = |class: Class, reason: String, replied_round: Option<u32>| Classified {
        item_id: thread.id.clone(),
        kind: ItemKind::ReviewThread,
        class,
        reason,
        path: Some(thread.path.clone()),
        line: thread.display_line(),
        author: root.and_then(|c| c.author.clone()),
        outdated: thread.is_outdated,
        url: root.map(|c| c.url.clone()),
        replied_round,
        waits_for_a_person: false,
    };

    let Some(last) = thread.comments.last() else {
        return Some(item(
            Class::New,
            "the thread has no comments Shepherd could read; it is treated as new so a person sees it"
                .to_owned(),
            None,
        ));
    };
    let Some((pos, _, marker)) = last_reply(thread, viewer) else {
        let reason = if thread.comments.len() == 1 {
            format!("opened by {}; no reply from Shepherd yet", who(last))
        } else {
            format!(
                "last comment is by {}; no reply from Shepherd yet",
                who(last)
            )
        };
        return Some(item(Class::New, reason, None));
    };
    let round = Some(marker.round);
    if pos + 1 != thread.comments.len() {
        let reason = format!(
            "last comment is by {} after our reply in round {}",
            who(last),
            marker.round
        );
        return Some(item(Class::New, reason, round));
    }

    // Our reply is the last word.
    let entry = index.latest(&thread.id);
    if let Some(e) = entry.filter(|e| e.resolved) {
        let reason = format!(
            "reopened after Shepherd resolved it in round {}; our reply in round {} was the last word",
            e.round, marker.round
        );
        return Some(item(Class::New, reason, round));
    }
    let reply = &thread.comments[pos];
    if let Some(e) = entry.filter(|e| e.replied && reply_id_matches(e, reply)) {
        let (class, reason) = if e.resolve_authorized {
            (
                Class::ResolveRetry,
                format!(
                    "our reply in round {} is the last word; resolving was authorized but has not succeeded",
                    marker.round
                ),
            )
        } else {
            return Some(awaiting(item, marker.round, e.outcome));
        };
        return Some(item(class, reason, round));
    }

    // No ledger entry describes this reply: rebuild from the marker, which
    // is the viewer's own (`last_reply`).
    if marker.resolve_authorized {
        let reason = format!(
            "our reply in round {} is the last word and its marker authorizes resolving; \
             the resolve has not succeeded",
            marker.round
        );
        return Some(item(Class::ResolveRetry, reason, round));
    }
    Some(awaiting(item, marker.round, marker.outcome))
}

/// A thread whose last word is our reply of `round`, left open: for the
/// reviewer, or for a person when the reply handed it to one.
fn awaiting(
    item: impl Fn(Class, String, Option<u32>) -> Classified,
    round: u32,
    outcome: Option<Outcome>,
) -> Classified {
    let waits = outcome == Some(Outcome::NeedsHuman);
    let reason = if waits {
        format!("our reply in round {round} is the last word; it handed the thread to a person, who has not answered")
    } else {
        format!(
            "our reply in round {round} is the last word; the thread is left open for the reviewer"
        )
    };
    Classified {
        waits_for_a_person: waits,
        ..item(Class::AwaitingReviewer, reason, Some(round))
    }
}

fn classify_top_level<'c>(
    comments: &'c [TopLevelComment],
    viewer: &'c str,
    index: &'c LedgerIndex<'_>,
) -> impl Iterator<Item = Classified> + 'c {
    let replies = top_level_replies(comments, viewer);
    comments.iter().enumerate().filter_map(move |(i, c)| {
        if !is_top_level_item(c, viewer) {
            return None;
        }
        let what = match c.kind {
            TopLevelKind::IssueComment => "comment",
            TopLevelKind::ReviewBody => match c.review_state {
                Some(ReviewState::ChangesRequested) => "review requesting changes",
                Some(ReviewState::Approved) => "approving review",
                _ => "review",
            },
        };
        let by = author_display(c.author.as_ref());
        let entry = index.latest(&c.id).filter(|e| e.replied);
        let (class, reason, round, outcome) =
            match (replies.get(c.id.as_str()).filter(|r| r.index > i), entry) {
                (Some(reply), _) => (
                    Class::AwaitingReviewer,
                    format!(
                        "our reply in round {} answers this {what} by {by}; top-level comments \
                         cannot be resolved",
                        reply.marker.round
                    ),
                    Some(reply.marker.round),
                    // The ledger's word when it describes this reply.
                    entry
                        .filter(|e| e.reply_id.as_deref() == Some(reply.comment.id.as_str()))
                        .map_or(reply.marker.outcome, |e| e.outcome),
                ),
                (None, Some(e)) => (
                    Class::AwaitingReviewer,
                    format!(
                        "the ledger records our reply in round {} to this {what} by {by}",
                        e.round
                    ),
                    Some(e.round),
                    e.outcome,
                ),
                (None, None) => (
                    Class::New,
                    format!("{what} by {by}; no reply from Shepherd yet"),
                    None,
                    None,
                ),
            };
        let waits_for_a_person = outcome == Some(Outcome::NeedsHuman);
        let reason = if waits_for_a_person {
            format!("{reason}; it handed the item to a person, who has not answered")
        } else {
            reason
        };
        Some(Classified {
            item_id: c.id.clone(),
            kind: match c.kind {
                TopLevelKind::IssueComment => ItemKind::IssueComment,
                TopLevelKind::ReviewBody => ItemKind::ReviewBody,
            },
            class,
            reason,
            path: None,
            line: None,
            author: c.author.clone(),
            outdated: false,
            url: Some(c.url.clone()),
            replied_round: round,
            waits_for_a_person,
        })
    })
}

/// Whether a top-level comment is feedback: not Shepherd's own reply (the
/// viewer's, with any marker), not empty, not a draft review.
fn is_top_level_item(c: &TopLevelComment, viewer: &str) -> bool {
    !c.body.trim().is_empty()
        && c.review_state != Some(ReviewState::Pending)
        && !is_own_reply(c, viewer)
        // A comment Shepherd posted to ask a bot to review is not feedback.
        && !crate::reviewers::is_own_trigger(
            &c.body,
            c.author.as_ref().map(|a| a.login.as_str()),
            viewer,
            None,
        )
}

/// Whether a top-level comment is one of Shepherd's replies: the viewer's,
/// with a marker.
fn is_own_reply(c: &TopLevelComment, viewer: &str) -> bool {
    Marker::find_own(&c.body, c.author.as_ref(), viewer).is_some()
}

/// Our latest reply in a thread (the viewer's comment with the thread's
/// marker): its position, the comment, and its marker.
fn last_reply<'t>(thread: &'t ReviewThread, viewer: &str) -> Option<(usize, &'t Comment, Marker)> {
    thread.comments.iter().enumerate().rev().find_map(|(i, c)| {
        Marker::find_own(&c.body, c.author.as_ref(), viewer)
            .filter(|m| m.item == thread.id)
            .map(|m| (i, c, m))
    })
}

struct TopLevelReply<'c> {
    index: usize,
    comment: &'c TopLevelComment,
    marker: Marker,
}

/// For every item id, the latest top-level comment of the viewer carrying
/// our marker for it.
fn top_level_replies<'c>(
    comments: &'c [TopLevelComment],
    viewer: &str,
) -> HashMap<String, TopLevelReply<'c>> {
    let mut replies = HashMap::new();
    for (index, comment) in comments.iter().enumerate() {
        if let Some(marker) = Marker::find_own(&comment.body, comment.author.as_ref(), viewer) {
            replies.insert(
                marker.item.clone(),
                TopLevelReply {
                    index,
                    comment,
                    marker,
                },
            );
        }
    }
    replies
}

/// Whether the ledger's recorded reply is this comment (by node id or
/// numeric id). An entry without a reply id cannot contradict.
fn reply_id_matches(entry: &LedgerEntry, reply: &Comment) -> bool {
    match &entry.reply_id {
        None => true,
        Some(id) => {
            *id == reply.id
                || reply
                    .database_id
                    .is_some_and(|db| id.parse::<u64>() == Ok(db))
        }
    }
}

fn who(comment: &Comment) -> String {
    author_display(comment.author.as_ref())
}

fn author_display(author: Option<&Author>) -> String {
    match author {
        Some(a) => format!("@{}", a.login),
        None => "a deleted account".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::AuthorKind;
    use proptest::prelude::*;

    const VIEWER: &str = "shep";

    fn author(login: &str) -> Author {
        Author {
            login: login.to_owned(),
            kind: AuthorKind::User,
        }
    }

    /// A review comment `id` (`c7`: database id 7) by `login`, or by a
    /// deleted account when `None`.
    fn comment(id: &str, login: Option<&str>, body: &str) -> Comment {
        let built = crate::testing::comment(id, login.unwrap_or_default(), body)
            .database_id(id.strip_prefix("c").and_then(|n| n.parse().ok()))
            .url(format!("https://github.com/o/r/pull/1#discussion_r{id}"))
            .created_at("2025-01-01T00:00:00Z")
            .review(ReviewState::Commented);
        match login {
            Some(_) => built.build(),
            None => built.ghost().build(),
        }
    }

    fn said(id: &str, login: &str) -> Comment {
        comment(id, Some(login), "please rename this")
    }

    /// A reply of ours to `item`, posted by `login`.
    fn reply(id: &str, login: &str, item: &str, round: u32, resolve: bool) -> Comment {
        comment(
            id,
            Some(login),
            &Marker::new(item, round, resolve).append_to("Fixed in abc123."),
        )
    }

    fn thread(id: &str, comments: Vec<Comment>) -> ReviewThread {
        crate::testing::thread(id)
            .path("src/lib.rs")
            .current(None, Some(10))
            .original(None, Some(8))
            .comments(comments)
            .build()
    }

    fn top(id: &str, kind: TopLevelKind, login: &str, body: &str) -> TopLevelComment {
        TopLevelComment {
            id: id.to_owned(),
            database_id: None,
            kind,
            author: Some(author(login)),
            body: body.to_owned(),
            url: format!("https://github.com/o/r/pull/1#issuecomment-{id}"),
            created_at: "2025-01-01T00:00:00Z".to_owned(),
            review_state: match kind {
                TopLevelKind::IssueComment => None,
                TopLevelKind::ReviewBody => Some(ReviewState::ChangesRequested),
            },
        }
    }

    fn snapshot(threads: Vec<ReviewThread>, comments: Vec<TopLevelComment>) -> PrSnapshot {
        crate::testing::snapshot(VIEWER, threads, comments)
    }

    fn entry(
        item: &str,
        round: u32,
        replied: bool,
        authorized: bool,
        resolved: bool,
    ) -> LedgerEntry {
        LedgerEntry {
            replied,
            resolve_authorized: authorized,
            resolved,
            ..LedgerEntry::new(item, round)
        }
    }

    fn one(t: ReviewThread, ledger: &Ledger) -> Classified {
        let out = classify(&snapshot(vec![t], vec![]), ledger);
        assert_eq!(out.len(), 1, "{out:?}");
        out.into_iter().next().expect("one item")
    }

    fn check(c: &Classified, class: Class, needles: &[&str]) {
        assert_eq!(c.class, class, "{}: {}", c.item_id, c.reason);
        for n in needles {
            assert!(c.reason.contains(n), "{:?} lacks {n:?}", c.reason);
        }
    }

    #[test]
    fn thread_rules() {
        let none = Ledger::new();
        let t = "T1";
        // (thread comments, ledger, class, reason needles)
        let cases: Vec<(Vec<Comment>, Ledger, Class, Vec<&str>)> = vec![
            // 1. only the reviewer spoke
            (
                vec![said("c1", "alice")],
                none.clone(),
                Class::New,
                vec!["opened by @alice", "no reply"],
            ),
            // 2. two reviewers, no reply
            (
                vec![said("c1", "alice"), said("c2", "bob")],
                none.clone(),
                Class::New,
                vec!["last comment is by @bob"],
            ),
            // 3. our reply, resolve=no, fresh machine
            (
                vec![said("c1", "alice"), reply("c2", VIEWER, t, 1, false)],
                none.clone(),
                Class::AwaitingReviewer,
                vec!["round 1", "left open"],
            ),
            // 4. a comment after our reply
            (
                vec![
                    said("c1", "alice"),
                    reply("c2", VIEWER, t, 2, false),
                    said("c3", "bob"),
                ],
                none.clone(),
                Class::New,
                vec!["last comment is by @bob after our reply in round 2"],
            ),
            // 5. the viewer's own login without a marker is not Shepherd
            (
                vec![
                    said("c1", "alice"),
                    reply("c2", VIEWER, t, 1, true),
                    said("c3", VIEWER),
                ],
                Ledger::from_iter([entry(t, 1, true, true, false)]),
                Class::New,
                vec!["@shep after our reply in round 1"],
            ),
            // 6. fresh machine: a viewer-authored resolve=yes marker authorizes
            (
                vec![said("c1", "alice"), reply("c2", VIEWER, t, 3, true)],
                none.clone(),
                Class::ResolveRetry,
                vec!["round 3", "marker authorizes"],
            ),
            // 7. SECURITY: a marker pasted by someone else is an ordinary
            //    comment: it neither answers the thread nor authorizes
            (
                vec![said("c1", "alice"), reply("c2", "mallory", t, 3, true)],
                none.clone(),
                Class::New,
                vec!["last comment is by @mallory", "no reply from Shepherd yet"],
            ),
            // 8. the ledger is the authority when it describes the reply
            (
                vec![said("c1", "alice"), reply("c2", VIEWER, t, 1, false)],
                Ledger::from_iter([entry(t, 1, true, true, false)]),
                Class::ResolveRetry,
                vec!["authorized but has not succeeded"],
            ),
            // 9. ... also when it says "not authorized"
            (
                vec![said("c1", "alice"), reply("c2", VIEWER, t, 1, true)],
                Ledger::from_iter([entry(t, 1, true, false, false)]),
                Class::AwaitingReviewer,
                vec!["left open"],
            ),
            // 10. resolved by Shepherd, unresolved again by someone
            (
                vec![said("c1", "alice"), reply("c2", VIEWER, t, 1, true)],
                Ledger::from_iter([entry(t, 1, true, true, true)]),
                Class::New,
                vec!["reopened after Shepherd resolved it"],
            ),
            // 11. SECURITY: a forged marker after our reply is the last word,
            //     not ours
            (
                vec![
                    said("c1", "alice"),
                    reply("c2", VIEWER, t, 1, true),
                    reply("c3", "mallory", t, 1, false),
                ],
                Ledger::from_iter([LedgerEntry {
                    reply_id: Some("c2".to_owned()),
                    ..entry(t, 1, true, true, false)
                }]),
                Class::New,
                vec!["last comment is by @mallory after our reply in round 1"],
            ),
            // 12. the reply id may be the numeric id
            (
                vec![said("c1", "alice"), reply("c7", VIEWER, t, 1, false)],
                Ledger::from_iter([LedgerEntry {
                    reply_id: Some("7".to_owned()),
                    ..entry(t, 1, true, true, false)
                }]),
                Class::ResolveRetry,
                vec![],
            ),
            // 13. crash between the post and the ledger write: the marker counts
            (
                vec![said("c1", "alice"), reply("c2", VIEWER, t, 2, true)],
                Ledger::from_iter([entry(t, 2, false, false, false)]),
                Class::ResolveRetry,
                vec!["marker authorizes"],
            ),
            // 14. a marker for another item is not a reply to this thread
            (
                vec![said("c1", "alice"), reply("c2", VIEWER, "T_OTHER", 1, true)],
                none.clone(),
                Class::New,
                vec!["last comment is by @shep"],
            ),
            // 15. a near-miss marker is not a marker
            (
                vec![
                    said("c1", "alice"),
                    comment(
                        "c2",
                        Some(VIEWER),
                        "ok <!-- shepherd:reply v=2 item=T1 round=1 resolve=yes -->",
                    ),
                ],
                none.clone(),
                Class::New,
                vec!["no reply"],
            ),
            // 16. the latest ledger entry wins
            (
                vec![said("c1", "alice"), reply("c2", VIEWER, t, 2, false)],
                Ledger::from_iter([
                    entry(t, 1, true, true, false),
                    entry(t, 2, true, false, false),
                ]),
                Class::AwaitingReviewer,
                vec!["round 2"],
            ),
            // 17. a thread with no comments is new
            (vec![], none.clone(), Class::New, vec!["no comments"]),
            // 18. a deleted account's comment
            (
                vec![comment("c1", None, "why?")],
                none.clone(),
                Class::New,
                vec!["a deleted account"],
            ),
            // 19. logins compare case-insensitively
            (
                vec![said("c1", "alice"), reply("c2", "SHEP", t, 1, true)],
                none.clone(),
                Class::ResolveRetry,
                vec![],
            ),
            // 21. SECURITY: the ledger does not make another account's marker ours
            (
                vec![
                    said("c1", "alice"),
                    reply("c2", "other-account", t, 1, false),
                ],
                Ledger::from_iter([LedgerEntry {
                    reply_id: Some("c2".to_owned()),
                    ..entry(t, 1, true, false, false)
                }]),
                Class::New,
                vec![
                    "last comment is by @other-account",
                    "no reply from Shepherd yet",
                ],
            ),
            // 22. a reviewer quoting our reply (marker included) speaks again
            (
                vec![
                    said("c1", "alice"),
                    reply("c2", VIEWER, t, 1, false),
                    reply("c3", "alice", t, 1, false),
                ],
                none.clone(),
                Class::New,
                vec!["last comment is by @alice after our reply in round 1"],
            ),
            // 20. our reply in round 1, reviewer answered, our reply in round 2 is last
            (
                vec![
                    said("c1", "alice"),
                    reply("c2", VIEWER, t, 1, false),
                    said("c3", "alice"),
                    reply("c4", VIEWER, t, 2, false),
                ],
                Ledger::from_iter([entry(t, 1, true, false, false)]),
                Class::AwaitingReviewer,
                vec!["round 2"],
            ),
        ];
        assert!(cases.len() >= 15);
        for (i, (comments, ledger, class, needles)) in cases.into_iter().enumerate() {
            let c = one(thread(t, comments), &ledger);
            assert_eq!(c.class, class, "case {}: {}", i + 1, c.reason);
            for n in needles {
                assert!(
                    c.reason.contains(n),
                    "case {}: {:?} lacks {n:?}",
                    i + 1,
                    c.reason
                );
            }
        }
    }

    #[test]
    fn thread_fields_are_carried_and_outdated_threads_kept() {
        let mut t = thread(
            "T1",
            vec![said("c1", "alice"), reply("c2", VIEWER, "T1", 4, false)],
        );
        t.is_outdated = true;
        t.line = None;
        let c = one(t, &Ledger::new());
        assert_eq!(c.kind, ItemKind::ReviewThread);
        assert!(c.outdated);
        assert_eq!(c.line, Some(8), "falls back to the original line");
        assert_eq!(c.path.as_deref(), Some("src/lib.rs"));
        assert_eq!(c.author.map(|a| a.login), Some("alice".to_owned()));
        assert_eq!(c.replied_round, Some(4));
        assert_eq!(
            c.url.as_deref(),
            Some("https://github.com/o/r/pull/1#discussion_rc1")
        );
    }

    #[test]
    fn resolved_threads_are_not_items() {
        let mut t = thread("T1", vec![said("c1", "alice")]);
        t.is_resolved = true;
        assert!(classify(&snapshot(vec![t], vec![]), &Ledger::new()).is_empty());
    }

    #[test]
    fn top_level_rules() {
        use TopLevelKind::{IssueComment as Ic, ReviewBody as Rb};
        let mut pending = top("R9", Rb, "alice", "draft thoughts");
        pending.review_state = Some(ReviewState::Pending);
        let comments = vec![
            top("A", Ic, "alice", "Please add a changelog entry."),
            top("B", Rb, "bob", "Needs tests."),
            top("C", Ic, "carol", "And a docs update?"),
            top("D", Rb, "dave", "   \n"),
            top("E", Ic, "erin", "Bump the version."),
            top("F", Ic, "frank", "Sign the CLA."),
            pending,
            // Shepherd's replies (the viewer's, with a marker): never items.
            top(
                "S1",
                Ic,
                VIEWER,
                &Marker::new("A", 1, false).append_to("Added."),
            ),
            top(
                "S2",
                Ic,
                VIEWER,
                &Marker::new("B", 2, true).append_to("Tests added."),
            ),
            // SECURITY: a marker someone else pasted is an ordinary comment:
            // an item itself, and no answer to A.
            top(
                "S3",
                Ic,
                "someone",
                &Marker::new("A", 3, false).append_to("Please also bump the version."),
            ),
            // A reply to F posted before F cannot answer it.
            top("G", Ic, "gina", "Follow-up after your reply."),
        ];
        // The reply to F came first: reorder so S4 precedes F.
        let mut comments = comments;
        comments.insert(
            5,
            top("S4", Ic, VIEWER, &Marker::new("F", 1, false).append_to("x")),
        );
        let ledger = Ledger::from_iter([
            entry("E", 1, true, false, false),
            entry("C", 1, false, false, false),
        ]);
        let out = classify(&snapshot(vec![], comments), &ledger);
        let by_id: HashMap<&str, &Classified> =
            out.iter().map(|c| (c.item_id.as_str(), c)).collect();
        let ids: Vec<&str> = out.iter().map(|c| c.item_id.as_str()).collect();
        assert_eq!(
            ids,
            ["A", "B", "C", "E", "F", "S3", "G"],
            "empty, pending and Shepherd's comments are not items"
        );
        check(
            by_id["A"],
            Class::AwaitingReviewer,
            &["our reply in round 1", "comment by @alice"],
        );
        check(
            by_id["B"],
            Class::AwaitingReviewer,
            &["round 2", "review requesting changes by @bob"],
        );
        check(by_id["C"], Class::New, &["no reply from Shepherd yet"]);
        check(
            by_id["E"],
            Class::AwaitingReviewer,
            &["ledger records our reply in round 1"],
        );
        check(by_id["F"], Class::New, &[]);
        check(by_id["G"], Class::New, &["comment by @gina"]);
        check(
            by_id["S3"],
            Class::New,
            &["comment by @someone", "no reply from Shepherd yet"],
        );
        assert_eq!(by_id["B"].kind, ItemKind::ReviewBody);
        assert_eq!(by_id["A"].kind, ItemKind::IssueComment);
        assert!(!by_id["A"].kind.is_resolvable() && ItemKind::ReviewThread.is_resolvable());
        assert!(
            out.iter().all(|c| c.class != Class::ResolveRetry),
            "top-level items are never resolved"
        );
    }

    #[test]
    fn threads_come_before_top_level_items() {
        let out = classify(
            &snapshot(
                vec![
                    thread("T1", vec![said("c1", "a")]),
                    thread("T2", vec![said("c2", "b")]),
                ],
                vec![top("A", TopLevelKind::IssueComment, "c", "hi")],
            ),
            &Ledger::new(),
        );
        let ids: Vec<&str> = out.iter().map(|c| c.item_id.as_str()).collect();
        assert_eq!(ids, ["T1", "T2", "A"]);
    }

    #[test]
    fn rebuilding_the_ledger_from_markers() {
        let mut resolved = thread(
            "T4",
            vec![said("c7", "alice"), reply("c8", VIEWER, "T4", 2, true)],
        );
        resolved.is_resolved = true;
        let snap = snapshot(
            vec![
                thread(
                    "T1",
                    vec![
                        said("c1", "alice"),
                        reply("c2", VIEWER, "T1", 1, false),
                        said("c3", "alice"),
                        reply("c4", VIEWER, "T1", 3, true),
                    ],
                ),
                thread(
                    "T2",
                    vec![said("c5", "alice"), reply("c6", "mallory", "T2", 1, true)],
                ),
                thread("T3", vec![said("c9", "alice")]),
                resolved,
            ],
            vec![
                top("A", TopLevelKind::IssueComment, "alice", "changelog?"),
                top(
                    "S1",
                    TopLevelKind::IssueComment,
                    VIEWER,
                    &Marker::new("A", 2, true).append_to("Added."),
                ),
                top("B", TopLevelKind::IssueComment, "alice", "docs?"),
                top(
                    "S2",
                    TopLevelKind::IssueComment,
                    "mallory",
                    &Marker::new("B", 1, false).append_to("Done."),
                ),
            ],
        );
        let entries = rebuild_ledger_from_markers(&snap, VIEWER);
        type Row<'a> = (&'a str, u32, Option<&'a str>, bool, bool, bool);
        let summary: Vec<Row<'_>> = entries
            .iter()
            .map(|e| {
                (
                    e.item_id.as_str(),
                    e.round,
                    e.reply_id.as_deref(),
                    e.replied,
                    e.resolve_authorized,
                    e.resolved,
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("T1", 3, Some("c4"), true, true, false),
                // mallory's marker on T2 is not ours: no entry
                ("T4", 2, Some("c8"), true, true, true),
                ("A", 2, Some("S1"), true, false, false), // top-level items are never resolved
            ]
        );
        assert!(entries
            .iter()
            .all(|e| e.decision.is_none() && e.outcome.is_none()));

        // Classifying with the rebuilt ledger agrees with classifying from markers alone.
        let rebuilt: Ledger = entries.into_iter().collect();
        let from_markers = classify(&snap, &Ledger::new());
        let from_ledger = classify(&snap, &rebuilt);
        let classes = |v: &[Classified]| {
            v.iter()
                .map(|c| (c.item_id.clone(), c.class))
                .collect::<Vec<_>>()
        };
        assert_eq!(classes(&from_markers), classes(&from_ledger));
        assert_eq!(
            classes(&from_ledger),
            [
                ("T1".to_owned(), Class::ResolveRetry),
                ("T2".to_owned(), Class::New),
                ("T3".to_owned(), Class::New),
                ("A".to_owned(), Class::AwaitingReviewer),
                ("B".to_owned(), Class::New),
                ("S2".to_owned(), Class::New),
            ]
        );
    }

    /// Issue 26 point 7: an item a reply handed to a person waits for one,
    /// known from the ledger or, with no state, from the reply's marker; a
    /// marker pasted by someone else says nothing.
    #[test]
    fn an_item_handed_to_a_person_waits_for_one() {
        let handed = |id: &str, item: &str, login: &str| {
            comment(
                id,
                Some(login),
                &Marker::new(item, 1, false)
                    .with_outcome(Outcome::NeedsHuman)
                    .append_to("A person should decide this."),
            )
        };
        let answered = |id: &str, item: &str| {
            comment(
                id,
                Some(VIEWER),
                &Marker::new(item, 1, false)
                    .with_outcome(Outcome::Replied)
                    .append_to("It is called once."),
            )
        };
        let snap = snapshot(
            vec![
                thread("T1", vec![said("c1", "alice"), handed("c2", "T1", VIEWER)]),
                thread("T2", vec![said("c3", "alice"), answered("c4", "T2")]),
                // An earlier version's marker: no outcome, left for the reviewer.
                thread(
                    "T3",
                    vec![said("c5", "alice"), reply("c6", VIEWER, "T3", 1, false)],
                ),
                thread(
                    "T4",
                    vec![said("c7", "alice"), handed("c8", "T4", "mallory")],
                ),
            ],
            vec![
                top("A", TopLevelKind::IssueComment, "alice", "changelog?"),
                top(
                    "S1",
                    TopLevelKind::IssueComment,
                    VIEWER,
                    &Marker::new("A", 1, false)
                        .with_outcome(Outcome::NeedsHuman)
                        .append_to("A person should decide."),
                ),
            ],
        );
        let waits = |ledger: &Ledger| -> Vec<(String, Class, bool)> {
            classify(&snap, ledger)
                .into_iter()
                .map(|c| (c.item_id, c.class, c.waits_for_a_person))
                .collect()
        };
        let expected = vec![
            ("T1".to_owned(), Class::AwaitingReviewer, true),
            ("T2".to_owned(), Class::AwaitingReviewer, false),
            ("T3".to_owned(), Class::AwaitingReviewer, false),
            ("T4".to_owned(), Class::New, false),
            ("A".to_owned(), Class::AwaitingReviewer, true),
        ];
        // From the markers alone, and from the ledger rebuilt from them.
        assert_eq!(waits(&Ledger::new()), expected);
        let rebuilt: Ledger = rebuild_ledger_from_markers(&snap, VIEWER)
            .into_iter()
            .collect();
        let outcomes: Vec<_> = rebuilt.entries().iter().map(|e| e.outcome).collect();
        assert_eq!(
            outcomes,
            [
                Some(Outcome::NeedsHuman),
                Some(Outcome::Replied),
                None,
                Some(Outcome::NeedsHuman)
            ]
        );
        assert_eq!(waits(&rebuilt), expected);
        let t1 = classify(&snap, &rebuilt).remove(0);
        assert!(
            t1.reason.contains("handed the thread to a person"),
            "{}",
            t1.reason
        );
        // The ledger's word wins when it describes the reply.
        let mut store = entry("T1", 1, true, false, false);
        store.reply_id = Some("c2".into());
        store.outcome = Some(Outcome::Replied);
        let ledger: Ledger = [store].into_iter().collect();
        assert_eq!(
            waits(&ledger)[0],
            ("T1".to_owned(), Class::AwaitingReviewer, false)
        );
    }

    #[test]
    fn the_index_holds_each_items_latest_entry() {
        let ledger = Ledger::from_iter([
            entry("A", 1, false, false, false),
            entry("B", 1, true, false, false),
            entry("A", 2, true, true, false),
        ]);
        let index = LedgerIndex::new(&ledger);
        assert_eq!(index.latest("A"), ledger.latest("A"));
        assert_eq!(index.latest("A").map(|e| e.round), Some(2));
        assert_eq!(index.latest("B"), ledger.latest("B"));
        assert_eq!(index.latest("C"), None);
    }

    // -----------------------------------------------------------------------
    // Properties

    /// One comment: who wrote it, and whether it carries a marker (for this
    /// thread or another one, with a round and a resolve flag).
    #[derive(Debug, Clone)]
    struct Spec {
        login: usize,
        marker: Option<(bool, u32, bool)>,
    }

    const LOGINS: [&str; 3] = ["alice", "bob", VIEWER];

    fn spec() -> impl Strategy<Value = Spec> {
        (
            0..LOGINS.len(),
            prop::option::of((any::<bool>(), 1..5u32, any::<bool>())),
        )
            .prop_map(|(login, marker)| Spec { login, marker })
    }

    fn build(id: &str, specs: &[Spec], outdated: bool) -> ReviewThread {
        let comments = specs
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let cid = format!("{id}-c{i}");
                match s.marker {
                    Some((own, round, resolve)) => {
                        let item = if own {
                            id.to_owned()
                        } else {
                            format!("{id}-other")
                        };
                        reply(&cid, LOGINS[s.login], &item, round, resolve)
                    }
                    None => said(&cid, LOGINS[s.login]),
                }
            })
            .collect();
        let mut t = thread(id, comments);
        t.is_outdated = outdated;
        t
    }

    type LedgerSpec = Option<(u32, bool, bool, bool, bool)>;

    fn world() -> impl Strategy<Value = Vec<(Vec<Spec>, bool, LedgerSpec)>> {
        prop::collection::vec(
            (
                prop::collection::vec(spec(), 0..6),
                any::<bool>(),
                prop::option::of((
                    1..5u32,
                    any::<bool>(),
                    any::<bool>(),
                    any::<bool>(),
                    any::<bool>(),
                )),
            ),
            0..12,
        )
    }

    fn materialize(world: &[(Vec<Spec>, bool, LedgerSpec)]) -> (Vec<ReviewThread>, Ledger) {
        let mut threads = Vec::new();
        let mut ledger = Ledger::new();
        for (i, (specs, outdated, l)) in world.iter().enumerate() {
            let id = format!("T{i}");
            threads.push(build(&id, specs, *outdated));
            if let Some((round, replied, authorized, resolved, with_reply_id)) = *l {
                ledger.append(LedgerEntry {
                    // The reply id names the thread's last comment, or nothing.
                    reply_id: (with_reply_id && !specs.is_empty())
                        .then(|| format!("{id}-c{}", specs.len() - 1)),
                    ..entry(&id, round, replied, authorized, resolved)
                });
            }
        }
        (threads, ledger)
    }

    proptest! {
        #[test]
        fn classification_is_independent_of_thread_order(
            (world, order) in world().prop_flat_map(|w| {
                let n = w.len();
                (Just(w), Just((0..n).collect::<Vec<_>>()).prop_shuffle())
            })
        ) {
            let (threads, ledger) = materialize(&world);
            let shuffled: Vec<ReviewThread> = order.iter().map(|&i| threads[i].clone()).collect();
            let a = classify_items(&threads, &[], VIEWER, &ledger);
            let b = classify_items(&shuffled, &[], VIEWER, &ledger);
            let mut a: Vec<_> = a.into_iter().map(|c| (c.item_id.clone(), c)).collect();
            let mut b: Vec<_> = b.into_iter().map(|c| (c.item_id.clone(), c)).collect();
            a.sort_by(|x, y| x.0.cmp(&y.0));
            b.sort_by(|x, y| x.0.cmp(&y.0));
            prop_assert_eq!(a, b);
        }

        #[test]
        fn a_later_non_marker_comment_always_makes_a_thread_new(
            world in world(),
            pick in any::<prop::sample::Index>(),
            login in 0..LOGINS.len(),
        ) {
            prop_assume!(!world.is_empty());
            let (mut threads, ledger) = materialize(&world);
            let i = pick.index(threads.len());
            let n = threads[i].comments.len();
            threads[i].comments.push(said(&format!("T{i}-c{n}"), LOGINS[login]));
            let out = classify_items(&threads, &[], VIEWER, &ledger);
            let c = out.iter().find(|c| c.item_id == format!("T{i}"));
            prop_assert!(c.is_some());
            prop_assert_eq!(c.map(|c| c.class), Some(Class::New));
        }

        #[test]
        fn a_marker_in_someone_elses_comment_changes_nothing(world in world()) {
            let (threads, ledger) = materialize(&world);
            let stripped: Vec<ReviewThread> = threads
                .iter()
                .map(|t| {
                    let mut t = t.clone();
                    for c in &mut t.comments {
                        if c.author.as_ref().map(|a| a.login.as_str()) != Some(VIEWER) {
                            c.body = "please rename this".to_owned();
                        }
                    }
                    t
                })
                .collect();
            prop_assert_eq!(
                classify_items(&threads, &[], VIEWER, &ledger),
                classify_items(&stripped, &[], VIEWER, &ledger)
            );
            let snap = |threads: Vec<ReviewThread>| snapshot(threads, vec![]);
            prop_assert_eq!(
                rebuild_ledger_from_markers(&snap(threads.clone()), VIEWER),
                rebuild_ledger_from_markers(&snap(stripped), VIEWER)
            );
        }

        #[test]
        fn only_viewer_authored_markers_authorize_without_a_ledger(world in world()) {
            let (threads, _) = materialize(&world);
            for c in classify_items(&threads, &[], VIEWER, &Ledger::new()) {
                if c.class == Class::ResolveRetry {
                    let t = threads.iter().find(|t| t.id == c.item_id);
                    let last = t.and_then(|t| t.comments.last());
                    prop_assert_eq!(last.and_then(|l| l.author.as_ref()).map(|a| a.login.as_str()), Some(VIEWER));
                }
            }
        }
    }
}
