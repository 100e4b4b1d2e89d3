//! A suggestion block, and the place it applies to.

use serde::{Deserialize, Serialize};

use crate::model::DiffSide;

/// One suggestion block of a comment.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "form", rename_all = "kebab-case")]
pub enum Suggestion {
    /// ```` ```suggestion ````: replaces the comment's whole range (GitHub, and
    /// GitLab's form without offsets).
    Range {
        /// The replacement lines, without line endings. Empty: delete the range.
        lines: Vec<String>,
    },
    /// ```` ```suggestion:-N+M ```` (GitLab): replaces from `above` lines above
    /// to `below` lines below the commented line.
    Relative {
        /// Lines above the commented line that are replaced too (the `N` of `-N`).
        above: u32,
        /// Lines below the commented line that are replaced too (the `M` of `+M`).
        below: u32,
        /// The replacement lines, without line endings. Empty: delete the range.
        lines: Vec<String>,
    },
}

impl Suggestion {
    /// The replacement lines, without line endings.
    pub fn lines(&self) -> &[String] {
        match self {
            Suggestion::Range { lines } | Suggestion::Relative { lines, .. } => lines,
        }
    }

    /// Whether the suggestion deletes its range (an empty block).
    pub fn is_deletion(&self) -> bool {
        self.lines().is_empty()
    }

    /// Whether this is the plain ```` ```suggestion ```` form, the only one GitHub knows.
    pub fn is_range(&self) -> bool {
        matches!(self, Suggestion::Range { .. })
    }

    /// The 1-based inclusive range this suggestion replaces for a comment on
    /// `start_line..=end_line`. `None` when a relative range would start before
    /// line 1 or overflow.
    pub fn effective_range(&self, start_line: u32, end_line: u32) -> Option<(u32, u32)> {
        match self {
            Suggestion::Range { .. } => Some((start_line, end_line)),
            Suggestion::Relative { above, below, .. } => {
                let start = end_line.checked_sub(*above).filter(|s| *s >= 1)?;
                let end = end_line.checked_add(*below)?;
                Some((start, end))
            }
        }
    }
}

/// Where a suggestion applies: a file and a line range on one side of the diff.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SuggestionSite {
    /// The file path, relative to the repository root.
    pub path: String,
    /// The side of the diff; only the right side (the PR head) can be edited.
    pub side: DiffSide,
    /// First line of the comment's range (1-based; `line` for a one-line comment).
    pub start_line: u32,
    /// Last line of the comment's range (1-based, inclusive): the comment's `line`.
    pub end_line: u32,
}
