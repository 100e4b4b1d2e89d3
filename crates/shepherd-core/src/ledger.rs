//! Ledger entries: what Shepherd decided and did about one item in one round.
//!
//! The ledger is append-only; an item's state is its latest entry. The SQLite
//! store lives in the engine; this module holds the entry type and an in-memory
//! ledger that classification and reports read.

use serde::{Deserialize, Serialize};

/// The triage decision for an item (SPEC section 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    /// Fix it with a commit.
    CodeChange,
    /// Fix it by editing the PR's title, body or labels.
    MetadataChange,
    /// Answer it; the reviewer owns the thread.
    Question,
    /// Decline it, citing the harm of doing it.
    Wontfix,
    /// The code already does what is asked.
    AlreadyAddressed,
    /// The comment is wrong about the code.
    Invalid,
    /// A person must decide.
    NeedsHuman,
}

/// What happened to an item, as a reply and the report say it (SPEC section 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Fixed as asked.
    Fixed,
    /// Fixed, differently than asked.
    FixedDifferently,
    /// Not addressed, with evidence (already-addressed, invalid).
    NotAddressing,
    /// Declined (wontfix).
    Declined,
    /// Answered (question).
    Replied,
    /// Handed to a person.
    NeedsHuman,
}

/// One ledger entry: an item in a round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerEntry {
    /// The item (thread or top-level comment) id.
    pub item_id: String,
    /// The round (1-based) of the run that wrote the entry.
    pub round: u32,
    /// The triage decision, once made.
    pub decision: Option<Decision>,
    /// The outcome, once known.
    pub outcome: Option<Outcome>,
    /// The fix commit, for code changes.
    pub commit: Option<String>,
    /// The forge id of Shepherd's reply, once posted.
    pub reply_id: Option<String>,
    /// Whether the honesty gate authorized resolving the thread.
    pub resolve_authorized: bool,
    /// Whether the reply is known to be posted.
    pub replied: bool,
    /// Whether the resolve call succeeded.
    pub resolved: bool,
}

impl LedgerEntry {
    /// An entry with nothing decided or done yet.
    pub fn new(item_id: impl Into<String>, round: u32) -> Self {
        LedgerEntry {
            item_id: item_id.into(),
            round,
            decision: None,
            outcome: None,
            commit: None,
            reply_id: None,
            resolve_authorized: false,
            replied: false,
            resolved: false,
        }
    }
}

/// An append-only, in-memory ledger.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    entries: Vec<LedgerEntry>,
}

impl Ledger {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }

    /// Append an entry.
    pub fn append(&mut self, entry: LedgerEntry) {
        self.entries.push(entry);
    }

    /// Every entry, in the order appended.
    pub fn entries(&self) -> &[LedgerEntry] {
        &self.entries
    }

    /// The latest entry of `item_id`: the item's current state.
    pub fn latest(&self, item_id: &str) -> Option<&LedgerEntry> {
        self.entries.iter().rev().find(|e| e.item_id == item_id)
    }
}

impl FromIterator<LedgerEntry> for Ledger {
    fn from_iter<T: IntoIterator<Item = LedgerEntry>>(iter: T) -> Self {
        Ledger {
            entries: iter.into_iter().collect(),
        }
    }
}
