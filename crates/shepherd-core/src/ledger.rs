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

impl Decision {
    /// Every decision, in the order of SPEC section 4. (The one list: the
    /// agents' answer schema, the approval prompt and the gate read it.)
    pub const ALL: [Decision; 7] = [
        Decision::CodeChange,
        Decision::MetadataChange,
        Decision::Question,
        Decision::Wontfix,
        Decision::AlreadyAddressed,
        Decision::Invalid,
        Decision::NeedsHuman,
    ];

    /// The kebab-case name (`code-change`), as serde and the SPEC spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::CodeChange => "code-change",
            Decision::MetadataChange => "metadata-change",
            Decision::Question => "question",
            Decision::Wontfix => "wontfix",
            Decision::AlreadyAddressed => "already-addressed",
            Decision::Invalid => "invalid",
            Decision::NeedsHuman => "needs-human",
        }
    }

    /// The decision named `name` (`code-change`), if any.
    pub fn from_name(name: &str) -> Option<Decision> {
        Decision::ALL.into_iter().find(|d| d.as_str() == name)
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Outcome {
    /// Every outcome, in the order of SPEC section 4.
    pub const ALL: [Outcome; 6] = [
        Outcome::Fixed,
        Outcome::FixedDifferently,
        Outcome::NotAddressing,
        Outcome::Declined,
        Outcome::Replied,
        Outcome::NeedsHuman,
    ];

    /// The kebab-case name (`fixed-differently`), as serde and the SPEC spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Fixed => "fixed",
            Outcome::FixedDifferently => "fixed-differently",
            Outcome::NotAddressing => "not-addressing",
            Outcome::Declined => "declined",
            Outcome::Replied => "replied",
            Outcome::NeedsHuman => "needs-human",
        }
    }

    /// The outcome named `name` (`needs-human`), if any.
    pub fn from_name(name: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.as_str() == name)
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
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

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a panic is how a test fails
mod tests {
    use super::*;

    #[test]
    fn names_are_the_serde_names() {
        for d in Decision::ALL {
            assert_eq!(serde_json::to_value(d).unwrap(), d.as_str());
            assert_eq!(Decision::from_name(d.as_str()), Some(d));
        }
        for o in Outcome::ALL {
            assert_eq!(serde_json::to_value(o).unwrap(), o.as_str());
        }
        assert_eq!(Decision::from_name("fix-it"), None);
    }
}
