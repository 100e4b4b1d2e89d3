//! The items a round acts on, what it plans to make public about each, and
//! the decision helpers every stage shares.

use serde::Serialize;
use shepherd_core::classify::{Classified, ItemKind};
use shepherd_core::gate::{resolve_authorized, GateConfig, GateItem, GateItemKind, ItemResult};
use shepherd_core::model::{AuthorKind, PrSnapshot, ReviewThread, TopLevelComment};
use shepherd_core::{Decision, Outcome};

/// One item the round acts on, with what the snapshot says of it.
#[derive(Debug, Clone)]
pub(crate) struct WorkItem {
    pub(crate) classified: Classified,
    pub(crate) feedback: Feedback,
}

/// What the snapshot shows of a work item: a review thread or a top-level
/// item (an issue comment or a review body).
#[derive(Debug, Clone)]
pub(crate) enum Feedback {
    Thread(ReviewThread),
    TopLevel(TopLevelComment),
}

impl WorkItem {
    /// The item `classified` names in `snapshot`; `None` when the snapshot
    /// has no thread or top-level comment of that id (classification only
    /// yields those, so every classified item has one).
    pub(crate) fn of(classified: &Classified, snapshot: &PrSnapshot) -> Option<Self> {
        let id = &classified.item_id;
        let feedback = match snapshot.threads.iter().find(|t| &t.id == id) {
            Some(t) => Feedback::Thread(t.clone()),
            None => Feedback::TopLevel(snapshot.comments.iter().find(|c| &c.id == id)?.clone()),
        };
        Some(WorkItem {
            classified: classified.clone(),
            feedback,
        })
    }

    pub(crate) fn id(&self) -> &str {
        &self.classified.item_id
    }

    /// The review thread, when the item is one.
    pub(crate) fn thread(&self) -> Option<&ReviewThread> {
        match &self.feedback {
            Feedback::Thread(t) => Some(t),
            Feedback::TopLevel(_) => None,
        }
    }

    /// The opening comment's body: the thread's root, or the comment itself.
    fn opening_body(&self) -> &str {
        match &self.feedback {
            Feedback::Thread(t) => t.root().map_or("", |c| c.body.as_str()),
            Feedback::TopLevel(c) => c.body.as_str(),
        }
    }

    /// The item's lexical theme, from its opening comment: what an item
    /// gets when triage gave none (the cluster stage and escalation areas
    /// must agree on it).
    pub(crate) fn lexical_theme(&self) -> shepherd_core::theme::Theme {
        shepherd_core::theme::classify_theme_at(
            self.opening_body(),
            None,
            self.classified.path.as_deref(),
        )
    }

    /// The comment a reply answers: the thread's root, or the comment itself.
    pub(crate) fn reply_target(&self) -> String {
        match &self.feedback {
            Feedback::Thread(t) => t.root().map(|c| c.id.clone()).unwrap_or_default(),
            Feedback::TopLevel(c) => c.id.clone(),
        }
    }

    /// The item as the honesty gate sees it.
    pub(crate) fn gate_item(&self) -> GateItem {
        let kind = match &self.feedback {
            Feedback::Thread(t) => GateItemKind::ReviewThread {
                root_comment_id: self.reply_target(),
                path: t.path.clone(),
                // A deleted author counts as a person: the cautious side.
                opened_by_human: t
                    .root()
                    .and_then(|c| c.author.as_ref())
                    .is_none_or(|a| a.kind != AuthorKind::Bot),
            },
            Feedback::TopLevel(_) => GateItemKind::TopLevel {
                comment_id: self.reply_target(),
            },
        };
        GateItem {
            id: self.id().to_owned(),
            kind,
        }
    }

    /// The item as the report lists one it did not act on.
    pub(crate) fn attention(
        &self,
        kind: shepherd_core::report::AttentionKind,
        why: String,
    ) -> shepherd_core::report::AttentionItem {
        shepherd_core::report::AttentionItem {
            kind,
            path: self.classified.path.clone(),
            line: self.classified.line,
            item_id: self.id().to_owned(),
            url: self.classified.url.clone(),
            excerpt: shepherd_core::report::excerpt(self.opening_body()),
            why,
        }
    }

    /// Every comment id the snapshot showed on the item.
    pub(crate) fn comment_ids(&self) -> Vec<String> {
        match &self.feedback {
            Feedback::Thread(t) => t.comments.iter().map(|c| c.id.clone()).collect(),
            Feedback::TopLevel(c) => vec![c.id.clone()],
        }
    }
}

/// What the round means to make public about one item.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Planned {
    /// What the gate checks.
    pub(crate) result: ItemResult,
    /// Thread, issue comment or review body.
    pub(crate) kind: ItemKind,
    /// How it was fixed.
    pub(crate) fix_kind: Option<String>,
    /// What the fixer said it did.
    pub(crate) summary: String,
    /// Whether it comes from an earlier attempt of the run (already fixed,
    /// pushed or approved; not yet replied).
    pub(crate) carried: bool,
}

impl Planned {
    /// The plan of this round for `item`: `decision` and `outcome`, with
    /// `reply`, its resolve authorized as the gate's rules (`gate`) say; no
    /// commit, metadata edit or fixer's summary (yet).
    pub(crate) fn new(
        item: &WorkItem,
        decision: Decision,
        outcome: Outcome,
        reply: String,
        gate: &GateConfig,
    ) -> Self {
        Planned {
            result: ItemResult {
                item_id: item.id().to_owned(),
                decision,
                outcome,
                commit: None,
                metadata_applied: false,
                reply,
                reply_target: item.reply_target(),
                resolve_authorized: resolve_authorized(
                    decision,
                    outcome,
                    &item.gate_item().kind,
                    gate,
                ),
                cluster_files: Vec::new(),
            },
            kind: item.classified.kind,
            fix_kind: None,
            summary: String::new(),
            carried: false,
        }
    }

    /// The ledger entry of this result in round `round` as the gate passed
    /// it: decided, not yet replied or resolved.
    pub(crate) fn entry(&self, round: u32) -> shepherd_core::LedgerEntry {
        let r = &self.result;
        shepherd_core::LedgerEntry {
            item_id: r.item_id.clone(),
            round,
            decision: Some(r.decision),
            outcome: Some(r.outcome),
            commit: r.commit.clone(),
            reply_id: None,
            resolve_authorized: r.resolve_authorized,
            replied: false,
            resolved: false,
        }
    }
}

/// The outcome a reply-only decision states.
pub(crate) fn reply_only_outcome(decision: Decision) -> Option<shepherd_core::Outcome> {
    use shepherd_core::Outcome;
    match decision {
        Decision::Question => Some(Outcome::Replied),
        Decision::Wontfix => Some(Outcome::Declined),
        Decision::AlreadyAddressed | Decision::Invalid => Some(Outcome::NotAddressing),
        Decision::NeedsHuman => Some(Outcome::NeedsHuman),
        Decision::CodeChange | Decision::MetadataChange => None,
    }
}

/// Whether a decision only replies (and so needs approval).
pub(crate) fn is_reply_only(decision: Decision) -> bool {
    reply_only_outcome(decision).is_some()
}
