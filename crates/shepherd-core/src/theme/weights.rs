//! How much a match weighs by where it was found, and the caps on matches.

/// Matches at most this many times per rule.
pub(super) const MAX_MATCHES_PER_RULE: u32 = 2;

/// Weight multipliers by where a match was found. A rule's weight is
/// multiplied by [`BODY`] for an ordinary match in the prose.
pub(super) const HEADLINE: u32 = 3;
/// The prose after the first sentence (see [`HEADLINE`]).
pub(super) const BODY: u32 = 2;
/// Identifiers inside inline code spans: they name things, they do not ask
/// for anything.
pub(super) const CODE_WORD: u32 = 1;
/// Code substrings ([`CODE_RULES`]).
pub(super) const CODE: u32 = 2;

/// A suggestion that only changes prose (a doc comment, a README line) is
/// worth this much documentation weight.
pub(super) const PROSE_SUGGESTION_WEIGHT: u32 = 3;
