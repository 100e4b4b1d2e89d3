//! Stages 13 and 14, replies, resolves and the resolve-retry lane, done by
//! Shepherd itself:
//!
//! - every result gets a reply carrying the hidden marker (fixes cite their
//!   commit); before posting, the forge is searched for a reply of ours (the
//!   viewer's, with the item's marker) that the round's snapshot did not
//!   show (a crash or a "commit then fail" answer after the forge took it),
//!   and that reply is adopted instead of posting a second one;
//! - after a reply is posted or adopted it is settled ([`super::settle`]):
//!   of the viewer's replies with the item's marker, the earliest is the
//!   reply; ours, when another run's came first, is deleted (a failed
//!   delete is a failure);
//! - a reply longer than the forge takes is cut with a visible note, its
//!   marker intact ([`Marker::append_within`]);
//! - the ledger gets an entry before and after every call;
//! - a reply that landed in a pending review is a failure, and the replies
//!   after it are not posted (they would land there too): each is recorded
//!   (ledger entry, `replies.json`, a failure) for after the review is
//!   submitted or deleted;
//! - threads are resolved exactly when the gate authorized it;
//! - threads whose authorized resolve failed earlier are resolved without a
//!   second reply;
//! - failures are collected; any failure pauses the run before CI
//!   (`replies.json`).

use std::collections::BTreeSet;

use serde::Serialize;
use shepherd_core::classify::ItemKind;
use shepherd_core::config::ApproveConfig;
use shepherd_core::model::PrSnapshot;
use shepherd_core::reply::{self, Addressee};
use shepherd_core::report::PublicFailure;
use shepherd_core::{LedgerEntry, Marker};
use shepherd_forge::{Forge, ForgeError, PostedComment, ThreadRef};

use super::item::{Feedback, Planned, WorkItem};
use super::runner::Books;
use super::settle::{is_new_own_reply, item_ref, settle_reply};
use super::state::{Decided, Gated, Items, Round, RoundEnd, Step, Synced};
use crate::error::Result;
use crate::options::Stage;
use crate::run_dir::{PauseKind, RunFile};
use crate::store::{LedgerRecord, Timestamp};

#[derive(Debug, Serialize)]
struct ReplyLog {
    item_id: String,
    action: &'static str,
    comment_id: Option<String>,
    url: Option<String>,
    adopted_existing: bool,
    /// Our reply, deleted: another run (a concurrent job) replied first,
    /// and its reply is the one recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    deleted_double: Option<String>,
    resolved: bool,
    error: Option<String>,
}

fn ledger_write(books: &Books, entry: LedgerEntry, p: Option<&Planned>) -> Result<()> {
    let record = LedgerRecord {
        run_id: books.run.run_id.clone(),
        entry,
        fix_kind: p.and_then(|p| p.fix_kind.clone()),
        reply_body: p.map(|p| p.result.reply.clone()),
        at: Timestamp::now(),
    };
    books.store().append_ledger(&record)?;
    Ok(())
}

/// A reply of ours for `item` that the round's snapshot did not show:
/// posted by the viewer, outside any pending review.
async fn find_new_reply(
    forge: &dyn Forge,
    number: u64,
    synced: &Synced,
    item: &WorkItem,
    known: &BTreeSet<String>,
) -> std::result::Result<Option<PostedComment>, ForgeError> {
    let viewer = &synced.snapshot.viewer;
    let found = forge
        .find_marker_reply(number, &item_ref(item), viewer)
        .await?;
    Ok(found.filter(|c| is_new_own_reply(c, item, known, viewer)))
}

/// Posts `reply` with `marker`, within the forge's length limit.
async fn post_reply(
    forge: &dyn Forge,
    number: u64,
    item: &WorkItem,
    reply: &str,
    marker: &Marker,
) -> std::result::Result<PostedComment, ForgeError> {
    let limit = forge.kind().comment_body_limit();
    match &item.feedback {
        Feedback::Thread(thread) => {
            let thread_ref = ThreadRef::of(thread).ok_or_else(|| ForgeError::Unconfirmed {
                request: format!("reply to {}", thread.id),
                what: "the thread's root comment has no REST id".to_owned(),
            })?;
            let body = reply::body(reply, Addressee::Thread, marker, limit);
            forge.reply_to_thread(number, &thread_ref, &body).await
        }
        Feedback::TopLevel(comment) => {
            let to = Addressee::TopLevel(comment.author.as_ref());
            let body = reply::body(reply, to, marker, limit);
            forge.post_issue_comment(number, &body).await
        }
    }
}

/// Reply to every planned result and resolve what the gate authorized;
/// the public calls that failed.
#[allow(clippy::too_many_arguments)] // a stage's signature says what it reads
pub(crate) async fn stage(
    books: &mut Books,
    forge: &dyn Forge,
    approve: &ApproveConfig,
    round: &Round,
    synced: &Synced,
    items: &Items,
    decided: &Decided,
    gated: &Gated,
) -> Result<Step<Vec<PublicFailure>>> {
    let Gated(changes) = gated;
    if changes.planned.is_empty() && items.resolve_retry.is_empty() {
        return Ok(Ok(Vec::new()));
    }
    let number = books.run.target.number;
    let mut log = Vec::new();
    let mut failures: Vec<PublicFailure> = Vec::new();
    let top_level_ids: BTreeSet<String> = synced
        .snapshot
        .comments
        .iter()
        .map(|c| c.id.clone())
        .collect();
    let mut replied = 0usize;
    let mut resolved = 0usize;
    let mut adopted = 0usize;
    let mut doubles_deleted = 0usize;
    let mut held = 0usize;
    // Set once a reply landed in a pending review: the rest would too.
    let mut pending_review: Option<String> = None;

    for (item, planned) in changes.planned.clone() {
        let r = &planned.result;
        let base = planned.entry(round.n);
        let known: BTreeSet<String> = match item.classified.kind {
            ItemKind::ReviewThread => item.comment_ids().into_iter().collect(),
            _ => top_level_ids.clone(),
        };
        let mut entry_log = ReplyLog {
            item_id: r.item_id.clone(),
            action: "reply",
            comment_id: None,
            url: None,
            adopted_existing: false,
            deleted_double: None,
            resolved: false,
            error: None,
        };

        if holds(approve, decided, &item, &planned) {
            // Shepherd could not judge it: the user hears of it (progress,
            // report), the forge gets no boilerplate. The ledger records
            // the decision, not a reply.
            ledger_write(books, base, None)?;
            let reason = decided
                .triage
                .get(&r.item_id)
                .map(|t| t.reasoning.lines().next().unwrap_or("").trim().to_owned())
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| planned.summary.clone());
            books.run.held.insert(
                r.item_id.clone(),
                crate::run_dir::HeldItem {
                    round: round.n,
                    last_comment: item.comment_ids().last().cloned(),
                    item: item.attention(
                        shepherd_core::report::AttentionKind::NeedsYourDecision,
                        reason,
                    ),
                },
            );
            entry_log.action = "held-for-user";
            log.push(entry_log);
            held += 1;
            continue;
        }

        if let Some(first) = &pending_review {
            // Recorded, so a resumed run carries the decision and reply.
            ledger_write(books, base, Some(&planned))?;
            let error = format!(
                "not posted: the reply to {first} landed in a pending review of @{}, and \
                 this one would too; submit or delete that review, then resume",
                synced.snapshot.viewer
            );
            failures.push(failure(&r.item_id, "reply", &error));
            entry_log.action = "reply-not-posted";
            entry_log.error = Some(error);
            log.push(entry_log);
            continue;
        }

        // 1. Is a reply of ours already there (a crash, a lost answer)?
        let mut posted = match find_new_reply(forge, number, synced, &item, &known).await {
            Ok(found) => found,
            Err(err) => {
                let error = format!("cannot check for an existing reply, not posting: {err}");
                failures.push(failure(&r.item_id, "reply", &error));
                entry_log.error = Some(error);
                log.push(entry_log);
                continue;
            }
        };
        let sent = posted.is_none();
        if posted.is_some() {
            entry_log.adopted_existing = true;
            adopted += 1;
        } else {
            // 2. Post it, with the ledger entry before the call.
            ledger_write(books, base.clone(), Some(&planned))?;
            // The outcome rides along, so a later run with no state of
            // its own knows an item handed to a person still waits.
            let marker =
                Marker::new(&r.item_id, round.n, r.resolve_authorized).with_outcome(r.outcome);
            match post_reply(forge, number, &item, &r.reply, &marker).await {
                Ok(c) => posted = Some(c),
                Err(err @ ForgeError::ReplyInPendingReview { .. }) => {
                    let error = err.to_string();
                    failures.push(failure(&r.item_id, "reply", &error));
                    entry_log.error = Some(error);
                    pending_review = Some(r.item_id.clone());
                }
                Err(err) => {
                    // It may have landed: look before calling it a failure.
                    match find_new_reply(forge, number, synced, &item, &known).await {
                        Ok(Some(c)) => {
                            entry_log.adopted_existing = true;
                            adopted += 1;
                            posted = Some(c);
                        }
                        _ => {
                            let error = err.to_string();
                            failures.push(failure(&r.item_id, "reply", &error));
                            entry_log.error = Some(error);
                        }
                    }
                }
            }
        }
        let Some(comment) = posted else {
            log.push(entry_log);
            continue;
        };
        // 2b. Post, then settle: another run may have replied at once.
        let settled = settle_reply(forge, number, synced, &item, &known, comment, sent).await;
        if let Some(error) = settled.error {
            failures.push(failure(&r.item_id, "reply", &error));
            entry_log.error = Some(error);
        }
        if let Some(deleted) = &settled.deleted {
            books.event(
                Some(round.n),
                "reply-double-deleted",
                serde_json::json!({ "item": r.item_id, "deleted": deleted, "reply": settled.reply.id }),
            )?;
            entry_log.deleted_double = Some(deleted.clone());
            doubles_deleted += 1;
        }
        if settled.deleted.is_some() && !entry_log.adopted_existing {
            entry_log.adopted_existing = true;
            adopted += 1;
        }
        let comment = settled.reply;
        replied += 1;
        entry_log.comment_id = Some(comment.id.clone());
        entry_log.url = Some(comment.url.clone());
        let after = LedgerEntry {
            reply_id: Some(comment.id.clone()),
            replied: true,
            ..base
        };
        ledger_write(books, after.clone(), Some(&planned))?;
        books.event(
            Some(round.n),
            "replied",
            serde_json::json!({ "item": r.item_id, "comment": comment.id, "adopted": entry_log.adopted_existing }),
        )?;

        // 3. Resolve exactly when authorized.
        if r.resolve_authorized && item.classified.kind == ItemKind::ReviewThread {
            match forge.resolve_thread(&r.item_id).await {
                Ok(()) => {
                    ledger_write(
                        books,
                        LedgerEntry {
                            resolved: true,
                            ..after
                        },
                        Some(&planned),
                    )?;
                    books.event(
                        Some(round.n),
                        "resolved",
                        serde_json::json!({ "item": r.item_id }),
                    )?;
                    entry_log.resolved = true;
                    resolved += 1;
                }
                Err(err) => {
                    let error = err.to_string();
                    failures.push(failure(&r.item_id, "resolve", &error));
                    entry_log.error = Some(error);
                }
            }
        }
        log.push(entry_log);
    }

    // The resolve-retry lane: no second reply.
    for item in items.resolve_retry.clone() {
        let id = item.id().to_owned();
        let mut entry = items
            .ledger
            .latest(&id)
            .cloned()
            .unwrap_or_else(|| LedgerEntry::new(id.clone(), round.n));
        entry.round = round.n;
        entry.resolved = false;
        ledger_write(books, entry.clone(), None)?;
        let mut entry_log = ReplyLog {
            item_id: id.clone(),
            action: "resolve-retry",
            comment_id: entry.reply_id.clone(),
            url: None,
            adopted_existing: false,
            deleted_double: None,
            resolved: false,
            error: None,
        };
        match forge.resolve_thread(&id).await {
            Ok(()) => {
                ledger_write(
                    books,
                    LedgerEntry {
                        resolved: true,
                        ..entry
                    },
                    None,
                )?;
                books.event(
                    Some(round.n),
                    "resolved",
                    serde_json::json!({ "item": id, "retry": true }),
                )?;
                entry_log.resolved = true;
                resolved += 1;
            }
            Err(err) => {
                let error = err.to_string();
                failures.push(failure(&id, "resolve", &error));
                entry_log.error = Some(error);
            }
        }
        log.push(entry_log);
    }

    books.artifact(round, "replies.json", &log)?;
    let mut summary = format!("{replied} replied, {resolved} resolved");
    if held > 0 {
        summary.push_str(&format!(
            ", {held} needing your decision reported to you, not answered on the forge \
             (`--reply-needs-human` posts the drafted reply)"
        ));
    }
    if adopted > 0 {
        summary.push_str(&format!(
            ", {adopted} existing reply(ies) adopted (no double post)"
        ));
    }
    if doubles_deleted > 0 {
        summary.push_str(&format!(
            ", {doubles_deleted} reply(ies) deleted as doubles of another run's earlier reply"
        ));
    }
    if !failures.is_empty() {
        summary.push_str(&format!(", {} FAILED", failures.len()));
    }
    books.run.failures = failures.clone();
    books.stage_done(round, Stage::Replies, summary)?;
    if !failures.is_empty() {
        let list: Vec<String> = failures
            .iter()
            .map(|f| {
                format!(
                    "{} {}: {}",
                    f.action,
                    f.item_id.as_deref().unwrap_or("-"),
                    f.error
                )
            })
            .collect();
        return Ok(Err(RoundEnd::Paused {
            kind: PauseKind::ReplyFailures,
            reason: format!(
                "{} reply/resolve call(s) failed and need attention before CI: {}; then run \
                 `shepherd resume {}`",
                list.len(),
                list.join("; "),
                books.run.run_id
            ),
        }));
    }
    Ok(Ok(failures))
}

/// Whether `planned` is held for the user rather than posted: an item
/// Shepherd could not judge (`needs-human`), whose reply no person wrote,
/// unless `approve.reply_needs_human` asks for the drafted reply.
fn holds(approve: &ApproveConfig, decided: &Decided, item: &WorkItem, planned: &Planned) -> bool {
    planned.result.outcome == shepherd_core::Outcome::NeedsHuman
        && holds_needs_human(approve, decided, item.id())
}

/// Whether item `id`, once handed to a person, is held for the user
/// rather than answered: no person wrote its reply and
/// `approve.reply_needs_human` is off. (What the replies stage does,
/// and what the approval stage tells the approver.)
pub(crate) fn holds_needs_human(approve: &ApproveConfig, decided: &Decided, id: &str) -> bool {
    !approve.reply_needs_human && !decided.reply_override.contains_key(id)
}

/// Whether a new item is still held for the user: held earlier in the
/// run, and nobody has commented on it since.
pub(crate) fn still_held(run: &RunFile, snapshot: &PrSnapshot, item_id: &str) -> bool {
    let last = match snapshot.threads.iter().find(|t| t.id == item_id) {
        Some(t) => t.comments.last().map(|c| c.id.clone()),
        None => snapshot
            .comments
            .iter()
            .find(|c| c.id == item_id)
            .map(|c| c.id.clone()),
    };
    run.held
        .get(item_id)
        .is_some_and(|h| last.is_some() && h.last_comment == last)
}

fn failure(item: &str, action: &str, error: &str) -> PublicFailure {
    PublicFailure {
        item_id: Some(item.to_owned()),
        action: action.to_owned(),
        error: error.to_owned(),
    }
}
